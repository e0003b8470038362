/*
 * test_partial_join.c - joins whose weight products or output weights
 * leave int64 only between steps: a partial integral of
 * one side times the other side's delta, or an output row's integral,
 * passes int64 in one grouping of the deltas into steps and not in
 * another. Stepped one delta pair at a time or all at once, the same
 * deltas must give the same output integral, the settled one, and no step
 * may fail.
 */
#include <criterion/criterion.h>
#include <stdint.h>

#include "operators/join.h"
#include "operators/schema.h"
#include "tests/support/prop.h"

#define MAXSTEPS 4

/* One step's deltas: a's row (k, x) and b's row (k, y), weight 0: none. */
struct pair_step {
	int64_t wa, wb;
};

static struct sc_batch *
row2(int64_t k, int64_t v, int64_t w)
{
	uint64_t rec[] = {sc_enc_i64(k), sc_enc_i64(v)};
	struct sc_batch *out;

	if (w == 0)
		cr_assert_eq(sc_batch_empty(2, &out), 0);
	else
		cr_assert_eq(sc_batch_from_records(2, rec, &w, 1, &out), 0);
	return out;
}

static struct sc_batch *
one_row(const uint64_t *rec, int64_t w)
{
	struct sc_batch *out;

	cr_assert_eq(sc_batch_from_records(2, rec, &w, 1, &out), 0);
	return out;
}

/* Sum b into *acc (consumed). */
static void
accumulate(struct sc_batch **acc, struct sc_batch *b)
{
	struct sc_batch *t;
	int rc = sc_batch_add(*acc, b, &t);

	cr_assert_eq(rc, 0, "output integral: %s: %s", sc_errname(rc),
		     sc_errdetail());
	sc_batch_release(*acc);
	sc_batch_release(b);
	*acc = t;
}

/* Step a fresh join through s[0..n) in groups of `group` steps, each
 * group's deltas summed into one step; the sum of its outputs. */
static struct sc_batch *
run_grouped(const struct pair_step *s, size_t n, size_t group)
{
	struct sc_join *j;
	struct sc_batch *acc;

	cr_assert_eq(sc_join_create(2, 2, 1, &j), 0);
	cr_assert_eq(sc_batch_empty(3, &acc), 0);
	for (size_t i = 0; i < n; i += group) {
		struct sc_batch *da[MAXSTEPS], *db[MAXSTEPS], *sa, *sb, *out;
		size_t m = n - i < group ? n - i : group;
		int rc;

		for (size_t q = 0; q < m; q++) {
			da[q] = row2(7, 1, s[i + q].wa);
			db[q] = row2(7, 2, s[i + q].wb);
		}
		cr_assert_eq(sc_batch_sum(da, m, &sa), 0);
		cr_assert_eq(sc_batch_sum(db, m, &sb), 0);
		rc = sc_join_step(j, sa, sb, &out);
		cr_assert_eq(rc, 0, "step %zu of groups of %zu: %s: %s", i,
			     group, sc_errname(rc), sc_errdetail());
		accumulate(&acc, out);
		cr_assert_eq(sc_join_work(j, SIZE_MAX), 0);
		for (size_t q = 0; q < m; q++) {
			sc_batch_release(da[q]);
			sc_batch_release(db[q]);
		}
		sc_batch_release(sa);
		sc_batch_release(sb);
	}
	sc_join_destroy(j);
	return acc;
}

/* Every grouping settles at (7, 1, 2) x want. */
static void
settles_at(const struct pair_step *s, size_t n, int64_t want)
{
	for (size_t group = 1; group <= n; group += n - 1) {
		struct sc_batch *got = run_grouped(s, n, group);

		cr_assert_eq(sc_batch_count(got), 1, "groups of %zu: %zu rows",
			     group, sc_batch_count(got));
		cr_assert_eq(sc_batch_weight(got, 0), want,
			     "groups of %zu: weight %lld, want %lld", group,
			     (long long)sc_batch_weight(got, 0),
			     (long long)want);
		cr_assert_eq(sc_dec_i64(sc_batch_row(got, 0)[2]), 2);
		sc_batch_release(got);
	}
}

