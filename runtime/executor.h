/*
 * executor.h - which unit runs next: kick, claim, run, finish, abandon.
 *
 * The executor spawns nothing. It holds the units (by id, in slots), the
 * queues of runnable units, and the state of each:
 *
 *   IDLE --kick--> QUEUED --claim--> RUNNING --kick--> RUNNING_KICKED
 *     ^                ^                 |                   |
 *     +----finish------|-----------------+                   |
 *                      +---------finish (more or kicked)-----+
 *   RUNNING* --abandon (panic, or condemned)--> DEAD (never run or kicked
 *                                                again, unless revived:
 *                                                sc_exec_revive -> IDLE)
 *
 * - Runnable means queued: a kick queues a unit once; kicks of a queued
 *   unit coalesce; a kick of a running unit marks it, and finish queues it
 *   again. A kick of a dead unit is ignored.
 * - The ownership token is the unit itself: claim takes it out of its slot
 *   into the caller's sc_claim, so no second worker can reach it, and no
 *   lock is held during its turn.
 * - finish then kicks every neighbour the turn named (unit.h: the units
 *   across edges whose traffic moved, both directions), and only after a
 *   turn with progress > 0, so kicks end when frames end.
 * - A panic kills that unit only: sc_exec_run (or sc_exec_work's guard)
 *   catches it, the unit goes DEAD, its destroy runs inside a guard, the
 *   panic is recorded, and every other unit goes on. wait_idle reports the
 *   first panic once the rest is quiet.
 * - Death in one place (unit.h, "Death"): a dying unit cannot say whom its
 *   last turn touched, so the abandon asks it for its peers (every unit
 *   across any of its edges), runs its destroy, and then kicks them all,
 *   while the unit still counts as running: a frame the dying turn sent
 *   before it panicked is taken by its consumer, never left, and a
 *   producer sees the closed edge. Every death (panic, condemn, bad
 *   neighbour list) goes through sc_exec_abandon.
 * - A turn cannot be stopped from outside, but it can be condemned
 *   (sc_exec_condemn, the watchdog's kill policy): when it returns,
 *   sc_exec_run abandons the unit as if it had panicked with the
 *   condemner's words. The request names the turn by the unit's count of
 *   finished turns, so a late one is refused rather than killing the next
 *   turn. Who comes first, the turn's return or the condemn, is decided by
 *   one atomic exchange on a word the claim resets to the turn's number:
 *   no lock is taken during or after a turn for it. A condemned turn did
 *   answer whom it touched: its neighbours are kicked with its peers.
 *
 * Two executors, one protocol (sc_exec_opts.kind; every test runs on both):
 *
 *   QUEUE  one FIFO queue; one mutex guards it, the states and the counts.
 *          The reference. A busy worker hands a unit back and claims the
 *          next in one critical section (one lock round trip per turn);
 *          an idle one spins briefly on the queue length, then parks on a
 *          condition variable, signalled only when a worker is parked.
 *   STEAL  a bounded FIFO ring per worker (executor_int.h: its owner
 *          pushes, the owner and thieves take the front by CAS), an
 *          injection queue (a mutex FIFO) for kicks from the host and from
 *          outside the pool, and states moved by CAS with no lock, so no
 *          lock is shared by the workers' hot path. A kick from a worker's
 *          own turn or finish goes to its ring; a worker claims from its
 *          ring, then the injection queue (bringing a share of it to its
 *          ring), then steals the front of another worker's ring. A finish
 *          that queues units (kick IDLE -> QUEUED) keeps the first of them
 *          in its NEXT SLOT and runs it at once on the same worker, while
 *          its input is hot in cache: that kick is also its claim (IDLE ->
 *          RUNNING in one step; nobody else could reach it in between).
 *          Idle workers spin briefly, then park; a push wakes one parked
 *          worker only when its ring starts to hold work for others (see
 *          executor_steal.c). runtime/executor_steal.c says why each step
 *          is ordered as it is; tests/model/executor_steal.pml checks it.
 *
 * Fairness (both kinds). A unit that said `more` (or was kicked while
 * running) is queued at the back, behind every unit waiting when it
 * finished: QUEUE, behind the whole queue; STEAL, at the back of its
 * worker's ring, with every unit then waiting in the injection queue moved
 * in front of it, so it runs after all of those, whoever takes them (a
 * thief takes the front, so stealing never reorders a ring; a finisher
 * with no ring, the host or the sim's -1, queues it at the back of the
 * injection queue). Units waiting in another worker's ring are not ordered
 * with it; they are that worker's, and any idle worker's to steal. Two
 * bounds keep every queued unit moving on STEAL: a worker runs at most
 * SC_EXEC_NEXT_BOUND (3) turns in a row from its next slot before it takes
 * the front of its ring (tested: next_slot_runs_the_kicked_unit_next_at_
 * most_3_turns_in_a_row), and looks at the injection queue first at least
 * once every SC_EXEC_INJECT_EVERY (61) claims.
 *
 * Cost (bench/bench_turn.c, callgrind, instructions per turn, pool of one
 * worker, ping-pong pairs): QUEUE 252, STEAL 264, the plain mutex+condvar
 * queue running the same jobs 219. README ("Executor") has the times.
 *
 * Introspection (for the watchdog): sc_exec_info and sc_exec_snapshot may
 * be called from any thread at any time while the executor exists; they
 * take the executor's lock briefly and call only has_pending on the units.
 * On STEAL a snapshot reads each unit's state word atomically (state and
 * turn together) while the workers go on; info's counts are a scan of
 * those words, idle is the count of queued and running units at 0.
 * Times in a snapshot are stamped by the observer: the first snapshot that
 * sees a unit's state word (its state and its count of finished turns)
 * writes the time beside it, and a later one that sees the same word keeps
 * it (sc_exec_now_ns). Reading a clock twice per turn was a third of a
 * turn's cost; this way the hot path reads none and stamps nothing, and an
 * age computed from a snapshot is short by at most one snapshot period
 * (never long, so a watchdog never reports early, at worst one period
 * late).
 *
 * The same code is driven by the pool (runtime/pool.h, real threads: each
 * worker runs sc_exec_work) and by the seeded scheduler (runtime/sim.h, one
 * thread, any order: it chooses which worker claims, and when and from
 * whom a steal happens).
 */
