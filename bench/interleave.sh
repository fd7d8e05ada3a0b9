#!/usr/bin/env bash
# Alternates our suite and PyTorch on a few cases, ROUNDS times, and prints
# each side's median per case and their ratio. On a virtual machine whose
# memory bandwidth drifts by 2× over minutes, a full `make bench` (ours,
# then the peers, minutes apart) can compare two different machine states;
# alternating short runs puts both sides in every state.
#
#   bench/interleave.sh [FILTER] [THREADS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
filter=${1:-'^(add|relu|sum)/(4M|16M)$'}
threads=${2:-$(nproc)}
rounds=${3:-5}
bin=$(mktemp -d)/bench
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" ./bench
for _ in $(seq "$rounds"); do
	"$bin" -device cpu -threads "$threads" -min-time 500ms -filter "$filter" 2>&1 |
		awk '$2 == "cpu" && $3 ~ /^[0-9]+$/ {print "webtensor", $1, $4}'
	/usr/bin/python3 bench/peers/peers.py --threads "$threads" --min-time 0.5 --filter "$filter" 2>&1 |
		awk '$2 == "torch" {print "torch", $1, $5}'
done | /usr/bin/python3 -c '
import sys, statistics, collections
v = collections.defaultdict(list)
for line in sys.stdin:
    who, case, x = line.split()
    v[case, who].append(float(x))
print("%-20s %10s %10s %7s   (medians of the rounds, speed units)" % ("case", "webtensor", "torch", "ratio"))
for case in sorted({c for c, _ in v}):
    a, b = statistics.median(v[case, "webtensor"]), statistics.median(v[case, "torch"])
    print(f"{case:20} {a:10.1f} {b:10.1f} {a / b:6.2f}x")
'
