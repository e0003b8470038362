/*
 * settle_int.h - the inside of the settle check (settle.h), shared by its
 * files. Library internal.
 *
 * One idea per file:
 *
 *   settle_work.c   the work: the submissions and the reference, the
 *                   single circuit's integrals (and per-tick deltas) after
 *                   them;
 *   settle.c        one run: its options, the runtime it builds, the
 *                   schedule that drives it (the seeded sim, or a pool
 *                   fed by host threads), and the verdict, as named steps;
 *   settle_fault.c  the faults a run injects (settle.h, "Faults injected
 *                   by the run") and the allocation hook;
 *   settle_check.c  what a run checks at idle and after: each output
 *                   against the reference (per tick in a tick work), the
 *                   idle invariant, the shutdown, the frames' accounting.
 *
 * Threads. The host thread that called sc_settle_run owns a run, but for
 * the fields its callbacks touch from workers: steps and fired (atomic),
 * and got, bad_rc, bad_tick, bad_node (under mu).
 */
#ifndef SC_UNITS_SETTLE_INT_H
#define SC_UNITS_SETTLE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/watchdog.h"
#include "units/settle.h"

/* A work (settle.h): its submissions and the reference. */
struct sc_settle_work {
	struct sc_graph *g;	      /* borrowed */
	struct sc_settle_step *steps; /* batches retained */
	size_t n;
	unsigned flags;
	int outputs[SC_SETTLE_MAX_OUTPUTS]; /* output nodes, id order */
	size_t nout;
	struct sc_batch *expect[SC_SETTLE_MAX_OUTPUTS]; /* the reference */
	bool single_failed; /* the reference hit an injected fault */
	/* tick works: the host ticks of steps[], and the reference's ticks
	 * and deltas, want[k * want_ticks + t] (NULL: empty) */
	size_t nticks;
	size_t want_ticks;
	struct sc_batch **want;
};

/* What a run shares between its drivers and its checks. */
struct sc__settle_run {
	const struct sc_settle_work *w;
	const struct sc_settle_opts *o;
	struct sc_settle_result *res;
	struct sc_runtime *rt;
	bool faults; /* SC_SETTLE_FAULTS, or an injected panic */
	/* the injected fault */
	enum sc_settle_fault_kind kind;
	uint64_t at;		/* the step that faults */
	uint64_t stall_ns;	/* STALL: the watchdog's threshold */
	_Atomic uint64_t steps; /* of the fault's unit, so far */
	atomic_uint fired;	/* the fault happened */
	void *page;		/* SEGV: a PROT_NONE page to write to */
	bool alloc_failed;	/* ALLOC: the hook failed an allocation */
	struct sc_watchdog *wd; /* STALL: the watchdog that must report */
	/* tick works: the deltas the outputs reported, got[k * nticks + t]
	 * (under mu: pool workers report at once) */
	bool ticks;
	pthread_mutex_t mu;
	struct sc_batch **got;
	int bad_rc;	   /* a sum failed, or a delta outside the ticks */
	uint64_t bad_tick; /* that delta's tick */
	int bad_node;
};

/* A tick work's boundary step. */
static inline bool
sc__settle_is_tick(const struct sc_settle_step *s)
{
	return s->input == SC_SETTLE_TICK && !s->batch;
}

/* The run rebuilds the units its faults kill (opts.restart). */
static inline bool
sc__settle_restarting(const struct sc__settle_run *r)
{
	return r->o->restart.kind != SC_RESTART_NONE &&
	       r->o->restart.max_restarts > 0;
}

/* --- settle.c: the run ---------------------------------------------------- */

/* sc__settle_fail - the run fails with `code` and the message; only the
 * first failure is kept (it is the one to report). */
void sc__settle_fail(struct sc__settle_run *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* sc__settle_submitted - a submit's code: true to go on. A dead unit is
 * expected (counted in *dead) only with injected faults; any other error
 * fails the run, naming submission i. */
bool sc__settle_submitted(struct sc__settle_run *r, int rc, size_t i,
			  uint64_t *dead);

/* --- settle_fault.c: injected faults -------------------------------------- */

/* sc__settle_alloc_hooked - an allocation hook is installed. */
bool sc__settle_alloc_hooked(void);

/* sc__settle_alloc_arm - the hook fails the nth allocation from now. */
void sc__settle_alloc_arm(uint64_t nth);

/* sc__settle_alloc_disarm - stop failing; true when one failed. */
bool sc__settle_alloc_disarm(void);

/* sc__settle_fault_in_callback - k is injected by a delta callback
 * (PANIC, SEGV, STALL). */
bool sc__settle_fault_in_callback(enum sc_settle_fault_kind k);

/* sc__settle_fault_arm - install the run's fault on placement p's unit
 * (its callback, page, watchdog). Returns 0 or an error; undo with
 * sc__settle_fault_disarm either way. */
int sc__settle_fault_arm(struct sc__settle_run *r,
			 const struct sc_placement *p);

/* sc__settle_fault_check - after the run: the fault happened as its kind
 * says (a panic reported, a stall seen), else the run fails. */
void sc__settle_fault_check(struct sc__settle_run *r);

/* sc__settle_fault_disarm - release what sc__settle_fault_arm made. */
void sc__settle_fault_disarm(struct sc__settle_run *r);

/* --- settle_check.c: the comparison --------------------------------------- */

/* sc__settle_ticks_arm - a tick work: sum what every compared output
 * reports per tick. Returns 0, SC_ENOMEM or sc_runtime_on_delta's error;
 * undo with sc__settle_ticks_disarm either way. */
int sc__settle_ticks_arm(struct sc__settle_run *r);

/* sc__settle_ticks_disarm - release the sums. */
void sc__settle_ticks_disarm(struct sc__settle_run *r);

/* sc__settle_check_idle - at idle: the idle invariant, then every output
 * (per tick in a tick work) against the reference. */
void sc__settle_check_idle(struct sc__settle_run *r);

/* sc__settle_check_shutdown - shut the runtime down: a panic is reported
 * exactly when one happened. */
void sc__settle_check_shutdown(struct sc__settle_run *r);

/* sc__settle_check_frames - after shutdown: no frame lost (settle.h). */
void sc__settle_check_frames(struct sc__settle_run *r);

/* sc__settle_runtime_quiet - no turn runs or waits: the frame accounting
 * is exact then. */
bool sc__settle_runtime_quiet(struct sc_runtime *rt);

#endif /* SC_UNITS_SETTLE_INT_H */
