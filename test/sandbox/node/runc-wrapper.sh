#!/bin/sh
# Installed as /usr/local/sbin/runc only on hosts without CAP_SYS_RESOURCE (see entrypoint). The
# kubelet asks for negative oom_score_adj values (-998 for pod sandboxes), which need that
# capability; clamp them to 0 in the bundle or exec process spec, then run the real runc.
bundle=
process=
prev=
for arg in "$@"; do
  case "$prev" in
    --bundle | -b) bundle=$arg ;;
    --process | -p) process=$arg ;;
  esac
  case "$arg" in
    --bundle=*) bundle=${arg#--bundle=} ;;
    --process=*) process=${arg#--process=} ;;
  esac
  prev=$arg
done
for spec in ${bundle:+"$bundle/config.json"} ${process:+"$process"}; do
  if [ -f "$spec" ]; then
    sed -i -E 's/"oomScoreAdj": *-[0-9]+/"oomScoreAdj":0/' "$spec"
  fi
done
exec /usr/sbin/runc "$@"
