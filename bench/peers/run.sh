#!/usr/bin/env bash
# bench/peers/run.sh TOP [--build DIR] [--rounds N | --quick] [--budget B]
#                        [--json FILE]
# The peer table of `tools/bench peers`: the 4-stage pipeline of 1-row and
# 256-row frames, subcirc's side from bench_pipeline's "pipeline R-row, T
# threads, budget B" case (four units on a pool of T workers, each moving
# at most B frames a turn; B is 64 unless --budget says, the pool's
# default) with its two baselines of the same run (a mutex+condvar queue
# of stages and raw2, on T threads too), and each peer that build.sh built
# (oneTBB flow_graph, Go channels, Rust crossbeam-channel) on T threads,
# so that no side is oversubscribed. A peer whose toolchain is absent is
# skipped with build.sh's message and a "skipped" cell.
#
# Every round runs subcirc and then each peer, alternating, for each frame
# size; each figure is the median over the rounds of each program's median
# of 3 runs (the sizes of bench_pipeline --quick: 100,000 frames of 1 row,
# 2,000 of 256). Items are rows, items/s: higher is better; ratio =
# subcirc / other, above 1 subcirc is faster.
#
# DIR is the build folder (TOP/build by default): its bench/bench_pipeline
# runs, and the peers are built into DIR/peers. --json FILE also writes
# the table's cells to FILE, one JSON object per case and side: "case",
# "side" (the column), "value" (the median items/s; null when skipped),
# "ratio" (subcirc / side; null for subcirc and when skipped), "skipped",
# "rounds" (figures behind the median), "threads" and "budget". Exits 1,
# naming what is missing, when bench_pipeline's output lacks a case the
# table needs (bench/peers/check.sh, the ctest bench.peers_output_parses,
# runs it so).
set -euo pipefail
top=${1:?usage: run.sh TOP [--build DIR] [--rounds N | --quick] [--budget B] [--json FILE]}
shift
build=$top/build
rounds=5
budget=64
json=
while (($#)); do
	case $1 in
	--build) build=${2:?--build needs a folder}; shift 2 ;;
	--rounds) rounds=${2:?--rounds needs a value}; shift 2 ;;
	--quick) rounds=2; shift ;;
	--budget) budget=${2:?--budget needs a value}; shift 2 ;;
	--json) json=${2:?--json needs a file}; shift 2 ;;
	*) echo "bench/peers/run.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "bench/peers/run.sh: --rounds: '$rounds' is not a whole number >= 1" >&2; exit 2; }
[[ $budget =~ ^(1|64|256)$ ]] || { echo "bench/peers/run.sh: --budget: '$budget' is not one of bench_pipeline's budgets (1, 64, 256)" >&2; exit 2; }
pipe="$build/bench/bench_pipeline"
[[ -x $pipe ]] || { echo "bench/peers: $pipe is not built (tools/build)" >&2; exit 1; }
out="$build/peers"
"$top/bench/peers/build.sh" "$out" || echo "bench/peers: no peer built: only subcirc's side runs" >&2

# The peers' programs and the names they print, in the table's order.
progs=(tbb_pipeline go_pipeline crossbeam_pipeline)
names=("oneTBB flow_graph" "Go channels" "Rust crossbeam-channel")
peers=()
for p in "${progs[@]}"; do
	[[ -x $out/$p ]] && peers+=("$out/$p")
done

log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Each line of the log gets the round it belongs to, so that the python
# counts each run of bench_pipeline once (it prints one line per baseline).
tag() { sed "s/^{/{\"round\": $1, /"; }
for ((r = 1; r <= rounds; r++)); do
	echo "bench/peers: round $r of $rounds" >&2
	for rows in 1 256; do
		frames=$((rows == 1 ? 100000 : 2000))
		lines=$("$pipe" --quick --budget "$budget" "pipeline $rows-row")
		echo "$lines" | tag "$r" >>"$log"
		threads=$(echo "$lines" | sed -n 's/.*"case": "pipeline [0-9]*-row, \([0-9]*\) threads,.*/\1/p;T;q')
		if [[ -z $threads ]]; then
			echo "bench/peers: bench_pipeline printed no \"pipeline $rows-row, T threads, budget $budget\" case; it printed:" >&2
			echo "$lines" >&2
			exit 1
		fi
		for p in "${peers[@]}"; do
			"$p" --frames "$frames" --rows "$rows" --threads "$threads" --reps 3 | tag "$r" >>"$log"
		done
	done
