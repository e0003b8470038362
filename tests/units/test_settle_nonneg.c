/*
 * test_settle_nonneg.c - the settle property for aggregates declared
 * SC_AGG_NONNEGATIVE (operators/aggregate.h, "Nonnegative inputs"): their
 * state is (total weight, sum) per group, so every placement and schedule
 * settles where the single circuit does, even where a unit's PARTIAL
 * integral holds a negative row (a retraction that came before its
 * insertion); and at the settled end they equal the row-keeping
 * aggregates over the same input.
 *
 * Input `rows` (g, id, v): each row's submissions are single-row batches
 * of weight +-1 that sum to its final weight (0, 1 or 2), shuffled, so
 * some retractions come first. It feeds COUNT, SUM and AVG declared
 * nonnegative directly; and a MAX per (g, id), whose output projected to
 * (g, max) (multiplicities, never negative settled) feeds an AVG declared
 * nonnegative, as Nexmark q4 does, and the same AVG keeping rows. Seeded
 * scheduler, 1 to 3 units, edge capacities 2 and 64. SC_SEED replays one
 * input seed.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "operators/aggregate.h"
#include "operators/circuit.h"
#include "operators/schema.h"
#include "tests/support/prop.h"
#include "tests/support/settle_sweep.h"
#include "units/placement.h"
#include "units/runtime.h"
#include "units/settle.h"

#define NROWS	  12
#define MAXSUBS	  (NROWS * 6)
#define NSCHEDULE 6
#define NOUTPUTS  5

struct nn_graph {
	struct sc_graph *g;
	int in;
	int avg_max, avg_max_rows; /* outputs compared at the end */
};

static int
agg_out(struct sc_graph *g, const char *name, int from,
	const struct sc_aggregate_spec *s, uint32_t flags)
{
	int a = sc_graph_aggregate_flags(g, from, s, flags);
	int o = sc_graph_output(g, name, a);

	cr_assert_geq(o, 0, "%s: %s", name, sc_errmsg());
	return o;
}

static void
nn_graph_init(struct nn_graph *c)
{
	enum sc_type t[3] = {SC_TYPE_I64, SC_TYPE_I64, SC_TYPE_I64};
	struct sc_aggregate_spec cnt = {3, 1, SC_AGG_COUNT, 0, SC_TYPE_I64};
	struct sc_aggregate_spec sum = {3, 1, SC_AGG_SUM, 2, SC_TYPE_I64};
	struct sc_aggregate_spec avg = {3, 1, SC_AGG_AVG, 2, SC_TYPE_I64};
	struct sc_aggregate_spec mx = {3, 2, SC_AGG_MAX, 2, SC_TYPE_I64};
	struct sc_aggregate_spec avg2 = {2, 1, SC_AGG_AVG, 1, SC_TYPE_I64};
	static const uint32_t gmax[2] = {0, 2};
	struct sc_schema s;
	int m, proj;

	cr_assert_eq(sc_schema_init(&s, 3, t, NULL), 0);
	cr_assert_eq(sc_graph_create(&c->g), 0);
	c->in = sc_graph_input(c->g, "rows", &s);
	(void)agg_out(c->g, "count", c->in, &cnt, SC_AGG_NONNEGATIVE);
	(void)agg_out(c->g, "sum", c->in, &sum, SC_AGG_NONNEGATIVE);
	(void)agg_out(c->g, "avg", c->in, &avg, SC_AGG_NONNEGATIVE);
	m = sc_graph_aggregate(c->g, c->in, &mx);
	proj = sc_graph_index_by(c->g, m, gmax, 2);
	cr_assert_geq(proj, 0, "%s", sc_errmsg());
	c->avg_max =
	    agg_out(c->g, "avg_of_max", proj, &avg2, SC_AGG_NONNEGATIVE);
	c->avg_max_rows = agg_out(c->g, "avg_of_max_rows", proj, &avg2, 0);
}

