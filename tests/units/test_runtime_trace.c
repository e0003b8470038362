/*
 * test_runtime_trace.c - a runtime recording into a timeline
 * (units/runtime.h: opts.timeline, sc_runtime_unit_stats,
 * sc_runtime_trace_sample): every turn becomes one slice named after its
 * unit on the track of the worker that ran it, slices never overlap on a
 * worker, the frames in the slices are the frames the edges delivered,
 * the per-unit figures read while the pool runs only grow, and busy time
 * is the slices' while a timeline records. Real
 * threads, behind the test guard.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "operators/error.h"
#include "operators/graph.h"
#include "operators/schema.h"
#include "runtime/timeline.h"
#include "tests/support/rt_json.h"
#include "tests/support/rt_watchdog.h"
#include "units/placement.h"
#include "units/runtime.h"

#define SEC	1000000000ull
#define BATCHES 400

static int
plus_one(void *ctx, const uint64_t *in, uint64_t *out)
{
	(void)ctx;
	out[0] = in[0] + 1;
	return 0;
}

/* in -> map -> map -> out, one unit per node. */
static struct sc_graph *
chain(int *in, int *out)
{
	struct sc_schema one = {1, {SC_TYPE_U64}, NULL};
	struct sc_graph *g;
	int a, b;

	cr_assert_eq(sc_graph_create(&g), 0);
	*in = sc_graph_input(g, "in", &one);
	a = sc_graph_map(g, *in, &one, plus_one, NULL);
	b = sc_graph_map(g, a, &one, plus_one, NULL);
	*out = sc_graph_output(g, "out", b);
	cr_assert_geq(*out, 0, "%s", sc_errmsg());
	return g;
}

static struct tj *
write_and_parse(const struct sc_timeline *tl)
{
	char path[] = "/tmp/sc_rt_trace_XXXXXX", err[200];
	int fd = mkstemp(path);
	FILE *f;
	struct tj *v;

	cr_assert_geq(fd, 0);
	f = fdopen(fd, "w");
	cr_assert_eq(sc_timeline_write(tl, f), 0, "%s", sc_errmsg());
	cr_assert_eq(fclose(f), 0);
	v = tj_parse_file(path, err, sizeof(err));
	cr_assert_not_null(v, "%s", err);
	(void)remove(path);
	return v;
}

static const char *
str_of(const struct tj *o, const char *k)
{
	const struct tj *v = tj_get(o, k);

	return v && v->kind == TJ_STR ? v->str : "";
}

static double
num_of(const struct tj *o, const char *k)
{
	const struct tj *v = tj_get(o, k);

	cr_assert(v && v->kind == TJ_NUM, "no number '%s'", k);
	return v->num;
}

