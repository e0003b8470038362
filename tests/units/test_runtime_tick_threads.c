/*
 * test_runtime_tick_threads.c - tick mode with threads around it
 * (tests/support/units_ticks.h): the watchdog reports a unit that waits
 * for a frontier, naming the tick and the edge (runtime/watchdog.h,
 * FRONTIER; units/runtime.h, sc_runtime_waits), and stays silent while
 * frontiers keep up; host threads submitting concurrently while another
 * closes ticks lose no row, put each in one tick of the bracket its
 * submit saw, and give the single circuit's per-tick deltas and
 * integrals. SC_THREADED.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "tests/support/units_ticks.h"

/* With no worker nothing runs until the host drives it, so the hook can
 * be asked at each point: a unit waits on an edge only once its tick is
 * closed, and only while that edge holds nothing for it. */
Test(runtime_tick_watch, waits_names_the_edge_a_unit_waits_on)
{
	static struct ut_frontier f;
	struct sc_watchdog_wait w;
	struct sc_graph *g = NULL;
	struct sc_placement *p = NULL;
	struct sc_runtime *rt = NULL;
	struct sc_batch *b = NULL;
	int in = -1;

	memset(&f, 0, sizeof(f));
	cr_assert_eq(ut_frontier_build(&f, 0, &g, &p, &in, &rt), 0, "%s",
		     sc_errmsg());
	cr_assert_eq(ut_row(1, &b), 0);
	cr_assert_eq(sc_runtime_submit(rt, in, b), 0, "%s", sc_errmsg());
	sc_batch_release(b);
	cr_assert_not(sc_runtime_waits(rt, 1, &w),
		      "tick 0 is not closed: no unit waits on an edge");
	cr_assert_eq(sc_runtime_tick(rt, 0, NULL), 0, "%s", sc_errmsg());
	cr_assert_not(sc_runtime_waits(rt, 0, &w),
		      "u0's host edge holds its frames: not a wait");
	cr_assert(sc_runtime_waits(rt, 1, &w), "u1 waits for u0's tick 0");
	cr_assert_eq(w.tick, 0);
	cr_assert_eq(w.frontier, 0);
	cr_assert_str_eq(w.edge, "u0.0 -> u1.0");
	cr_assert_not(sc_runtime_waits(rt, 2, &w), "no unit 2");
	cr_assert_not(sc_runtime_waits(NULL, 1, &w));
	cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), 0, "%s", sc_errmsg());
	cr_assert_not(sc_runtime_waits(rt, 0, &w), "idle: every tick stepped");
	cr_assert_not(sc_runtime_waits(rt, 1, &w), "idle: every tick stepped");
	cr_assert_eq(sc_runtime_shutdown(rt, NULL), 0);
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
	sc_graph_destroy(g);
}

Test(runtime_tick_watch, watchdog_reports_a_unit_waiting_for_a_frontier,
     .timeout = 30)
{
	struct ut_frontier_seen s;
	char why[256] = "";

	memset(&s, 0, sizeof(s));
	cr_assert(ut_frontier_run(true, 100, &s, why, sizeof(why)), "%s", why);
	cr_assert_geq(s.reports, 1, "no FRONTIER report in %llu checks",
		      (unsigned long long)s.checks);
	cr_assert_eq(s.unit, 1, "the report names unit %u: %s", s.unit,
		     s.message);
	cr_assert_eq(strncmp(s.name, "u1 ", 3), 0, "name '%s'", s.name);
	cr_assert_eq(s.tick, UT_STALL_TICK, "%s", s.message);
	cr_assert_eq(s.frontier, UT_STALL_TICK, "%s", s.message);
	cr_assert_str_eq(s.edge, "u0.0 -> u1.0", "%s", s.message);
	cr_assert_geq(s.duration_ns, 100 * UT_MS, "%s", s.message);
	cr_assert(strstr(s.message, "waits for tick 3 on edge u0.0 -> u1.0"),
		  "message: %s", s.message);
	cr_log_info("the report: %s", s.message);
}

Test(runtime_tick_watch, no_frontier_report_while_frontiers_keep_up,
     .timeout = 30)
{
	struct ut_frontier_seen s;
	char why[256] = "";

	memset(&s, 0, sizeof(s));
	cr_assert(ut_frontier_run(false, 100, &s, why, sizeof(why)), "%s", why);
	cr_assert_geq(s.checks, 20, "the watchdog looked only %llu times",
		      (unsigned long long)s.checks);
	cr_assert_eq(s.reports, 0, "a FRONTIER report: %s", s.message);
}

static void
hosts_case(const char *strategy, uint32_t hosts, uint32_t workers)
{
	uint64_t ticks = 0, exact = 0;
	char why[256] = "";

	cr_assert(ut_hosts_run(strategy, hosts, workers, &ticks, &exact, why,
			       sizeof(why)),
		  "%s, %u hosts, %u workers: %s", strategy, hosts, workers,
		  why);
	cr_log_info("%s, %u hosts: %llu ticks, %llu of %u rows in a "
		    "one-tick bracket",
		    strategy, hosts, (unsigned long long)ticks,
		    (unsigned long long)exact, hosts * UT_SUBMITS);
	cr_assert_geq(ticks, 2, "the closer closed no tick while they ran");
}

Test(runtime_tick_hosts, concurrent_submitters_lose_no_row_and_keep_ticks,
     .timeout = 120)
{
	for (uint32_t hosts = 2; hosts <= UT_HOSTS_MAX; hosts++)
		hosts_case("per-node", hosts, 2);
	hosts_case("sharded:2", 3, 2);
	hosts_case("single", 2, 1);
}
