#!/usr/bin/env bash
# tests/model/check.sh: model-check the executor protocol with spin, for both
# executors (executor.pml: the one queue; executor_steal.pml: per-worker
# queues, the injection queue, stealing and the next slot), and check that
# the checker still catches every planted bug of each; then the same for
# tick mode's frontiers (ticks.pml, check_ticks.sh).
#
#   1. the correct model, exhaustive safety search: assertions (never two
#      owners; at quiescence no lost kick, queue empty, every live unit IDLE,
#      every worker parked) and invalid end states (deadlock);
#   2. the correct model, non-progress-cycle search (livelock: the work is
#      bounded, so any infinite run is a bug), without panics and spurious
#      wakes to keep it within the time budget (both are bounded events, so
#      neither can be part of a cycle; the safety search covers them);
#   3. the correct model with a shutdown after the host's last kick
#      (-DSHUTDOWN): every worker wakes and leaves, none is left to join;
#   4. each planted bug (-DBUG_*), which must FAIL, for the reason named
#      below; a bug the checker no longer catches fails this script;
#   5. the STEAL model (executor_steal.pml): the same safety and livelock
#      searches, and its planted bugs (a unit queued twice, a kick lost in
#      a steal, a parked worker never woken, a requeue that lets wait_idle
#      see idle while the next slot's unit runs).
#
# Exits 0 iff the correct model passes all three searches AND every planted bug
# fails.  Works in a temporary directory; the source tree stays clean.
# Runs two searches at a time (SC_MODEL_JOBS); about 40 s of CPU in all, so
# ~20-25 s on two idle cores.  SC_MODEL_TRAIL=1 prints the counterexample of
# each planted bug (spin -t replay).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
for tool in spin gcc; do
	command -v "$tool" >/dev/null || {
		echo "check.sh: $tool not found (tools/deps installs it)" >&2
		exit 2
	}
done