/* Ib is 2^62 when da = 4 comes with db = -2^62 + 1: da * Ib = 2^64 and
 * da * db = -2^64 + 4, while the step's output (4) fits. */
Test(partial_join, a_product_past_int64_whose_step_output_fits_fails_no_step)
{
	const struct pair_step s[] = {{0, INT64_C(1) << 62},
				      {4, -(INT64_C(1) << 62) + 1}};

	settles_at(s, 2, 4);
}

/* 2^32 * 2^32: the output row's integral is 2^64 after the first step and
 * 2^32 once b's weight comes back to 1. */
Test(partial_join, an_output_weight_past_int64_between_steps_settles_exactly)
{
	const struct pair_step s[] = {{INT64_C(1) << 32, INT64_C(1) << 32},
				      {0, -(INT64_C(1) << 32) + 1}};

	settles_at(s, 2, INT64_C(1) << 32);
}

/* b's row reaches MAX + 1 (the trace holds it wide) while a's row meets
 * it, and settles at MAX - 1. */
Test(partial_join, a_side_row_weight_past_int64_between_steps_fails_no_step)
{
	const struct pair_step s[] = {{0, INT64_MAX}, {0, 1}, {1, 0}, {0, -2}};

	settles_at(s, 4, INT64_MAX - 1);
}

/* A negative output past int64 between steps (-2^64, -2^65, -2^66), then
 * back: a settles at -3, b at 3. */
Test(partial_join, a_negative_output_past_int64_between_steps_settles_exactly)
{
	const struct pair_step s[] = {
	    {-(INT64_C(1) << 33), INT64_C(1) << 31},
	    {0, INT64_C(1) << 31},
	    {-(INT64_C(1) << 33), 0},
	    {(INT64_C(1) << 34) - 3, -(INT64_C(1) << 32) + 3}};

	settles_at(s, 4, -9);
}

/* A random delta of n rows (k, v) of keys 0..3, values 0..5, small
 * weights; NULL when it comes out empty. */
static struct sc_batch *
random_delta(struct sc_rng *r, size_t n)
{
	struct sc_batch_builder b;
	struct sc_batch *out;

	cr_assert_eq(sc_batch_builder_init(&b, 2), 0);
	for (size_t i = 0; i < n; i++) {
		uint64_t row[2] = {sc_enc_i64(sc_rng_range(r, 0, 3)),
				   sc_enc_i64(sc_rng_range(r, 0, 5))};

		cr_assert_eq(
		    sc_batch_builder_push(&b, row, 2, sc_rng_range(r, -3, 3)),
		    0);
	}
	cr_assert_eq(sc_batch_builder_finish(&b, &out), 0);
	sc_batch_builder_fini(&b);
	if (sc_batch_count(out) == 0) {
		sc_batch_release(out);
		return NULL;
	}
	return out;
}

/* The wide step (taken past the mass bound, join.h) and the narrow one
 * give the same output for every step where all weights fit: the first
 * join's mass is pushed past the bound by a row of another key, put in
 * and taken back. */
