/*
 * watchdog.h - a monitor thread that reports what a scheduler bug looks like
 * from outside: a stalled turn, a starved unit, a lost kick, a pool that
 * makes no progress.
 *
 * The watchdog never touches the executor's internals: every `period` its
 * thread takes sc_exec_info and sc_exec_snapshot (which lock the executor
 * briefly and call each unit's has_pending) and compares them with what it
 * saw before:
 *
 *   STALL        a unit RUNNING for longer than stall_ns (its turn is past
 *                its deadline);
 *   STARVATION   a unit QUEUED for longer than starve_ns;
 *   LOST_KICK    a unit IDLE whose has_pending() has said true, with its
 *                turn and kick counts unchanged, for lost_kick_ns: input
 *                that no kick announced. Always a bug (unit.h: a transient
 *                true is normal, hence the persistence);
 *   NO_PROGRESS  the executor not idle (something queued or running) and no
 *                turn finished anywhere for no_progress_ns;
 *   TIMEOUT      the watchdog has been watching for timeout_ns (an overall
 *                deadline, for tests; off by default). Reported once;
 *   FRONTIER     a unit not running whose next tick has waited for one
 *                input edge's frontier for frontier_ns (tick mode,
 *                units/runtime.h): the report names the tick, the edge and
 *                its frontier. Only with a waits hook (below).
 *
 * Each report names the unit (id and name), the worker holding it, how long
 * the condition has lasted and the turn and kick counts, and carries a dump
 * of the whole executor by unit name. Reports go to a callback (default: a
 * block on stderr) and are counted per kind, so a test can assert them.
 *
 * Rate limit: one report per (kind, unit) per rate_limit_ns; the ones in
 * between are counted as suppressed and the next report says how many. A
 * condition that persists is therefore reported again every rate_limit_ns
 * with its duration so far, never once per period.
 *
 * Trade-offs. A periodic snapshot costs one lock round trip per period and
 * misses anything shorter than a period. Its times are the executor's
 * coarse clock (1-4 ms ticks), stamped by the first snapshot that sees a
 * unit in its state (executor.h), so an age is short by up to one period:
 * a condition is reported between its threshold and about two periods
 * after it, never early, and thresholds below ~10 ms mean little. In
 * exchange the hot path (kick, claim, finish) pays nothing for being
 * watched (bench/bench_watchdog.c measures it).
 *
 * Frontiers. The executor knows nothing of ticks, so what a unit waits for
 * comes from opts.waits, a hook the layer that builds the units gives
 * (units/runtime.h, sc_runtime_waits): asked for every unit not DEAD nor
 * running at each check, it says which tick the unit cannot step yet and
 * on which edge. The monitor times the wait itself: a wait for the same
 * tick seen at every check for frontier_ns is reported, a later tick
 * starts the clock again, and a snapshot that catches the unit running
 * neither reports nor resets it (a running turn is the STALL check's).
 * So the units pay nothing for being watched but the words they publish
 * at the end of a turn.
 *
 * What a stalled turn does. The executor knows nothing of operators
 * either, so what a running turn is doing comes from opts.doing, a hook
 * in the spirit of waits (units/runtime.h, sc_runtime_doing): asked only
 * for a unit about to be reported as STALL, it says which operator the
 * turn is in and what it does there, "in 'count by col' (grow)", and
 * the report's message ends with it. The turn publishes that word with
 * one relaxed store at each phase boundary (operators/doing_int.h), so a
 * watched turn pays a store per operator, and the report is what the turn
 * was doing when the check looked: a long turn caught in a growth says
 * grow, though its step may have taken the time before.
 *
 * Policy: SC_WATCHDOG_REPORT only reports. SC_WATCHDOG_KILL_STALLED also
 * condemns a stalled turn, once per turn, through opts->condemn: the
 * executor is to abandon the unit (DEAD, a panic record) when that turn
 * returns. A turn cannot be stopped from outside, so the kill waits for it
 * to return; a turn that never returns stays reported as a stall. The
 * hook defaults to the executor's sc_exec_condemn, which abandons the unit
 * with the report's message as its panic message; a caller may pass its
 * own (opts.condemn) to do something else.
 *
 * Threads: create, destroy and the counters may be called from any thread
 * except the monitor itself (the callback must not destroy its watchdog).
 * The executor must outlive the watchdog.
 */
