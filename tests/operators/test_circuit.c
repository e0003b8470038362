/*
 * test_circuit.c - the synchronous circuit: the oracle of every operator
 * as a node, parts of a graph run apart, and bad input.
 *
 * The oracle: after every step of a random delta sequence (inserts,
 * retractions, overwrites, now and then a negative weight), the integral of
 * an operator's output equals the operator applied FROM SCRATCH to the
 * integral(s) of its input(s), computed by the plain loops of
 * tests/support/circuit_gen.h. integrate, differentiate and delay are
 * per-tick operators and have their own statements (see their tests).
 */
#include <criterion/criterion.h>
#include <math.h>

#include "operators/circuit.h"
#include "operators/window.h"
#include "tests/support/circuit_gen.h"
#include "tests/support/prop.h"

#define STEPS 12
#define SEEDS 60

/* Feed each input of s a random delta (kept in fed[]) and step both. */
static void
step_both(struct cg_spec *s, struct sc_circuit *c, struct sc_rng *r,
	  struct sc_batch **fed)
{
	for (size_t i = 0; i < s->ninputs; i++) {
		fed[i] = cg_gen_delta(s, s->inputs[i], r);
		if (fed[i])
			cr_assert_eq(sc_circuit_feed(c, s->inputs[i], fed[i]),
				     0, "%s", sc_errmsg());
	}
	cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
	cg_ref_step(s, fed);
}

static void
release_fed(struct sc_batch **fed, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		sc_batch_release(fed[i]);
		fed[i] = NULL;
	}
}

static bool
report_if_differs(const struct cg_spec *s, const struct cz *want,
		  const struct sc_batch *got, int step)
{
	if (cz_equals_batch(want, got))
		return false;
	(void)fprintf(stderr, "step %d differs\n", step);
	cg_fprint(stderr, s);
	(void)fprintf(stderr, "circuit gave:\n");
	sc_batch_fprint(stderr, got, NULL);
	cz_fprint(stderr, want);
	return true;
}

/* integral(out) == op(integral(inputs)), after every step. */
static void
oracle(enum cg_op op, uint64_t base, const char *test)
{
	uint64_t n = sc_prop_count(SEEDS);

	for (uint64_t k = 0; k < n; k++) {
		uint64_t seed = base + k;
		struct cg_spec *s = cg_generate_single(seed, op);
		const struct cg_node *nd = &s->nodes[s->n - 2];
		struct sc_batch *fed[8] = {0};
		struct sc_circuit *c = NULL;
		struct sc_rng r;
		bool bad = false;

		cr_assert_eq(sc_circuit_create(s->graph, &c), 0, "%s",
			     sc_errmsg());
		sc_rng_seed(&r, seed * 7919);
		for (int step = 0; step < STEPS && !bad; step++) {
			const struct cz *ins[4]; /* as many as nd->in */
			struct sc_batch *got = NULL;
			struct cz want;

			step_both(s, c, &r, fed);
			for (uint32_t p = 0; p < nd->nin; p++)
				ins[p] = &s->nodes[nd->in[p]].st;
			cz_init(&want, nd->ncols);
			cg_ref_apply(nd, ins, &want);
			cr_assert_eq(
			    sc_circuit_integral(c, (int)s->n - 1, &got), 0,
			    "%s", sc_errmsg());
			bad = report_if_differs(s, &want, got, step);
			sc_batch_release(got);
			cz_fini(&want);
			release_fed(fed, s->ninputs);
		}
		sc_circuit_destroy(c);
		cg_free(s);
		SC_PROP_ASSERT(seed, "circuit", test, !bad,
			       "%s: integral of the output is not the operator "
			       "of the integral of the input",
			       cg_op_name(op));
	}
}

Test(circuit, map_integral_is_map_of_input_integral)
{
	oracle(CG_MAP, sc_prop_seed(100),
	       "map_integral_is_map_of_input_integral");
}

Test(circuit, filter_integral_is_filter_of_input_integral)
{
	oracle(CG_FILTER, sc_prop_seed(200),
	       "filter_integral_is_filter_of_input_integral");
}

Test(circuit, flat_map_integral_is_flat_map_of_input_integral)
{
	oracle(CG_FLAT_MAP, sc_prop_seed(300),
	       "flat_map_integral_is_flat_map_of_input_integral");
}

Test(circuit, index_by_integral_is_index_by_of_input_integral)
{
	oracle(CG_INDEX_BY, sc_prop_seed(400),
	       "index_by_integral_is_index_by_of_input_integral");
}

Test(circuit, plus_integral_is_sum_of_input_integrals)
{
	oracle(CG_PLUS, sc_prop_seed(500),
	       "plus_integral_is_sum_of_input_integrals");
}

Test(circuit, negate_integral_is_minus_input_integral)
{
	oracle(CG_NEGATE, sc_prop_seed(600),
	       "negate_integral_is_minus_input_integral");
}

Test(circuit, minus_integral_is_difference_of_input_integrals)
{
	oracle(CG_MINUS, sc_prop_seed(700),
	       "minus_integral_is_difference_of_input_integrals");
}

Test(circuit, window_integral_is_window_of_input_integral)
{
	oracle(CG_WINDOW, sc_prop_seed(800),
	       "window_integral_is_window_of_input_integral");
}

Test(circuit, join_node_integral_is_join_of_input_integrals)
{
	oracle(CG_JOIN, sc_prop_seed(900),
	       "join_node_integral_is_join_of_input_integrals");
}

Test(circuit, antijoin_node_integral_is_antijoin_of_input_integrals)
{
	oracle(CG_ANTIJOIN, sc_prop_seed(1000),
	       "antijoin_node_integral_is_antijoin_of_input_integrals");
}

Test(circuit, distinct_node_integral_is_distinct_of_input_integral)
{
	oracle(CG_DISTINCT, sc_prop_seed(1100),
	       "distinct_node_integral_is_distinct_of_input_integral");
}

