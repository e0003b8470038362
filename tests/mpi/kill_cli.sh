#!/usr/bin/env bash
# kill_cli.sh SUBCIRC MPIRUN [ARGS...]: `subcirc run` across 2 ranks
# (ranks:2, 120 s by time, at 200k events/s so as not to load the machine
# for the other tests) whose rank 1 is killed (SIGKILL, by its pid) 2 s
# in: rank 0 must report it dead ("rank 1 is dead") and end on its own
# within 75 s of the kill (the CLI's link takes a peer silent for 20 s
# for dead; the gathers after a failed run wait 5 s each), without a
# summary that claims the output.
# Open MPI 4 keeps the survivor running only when told so.
set -uo pipefail
exe=$1
shift
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$@" --mca orte_enable_recovery 1 --mca orte_abort_on_non_zero_status 0 \
	--mca btl self,vader -np 2 "$exe" run --placement ranks:2 --workers 1 \
	--seconds 120 --rate 200000 --quiet >"$out" 2>&1 &
job=$!
victim=
for _ in $(seq 100); do
	for p in $(pgrep -P "$job"); do
		if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null |
			grep -qx 'OMPI_COMM_WORLD_RANK=1'; then
			victim=$p
		fi
	done
	[[ -n $victim ]] && break
	sleep 0.1
done
if [[ -z $victim ]]; then
	kill "$job" 2>/dev/null
	cat "$out"
	echo "kill_cli.sh: no rank 1 under mpirun $job" >&2
	exit 1
fi
sleep 2
kill -9 "$victim"
t0=$(date +%s)
for _ in $(seq 750); do
	kill -0 "$job" 2>/dev/null || break
	sleep 0.1
done
t=$(($(date +%s) - t0))
if kill -0 "$job" 2>/dev/null; then
	kill "$job" 2>/dev/null
	cat "$out"
	echo "kill_cli.sh: rank 0 still ran ${t} s after rank 1 was killed" >&2
	exit 1
fi
cat "$out"
echo "kill_cli.sh: ended ${t} s after the kill"
grep -q 'rank 1 is dead' "$out" || { echo "kill_cli.sh: rank 1 not reported dead" >&2; exit 1; }
if grep -q 'output equals the reference' "$out"; then
	echo "kill_cli.sh: a summary claims the output after a rank died" >&2
	exit 1
fi
