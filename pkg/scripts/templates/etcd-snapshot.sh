{{- /* One etcd snapshot, run by the systemd service that the etcd-snapshots step installs. */ -}}
set -euo pipefail
dir={{q .Dir}}
node={{q .Node}}
install -d -m 0700 "$dir"
stamp=$(date -u +%Y%m%dT%H%M%S.%3NZ)
name="$node-$stamp.db"
part="$dir/.$name.part"
trap 'rm -f "$part"' EXIT
# A run killed halfway leaves its container behind.
ctr -n k8s.io tasks kill -s SIGKILL {{q .Container}} >/dev/null 2>&1 || true
ctr -n k8s.io containers rm {{q .Container}} >/dev/null 2>&1 || true
# etcdctl from the cluster's own etcd image, with kubeadm's health-check client certificate.
ctr -n k8s.io run --rm --net-host \
  --mount type=bind,src=/etc/kubernetes/pki/etcd,dst=/etc/kubernetes/pki/etcd,options=rbind:ro \
  --mount "type=bind,src=$dir,dst=$dir,options=rbind:rw" \
  {{q .Image}} {{q .Container}} /usr/local/bin/etcdctl --endpoints=https://127.0.0.1:2379 \
  --cacert=/etc/kubernetes/pki/etcd/ca.crt --cert=/etc/kubernetes/pki/etcd/healthcheck-client.crt \
  --key=/etc/kubernetes/pki/etcd/healthcheck-client.key snapshot save "$part"
chmod 0600 "$part"
mv "$part" "$dir/$name"
(cd "$dir" && sha256sum "$name" >".$name.sha256" && chmod 0600 ".$name.sha256" && mv ".$name.sha256" "$name.sha256")
changed "etcd snapshot $dir/$name ($(stat -c %s "$dir/$name") bytes)"
# Keep the newest {{.Retain}} of this node's snapshots.
find "$dir" -maxdepth 1 -type f -name "$node-*.db" -printf '%f\n' | sort | head -n -{{.Retain}} | while IFS= read -r old; do
  rm -f -- "$dir/$old" "$dir/$old.sha256"
  changed "removed the old snapshot $dir/$old"
done