#ifndef SC_RUNTIME_WATCHDOG_H
#define SC_RUNTIME_WATCHDOG_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/executor.h"

struct sc_watchdog;

enum sc_watchdog_kind {
	SC_WATCHDOG_STALL = 0,
	SC_WATCHDOG_STARVATION = 1,
	SC_WATCHDOG_LOST_KICK = 2,
	SC_WATCHDOG_NO_PROGRESS = 3,
	SC_WATCHDOG_TIMEOUT = 4,
	SC_WATCHDOG_FRONTIER = 5,
	SC_WATCHDOG_KINDS = 6, /* how many kinds there are */
};

enum sc_watchdog_policy {
	SC_WATCHDOG_REPORT = 0,	      /* report only */
	SC_WATCHDOG_KILL_STALLED = 1, /* also condemn a stalled turn: the
					 unit dies when it returns (through
					 opts.condemn, by default
					 sc_exec_condemn) */
};

/*
 * The hook the kill policy calls, on the monitor thread (by default
 * sc_exec_condemn, with arg unused): condemn unit id's
 * running turn, the one that follows its `turns` finished turns (so a
 * stall seen late never condemns the next turn), so that it is abandoned
 * with the message `why` when it returns. Returns 0, or a negative SC_E*
 * code when that turn is no longer running (nothing then happens). Called
 * at most once per turn.
 */
typedef int (*sc_watchdog_condemn_fn)(struct sc_exec *ex, uint32_t id,
				      uint64_t turns, const char *why,
				      void *arg);

/* A threshold set to this turns that check off. */
#define SC_WATCHDOG_OFF UINT64_MAX

/* The unit of a report about the whole executor (NO_PROGRESS, TIMEOUT). */
#define SC_WATCHDOG_POOL UINT32_MAX

/* The longest edge name a wait carries (including the NUL). */
#define SC_WATCHDOG_EDGE_MAX 64

/* What a unit waits for (FRONTIER), as the waits hook says it. */
struct sc_watchdog_wait {
	uint64_t tick;			 /* the tick it cannot step yet */
	uint64_t frontier;		 /* the edge's frontier: every tick
					    below it is complete there */
	char edge[SC_WATCHDOG_EDGE_MAX]; /* the edge, by name ("u1.0 ->
					    u3.0") */
};

/*
 * The waits hook: whether unit `unit` waits for a frontier now, and if so
 * what for, into *out. Called on the monitor thread, for every unit that
 * is neither DEAD nor running at a check, concurrently with every turn:
 * it must read only what may be read so (atomics), take no lock a turn
 * may hold, and never block.
 */
typedef bool (*sc_watchdog_waits_fn)(void *arg, uint32_t unit,
				     struct sc_watchdog_wait *out);

/* The longest text a doing hook writes (including the NUL). */
#define SC_WATCHDOG_DOING_MAX 128

/*
 * The doing hook: what unit `unit`'s running turn is doing now, in words
 * ("in 'count by col' (grow)"), into buf (size bytes, NUL-terminated).
 * Returns whether it knows. Called on the monitor thread for a unit it
 * reports as STALL, concurrently with that turn: it must read only what
 * may be read so (atomics), take no lock a turn may hold, and never
 * block.
 */
typedef bool (*sc_watchdog_doing_fn)(void *arg, uint32_t unit, char *buf,
				     size_t size);

/* One report, valid only during the callback. */
struct sc_watchdog_report {
	enum sc_watchdog_kind kind;
	uint32_t unit;		     /* the unit's id, or SC_WATCHDOG_POOL */
	char name[SC_UNIT_NAME_MAX]; /* the unit's name, or "pool" */
	int32_t worker;		     /* the worker holding it; -1 for none */
	uint64_t duration_ns;	     /* how long the condition has lasted */
	uint64_t turns;		     /* the unit's turns finished; for the
					pool, all turns finished */
	uint64_t kicks;		     /* the unit's kicks; 0 for the pool */
	uint64_t suppressed;	     /* reports of this (kind, unit) dropped
					by the rate limit since the last one */
	const struct sc_watchdog_wait *wait; /* FRONTIER: what the unit
						waits for; else NULL */
	const char *doing;   /* STALL: what the turn does when seen (the
				doing hook), or NULL when not known */
	const char *message; /* one line: what is wrong, by name */
	const char *dump;    /* the executor's state, one line per
				unit (sc_watchdog_dump) */
};