Test(circuit, aggregate_node_integral_is_aggregate_of_input_integral)
{
	oracle(CG_AGGREGATE, sc_prop_seed(1200),
	       "aggregate_node_integral_is_aggregate_of_input_integral");
}

Test(circuit, topk_node_integral_is_topk_of_input_integral)
{
	oracle(CG_TOPK, sc_prop_seed(1300),
	       "topk_node_integral_is_topk_of_input_integral");
}

Test(circuit, multiagg_node_integral_is_multiagg_of_input_integral)
{
	oracle(CG_MULTIAGG, sc_prop_seed(1500),
	       "multiagg_node_integral_is_multiagg_of_input_integral");
}

Test(circuit, session_node_integral_is_sessions_of_input_integral)
{
	oracle(CG_SESSION, sc_prop_seed(1600),
	       "session_node_integral_is_sessions_of_input_integral");
}

/* --- the per-tick operators -------------------------------------------------
 * Their statements, with I(x) the integral of stream x up to this tick:
 *   integrate:     delta(out)(t) = I(in)(t)
 *   differentiate: I(out)(t) = in(t)        (what was fed this tick)
 *   delay:         I(out)(t) = I(in)(t - 1)
 */

enum tick_law { LAW_INTEGRATE, LAW_DIFFERENTIATE, LAW_DELAY };

static void
tick_oracle(enum cg_op op, enum tick_law law, uint64_t base, const char *test)
{
	uint64_t n = sc_prop_count(SEEDS);

	for (uint64_t k = 0; k < n; k++) {
		uint64_t seed = base + k;
		struct cg_spec *s = cg_generate_single(seed, op);
		struct cg_node *in = &s->nodes[0];
		struct sc_batch *fed[8] = {0};
		struct sc_circuit *c = NULL;
		struct sc_rng r;
		struct cz before;
		bool bad = false;

		cr_assert_eq(sc_circuit_create(s->graph, &c), 0, "%s",
			     sc_errmsg());
		sc_rng_seed(&r, seed * 104729);
		cz_init(&before, in->ncols);
		for (int step = 0; step < STEPS && !bad; step++) {
			struct sc_batch *got = NULL;
			int rc;

			cz_copy(&before, &in->st);
			step_both(s, c, &r, fed);
			if (law == LAW_INTEGRATE)
				rc = sc_circuit_delta(c, 1, &got);
			else
				rc = sc_circuit_integral(c, 2, &got);
			cr_assert_eq(rc, 0, "%s", sc_errmsg());
			if (law == LAW_INTEGRATE)
				bad = report_if_differs(s, &in->st, got, step);
			else if (law == LAW_DIFFERENTIATE)
				bad = report_if_differs(s, &in->val, got, step);
			else
				bad = report_if_differs(s, &before, got, step);
			sc_batch_release(got);
			release_fed(fed, s->ninputs);
		}
		cz_fini(&before);
		sc_circuit_destroy(c);
		cg_free(s);
		SC_PROP_ASSERT(seed, "circuit", test, !bad, "%s law broken",
			       cg_op_name(op));
	}
}

Test(circuit, integrate_emits_the_integral_of_its_input_each_tick)
{
	tick_oracle(CG_INTEGRATE, LAW_INTEGRATE, sc_prop_seed(1300),
		    "integrate_emits_the_integral_of_its_input_each_tick");
}

Test(circuit, differentiate_integral_is_this_ticks_input)
{
	tick_oracle(CG_DIFFERENTIATE, LAW_DIFFERENTIATE, sc_prop_seed(1400),
		    "differentiate_integral_is_this_ticks_input");
}

Test(circuit, delay_integral_is_the_input_integral_one_tick_late)
{
	tick_oracle(CG_DELAY, LAW_DELAY, sc_prop_seed(1500),
		    "delay_integral_is_the_input_integral_one_tick_late");
}

/* --- helpers for hand-made graphs ----------------------------------------- */

static struct sc_schema
schema_n(uint32_t n, enum sc_type t)
{
	enum sc_type ts[SC_SCHEMA_MAX_COLS];
	struct sc_schema s;

	for (uint32_t i = 0; i < n; i++)
		ts[i] = t;
	cr_assert_eq(sc_schema_init(&s, n, ts, NULL), 0);
	return s;
}

/* A batch of n rows of `ncols` i64 columns from vals (row-major). */
static struct sc_batch *
rows_i64(uint32_t ncols, const int64_t *vals, const int64_t *w, size_t n)
{
	uint64_t words[64];
	struct sc_batch *b = NULL;

	for (size_t i = 0; i < n * ncols; i++)
		words[i] = sc_enc_i64(vals[i]);
	cr_assert_eq(sc_batch_from_records(ncols, words, w, n, &b), 0);
	return b;
}

static int
inc_first(void *ctx, const uint64_t *row, uint64_t *out)
{
	(void)ctx;
	out[0] = sc_enc_i64(sc_dec_i64(row[0]) + 1);
	return 0;
}

/* Returns *(int *)ctx for a row whose value is 13, else keeps it. */
static int
fail_on_13(void *ctx, const uint64_t *row, bool *keep)
{
	*keep = true;
	return sc_dec_i64(row[0]) == 13 ? *(int *)ctx : 0;
}

/* --- avg, checked apart (its value is an f64) ----------------------------- */

