#!/usr/bin/env bash
# Alternates two sides on a few cases, ROUNDS times, and prints each
# side's median per case and their ratio. On a virtual machine whose
# memory bandwidth drifts by 2× over minutes, a full `make bench` (one
# side, then the other, minutes apart) can compare two different machine
# states; alternating short runs puts both sides in every state.
#
#   bench/interleave.sh [FILTER] [THREADS] [ROUNDS]
#
# The sides are our suite and PyTorch on the CPU; with BASE=REV (a commit,
# branch or tag) they are our suite built from REV and from the working
# tree, on DEVICE (default cpu; e.g. webgpu:0): the check that a change
# left speed as it was. The ratio is a speed-up either way: above 1, the
# first side is faster (for a rate such as GB/s or GFLOPS the ratio of
# the medians, for a time such as ms or µs/op the inverse).
set -euo pipefail
cd "$(dirname "$0")/.."
filter=${1:-'^(add|relu|sum)/(4M|16M)$'}
threads=${2:-$(nproc)}
rounds=${3:-5}
device=${DEVICE:-cpu}
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/base" 2>/dev/null || true; rm -rf "$tmp"' EXIT
go build -o "$tmp/bench" ./bench
if [ -n "${BASE:-}" ]; then
	git worktree add --quiet --detach "$tmp/base" "$BASE"
	(cd "$tmp/base" && go build -o "$tmp/base-bench" ./bench)
	left=webtensor right="$BASE"
else
	/usr/bin/python3 -c 'import torch' 2>/dev/null ||
		{ echo "interleave: PyTorch is missing for /usr/bin/python3; run make peer-packages" >&2; exit 1; }
	left=webtensor right=torch
fi
ours() { # binary label
	"$1" -device "$device" -threads "$threads" -min-time 500ms -filter "$filter" 2>&1 |
		awk -v who="$2" '$3 ~ /^[0-9]+$/ && $4 ~ /^[0-9.]+$/ {print who, $1, $4, $6}'
}
for _ in $(seq "$rounds"); do
	ours "$tmp/bench" webtensor
	if [ -n "${BASE:-}" ]; then
		ours "$tmp/base-bench" base
	else
		/usr/bin/python3 bench/peers/peers.py --threads "$threads" --min-time 0.5 --filter "$filter" 2>&1 |
			awk '$2 == "torch" && $5 ~ /^[0-9.e+]+$/ {print "other", $1, $5, $7}'
	fi
done | sed 's/^base /other /' | /usr/bin/python3 -c '
import sys, statistics, collections
left, right = sys.argv[1], sys.argv[2]
v, unit = collections.defaultdict(list), {}
for line in sys.stdin:
    who, case, x, u = line.split()
    v[case, who].append(float(x))
    unit[case] = u
print("%-28s %10s %10s %-7s %8s   (medians of the rounds; then the best samples of each side and their ratio)" % ("case", left[:10], right[:10], "unit", "speed-up"))
for case in sorted({c for c, _ in v}):
    if not v[case, "webtensor"] or not v[case, "other"]:
        continue
    a, b = statistics.median(v[case, "webtensor"]), statistics.median(v[case, "other"])
    is_time = unit[case].split("/")[0] in ("ns", "µs", "us", "ms", "s")
    speedup = b / a if is_time else a / b
    # Best of the rounds too: on a shared machine the medians drift with
    # the load; the best samples show what each side can do.
    best = min if is_time else max
    ba, bb = best(v[case, "webtensor"]), best(v[case, "other"])
    bspeed = bb / ba if is_time else ba / bb
    print(f"{case:28} {a:10.4g} {b:10.4g} {unit[case]:7} {speedup:7.2f}x   best {ba:.4g} {bb:.4g} {bspeed:.2f}x")
' "$left" "$right"