#ifndef SC_RUNTIME_EXECUTOR_H
#define SC_RUNTIME_EXECUTOR_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/panic.h"
#include "runtime/unit.h"

struct sc_exec;

enum sc_unit_state {
	SC_UNIT_IDLE = 0,
	SC_UNIT_QUEUED = 1,
	SC_UNIT_RUNNING = 2,
	SC_UNIT_RUNNING_KICKED = 3,
	SC_UNIT_DEAD = 4,
};

/* "IDLE", "QUEUED", "RUNNING", "RUNNING+KICKED", "DEAD" (static). */
const char *sc_unit_state_name(enum sc_unit_state s);

/* Which executor (see the top of this file). */
enum sc_exec_kind {
	SC_EXEC_DEFAULT = 0, /* $SC_EXECUTOR ("queue" or "steal") when set,
				else SC_EXEC_STEAL */
	SC_EXEC_QUEUE = 1,   /* one FIFO queue under one mutex (the
				reference) */
	SC_EXEC_STEAL = 2,   /* per-worker queues, injection queue, stealing,
				next slot */
};

/* "queue", "steal" (static); "default" for SC_EXEC_DEFAULT, "?" else. */
const char *sc_exec_kind_name(enum sc_exec_kind k);

/*
 * sc_exec_kind_parse - the kind named `name` ("queue", "steal" or
 * "default") into *out. Returns 0 or SC_EINVAL.
 */
