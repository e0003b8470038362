/*
 * test_runtime_doing.c - what a long turn was doing, by name
 * (operators/doing_int.h; units/runtime.h, sc_runtime_doing): a turn
 * stuck in a slow map is reported by the watchdog's STALL as "in 'slow
 * map' (step)"; and under a timeline, a long turn's slice and the unit's
 * figures name the operator and the activity of its longest phase. Real
 * threads, behind the test guard (SC_THREADED).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "operators/base.h"
#include "operators/error.h"
#include "operators/graph.h"
#include "operators/schema.h"
#include "runtime/timeline.h"
#include "runtime/watchdog.h"
#include "tests/support/rt_json.h"
#include "tests/support/rt_watchdog.h"
#include "units/placement.h"
#include "units/runtime.h"

#define MS  1000000ull
#define SEC 1000000000ull

/* The slow map sleeps until the watchdog has reported it (or for at
 * least min_ns, and at most 10 s). */
static atomic_bool reported;
static uint64_t min_ns;

static int
slow(void *ctx, const uint64_t *in, uint64_t *out)
{
	uint64_t t0 = sc_clock_ns();
	struct timespec ms = {0, 1000000};

	(void)ctx;
	while (sc_clock_ns() - t0 < 10 * SEC &&
	       (sc_clock_ns() - t0 < min_ns ||
		(min_ns == 0 && !atomic_load(&reported))))
		(void)nanosleep(&ms, NULL);
	out[0] = in[0];
	return 0;
}

/* in -> "slow map" -> out, node i in unit i: the map's unit is 1. */
static struct sc_graph *
slow_chain(int *in, int *map)
{
	struct sc_schema one = {1, {SC_TYPE_U64}, NULL};
	struct sc_graph *g;

	cr_assert_eq(sc_graph_create(&g), 0);
	*in = sc_graph_input(g, "in", &one);
	*map = sc_graph_map(g, *in, &one, slow, NULL);
	cr_assert_eq(sc_graph_set_name(g, *map, "slow map"), 0);
	cr_assert_geq(sc_graph_output(g, "out", *map), 0, "%s", sc_errmsg());
	return g;
}

static void
submit_one(struct sc_runtime *rt, int in)
{
	uint64_t row = 7;
	int64_t w = 1;
	struct sc_batch *b;

	cr_assert_eq(sc_batch_from_records(1, &row, &w, 1, &b), 0);
	cr_assert_eq(sc_runtime_submit_wait(rt, in, b, 10 * SEC), 0, "%s",
		     sc_errmsg());
	sc_batch_release(b);
}

/* The first STALL of the slow map's unit, as the watchdog said it. */
static char stall_msg[1024];
static char stall_doing[SC_WATCHDOG_DOING_MAX];

static void
on_report(const struct sc_watchdog_report *r, void *arg)
{
	(void)arg;
	if (r->kind != SC_WATCHDOG_STALL || r->unit != 1 ||
	    atomic_load(&reported))
		return;
	(void)snprintf(stall_msg, sizeof(stall_msg), "%s", r->message);
	(void)snprintf(stall_doing, sizeof(stall_doing), "%s",
		       r->doing ? r->doing : "(none)");
	atomic_store(&reported, true);
}

Test(runtime_doing, watchdog_stall_names_the_operator_and_what_it_does,
     .timeout = 60)
{
	int in, map;
	struct sc_graph *g = slow_chain(&in, &map);
	struct sc_placement *p;
	struct sc_runtime *rt;
	struct sc_runtime_opts o = {.workers = 1};
	struct sc_watchdog_opts wo = {.period_ns = 5 * MS,
				      .stall_ns = 40 * MS,
				      .starve_ns = SC_WATCHDOG_OFF,
				      .lost_kick_ns = SC_WATCHDOG_OFF,
				      .no_progress_ns = SC_WATCHDOG_OFF,
				      .rate_limit_ns = 60 * SEC,
				      .report = on_report,
				      .doing = sc_runtime_doing};
	struct sc_watchdog *wd;
	struct sc_test_guard *guard;
	char buf[SC_WATCHDOG_DOING_MAX];

	atomic_store(&reported, false);
	min_ns = 0;
	cr_assert_eq(sc_placement_per_node(g, &p), 0);
	cr_assert_eq(sc_runtime_create(g, p, &o, &rt), 0, "%s", sc_errmsg());
	cr_assert_not(sc_runtime_doing(rt, 1, buf, sizeof(buf)),
		      "between turns a unit does nothing");
	cr_assert_not(sc_runtime_doing(rt, 9, buf, sizeof(buf)), "no unit 9");
	wo.doing_arg = rt;
	cr_assert_eq(sc_watchdog_create(sc_runtime_exec(rt), &wo, &wd), 0, "%s",
		     sc_errmsg());
	guard = sc_test_guard_begin(sc_runtime_exec(rt), "runtime_doing/stall",
				    30000);
	submit_one(rt, in);
	cr_assert_eq(sc_watchdog_wait(wd, SC_WATCHDOG_STALL, 1, 20 * SEC), 0,
		     "%s", sc_errmsg());
	cr_assert_eq(sc_runtime_wait_idle(rt, 20 * SEC, NULL), 0, "%s",
		     sc_errmsg());
	sc_test_guard_end(guard);
	cr_assert(atomic_load(&reported), "no STALL of the map's unit");
	cr_assert_str_eq(stall_doing, "in 'slow map' (step)");
	cr_assert(strstr(stall_msg, ", in 'slow map' (step)") != NULL,
		  "the STALL does not name the operator: %s", stall_msg);
	cr_assert_not(sc_runtime_doing(rt, 1, buf, sizeof(buf)),
		      "idle: the turn's word is cleared");
	cr_assert_eq(sc_watchdog_destroy(wd), 0);
	cr_assert_eq(sc_runtime_shutdown(rt, NULL), 0);
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
	sc_graph_destroy(g);
}

