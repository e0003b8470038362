/*
 * settle.h - the settle check as a library call: does a placed circuit
 * settle exactly where the single circuit does?
 *
 * The settle property (runtime.h): for a graph whose operators are
 * functions of their input's integral, whatever the placement, the number
 * of workers and the order of turns, once the placed runtime is idle every
 * output's integral equals the single, unplaced circuit's after the same
 * submissions. This module checks one case of it:
 *
 *   work    a graph and a list of host submissions (input node, batch),
 *           given as an array or produced by a generator callback (a
 *           workload in bench/workloads/ provides one), with the single
 *           circuit's integral of every output after all of them, one
 *           step per submission (the reference);
 *   run     the same submissions into a runtime of a placement, under a
 *           schedule: the seeded scheduler (runtime/sim.h) holding up to
 *           N units at once, with the host's submissions arriving between
 *           any two events, or a real pool of N workers fed by H host
 *           threads at once; with a budget, an edge capacity and an
 *           outbox bound. At idle it checks the idle invariant
 *           (sc_runtime_check_idle), then compares every output's integral
 *           with the reference (materialized outputs only: a stream
 *           output, graph.h, keeps no integral to compare).
 *
 * The result names the first output that differs (by node name) and the
 * rows on which the two integrals disagree, with both weights; the
 * schedule's statistics (turns, kicks that landed on running units,
 * submits refused as full); and a replay: the caller's command line when it
 * gave one (`subcirc stress ...`), else the C call with every parameter.
 * Same work, placement and options (seed included): same run, same result,
 * under the seeded scheduler (the sim's trace hash says so).
 *
 * Why a work object. The reference costs one single-circuit run; a test
 * that checks many placements and schedules of the same submissions
 * computes it once. It also lets the reference be fed different
 * submissions (sc_settle_work_reference), which is how a test plants a
 * difference to see the check catch it.
 *
 * Injected faults (SC_SETTLE_FAULTS). With a graph whose callbacks fail on
 * purpose (bench/workloads/grid.h's fault_rate), a unit may panic: then a
 * submit may meet a dead unit (SC_EDEAD, counted), the run must report the
 * panic at shutdown, and the integrals cannot be compared (the dead unit's
 * part is lost). The single circuit may fail too (SC_ECALLBACK); the
 * comparison is then left to opts.verify.
 *
 * Faults injected by the run (sc_settle_opts.fault, one kind per run).
 * The run installs a delta callback (sc_runtime_on_delta) on one node of
 * the fault's unit (its first node that is not an input, else its first)
 * and counts the steps of that unit in which the node's delta was not
 * empty, over all its replicas; at step `at`:
 *   PANIC   the callback fails (SC_ECALLBACK): the unit panics;
 *   SEGV    the callback writes to a PROT_NONE page, a real SIGSEGV, with
 *           catch_faults on (pool workers; the sim's thread enables it
 *           itself, sc_panic_catch_faults): the unit panics;
 *   STALL   the callback sleeps 5 times the stall threshold; a watchdog
 *           (runtime/watchdog.h) the run starts must report the stall;
 * and, for the whole run:
 *   SLOW    every consumer takes one frame per turn (budget 1) over edges
 *           of capacity 1;
 *   BURST   pool: at least 4 host threads, released at once by one flag,
 *           submit everything; sim: the host submits all it can per event.
 * The reference stays the unfaulted single circuit. With a dead unit, the
 * outputs it feeds (sc_runtime_upstream_dead) are not compared; every
 * other output must still equal the reference.
 *
 * ALLOC fails the `at`-th allocation of the process from the first
 * submit to the end of the run (the reference is computed before, and
 * the comparison after). The library does not own the allocator, so it
 * cannot fail one itself: a program that can (the `subcirc` CLI links
 * itself with ld --wrap, tools/cli_alloc.c) installs a hook with
 * sc_settle_alloc_hook_set, process-wide as the allocator is. Without
 * one, ALLOC is refused by name (SC_EINVAL). The run must then end in
 * success, a unit panic (counted as usual), or SC_ENOMEM from a submit
 * or the scheduler (res->ok false, res->error SC_ENOMEM: the integrals
 * are not compared then, a submission having been refused; the caller
 * judges it, as `subcirc stress` does), with no frame lost and no hang.
 * res->injected[ALLOC] says whether the hook failed an allocation.
 *
 * Restarts (sc_settle_opts.restart, units/runtime.h "Restarts"). With a
 * policy, a unit the fault kills is rebuilt, and the run must settle
 * where the single circuit does with no exception for dead units: every
 * output is compared, and one still downstream of a dead unit fails the
 * run unless the rate bound gave that unit up (res->stats.given_up).
 * The sim rebuilds whenever its host finds the runtime idle
 * (sc_runtime_restart) and, once settled, rebuilds and runs again (the
 * next round's seed drawn from the seed) until nothing more comes back;
 * the pool rebuilds in its wait for idle.
 *
 * What a run counts (the result): faults that actually happened, by kind
 * (a fault whose step never comes is not counted); stalls the watchdog
 * reported; outputs compared and outputs skipped as downstream of a dead
 * unit; a hang (the sim's max_steps or the pool's timeout ran out); and
 * frames lost. The runtime accounts for every frame sent
 * (sc_runtime_stats): delivered (a consumer's poll took it), undeliverable
 * (a dead unit's close drained it from a ring or refused it), or still in
 * a ring. After shutdown the runtime is idle, so nothing in a live unit's
 * ring will ever be taken, and frames_lost is exact:
 *   frames_sent - frames_delivered - frames_undeliverable - pending_closed
 * where pending_closed counts the frames still in dead units' rings
 * (undeliverable, released at destroy). It is 0 in every correct run,
 * with or without dead units; a frame stranded before a live consumer (a
 * lost kick) or gone from a ring uncounted makes it positive, and so
 * fails the run. It is counted whenever the run ends quiet (no turn runs
 * or waits), after an earlier failure too; not after a hang. An outbox is
 * rows, not frames, until flushed (units/edge.h); one still waiting at the
 * end fails the idle check.
 *
 * Tick mode (SC_SETTLE_TICKS, a flag of the work). The work's steps may
 * then be tick boundaries: a step {SC_SETTLE_TICK, NULL} closes the open
 * host tick, as sc_runtime_tick does (units/runtime.h, "Host ticks"), so
 * host tick t holds the submissions between the t-th boundary and the
 * next, and a boundary right after another is an empty tick. A marker
 * step, not a field of every step, because a boundary carries no batch
 * and ticks are a property of the sequence, not of a submission; a
 * non-empty trailing tick gets its boundary appended by create and
 * generate (the work's steps count it), so the sim's host closes it too.
 * The reference is then the single circuit stepped once per tick (fed
 * exactly that tick's submissions): every output's delta at every tick,
 * and its integral after the last. A run builds the runtime with
 * opts.ticks, its host closes the ticks where the boundaries are
 * (sc_runtime_tick_try from the sim's host events, an SC_EFULL counted as
 * a refused submit; sc_runtime_tick from a pool's host 0, the other host
 * threads splitting each tick's submissions and meeting host 0 at a
 * barrier on both sides of every close), a delta callback
 * (sc_runtime_on_delta) on every compared output sums what each step
 * reports at its tick (sc_runtime_delta_tick; a sharded output's replicas
 * add up), and at idle every output's delta at every tick must equal the
 * reference's (a missing delta equals an empty one), before the integrals
 * are compared as usual. The first (tick, output) that differs is
 * reported: res->tick, res->output and res->diff as for an integral. The
 * callbacks own the outputs' delta hooks, so tick works take no fault of
 * a callback (PANIC, SEGV, STALL) nor ALLOC, and no SC_SETTLE_FAULTS (a
 * dead unit would leave its ticks partial): those are refused
 * (SC_EINVAL); SLOW and BURST work. Restarts are refused by the runtime
 * in tick mode (sc_settle_run then returns create's error).
 *
 * Ownership. The work holds its own references to the batches and borrows
 * the graph (which must outlive it). A result is caller storage filled by
 * sc_settle_run; sc_settle_result_fini frees what it holds.
 *
 * Threads. One host thread calls these; sc_settle_run starts and joins the
 * pool's workers and host threads itself.
 */