int sc_exec_kind_parse(const char *name, enum sc_exec_kind *out);

struct sc_exec_opts {
	uint32_t capacity;	/* most units it can hold; 0 means 1024 */
	uint32_t spin;		/* polls of the queues before a worker parks;
				   0 means the default (a few microseconds) */
	enum sc_exec_kind kind; /* SC_EXEC_DEFAULT: see above */
	uint32_t workers;	/* STEAL: per-worker queues, for workers
				   0..workers-1 (a worker of a higher index
				   uses the injection queue); 0 means 64 */
};

/*
 * A claimed unit, on the claimer's storage. Between sc_exec_claim and
 * sc_exec_finish (or the abandon inside sc_exec_run) the claimer owns
 * `unit`. Initialise with sc_claim_init, release with sc_claim_fini.
 */
struct sc_claim {
	uint32_t id;	      /* the unit's id */
	struct sc_unit *unit; /* the unit, or NULL when nothing is held */
	int32_t worker;	      /* who claimed it (-1: host or sim) */
	struct sc_turn turn;  /* what the turn returned (set by run) */
	uint32_t *nbrs;	      /* neighbours the turn named (set by run) */
	size_t n_nbrs;	      /* how many ids in nbrs */
	size_t cap_nbrs;      /* room in nbrs; grown as needed */
	bool ran;	      /* sc_exec_run completed the turn */
};

/* Snapshot of one unit (sc_exec_snapshot). */
struct sc_exec_unit_info {
	uint32_t id;
	char name[SC_UNIT_NAME_MAX];
	enum sc_unit_state state;
	uint64_t queued_since_ns;  /* since when it is QUEUED, as first seen
				      by a snapshot (sc_exec_now_ns clock,
				      see above); 0 unless QUEUED */
	uint64_t running_since_ns; /* the same for RUNNING*; 0 unless so */
	int32_t worker;		   /* worker holding it; -1 unless RUNNING* */
	uint64_t turns;	   /* turns finished (including a panicked one) */
	uint64_t kicks;	   /* kicks received while alive */
	uint64_t progress; /* frames moved, summed over turns */
	bool has_pending;  /* ops->has_pending now; false when DEAD */
};

/* Executor-wide figures (sc_exec_info). */
struct sc_exec_info {
	uint32_t units;		 /* units added */
	uint32_t workers_live;	 /* worker threads inside their loop */
	uint32_t running;	 /* units claimed and not yet handed back */
	uint32_t queue_len;	 /* units QUEUED */
	uint64_t turns_finished; /* all turns handed back or abandoned */
	uint32_t panics;	 /* panics recorded */
	bool idle;		 /* queue empty and nothing running */
	bool shutdown;		 /* sc_exec_shutdown was called */
};

/*
 * sc_exec_create - a new executor with no units. opts may be NULL.
 * Returns 0 and *out, or SC_EINVAL / SC_ENOMEM.
 */
int sc_exec_create(const struct sc_exec_opts *opts, struct sc_exec **out);

/* The kind ex was created as (never SC_EXEC_DEFAULT). */
enum sc_exec_kind sc_exec_kind_of(const struct sc_exec *ex);

/*
 * sc_exec_destroy - destroy every live unit and free the executor. Returns
 * SC_EBUSY (and changes nothing) while a worker is live or a unit is
 * claimed; 0 otherwise. NULL is a no-op. No other call may race with it.
 */
int sc_exec_destroy(struct sc_exec *ex);

/*
 * sc_exec_add - register a unit; ids are given in order from 0. The
 * executor owns the unit from now on (destroy). The unit starts IDLE.
 * Returns 0 and *id, or SC_EINVAL (NULL, ops incomplete), SC_EFULL (at
 * capacity) or SC_ESHUTDOWN. Any thread.
 */
int sc_exec_add(struct sc_exec *ex, struct sc_unit *unit, uint32_t *id);