/* The submissions of one seed: single rows of weight +-1, shuffled. */
static size_t
make_subs(uint64_t seed, int in, struct sc_settle_step *steps)
{
	uint64_t rows[MAXSUBS][3];
	int64_t w[MAXSUBS];
	struct sc_rng r;
	size_t n = 0;

	sc_rng_seed(&r, seed);
	for (int i = 0; i < NROWS; i++) {
		uint64_t row[3] = {sc_enc_i64(sc_rng_range(&r, 0, 2)),
				   sc_enc_i64(i),
				   sc_enc_i64(sc_rng_range(&r, -20, 20))};
		int64_t fin = sc_rng_range(&r, 0, 2);
		int64_t pairs = sc_rng_range(&r, 0, 2);

		for (int64_t k = 0; k < fin + 2 * pairs; k++) {
			memcpy(rows[n], row, sizeof(row));
			w[n++] = k < fin + pairs ? 1 : -1;
		}
	}
	for (size_t i = n; i > 1; i--) {
		size_t j = sc_rng_below(&r, i);
		uint64_t t[3];
		int64_t tw = w[i - 1];

		memcpy(t, rows[i - 1], sizeof(t));
		memcpy(rows[i - 1], rows[j], sizeof(t));
		memcpy(rows[j], t, sizeof(t));
		w[i - 1] = w[j];
		w[j] = tw;
	}
	for (size_t i = 0; i < n; i++) {
		steps[i].input = in;
		cr_assert_eq(sc_batch_from_records(3, rows[i], &w[i], 1,
						   &steps[i].batch),
			     0);
	}
	return n;
}

/* The single circuit, fed every submission: the nonnegative AVG of the
 * MAX's projection equals the row-keeping one, and no breach is left. */
static void
assert_flagged_equals_rows(struct nn_graph *c, struct sc_settle_step *steps,
			   size_t n, uint64_t seed)
{
	struct sc_circuit *circ;
	struct sc_batch *a = NULL, *b = NULL;
	char rbuf[256];

	cr_assert_eq(sc_circuit_create(c->g, &circ), 0, "%s", sc_errmsg());
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(sc_circuit_feed(circ, c->in, steps[i].batch), 0);
		cr_assert_eq(sc_circuit_step(circ), 0, "%s", sc_errmsg());
	}
	cr_assert_eq(sc_circuit_integral(circ, c->avg_max, &a), 0, "%s",
		     sc_errmsg());
	cr_assert_eq(sc_circuit_integral(circ, c->avg_max_rows, &b), 0, "%s",
		     sc_errmsg());
	cr_assert(sc_batch_equal(a, b), "%zu rows, row-keeping %zu: %s",
		  sc_batch_count(a), sc_batch_count(b),
		  sc_prop_replay(rbuf, sizeof(rbuf), seed, "settle_nonneg",
				 "nonnegative_aggregates_settle_everywhere"));
	sc_batch_release(a);
	sc_batch_release(b);
	sc_circuit_destroy(circ);
}

Test(settle_nonneg, nonnegative_aggregates_settle_everywhere)
{
	uint64_t base = sc_prop_seed(1604), cases = sc_prop_count(3);
	struct nn_graph c;
	uint64_t runs = 0;
	char rbuf[256];

	nn_graph_init(&c);
	for (uint64_t k = 0; k < cases; k++) {
		uint64_t seed = base + k;
		struct sc_settle_step steps[MAXSUBS];
		struct sc_settle_work *work = NULL;
		size_t n = make_subs(seed, c.in, steps);

		sc_prop_replay(rbuf, sizeof(rbuf), seed, "settle_nonneg",
			       "nonnegative_aggregates_settle_everywhere");
		assert_flagged_equals_rows(&c, steps, n, seed);
		cr_assert_eq(sc_settle_work_create(c.g, steps, n, 0, &work), 0,
			     "the single circuit: %s: %s", rbuf, sc_errmsg());
		runs +=
		    sc_sweep_settle(work, c.g, seed, NSCHEDULE, NOUTPUTS, rbuf);
		sc_settle_work_destroy(work);
		for (size_t i = 0; i < n; i++)
			sc_batch_release(steps[i].batch);
	}
	cr_assert_eq(runs, cases * SC_SWEEP_NSTRATEGIES * NSCHEDULE);
	cr_assert_eq(sc_graph_destroy(c.g), 0);
}
