/*
 * test_partial_linear.c - a linear node's delta, or a join's change, that
 * leaves int64 only because of how deltas were grouped into steps: two rows of
 * 2^62 fed in one step and folded into one key by a map, a flat_map, an
 * index_by, a plus, a minus or a negate. The step must not fail: the node
 * carries what does not fit (circuit.h, sc_circuit_carried), the next steps
 * emit it, and once a later feed brings the fold back within int64 every
 * output's integral is the settled one, exactly as when the same rows are fed
 * one step each.
 */
#include <criterion/criterion.h>
#include <stdint.h>

#include "operators/circuit.h"
#include "operators/graph.h"
#include "operators/schema.h"

#define BIG (INT64_C(1) << 62)

/* (g, id) -> (g, 0). */
static int
fold(void *ctx, const uint64_t *row, uint64_t *out)
{
	(void)ctx;
	out[0] = row[0];
	out[1] = 0;
	return 0;
}

/* (g, id) -> (g, 0) twice: a fan-out that folds too. */
static int
fold_twice(void *ctx, const uint64_t *row, struct sc_emitter *out)
{
	uint64_t r[2] = {row[0], 0};
	int rc = sc_emit(out, r);

	(void)ctx;
	return rc ? rc : sc_emit(out, r);
}

struct lin {
	struct sc_graph *g;
	int in, out[6];
};

static void
lin_graph(struct lin *l)
{
	enum sc_type types[2] = {SC_TYPE_I64, SC_TYPE_I64};
	static const uint32_t gcol[1] = {0};
	struct sc_schema sch, g1;
	int m, neg;

	sc_schema_init(&sch, 2, types, NULL);
	sc_schema_init(&g1, 1, types, NULL);
	cr_assert_eq(sc_graph_create(&l->g), 0);
	l->in = sc_graph_input(l->g, "x", &sch);
	m = sc_graph_map(l->g, l->in, &sch, fold, NULL);
	cr_assert_geq(m, 0, "%s", sc_errmsg());
	neg = sc_graph_negate(l->g, m);
	l->out[0] = sc_graph_output(l->g, "map", m);
	l->out[1] = sc_graph_output(
	    l->g, "flat_map",
	    sc_graph_flat_map(l->g, l->in, &sch, fold_twice, NULL));
	l->out[2] = sc_graph_output(l->g, "index_by",
				    sc_graph_index_by(l->g, l->in, gcol, 1));
	l->out[3] = sc_graph_output(l->g, "plus", sc_graph_plus(l->g, m, m));
	l->out[4] =
	    sc_graph_output(l->g, "minus", sc_graph_minus(l->g, m, neg));
	l->out[5] = sc_graph_output(l->g, "negate", neg);
	for (int i = 0; i < 6; i++)
		cr_assert_geq(l->out[i], 0, "%s", sc_errmsg());
}

static struct sc_batch *
rows(size_t n, const int64_t *ids, const int64_t *w)
{
	uint64_t rec[8];
	struct sc_batch *b;

	for (size_t i = 0; i < n; i++) {
		rec[2 * i] = sc_enc_i64(7);
		rec[2 * i + 1] = sc_enc_i64(ids[i]);
	}
	cr_assert_eq(sc_batch_from_records(2, rec, w, n, &b), 0);
	return b;
}

/* Feed b, step, and step again while a node carries; the steps taken. */
static int
feed_step(struct sc_circuit *c, int in, struct sc_batch *b)
{
	int steps = 0, rc;

	cr_assert_eq(sc_circuit_feed(c, in, b), 0, "%s", sc_errmsg());
	sc_batch_release(b);
	do {
		rc = sc_circuit_step(c);
		cr_assert_eq(rc, 0, "step %d: %s: %s", steps, sc_errname(rc),
			     sc_errdetail());
		steps++;
	} while (sc_circuit_carried(c));
	return steps;
}

/* Output i's integral: one row (7[, 0]) of weight want. */
static void
integral_is(struct sc_circuit *c, const struct lin *l, int i, int64_t want)
{
	struct sc_batch *got;
	int rc = sc_circuit_integral(c, l->out[i], &got);

	cr_assert_eq(rc, 0, "output %d: %s: %s", i, sc_errname(rc),
		     sc_errdetail());
	cr_assert_eq(sc_batch_count(got), 1, "output %d: %zu rows", i,
		     sc_batch_count(got));
	cr_assert_eq(sc_batch_weight(got, 0), want,
		     "output %d: weight %lld, want %lld", i,
		     (long long)sc_batch_weight(got, 0), (long long)want);
	sc_batch_release(got);
}

/* x: (7, 1) and (7, 2) of 2^62 - 1 in one step (every fold is near 2^63,
 * doubled near 2^64), then (7, 2) taken back: each settles at one row. */