/*
 * sc_exec_kick - mark unit `id` runnable: IDLE -> QUEUED (and wake a
 * parked worker); QUEUED stays (coalesces); RUNNING -> RUNNING_KICKED;
 * DEAD ignores it (returns 0). Returns SC_ENOENT for an id that was never
 * added, checked before any lock is taken; SC_ESHUTDOWN after shutdown.
 * Any thread.
 */
int sc_exec_kick(struct sc_exec *ex, uint32_t id);

/*
 * sc_exec_claim - take a queued unit into *c (RUNNING), without blocking.
 * QUEUE: the front of the queue. STEAL: for worker w (0 <= w < workers),
 * the front of its own queue (the injection queue's front instead, one
 * claim in SC_EXEC_INJECT_EVERY), else the injection queue's front, else
 * the front of another worker's queue (a steal, victims in index order
 * from w + 1); for -1 (the host, the sim's free choice) the injection
 * queue, then the workers' queues. Returns 0, SC_EEMPTY when nothing is
 * queued, or SC_ESHUTDOWN. `worker` is recorded for introspection (-1 for
 * none). STEAL pushes only to the ring of the thread's own worker (a pool
 * worker's, or, while no pool runs, any the one driving thread names, as
 * the sim does); a claim, or its finish, that names another worker's
 * index uses the injection queue instead. *c must be initialised and hold
 * nothing.
 */
int sc_exec_claim(struct sc_exec *ex, int32_t worker, struct sc_claim *c);

/*
 * sc_exec_steal - STEAL: for worker `thief` (or -1), take the front unit
 * of worker `victim`'s queue into *c (RUNNING), as a steal of the pool
 * does: the sim uses it to choose when a steal happens and from whom.
 * Returns 0; SC_EEMPTY when that queue is empty (always, for QUEUE, which
 * has no per-worker queues); SC_ESHUTDOWN; SC_EINVAL (victim out of
 * range, NULL, or c holds a unit).
 */
int sc_exec_steal(struct sc_exec *ex, int32_t thief, int32_t victim,
		  struct sc_claim *c);

/*
 * sc_exec_queued - how many units wait in worker w's queue (STEAL), or in
 * the injection queue (w = -1; for QUEUE, the one queue; other w: 0).
 * A moment's figure, read without a lock.
 */
uint32_t sc_exec_queued(struct sc_exec *ex, int32_t w);

/*
 * sc_exec_claim_blocking - as sc_exec_claim, but waits (spins briefly, then
 * parks) until a unit is queued. Returns 0, or SC_ESHUTDOWN as soon as
 * shutdown is set (then *c holds nothing). A spurious wake-up never makes it
 * return without a unit.
 */
int sc_exec_claim_blocking(struct sc_exec *ex, int32_t worker,
			   struct sc_claim *c);

/*
 * sc_exec_run - run the claimed unit's turn with `budget` (unit.h, The
 * budget; 0: SC_UNIT_BUDGET_DEFAULT), then ask
 * it for its neighbours, both under a panic guard, with no lock held. On
 * success returns 0 with c->turn and c->nbrs set; the caller must then
 * sc_exec_finish (it may wait first: the sim holds run units). If the turn
 * or neighbours panicked, or named a unit that does not exist, or the turn
 * was condemned (sc_exec_condemn) before it returned, the unit is
 * abandoned here (see sc_exec_abandon) and SC_EPANIC is returned, with
 * nothing held; the abandon kicks the unit's peers, and a condemned turn's
 * neighbours too. Called by the claim's owner only.
 */
int sc_exec_run(struct sc_exec *ex, struct sc_claim *c, uint32_t budget);

/*
 * sc_exec_finish - hand back a unit after its turn: queue it again behind
 * the waiting units if its turn said more or it was kicked while running,
 * else IDLE; then kick every neighbour in c->nbrs. After shutdown it goes
 * IDLE and nothing is kicked. Returns 0 (c then holds nothing) or
 * SC_EINVAL if c holds nothing or was not run.
 */
