/*
 * rt_watchdog.h - run a real-thread test body behind a watchdog, so that a
 * lost wake-up fails by name, with the executor's state, instead of hanging
 * until the harness kills it.
 *
 *   struct sc_test_guard *g = sc_test_guard_begin(ex, "pool/chain", 5000);
 *   ... the test body: start a pool, feed it, wait for idle ...
 *   sc_test_guard_end(g);
 *
 * While the guard is up, a watchdog watches `ex`. On a LOST_KICK (always a
 * bug), on NO_PROGRESS (the executor busy and no turn finished for a while)
 * or at the TIMEOUT, it prints "<name>: FAILED by the watchdog", the report
 * and the dump of every unit by name to stderr, and aborts the process
 * (Criterion then shows the test as crashed, by name; a plain driver exits
 * with SIGABRT). A STALL or STARVATION is printed with the test's name but
 * does not abort: a slow machine (ASan, a loaded CI runner) makes those.
 *
 * Call end before destroying the executor. Not async-signal-safe; one guard
 * per executor.
 */
#ifndef SC_TEST_RT_WATCHDOG_H
#define SC_TEST_RT_WATCHDOG_H

#include <stdint.h>

#include "runtime/watchdog.h"

struct sc_test_guard;

/*
 * sc_test_guard_begin - guard `ex` for at most timeout_ms (> 0) under the
 * test's `name` (copied). The no-progress threshold is half the timeout,
 * between 200 ms and 2 s. Aborts with a message if the watchdog cannot be
 * started (a test cannot go on unguarded). Returns the guard.
 */
struct sc_test_guard *sc_test_guard_begin(struct sc_exec *ex, const char *name,
					  uint32_t timeout_ms);

/* sc_test_guard_end - stop watching and free the guard. NULL is a no-op. */
void sc_test_guard_end(struct sc_test_guard *g);

/* Reports of kind k the guard has seen so far (the ones that did not
 * abort: STALL, STARVATION). */
uint64_t sc_test_guard_count(const struct sc_test_guard *g,
			     enum sc_watchdog_kind k);

#endif /* SC_TEST_RT_WATCHDOG_H */
