#!/usr/bin/env bash
# tests/model/check_ticks.sh: model-check tick mode's frontier protocol
# (ticks.pml) with spin, and check that every planted bug is caught.
#
#   1. the correct model, exhaustive safety search: no unit steps a tick
#      before its inputs are complete, every tick is stepped exactly once
#      by each unit, none beyond the host's closed ticks (assertions), and
#      nothing deadlocks (invalid end states);
#   2. each planted bug (-DBUG_*), which must FAIL for the reason named
#      below.
#
# Exits 0 iff the correct model passes AND every planted bug fails. Works
# in a temporary directory; about a second of CPU. check.sh runs it.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/sc-ticks.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

# run NAME DEFINES...: build and search one variant into NAME/out.
run() {
	local name=$1
	shift
	mkdir "$name"
	cp "$here/ticks.pml" "$name/"
	(
		cd "$name"
		spin -a "$@" ticks.pml >spin.log 2>&1 || { cp spin.log out; exit 0; }
		gcc -O0 -w -DSAFETY -o pan pan.c >gcc.log 2>&1 || { cp gcc.log out; exit 0; }
		./pan -m20000 >out 2>&1 || true
	)
}

declare -A expect=(
	[BUG_FRONTIER_BEFORE_FRAMES]='assertion violated'
	[BUG_MARKER_LOST]='assertion violated'
	[BUG_NO_DELAY]='invalid end state'
)
status=0
run correct
if grep -q 'errors: 0' correct/out &&
	! grep -qE 'max search depth too small|out of memory' correct/out; then
	echo "PASS  ticks correct: no violation, search complete"
else
	echo "FAIL  ticks correct: the correct model must pass"
	status=1
fi
for bug in "${!expect[@]}"; do
	run "$bug" "-D$bug"
	if grep -qF -- "${expect[$bug]}" "$bug/out"; then
		echo "PASS  ticks $bug: caught (${expect[$bug]})"
	else
		echo "FAIL  ticks $bug: not caught; expected '${expect[$bug]}'"
		status=1
	fi
done
exit "$status"
