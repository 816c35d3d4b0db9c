lock={{q .Path}}
mkdir -p "$(dirname "$lock")"
# Every look at the lock and every change to it happens under flock(1) on its guard file, so
# that checking and writing are one step on the host, whoever runs them at the same time.
exec 9>>"$lock.guard"
flock -w 30 9 || fail "another slipway has held $lock.guard for 30s"
lock_token() { if [ -f "$lock" ]; then sed -n 's/^token=//p' "$lock" | head -n 1; fi; }
lock_mtime() { stat -c %Y "$lock"; }
# lock_state: "held AGE MTIME", then the lock's lines (token, owner, local).
lock_state() {
  local mtime
  mtime=$(lock_mtime)
  printf 'held %d %d\n' "$(($(date +%s) - mtime))" "$mtime"
  cat "$lock"
}
# write_lock: replaces the lock at once; a reader sees the old one or the whole new one.
write_lock() {
  local tmp
  tmp=$(mktemp "$lock.XXXXXX")
  printf '%s\n' {{qs .Record}} >"$tmp"
  mv -f "$tmp" "$lock"
  echo acquired
}
{{- if eq .Op "acquire"}}
if [ -f "$lock" ]; then lock_state; else write_lock; fi
{{- else if eq .Op "takeover"}}
# Only the lock that was judged stale is replaced: the same token, not refreshed since.
if [ ! -f "$lock" ] || { [ "$(lock_token)" = {{q .Expect}} ] && [ "$(lock_mtime)" = {{q .ExpectMTime}} ]; }; then
  write_lock
else
  lock_state
fi
{{- else if eq .Op "refresh"}}
if [ -n "$(lock_token)" ] && [ "$(lock_token)" = {{q .Token}} ]; then
  touch "$lock"
  echo refreshed
else
  echo lost
  if [ -f "$lock" ]; then lock_state; fi
fi
{{- else if eq .Op "release"}}
if [ -n "$(lock_token)" ] && [ "$(lock_token)" = {{q .Token}} ]; then
  rm -f "$lock"
  echo released
fi
{{- end}}
