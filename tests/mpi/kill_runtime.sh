#!/usr/bin/env bash
# kill_runtime.sh EXE MPIRUN [ARGS...]: the runtime's kill scenario on 3
# ranks (rank 1 kills itself mid-run); passes when both survivors reported
# its units dead and ended on their own within the driver's deadline.
set -uo pipefail
exe=$1
shift
out=$(timeout 90 "$@" --mca orte_enable_recovery 1 \
	--mca orte_abort_on_non_zero_status 0 --mca btl self,vader \
	-np 3 "$exe" kill 1 2>&1)
echo "$out"
ok=$(grep -c '^OK rank [02]: rank 1 reported dead' <<<"$out")
if [[ $ok -ne 2 ]]; then
	echo "kill_runtime.sh: $ok of 2 survivors reported rank 1 dead" >&2
	exit 1
fi
