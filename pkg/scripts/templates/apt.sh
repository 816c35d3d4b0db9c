{{- define "dpkg-recover"}}

# An apt or dpkg run that was interrupted (Ctrl-C, a lost connection) leaves packages unpacked
# but not configured, or its journal unapplied, and apt refuses to work until that is finished.
if [ -n "$(dpkg --audit 2>/dev/null)" ] || [ -n "$(ls -A /var/lib/dpkg/updates 2>/dev/null)" ]; then
  DEBIAN_FRONTEND=noninteractive quiet dpkg --configure -a
  changed "finished an interrupted package installation (dpkg --configure -a)"
fi
{{- end}}