Test(partial_join, the_wide_step_agrees_with_the_narrow_one_where_weights_fit)
{
	uint64_t base = sc_prop_seed(2103), cases = sc_prop_count(50);
	char rbuf[256];

	for (uint64_t c = 0; c < cases; c++) {
		uint64_t seed = base + c;
		struct sc_join *wide, *narrow;
		struct sc_rng r;
		uint64_t far[2] = {sc_enc_i64(99), 0};
		struct sc_batch *big = one_row(far, INT64_C(1) << 40);
		struct sc_batch *back = one_row(far, -(INT64_C(1) << 40));

		sc_rng_seed(&r, seed);
		sc_prop_replay(rbuf, sizeof(rbuf), seed, "partial_join",
			       "the_wide_step_agrees_with_the_narrow_one_"
			       "where_weights_fit");
		cr_assert_eq(sc_join_create(2, 2, 1, &wide), 0);
		cr_assert_eq(sc_join_create(2, 2, 1, &narrow), 0);
		for (int side = 0; side < 2; side++) {
			struct sc_batch *o1, *o2;

			cr_assert_eq(sc_join_step(wide, side ? NULL : big,
						  side ? big : NULL, &o1),
				     0);
			cr_assert_eq(sc_join_step(wide, side ? NULL : back,
						  side ? back : NULL, &o2),
				     0);
			sc_batch_release(o1);
			sc_batch_release(o2);
		}
		for (int step = 0; step < 12; step++) {
			struct sc_batch *da =
			    random_delta(&r, sc_rng_below(&r, 6));
			struct sc_batch *db =
			    random_delta(&r, sc_rng_below(&r, 6));
			struct sc_batch *ow, *on;
			int rc = sc_join_step(wide, da, db, &ow);

			cr_assert_eq(rc, 0, "%s: step %d: %s", rbuf, step,
				     sc_errdetail());
			cr_assert_eq(sc_join_step(narrow, da, db, &on), 0);
			cr_assert(sc_batch_equal(ow, on),
				  "%s: step %d: the outputs differ", rbuf,
				  step);
			sc_batch_release(ow);
			sc_batch_release(on);
			sc_batch_release(da);
			sc_batch_release(db);
			if (step % 4 == 3) {
				cr_assert_eq(sc_join_work(wide, 64), 0);
				cr_assert_eq(sc_join_work(narrow, 64), 0);
			}
		}
		sc_batch_release(big);
		sc_batch_release(back);
		sc_join_destroy(wide);
		sc_join_destroy(narrow);
	}
}

/* An antijoin whose a row passes int64 (MAX + 1) while its key is present
 * in b, and settles at MAX - 1 once b's row is gone: no step fails, and
 * stepped one delta at a time or all at once it settles there. */
Test(partial_join, an_antijoin_side_past_int64_between_steps_fails_no_step)
{
	const struct pair_step s[] = {
	    {0, 1}, {INT64_MAX, 0}, {1, 0}, {-2, 0}, {0, -1}};

	for (size_t group = 1; group <= 5; group += 4) {
		struct sc_antijoin *aj;
		struct sc_batch *acc;

		cr_assert_eq(sc_antijoin_create(2, 2, 1, &aj), 0);
		cr_assert_eq(sc_batch_empty(2, &acc), 0);
		for (size_t i = 0; i < 5; i += group) {
			struct sc_batch *da[5], *db[5], *sa, *sb, *out;
			size_t m = 5 - i < group ? 5 - i : group;
			int rc;

			for (size_t q = 0; q < m; q++) {
				da[q] = row2(7, 1, s[i + q].wa);
				db[q] = row2(7, 2, s[i + q].wb);
			}
			cr_assert_eq(sc_batch_sum(da, m, &sa), 0);
			cr_assert_eq(sc_batch_sum(db, m, &sb), 0);
			rc = sc_antijoin_step(aj, sa, sb, &out);
			cr_assert_eq(rc, 0, "step %zu of groups of %zu: %s: %s",
				     i, group, sc_errname(rc), sc_errdetail());
			accumulate(&acc, out);
			for (size_t q = 0; q < m; q++) {
				sc_batch_release(da[q]);
				sc_batch_release(db[q]);
			}
			sc_batch_release(sa);
			sc_batch_release(sb);
		}
		cr_assert_eq(sc_batch_count(acc), 1, "groups of %zu", group);
		cr_assert_eq(sc_batch_weight(acc, 0), INT64_MAX - 1,
			     "groups of %zu", group);
		sc_batch_release(acc);
		sc_antijoin_destroy(aj);
	}
}