typedef void (*sc_watchdog_report_fn)(const struct sc_watchdog_report *r,
				      void *arg);

struct sc_watchdog_opts {
	uint64_t period_ns;	 /* how often to look; 0 means 10 ms */
	uint64_t stall_ns;	 /* a turn's deadline; 0 means 1 s */
	uint64_t starve_ns;	 /* longest wait in the queue; 0 means 1 s */
	uint64_t lost_kick_ns;	 /* idle with pending input this long is a
				    lost kick; 0 means 250 ms */
	uint64_t no_progress_ns; /* not idle without a finished turn this
				    long; 0 means 1 s */
	uint64_t timeout_ns;	 /* overall deadline; 0 means none */
	uint64_t frontier_ns;	 /* longest wait for a frontier; 0 means
				    stall_ns (a turn's deadline) */
	uint64_t rate_limit_ns;	 /* one report per (kind, unit) per this;
				    0 means 1 s */
	enum sc_watchdog_policy policy;
	sc_watchdog_report_fn report;	/* NULL: print to stderr */
	void *report_arg;		/* passed to report */
	sc_watchdog_condemn_fn condemn; /* for SC_WATCHDOG_KILL_STALLED;
					   NULL: sc_exec_condemn */
	void *condemn_arg;		/* passed to condemn */
	sc_watchdog_waits_fn waits;	/* NULL: FRONTIER is never checked */
	void *waits_arg;		/* passed to waits */
	sc_watchdog_doing_fn doing;	/* NULL: a STALL names no activity */
	void *doing_arg;		/* passed to doing */
};

/* "STALL", "STARVATION", "LOST_KICK", "NO_PROGRESS", "TIMEOUT",
 * "FRONTIER" (static). */
const char *sc_watchdog_kind_name(enum sc_watchdog_kind k);

/*
 * sc_watchdog_create - start a monitor thread on `ex` with `opts` (NULL:
 * every default). Returns 0 and *out; SC_EINVAL (NULL ex or out, an unknown
 * policy or kind); SC_ENOMEM, or SC_ESTATE when the thread cannot be
 * started. SC_WATCHDOG_KILL_STALLED without a condemn hook uses the
 * executor's (sc_exec_condemn). Nothing is started on failure.
 */
int sc_watchdog_create(struct sc_exec *ex, const struct sc_watchdog_opts *opts,
		       struct sc_watchdog **out);

/*
 * sc_watchdog_destroy - stop and join the monitor (a callback in progress
 * completes first) and free the watchdog. Returns 0. NULL is a no-op. Not
 * from the callback.
 */
int sc_watchdog_destroy(struct sc_watchdog *wd);

/* Reports of kind k delivered so far (after the rate limit). Any thread. */
uint64_t sc_watchdog_count(const struct sc_watchdog *wd,
			   enum sc_watchdog_kind k);

/* Reports of kind k dropped by the rate limit so far. Any thread. */
uint64_t sc_watchdog_suppressed(const struct sc_watchdog *wd,
				enum sc_watchdog_kind k);

/* Turns condemned so far (hook calls that returned 0). Any thread. */
uint64_t sc_watchdog_condemned(const struct sc_watchdog *wd);

/* Checks the monitor has completed so far (each takes one snapshot). */
uint64_t sc_watchdog_checks(const struct sc_watchdog *wd);

/*
 * sc_watchdog_wait - wait until at least `n` reports of kind k have been
 * delivered, or timeout_ns has passed. Returns 0, or SC_ETIMEDOUT; SC_EINVAL
 * for a bad kind. For tests: no sleep loop needed. Not from the callback.
 */
int sc_watchdog_wait(struct sc_watchdog *wd, enum sc_watchdog_kind k,
		     uint64_t n, uint64_t timeout_ns);

/*
 * sc_watchdog_dump - write the executor's state into buf (size bytes,
 * always NUL-terminated when size > 0): a line with the executor's figures,
 * then one line per unit: id, name, state, for how long, worker, turns,
 * kicks, progress and whether it has pending input. Returns the length the
 * whole dump needs (as snprintf does), so a caller can retry with more
 * room. Any thread; takes the executor's lock briefly.
 */
size_t sc_watchdog_dump(struct sc_exec *ex, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* SC_RUNTIME_WATCHDOG_H */
