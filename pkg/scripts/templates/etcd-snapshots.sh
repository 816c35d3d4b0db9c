{{- /* Installs the systemd timer that takes etcd snapshots on a control plane or, with .Remove,
takes it away. The snapshots taken stay either way. */ -}}
units=0
{{- if .Remove }}
if [ -e /etc/systemd/system/{{.Unit}}.timer ]; then
  quiet systemctl disable --now {{.Unit}}.timer
fi
remove_path /etc/systemd/system/{{.Unit}}.timer units
remove_path /etc/systemd/system/{{.Unit}}.service units
remove_path {{q .Script}}
remove_path {{q .S3Config}}
remove_path {{q .S3CAPath}}
if [ "$units" = 1 ]; then
  quiet systemctl daemon-reload
  changed "stopped the scheduled etcd snapshots (those taken stay in {{.Dir}})"
fi
{{- else }}
# systemd must read the schedule as slipway does: an older systemd may not.
systemd-analyze calendar {{q .OnCalendar}} >/dev/null 2>&1 || fail "systemd cannot read the schedule {{.OnCalendar}} (etcd.snapshots.schedule {{.Schedule}})"
{{- if .S3Conf }}
curl --help all 2>/dev/null | grep -q -- --aws-sigv4 || fail "etcd.snapshots.s3: this host's curl cannot sign for S3 (no --aws-sigv4; curl 7.75 or later has it)"
# The S3 access key, for curl --config: root-only, never on a command line.
put_file {{q .S3Config}} 0600 <<'SLIPWAY_S3_CONFIG'
{{.S3Conf}}SLIPWAY_S3_CONFIG
{{- else }}
remove_path {{q .S3Config}}
{{- end }}
{{- if .S3CA }}
put_file {{q .S3CAPath}} 0644 <<'SLIPWAY_S3_CA'
{{.S3CA}}SLIPWAY_S3_CA
{{- else }}
remove_path {{q .S3CAPath}}
{{- end }}
put_file {{q .Script}} 0700 units <<'SLIPWAY_SNAPSHOT_SCRIPT'
{{.RunScript}}
SLIPWAY_SNAPSHOT_SCRIPT
put_file /etc/systemd/system/{{.Unit}}.service 0644 units <<'SLIPWAY_UNIT'
[Unit]
Description=slipway: an etcd snapshot into {{.Dir}}
After=containerd.service
Requires=containerd.service

[Service]
Type=oneshot
ExecStart={{.Script}}
SLIPWAY_UNIT
put_file /etc/systemd/system/{{.Unit}}.timer 0644 units <<'SLIPWAY_UNIT'
[Unit]
Description=slipway: etcd snapshots at {{.Schedule}} (cron, UTC)

[Timer]
OnCalendar={{.OnCalendar}}
AccuracySec=1s
Persistent=true

[Install]
WantedBy=timers.target
SLIPWAY_UNIT
if [ "$units" = 1 ]; then
  quiet systemctl daemon-reload
  quiet systemctl enable {{.Unit}}.timer
  quiet systemctl restart {{.Unit}}.timer
  changed "etcd snapshots scheduled at {{.OnCalendar}}, the newest {{.Retain}} kept in {{.Dir}}"
elif ! active {{.Unit}}.timer; then
  quiet systemctl enable --now {{.Unit}}.timer
  changed "started the etcd snapshot timer"
fi
{{- end }}
