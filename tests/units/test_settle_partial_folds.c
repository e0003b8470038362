/*
 * test_settle_partial_folds.c - the settle property where a LINEAR fold or
 * a JOIN passes int64 only between submissions while every settled value
 * fits (row weights, sums and counts are
 * test_settle_row_weights.c's and test_settle_overflow.c's).
 *
 * Input `x` gets, per group g, a row (g, 0, 5) of weight near +-2^62 that
 * stays and transient rows (g, p, 5) of weights near +-2^62, each added by
 * one submission and taken back by a later one, at random places; a map
 * folds every row of a group into (g), so the map's delta in a step that
 * holds two transients (or a transient and the base) is outside int64
 * while the settled fold (the base) fits; an index_by folds the same way,
 * and the fold is doubled by a plus (m + m) and by a minus (m - (-m)), so
 * their deltas pass int64 sooner. Inputs `y` and `z` get, per group, a row of
 * weight 2^31 that stays and transients of +-2^40 of the same row: the join of
 * y and z on g has products and output integrals near 2^71 between submissions,
 * while the settled output (2^62) fits. An antijoin of the fold by z sees
 * z's group 1 present only while a transient is in, so it emits and
 * retracts the fold's partial integrals, past int64 (the carry,
 * circuit.h). The single circuit steps once per
 * submission. Every placement and schedule must settle where one consolidated
 * submission per input does, with no unit panicking. Seeded scheduler, budgets
 * of 1..4 frames a turn, edge capacities 2 and
 * 64. SC_SEED replays one input seed.
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "operators/schema.h"
#include "tests/support/prop.h"
#include "tests/support/settle_sweep.h"
#include "units/placement.h"
#include "units/runtime.h"
#include "units/settle.h"

#define NGROUPS	  2
#define NPAIRS	  3 /* transient submissions per group and input */
#define NINPUTS	  3
#define NSUBS	  ((size_t)NINPUTS * NGROUPS * (1 + 2 * NPAIRS))
#define NSCHEDULE 8
#define NOUTPUTS  6

struct sub {
	int in; /* 0: x, 1: y, 2: z */
	uint64_t row[3];
	int64_t w;
};

static void
shuffle(struct sc_rng *r, struct sub *s, size_t lo, size_t hi)
{
	for (size_t i = hi - 1; i > lo; i--) {
		size_t j = lo + sc_rng_below(r, i - lo + 1);
		struct sub t = s[i];

		s[i] = s[j];
		s[j] = t;
	}
}

static size_t
make_subs(uint64_t seed, struct sub *s)
{
	struct sc_rng r;
	size_t k = 0;

	sc_rng_seed(&r, seed);
	for (int in = 0; in < NINPUTS; in++) {
		for (int64_t g = 0; g < NGROUPS; g++) {
			int64_t sign = g % 2 ? -1 : 1;
			uint64_t key = sc_enc_i64(g);
			uint64_t v = sc_enc_i64(in == 2 ? 7 : 5);
			size_t first = k;
			int64_t base = sign * ((in == 0 ? (INT64_C(1) << 62) - 1
							: INT64_C(1) << 31) -
					       sc_rng_range(&r, 0, 9));

			s[k++] = (struct sub){in, {key, 0, v}, base};
			for (uint64_t p = 1; p <= NPAIRS; p++) {
				/* x: rows of their own, folded by the map;
				 * y, z: the base row again. */
				int64_t big =
				    in == 0 ? sign * ((INT64_C(1) << 62) - 1 -
						      sc_rng_range(&r, 0, 99))
					    : (INT64_C(1) << 40) +
						  sc_rng_range(&r, 0, 99);
				uint64_t id = in == 0 ? p : 0;

				s[k++] = (struct sub){in, {key, id, v}, big};
				s[k++] = (struct sub){in, {key, id, v}, -big};
			}
			shuffle(&r, s, first, k);
		}
	}
	return k;
}

/* (g, id, v) -> (g, 0, 0): every row of a group folds into one. */
static int
fold_group(void *ctx, const uint64_t *row, uint64_t *out)
{
	(void)ctx;
	out[0] = row[0];
	out[1] = 0;
	out[2] = sc_enc_i64(0);
	return 0;
}

