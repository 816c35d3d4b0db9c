#!/usr/bin/env bash
# Runs pkg/ssh's benchmarks against real OpenSSH sshd processes and prints
# the figures issue 3 asks for. Needs root, openssh-server and sudo (see
# test/bench/ssh.md). Usage: test/bench/ssh.sh [count]
set -euo pipefail
cd "$(dirname "$0")/../.."
count=${1:-3}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
go test -run '^$' -bench 'BenchmarkFanOut|BenchmarkSequential|BenchmarkUpload' \
	-benchtime 10x -count "$count" ./pkg/ssh/ | tee "$out"

echo
echo "== figures (median of $count runs) =="
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
field() { grep -E "^$1-[0-9]+ " "$out" | awk -v col="$2" '{for (i=1;i<=NF;i++) if ($(i)==col) print $(i-1)}' | median; }
warm1=$(field 'BenchmarkFanOut/hosts=1' ns/op)
warm50=$(field 'BenchmarkFanOut/hosts=50' ns/op)
sleep1=$(field 'BenchmarkFanOutSleep/hosts=1' ns/op)
sleep50=$(field 'BenchmarkFanOutSleep/hosts=50' ns/op)
cold1=$(field 'BenchmarkFanOutCold/hosts=1' ns/op)
cold50=$(field 'BenchmarkFanOutCold/hosts=50' ns/op)
awk -v a="$warm1" -v b="$warm50" 'BEGIN {printf "true on 50 hosts, cached connections: %.1f ms vs %.1f ms on 1 host = %.1fx (target <= 2x)\n", b/1e6, a/1e6, b/a}'
awk -v a="$sleep1" -v b="$sleep50" 'BEGIN {printf "sleep 0.2 on 50 hosts, cached:        %.1f ms vs %.1f ms on 1 host = %.2fx\n", b/1e6, a/1e6, b/a}'
awk -v a="$cold1" -v b="$cold50" 'BEGIN {printf "true on 50 hosts, new connections:    %.1f ms vs %.1f ms on 1 host = %.1fx\n", b/1e6, a/1e6, b/a}'
printf "sequential commands, one connection: %s ms each (target <= 3 ms); bare x/crypto sessions: %s ms\n" \
	"$(field BenchmarkSequential/pool ms/cmd)" "$(field BenchmarkSequential/x-crypto ms/cmd)"
printf "upload over SFTP: %s MB/s, over cat: %s MB/s (target >= 200 MB/s)\n" "$(field BenchmarkUpload/sftp MB/s)" "$(field BenchmarkUpload/cat MB/s)"
