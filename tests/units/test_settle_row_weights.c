/*
 * test_settle_row_weights.c - the settle property on inputs where a ROW's
 * integrated weight, or a group's count of NaN rows, passes int64 between
 * submissions while every settled value fits (the sums
 * and counts of aggregates are test_settle_overflow.c's).
 *
 * Input `rows` gets, per group, a row of weight near +-MAX that stays and
 * transient submissions of the same row (weights near +-MAX, each added by
 * one submission and taken back by a later one, at random places): its
 * integral after some submissions is outside int64, and how turns group
 * the submissions decides which of those a unit ever steps, or sums in a
 * feed. It feeds an output (a trace), a distinct and a COUNT. Input `nans`
 * gets rows (g, id, NaN), each within int64, whose group's NaN count
 * passes int64 the same way, into an f64 SUM. The single circuit, one step
 * per submission, passes int64 too (the first transient comes right after
 * its base, its retraction last). Every placement and schedule must settle
 * where one consolidated submission per input does, with no unit
 * panicking. Seeded scheduler, budgets of 1..4 frames a turn (so a turn
 * sums several submissions in its feed, and steps early where their sum
 * would leave int64). SC_SEED replays one input seed.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "operators/aggregate.h"
#include "operators/schema.h"
#include "tests/support/prop.h"
#include "tests/support/settle_sweep.h"
#include "units/placement.h"
#include "units/runtime.h"
#include "units/settle.h"

#define NGROUPS	  2
#define NPAIRS	  3 /* transient submissions per group and input */
#define NSUBS	  ((size_t)2 * NGROUPS * (1 + 2 * NPAIRS))
#define NSCHEDULE 10
/* Edge capacities: 64 never fills (more frames than any run sends one),
 * 2 fills, so a full edge coalesces frames into its outbox, whose partial
 * sums pass int64 too (units/edge.c, outbox_add queues a frame there). */
struct sub {
	int in; /* 0: rows, 1: nans */
	uint64_t row[3];
	int64_t w;
};

/* Shuffle s[lo, hi) in place. */
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
	uint64_t nan = sc_enc_f64(NAN), five = sc_enc_i64(5);

	sc_rng_seed(&r, seed);
	for (int in = 0; in < 2; in++) {
		for (int64_t g = 0; g < NGROUPS; g++) {
			int64_t sign = g % 2 ? -1 : 1;
			uint64_t key = sc_enc_i64(g), v = in ? nan : five;
			size_t first = k;

			s[k++] = (struct sub){
			    in,
			    {key, 0, v},
			    sign * (INT64_MAX - sc_rng_range(&r, 0, 9))};
			for (uint64_t p = 1; p <= NPAIRS; p++) {
				int64_t big = sign * (INT64_MAX -
						      sc_rng_range(&r, 0, 99));
				/* rows: the same row again; nans: a row of
				 * its own, whose group count passes. */
				uint64_t id = in ? p : 0;

				s[k++] = (struct sub){in, {key, id, v}, big};
				s[k++] = (struct sub){in, {key, id, v}, -big};
			}
			/* The base, the first transient and (swapped to
			 * the end) its retraction stay put. */
			{
				struct sub t = s[first + 2];

				s[first + 2] = s[k - 1];
				s[k - 1] = t;
			}
			shuffle(&r, s, first + 2, k - 1);
		}
	}
	return k;
}

static struct sc_graph *
row_weight_graph(int *in_rows, int *in_nans)
{
	enum sc_type types[3] = {SC_TYPE_I64, SC_TYPE_U64, SC_TYPE_I64};
	enum sc_type ftypes[3] = {SC_TYPE_I64, SC_TYPE_U64, SC_TYPE_F64};
	struct sc_aggregate_spec cnt = {3, 1, SC_AGG_COUNT, 0, SC_TYPE_I64};
	struct sc_aggregate_spec sum = {3, 1, SC_AGG_SUM, 2, SC_TYPE_F64};
	struct sc_schema sch, fsch;
	struct sc_graph *g;

	sc_schema_init(&sch, 3, types, NULL);
	sc_schema_init(&fsch, 3, ftypes, NULL);
	cr_assert_eq(sc_graph_create(&g), 0);
	*in_rows = sc_graph_input(g, "rows", &sch);
	*in_nans = sc_graph_input(g, "nans", &fsch);
	cr_assert_geq(sc_graph_output(g, "plain", *in_rows), 0);
	cr_assert_geq(
	    sc_graph_output(g, "distinct", sc_graph_distinct(g, *in_rows)), 0,
	    "%s", sc_errmsg());
	cr_assert_geq(
	    sc_graph_output(g, "counts", sc_graph_aggregate(g, *in_rows, &cnt)),
	    0, "%s", sc_errmsg());
	cr_assert_geq(
	    sc_graph_output(g, "nansum", sc_graph_aggregate(g, *in_nans, &sum)),
	    0, "%s", sc_errmsg());
	return g;
}

Test(settle_row_weights, row_weights_past_int64_between_steps_settle_everywhere)
{
	uint64_t base = sc_prop_seed(2102), cases = sc_prop_count(3);
	int inputs[2];
	uint64_t runs = 0;
	struct sc_graph *g = row_weight_graph(&inputs[0], &inputs[1]);
	char rbuf[256];

	for (uint64_t c = 0; c < cases; c++) {
		uint64_t seed = base + c;
		struct sub s[NSUBS];
		struct sc_settle_step steps[NSUBS], whole[2];
		struct sc_settle_work *work = NULL;
		size_t n = make_subs(seed, s);
		int rc;

		for (size_t i = 0; i < n; i++) {
			steps[i].input = inputs[s[i].in];
			cr_assert_eq(sc_batch_from_records(3, s[i].row, &s[i].w,
							   1, &steps[i].batch),
				     0);
		}
		sc_prop_replay(rbuf, sizeof(rbuf), seed, "settle_row_weights",
			       "row_weights_past_int64_between_steps_settle_"
			       "everywhere");
		rc = sc_settle_work_create(g, steps, n, 0, &work);
		cr_assert_eq(rc, 0, "the single circuit: %s: %s", rbuf,
			     sc_errmsg());
		sc_sweep_consolidate(steps, n, inputs, 2, whole);
		cr_assert_eq(sc_settle_work_reference(work, whole, 2), 0, "%s",
			     sc_errmsg());
		runs += sc_sweep_settle(work, g, seed, NSCHEDULE, 4, rbuf);
		sc_settle_work_destroy(work);
		for (size_t i = 0; i < n; i++)
			sc_batch_release(steps[i].batch);
		for (int in = 0; in < 2; in++)
			sc_batch_release(whole[in].batch);
	}
	cr_assert_eq(runs, cases * SC_SWEEP_NSTRATEGIES * NSCHEDULE);
	cr_assert_eq(sc_graph_destroy(g), 0);
}