Test(circuit, aggregate_avg_is_sum_over_count_rounded_once)
{
	struct sc_schema s2 = schema_n(2, SC_TYPE_I64);
	struct sc_aggregate_spec spec = {2, 1, SC_AGG_AVG, 1, SC_TYPE_I64};
	struct sc_graph *g;
	struct sc_circuit *c;
	struct sc_batch *b, *got;
	int64_t v1[] = {1, 1, 1, 2, 2, 7};
	int64_t v2[] = {1, 1, 2, 5};
	int64_t w2[] = {-1, 1};
	int in, out;

	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "xs", &s2);
	out = sc_graph_output(g, "avg", sc_graph_aggregate(g, in, &spec));
	cr_assert_geq(out, 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_create(g, &c), 0, "%s", sc_errmsg());
	b = rows_i64(2, v1, NULL, 3);
	cr_assert_eq(sc_circuit_feed(c, in, b), 0);
	sc_batch_release(b);
	cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
	b = rows_i64(2, v2, w2, 2); /* retract (1, 1), add (1, 2) and (2, 5) */
	cr_assert_eq(sc_circuit_feed(c, in, b), 0);
	sc_batch_release(b);
	cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_integral(c, out, &got), 0);
	/* groups: 1 -> {2}: 2.0; 2 -> {5, 7}: 6.0 */
	cr_assert_eq(sc_batch_count(got), 2);
	cr_assert_eq(sc_dec_i64(sc_batch_row(got, 0)[0]), 1);
	cr_assert_eq(sc_dec_f64(sc_batch_row(got, 0)[1]), 2.0);
	cr_assert_eq(sc_dec_f64(sc_batch_row(got, 1)[1]), 6.0);
	sc_batch_release(got);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

/* --- windows, by hand ----------------------------------------------------- */

Test(circuit, tumbling_window_appends_the_floor_of_time_to_width)
{
	struct sc_schema s1 = schema_n(1, SC_TYPE_I64);
	struct sc_graph *g;
	struct sc_circuit *c;
	struct sc_batch *b, *got;
	int64_t t[] = {-1, 0, 9, 10};
	int in, out;

	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "t", &s1);
	out = sc_graph_output(g, "w", sc_window_tumbling(g, in, 0, 10));
	cr_assert_geq(out, 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_create(g, &c), 0);
	b = rows_i64(1, t, NULL, 4);
	cr_assert_eq(sc_circuit_feed(c, in, b), 0);
	sc_batch_release(b);
	cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_delta(c, out, &got), 0);
	cr_assert_eq(sc_batch_count(got), 4);
	cr_assert_eq(sc_dec_i64(sc_batch_row(got, 0)[1]), -10);
	cr_assert_eq(sc_dec_i64(sc_batch_row(got, 1)[1]), 0);
	cr_assert_eq(sc_dec_i64(sc_batch_row(got, 2)[1]), 0);
	cr_assert_eq(sc_dec_i64(sc_batch_row(got, 3)[1]), 10);
	sc_batch_release(got);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(circuit, hopping_window_puts_a_row_in_every_window_that_holds_it)
{
	struct sc_schema s1 = schema_n(1, SC_TYPE_I64);
	struct sc_graph *g;
	struct sc_circuit *c;
	struct sc_batch *b, *got;
	int64_t t[] = {7};
	int in, out;

	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "t", &s1);
	/* width 10, hop 5: 7 is in [0, 10) and [5, 15) */
	out = sc_graph_output(g, "w", sc_window_hopping(g, in, 0, 10, 5));
	cr_assert_geq(out, 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_create(g, &c), 0);
	b = rows_i64(1, t, NULL, 1);
	cr_assert_eq(sc_circuit_feed(c, in, b), 0);
	sc_batch_release(b);
	cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_delta(c, out, &got), 0);
	cr_assert_eq(sc_batch_count(got), 2);
	cr_assert_eq(sc_dec_i64(sc_batch_row(got, 0)[1]), 0);
	cr_assert_eq(sc_dec_i64(sc_batch_row(got, 1)[1]), 5);
	sc_batch_release(got);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

/* --- parts ---------------------------------------------------------------- */

/* Every random circuit, cut in two parts at a random node (ids below in
 * part A, the rest in part B), fed through its boundary, gives every node
 * the same deltas as the reference. Only acyclic circuits: a loop cut
 * across parts needs the asynchronous units/ layer. */
Test(circuit, two_parts_fed_through_the_boundary_match_the_reference)
{
	struct cg_opts o;
	uint64_t n = sc_prop_count(60), base = sc_prop_seed(1600);

	cg_opts_default(&o);
	o.loops = false;
	for (uint64_t k = 0; k < n; k++) {
		struct cg_spec *s = cg_generate(base + k, &o);
		struct sc_circuit *pa = NULL, *pb = NULL;
		struct sc_batch *fed[8] = {0};
		struct sc_rng r;
		int ids[64];
		size_t split, na = 0, nb = 0;
		bool bad = false;

		sc_rng_seed(&r, base + k);
		split = 1 + sc_rng_below(&r, s->n - 1);
		for (size_t i = 0; i < s->n; i++)
			ids[i] = (int)i;
		na = split;
		nb = s->n - split;
		cr_assert_eq(sc_circuit_create_part(s->graph, ids, na, &pa), 0,
			     "%s", sc_errmsg());
		cr_assert_eq(
		    sc_circuit_create_part(s->graph, ids + na, nb, &pb), 0,
		    "%s", sc_errmsg());
		for (int step = 0; step < STEPS && !bad; step++) {
			const struct sc_cut *cut = sc_circuit_cut(pb);

			for (size_t i = 0; i < s->ninputs; i++) {
				fed[i] = cg_gen_delta(s, s->inputs[i], &r);
				if (fed[i])
					cr_assert_eq(sc_circuit_feed(
							 s->inputs[i] < (int)na
							     ? pa
							     : pb,
							 s->inputs[i], fed[i]),
						     0, "%s", sc_errmsg());
			}
			cr_assert_eq(sc_circuit_step(pa), 0, "%s", sc_errmsg());
			for (size_t i = 0; i < cut->nin; i++) {
				struct sc_batch *d = NULL;

				cr_assert_lt(cut->in[i], (int)na);
				cr_assert_eq(
				    sc_circuit_delta(pa, cut->in[i], &d), 0);
				cr_assert_eq(sc_circuit_feed(pb, cut->in[i], d),
					     0, "%s", sc_errmsg());
				sc_batch_release(d);
			}
			cr_assert_eq(sc_circuit_step(pb), 0, "%s", sc_errmsg());
			cg_ref_step(s, fed);
			for (size_t i = 0; i < s->n && !bad; i++) {
				struct sc_batch *got = NULL;

				cr_assert_eq(sc_circuit_delta(i < na ? pa : pb,
							      (int)i, &got),
					     0);
				bad = report_if_differs(s, &s->nodes[i].val,
							got, step);
				sc_batch_release(got);
			}
			release_fed(fed, s->ninputs);
		}
		sc_circuit_destroy(pa);
		sc_circuit_destroy(pb);
		cg_free(s);
		SC_PROP_ASSERT(base + k, "circuit",
			       "two_parts_fed_through_the_boundary_match_the_"
			       "reference",
			       !bad, "parts disagree with the reference");
	}
}

