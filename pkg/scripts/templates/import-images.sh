archive={{q .Archive}}
refs=({{qs .Refs}})
have=$(ctr -n k8s.io images ls -q)
missing=0
for ref in "${refs[@]}"; do
  grep -qxF -- "$ref" <<<"$have" || missing=1
done
if [ "$missing" = 1 ]; then
  [ -f "$archive" ] || fail "$archive is not on the host: upload the image archive first"
  quiet ctr -n k8s.io images import "$archive"
  changed "imported ${refs[*]} from $archive"
  have=$(ctr -n k8s.io images ls -q)
  for ref in "${refs[@]}"; do
    grep -qxF -- "$ref" <<<"$have" || fail "$archive holds no image $ref"
  done
fi
# The kubelet's image garbage collection spares pinned images (containerd 1.7 and later; 1.6
# keeps the label and ignores it): nothing could pull these again on a site without a registry.
for ref in "${refs[@]}"; do
  if [ "$(ctr -n k8s.io images ls -q "name==$ref,labels.\"io.cri-containerd.pinned\"==pinned")" != "$ref" ]; then
    quiet ctr -n k8s.io images label "$ref" io.cri-containerd.pinned=pinned
    changed "pinned $ref"
  fi
done
remove_path "$archive"
