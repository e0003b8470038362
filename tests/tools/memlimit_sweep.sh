#!/bin/sh
# memlimit_sweep.sh SUBCIRC: the CLI under address-space limits. From the
# loader's minimum (the smallest `ulimit -v` at which `subcirc --version`
# succeeds: below it the dynamic loader itself fails before any code of ours
# runs, exit 127 while it cannot map a library, or SIGSEGV at a few MB)
# upwards in steps, every subcommand, small, must exit 0 or 3
# with a message on stderr; never a signal (exit above 128), never another
# code. Table-driven: one line per subcommand below.
set -u
exe=$1
step=${SC_MEMLIMIT_STEP_KB:-2000}
span=${SC_MEMLIMIT_SPAN_KB:-40000}

# The loader's minimum, in 500 KB steps.
min=2000
while :; do
	{ (ulimit -v $min; exec "$exe" --version) >/dev/null 2>&1; } 2>/dev/null && break
	min=$((min + 500))
	[ $min -gt 200000 ] && { echo "the CLI does not start below 200 MB"; exit 1; }
done
echo "loader's minimum: $min KB; limits $min..$((min + span)) KB in $step KB steps"

cmds='run --workers 1 --events 2000 --quiet
run --workload nexmark --query q4 --workers 1 --events 2000 --quiet
place --placements single --workers 1 --budgets 64 --reps 1 --time-per-case 0.01 --warmup 0
stress --seeds 1 --workers 1 --placements single --workloads grid'

bad=0 runs=0
d=$(mktemp -d) || exit 1
trap 'rm -rf "$d"' EXIT
v=$min
while [ $v -le $((min + span)) ]; do
	# Above the loader's minimum there are narrow limits (100 KB wide,
	# where the binary's layout puts them) at which even `--version`
	# dies before main: jemalloc's start-up with its thread caches on
	# (it passes with MALLOC_CONF=tcache:false, which main's re-execution
	# sets, tools/subcirc.c). No code of the commands runs there: such a
	# limit is skipped, and said; more than two skipped fail the sweep
	# (the window is narrow: more means the start-up itself regressed).
	if ! { (ulimit -v $v; exec "$exe" --version) >/dev/null 2>&1; } 2>/dev/null; then
		echo "limit $v KB: skipped: subcirc --version dies before main here"
		echo x >>"$d/skipped"
		v=$((v + step))
		continue
	fi
	echo "$cmds" | while read -r cmd; do
		# shellcheck disable=SC2086 # the table's words are arguments
		(ulimit -v $v; exec "$exe" $cmd) >"$d/out" 2>"$d/err"
		rc=$?
		case $rc in
		0) ;;
		3) [ -s "$d/err" ] || { echo "limit $v KB: subcirc $cmd: exit 3 without a message"; echo x >>"$d/bad"; } ;;
		*) echo "limit $v KB: subcirc $cmd: exit $rc$( [ $rc -gt 128 ] && echo " (signal $((rc - 128)))"): $(tail -c 300 "$d/err")"
		   echo x >>"$d/bad" ;;
		esac
		echo x >>"$d/runs"
	done
	v=$((v + step))
done
runs=$(wc -l <"$d/runs")
[ -f "$d/bad" ] && bad=$(wc -l <"$d/bad")
skipped=0
[ -f "$d/skipped" ] && skipped=$(wc -l <"$d/skipped")
echo "$runs runs, $bad bad, $skipped limits skipped"
[ "$bad" -eq 0 ] && [ "$skipped" -le 2 ]
