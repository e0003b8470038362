/*
 * test_runtime.c - the host runtime and the sub-circuit unit's turn: bad
 * input, panics, backpressure, callbacks, the fairness rules, routing, and
 * the README example. SC_THREADED: the pool tests run real threads, each
 * behind a Criterion timeout and the watchdog guard.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "operators/aggregate.h"
#include "runtime/panic.h"
#include "tests/support/prop.h"
#include "tests/support/rt_watchdog.h"
#include "tests/support/units_races.h"
#include "units/placement.h"
#include "units/runtime.h"
#include "units/subcircuit.h"

/* --- a small graph: in(k, v) -> m -> f -> out; m fails on k == 13 ----- */

static int
copy2(void *ctx, const uint64_t *row, uint64_t *out)
{
	if (ctx && sc_dec_i64(row[0]) == 13)
		return SC_ECALLBACK; /* the "bug" a test plants */
	out[0] = row[0];
	out[1] = row[1];
	return 0;
}

static long slow_ns; /* the filter's cost per row (0: none) */

static int
slow_keep(void *ctx, const uint64_t *row, bool *keep)
{
	if (slow_ns) {
		struct timespec ts = {0, slow_ns};

		nanosleep(&ts, NULL);
	}
	*keep = true;
	return 0;
}

struct small {
	struct sc_graph *g;
	struct sc_schema s;
	int in, m, f, out;
};

static void
small_init(struct small *c, bool panicky)
{
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_I64};
	static int flag = 1;

	cr_assert_eq(sc_schema_init(&c->s, 2, t, NULL), 0);
	cr_assert_eq(sc_graph_create(&c->g), 0);
	c->in = sc_graph_input(c->g, "in", &c->s);
	c->m = sc_graph_map(c->g, c->in, &c->s, copy2, panicky ? &flag : NULL);
	c->f = sc_graph_filter(c->g, c->m, slow_keep, NULL);
	c->out = sc_graph_output(c->g, "out", c->f);
	cr_assert_geq(c->out, 0, "%s", sc_errmsg());
}

/* A batch of rows (k, k) for k in ks[0..n), weight 1. */
static struct sc_batch *
keys(const int64_t *ks, size_t n)
{
	uint64_t rows[64];
	struct sc_batch *b = NULL;

	for (size_t i = 0; i < n; i++) {
		rows[2 * i] = sc_enc_i64(ks[i]);
		rows[2 * i + 1] = sc_enc_i64(ks[i]);
	}
	cr_assert_eq(sc_batch_from_records(2, rows, NULL, n, &b), 0);
	return b;
}

static struct sc_runtime *
runtime_of(struct small *c, const char *strategy,
	   const struct sc_runtime_opts *o, struct sc_placement **p)
{
	struct sc_runtime *rt = NULL;

	cr_assert_eq(sc_placement_parse(c->g, strategy, 1, p), 0);
	cr_assert_eq(sc_runtime_create(c->g, *p, o, &rt), 0, "%s", sc_errmsg());
	return rt;
}

/* --- bad input ----------------------------------------------------------- */

Test(runtime, submit_of_a_wrong_schema_is_eschema_and_applies_nothing)
{
	struct small c;
	struct sc_placement *p;
	struct sc_runtime *rt;
	struct sc_runtime_stats st;
	struct sc_batch *bad = NULL, *got = NULL;
	uint64_t row[3] = {1, 2, 3};

	small_init(&c, false);
	rt = runtime_of(&c, "per-node", NULL, &p);
	cr_assert_eq(sc_batch_from_records(3, row, NULL, 1, &bad), 0);
	cr_assert_eq(sc_runtime_submit(rt, c.in, bad), SC_ESCHEMA);
	cr_assert(strstr(sc_errmsg(), "3 columns"), "%s", sc_errmsg());
	cr_assert_eq(sc_runtime_submit_wait(rt, c.in, bad, 0), SC_ESCHEMA);
	cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), 0);
	sc_runtime_stats(rt, &st);
	cr_assert_eq(st.frames, 0, "something travelled");
	cr_assert_eq(sc_runtime_integral(rt, c.out, &got), 0);
	cr_assert_eq(sc_batch_count(got), 0);
	sc_batch_release(got);
	sc_batch_release(bad);
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
	sc_graph_destroy(c.g);
}

Test(runtime, submit_after_shutdown_is_eshutdown_and_applies_nothing)
{
	struct small c;
	struct sc_placement *p;
	struct sc_runtime *rt;
	struct sc_runtime_stats st;
	int64_t k[2] = {1, 2};
	struct sc_batch *b = keys(k, 2);

	small_init(&c, false);
	rt = runtime_of(&c, "chains", NULL, &p);
	cr_assert_eq(sc_runtime_submit(rt, c.in, b), 0);
	cr_assert_eq(sc_runtime_shutdown(rt, NULL), 0);
	sc_runtime_stats(rt, &st);
	cr_assert_eq(sc_runtime_submit(rt, c.in, b), SC_ESHUTDOWN);
	cr_assert_eq(sc_runtime_submit_wait(rt, c.in, b, 1000), SC_ESHUTDOWN);
	cr_assert_eq(sc_runtime_shutdown(rt, NULL), 0, "idempotent");
	{
		struct sc_runtime_stats st2;

		sc_runtime_stats(rt, &st2);
		cr_assert_eq(st2.frames, st.frames, "applied after shutdown");
	}
	sc_batch_release(b);
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
	sc_graph_destroy(c.g);
}

Test(runtime, submit_to_a_node_that_is_not_an_input_is_refused)
{
	struct small c;
	struct sc_placement *p;
	struct sc_runtime *rt;
	int64_t k[1] = {1};
	struct sc_batch *b = keys(k, 1);

	small_init(&c, false);
	rt = runtime_of(&c, "single", NULL, &p);
	cr_assert_eq(sc_runtime_submit(rt, c.m, b), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "not an input"), "%s", sc_errmsg());
	cr_assert_eq(sc_runtime_submit(rt, 99, b), SC_ENOENT);
	cr_assert_eq(sc_runtime_submit(rt, c.in, NULL), SC_EINVAL);
	sc_batch_release(b);
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
	sc_graph_destroy(c.g);
}

Test(runtime, create_refuses_a_placement_of_another_graph_or_a_bad_capacity)
{
	struct small a, b;
	struct sc_placement *p = NULL;
	struct sc_runtime *rt = NULL;
	struct sc_runtime_opts o = {.edge_capacity = 3};

	small_init(&a, false);
	small_init(&b, false);
	cr_assert_eq(sc_placement_chains(a.g, &p), 0);
	cr_assert_eq(sc_runtime_create(b.g, p, NULL, &rt), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "not of this graph"), "%s", sc_errmsg());
	cr_assert_eq(sc_runtime_create(a.g, p, &o, &rt), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "power of two"), "%s", sc_errmsg());
	cr_assert_null(rt);
	/* nothing was built: the graph is not frozen */
	cr_assert_eq(sc_graph_set_name(a.g, a.m, "still_editable"), 0);
	sc_placement_destroy(p);
	sc_graph_destroy(a.g);
	sc_graph_destroy(b.g);
}

