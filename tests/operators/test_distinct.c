/*
 * test_distinct.c - the counting distinct against a from-scratch reference
 * after every step of random delta sequences (with random merge work in
 * between), and bad input, which must change nothing.
 */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "operators/distinct.h"
#include "tests/support/op_gen.h"
#include "tests/support/prop.h"
#include "tests/support/zset_gen.h"

#define SUITE "distinct"

static uint64_t
col_small(struct sc_rng *r, uint32_t col, void *ctx)
{
	(void)ctx;
	return sc_rng_below(r, 4) + 100 * (uint64_t)col;
}

/* distinct of an integral from scratch: weight 1 for every positive row. */
static void
ref_distinct(const struct zref *in, struct zref *out)
{
	for (size_t i = 0; i < in->n; i++)
		if (in->w[i] > 0)
			zref_add(out, in->rows + i * in->ncols, 1);
}

Test(distinct, output_integral_is_distinct_of_the_input_integral)
{
	uint64_t base = sc_prop_seed(7201);

	for (uint64_t c = 0; c < sc_prop_count(40); c++) {
		struct sc_rng r;
		struct zref in, got;
		struct sc_distinct *d;
		struct opgen g;
		uint32_t ncols;

		sc_rng_seed(&r, base + c);
		ncols = 1 + (uint32_t)sc_rng_below(&r, 3);
		g = (struct opgen){ncols, 0, col_small, NULL, true};
		zref_init(&in, ncols);
		zref_init(&got, ncols);
		cr_assert_eq(sc_distinct_create(ncols, &d), 0);
		for (int step = 0; step < 40; step++) {
			struct sc_batch *delta =
			    sc_rng_below(&r, 8) == 0
				? NULL
				: opgen_delta(&r, &g, &in,
					      sc_rng_below(&r, 10));
			struct sc_batch *out;
			struct zref want;
			const uint64_t *bad = NULL;
			int rc = sc_distinct_step(d, delta, &out);

			SC_PROP_ASSERT(base + c, SUITE,
				       "output_integral_is_distinct_of_the_"
				       "input_integral",
				       rc == 0, "step %d: %s", step,
				       sc_errmsg());
			cr_assert(sc_batch_is_consolidated(out));
			for (size_t i = 0; i < sc_batch_count(out); i++)
				cr_assert(sc_batch_weight(out, i) == 1 ||
					  sc_batch_weight(out, i) == -1);
			if (delta)
				zref_add_batch(&in, delta, 1);
			zref_add_batch(&got, out, 1);
			sc_batch_release(delta);
			sc_batch_release(out);
			zref_init(&want, ncols);
			ref_distinct(&in, &want);
			SC_PROP_ASSERT(base + c, SUITE,
				       "output_integral_is_distinct_of_the_"
				       "input_integral",
				       zref_same(&want, &got, &bad),
				       "step %d: row %llu... want %lld got "
				       "%lld",
				       step, (unsigned long long)bad[0],
				       zref_w(&want, bad), zref_w(&got, bad));
			zref_fini(&want);
			if (sc_rng_below(&r, 2))
				cr_assert_eq(
				    sc_distinct_work(d, sc_rng_below(&r, 30)),
				    0);
		}
		cr_assert_eq(sc_distinct_work(d, SIZE_MAX), 0);
		cr_assert_eq(sc_distinct_pending(d), 0);
		sc_distinct_destroy(d);
		zref_fini(&in);
		zref_fini(&got);
	}
}

static struct sc_batch *
one(uint32_t ncols, const uint64_t *row, int64_t w)
{
	struct sc_batch *b;

	cr_assert_eq(sc_batch_from_records(ncols, row, &w, 1, &b), 0);
	return b;
}

Test(distinct, output_changes_only_when_a_weight_crosses_zero)
{
	struct sc_distinct *d;
	uint64_t row[1] = {7};
	int64_t ws[] = {2, 3, -4, -1, -5, 6};
	int64_t want[] = {1, 0, 0, -1, 0, 1};
	struct sc_batch *out;

	cr_assert_eq(sc_distinct_create(1, &d), 0);
	for (size_t i = 0; i < sizeof(ws) / sizeof(ws[0]); i++) {
		struct sc_batch *b = one(1, row, ws[i]);

		cr_assert_eq(sc_distinct_step(d, b, &out), 0);
		cr_assert_eq(sc_batch_count(out), want[i] != 0, "step %zu", i);
		if (want[i])
			cr_assert_eq(sc_batch_weight(out, 0), want[i]);
		sc_batch_release(out);
		sc_batch_release(b);
	}
	sc_distinct_destroy(d);
}