done

python3 - "$log" "$rounds" "$budget" "$json" "${names[@]}" <<'PY'
import json, re, statistics, sys

log, rounds, budget, json_out = sys.argv[1:5]
peer_names = sys.argv[5:]  # the peers' columns, measured or skipped
CASES = ("pipeline 1-row", "pipeline 256-row")
# bench_pipeline's case of the units on T workers at budget B, by the wall
# clock; its "[cpu]" twin is not in the table.
WALL = re.compile(r"^(pipeline \d+-row), (\d+) threads, budget (\d+) \[wall\]$")

def fail(why):
    print("bench/peers: " + why, file=sys.stderr)
    sys.exit(1)

def field(x, k):
    if k not in x:
        fail("a '%s' line lacks the field '%s': %s" % (x.get("bench"), k, json.dumps(x)))
    return x[k]

ours = {}  # (case, round) -> subcirc's items/s in that round
fig = {}  # (case, side) -> the figures of the rounds
names = ["subcirc"]  # the table's columns, in order
threads = set()
for line in open(log):
    if not line.strip():
        continue
    x = json.loads(line)
    if x.get("bench") == "pipeline":
        m = WALL.match(field(x, "case"))
        if not m or m.group(3) != budget:
            continue
        case = m.group(1)
        threads.add(int(m.group(2)))
        ours[(case, x["round"])] = field(x, "value")
        side, value = field(x, "baseline"), field(x, "baseline_value")
    elif x.get("bench") == "peers":
        case = "pipeline %d-row" % field(x, "rows")
        threads.add(field(x, "threads"))
        side, value = field(x, "peer"), field(x, "value")
        if side not in peer_names:
            fail("a peer printed the name '%s', not one of run.sh's %s"
                 % (side, peer_names))
    else:
        continue
    fig.setdefault((case, side), []).append(value)
    if side not in names and side not in peer_names:
        names.append(side)
for (case, _), v in sorted(ours.items()):
    fig.setdefault((case, "subcirc"), []).append(v)
if len(threads) != 1:
    fail("the sides ran on different numbers of threads: %s" % sorted(threads))
nthreads = threads.pop()
for case in CASES:
    if not fig.get((case, "subcirc")):
        fail("no subcirc figure for '%s, T threads, budget %s [wall]' in "
             "bench_pipeline's output (did its case names change?)" % (case, budget))
names += peer_names

def si(v):
    for s in ("", "k", "M", "G"):
        if abs(v) < 1000:
            return "%.3g%s" % (v, s)
        v /= 1000
    return "%.3gT" % v

print("peers: the 4-stage pipeline, %d threads a side (subcirc: that many workers, "
      "budget %s), median of %s rounds alternating subcirc and the others"
      % (nthreads, budget, rounds))
print("items/s, higher is better; (ratio) = subcirc / other: above 1, subcirc is faster")
print("| case | " + " | ".join(names) + " |")
print("|---" * (len(names) + 1) + "|")
records = []
for case in CASES:
    mine = statistics.median(fig[(case, "subcirc")])
    cells = []
    for n in names:
        v = fig.get((case, n))
        rec = {"bench": "peers", "case": case, "side": n, "unit": "items/s",
               "better": "higher", "threads": nthreads, "budget": int(budget),
               "rounds": len(v) if v else 0, "value": None, "ratio": None,
               "skipped": not v}
        records.append(rec)
        if not v:
            cells.append("skipped")
            continue
        m = statistics.median(v)
        rec["value"] = m
        if n == "subcirc":
            cells.append(si(m))
        else:
            rec["ratio"] = round(mine / m, 4)
            cells.append("%s (%.2f)" % (si(m), mine / m))
    print("| %s | %s |" % (case, " | ".join(cells)))
if json_out:
    with open(json_out, "w") as f:
        for rec in records:
            f.write(json.dumps(rec) + "\n")
PY