Test(runtime, create_refuses_a_loop_that_crosses_units_naming_it)
{
	/* in -> plus(in, delay(fb)) -> fb: a running sum, a loop. */
	enum sc_type t[1] = {SC_TYPE_I64};
	struct sc_placement *p = NULL;
	struct sc_runtime *rt = NULL;
	struct sc_graph *g = NULL;
	struct sc_schema s;
	int in, fb, d, sum, out;

	cr_assert_eq(sc_schema_init(&s, 1, t, NULL), 0);
	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &s);
	fb = sc_graph_feedback(g, &s);
	d = sc_graph_delay(g, fb);
	sum = sc_graph_plus(g, in, d);
	cr_assert_eq(sc_graph_bind(g, fb, sum), 0);
	out = sc_graph_output(g, "sum", sum);
	cr_assert_geq(out, 0);
	cr_assert_eq(sc_placement_per_node(g, &p), 0);
	cr_assert_eq(sc_runtime_create(g, p, NULL, &rt), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "loop"), "%s", sc_errmsg());
	cr_assert(strstr(sc_errmsg(), "crosses units"), "%s", sc_errmsg());
	cr_assert_null(rt);
	sc_placement_destroy(p);
	/* The loop inside one unit passes the loop check, but its delay is
	 * per tick: the coalescing mode refuses it for that, not for a
	 * crossing (runtime.h, Modes). */
	cr_assert_eq(sc_placement_single(g, &p), 0);
	cr_assert_eq(sc_runtime_create(g, p, NULL, &rt), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "(delay) is per tick"), "%s",
		  sc_errmsg());
	cr_assert_null(strstr(sc_errmsg(), "crosses units"), "%s", sc_errmsg());
	cr_assert_null(rt);
	sc_placement_destroy(p);
	sc_graph_destroy(g);
}

/* in -> op -> out for each per-tick op: refused in the coalescing mode,
 * naming the node and the mode it needs. */
static void
refused_per_tick(int (*op)(struct sc_graph *, int), const char *kind)
{
	enum sc_type t[1] = {SC_TYPE_I64};
	struct sc_placement *p = NULL;
	struct sc_runtime *rt = NULL;
	struct sc_graph *g = NULL;
	struct sc_schema s;
	char want[64];
	int in, x;

	cr_assert_eq(sc_schema_init(&s, 1, t, NULL), 0);
	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &s);
	x = op(g, in);
	cr_assert_geq(x, 0);
	cr_assert_eq(sc_graph_set_name(g, x, "the_op"), 0);
	cr_assert_geq(sc_graph_output(g, "out", x), 0);
	cr_assert_eq(sc_placement_single(g, &p), 0);
	cr_assert_eq(sc_runtime_create(g, p, NULL, &rt), SC_EINVAL, "%s", kind);
	(void)snprintf(want, sizeof(want), "'the_op' (%s) is per tick", kind);
	cr_assert(strstr(sc_errmsg(), want), "%s", sc_errmsg());
	cr_assert(strstr(sc_errmsg(), "opts.ticks"), "%s", sc_errmsg());
	cr_assert_null(rt);
	/* Nothing was built: the graph is not frozen. */
	cr_assert_eq(sc_graph_set_name(g, x, "still_editable"), 0);
	sc_placement_destroy(p);
	sc_graph_destroy(g);
}

Test(runtime, coalescing_mode_refuses_each_per_tick_operator_naming_it)
{
	refused_per_tick(sc_graph_integrate, "integrate");
	refused_per_tick(sc_graph_differentiate, "differentiate");
	refused_per_tick(sc_graph_delay, "delay");
}

Test(runtime, tick_mode_builds_what_the_coalescing_mode_refuses)
{
	struct sc_runtime_opts o = {.ticks = true};
	enum sc_type t[1] = {SC_TYPE_I64};
	struct sc_placement *p = NULL;
	struct sc_runtime *rt = NULL;
	struct sc_graph *g = NULL;
	struct sc_schema s;
	int in;

	cr_assert_eq(sc_schema_init(&s, 1, t, NULL), 0);
	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &s);
	cr_assert_geq(sc_graph_output(g, "sum", sc_graph_integrate(g, in)), 0);
	cr_assert_eq(sc_placement_per_node(g, &p), 0);
	cr_assert_eq(sc_runtime_create(g, p, NULL, &rt), SC_EINVAL);
	cr_assert_null(rt);
	cr_assert_eq(sc_runtime_create(g, p, &o, &rt), 0, "%s", sc_errmsg());
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
	sc_graph_destroy(g);
}

/* --- panics -------------------------------------------------------------- */

Test(runtime, a_unit_that_panics_dies_alone_and_frames_to_it_are_undeliverable)
{
	struct small c;
	struct sc_placement *p;
	struct sc_runtime *rt;
	struct sc_runtime_stats st;
	struct sc_panic_record first;
	struct sc_batch *got = NULL;
	int64_t k1[3] = {1, 2, 13}, k2[2] = {4, 5};
	struct sc_batch *b1 = keys(k1, 3), *b2 = keys(k2, 2);
	int side;

	small_init(&c, true);
	/* A second branch that must go on: in -> side filter -> out2. */
	side = sc_graph_output(c.g, "side",
			       sc_graph_filter(c.g, c.in, slow_keep, NULL));
	cr_assert_geq(side, 0);
	rt = runtime_of(&c, "per-node", NULL, &p);
	cr_assert_eq(sc_runtime_submit(rt, c.in, b1), 0);
	cr_assert_eq(sc_runtime_wait_idle(rt, 0, &first), SC_EPANIC);
	cr_assert(strstr(first.name, "map#1"), "%s", first.name);
	cr_assert(strstr(first.message, "step failed"), "%s", first.message);
	cr_assert(strstr(first.message, "SC_ECALLBACK"), "%s", first.message);
	/* Input after the death: the dead unit's share is undeliverable. */
	cr_assert_eq(sc_runtime_submit(rt, c.in, b2), 0);
	cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), SC_EPANIC);
	sc_runtime_stats(rt, &st);
	cr_assert_eq(st.dead, 1);
	cr_assert_eq(st.undeliverable_frames, 1, "%llu",
		     (unsigned long long)st.undeliverable_frames);
	cr_assert_eq(st.undeliverable_rows, 2);
	cr_assert_eq(sc_runtime_check_idle(rt), 0, "%s", sc_errmsg());
	/* The other branch saw everything. */
	cr_assert_eq(sc_runtime_integral(rt, side, &got), 0);
	cr_assert_eq(sc_batch_count(got), 5);
	sc_batch_release(got);
	/* Downstream of the dead map: alive, and it got nothing (the step
	 * that failed sent nothing). */
	cr_assert_eq(sc_runtime_integral(rt, c.out, &got), 0);
	cr_assert_eq(sc_batch_count(got), 0);
	sc_batch_release(got);
	cr_assert_eq(sc_runtime_shutdown(rt, &first), SC_EPANIC);
	cr_assert(strstr(first.name, "map#1"), "%s", first.name);
	cr_assert(strstr(sc_errmsg(), "1 frames (2 rows) addressed to dead"),
		  "%s", sc_errmsg());
	sc_batch_release(b1);
	sc_batch_release(b2);
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
	sc_graph_destroy(c.g);
}

