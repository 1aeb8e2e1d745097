#!/usr/bin/env bash
# Back to back on the same 5 local masters: redsync at several worker counts
# (its best is kept), then lockbench multiplexed at 256 workers.
# Usage: scripts/compare-redsync.sh [duration]   (run from the repository root)
set -euo pipefail
dur=${1:-10s}
go build -o lockbench .
addr_file=$(mktemp)
./lockbench masters --local 5 --for 30m --addr-file "$addr_file" >/dev/null &
masters_pid=$!
trap 'kill -INT $masters_pid 2>/dev/null; wait $masters_pid 2>/dev/null; rm -f "$addr_file"' EXIT
for _ in $(seq 50); do [ -s "$addr_file" ] && break; sleep 0.1; done
addrs=$(cat "$addr_file")
run() { ./lockbench run --masters "$addrs" --duration "$dur" --warmup 2s --keys 100000 --json "$@"; }
cps() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(round(d["throughput"]["cycles_per_sec"]), d["acquire_latency_us"]["p50"], d["acquire_latency_us"]["p99"], round(d["client"]["cpu_us_per_cycle"],1))'; }
best=0
echo "driver workers cycles/s p50_us p99_us cpu_us/cycle"
for w in 4 8 16 32 64 128 256; do
  read -r c p50 p99 cpu < <(run --driver redsync --workers "$w" | cps)
  echo "redsync $w $c $p50 $p99 $cpu"
  [ "$c" -gt "$best" ] && best=$c
done
for w in 64 256 1024; do
  read -r c p50 p99 cpu < <(run --driver lockbench --workers "$w" | cps)
  echo "lockbench $w $c $p50 $p99 $cpu"
  [ "$w" = 256 ] && lb=$c
done
python3 -c "print('lockbench@256 / best redsync = %.1fx' % ($lb/$best))"
