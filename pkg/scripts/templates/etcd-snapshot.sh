{{- /* One etcd snapshot, run by the systemd service that the etcd-snapshots step installs. */ -}}
set -euo pipefail
# Byte-wise: the names sort and compare by their time, and keys are encoded byte by byte.
export LC_ALL=C
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
# own PREFIX: the lines of stdin that are PREFIX<node>-<UTC time>.db, the names this script gives
# this node's snapshots, and nothing else. Only those count towards the retention and are ever
# deleted: another node's snapshots (cp-1-b's for cp-1), or whatever else is in the folder, stay.
own() {
  local line re='^[0-9]{8}T[0-9]{6}\.[0-9]{3}Z\.db$'
  while IFS= read -r line; do
    if [[ $line == "$1$node-"* && ${line#"$1$node-"} =~ $re ]]; then printf '%s\n' "$line"; fi
  done
}
# Keep the newest {{.Retain}} of this node's snapshots.
find "$dir" -maxdepth 1 -type f -name "$node-*.db" -printf '%f\n' | own "" | sort | head -n -{{.Retain}} | while IFS= read -r old; do
  rm -f -- "$dir/$old" "$dir/$old.sha256"
  changed "removed the old snapshot $dir/$old"
done
{{- with .S3 }}
# Upload the snapshot and its checksum to the S3-compatible store (path-style URLs, signed with
# AWS Signature Version 4 by curl, whose configuration holds the access key), then keep this
# node's newest {{$.Retain}} there too. A failed upload fails the run, which slipway status shows;
# the snapshot stays here either way. curl takes every URL as it is (--globoff: no [] or {}
# ranges) and speaks only what --proto allows.
s3() { curl -fsS --globoff --proto {{q .Proto}} --retry 3 --max-time 600 --config {{q .Config}} --aws-sigv4 {{q .Sigv4}} "$@"; }
# uri KEY: KEY percent-encoded byte by byte as AWS Signature Version 4 wants it, '/' kept.
uri() {
  local s=$1 out='' c i
  for ((i = 0; i < ${#s}; i++)); do
    c=${s:i:1}
    case $c in
    [A-Za-z0-9._~/-]) out+=$c ;;
    *) printf -v c '%%%02X' "'$c" && out+=$c ;;
    esac
  done
  printf '%s' "$out"
}
# query VALUE: VALUE encoded for a query string ('/' too).
query() { local v; v=$(uri "$1") && printf '%s' "${v//\//%2F}"; }
# unxml: the text of an XML element, its five entities decoded.
unxml() { sed 's/<[^>]*>//g; s/&lt;/</g; s/&gt;/>/g; s/&quot;/"/g; s/&apos;/'"'"'/g; s/&amp;/\&/g'; }
bucket={{q .BucketURL}}
prefix={{q .Prefix}}
empty=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
for f in "$name" "$name.sha256"; do
  sum=$(sha256sum <"$dir/$f" | cut -d' ' -f1)
  s3 -o /dev/null -H "x-amz-content-sha256: $sum" -T "$dir/$f" "$bucket/$(uri "$prefix$f")" ||
    fail "uploading $dir/$f to $bucket/$prefix$f failed"
done
changed "uploaded the snapshot to $bucket/$prefix$name"
# Every key under <folder><node>-, page by page (ListObjectsV2 returns them in ascending order,
# at most 1000 at a time). The query's parameters are sorted and encoded as the signature's
# canonical query string wants them.
keys=$(mktemp)
trap 'rm -f "$part" "$keys"' EXIT
token=''
for ((page = 1; ; page++)); do
  [ "$page" -le 1000 ] || fail "listing $bucket/$prefix$node-*: more than 1000 pages"
  q="list-type=2&prefix=$(query "$prefix$node-")"
  if [ -n "$token" ]; then q="continuation-token=$(query "$token")&$q"; fi
  listing=$(s3 -H "x-amz-content-sha256: $empty" "$bucket?$q") || fail "listing $bucket/$prefix$node-* failed"
  { grep -o '<Key>[^<]*</Key>' <<<"$listing" || true; } | unxml >>"$keys"
  grep -q '<IsTruncated>true</IsTruncated>' <<<"$listing" || break
  token=$({ grep -o '<NextContinuationToken>[^<]*</NextContinuationToken>' <<<"$listing" || true; } | unxml)
  [ -n "$token" ] || fail "listing $bucket/$prefix$node-*: a truncated page without a continuation token"
done
# Of this node's own snapshots there, those beyond the newest {{$.Retain}} go, and only if older than
# the oldest kept here: keys that someone else put there under this node's names may take places
# among the newest {{$.Retain}}, but never have a snapshot that this node still keeps deleted.
oldest=$(find "$dir" -maxdepth 1 -type f -name "$node-*.db" -printf '%f\n' | own "" | sort | sed -n 1p)
own "$prefix" <"$keys" | sort -u | head -n -{{$.Retain}} | while IFS= read -r old; do
  if [ -z "$oldest" ] || [[ ! ${old#"$prefix"} < $oldest ]]; then continue; fi
  for f in "$old" "$old.sha256"; do
    s3 -o /dev/null -X DELETE -H "x-amz-content-sha256: $empty" "$bucket/$(uri "$f")" || fail "deleting $bucket/$f failed"
  done
  changed "removed the old snapshot $bucket/$old"
done
{{- end }}