/* The args of the first slice of unit 1 that has an "op". */
static const struct tj *
long_slice_args(const struct tj *doc)
{
	const struct tj *ev = tj_get(doc, "traceEvents");

	cr_assert_not_null(ev);
	for (size_t i = 0; i < ev->n; i++) {
		const struct tj *a = tj_get(&ev->items[i], "args");
		const struct tj *u = a ? tj_get(a, "unit") : NULL;

		if (u && u->kind == TJ_NUM && u->num == 1 && tj_get(a, "op"))
			return a;
	}
	return NULL;
}

Test(runtime_doing, long_traced_turn_names_its_longest_phase, .timeout = 60)
{
	int in, map;
	struct sc_graph *g = slow_chain(&in, &map);
	struct sc_placement *p;
	struct sc_timeline *tl;
	struct sc_runtime *rt;
	struct sc_runtime_opts o = {.workers = 1};
	struct sc_subcircuit_stats us;
	struct sc_test_guard *guard;
	char path[] = "/tmp/sc_rt_doing_XXXXXX", err[200];
	const struct tj *a, *v;
	struct tj *doc;
	FILE *f;
	int fd;

	min_ns = 20 * MS; /* well past SC_SUBCIRCUIT_LONG_TURN_NS */
	cr_assert_eq(sc_placement_per_node(g, &p), 0);
	cr_assert_eq(sc_timeline_create(NULL, &tl), 0);
	cr_assert_eq(sc_timeline_start(tl), 0);
	o.timeline = tl;
	cr_assert_eq(sc_runtime_create(g, p, &o, &rt), 0, "%s", sc_errmsg());
	guard = sc_test_guard_begin(sc_runtime_exec(rt), "runtime_doing/trace",
				    30000);
	submit_one(rt, in);
	cr_assert_eq(sc_runtime_wait_idle(rt, 20 * SEC, NULL), 0, "%s",
		     sc_errmsg());
	sc_test_guard_end(guard);
	/* The unit's figures: its longest turn, and that turn's phase. */
	cr_assert_eq(sc_runtime_unit_stats(rt, 1, &us, NULL), 0);
	cr_assert_geq(us.longest_ns, 20 * MS);
	cr_assert_not_null(us.longest_doing, "a traced turn's phase is known");
	cr_assert_str_eq(us.longest_doing, "step");
	cr_assert_eq(us.longest_op, map);
	cr_assert_str_eq(sc_runtime_op_name(rt, us.longest_op), "slow map");
	cr_assert_geq(us.longest_phase_ns, 20 * MS);
	cr_assert_leq(us.longest_phase_ns, us.longest_ns);
	/* The trace: the long turn's slice says the same in its args. */
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	f = fdopen(fd, "w");
	cr_assert_eq(sc_timeline_write(tl, f), 0, "%s", sc_errmsg());
	cr_assert_eq(fclose(f), 0);
	doc = tj_parse_file(path, err, sizeof(err));
	cr_assert_not_null(doc, "%s", err);
	(void)remove(path);
	a = long_slice_args(doc);
	cr_assert_not_null(a, "no slice of the map's unit names its op");
	v = tj_get(a, "op");
	cr_assert(v->kind == TJ_STR && strcmp(v->str, "slow map") == 0);
	v = tj_get(a, "doing");
	cr_assert(v && v->kind == TJ_STR && strcmp(v->str, "step") == 0);
	v = tj_get(a, "op_ms");
	cr_assert(v && v->kind == TJ_NUM && v->num >= 20.0, "op_ms");
	/* The map sleeps: its turn's CPU time is far below its length. */
	v = tj_get(a, "cpu_ms");
	cr_assert(v && v->kind == TJ_NUM && v->num >= 0.0 && v->num < 10.0,
		  "cpu_ms of a sleeping turn: %g", v ? v->num : -1.0);
	tj_free(doc);
	free(doc);
	cr_assert_eq(sc_runtime_shutdown(rt, NULL), 0);
	sc_runtime_destroy(rt);
	sc_timeline_destroy(tl);
	sc_placement_destroy(p);
	sc_graph_destroy(g);
}