/* Frames sent that were neither delivered, nor counted undeliverable,
 * nor wait in a dead unit's ring: the settle check's frames_lost. */
static uint64_t
frames_unaccounted(const struct sc_runtime_stats *st)
{
	return st->frames_sent - st->frames_delivered -
	       st->frames_undeliverable - st->pending_closed;
}

Test(runtime, every_frame_sent_is_delivered_or_undeliverable_with_a_dead_unit)
{
	struct small c;
	struct sc_placement *p;
	struct sc_runtime *rt;
	struct sc_runtime_stats st;
	int64_t k1[3] = {1, 2, 13}, k2[2] = {4, 5}, k3[1] = {6};
	struct sc_batch *b1 = keys(k1, 3), *b2 = keys(k2, 2), *b3 = keys(k3, 1);
	int side;

	small_init(&c, true);
	side = sc_graph_output(c.g, "side",
			       sc_graph_filter(c.g, c.in, slow_keep, NULL));
	cr_assert_geq(side, 0);
	rt = runtime_of(&c, "per-node", NULL, &p);
	cr_assert_eq(sc_runtime_submit(rt, c.in, b1), 0);
	cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), SC_EPANIC);
	cr_assert_eq(sc_runtime_submit(rt, c.in, b2), 0);
	cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), SC_EPANIC);
	cr_assert_eq(sc_runtime_submit(rt, c.in, b3), 0);
	cr_assert_eq(sc_runtime_shutdown(rt, NULL), SC_EPANIC);
	sc_runtime_stats(rt, &st);
	cr_assert_eq(st.dead, 1);
	/* Each submit after the death sent the dead map a frame (one
	 * step each: wait_idle between them). */
	cr_assert_eq(st.frames_undeliverable, 2, "%llu",
		     (unsigned long long)st.frames_undeliverable);
	cr_assert_gt(st.frames_delivered, 0);
	cr_assert_eq(st.pending, 0);
	cr_assert_eq(st.frames_sent,
		     st.frames_delivered + st.frames_undeliverable + st.pending,
		     "%llu sent, %llu delivered, %llu undeliverable",
		     (unsigned long long)st.frames_sent,
		     (unsigned long long)st.frames_delivered,
		     (unsigned long long)st.frames_undeliverable);
	cr_assert_eq(frames_unaccounted(&st), 0);
	/* The identity needs the undeliverable term: without it, frames to
	 * the dead unit would read as lost. */
	cr_assert_neq(st.frames_sent, st.frames_delivered + st.pending);
	sc_batch_release(b1);
	sc_batch_release(b2);
	sc_batch_release(b3);
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
	sc_graph_destroy(c.g);
}

Test(runtime, a_frame_stranded_before_a_live_unit_reads_as_lost)
{
	struct small c;
	struct sc_placement *p;
	struct sc_runtime *rt;
	struct sc_runtime_stats st;
	struct sc_claim cl;
	struct sc_exec *ex;
	int64_t k[2] = {1, 2};
	struct sc_batch *b = keys(k, 2), *got = NULL;

	small_init(&c, false);
	rt = runtime_of(&c, "single", NULL, &p);
	ex = sc_runtime_exec(rt);
	cr_assert_eq(sc_runtime_submit(rt, c.in, b), 0);
	/* The planted bug: the unit's turn is handed back as if it had run,
	 * without taking its input, so nothing will kick it again (a lost
	 * kick: the unit stays queued as done and never runs again). */
	sc_claim_init(&cl);
	cr_assert_eq(sc_exec_claim(ex, -1, &cl), 0, "nothing queued");
	cl.ran = true;
	cr_assert_eq(sc_exec_finish(ex, &cl), 0);
	sc_claim_fini(&cl);
	cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), 0);
	sc_runtime_stats(rt, &st);
	cr_assert_eq(st.frames_sent, 1);
	cr_assert_eq(st.frames_delivered, 0);
	cr_assert_eq(st.pending, 1, "the frame waits in a live unit's ring");
	cr_assert_eq(st.pending_closed, 0);
	cr_assert_eq(frames_unaccounted(&st), 1, "the stranded frame is lost");
	cr_assert_eq(sc_runtime_check_idle(rt), SC_ESTATE, "%s", sc_errmsg());
	/* Kicked, the unit takes it: delivered, nothing lost. */
	cr_assert_eq(sc_exec_kick(ex, 0), 0);
	cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), 0);
	sc_runtime_stats(rt, &st);
	cr_assert_eq(st.frames_delivered, 1);
	cr_assert_eq(frames_unaccounted(&st), 0);
	cr_assert_eq(sc_runtime_check_idle(rt), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_runtime_integral(rt, c.out, &got), 0);
	cr_assert_eq(sc_batch_count(got), 2);
	sc_batch_release(got);
	sc_batch_release(b);
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
	sc_graph_destroy(c.g);
}

Test(runtime, a_stranded_frame_reads_as_lost_beside_frames_to_a_dead_unit)
{
	struct small c;
	struct sc_placement *p;
	struct sc_runtime *rt;
	struct sc_runtime_stats st;
	struct sc_claim cl;
	struct sc_exec *ex;
	int64_t k1[1] = {13}, k2[2] = {4, 5};
	struct sc_batch *b1 = keys(k1, 1), *b2 = keys(k2, 2);
	uint64_t faked = 0, old_bound;
	int side;

	small_init(&c, true);
	side = sc_graph_output(c.g, "side",
			       sc_graph_filter(c.g, c.in, slow_keep, NULL));
	cr_assert_geq(side, 0);
	rt = runtime_of(&c, "per-node", NULL, &p);
	ex = sc_runtime_exec(rt);
	cr_assert_eq(sc_runtime_submit(rt, c.in, b1), 0);
	cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), SC_EPANIC);
	/* The input's unit runs for real: a frame to the dead map (refused)
	 * and one to the side filter (pushed, the filter kicked). */
	cr_assert_eq(sc_runtime_submit(rt, c.in, b2), 0);
	sc_claim_init(&cl);
	cr_assert_eq(sc_exec_claim(ex, -1, &cl), 0);
	cr_assert_eq(sc_exec_run(ex, &cl, 64), 0);
	cr_assert_eq(sc_exec_finish(ex, &cl), 0);
	/* The planted bug: every unit kicked since is handed back unrun. */
	while (sc_exec_claim(ex, -1, &cl) == 0) {
		cl.ran = true;
		cr_assert_eq(sc_exec_finish(ex, &cl), 0);
		faked++;
	}
	sc_claim_fini(&cl);
	cr_assert_gt(faked, 0);
	cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), SC_EPANIC);
	sc_runtime_stats(rt, &st);
	cr_assert_geq(st.frames_undeliverable, 1);
	cr_assert_geq(st.pending, 1);
	cr_assert_eq(st.pending_closed, 0);
	cr_assert_eq(frames_unaccounted(&st), st.pending,
		     "each stranded frame is lost");
	/* The lower bound this replaced (frames in rings beyond those
	 * counted undeliverable) let the dead unit's frames hide it. */
	old_bound = st.pending > st.undeliverable_frames
			? st.pending - st.undeliverable_frames
			: 0;
	cr_assert_eq(old_bound, 0);
	sc_batch_release(b1);
	sc_batch_release(b2);
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
	sc_graph_destroy(c.g);
}

