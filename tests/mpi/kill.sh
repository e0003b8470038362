#!/usr/bin/env bash
# kill.sh EXE MPIRUN [ARGS...]: run the kill scenario on 3 ranks (rank 1
# kills itself mid-run) and pass when both survivors reported it dead
# within the driver's deadline and ended on their own.
set -uo pipefail
exe=$1
shift
out=$("$@" --mca orte_enable_recovery 1 --mca orte_abort_on_non_zero_status 0 \
	-np 3 "$exe" kill 2>&1)
echo "$out"
ok=$(grep -c '^OK rank [02]: rank 1 reported dead' <<<"$out")
if [[ $ok -ne 2 ]]; then
	echo "kill.sh: $ok of 2 survivors reported rank 1 dead" >&2
	exit 1
fi
