#!/usr/bin/env bash
# bench/peers/run.sh TOP [--rounds N]: the peer table of `tools/bench
# peers`. The 4-stage pipeline of 1-row and 256-row frames, subcirc's
# (bench_pipeline's "pipeline R-row" case: four units on a pool of W
# workers, with its raw C threads + ck_ring baseline) and each peer built
# by build.sh (oneTBB flow_graph, Go channels, Rust crossbeam-channel) on
# W threads too, so no side is oversubscribed. Every round runs subcirc
# and then each peer, alternating, for each frame size; each figure is
# the median over the rounds of each program's median of 3 runs (the
# sizes of bench_pipeline --quick: 100,000 frames of 1 row, 2,000 of 256).
# Items are rows, items/s: higher is better; ratio = subcirc / peer,
# above 1 subcirc is faster.
set -euo pipefail
top=${1:?usage: run.sh TOP [--rounds N]}
shift
rounds=5
while (($#)); do
	case $1 in
	--rounds) rounds=${2:?--rounds needs a value}; shift 2 ;;
	--quick) rounds=2; shift ;;
	*) echo "bench/peers/run.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "bench/peers/run.sh: --rounds: '$rounds' is not a whole number >= 1" >&2; exit 2; }
out="$top/build/peers"
"$top/bench/peers/build.sh" "$out" || echo "bench/peers: no peer built: only subcirc's side runs" >&2
pipe="$top/build/bench/bench_pipeline"
[[ -x $pipe ]] || { echo "bench/peers: $pipe is not built (tools/build)" >&2; exit 1; }
peers=()
for p in tbb_pipeline go_pipeline crossbeam_pipeline; do
	[[ -x $out/$p ]] && peers+=("$out/$p")
done
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for ((r = 1; r <= rounds; r++)); do
	echo "bench/peers: round $r of $rounds" >&2
	for rows in 1 256; do
		frames=$((rows == 1 ? 100000 : 2000))
		line=$("$pipe" --quick "pipeline $rows-row")
		echo "$line" >>"$log"
		threads=$(echo "$line" | sed -n 's/.*(\([0-9]*\) workers.*/\1/p')
		for p in "${peers[@]}"; do
			"$p" --frames "$frames" --rows "$rows" --threads "${threads:-2}" --reps 3 >>"$log"
		done
	done
done
python3 - "$log" "$rounds" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
fig, threads, names = {}, set(), ["subcirc", "raw C, 4 threads + ck_ring"]
for x in rows:
    if x["bench"] == "pipeline":
        case = x["case"].split(" (")[0]
        fig.setdefault((case, "subcirc"), []).append(x["value"])
        fig.setdefault((case, "raw C, 4 threads + ck_ring"), []).append(x["baseline_value"])
    else:
        case = "pipeline %d-row" % x["rows"]
        threads.add(x["threads"])
        fig.setdefault((case, x["peer"]), []).append(x["value"])
        if x["peer"] not in names:
            names.append(x["peer"])
def si(v):
    for s in ("", "k", "M", "G"):
        if abs(v) < 1000:
            return "%.3g%s" % (v, s)
        v /= 1000
    return "%.3gT" % v
print("peers: the 4-stage pipeline, %s threads a side (subcirc: that many workers), "
      "median of %s rounds alternating subcirc and the peers" % ("/".join(map(str, sorted(threads))) or "2", sys.argv[2]))
print("items/s, higher is better; (ratio) = subcirc / peer: above 1, subcirc is faster")
print("| case | " + " | ".join(names) + " |")
print("|---" * (len(names) + 1) + "|")
for case in ("pipeline 1-row", "pipeline 256-row"):
    ours = statistics.median(fig[(case, "subcirc")])
    cells = []
    for n in names:
        v = fig.get((case, n))
        if not v:
            cells.append("skipped")
            continue
        m = statistics.median(v)
        cells.append(si(m) if n == "subcirc" else "%s (%.2f)" % (si(m), ours / m))
    print("| %s | %s |" % (case, " | ".join(cells)))
PY
