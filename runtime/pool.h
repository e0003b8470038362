/*
 * pool.h - N worker threads looping on claim_blocking, run, finish.
 *
 * The pool is the only thing in runtime/ that spawns a thread. Each worker
 * counts itself in the executor (sc_exec_info.workers_live), so a worker
 * that leaves early is visible; it leaves only when claim_blocking says the
 * executor is shut down, never on a spurious wake-up. A panic in a turn is
 * caught by sc_exec_run and kills only that unit; the worker goes on.
 *
 * With catch_faults, each worker gives itself an alternate signal stack and
 * turns SIGSEGV/SIGBUS/SIGFPE raised inside a turn into a panic of that unit
 * (see panic.h for what that cannot promise).
 */
#ifndef SC_RUNTIME_POOL_H
#define SC_RUNTIME_POOL_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stdbool.h>
#include <stdint.h>

#include "runtime/executor.h"

struct sc_pool;

struct sc_pool_opts {
	uint32_t workers;  /* threads, >= 1 (0 means 1) */
	uint32_t budget;   /* frames per turn (runtime/unit.h, The budget);
			      0: SC_UNIT_BUDGET_DEFAULT */
	bool catch_faults; /* hard faults in a turn become panics */
};

/*
 * sc_pool_create - start opts->workers threads on `ex`. The executor must
 * outlive the pool. Returns 0 and *out; SC_EINVAL; SC_ESHUTDOWN if ex is
 * already shut down; SC_ENOMEM or SC_ESTATE (a thread or the fault handler
 * could not be set up), with every thread already started joined again.
 */
int sc_pool_create(struct sc_exec *ex, const struct sc_pool_opts *opts,
		   struct sc_pool **out);

/*
 * sc_pool_finish - wait until the executor is idle, then shut it down and
 * join every worker, and free the pool. Returns 0, or SC_EPANIC with the
 * first panic in *first (if not NULL) when a unit panicked (the pool is
 * freed all the same). Not from a worker: called from inside a turn
 * (sc_exec_in_turn) it returns SC_ESTATE at once and changes nothing.
 */
int sc_pool_finish(struct sc_pool *pool, struct sc_panic_record *first);

/*
 * sc_pool_destroy - shut the executor down now (what is queued is
 * discarded; running turns complete), join every worker, free the pool.
 * Returns 0, or SC_EPANIC with the first panic as sc_pool_finish does.
 * NULL is a no-op. Not from a worker: from inside a turn
 * (sc_exec_in_turn) it returns SC_ESTATE and changes nothing.
 */
int sc_pool_destroy(struct sc_pool *pool, struct sc_panic_record *first);

/* How many worker threads this pool started. */
uint32_t sc_pool_workers(const struct sc_pool *pool);

#ifdef __cplusplus
}
#endif

#endif /* SC_RUNTIME_POOL_H */