Test(runtime, an_output_downstream_of_a_dead_unit_is_flagged_partial)
{
	struct small c;
	struct sc_placement *p;
	struct sc_runtime *rt;
	struct sc_batch *got = NULL;
	int64_t k[3] = {1, 2, 13};
	struct sc_batch *b = keys(k, 3);
	uint32_t dead = 99;
	int side;

	small_init(&c, true);
	side = sc_graph_output(c.g, "side",
			       sc_graph_filter(c.g, c.in, slow_keep, NULL));
	cr_assert_geq(side, 0);
	rt = runtime_of(&c, "per-node", NULL, &p);
	cr_assert_eq(sc_runtime_upstream_dead(rt, c.out, &dead), 0,
		     "nothing is dead yet");
	cr_assert_eq(sc_runtime_submit(rt, c.in, b), 0);
	cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), SC_EPANIC);
	/* The integral still reads (what arrived), but it is partial, and
	 * the runtime says so, naming the dead unit. */
	cr_assert_eq(sc_runtime_integral(rt, c.out, &got), 0);
	sc_batch_release(got);
	cr_assert_eq(sc_runtime_upstream_dead(rt, c.out, &dead), SC_EDEAD);
	cr_assert(strstr(sc_errmsg(), "map#1"), "%s", sc_errmsg());
	cr_assert(strstr(sc_errmsg(), "partial"), "%s", sc_errmsg());
	cr_assert_eq(sc_exec_unit_state(sc_runtime_exec(rt), dead),
		     SC_UNIT_DEAD);
	/* The other branch does not go through the dead map. */
	cr_assert_eq(sc_runtime_upstream_dead(rt, side, NULL), 0);
	cr_assert_eq(sc_runtime_upstream_dead(rt, c.m, NULL), SC_EINVAL,
		     "not an output");
	cr_assert_eq(sc_runtime_upstream_dead(rt, 99, NULL), SC_ENOENT);
	sc_batch_release(b);
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
	sc_graph_destroy(c.g);
}

Test(runtime, submit_to_an_input_whose_unit_is_dead_is_edead_and_counted)
{
	struct small c;
	struct sc_placement *p;
	struct sc_runtime *rt;
	struct sc_runtime_stats st;
	int64_t k1[1] = {13}, k2[3] = {1, 2, 3};
	struct sc_batch *b1 = keys(k1, 1), *b2 = keys(k2, 3);

	small_init(&c, true);
	rt = runtime_of(&c, "single", NULL, &p);
	cr_assert_eq(sc_runtime_submit(rt, c.in, b1), 0);
	cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), SC_EPANIC);
	cr_assert_eq(sc_runtime_submit(rt, c.in, b2), SC_EDEAD);
	sc_runtime_stats(rt, &st);
	cr_assert_eq(st.undeliverable_frames, 1);
	cr_assert_eq(st.undeliverable_rows, 3);
	{
		struct sc_batch *got = NULL;

		cr_assert_eq(sc_runtime_integral(rt, c.out, &got), SC_EDEAD);
		cr_assert_null(got);
	}
	sc_batch_release(b1);
	sc_batch_release(b2);
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
	sc_graph_destroy(c.g);
}

/* --- backpressure ------------------------------------------------------- */

Test(runtime, a_slow_consumer_bounds_the_outbox_and_the_host_sees_efull,
     .timeout = 30)
{
	struct sc_runtime_opts o = {
	    .workers = 2, .budget = 1, .edge_capacity = 1, .outbox_bound = 8};
	struct small c;
	struct sc_placement *p = NULL;
	struct sc_runtime *rt = NULL;
	struct sc_test_guard *guard;
	struct sc_batch *got = NULL;
	uint64_t efull = 0, max_outbox = 0;
	int32_t map[4] = {0, 0, 1, 1}; /* in, m | f, out */
	const int nsub = 150;

	small_init(&c, false);
	cr_assert_eq(sc_placement_manual(c.g, map, 4, 2, &p), 0);
	cr_assert_eq(sc_runtime_create(c.g, p, &o, &rt), 0, "%s", sc_errmsg());
	guard = sc_test_guard_begin(sc_runtime_exec(rt),
				    "runtime/a_slow_consumer", 25000);
	slow_ns = 100000; /* 0.1 ms per row */
	for (int i = 0; i < nsub; i++) {
		int64_t k[4] = {4 * (int64_t)i, 4 * (int64_t)i + 1,
				4 * (int64_t)i + 2, 4 * (int64_t)i + 3};
		struct sc_batch *b = keys(k, 4); /* distinct rows: no
						    cancelling */
		int rc;

		while ((rc = sc_runtime_submit(rt, c.in, b)) == SC_EFULL) {
			struct sc_runtime_stats st;
			struct timespec ts = {0, 50000};

			efull++;
			sc_runtime_stats(rt, &st);
			if (st.outbox_rows > max_outbox)
				max_outbox = st.outbox_rows;
			nanosleep(&ts, NULL);
		}
		cr_assert_eq(rc, 0, "%s", sc_errmsg());
		sc_batch_release(b);
	}
	cr_assert_eq(sc_runtime_wait_idle(rt, 20000000000ull, NULL), 0);
	sc_test_guard_end(guard);
	slow_ns = 0;
	cr_assert_gt(efull, 0, "the host never saw SC_EFULL");
	cr_assert_gt(max_outbox, 0, "the producer never had an outbox");
	/* Over the bound by at most one turn's output (budget 1 frame of 4
	 * rows): then the producer stops reading. */
	cr_assert_leq(max_outbox, 8 + 4, "outbox reached %llu rows",
		      (unsigned long long)max_outbox);
	cr_assert_eq(sc_runtime_check_idle(rt), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_runtime_integral(rt, c.out, &got), 0);
	cr_assert_eq(sc_batch_count(got), (size_t)4 * nsub);
	sc_batch_release(got);
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
	sc_graph_destroy(c.g);
}