Test(partial_linear, folds_past_int64_in_one_step_fail_no_step_and_settle)
{
	struct lin l;
	struct sc_circuit *c;
	const int64_t ids[2] = {1, 2}, w[2] = {BIG - 1, BIG - 1};
	const int64_t back = -(BIG - 1);

	lin_graph(&l);
	cr_assert_eq(sc_circuit_create(l.g, &c), 0);
	cr_assert_geq(feed_step(c, l.in, rows(2, ids, w)), 2,
		      "a fold past int64 is emitted over two steps");
	cr_assert_eq(feed_step(c, l.in, rows(1, ids + 1, &back)), 1);
	integral_is(c, &l, 0, BIG - 1);
	integral_is(c, &l, 1, 2 * (BIG - 1));
	integral_is(c, &l, 2, BIG - 1);
	integral_is(c, &l, 3, 2 * (BIG - 1));
	integral_is(c, &l, 4, 2 * (BIG - 1));
	integral_is(c, &l, 5, -(BIG - 1));
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(l.g), 0);
}

/* The same rows one step each give the same integrals (no carry). */
Test(partial_linear, one_row_a_step_agrees_and_carries_nothing)
{
	struct lin l;
	struct sc_circuit *c;
	const int64_t ids[3] = {1, 2, 2};
	const int64_t w[3] = {BIG - 1, BIG - 1, -(BIG - 1)};

	lin_graph(&l);
	cr_assert_eq(sc_circuit_create(l.g, &c), 0);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(feed_step(c, l.in, rows(1, ids + i, w + i)), 1);
	cr_assert_eq(feed_step(c, l.in, rows(1, ids + 2, w + 2)), 1);
	integral_is(c, &l, 0, BIG - 1);
	integral_is(c, &l, 3, 2 * (BIG - 1));
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(l.g), 0);
}

/* A join whose output row moves from INT64_MIN to past INT64_MAX in one
 * step (a = 2^62; b from -2 to 2): the change does not fit int64, so the
 * join emits it clamped and the circuit carries the rest into the next
 * step; b back to 1 settles the row at 2^62. */
Test(partial_linear, a_join_change_past_int64_in_one_step_is_carried)
{
	enum sc_type types[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_schema sch;
	struct sc_graph *g;
	struct sc_circuit *c;
	struct sc_batch *got;
	int a, b, out;
	const int64_t id[1] = {1}, wa = BIG, wb[3] = {-2, 4, -1};

	sc_schema_init(&sch, 2, types, NULL);
	cr_assert_eq(sc_graph_create(&g), 0);
	a = sc_graph_input(g, "a", &sch);
	b = sc_graph_input(g, "b", &sch);
	out = sc_graph_output(g, "joined", sc_graph_join(g, a, b, 1));
	cr_assert_geq(out, 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_create(g, &c), 0);
	got = rows(1, id, &wa);
	cr_assert_eq(sc_circuit_feed(c, a, got), 0);
	sc_batch_release(got);
	cr_assert_eq(feed_step(c, b, rows(1, id, &wb[0])), 1);
	cr_assert_geq(feed_step(c, b, rows(1, id, &wb[1])), 2,
		      "the change is emitted over two steps");
	cr_assert_eq(feed_step(c, b, rows(1, id, &wb[2])), 1);
	cr_assert_eq(sc_circuit_integral(c, out, &got), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_batch_count(got), 1);
	cr_assert_eq(sc_batch_weight(got, 0), BIG);
	sc_batch_release(got);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

/* An antijoin whose a row is at MAX + 1 when b's row leaves: the output
 * gains the row at MAX + 1, past int64, so the antijoin's output goes to
 * the carry and out over two steps; a's row back at MAX - 1 settles it. */
Test(partial_linear, an_antijoin_output_past_int64_in_one_step_is_carried)
{
	enum sc_type types[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_schema sch;
	struct sc_graph *g;
	struct sc_circuit *c;
	struct sc_batch *got;
	int a, b, out;
	const int64_t id[1] = {1}, one = 1, minus = -1, max = INT64_MAX,
		      back = -2;

	sc_schema_init(&sch, 2, types, NULL);
	cr_assert_eq(sc_graph_create(&g), 0);
	a = sc_graph_input(g, "a", &sch);
	b = sc_graph_input(g, "b", &sch);
	out = sc_graph_output(g, "anti", sc_graph_antijoin(g, a, b, 1));
	cr_assert_geq(out, 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_create(g, &c), 0);
	cr_assert_eq(feed_step(c, b, rows(1, id, &one)), 1);
	cr_assert_eq(feed_step(c, a, rows(1, id, &max)), 1);
	cr_assert_eq(feed_step(c, a, rows(1, id, &one)), 1);
	cr_assert_geq(feed_step(c, b, rows(1, id, &minus)), 2,
		      "the output row is emitted over two steps");
	cr_assert_eq(feed_step(c, a, rows(1, id, &back)), 1);
	cr_assert_eq(sc_circuit_integral(c, out, &got), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_batch_count(got), 1);
	cr_assert_eq(sc_batch_weight(got, 0), INT64_MAX - 1);
	sc_batch_release(got);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(g), 0);
}