work=$(mktemp -d "${TMPDIR:-/tmp}/sc-model.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

# Bounds: the correct model's longest run is ~350 steps, and it stores
# ~4 million states of ~90 bytes; a search that hits either bound is
# incomplete, and counts as a failure of the correct model.
depth=20000
memlim_mb=2048
jobs=${SC_MODEL_JOBS:-2} # searches at once (one core each)

# search NAME MODE OPT SPIN_DEFINES...: in its own directory NAME/, build
# and run one search (MODE safety or livelock; OPT the C optimisation:
# -O1 pays for a long search, -O0 compiles twice as fast for a short one).
# Leaves NAME/out (pan's output) and NAME/trail (a counterexample, if any).
search() {
	local name=$1 mode=$2 opt=$3
	shift 3
	local cflags=("$opt" -w "-DMEMLIM=$memlim_mb")
	local pflags=("-m$depth" -w24)
	local sflags=("$@")
	if [[ $mode == safety ]]; then
		cflags+=(-DSAFETY)
	else
		cflags+=(-DNP)
		pflags+=(-l)
		sflags+=(-DLIVENESS)
	fi
	mkdir "$name"
	# PML=executor_steal.pml start ...: the STEAL model, under the same
	# file name, so that everything below reads the same.
	cp "$here/${PML:-executor.pml}" "$name/executor.pml"
	(
		cd "$name"
		echo "${sflags[*]}" >defines
		if ! spin -a "${sflags[@]}" executor.pml >spin.log 2>&1; then
			cp spin.log out
			exit 0
		fi
		gcc "${cflags[@]}" -o pan pan.c >gcc.log 2>&1 || {
			cp gcc.log out
			exit 0
		}
		./pan "${pflags[@]}" >out 2>&1 || true
		if [[ -f executor.pml.trail ]]; then
			mv executor.pml.trail trail
		fi
	)
}

# start ARGS...: run `search ARGS` in the background, at most $jobs at once.
start() {
	while (($(jobs -rp | wc -l) >= jobs)); do
		wait -n || true
	done
	search "$@" &
	order+=("$1")
}

summary() { # NAME: the verdict lines of a search
	grep -E 'errors:|states, stored|elapsed time|pan:[0-9]+:|error' "$1/out" |
		sed 's/^/    /'
}

complete() { # NAME: no error, and the search was not cut short
	grep -q 'errors: 0' "$1/out" &&
		! grep -qE 'max search depth too small|out of memory|search not completed' "$1/out"
}

declare -A expect=()
order=()

# The correct model, longest searches first.
start correct-safety safety -O1
start correct-livelock livelock -O1 -DPANICS=0 -DSPURIOUS=0
start correct-shutdown safety -O1 -DSHUTDOWN -DPANICS=0

# The planted bugs, in the smallest configuration, which must already show
# them (and keeps each search to a second or so). expect[] is the text the
# failure must contain, so a bug caught for the wrong reason does not count.
small=(-DPANICS=0 -DSPURIOUS=0)
expect[BUG_NO_REQUEUE_KICKED]='pending[i]==0'
expect[BUG_NO_WAKE]='q_len(q)==0'
expect[BUG_CLAIM_KEEPS_SLOT]='owners[u]==1'
expect[BUG_KICK_WITHOUT_PROGRESS]='non-progress cycle'
expect[BUG_SHUTDOWN_SIGNALS_ONE]='exited==3'
expect[BUG_NO_MORE_AT_BUDGET]='input[i]==0'
expect[BUG_NO_DEATH_KICKS]='input[i]==0'
start BUG_NO_REQUEUE_KICKED safety -O0 -DBUG_NO_REQUEUE_KICKED "${small[@]}"
start BUG_NO_WAKE safety -O0 -DBUG_NO_WAKE "${small[@]}"
start BUG_CLAIM_KEEPS_SLOT safety -O0 -DBUG_CLAIM_KEEPS_SLOT "${small[@]}"
start BUG_NO_MORE_AT_BUDGET safety -O0 -DBUG_NO_MORE_AT_BUDGET "${small[@]}"
# Needs a death, so one panic; spurious wakes stay off.
start BUG_NO_DEATH_KICKS safety -O0 -DBUG_NO_DEATH_KICKS -DPANICS=1 \
	-DSPURIOUS=0
start BUG_KICK_WITHOUT_PROGRESS livelock -O0 -DBUG_KICK_WITHOUT_PROGRESS \
	"${small[@]}"
start BUG_SHUTDOWN_SIGNALS_ONE safety -O0 -DBUG_SHUTDOWN_SIGNALS_ONE \
	-DSHUTDOWN "${small[@]}"

# The STEAL model: ~2 million states, a few seconds each.
PML=executor_steal.pml start steal-correct-safety safety -O1
PML=executor_steal.pml start steal-correct-livelock livelock -O1
expect[STEAL_BUG_QUEUED_TWICE]='assertion violated (state[u]=='
expect[STEAL_BUG_STEAL_READS_EARLY]='input[i]==0'
expect[STEAL_BUG_PARK_CHECK_FIRST]='q_len(inj)==0'
expect[STEAL_BUG_REQUEUE_BEFORE_KICKS]='assertion violated ((owners[i]==0)&&'
PML=executor_steal.pml start STEAL_BUG_QUEUED_TWICE safety -O0 \
	-DBUG_QUEUED_TWICE
PML=executor_steal.pml start STEAL_BUG_STEAL_READS_EARLY safety -O0 \
	-DBUG_STEAL_READS_EARLY
PML=executor_steal.pml start STEAL_BUG_PARK_CHECK_FIRST safety -O0 \
	-DBUG_PARK_CHECK_FIRST
PML=executor_steal.pml start STEAL_BUG_REQUEUE_BEFORE_KICKS safety -O0 \
	-DBUG_REQUEUE_BEFORE_KICKS
wait

status=0
for name in "${order[@]}"; do
	if [[ -z ${expect[$name]:-} ]]; then
		if complete "$name"; then
			echo "PASS  $name: no violation, search complete"
		else
			echo "FAIL  $name: the correct model must pass"
			status=1
		fi
	elif grep -qF -- "${expect[$name]}" "$name/out"; then
		echo "PASS  $name: caught (${expect[$name]})"
	else
		echo "FAIL  $name: not caught; expected '${expect[$name]}'"
		status=1
	fi
	summary "$name"
	if [[ ${SC_MODEL_TRAIL:-0} == 1 && -f $name/trail ]]; then
		# shellcheck disable=SC2046 # the defines are words
		(cd "$name" && mv trail executor.pml.trail &&
			spin -t -p $(cat defines) executor.pml | tail -40)
	fi
done

# Tick mode's frontier protocol (ticks.pml): its own model and script.
if ! bash "$here/check_ticks.sh"; then
	status=1
fi

if ((status == 0)); then
	echo "check.sh: the model passes and every planted bug is caught"
else
	echo "check.sh: FAILED" >&2
fi
exit "$status"