Test(runtime, submit_wait_times_out_while_the_input_stays_full, .timeout = 30)
{
	struct sc_runtime_opts o = {
	    .workers = 1, .budget = 1, .edge_capacity = 1};
	struct small c;
	struct sc_placement *p = NULL;
	struct sc_runtime *rt = NULL;
	struct sc_test_guard *guard;
	int64_t k[1] = {1};
	struct sc_batch *b = keys(k, 1);
	int rc = 0;

	small_init(&c, false);
	rt = runtime_of(&c, "single", &o, &p);
	guard = sc_test_guard_begin(sc_runtime_exec(rt),
				    "runtime/submit_wait_times_out", 25000);
	slow_ns = 300000000; /* 0.3 s per row: the unit is busy */
	/* The first frames fill the unit and its one-frame edge; then a
	 * short wait must time out with nothing applied. */
	for (int i = 0; i < 4 && rc != SC_ETIMEDOUT; i++)
		rc = sc_runtime_submit_wait(rt, c.in, b, 1000000);
	cr_assert_eq(rc, SC_ETIMEDOUT, "%s", sc_errname(rc));
	slow_ns = 0;
	cr_assert_eq(sc_runtime_wait_idle(rt, 20000000000ull, NULL), 0);
	sc_test_guard_end(guard);
	sc_batch_release(b);
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
	sc_graph_destroy(c.g);
}

/* --- host threads against shutdown ------------------------------------ */

Test(runtime, submit_during_shutdown_is_applied_or_refused, .timeout = 60)
{
	char why[256] = "";

	/* Workers run the turns; then none: the hosts' waiting submits and
	 * the shutdown's own wait run them. */
	cr_assert(ur_submit_during_shutdown(2, 3, 40, 20, why, sizeof(why)),
		  "%s", why);
	cr_assert(ur_submit_during_shutdown(0, 2, 20, 20, why, sizeof(why)),
		  "%s", why);
}

Test(runtime, reads_during_submits_answer_at_idle_or_refuse, .timeout = 60)
{
	char why[256] = "";
	uint64_t answered = 0;

	cr_assert(
	    ur_reads_during_submits(2, 2, 300, &answered, why, sizeof(why)),
	    "%s", why);
	cr_assert_gt(answered, 0, "no read ever found the runtime idle");
	/* No worker: the hosts' waiting submits run the turns. */
	cr_assert(
	    ur_reads_during_submits(0, 2, 300, &answered, why, sizeof(why)),
	    "%s", why);
}

Test(runtime, submit_wait_with_no_workers_waits_for_another_hosts_turns,
     .timeout = 60)
{
	char why[256] = "";

	/* 0.2 ms per row: the host running a turn holds it that long. */
	cr_assert(
	    ur_submit_wait_shares_the_turns(2, 60, 200000, why, sizeof(why)),
	    "%s", why);
}

/* --- callbacks ---------------------------------------------------------------
 */

struct delta_sum {
	struct sc_batch *sum;
	int calls;
};

static int
add_delta(void *ctx, int node, const struct sc_batch *d)
{
	struct delta_sum *s = ctx;
	struct sc_batch *t = NULL;
	int rc = sc_batch_add(s->sum, d, &t);

	if (rc)
		return rc;
	sc_batch_release(s->sum);
	s->sum = t;
	s->calls++;
	return 0;
}

Test(runtime, on_delta_sees_deltas_that_sum_to_the_integral)
{
	struct small c;
	struct sc_placement *p;
	struct sc_runtime *rt;
	struct delta_sum ds = {NULL, 0};
	struct sc_batch *got = NULL;

	small_init(&c, false);
	rt = runtime_of(&c, "per-node", NULL, &p);
	cr_assert_eq(sc_batch_empty(2, &ds.sum), 0);
	cr_assert_eq(sc_runtime_on_delta(rt, c.out, add_delta, &ds), 0);
	for (int i = 0; i < 5; i++) {
		int64_t k[2] = {i, 10 + i};
		struct sc_batch *b = keys(k, 2);

		cr_assert_eq(sc_runtime_submit(rt, c.in, b), 0);
		sc_batch_release(b);
	}
	cr_assert_eq(sc_runtime_on_delta(rt, c.out, add_delta, &ds), SC_ESTATE);
	cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), 0);
	cr_assert_eq(sc_runtime_integral(rt, c.out, &got), 0);
	cr_assert_gt(ds.calls, 0);
	cr_assert(sc_batch_equal(got, ds.sum));
	cr_assert_eq(sc_batch_count(got), 10);
	sc_batch_release(got);
	sc_batch_release(ds.sum);
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
	sc_graph_destroy(c.g);
}

/* --- the unit's turn, by hand --------------------------------------------- */

struct by_hand {
	struct small c;
	struct sc_edge *in, *out;
	struct sc_subcircuit *s;
	struct sc_unit *u;
};

/* The map node alone as a unit: edge `in` (stream in) -> [m] -> edge
 * `out` (stream m), capacity 1 and outbox bound 0 on the way out. Peers:
 * producer 7, consumer 9. */
static void
by_hand_init(struct by_hand *h, bool panicky)
{
	struct sc_edge_opts ei = {.ncols = 2, .capacity = 8};
	struct sc_edge_opts eo = {.ncols = 2, .capacity = 1};
	static const uint32_t peer = 9;
	struct sc_subcircuit_in pin;
	struct sc_subcircuit_out pout;
	struct sc_subcircuit_desc d;
	int node;

	small_init(&h->c, panicky);
	node = h->c.m;
	cr_assert_eq(sc_edge_create(&ei, &h->in), 0);
	cr_assert_eq(sc_edge_create(&eo, &h->out), 0);
	pin = (struct sc_subcircuit_in){
	    .edge = h->in, .stream = h->c.in, .peer = 7, .gated = true};
	pout = (struct sc_subcircuit_out){.stream = h->c.m,
					  .nedges = 1,
					  .edges = &h->out,
					  .peers = &peer,
					  .gating = true};
	memset(&d, 0, sizeof(d));
	d.name = "by_hand";
	d.graph = h->c.g;
	d.nodes = &node;
	d.nnodes = 1;
	d.in = &pin;
	d.nin = 1;
	d.out = &pout;
	d.nout = 1;
	cr_assert_eq(sc_subcircuit_create(&d, &h->s), 0, "%s", sc_errmsg());
	h->u = sc_subcircuit_unit(h->s);
}

static void
by_hand_fini(struct by_hand *h)
{
	sc_subcircuit_destroy(h->s);
	sc_edge_destroy(h->in);
	sc_edge_destroy(h->out);
	sc_graph_destroy(h->c.g);
}

static void
push_frames(struct sc_edge *e, int n, int64_t from)
{
	for (int i = 0; i < n; i++) {
		int64_t k[1] = {from + i};

		cr_assert_eq(sc_edge_send(e, keys(k, 1)), 0);
	}
}

Test(subcircuit, a_turn_that_stops_at_its_budget_with_input_left_says_more)
{
	struct by_hand h;
	struct sc_turn t;
	uint32_t nb[4];

	by_hand_init(&h, false);
	push_frames(h.in, 3, 0);
	t = h.u->ops->turn(h.u, 1);
	cr_assert_eq(t.more, true, "input left at the budget is more");
	cr_assert_eq(t.progress, 2, "1 frame in, 1 frame out");
	cr_assert(h.u->ops->has_pending(h.u));
	cr_assert_eq(h.u->ops->neighbours(h.u, nb, 4), 2);
	cr_assert((nb[0] == 7 && nb[1] == 9) || (nb[0] == 9 && nb[1] == 7));
	by_hand_fini(&h);
}