Test(circuit, part_refuses_to_be_fed_a_stream_it_computes)
{
	struct sc_schema s1 = schema_n(1, SC_TYPE_I64);
	struct sc_graph *g;
	struct sc_circuit *c;
	struct sc_batch *b;
	int64_t v[] = {1};
	int in, neg, ids[2];

	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &s1);
	neg = sc_graph_negate(g, in);
	ids[0] = neg;
	ids[1] = sc_graph_output(g, "out", neg);
	cr_assert_eq(sc_circuit_create_part(g, ids, 2, &c), 0);
	cr_assert_eq(sc_circuit_cut(c)->nin, 1);
	cr_assert_eq(sc_circuit_cut(c)->in[0], in);
	b = rows_i64(1, v, NULL, 1);
	cr_assert_eq(sc_circuit_feed(c, neg, b), SC_EINVAL);
	cr_assert_eq(sc_circuit_feed(c, in, b), 0); /* the boundary input */
	sc_batch_release(b);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

/* --- bad input ------------------------------------------------------------ */

Test(circuit, feed_of_wrong_schema_is_eschema_and_applies_nothing)
{
	struct sc_schema s1 = schema_n(1, SC_TYPE_I64);
	struct sc_graph *g;
	struct sc_circuit *c;
	struct sc_batch *wide, *got;
	int64_t v[] = {1, 2};
	int in, out;

	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &s1);
	out = sc_graph_output(g, "out", in);
	cr_assert_eq(sc_circuit_create(g, &c), 0);
	wide = rows_i64(2, v, NULL, 1);
	cr_assert_eq(sc_circuit_feed(c, in, wide), SC_ESCHEMA);
	cr_assert(strstr(sc_errmsg(), "'in'") != NULL, "%s", sc_errmsg());
	sc_batch_release(wide);
	cr_assert_eq(sc_circuit_step(c), 0);
	cr_assert_eq(sc_circuit_integral(c, out, &got), 0);
	cr_assert_eq(sc_batch_count(got), 0);
	sc_batch_release(got);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(circuit, cycle_without_delay_is_refused_naming_its_nodes)
{
	struct sc_schema s1 = schema_n(1, SC_TYPE_I64);
	struct sc_graph *g;
	struct sc_circuit *c = NULL;
	int in, fb, sum;

	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &s1);
	fb = sc_graph_feedback(g, &s1);
	sum = sc_graph_plus(g, in, fb);
	cr_assert_eq(sc_graph_set_name(g, sum, "loop_sum"), 0);
	cr_assert_eq(sc_graph_set_name(g, fb, "loop_back"), 0);
	cr_assert_eq(sc_graph_bind(g, fb, sum), 0);
	sc_graph_output(g, "out", sum);
	cr_assert_eq(sc_circuit_create(g, &c), SC_ECYCLE);
	cr_assert_null(c);
	cr_assert(strstr(sc_errmsg(), "'loop_sum'") != NULL, "%s", sc_errmsg());
	cr_assert(strstr(sc_errmsg(), "'loop_back'") != NULL, "%s",
		  sc_errmsg());
	/* a failed build leaves the graph unfrozen */
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(circuit, cycle_through_a_delay_runs_as_a_running_sum)
{
	struct sc_schema s1 = schema_n(1, SC_TYPE_I64);
	struct sc_graph *g;
	struct sc_circuit *c = NULL;
	struct sc_batch *b, *got;
	int64_t v[] = {5};
	int in, fb, sum, out;

	/* sum(t) = in(t) + sum(t - 1): the integral of in, through a loop */
	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &s1);
	fb = sc_graph_feedback(g, &s1);
	sum = sc_graph_plus(g, in, sc_graph_delay(g, fb));
	cr_assert_eq(sc_graph_bind(g, fb, sum), 0);
	out = sc_graph_output(g, "out", sum);
	cr_assert_eq(sc_circuit_create(g, &c), 0, "%s", sc_errmsg());
	b = rows_i64(1, v, NULL, 1);
	cr_assert_eq(sc_circuit_feed(c, in, b), 0);
	sc_batch_release(b);
	for (int t = 0; t < 3; t++)
		cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_delta(c, out, &got), 0);
	cr_assert_eq(sc_batch_count(got), 1);
	cr_assert_eq(sc_batch_weight(got, 0), 1);
	sc_batch_release(got);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

