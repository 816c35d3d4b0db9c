{{- define "proxy"}}
{{- if .From}}
# The proxy, its credentials perhaps, is not in this script: it is read from a root-only file.
[ -r {{q .From}} ] || fail {{q (printf "%s is missing: it holds the proxy, which this script does not carry" .From)}}
while IFS= read -r proxy_line || [ -n "$proxy_line" ]; do
  proxy_key=${proxy_line%%=*}
  case $proxy_key in
    HTTP_PROXY | HTTPS_PROXY | NO_PROXY) export "$proxy_line" "${proxy_key,,}=${proxy_line#*=}" ;;
  esac
done <{{q .From}}
{{- end}}
{{- if .HTTP}}
export http_proxy={{q .HTTP}} HTTP_PROXY={{q .HTTP}}
{{- end}}
{{- if .HTTPS}}
export https_proxy={{q .HTTPS}} HTTPS_PROXY={{q .HTTPS}}
{{- end}}
{{- if .NoProxy}}
export no_proxy={{q .NoProxy}} NO_PROXY={{q .NoProxy}}
{{- end}}
{{- end}}
