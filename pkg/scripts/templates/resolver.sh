{{- define "kubelet-resolver" -}}
# The kubelet's resolver file: real upstream servers, never loopback ones, which inside a pod
# would be the pod itself.
upstream_servers() { awk '$1 == "nameserver" && $2 !~ /^(127\.|::1$|0\.0\.0\.0$)/ {print $2}' "$1" 2>/dev/null || true; }
link_to=""
for f in /etc/resolv.conf /run/systemd/resolve/resolv.conf; do
  if [ -n "$(upstream_servers "$f")" ]; then link_to=$f; break; fi
done
resolv={{q .ResolvConf}}
if [ -n "$link_to" ]; then
  if [ "$(readlink "$resolv" 2>/dev/null)" != "$link_to" ]; then
    mkdir -p "$(dirname "$resolv")"
    ln -sfn "$link_to" "$resolv"
    changed "linked $resolv to $link_to"
  fi
else
{{- if .UpstreamDNS}}
  {
    echo "# Written by slipway: /etc/resolv.conf names only loopback DNS servers."
    grep -E '^search[[:space:]]' /etc/resolv.conf || true
    printf 'nameserver %s\n' {{qs .UpstreamDNS}}
  } | put_file "$resolv" 0644
{{- else}}
  fail "/etc/resolv.conf names only loopback DNS servers and no upstream DNS servers were given: in pods (CoreDNS first) they would point at the pod itself"
{{- end}}
fi
{{- end}}