int sc_exec_finish(struct sc_exec *ex, struct sc_claim *c);

/*
 * sc_exec_finish_claim - sc_exec_finish, then (in the same critical
 * section) claim the front unit into the same *c if one is queued: a busy
 * worker pays one lock per turn instead of two. Returns 0 with a new unit
 * in *c; SC_EEMPTY (nothing queued) or SC_ESHUTDOWN with *c holding
 * nothing, the finish done in every case; SC_EINVAL as sc_exec_finish.
 */
int sc_exec_finish_claim(struct sc_exec *ex, struct sc_claim *c,
			 int32_t worker);

/*
 * sc_exec_work - a worker's loop: claim (blocking), run with `budget`
 * (0: SC_UNIT_BUDGET_DEFAULT), finish and claim the next in one critical
 * section, until the executor is shut down. What sc_exec_claim_blocking,
 * sc_exec_run and sc_exec_finish_claim do one by one, with one panic guard set
 * up for the whole loop instead of one per turn (a panic still kills only the
 * unit whose turn it interrupted). The pool's workers run it; it allocates
 * nothing itself. Returns 0 after shutdown, SC_EINVAL for a NULL ex.
 */
int sc_exec_work(struct sc_exec *ex, int32_t worker, uint32_t budget);

/*
 * sc_exec_abandon - the claimed unit panicked: it becomes DEAD (never run
 * or kicked again), `rec` is recorded (its unit, name and worker fields are
 * filled here), its peers are asked (unit.h), its destroy runs inside a
 * panic guard (a panic there is recorded too, with in_destroy set), then
 * every peer and every id already in c->nbrs (the neighbours of a turn
 * that returned) is kicked, unless the executor is shut down, and the
 * claim is released. Returns 0, or SC_EINVAL if c holds nothing.
 * sc_exec_run calls it; a caller that runs turns itself may too.
 */
int sc_exec_abandon(struct sc_exec *ex, struct sc_claim *c,
		    const struct sc_panic_record *rec);

/*
 * sc_exec_revive - bring dead unit `id` back: `unit` (a new one; the
 * executor owns it from now on, as after sc_exec_add) takes the dead
 * one's slot and id, IDLE (DEAD -> IDLE, the only way out of DEAD; not
 * kicked: the caller kicks it when it should run). The slot's panics,
 * turn and kick counts stay. For a supervisor that rebuilds dead units
 * (units/runtime.h, "Restarts"). Returns
 *   0             revived;
 *   SC_ESTATE     the unit is not dead;
 *   SC_EBUSY      a turn is in flight (a dying unit counts as running
 *                 until its abandon is over, so the old unit may not be
 *                 gone yet): call it when nothing runs;
 *   SC_ENOENT     no such id; SC_ESHUTDOWN after shutdown;
 *   SC_EINVAL     NULL, or the unit's ops are incomplete.
 * Any thread; takes the lock briefly.
 */
int sc_exec_revive(struct sc_exec *ex, uint32_t id, struct sc_unit *unit);

/*
 * sc_exec_condemn - condemn unit id's turn number turns + 1: the turn it
 * is running while it has finished `turns` turns (sc_exec_unit_info.turns
 * while it is RUNNING). When that turn returns, sc_exec_run abandons the
 * unit instead of handing its result back: it becomes DEAD, a panic is
 * recorded {unit, name, worker, message = why (copied, truncated to
 * SC_PANIC_MSG_MAX - 1)}, its destroy runs inside a panic guard, the
 * neighbours its turn named and its peers are kicked, and every other unit
 * goes on. A turn cannot be stopped from outside: one that never returns
 * is never killed. Returns 0 (also when that turn was already condemned:
 * the first words stand; or when it panicked on its own meanwhile: it dies
 * with its own message); SC_ESTATE, changing nothing, when that turn has
 * already returned (or the unit is not running it: idle, queued, another turn,
 * dead), so a late report can never kill the next turn; SC_ENOENT for an
 * id never added (checked before any lock); SC_EINVAL for a NULL ex or
 * why. Any thread, including a watchdog's; takes the lock briefly.
 */
