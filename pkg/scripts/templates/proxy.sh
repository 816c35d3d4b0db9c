{{- define "proxy"}}
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