static struct sc_graph *
fold_graph(int *inputs)
{
	enum sc_type types[3] = {SC_TYPE_I64, SC_TYPE_U64, SC_TYPE_I64};
	static const uint32_t gcol[1] = {0};
	struct sc_schema sch, gsch;
	struct sc_graph *g;
	int m, ix, neg;

	sc_schema_init(&sch, 3, types, NULL);
	sc_schema_init(&gsch, 1, types, NULL);
	cr_assert_eq(sc_graph_create(&g), 0);
	inputs[0] = sc_graph_input(g, "x", &sch);
	inputs[1] = sc_graph_input(g, "y", &sch);
	inputs[2] = sc_graph_input(g, "z", &sch);
	m = sc_graph_map(g, inputs[0], &sch, fold_group, NULL);
	cr_assert_geq(m, 0, "%s", sc_errmsg());
	cr_assert_geq(sc_graph_output(g, "folded", m), 0, "%s", sc_errmsg());
	ix = sc_graph_index_by(g, inputs[0], gcol, 1);
	cr_assert_geq(ix, 0, "%s", sc_errmsg());
	cr_assert_geq(sc_graph_output(g, "indexed", ix), 0, "%s", sc_errmsg());
	/* m + m and m - (-m): plus, negate and minus of folded deltas. */
	neg = sc_graph_negate(g, m);
	cr_assert_geq(neg, 0, "%s", sc_errmsg());
	cr_assert_geq(sc_graph_output(g, "doubled", sc_graph_plus(g, m, m)), 0,
		      "%s", sc_errmsg());
	cr_assert_geq(sc_graph_output(g, "twice", sc_graph_minus(g, m, neg)), 0,
		      "%s", sc_errmsg());
	/* The fold's rows whose group has no positive row in z: z's group 1
	 * is present only while a transient is in. */
	cr_assert_geq(
	    sc_graph_output(g, "anti", sc_graph_antijoin(g, m, inputs[2], 1)),
	    0, "%s", sc_errmsg());
	cr_assert_geq(
	    sc_graph_output(g, "joined",
			    sc_graph_join(g, inputs[1], inputs[2], 1)),
	    0, "%s", sc_errmsg());
	return g;
}

Test(settle_partial_folds,
     folds_and_joins_past_int64_between_steps_settle_everywhere)
{
	uint64_t base = sc_prop_seed(2104), cases = sc_prop_count(3);
	int inputs[NINPUTS];
	uint64_t runs = 0;
	struct sc_graph *g = fold_graph(inputs);
	char rbuf[256];

	for (uint64_t c = 0; c < cases; c++) {
		uint64_t seed = base + c;
		struct sub s[NSUBS];
		struct sc_settle_step steps[NSUBS], whole[NINPUTS];
		struct sc_settle_work *work = NULL;
		size_t n = make_subs(seed, s);
		int rc;

		sc_prop_replay(rbuf, sizeof(rbuf), seed, "settle_partial_folds",
			       "folds_and_joins_past_int64_between_steps_"
			       "settle_everywhere");
		for (size_t i = 0; i < n; i++) {
			steps[i].input = inputs[s[i].in];
			cr_assert_eq(sc_batch_from_records(3, s[i].row, &s[i].w,
							   1, &steps[i].batch),
				     0);
		}
		rc = sc_settle_work_create(g, steps, n, 0, &work);
		cr_assert_eq(rc, 0, "the single circuit: %s: %s", rbuf,
			     sc_errmsg());
		sc_sweep_consolidate(steps, n, inputs, NINPUTS, whole);
		cr_assert_eq(sc_settle_work_reference(work, whole, NINPUTS), 0,
			     "%s", sc_errmsg());
		runs +=
		    sc_sweep_settle(work, g, seed, NSCHEDULE, NOUTPUTS, rbuf);
		sc_settle_work_destroy(work);
		for (size_t i = 0; i < n; i++)
			sc_batch_release(steps[i].batch);
		for (int in = 0; in < NINPUTS; in++)
			sc_batch_release(whole[in].batch);
	}
	cr_assert_eq(runs, cases * SC_SWEEP_NSTRATEGIES * NSCHEDULE);
	cr_assert_eq(sc_graph_destroy(g), 0);
}