#ifndef SC_UNITS_SETTLE_H
#define SC_UNITS_SETTLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "operators/batch.h"
#include "operators/error.h"
#include "operators/graph.h"
#include "runtime/executor.h"
#include "runtime/sim.h"
#include "units/placement.h"
#include "units/runtime.h"
#include "units/settle_step.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Flags of a work. */
#define SC_SETTLE_FAULTS 1u /* the graph's callbacks fail on purpose */
#define SC_SETTLE_TICKS	 2u /* tick mode: steps may be tick boundaries */

/* The most outputs a work compares, and host threads of a pool run. */
#define SC_SETTLE_MAX_OUTPUTS 64
#define SC_SETTLE_MAX_HOSTS   16

/* How many differing rows a result keeps (it counts them all). */
#define SC_SETTLE_MAX_DIFF 16

struct sc_settle_work;

/*
 * sc_settle_work_create - the work of graph g and submissions steps[0..n)
 * (each batch retained), with the single circuit's integrals as the
 * reference. flags: 0 or SC_SETTLE_FAULTS. Returns:
 *   0            *out is the work
 *   SC_EINVAL    NULL g or out, NULL steps with n > 0, a NULL batch
 *                (but a tick work's boundary), a boundary in a work
 *                without SC_SETTLE_TICKS, unknown flags, both FAULTS and
 *                TICKS, more than SC_SETTLE_MAX_OUTPUTS outputs
 *   SC_ENOMEM
 *   other        an error of the single circuit (create, feed, step:
 *                e.g. SC_ESCHEMA for a batch of the wrong width, or
 *                SC_ECALLBACK without SC_SETTLE_FAULTS)
 * Nothing is left on failure.
 */
