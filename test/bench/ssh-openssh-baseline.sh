#!/usr/bin/env bash
# Measures OpenSSH's own client against a throwaway sshd on loopback, as a
# reference for pkg/ssh's benchmarks on the same machine at the same time:
# per-command latency over a multiplexed (ControlMaster) connection and
# upload throughput through `cat` and sftp. Needs root and openssh-server.
set -euo pipefail
user=${SSH_BENCH_USER:-slipway-sudo}   # created by pkg/ssh's tests; root's rc files may be slow
dir=$(mktemp -d /tmp/slipway-sshbase-XXXXXX)
chmod 755 "$dir"
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; ssh -S "$dir/ctl" -O exit x 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
ssh-keygen -q -t ed25519 -N '' -f "$dir/host"
ssh-keygen -q -t ed25519 -N '' -f "$dir/id"
cp "$dir/id.pub" "$dir/authorized_keys"; chmod 644 "$dir/authorized_keys"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo $((20000 + RANDOM % 20000)))
cat > "$dir/sshd_config" <<CFG
Port $port
ListenAddress 127.0.0.1
HostKey $dir/host
PidFile none
UsePAM no
StrictModes no
AuthorizedKeysFile $dir/authorized_keys
Subsystem sftp /usr/lib/openssh/sftp-server
CFG
mkdir -p /run/sshd
/usr/sbin/sshd -D -e -f "$dir/sshd_config" 2>"$dir/log" &
pid=$!
for _ in $(seq 100); do grep -q "Server listening" "$dir/log" && break; sleep 0.05; done
opts=(-i "$dir/id" -p "$port" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o Ciphers=aes128-gcm@openssh.com)
ssh "${opts[@]}" -M -S "$dir/ctl" -fN "$user@127.0.0.1"
chown "$user" "$dir"
start=$(date +%s%N)
for _ in $(seq 100); do ssh "${opts[@]}" -S "$dir/ctl" "$user@127.0.0.1" true; done
end=$(date +%s%N)
awk -v ns=$((end - start)) 'BEGIN {printf "OpenSSH ssh, ControlMaster, 100 x true: %.2f ms each\n", ns/1e6/100}'
start=$(date +%s%N)
head -c 268435456 /dev/zero | ssh "${opts[@]}" -S "$dir/ctl" "$user@127.0.0.1" "cat > $dir/blob"
end=$(date +%s%N)
awk -v ns=$((end - start)) 'BEGIN {printf "OpenSSH ssh | cat, 256 MiB: %.0f MB/s\n", 268435456/(ns/1e9)/1e6}'
head -c 268435456 /dev/zero > "$dir/src"
start=$(date +%s%N)
sftp -q -o ControlPath="$dir/ctl" "${opts[@]/-p/-P}" "$user@127.0.0.1" <<<"put $dir/src $dir/blob2" >/dev/null
end=$(date +%s%N)
awk -v ns=$((end - start)) 'BEGIN {printf "OpenSSH sftp put, 256 MiB: %.0f MB/s\n", 268435456/(ns/1e9)/1e6}'