/* A unit built by hand keeps its own figures (no runtime holds them):
 * sc_subcircuit_stats reads them. */
Test(subcircuit, stats_count_its_own_turns_frames_and_rows)
{
	struct by_hand h;
	struct sc_subcircuit_stats st;

	by_hand_init(&h, false);
	sc_subcircuit_stats(h.s, &st);
	cr_assert_eq(st.turns, 0, "no turn yet");
	cr_assert_eq(st.frames_in + st.frames_out, 0);
	push_frames(h.in, 3, 0);
	(void)h.u->ops->turn(h.u, 4);
	sc_subcircuit_stats(h.s, &st);
	cr_expect_eq(st.turns, 1);
	cr_expect_eq(st.frames_in, 3, "three frames of one row each");
	cr_expect_eq(st.rows_in, 3);
	cr_expect_eq(st.frames_out, 1, "one step, one delta sent");
	cr_expect_eq(st.rows_out, 3, "the map keeps every row");
	by_hand_fini(&h);
}

Test(subcircuit, a_full_output_edge_is_not_more)
{
	struct by_hand h;
	struct sc_batch *f[4];
	struct sc_turn t;
	size_t n = 0;

	by_hand_init(&h, false);
	push_frames(h.in, 3, 0);
	(void)h.u->ops->turn(h.u, 1); /* the out edge (capacity 1) fills */
	t = h.u->ops->turn(h.u, 1);   /* the next frame goes to the outbox */
	cr_assert_eq(t.more, false,
		     "a full output edge must not make the sender spin");
	cr_assert_eq(sc_edge_pending(h.in), 1, "input left");
	t = h.u->ops->turn(h.u, 1);
	cr_assert_eq(t.progress, 0, "backpressured: reads nothing");
	cr_assert_eq(t.more, false);
	cr_assert(!h.u->ops->has_pending(h.u),
		  "blocked input is not pending (no lost kick)");
	/* The consumer frees room: the next turn flushes and reads on. */
	cr_assert_eq(sc_edge_poll(h.out, 4, f, &n), 0);
	cr_assert_eq(n, 1);
	sc_batch_release(f[0]);
	t = h.u->ops->turn(h.u, 4);
	cr_assert_gt(t.progress, 0);
	cr_assert_eq(sc_edge_pending(h.in), 0);
	by_hand_fini(&h);
}

struct turn_arg {
	struct sc_unit *u;
	struct sc_turn t;
};

static void
run_turn(void *arg)
{
	struct turn_arg *a = arg;

	a->t = a->u->ops->turn(a->u, 4);
}

Test(subcircuit, a_step_error_is_a_panic_of_the_unit_naming_the_error)
{
	struct by_hand h;
	struct sc_panic_record rec;
	struct turn_arg a;

	memset(&rec, 0, sizeof(rec));
	by_hand_init(&h, true);
	push_frames(h.in, 1, 13);
	a.u = h.u;
	cr_assert_eq(sc_panic_guard(run_turn, &a, &rec), SC_EPANIC);
	cr_assert(strstr(rec.message, "by_hand"), "%s", rec.message);
	cr_assert(strstr(rec.message, "SC_ECALLBACK"), "%s", rec.message);
	by_hand_fini(&h);
}

Test(subcircuit, destroy_closes_the_input_edges)
{
	struct by_hand h;
	uint64_t frames = 0;

	by_hand_init(&h, false);
	push_frames(h.in, 2, 0);
	sc_subcircuit_destroy(h.s);
	h.s = NULL;
	cr_assert(sc_edge_is_closed(h.in));
	sc_edge_undeliverable(h.in, &frames, NULL);
	cr_assert_eq(frames, 2);
	by_hand_fini(&h);
}

/* Claim the front unit, run it with `budget`, finish it; its id. */
static uint32_t
step_exec(struct sc_exec *ex, uint32_t budget)
{
	struct sc_claim cl;
	uint32_t id;

	sc_claim_init(&cl);
	cr_assert_eq(sc_exec_claim(ex, -1, &cl), 0, "nothing queued");
	id = cl.id;
	if (sc_exec_run(ex, &cl, budget) == 0)
		cr_assert_eq(sc_exec_finish(ex, &cl), 0);
	sc_claim_fini(&cl);
	return id;
}

Test(subcircuit, a_dying_consumer_kicks_its_producer_to_drop_its_outbox)
{
	/* P = {in} -> edge of 1 frame -> C = {m (fails on 13), f, out}. */
	struct sc_edge_opts one = {.ncols = 2, .capacity = 1};
	struct sc_edge_opts eight = {.ncols = 2, .capacity = 8};
	struct small c;
	struct sc_exec *ex = NULL;
	struct sc_edge *host = NULL, *mid = NULL;
	struct sc_subcircuit *ps = NULL, *cs = NULL;
	static const uint32_t to_c = 1;
	int pn[1], cn[3];
	uint32_t id;
	uint64_t frames = 0;
	int64_t k13[1] = {13}, k5[1] = {5};

	small_init(&c, true);
	pn[0] = c.in;
	cn[0] = c.m;
	cn[1] = c.f;
	cn[2] = c.out;
	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	cr_assert_eq(sc_edge_create(&eight, &host), 0);
	cr_assert_eq(sc_edge_create(&one, &mid), 0);
	{
		struct sc_subcircuit_in hin = {.edge = host,
					       .stream = c.in,
					       .peer = SC_SUBCIRCUIT_HOST,
					       .gated = true};
		struct sc_subcircuit_out pout = {.stream = c.in,
						 .nedges = 1,
						 .edges = &mid,
						 .peers = &to_c,
						 .gating = true};
		struct sc_subcircuit_in cin = {
		    .edge = mid, .stream = c.in, .peer = 0, .gated = true};
		struct sc_subcircuit_desc d = {.name = "P",
					       .graph = c.g,
					       .nodes = pn,
					       .nnodes = 1,
					       .in = &hin,
					       .nin = 1,
					       .out = &pout,
					       .nout = 1};

		cr_assert_eq(sc_subcircuit_create(&d, &ps), 0, "%s",
			     sc_errmsg());
		d = (struct sc_subcircuit_desc){.name = "C",
						.graph = c.g,
						.nodes = cn,
						.nnodes = 3,
						.in = &cin,
						.nin = 1};
		cr_assert_eq(sc_subcircuit_create(&d, &cs), 0, "%s",
			     sc_errmsg());
	}
	cr_assert_eq(sc_exec_add(ex, sc_subcircuit_unit(ps), &id), 0);
	cr_assert_eq(sc_exec_add(ex, sc_subcircuit_unit(cs), &id), 0);
	cr_assert_eq(sc_edge_send(host, keys(k13, 1)), 0);
	cr_assert_eq(sc_edge_send(host, keys(k5, 1)), 0);
	cr_assert_eq(sc_exec_kick(ex, 0), 0);
	cr_assert_eq(step_exec(ex, 1), 0); /* P: the 13 fills mid; more */
	cr_assert_eq(step_exec(ex, 1), 0); /* P: the 5 into the outbox */
	cr_assert(sc_edge_has_outbox(mid));
	cr_assert_eq(sc_exec_unit_state(ex, 0), SC_UNIT_IDLE,
		     "P must be idle, waiting for C's kick");
	cr_assert_eq(step_exec(ex, 1), 1); /* C pops the 13 and dies */
	cr_assert_eq(sc_exec_unit_state(ex, 1), SC_UNIT_DEAD);
	/* The executor kicked its peer P after its destroy (unit.h,
	 * "Death"); P drops the outbox. */
	cr_assert_eq(step_exec(ex, 1), 0, "the dead consumer did not kick");
	cr_assert(!sc_edge_has_outbox(mid));
	sc_edge_undeliverable(mid, &frames, NULL);
	cr_assert_eq(frames, 1);
	cr_assert_eq(sc_exec_destroy(ex), 0);
	sc_edge_destroy(host);
	sc_edge_destroy(mid);
	sc_graph_destroy(c.g);
}