int sc_settle_work_create(struct sc_graph *g,
			  const struct sc_settle_step *steps, size_t n,
			  unsigned flags, struct sc_settle_work **out);

/*
 * sc_settle_work_generate - as create, with the n submissions produced by
 * gen(ctx, i, ...) for i = 0 .. n-1 in order (in a tick work gen may give
 * a boundary, {SC_SETTLE_TICK, NULL}). Returns what create does, or the
 * first error gen returns.
 */
int sc_settle_work_generate(struct sc_graph *g, sc_settle_gen_fn gen, void *ctx,
			    size_t n, unsigned flags,
			    struct sc_settle_work **out);

/*
 * sc_settle_work_reference - recompute the reference from the single
 * circuit fed steps[0..n) instead of the work's own submissions (which the
 * runs keep submitting). For a planted difference, or a reference the
 * caller trusts more; in a tick work, per tick of steps' boundaries (a
 * trailing tick without one is stepped too), e.g. one boundary more at
 * the front shifts the reference by a tick. Returns:
 *   0            the new reference is in place
 *   SC_EINVAL    NULL w, NULL steps with n > 0, a NULL batch (as create)
 *   SC_ENOMEM, or an error of the single circuit: the old reference stays
 */
int sc_settle_work_reference(struct sc_settle_work *w,
			     const struct sc_settle_step *steps, size_t n);

/* sc_settle_work_destroy - release the batches and the reference. NULL is
 * allowed. */
void sc_settle_work_destroy(struct sc_settle_work *w);

/* sc_settle_work_step - submission i of w (its batch borrowed from w).
 * Returns 0, or SC_EINVAL for NULL or i out of range. */
int sc_settle_work_step(const struct sc_settle_work *w, size_t i,
			struct sc_settle_step *out);

/* The work's graph, its submissions (a tick work's boundaries counted),
 * and the outputs it compares: the materialized outputs' node ids, in id
 * order, the first `max` of them written to ids (NULL when max is 0);
 * returns how many there are, all of them, so a caller can size ids. */
struct sc_graph *sc_settle_work_graph(const struct sc_settle_work *w);
size_t sc_settle_work_steps(const struct sc_settle_work *w);
size_t sc_settle_work_outputs(const struct sc_settle_work *w, int *ids,
			      size_t max);

/* The schedule. */
enum sc_settle_mode {
	SC_SETTLE_SIM = 0,  /* the seeded scheduler, one thread */
	SC_SETTLE_POOL = 1, /* a real pool of worker threads */
};

/*
 * sc_settle_verify_fn - an extra check of output `output`'s placed
 * integral `got` (e.g. against a from-scratch reference). Returns 0, or a
 * negative code with sc_errmsg() saying why: the run then fails with it.
 */
typedef int (*sc_settle_verify_fn)(void *ctx, int output,
				   const struct sc_batch *got);