Test(distinct, wrong_width_is_eschema_and_changes_nothing)
{
	struct sc_distinct *d;
	uint64_t row[2] = {1, 2};
	struct sc_batch *b2 = one(2, row, 1), *b1 = one(1, row, 1);
	struct sc_batch *out = NULL;

	cr_assert_eq(sc_distinct_create(1, &d), 0);
	cr_assert_eq(sc_distinct_step(d, b2, &out), SC_ESCHEMA);
	cr_assert_null(out);
	cr_assert(strstr(sc_errmsg(), "sc_distinct_step") != NULL);
	cr_assert_eq(sc_distinct_rows(d), 0);
	cr_assert_eq(sc_distinct_step(d, b1, &out), 0);
	cr_assert_eq(sc_batch_count(out), 1);
	sc_batch_release(out);
	sc_batch_release(b1);
	sc_batch_release(b2);
	sc_distinct_destroy(d);
}

/* An integrated weight past int64 is no error (it may be
 * a partial integral that a schedule's grouping of deltas made): held
 * exactly, MAX + 1 - MAX is 1, still live, and -1 then removes it. */
Test(distinct, integral_past_int64_is_held_exactly)
{
	struct sc_distinct *d;
	uint64_t row[1] = {1};
	struct sc_batch *big = one(1, row, INT64_MAX), *plus = one(1, row, 1);
	struct sc_batch *minus = one(1, row, -INT64_MAX), *out = NULL;
	struct sc_batch *last = one(1, row, -1);

	cr_assert_eq(sc_distinct_create(1, &d), 0);
	cr_assert_eq(sc_distinct_step(d, big, &out), 0);
	sc_batch_release(out);
	out = NULL;
	cr_assert_eq(sc_distinct_step(d, plus, &out), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_batch_count(out), 0, "still live: no change");
	sc_batch_release(out);
	cr_assert_eq(sc_distinct_step(d, minus, &out), 0);
	cr_assert_eq(sc_batch_count(out), 0, "1 is still live");
	sc_batch_release(out);
	cr_assert_eq(sc_distinct_step(d, last, &out), 0);
	cr_assert_eq(sc_batch_count(out), 1);
	cr_assert_eq(sc_batch_weight(out, 0), -1);
	cr_assert_eq(sc_distinct_rows(d), 0);
	sc_batch_release(out);
	sc_batch_release(last);
	sc_batch_release(big);
	sc_batch_release(plus);
	sc_batch_release(minus);
	sc_distinct_destroy(d);
}

/* The header's contract: a step is never SC_EOVERFLOW, however far an
 * integrated weight goes past int64 in either direction and back. */
Test(distinct, a_step_is_never_eoverflow_past_int64_either_way)
{
	struct sc_distinct *d;
	uint64_t row[1] = {3};
	int64_t w[] = {INT64_MAX,  INT64_MAX,  INT64_MAX,  -INT64_MAX,
		       -INT64_MAX, -INT64_MAX, -INT64_MAX, -INT64_MAX,
		       INT64_MAX,  INT64_MAX,  1};
	/* the integral after each step: live (> 0) or not */
	bool live[] = {true,  true,  true,  true,  true, false,
		       false, false, false, false, true};
	bool was = false;

	cr_assert_eq(sc_distinct_create(1, &d), 0);
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		struct sc_batch *in = one(1, row, w[i]), *out = NULL;
		int rc = sc_distinct_step(d, in, &out);

		cr_assert_eq(rc, 0, "step %zu: %s", i, sc_errmsg());
		cr_assert_eq(sc_batch_count(out), live[i] != was ? 1u : 0u,
			     "step %zu", i);
		if (live[i] != was)
			cr_assert_eq(sc_batch_weight(out, 0), live[i] ? 1 : -1);
		was = live[i];
		sc_batch_release(out);
		sc_batch_release(in);
	}
	cr_assert_eq(sc_distinct_rows(d), 1);
	sc_distinct_destroy(d);
}