/* A filter whose callback fails with `code` on the row 13. */
static void
callback_error_case(int code, int want)
{
	struct sc_schema s1 = schema_n(1, SC_TYPE_I64);
	struct sc_graph *g;
	struct sc_circuit *c;
	struct sc_batch *b;
	int64_t v[] = {12, 13};
	int in, f;

	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &s1);
	f = sc_graph_filter(g, in, fail_on_13, &code);
	cr_assert_eq(sc_graph_set_name(g, f, "picky"), 0);
	sc_graph_output(g, "out", f);
	cr_assert_eq(sc_circuit_create(g, &c), 0);
	b = rows_i64(1, v, NULL, 2);
	cr_assert_eq(sc_circuit_feed(c, in, b), 0);
	sc_batch_release(b);
	cr_assert_eq(sc_circuit_step(c), want);
	cr_assert(strstr(sc_errmsg(), "'picky'") != NULL, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_step(c), SC_ESTATE);
	cr_assert(strstr(sc_errmsg(), "failed earlier") != NULL, "%s",
		  sc_errmsg());
	cr_assert_eq(sc_circuit_steps(c), 0);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(circuit, callback_error_fails_the_step_with_its_code_then_estate)
{
	callback_error_case(SC_ECALLBACK, SC_ECALLBACK);
	callback_error_case(SC_ENOENT, SC_ENOENT);
}

Test(circuit, callback_positive_return_is_ecallback)
{
	callback_error_case(7, SC_ECALLBACK);
}

static int
fail_flat(void *ctx, const uint64_t *row, struct sc_emitter *out)
{
	int rc = sc_emit(out, row); /* one row emitted, then the failure */

	(void)ctx;
	return rc ? rc : SC_EOVERFLOW;
}

