/*
 * rt_watchdog.c - the test guard (rt_watchdog.h): a watchdog whose report
 * callback aborts on the kinds that mean a hang.
 */
#include "tests/support/rt_watchdog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/error.h"

#define MS ((uint64_t)1000000)

struct sc_test_guard {
	struct sc_watchdog *wd; /* watching the executor */
	char name[128];		/* the test's name, for the failure */
};

static bool
is_fatal(enum sc_watchdog_kind k)
{
	return k == SC_WATCHDOG_LOST_KICK || k == SC_WATCHDOG_NO_PROGRESS ||
	       k == SC_WATCHDOG_TIMEOUT;
}

static void
on_report(const struct sc_watchdog_report *r, void *arg)
{
	const struct sc_test_guard *g = arg;
	const char *kind = sc_watchdog_kind_name(r->kind);

	if (!is_fatal(r->kind)) {
		(void)fprintf(stderr, "%s: watchdog: %s: %s\n", g->name, kind,
			      r->message);
		return;
	}
	(void)fprintf(stderr,
		      "%s: FAILED by the watchdog: %s: %s\n%s"
		      "%s: aborting so that the hang fails by name\n",
		      g->name, kind, r->message, r->dump, g->name);
	(void)fflush(stderr);
	abort();
}

static uint64_t
clamp(uint64_t v, uint64_t lo, uint64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

struct sc_test_guard *
sc_test_guard_begin(struct sc_exec *ex, const char *name, uint32_t timeout_ms)
{
	struct sc_test_guard *g = calloc(1, sizeof(*g));
	struct sc_watchdog_opts o = {
	    .period_ns = 10 * MS,
	    .timeout_ns = (uint64_t)(timeout_ms ? timeout_ms : 1) * MS,
	    .no_progress_ns = clamp(timeout_ms * MS / 2, 200 * MS, 2000 * MS),
	    .report = on_report,
	};
	int rc;

	if (!g) {
		(void)fprintf(stderr, "%s: no memory for the test guard\n",
			      name);
		abort();
	}
	(void)snprintf(g->name, sizeof(g->name), "%s", name ? name : "?");
	o.report_arg = g;
	rc = sc_watchdog_create(ex, &o, &g->wd);
	if (rc) {
		(void)fprintf(stderr, "%s: cannot start the test guard: %s\n",
			      g->name, sc_strerror(rc));
		abort();
	}
	return g;
}

void
sc_test_guard_end(struct sc_test_guard *g)
{
	if (!g)
		return;
	(void)sc_watchdog_destroy(g->wd);
	free(g);
}

uint64_t
sc_test_guard_count(const struct sc_test_guard *g, enum sc_watchdog_kind k)
{
	return g ? sc_watchdog_count(g->wd, k) : 0;
}
