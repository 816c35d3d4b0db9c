# slipway's directory, which holds its records.
if [ ! -d {{q .Dir}} ]; then
  install -d -m 0755 {{q .Dir}}
  changed "created {{.Dir}}"
fi

{{template "kubelet-resolver" .}}