Test(circuit, map_and_flat_map_errors_fail_the_step_with_their_code)
{
	struct sc_schema s1 = schema_n(1, SC_TYPE_I64);
	struct cg_map m = {.nin = 1, .nout = 1, .fail_at = 13};
	struct sc_graph *g;
	struct sc_circuit *c;
	struct sc_batch *b;
	int64_t v[] = {12, 13};
	int in, mp, fm;

	m.itype[0] = m.otype[0] = SC_TYPE_I64;
	m.mul[0] = 1;
	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &s1);
	mp = sc_graph_map(g, in, &s1, cg_map_fn, &m);
	fm = sc_graph_flat_map(g, in, &s1, fail_flat, NULL);
	sc_graph_output(g, "a", mp);
	sc_graph_output(g, "b", fm);
	/* the map alone: fails on 13 */
	cr_assert_eq(sc_circuit_create_part(g, (int[]){in, mp}, 2, &c), 0);
	b = rows_i64(1, v, NULL, 2);
	cr_assert_eq(sc_circuit_feed(c, in, b), 0);
	cr_assert_eq(sc_circuit_step(c), SC_ECALLBACK);
	cr_assert(strstr(sc_errmsg(), "(map)"), "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_step(c), SC_ESTATE);
	sc_circuit_destroy(c);
	/* the flat_map alone: fails on its first row */
	cr_assert_eq(sc_circuit_create_part(g, (int[]){in, fm}, 2, &c), 0);
	cr_assert_eq(sc_circuit_feed(c, in, b), 0);
	cr_assert_eq(sc_circuit_step(c), SC_EOVERFLOW);
	cr_assert(strstr(sc_errmsg(), "(flat_map)"), "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_step(c), SC_ESTATE);
	sc_batch_release(b);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

static int
refuse_delta(void *ctx, int node, const struct sc_batch *delta)
{
	int *calls = ctx;

	(void)node;
	(void)delta;
	return ++*calls == 2 ? SC_EFULL : 0;
}

Test(circuit, delta_callback_sees_nonempty_deltas_and_can_fail_the_step)
{
	struct sc_schema s1 = schema_n(1, SC_TYPE_I64);
	struct sc_graph *g;
	struct sc_circuit *c;
	struct sc_batch *b;
	int64_t v[] = {1};
	int in, out, calls = 0;

	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &s1);
	out = sc_graph_output(g, "out",
			      sc_graph_map(g, in, &s1, inc_first, NULL));
	cr_assert_eq(sc_circuit_create(g, &c), 0);
	cr_assert_eq(sc_circuit_on_delta(c, out, refuse_delta, &calls), 0);
	b = rows_i64(1, v, NULL, 1);
	cr_assert_eq(sc_circuit_step(c), 0); /* empty: no call */
	cr_assert_eq(calls, 0);
	cr_assert_eq(sc_circuit_feed(c, in, b), 0);
	cr_assert_eq(sc_circuit_step(c), 0);
	cr_assert_eq(calls, 1);
	cr_assert_eq(sc_circuit_feed(c, in, b), 0);
	cr_assert_eq(sc_circuit_step(c), SC_EFULL);
	cr_assert_eq(sc_circuit_step(c), SC_ESTATE);
	cr_assert_eq(sc_circuit_feed(c, in, b), SC_ESTATE);
	sc_batch_release(b);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(circuit, unknown_node_ids_are_enoent)
{
	struct sc_schema s1 = schema_n(1, SC_TYPE_I64);
	struct sc_graph *g;
	struct sc_circuit *c;
	struct sc_batch *b = NULL;
	int in;

	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &s1);
	sc_graph_output(g, "out", in);
	cr_assert_eq(sc_circuit_create(g, &c), 0);
	cr_assert_eq(sc_batch_empty(1, &b), 0);
	cr_assert_eq(sc_circuit_feed(c, 99, b), SC_ENOENT);
	cr_assert_eq(sc_circuit_feed(c, -1, b), SC_ENOENT);
	sc_batch_release(b);
	cr_assert_eq(sc_circuit_delta(c, 2, &b), SC_ENOENT);
	cr_assert_eq(sc_circuit_integral(c, 7, &b), SC_ENOENT);
	cr_assert_eq(sc_circuit_on_delta(c, 5, refuse_delta, NULL), SC_ENOENT);
	/* an input is not an output: no integral */
	cr_assert_eq(sc_circuit_integral(c, in, &b), SC_EINVAL);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

/* A part keeps state for its own nodes and its boundary inputs only, each
 * found by its graph id whatever the ids around it: here the part's nodes
 * come after nodes it does not hold, are named out of order and twice, and
 * its boundary input has a higher id than any of them. */
Test(circuit, part_knows_its_nodes_and_boundary_by_id_and_nothing_else)
{
	struct sc_schema s1 = schema_n(1, SC_TYPE_I64);
	struct sc_graph *g;
	struct sc_circuit *c;
	struct sc_batch *b, *got = NULL;
	struct sc_node_stats st;
	int64_t v[] = {3, 9}, w[] = {1, 2};
	int in, fb, neg, out, m;

	cr_assert_eq(sc_graph_create(&g), 0);
	/* ids 0..2: nodes outside the part, read by nothing in it */
	sc_graph_output(g, "pad_out",
			sc_graph_negate(g, sc_graph_input(g, "pad", &s1)));
	in = sc_graph_input(g, "in", &s1);
	fb = sc_graph_feedback(g, &s1);
	neg = sc_graph_negate(g, fb);
	out = sc_graph_output(g, "out", neg);
	m = sc_graph_negate(g, in);
	cr_assert_eq(sc_graph_bind(g, fb, m), 0);
	cr_assert_eq(
	    sc_circuit_create_part(g, (int[]){out, neg, fb, neg}, 4, &c), 0,
	    "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_cut(c)->nin, 1);
	cr_assert_eq(sc_circuit_cut(c)->in[0], m);
	b = rows_i64(1, v, w, 2);
	cr_assert_eq(sc_circuit_feed(c, in, b), SC_ENOENT);
	cr_assert_eq(sc_circuit_feed(c, m, b), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_delta(c, m, &got), 0);
	cr_assert(sc_batch_equal(got, b));
	sc_batch_release(got);
	cr_assert_eq(sc_circuit_delta(c, fb, &got), 0);
	cr_assert(sc_batch_equal(got, b));
	sc_batch_release(got);
	cr_assert_eq(sc_circuit_integral(c, out, &got), 0);
	cr_assert_eq(sc_batch_count(got), 2);
	cr_assert_eq(sc_batch_weight(got, 0), -1);
	cr_assert_eq(sc_batch_weight(got, 1), -2);
	sc_batch_release(got);
	cr_assert_eq(sc_circuit_node_stats(c, m, &st), 0);
	cr_assert_eq(st.rows_out, 2);
	cr_assert_eq(sc_circuit_node_stats(c, neg, &st), 0);
	cr_assert_eq(st.rows_in, 2);
	cr_assert_eq(st.rows_out, 2);
	for (int id = 0; id <= in; id++) {
		cr_assert_eq(sc_circuit_delta(c, id, &got), SC_ENOENT);
		cr_assert_eq(sc_circuit_node_stats(c, id, &st), SC_ENOENT);
		cr_assert_eq(sc_circuit_on_delta(c, id, refuse_delta, NULL),
			     SC_ENOENT);
	}
	cr_assert_eq(sc_circuit_delta(c, m + 1, &got), SC_ENOENT);
	sc_batch_release(b);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(circuit, null_arguments_are_einval)
{
	struct sc_schema s1 = schema_n(1, SC_TYPE_I64);
	struct sc_graph *g, *empty;
	struct sc_circuit *c;
	struct sc_batch *b = NULL;
	int ids[1] = {0};

	cr_assert_eq(sc_graph_create(&g), 0);
	cr_assert_eq(sc_graph_create(&empty), 0);
	sc_graph_output(g, "out", sc_graph_input(g, "in", &s1));
	cr_assert_eq(sc_circuit_create(NULL, &c), SC_EINVAL);
	cr_assert_eq(sc_circuit_create(g, NULL), SC_EINVAL);
	cr_assert_eq(sc_circuit_create(empty, &c), SC_EINVAL);
	cr_assert_eq(sc_circuit_create_part(g, NULL, 1, &c), SC_EINVAL);
	cr_assert_eq(sc_circuit_create_part(g, ids, 0, &c), SC_EINVAL);
	cr_assert_eq(sc_circuit_step(NULL), SC_EINVAL);
	cr_assert_eq(sc_circuit_feed(NULL, 0, b), SC_EINVAL);
	cr_assert_eq(sc_circuit_set_work(NULL, 1), SC_EINVAL);
	cr_assert_eq(sc_circuit_create(g, &c), 0);
	cr_assert_eq(sc_circuit_feed(c, 0, NULL), SC_EINVAL);
	cr_assert_eq(sc_circuit_delta(c, 0, NULL), SC_EINVAL);
	cr_assert_eq(sc_circuit_integral(c, 1, NULL), SC_EINVAL);
	sc_circuit_destroy(c);
	sc_circuit_destroy(NULL);
	cr_assert_eq(sc_graph_destroy(g), 0);
	cr_assert_eq(sc_graph_destroy(empty), 0);
}

Test(circuit, feeding_twice_before_a_step_adds_the_batches)
{
	struct sc_schema s1 = schema_n(1, SC_TYPE_I64);
	struct sc_graph *g;
	struct sc_circuit *c;
	struct sc_batch *b, *got;
	int64_t v[] = {4};
	int in;

	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &s1);
	sc_graph_output(g, "out", in);
	cr_assert_eq(sc_circuit_create(g, &c), 0);
	b = rows_i64(1, v, NULL, 1);
	cr_assert_eq(sc_circuit_feed(c, in, b), 0);
	cr_assert_eq(sc_circuit_feed(c, in, b), 0);
	sc_batch_release(b);
	cr_assert_eq(sc_circuit_step(c), 0);
	cr_assert_eq(sc_circuit_delta(c, in, &got), 0);
	cr_assert_eq(sc_batch_count(got), 1);
	cr_assert_eq(sc_batch_weight(got, 0), 2);
	sc_batch_release(got);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(circuit, node_stats_count_rows_read_and_written)
{
	struct sc_schema s1 = schema_n(1, SC_TYPE_I64);
	struct sc_graph *g;
	struct sc_circuit *c;
	struct sc_batch *b;
	struct sc_node_stats st;
	int64_t v[] = {12, 13, 14};
	int code = 0, in, f;

	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &s1);
	f = sc_graph_filter(g, in, fail_on_13, &code); /* keeps all */
	sc_graph_output(g, "out", sc_graph_distinct(g, sc_graph_plus(g, f, f)));
	cr_assert_eq(sc_circuit_create(g, &c), 0);
	b = rows_i64(1, v, NULL, 3);
	cr_assert_eq(sc_circuit_feed(c, in, b), 0);
	sc_batch_release(b);
	cr_assert_eq(sc_circuit_step(c), 0);
	cr_assert_eq(sc_circuit_step(c), 0); /* an empty tick */
	cr_assert_eq(sc_circuit_node_stats(c, in, &st), 0);
	cr_assert_eq(st.rows_out, 3);
	cr_assert_eq(sc_circuit_node_stats(c, f + 1, &st), 0); /* the plus */
	cr_assert_eq(st.ticks_busy, 1);
	cr_assert_eq(st.rows_in, 6);
	cr_assert_eq(st.rows_out, 3);
	cr_assert_eq(sc_circuit_node_stats(c, 99, &st), SC_ENOENT);
	cr_assert_eq(sc_circuit_node_stats(c, in, NULL), SC_EINVAL);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

/* --- merge work ----------------------------------------------------------- */

/* Each step gives the traces a budget, so merge work is spread: after a
 * cascade of merges becomes due, the spine settles again within a few
 * steps, while a circuit that does no merge work (budget 0) keeps its work
 * outstanding. */
Test(circuit, merge_work_is_spread_over_the_steps)
{
	struct sc_schema s1 = schema_n(1, SC_TYPE_I64);
	struct sc_graph *g;
	struct sc_circuit *c, *lazy;
	int64_t v[64];
	size_t unsettled = 0, longest = 0, sum_c = 0, sum_lazy = 0;
	int in;

	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &s1);
	sc_graph_output(g, "out", sc_graph_distinct(g, in));
	cr_assert_eq(sc_circuit_create(g, &c), 0);
	cr_assert_eq(sc_circuit_create(g, &lazy), 0);
	cr_assert_eq(sc_circuit_set_work(lazy, 0), 0);
	for (int t = 0; t < 300; t++) {
		struct sc_batch *b;

		for (int i = 0; i < 64; i++)
			v[i] = (int64_t)t * 64 + i;
		b = rows_i64(1, v, NULL, 64);
		cr_assert_eq(sc_circuit_feed(c, in, b), 0);
		cr_assert_eq(sc_circuit_feed(lazy, in, b), 0);
		sc_batch_release(b);
		cr_assert_eq(sc_circuit_step(c), 0);
		cr_assert_eq(sc_circuit_step(lazy), 0);
		unsettled = sc_circuit_pending(c) ? unsettled + 1 : 0;
		if (unsettled > longest)
			longest = unsettled;
		sum_c += sc_circuit_pending(c);
		sum_lazy += sc_circuit_pending(lazy);
	}
	cr_assert_leq(longest, 24, "unsettled for %zu steps in a row", longest);
	cr_assert_gt(sum_lazy, 4 * sum_c, "lazy %zu, working %zu", sum_lazy,
		     sum_c);
	cr_assert_eq(sc_circuit_settle(lazy), 0);
	cr_assert_eq(sc_circuit_pending(lazy), 0);
	sc_circuit_destroy(c);
	sc_circuit_destroy(lazy);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

/* --- printing ------------------------------------------------------------- */

Test(circuit, fprint_lists_nodes_in_step_order_with_counters)
{
	struct sc_schema s1 = schema_n(1, SC_TYPE_I64);
	struct sc_graph *g;
	struct sc_circuit *c;
	struct sc_batch *b;
	int64_t v[] = {3, 4};
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int in;

	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "prices", &s1);
	sc_graph_output(g, "neg", sc_graph_negate(g, in));
	cr_assert_eq(sc_circuit_create(g, &c), 0);
	b = rows_i64(1, v, NULL, 2);
	cr_assert_eq(sc_circuit_feed(c, in, b), 0);
	sc_batch_release(b);
	cr_assert_eq(sc_circuit_step(c), 0);
	f = open_memstream(&text, &len);
	cr_assert_not_null(f);
	sc_graph_fprint(f, g);
	sc_circuit_fprint(f, c);
	cr_assert_eq(fclose(f), 0);
	cr_assert(strstr(text, "graph of 3 nodes"), "%s", text);
	cr_assert(strstr(text, "prices"), "%s", text);
	cr_assert(strstr(text, "negate#1"), "%s", text);
	cr_assert(strstr(text, "[0] (i64) busy 1 in 2 out 2"), "%s", text);
	cr_assert(strstr(text, "circuit of 3 nodes, 1 steps"), "%s", text);
	free(text);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

/*
 * One turn of one stream, as a subcircuit's turn feeds it: many frames of
 * a few rows each, drawn from a small pool of rows so that rows repeat
 * across frames, and with pairs that cancel across frames (a row fed
 * with +w in one frame and -w in a later one).
 */
static size_t
turn_frames(struct sc_rng *r, struct sc_batch **frames, size_t max)
{
	size_t n = 1 + sc_rng_below(r, max);

	for (size_t f = 0; f < n; f++) {
		uint64_t words[2 * 8];
		int64_t w[8];
		size_t m = 1 + sc_rng_below(r, 8);

		for (size_t i = 0; i < m; i++) {
			words[2 * i] = sc_enc_i64(sc_rng_range(r, 0, 5));
			words[2 * i + 1] = sc_enc_i64(sc_rng_range(r, 0, 3));
			w[i] = sc_rng_range(r, -3, 3);
		}
		if (f > 0 && sc_rng_below(r, 3) == 0) {
			/* Cancel the first row of the previous frame. */
			const struct sc_batch *p = frames[f - 1];

			if (sc_batch_count(p) > 0) {
				memcpy(words, sc_batch_row(p, 0),
				       2 * sizeof(uint64_t));
				w[0] = -sc_batch_weight(p, 0);
			}
		}
		cr_assert_eq(sc_batch_from_records(2, words, w, m, &frames[f]),
			     0);
	}
	return n;
}

/* in -> count by the first column -> out, and the node ids. */
static struct sc_graph *
count_graph(int *in, int *agg)
{
	struct sc_schema s2 = schema_n(2, SC_TYPE_I64);
	struct sc_aggregate_spec spec = {2, 1, SC_AGG_COUNT, 0, SC_TYPE_I64};
	struct sc_graph *g;

	cr_assert_eq(sc_graph_create(&g), 0);
	*in = sc_graph_input(g, "in", &s2);
	*agg = sc_graph_aggregate(g, *in, &spec);
	sc_graph_output(g, "out", *agg);
	return g;
}

static void
assert_same_delta(struct sc_circuit *a, struct sc_circuit *b, int node,
		  uint64_t seed)
{
	struct sc_batch *x, *y;
	char buf[256];

	cr_assert_eq(sc_circuit_delta(a, node, &x), 0);
	cr_assert_eq(sc_circuit_delta(b, node, &y), 0);
	cr_assert(sc_batch_equal(x, y), "%s",
		  sc_prop_replay(buf, sizeof(buf), seed, "circuit",
				 "a_turn_of_many_frames_steps_as_one_fed_"
				 "their_sum"));
	sc_batch_release(x);
	sc_batch_release(y);
}

Test(circuit, a_turn_of_many_frames_steps_as_one_fed_their_sum)
{
	uint64_t n = sc_prop_count(SEEDS), base = sc_prop_seed(1700);

	for (uint64_t s = 0; s < n; s++) {
		struct sc_batch *frames[80], *sum;
		struct sc_circuit *many, *one;
		struct sc_rng r;
		int in, agg;
		struct sc_graph *g = count_graph(&in, &agg);

		sc_rng_seed(&r, base + s);
		cr_assert_eq(sc_circuit_create(g, &many), 0);
		cr_assert_eq(sc_circuit_create(g, &one), 0);
		for (int step = 0; step < 6; step++) {
			size_t nf = turn_frames(&r, frames, 80);

			for (size_t f = 0; f < nf; f++)
				cr_assert_eq(
				    sc_circuit_feed(many, in, frames[f]), 0,
				    "%s", sc_errmsg());
			cr_assert_eq(sc_batch_sum(frames, nf, &sum), 0);
			cr_assert_eq(sc_circuit_feed(one, in, sum), 0);
			cr_assert_eq(sc_circuit_step(many), 0, "%s",
				     sc_errmsg());
			cr_assert_eq(sc_circuit_step(one), 0, "%s",
				     sc_errmsg());
			assert_same_delta(many, one, in, base + s);
			assert_same_delta(many, one, agg, base + s);
			for (size_t f = 0; f < nf; f++)
				sc_batch_release(frames[f]);
			sc_batch_release(sum);
		}
		sc_circuit_destroy(many);
		sc_circuit_destroy(one);
		cr_assert_eq(sc_graph_destroy(g), 0);
	}
}

/* The delta of `in` after a step holds exactly `want` (n i64 rows). */
static void
assert_fed(struct sc_circuit *c, int in, const int64_t *rows, const int64_t *w,
	   size_t n)
{
	struct sc_batch *got, *want = rows_i64(1, rows, w, n);

	cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_delta(c, in, &got), 0);
	cr_assert(sc_batch_equal(got, want));
	sc_batch_release(got);
	sc_batch_release(want);
}

Test(circuit, feed_whose_total_leaves_int64_is_eoverflow_and_applies_nothing)
{
	struct sc_schema s1 = schema_n(1, SC_TYPE_I64);
	int64_t a = 1, b = 2, ab[] = {1, 2};
	int64_t wmax = INT64_MAX, wone = 1, wm1 = -1;
	int64_t wmm[] = {INT64_MAX, INT64_MAX};
	int64_t w_low[] = {INT64_MAX - 1, INT64_MAX};
	struct sc_batch *amax = rows_i64(1, &a, &wmax, 1);
	struct sc_batch *bmax = rows_i64(1, &b, &wmax, 1);
	struct sc_batch *a1 = rows_i64(1, &a, &wone, 1);
	struct sc_batch *am1 = rows_i64(1, &a, &wm1, 1);
	struct sc_graph *g;
	struct sc_circuit *c;
	int in;

	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &s1);
	sc_graph_output(g, "out", in);
	cr_assert_eq(sc_circuit_create(g, &c), 0);
	/* Two rows of weight INT64_MAX: the mass passes int64, the sum is
	 * fine; then one more on a row is refused at the feed. */
	cr_assert_eq(sc_circuit_feed(c, in, amax), 0);
	cr_assert_eq(sc_circuit_feed(c, in, bmax), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_feed(c, in, a1), SC_EOVERFLOW);
	cr_assert_eq(sc_circuit_feed(c, in, a1), SC_EOVERFLOW);
	assert_fed(c, in, ab, wmm, 2);
	sc_circuit_destroy(c);
	/* Past the bound, each feed sums exactly: -1, -1, +1 on a row of
	 * INT64_MAX are all fine. */
	cr_assert_eq(sc_circuit_create(g, &c), 0);
	cr_assert_eq(sc_circuit_feed(c, in, amax), 0);
	cr_assert_eq(sc_circuit_feed(c, in, bmax), 0);
	cr_assert_eq(sc_circuit_feed(c, in, am1), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_feed(c, in, am1), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_feed(c, in, a1), 0, "%s", sc_errmsg());
	assert_fed(c, in, ab, w_low, 2);
	sc_batch_release(amax);
	sc_batch_release(bmax);
	sc_batch_release(a1);
	sc_batch_release(am1);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(g), 0);
}
