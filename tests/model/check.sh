#!/usr/bin/env bash
# tests/model/check.sh: model-check the executor protocol (executor.pml) with
# spin, and check that the checker still catches every planted bug.
#
#   1. the correct model, exhaustive safety search: assertions (never two
#      owners; at quiescence no lost kick, queue empty, every live unit IDLE,
#      every worker parked) and invalid end states (deadlock);
#   2. the correct model, non-progress-cycle search (livelock: the work is
#      bounded, so any infinite run is a bug), without panics and spurious
#      wakes to keep it within the time budget (both are bounded events, so
#      neither can be part of a cycle; the safety search covers them);
#   3. each planted bug (-DBUG_*), which must FAIL, for the reason named
#      below; a bug the checker no longer catches fails this script.
#
# Exits 0 iff the correct model passes both searches AND every planted bug
# fails.  Works in a temporary directory; the source tree stays clean.
# Takes about 25 s on an idle core.  SC_MODEL_TRAIL=1 prints the counterexample
# of each planted bug (spin -t replay).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
model=$here/executor.pml
for tool in spin gcc; do
	command -v "$tool" >/dev/null || {
		echo "check.sh: $tool not found (tools/deps installs it)" >&2
		exit 2
	}
done

work=$(mktemp -d "${TMPDIR:-/tmp}/sc-model.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$model" "$work/executor.pml"
cd "$work"

# Bounds: the correct model's longest run is ~330 steps, and it stores
# ~4 million states of ~90 bytes; a search that hits either bound is
# incomplete, and counts as a failure of the correct model.
depth=20000
memlim_mb=2048

# run NAME MODE SPIN_DEFINES...: build and run one search; leaves its output
# in NAME.out.  MODE is safety or livelock.
run() {
	local name=$1 mode=$2
	shift 2
	local cflags=(-O1 -w "-DMEMLIM=$memlim_mb")
	local pflags=("-m$depth" -w24)
	local sflags=("$@")
	if [[ $mode == safety ]]; then
		cflags+=(-DSAFETY)
	else
		cflags+=(-DNP)
		pflags+=(-l)
		sflags+=(-DLIVENESS)
	fi
	rm -f executor.pml.trail
	spin -a "${sflags[@]}" executor.pml >"$name.spin" 2>&1 || {
		cat "$name.spin"
		return 1
	}
	gcc "${cflags[@]}" -o pan pan.c
	./pan "${pflags[@]}" >"$name.out" 2>&1 || true
	if [[ -f executor.pml.trail ]]; then
		mv executor.pml.trail "$name.trail"
	fi
}

summary() { # NAME: the verdict lines of a pan run
	grep -E 'errors:|states, stored|elapsed time|pan:[0-9]+:|error:' "$1.out" |
		sed 's/^/    /'
}

complete() { # NAME: no error, and the search was not cut short
	grep -q 'errors: 0' "$1.out" &&
		! grep -qE 'max search depth too small|out of memory|search not completed' "$1.out"
}

status=0

check_correct() { # NAME MODE DEFINES...
	local name=$1
	run "$@"
	if complete "$name"; then
		echo "PASS  $name: no violation, search complete"
	else
		echo "FAIL  $name: the correct model must pass"
		status=1
	fi
	summary "$name"
}

# check_bug BUG MODE EXPECT [DEFINES...]: the planted bug must produce an
# error whose message contains EXPECT.
check_bug() {
	local bug=$1 mode=$2 expect=$3
	shift 3
	run "$bug" "$mode" "-D$bug" "$@"
	if grep -qF -- "$expect" "$bug.out"; then
		echo "PASS  $bug: caught ($expect)"
	else
		echo "FAIL  $bug: not caught; expected '$expect'"
		status=1
	fi
	summary "$bug"
	if [[ ${SC_MODEL_TRAIL:-0} == 1 && -f $bug.trail ]]; then
		mv "$bug.trail" executor.pml.trail
		spin -t -p -D"$bug" "$@" executor.pml | tail -40
	fi
}

check_correct correct-safety safety
check_correct correct-livelock livelock -DPANICS=0 -DSPURIOUS=0

# The bugs are looked for in the smallest configuration, which must already
# show them (and keeps each search to a second or so).
small=(-DPANICS=0 -DSPURIOUS=0)
check_bug BUG_NO_REQUEUE_KICKED safety 'pending[i]==0' "${small[@]}"
check_bug BUG_NO_WAKE safety 'q_len(q)==0' "${small[@]}"
check_bug BUG_CLAIM_KEEPS_SLOT safety 'owners[u]==1' "${small[@]}"
check_bug BUG_KICK_WITHOUT_PROGRESS livelock 'non-progress cycle' "${small[@]}"

if ((status == 0)); then
	echo "check.sh: the model passes and every planted bug is caught"
else
	echo "check.sh: FAILED" >&2
fi
exit "$status"