/* The kinds of injected faults (see the top of this file). */
enum sc_settle_fault_kind {
	SC_SETTLE_FAULT_NONE = 0,
	SC_SETTLE_FAULT_PANIC = 1, /* a callback error at step `at` */
	SC_SETTLE_FAULT_SEGV = 2,  /* a SIGSEGV in the callback at step `at` */
	SC_SETTLE_FAULT_STALL = 3, /* a sleep past the stall threshold */
	SC_SETTLE_FAULT_SLOW = 4,  /* budget 1, edge capacity 1 */
	SC_SETTLE_FAULT_BURST = 5, /* host submits all at once */
	SC_SETTLE_FAULT_ALLOC = 6, /* the `at`-th allocation fails (a hook) */
	SC_SETTLE_FAULT_KINDS = 7, /* how many kinds there are */
};

/* "none", "panic", "segv", "stall", "slow", "burst", "alloc" (static);
 * "?" for an unknown kind. */
const char *sc_settle_fault_name(enum sc_settle_fault_kind k);

/*
 * sc_settle_fault_parse - the kind named `name` (as above) into *out.
 * Returns:
 *   0            *out is the kind
 *   SC_EINVAL    an unknown name, or "alloc" with no allocation hook
 *                installed (sc_errmsg() says so)
 */
int sc_settle_fault_parse(const char *name, enum sc_settle_fault_kind *out);

/* How a program that owns its allocator fails one allocation on purpose. */
struct sc_settle_alloc_hook {
	/* from now on, fail the nth allocation (from 1) of any thread */
	void (*arm)(void *ctx, uint64_t nth);
	/* stop failing; true when an allocation failed since arm */
	bool (*disarm)(void *ctx);
	void *ctx;
};

/*
 * sc_settle_alloc_hook_set - install *h (copied) as the hook of ALLOC
 * faults for the whole process; NULL removes it. Call it before any run,
 * from the host thread (not while a run is in progress).
 */
void sc_settle_alloc_hook_set(const struct sc_settle_alloc_hook *h);

/* One injected fault. */
struct sc_settle_fault {
	enum sc_settle_fault_kind kind;
	int32_t unit;	   /* PANIC, SEGV, STALL: the placement's unit; -1:
			      drawn from opts.seed */
	uint64_t at;	   /* its step that faults, from 1; 0 means 1 */
	uint64_t stall_ns; /* STALL: the watchdog's threshold; 0: 20 ms */
};

struct sc_settle_opts {
	enum sc_settle_mode mode;
	uint64_t seed;		    /* sim: chooses the order of events */
	uint32_t units;		    /* sim: units held at once; pool: worker
				       threads; 1..64 (0 means 1) */
	uint32_t hosts;		    /* pool: host threads submitting at once,
				       0..SC_SETTLE_MAX_HOSTS (0 means 1) */
	uint32_t budget;	    /* frames per turn; 0: sim draws 1..4 per
				       turn, the pool takes the runtime's */
	uint32_t edge_capacity;	    /* frames, a power of two; 0: default */
	size_t outbox_bound;	    /* rows; 0: the runtime's default */
	uint64_t max_steps;	    /* sim: events before giving up; 0: 2e6 */
	uint64_t timeout_ns;	    /* pool: each blocking submit and the wait
				       for idle; 0: 10 s */
	sc_settle_verify_fn verify; /* NULL: none */
	void *verify_ctx;
	/* pool: called with the executor once the runtime is built and
	 * before the first submit (e.g. to start a watchdog); its return is
	 * handed to guard_end after the wait for idle. NULL: none. */
	void *(*guard_begin)(void *ctx, struct sc_exec *ex);
	void (*guard_end)(void *ctx, void *guard);
	void *guard_ctx;
	/* The command that replays this case (copied into the result), e.g.
	 * "subcirc stress --seeds 7 --workers 2 --placements chains
	 * --workloads grid"; NULL: the result's replay is the C call. */
	const char *replay;
	struct sc_settle_fault fault;	  /* kind NONE: no fault */
	struct sc_restart_policy restart; /* every unit's (kind NONE: no
					     restarts; see above) */
	enum sc_exec_kind executor;	  /* the runtime's executor; DEFAULT:
					     $SC_EXECUTOR, else STEAL (the
					     settle tests run on both) */
	bool no_cleanup; /* the placed run keeps every state (sc_runtime_opts
			    no_cleanup); the reference, the single circuit,
			    always does, so a graph with lateness settles
			    with cleanup on and off to the same integral */
};

