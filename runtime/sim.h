/*
 * sim.h - the seeded scheduler: the same executor, one thread, any order.
 *
 * The sim plays the part of N workers (0..held_max-1, each holding at most
 * one unit) and of the host on one thread. At each step it picks, with a
 * seeded RNG, one of the events enabled now:
 *   - a free worker claims a unit and runs its turn at once, then HOLDS
 *     it: up to held_max units are held at once, each with its turn
 *     already run, so a kick can land on a unit that is (as far as the
 *     executor knows) still running. Which worker, and where it takes from,
 *     are seeded choices among the queues that hold units: its own claim
 *     (its queue, then the injection queue, in the executor's order) or,
 *     on a STEAL executor, a steal from another worker's queue
 *     (sc_exec_steal), so schedules that only stealing makes are explored;
 *   - finish one held unit, chosen at random (finish order is free), as
 *     its worker: the units it kicks go to that worker's queue, and half
 *     the time (finish and claim in one call, as a busy pool worker does)
 *     the first of them to its next slot;
 *   - call the host (input arriving between any two events), while the
 *     host says it has more to give.
 * It stops when nothing is enabled (settled) or after max_steps.
 *
 * Same seed and same host behaviour, same run: the order of events is a
 * function of the seed alone, and result.trace hashes every event so a
 * test can compare two runs. A failing test prints the seed and the command
 * that replays it (sc_sim_replay_line).
 *
 * The sim drives the real executor through its public calls (claim, run,
 * finish, kick), so what it proves is about the code the pool runs.
 */
#ifndef SC_RUNTIME_SIM_H
#define SC_RUNTIME_SIM_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/executor.h"

/* The largest budget the scheduler draws when its options say 0: a
 * budget in frames as unit.h's, kept far below SC_UNIT_BUDGET_DEFAULT so
 * that turns often stop at their budget with input left (`more`) and the
 * schedules interleave finely; 1 is the smallest a turn may get. */
#define SC_SIM_BUDGET_MAX 4

struct sc_sim_opts {
	uint64_t seed;	    /* chooses the order */
	uint32_t held_max;  /* units held at once (the "workers"), 1..64;
			       0 means 1 */
	uint32_t budget;    /* frames per turn (runtime/unit.h, The
			       budget); 0: a seeded choice in
			       1..SC_SIM_BUDGET_MAX for every turn */
	uint64_t max_steps; /* give up after this many events (a spin or a
			       livelock); 0 means 1,000,000 */
	/*
	 * host - one host event: give some input (push frames, kick units)
	 * using `rnd` (64 seeded bits) to choose. Returns true while it has
	 * more to give, false once done (then it is not called again).
	 * NULL: no host.
	 */
	bool (*host)(void *ctx, struct sc_exec *ex, uint64_t rnd);
	void *host_ctx;
};

struct sc_sim_result {
	uint64_t steps;		   /* events taken */
	uint64_t turns;		   /* turns run (claims) */
	uint64_t host_calls;	   /* host events */
	uint64_t trace;		   /* hash of every event, in order */
	uint32_t max_held;	   /* most units held at once */
	uint32_t panics;	   /* turns that panicked in this run */
	uint64_t kicks_on_running; /* kicks that landed on a held unit */
	uint64_t steals;	   /* claims that stole from another worker */
	char why[320]; /* on failure: what happened, with the seed */
};

/*
 * sc_sim_run - drive `ex` until it settles. Returns 0 when settled (host
 * done, queue empty, nothing held) with no panic; SC_EPANIC when it settled
 * but a unit panicked (see sc_exec_panic); SC_ETIMEDOUT after max_steps;
 * SC_EINVAL for bad options; SC_ESHUTDOWN if ex is shut down. *res is
 * written in every case but SC_EINVAL. ex must not be driven by anything
 * else meanwhile.
 */
int sc_sim_run(struct sc_exec *ex, const struct sc_sim_opts *opts,
	       struct sc_sim_result *res);

/*
 * sc_sim_replay_line - "seed S: replay with SC_SEED=S <exe> --filter
 * <suite>/<test>" into buf (NUL-terminated, cut to len); <exe> is
 * $SC_TEST_EXE if set (ctest sets it), else this program's path. Returns
 * buf.
 */
const char *sc_sim_replay_line(char *buf, size_t len, uint64_t seed,
			       const char *suite, const char *test);

#ifdef __cplusplus
}
#endif

#endif /* SC_RUNTIME_SIM_H */