Test(runtime_trace, every_turn_is_one_slice_on_its_workers_track, .timeout = 60)
{
	int in, out;
	struct sc_graph *g = chain(&in, &out);
	struct sc_placement *p;
	struct sc_timeline *tl;
	struct sc_runtime *rt;
	struct sc_runtime_opts o = {.workers = 2, .budget = 4};
	struct sc_runtime_stats st;
	struct sc_test_guard *guard;
	struct tj *doc;
	const struct tj *ev;
	uint64_t turns = 0, frames_in = 0, slices = 0, slice_frames = 0;
	uint64_t busy = 0;
	double slice_ns = 0;
	uint64_t last_turns[8] = {0};
	double last_end[64];
	size_t samples = 0;

	for (int i = 0; i < 64; i++)
		last_end[i] = -1;
	cr_assert_eq(sc_placement_per_node(g, &p), 0);
	cr_assert_eq(sc_timeline_create(NULL, &tl), 0);
	cr_assert_eq(sc_timeline_start(tl), 0);
	o.timeline = tl;
	cr_assert_eq(sc_runtime_create(g, p, &o, &rt), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_runtime_units(rt), 4);
	guard = sc_test_guard_begin(sc_runtime_exec(rt),
				    "runtime_trace/every_turn", 30000);
	for (uint64_t k = 0; k < BATCHES; k++) {
		uint64_t row = k;
		int64_t w = 1;
		struct sc_batch *b;

		cr_assert_eq(sc_batch_from_records(1, &row, &w, 1, &b), 0);
		cr_assert_eq(sc_runtime_submit_wait(rt, in, b, 10 * SEC), 0,
			     "%s", sc_errmsg());
		sc_batch_release(b);
		sc_runtime_trace_sample(rt);
		/* Figures read while the pool runs only grow. */
		for (uint32_t u = 0; u < 4; u++) {
			struct sc_subcircuit_stats us;

			cr_assert_eq(sc_runtime_unit_stats(rt, u, &us, NULL),
				     0);
			cr_assert_geq(us.turns, last_turns[u]);
			last_turns[u] = us.turns;
		}
	}
	cr_assert_eq(sc_runtime_wait_idle(rt, 20 * SEC, NULL), 0, "%s",
		     sc_errmsg());
	sc_test_guard_end(guard);
	sc_runtime_stats(rt, &st);
	for (uint32_t u = 0; u < 4; u++) {
		struct sc_subcircuit_stats us;
		const char *name = NULL;

		cr_assert_eq(sc_runtime_unit_stats(rt, u, &us, &name), 0);
		cr_assert_not_null(name);
		turns += us.turns;
		frames_in += us.frames_in;
		busy += us.busy_ns;
	}
	cr_assert_eq(frames_in, st.frames_delivered,
		     "units took %llu frames, edges delivered %llu",
		     (unsigned long long)frames_in,
		     (unsigned long long)st.frames_delivered);
	doc = write_and_parse(tl);
	ev = tj_get(doc, "traceEvents");
	cr_assert_not_null(ev);
	for (size_t i = 0; i < ev->n; i++) {
		const struct tj *e = &ev->items[i];
		int tid;

		if (!strcmp(str_of(e, "ph"), "C")) {
			cr_assert(!strncmp(str_of(e, "name"), "fill ", 5),
				  "edge counters are named: %s",
				  str_of(e, "name"));
			samples++;
			continue;
		}
		if (strcmp(str_of(e, "ph"), "X") != 0)
			continue;
		tid = (int)num_of(e, "tid");
		cr_assert(tid >= 0 && tid < 64);
		cr_assert_eq(str_of(e, "name")[0], 'u',
			     "a slice is named after its unit: %s",
			     str_of(e, "name"));
		cr_assert_geq(num_of(e, "ts") * 1000 + 0.5, last_end[tid],
			      "slices overlap on tid %d", tid);
		last_end[tid] = (num_of(e, "ts") + num_of(e, "dur")) * 1000;
		slice_ns += num_of(e, "dur") * 1000;
		slices++;
		slice_frames +=
		    (uint64_t)num_of(tj_get(e, "args"), "frames_in");
	}
	cr_assert_eq(slices, turns, "one slice per turn (%llu, %llu)",
		     (unsigned long long)slices, (unsigned long long)turns);
	cr_assert_eq(slice_frames, frames_in);
	/* While a timeline records, busy time is every turn's: the sum of
	 * the slices (written in ns, so exact but for rounding). */
	cr_assert_gt(busy, 0);
	cr_assert(fabs(slice_ns - (double)busy) <= (double)slices,
		  "busy %llu ns, slices %.0f ns", (unsigned long long)busy,
		  slice_ns);
	cr_assert_geq(samples, BATCHES, "one fill sample per edge per call");
	tj_free(doc);
	free(doc);
	sc_runtime_destroy(rt);
	sc_timeline_destroy(tl);
	sc_placement_destroy(p);
	sc_graph_destroy(g);
}

Test(runtime_trace, unit_stats_refuse_an_unknown_unit_by_name)
{
	int in, out;
	struct sc_graph *g = chain(&in, &out);
	struct sc_placement *p;
	struct sc_runtime *rt;
	struct sc_subcircuit_stats us;

	cr_assert_eq(sc_placement_single(g, &p), 0);
	cr_assert_eq(sc_runtime_create(g, p, NULL, &rt), 0);
	cr_assert_eq(sc_runtime_units(rt), 1);
	cr_assert_eq(sc_runtime_unit_stats(rt, 1, &us, NULL), SC_ENOENT);
	cr_assert(strstr(sc_errmsg(), "no unit 1") != NULL, "%s", sc_errmsg());
	cr_assert_eq(sc_runtime_unit_stats(rt, 0, NULL, NULL), SC_EINVAL);
	cr_assert_eq(sc_runtime_units(NULL), 0);
	sc_runtime_trace_sample(rt); /* no timeline: nothing, no crash */
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
	sc_graph_destroy(g);
}