Test(subcircuit, a_frame_sent_by_a_turn_that_then_panics_is_consumed)
{
	/* P = {in, m (fails on 13)} -> edge of 1 frame -> C = {f, out}. */
	struct sc_edge_opts one = {.ncols = 2, .capacity = 1};
	struct sc_edge_opts eight = {.ncols = 2, .capacity = 8};
	struct small c;
	struct sc_exec *ex = NULL;
	struct sc_edge *host = NULL, *mid = NULL;
	struct sc_subcircuit *ps = NULL, *cs = NULL;
	struct sc_batch *got = NULL;
	static const uint32_t to_c = 1;
	int pn[2], cn[2];
	uint32_t id;
	int64_t k100[1] = {100}, k1[1] = {1}, k13[1] = {13};

	small_init(&c, true);
	pn[0] = c.in;
	pn[1] = c.m;
	cn[0] = c.f;
	cn[1] = c.out;
	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	cr_assert_eq(sc_edge_create(&eight, &host), 0);
	cr_assert_eq(sc_edge_create(&one, &mid), 0);
	{
		struct sc_subcircuit_in hin = {.edge = host,
					       .stream = c.in,
					       .peer = SC_SUBCIRCUIT_HOST,
					       .gated = true};
		struct sc_subcircuit_out pout = {.stream = c.m,
						 .nedges = 1,
						 .edges = &mid,
						 .peers = &to_c,
						 .gating = true};
		struct sc_subcircuit_in cin = {
		    .edge = mid, .stream = c.m, .peer = 0, .gated = true};
		struct sc_subcircuit_desc d = {.name = "P",
					       .graph = c.g,
					       .nodes = pn,
					       .nnodes = 2,
					       .in = &hin,
					       .nin = 1,
					       .out = &pout,
					       .nout = 1};

		cr_assert_eq(sc_subcircuit_create(&d, &ps), 0, "%s",
			     sc_errmsg());
		d = (struct sc_subcircuit_desc){.name = "C",
						.graph = c.g,
						.nodes = cn,
						.nnodes = 2,
						.in = &cin,
						.nin = 1};
		cr_assert_eq(sc_subcircuit_create(&d, &cs), 0, "%s",
			     sc_errmsg());
	}
	cr_assert_eq(sc_exec_add(ex, sc_subcircuit_unit(ps), &id), 0);
	cr_assert_eq(sc_exec_add(ex, sc_subcircuit_unit(cs), &id), 0);
	/* mid is full (a frame P's end sent before), so P's first output
	 * waits in its outbox; its second turn flushes it, then panics. */
	cr_assert_eq(sc_edge_send(mid, keys(k100, 1)), 0);
	cr_assert_eq(sc_edge_send(host, keys(k1, 1)), 0);
	cr_assert_eq(sc_edge_send(host, keys(k13, 1)), 0);
	cr_assert_eq(sc_exec_kick(ex, 0), 0);
	cr_assert_eq(step_exec(ex, 1), 0); /* P: the 1 into the outbox */
	cr_assert(sc_edge_has_outbox(mid));
	cr_assert_eq(step_exec(ex, 1), 1); /* C takes the 100, kicks P */
	cr_assert_eq(step_exec(ex, 1), 0); /* P flushes the 1, dies */
	cr_assert_eq(sc_exec_unit_state(ex, 0), SC_UNIT_DEAD);
	cr_assert_eq(sc_edge_pending(mid), 1, "the flushed frame is in mid");
	/* P's death must kick C, which then takes the frame. */
	cr_assert_eq(sc_exec_unit_state(ex, 1), SC_UNIT_QUEUED,
		     "the dead producer did not kick its consumer");
	cr_assert_eq(step_exec(ex, 1), 1);
	cr_assert_eq(sc_edge_pending(mid), 0, "a frame was left in mid");
	cr_assert_eq(
	    sc_circuit_integral(sc_subcircuit_circuit(cs), c.out, &got), 0);
	cr_assert_eq(sc_batch_count(got), 2, "C saw the 100 and the 1");
	sc_batch_release(got);
	cr_assert_eq(sc_exec_destroy(ex), 0);
	sc_edge_destroy(host);
	sc_edge_destroy(mid);
	sc_graph_destroy(c.g);
}

/* The integral of `out` after feeding `batches` under placement p. */
static struct sc_batch *
settled(struct sc_graph *g, const struct sc_placement *p, int in, int out,
	struct sc_batch **batches, int n)
{
	struct sc_runtime *rt = NULL;
	struct sc_batch *got = NULL;

	cr_assert_eq(sc_runtime_create(g, p, NULL, &rt), 0, "%s", sc_errmsg());
	for (int i = 0; i < n; i++)
		cr_assert_eq(sc_runtime_submit_wait(rt, in, batches[i], 0), 0);
	cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), 0);
	cr_assert_eq(sc_runtime_check_idle(rt), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_runtime_integral(rt, out, &got), 0);
	sc_runtime_destroy(rt);
	return got;
}