Test(distinct, null_arguments_are_einval)
{
	struct sc_distinct *d;
	struct sc_batch *out;

	cr_assert_eq(sc_distinct_create(1, NULL), SC_EINVAL);
	cr_assert_eq(sc_distinct_create(0, &d), SC_ESCHEMA);
	cr_assert_eq(sc_distinct_create(1, &d), 0);
	cr_assert_eq(sc_distinct_step(NULL, NULL, &out), SC_EINVAL);
	cr_assert_eq(sc_distinct_step(d, NULL, NULL), SC_EINVAL);
	cr_assert_eq(sc_distinct_work(NULL, 1), SC_EINVAL);
	cr_assert_eq(sc_distinct_step(d, NULL, &out), 0);
	cr_assert_eq(sc_batch_count(out), 0);
	sc_batch_release(out);
	sc_distinct_destroy(d);
	sc_distinct_destroy(NULL);
}

Test(distinct, large_state_matches_a_dense_reference)
{
	enum { K = 12000, V = 4 };
	uint64_t seed = sc_prop_seed(7202);
	struct sc_rng r;
	int64_t *w = calloc((size_t)K * V, sizeof(int64_t));
	struct sc_distinct *d;
	struct sc_batch *acc;

	cr_assert_not_null(w);
	sc_rng_seed(&r, seed);
	cr_assert_eq(sc_distinct_create(2, &d), 0);
	cr_assert_eq(sc_batch_empty(2, &acc), 0);
	for (int step = 0; step < 12; step++) {
		struct sc_batch *delta =
		    opgen_dense_delta(&r, w, K, V, step < 2 ? 100000 : 500);
		struct sc_batch *out, *want;
		struct sc_batch_builder b;

		cr_assert_eq(sc_distinct_step(d, delta, &out), 0, "%s",
			     sc_errmsg());
		opgen_dense_add(w, V, delta);
		opgen_accumulate(&acc, out);
		sc_batch_release(delta);
		cr_assert_eq(sc_batch_builder_init(&b, 2), 0);
		for (uint64_t c = 0; c < (uint64_t)K * V; c++) {
			uint64_t row[2] = {c / V, c % V};

			if (w[c] > 0)
				cr_assert_eq(
				    sc_batch_builder_push(&b, row, 2, 1), 0);
		}
		cr_assert_eq(sc_batch_builder_finish(&b, &want), 0);
		sc_batch_builder_fini(&b);
		SC_PROP_ASSERT(seed, SUITE,
			       "large_state_matches_a_dense_reference",
			       sc_batch_equal(acc, want), "step %d", step);
		sc_batch_release(want);
		cr_assert_eq(sc_distinct_work(d, 5000), 0);
	}
	sc_batch_release(acc);
	sc_distinct_destroy(d);
	free(w);
}

/* A row passing int64 late in a delta widens the table mid-step: the rows
 * before it, applied in the narrow layout, stay applied and exact. */
Test(distinct, a_row_past_int64_late_in_a_delta_is_held_exactly)
{
	struct sc_distinct *d;
	uint64_t hi[1] = {9}, rows3[3] = {1, 2, 9};
	int64_t w3[3] = {5, -2, 1};
	struct sc_batch *big = one(1, hi, INT64_MAX), *mixed, *out = NULL;

	cr_assert_eq(sc_batch_from_records(1, rows3, w3, 3, &mixed), 0);
	cr_assert_eq(sc_distinct_create(1, &d), 0);
	cr_assert_eq(sc_distinct_step(d, big, &out), 0);
	sc_batch_release(out);
	out = NULL;
	/* Rows 1 and 2 come first in the delta, row 9 then reaches MAX + 1. */
	cr_assert_eq(sc_distinct_step(d, mixed, &out), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_batch_count(out), 1, "row 1 appears, 9 stays");
	cr_assert_eq(sc_batch_row(out, 0)[0], 1);
	cr_assert_eq(sc_batch_weight(out, 0), 1);
	cr_assert_eq(sc_distinct_rows(d), 3);
	sc_batch_release(out);
	/* 1: 10, 2: -4, 9: MAX again: nothing changes sign. */
	w3[2] = -1;
	sc_batch_release(mixed);
	cr_assert_eq(sc_batch_from_records(1, rows3, w3, 3, &mixed), 0);
	cr_assert_eq(sc_distinct_step(d, mixed, &out), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_batch_count(out), 0);
	cr_assert_eq(sc_distinct_rows(d), 3);
	sc_batch_release(out);
	sc_batch_release(mixed);
	sc_batch_release(big);
	sc_distinct_destroy(d);
}
