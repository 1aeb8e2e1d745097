#!/usr/bin/env bash
# Back to back on the same 5 local masters: redsync at several worker counts,
# then lockbench multiplexed, in interleaved rounds (every configuration once
# per round) so the machine's drift falls on all of them. Prints each
# configuration's median and range over the rounds, and the ratio
# lockbench@256 / best redsync per round (median and range).
# Usage: scripts/compare-redsync.sh [duration] [rounds]   (run from the repository root)
set -euo pipefail
dur=${1:-8s}
rounds=${2:-3}
go build -o lockbench .
addr_file=$(mktemp)
out=$(mktemp)
./lockbench masters --local 5 --for 60m --addr-file "$addr_file" >/dev/null &
masters_pid=$!
trap 'kill -INT $masters_pid 2>/dev/null; wait $masters_pid 2>/dev/null; rm -f "$addr_file" "$out"' EXIT
for _ in $(seq 50); do [ -s "$addr_file" ] && break; sleep 0.1; done
addrs=$(cat "$addr_file")
configs="redsync:4 redsync:16 redsync:64 redsync:256 lockbench:64 lockbench:256 lockbench:1024"
for r in $(seq "$rounds"); do
  for c in $configs; do
    d=${c%%:*} w=${c##*:}
    ./lockbench run --masters "$addrs" --duration "$dur" --warmup 2s --keys 100000 --json \
      --driver "$d" --workers "$w" |
      python3 -c 'import json,sys; d=json.load(sys.stdin); print(json.dumps({"round": int(sys.argv[1]), "driver": sys.argv[2], "workers": int(sys.argv[3]), "cps": d["throughput"]["cycles_per_sec"], "p50": d["acquire_latency_us"]["p50"], "p99": d["acquire_latency_us"]["p99"], "cpu": d["client"]["cpu_us_per_cycle"]}))' "$r" "$d" "$w" >>"$out"
  done
done
python3 - "$out" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def fmt(xs, nd=0):
    m = statistics.median(xs)
    return f"{m:,.{nd}f} ({min(xs):,.{nd}f}–{max(xs):,.{nd}f})"
print("| driver | workers | cycles/s | acquire p50 µs | p99 µs | client CPU µs/cycle |")
print("|---|--:|--:|--:|--:|--:|")
keys = sorted({(r["driver"], r["workers"]) for r in rows}, key=lambda k: (k[0] != "redsync", k[1]))
for d, w in keys:
    rs = [r for r in rows if r["driver"] == d and r["workers"] == w]
    print(f"| {d} | {w} | {fmt([r['cps'] for r in rs])} | {fmt([r['p50'] for r in rs])} | "
          f"{fmt([r['p99'] for r in rs])} | {fmt([r['cpu'] for r in rs], 1)} |")
ratios = []
for rnd in sorted({r["round"] for r in rows}):
    rs = [r for r in rows if r["round"] == rnd]
    best = max(r["cps"] for r in rs if r["driver"] == "redsync")
    lb = next(r["cps"] for r in rs if r["driver"] == "lockbench" and r["workers"] == 256)
    ratios.append(lb / best)
print(f"\nlockbench@256 / best redsync, per round: median {statistics.median(ratios):.1f}x "
      f"(range {min(ratios):.1f}–{max(ratios):.1f}x, {len(ratios)} rounds)")
EOF