int sc_exec_condemn(struct sc_exec *ex, uint32_t id, uint64_t turns,
		    const char *why);

/*
 * sc_exec_wait_idle - wait until the queue is empty and nothing is running
 * (timeout_ns 0: for ever; a huge one saturates, never wraps into the
 * past). Returns
 *   0             idle, no unit ever panicked;
 *   SC_EPANIC     idle, with the first panic in *first (if not NULL);
 *   SC_ETIMEDOUT  still busy at the deadline;
 *   SC_ESTATE     called from inside a turn (sc_exec_in_turn): it would
 *                 wait for its own turn to end, so it refuses at once;
 *   SC_EINVAL     ex is NULL.
 */
int sc_exec_wait_idle(struct sc_exec *ex, uint64_t timeout_ns,
		      struct sc_panic_record *first);

/*
 * sc_exec_shutdown - stop: discard everything queued (those units go
 * IDLE), refuse kicks and claims from now on, wake every parked worker.
 * Running units finish normally and go IDLE. Idempotent; any thread.
 */
void sc_exec_shutdown(struct sc_exec *ex);

/* Whether sc_exec_shutdown was called. */
bool sc_exec_is_shutdown(const struct sc_exec *ex);

/*
 * sc_exec_in_turn - whether this thread is inside a turn of a unit of ex
 * (NULL: of any executor) now: in sc_exec_run (the turn, the callbacks it
 * makes, its neighbours call), on a worker or on a host thread that drives
 * turns itself, or in a dying unit's peers and destroy (sc_exec_abandon).
 * Thread-local marks, pushed and popped around each of those (nested
 * turns of several executors included). The calls that wait for ex's
 * turns to end (sc_exec_wait_idle, sc_pool_finish, sc_pool_destroy, the
 * runtime's wait_idle, submit_wait and shutdown) check it and return
 * SC_ESTATE instead of waiting for the caller's own turn for ever.
 */
bool sc_exec_in_turn(const struct sc_exec *ex);

/*
 * sc_exec_panic - copy panic number i (0 = the first) into *out. Returns 0
 * or SC_ENOENT. Only the first 64 panics are kept; info.panics counts all.
 */
int sc_exec_panic(struct sc_exec *ex, uint32_t i, struct sc_panic_record *out);

/*
 * sc_exec_worker_enter / _leave - a worker thread counts itself in and out
 * (sc_exec_info.workers_live), so a worker that leaves its loop shows.
 */
void sc_exec_worker_enter(struct sc_exec *ex);
void sc_exec_worker_leave(struct sc_exec *ex);

/* sc_exec_info - executor-wide figures, consistent with each other. */
void sc_exec_info(struct sc_exec *ex, struct sc_exec_info *out);

/*
 * sc_exec_snapshot - one consistent picture of every unit (taken under the
 * lock): writes min(units, max) entries into out, in id order, and returns
 * the number of units. Any thread.
 */
size_t sc_exec_snapshot(struct sc_exec *ex, struct sc_exec_unit_info *out,
			size_t max);

/* sc_exec_unit_state - unit id's state now, or SC_ENOENT. */
int sc_exec_unit_state(struct sc_exec *ex, uint32_t id);

/* The clock of queued_since_ns/running_since_ns: coarse monotonic ns. */
uint64_t sc_exec_now_ns(void);

/* sc_claim_init / sc_claim_fini - claimer storage (fini frees nbrs). */
void sc_claim_init(struct sc_claim *c);
void sc_claim_fini(struct sc_claim *c);

#ifdef __cplusplus
}
#endif

#endif /* SC_RUNTIME_EXECUTOR_H */