Test(runtime, a_sharded_unit_holding_input_and_output_sums_its_replicas)
{
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_aggregate_spec sp = {.ncols = 2,
				       .k = 1,
				       .kind = SC_AGG_SUM,
				       .col = 1,
				       .col_type = SC_TYPE_I64};
	struct sc_placement *one = NULL, *four = NULL;
	struct sc_batch *b[8], *want, *got;
	struct sc_graph *g = NULL;
	int32_t map[3] = {0, 0, 0};
	struct sc_schema s;
	struct sc_rng r;
	int in, out;

	sc_rng_seed(&r, sc_prop_seed(77));
	cr_assert_eq(sc_schema_init(&s, 2, t, NULL), 0);
	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "kv", &s);
	out = sc_graph_output(g, "sums", sc_graph_aggregate(g, in, &sp));
	cr_assert_geq(out, 0);
	for (int i = 0; i < 8; i++) {
		uint64_t rows[2 * 64];
		int64_t w[64];

		for (int j = 0; j < 64; j++) {
			rows[(size_t)2 * j] =
			    sc_enc_i64((int64_t)sc_rng_below(&r, 40));
			rows[2 * j + 1] =
			    sc_enc_i64((int64_t)sc_rng_below(&r, 100));
			w[j] = sc_rng_below(&r, 4) ? 1 : -1;
		}
		cr_assert_eq(sc_batch_from_records(2, rows, w, 64, &b[i]), 0);
	}
	/* The whole pipeline in one unit, replicated 4 ways: the host
	 * routes by key, and the output is the sum of the replicas'. */
	cr_assert_eq(sc_placement_manual(g, map, 3, 1, &one), 0);
	cr_assert_eq(sc_placement_manual(g, map, 3, 1, &four), 0);
	cr_assert_eq(sc_placement_set_shards(four, 0, 4), 0, "%s", sc_errmsg());
	want = settled(g, one, in, out, b, 8);
	got = settled(g, four, in, out, b, 8);
	cr_assert_gt(sc_batch_count(want), 10);
	cr_assert(sc_batch_equal(got, want), "sharded output differs");
	for (int i = 0; i < 8; i++)
		sc_batch_release(b[i]);
	sc_batch_release(want);
	sc_batch_release(got);
	sc_placement_destroy(one);
	sc_placement_destroy(four);
	sc_graph_destroy(g);
}

/* Keep every row but those of key 13, whose callback fails: the replica
 * that key is routed to panics, the other lives. */
static int
fail_on_13(void *ctx, const uint64_t *row, bool *keep)
{
	(void)ctx;
	*keep = true;
	return sc_dec_i64(row[0]) == 13 ? SC_ECALLBACK : 0;
}

Test(runtime, a_sharded_output_with_one_dead_replica_reads_edead_whole)
{
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_aggregate_spec sp = {
	    .ncols = 2, .k = 1, .kind = SC_AGG_COUNT};
	struct sc_placement *p = NULL;
	struct sc_runtime *rt = NULL;
	struct sc_batch *b = NULL, *got = NULL;
	struct sc_graph *g = NULL;
	struct sc_schema s;
	int32_t map[4] = {0, 0, 0, 0};
	uint64_t rows[2 * 40];
	int64_t w[40];
	uint32_t dead = UINT32_MAX;
	int in, out, rc;

	cr_assert_eq(sc_schema_init(&s, 2, t, NULL), 0);
	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "kv", &s);
	/* The keyed node reads the input (the rule of set_shards); the
	 * failing filter follows it in its unit. */
	out = sc_graph_output(g, "counts",
			      sc_graph_filter(g, sc_graph_aggregate(g, in, &sp),
					      fail_on_13, NULL));
	cr_assert_geq(out, 0, "%s", sc_errmsg());
	/* One unit replicated 2 ways: keys 0..39 reach both replicas, and
	 * only the one that gets key 13 dies. */
	cr_assert_eq(sc_placement_manual(g, map, 4, 1, &p), 0, "%s",
		     sc_errmsg());
	cr_assert_eq(sc_placement_set_shards(p, 0, 2), 0, "%s", sc_errmsg());
	for (int j = 0; j < 40; j++) {
		rows[(size_t)2 * j] = sc_enc_i64(j);
		rows[2 * j + 1] = sc_enc_i64(1);
		w[j] = 1;
	}
	cr_assert_eq(sc_batch_from_records(2, rows, w, 40, &b), 0);
	cr_assert_eq(sc_runtime_create(g, p, NULL, &rt), 0, "%s", sc_errmsg());
	rc = sc_runtime_submit_wait(rt, in, b, 0);
	cr_assert(rc == 0 || rc == SC_EDEAD, "%s", sc_errname(rc));
	cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), SC_EPANIC);
	/* The live replica's groups are not a partial answer handed out as
	 * the whole one: the read fails and writes nothing. */
	got = (struct sc_batch *)&dead; /* a sentinel: must stay as it is */
	cr_assert_eq(sc_runtime_integral(rt, out, &got), SC_EDEAD, "%s",
		     sc_errmsg());
	cr_assert_eq((void *)got, (void *)&dead, "*out written on failure");
	cr_assert_eq(sc_runtime_upstream_dead(rt, out, &dead), SC_EDEAD);
	cr_assert_neq(dead, UINT32_MAX);
	sc_batch_release(b);
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
	sc_graph_destroy(g);
}

/* --- the README example (compiled, so it cannot rot) ------------------- */

/* README: how to place a circuit. Count bids per auction, with the count
 * stage sharded 2 ways across 2 worker threads. */
static int
readme_example(int64_t *count_of_7)
{
	enum sc_type types[2] = {SC_TYPE_I64, SC_TYPE_I64}; /* auction, price */
	struct sc_aggregate_spec count = {
	    .ncols = 2, .k = 1, .kind = SC_AGG_COUNT};
	struct sc_runtime_opts opts = {.workers = 2};
	struct sc_graph *g = NULL;
	struct sc_placement *p = NULL;
	struct sc_runtime *rt = NULL;
	struct sc_batch *bids = NULL, *result = NULL;
	struct sc_schema bid;
	uint64_t rows[] = {sc_enc_i64(7),   sc_enc_i64(100), sc_enc_i64(7),
			   sc_enc_i64(120), sc_enc_i64(9),   sc_enc_i64(5)};
	int in, out, rc;

	/* 1. What to compute: a graph. */
	sc_graph_create(&g);
	sc_schema_init(&bid, 2, types, NULL);
	in = sc_graph_input(g, "bids", &bid);
	out = sc_graph_output(g, "bids_per_auction",
			      sc_graph_aggregate(g, in, &count));
	/* 2. Where: a placement (or single, per-node, chains, random,
	 * manual); print it as text or as Graphviz DOT. */
	rc = sc_placement_sharded(g, 2, &p);
	if (rc == 0)
		rc = sc_placement_fprint(p, stderr);
	/* 3. Run it: submit deltas, wait until it settles, read. */
	if (rc == 0)
		rc = sc_runtime_create(g, p, &opts, &rt);
	if (rc == 0)
		rc = sc_batch_from_records(2, rows, NULL, 3, &bids);
	if (rc == 0)
		rc = sc_runtime_submit_wait(rt, in, bids, 0);
	if (rc == 0)
		rc = sc_runtime_wait_idle(rt, 0, NULL);
	if (rc == 0)
		rc = sc_runtime_integral(rt, out, &result);
	if (rc == 0) {
		/* rows are (auction, count), sorted: auction 7 first */
		*count_of_7 = sc_dec_i64(sc_batch_row(result, 0)[1]);
		rc = sc_runtime_shutdown(rt, NULL);
	}
	sc_batch_release(result);
	sc_batch_release(bids);
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
	sc_graph_destroy(g);
	return rc;
}

Test(runtime, readme_example_counts_bids_per_auction_on_two_shards,
     .timeout = 30)
{
	int64_t n = 0;

	cr_assert_eq(readme_example(&n), 0, "%s", sc_errmsg());
	cr_assert_eq(n, 2);
}