/* One row on which the placed and the single integral disagree. */
struct sc_settle_diff {
	const uint64_t
	    *row;	/* the row's words, in res->placed or res->single */
	int64_t placed; /* its weight in the placed integral */
	int64_t single; /* its weight in the reference; 0: absent */
};

/* What a run found. */
struct sc_settle_result {
	bool ok;		 /* settled, idle invariant held, all equal */
	int error;		 /* 0, or the code of what failed */
	char why[640];		 /* when !ok: what failed, by name */
	char replay[768];	 /* the command or C call that replays it */
	int output;		 /* the first output that differs, or -1 */
	char output_name[128];	 /* its node name ("" when none) */
	struct sc_batch *placed; /* its placed integral (owned), or NULL */
	struct sc_batch *single; /* its reference integral (owned) */
	struct sc_settle_diff diff[SC_SETTLE_MAX_DIFF]; /* first rows */
	size_t ndiff;					/* rows in diff[] */
	size_t ndiff_total; /* rows that differ, all of them */
	/* the schedule */
	struct sc_sim_result sim;      /* sim: the scheduler's statistics */
	uint64_t submits;	       /* submissions accepted */
	uint64_t submits_full;	       /* sim: submits refused as full */
	uint64_t submits_dead;	       /* submits refused by a dead unit */
	bool panicked;		       /* a unit panicked (faults only) */
	bool single_failed;	       /* the reference hit a fault */
	struct sc_runtime_stats stats; /* the runtime's, at the end */
	/* faults and what the checks counted */
	uint32_t injected[SC_SETTLE_FAULT_KINDS]; /* faults that happened */
	int32_t fault_unit;	   /* the unit the fault hit, or -1 */
	int fault_node;		   /* the node its callback watched, or -1 */
	uint64_t stalls_reported;  /* the watchdog's STALL reports */
	uint32_t outputs_compared; /* outputs checked against the reference */
	uint32_t outputs_dead;	   /* skipped: downstream of a dead unit */
	uint32_t restarts;	   /* units rebuilt (= stats.restarts) */
	uint64_t frames_lost;	   /* see the top of this file; must be 0 */
	bool hung;		   /* max_steps or the timeout ran out */
	/* tick works (see Tick mode above) */
	uint64_t ticks_closed;	 /* host ticks the run closed */
	uint64_t ticks_compared; /* ticks whose every output's delta was
				    compared (all of them when ok) */
	uint64_t tick;		 /* the tick of the first difference, or
				    UINT64_MAX (an integral's, or none) */
};

/*
 * sc_settle_run - run work w under placement p (of w's graph) as opts
 * says, and compare. *res is filled in every case but SC_EINVAL (fini it
 * then too: it is zeroed first). Returns:
 *   0            the case ran to a verdict: res->ok says whether it
 *                settled where the single circuit does; when not,
 *                res->why, and for a difference res->output/_name and
 *                res->diff, say how
 *   SC_EINVAL    NULL w, p or res; units or hosts out of range; an
 *                unknown mode or fault kind; a fault unit out of the
 *                placement's units; ALLOC with no allocation hook; a
 *                callback or ALLOC fault with a tick work (res->why
 *                names it)
 *   other        the runtime could not be built (sc_runtime_create's
 *                error, e.g. SC_EINVAL for a loop across units), a host
 *                thread could not be started, or SC_ENOMEM; res->why
 *                says which
 */
int sc_settle_run(const struct sc_settle_work *w, const struct sc_placement *p,
		  const struct sc_settle_opts *opts,
		  struct sc_settle_result *res);

/* sc_settle_result_fini - release the result's batches. Idempotent. */
void sc_settle_result_fini(struct sc_settle_result *res);

/*
 * sc_settle_replay_call - the C call that replays opts on placement p into
 * buf (cut to len, NUL-terminated). Returns buf.
 */
const char *sc_settle_replay_call(const struct sc_placement *p,
				  const struct sc_settle_opts *opts, char *buf,
				  size_t len);

#ifdef __cplusplus
}
#endif

#endif /* SC_UNITS_SETTLE_H */
