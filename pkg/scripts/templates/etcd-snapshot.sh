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
{{- with .S3 }}
# Upload the snapshot and its checksum to the S3-compatible store (path-style URLs, signed with
# AWS Signature Version 4 by curl, whose configuration holds the access key), then keep this
# node's newest {{$.Retain}} there too. A failed upload fails the run, which slipway status shows;
# the snapshot stays here either way.
s3() { curl -fsS --retry 3 --max-time 600 --config {{q .Config}} --aws-sigv4 {{q .Sigv4}} "$@"; }
bucket={{q .BucketURL}}
prefix={{q .Prefix}}
empty=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
for f in "$name" "$name.sha256"; do
  sum=$(sha256sum <"$dir/$f" | cut -d' ' -f1)
  s3 -o /dev/null -H "x-amz-content-sha256: $sum" -T "$dir/$f" "$bucket/$prefix$f" ||
    fail "uploading $dir/$f to $bucket/$prefix$f failed"
done
changed "uploaded the snapshot to $bucket/$prefix$name"
# ListObjectsV2 returns keys in ascending order, so the oldest first; '/' in the prefix is
# escaped as the signature's canonical query string wants it.
listing=$(s3 -H "x-amz-content-sha256: $empty" "$bucket?list-type=2&prefix=${prefix//\//%2F}$node-") ||
  fail "listing $bucket/$prefix$node-* failed"
{ grep -o '<Key>[^<]*\.db</Key>' <<<"$listing" || true; } | sed 's/<[^>]*>//g' | sort | head -n -{{$.Retain}} | while IFS= read -r old; do
  for f in "$old" "$old.sha256"; do
    s3 -o /dev/null -X DELETE -H "x-amz-content-sha256: $empty" "$bucket/$f" || fail "deleting $bucket/$f failed"
  done
  changed "removed the old snapshot $bucket/$old"
done
{{- end }}
