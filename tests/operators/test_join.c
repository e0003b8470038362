/*
 * test_join.c - the incremental join and antijoin against a from-scratch
 * reference after every step of random delta sequences (with random merge
 * work between steps), and bad input, which must change nothing.
 *
 * The reference is written out here with plain nested loops over the
 * naive Z-sets of zset_gen.h: it shares no code with join.c or trace.c.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "operators/join.h"
#include "tests/support/op_gen.h"
#include "tests/support/prop.h"
#include "tests/support/zset_gen.h"

#define SUITE "join"

/* Small domains, so keys collide and rows repeat. */
static uint64_t
col_small(struct sc_rng *r, uint32_t col, void *ctx)
{
	(void)ctx;
	return col == 0 ? sc_rng_below(r, 5) : sc_rng_below(r, 4) * 1000 + col;
}

/* The join of two integrals, from scratch: every pair of rows with equal
 * keys and non-zero weights. */
static void
ref_join(const struct zref *a, const struct zref *b, uint32_t k,
	 struct zref *out)
{
	uint64_t row[SC_SCHEMA_MAX_COLS];

	for (size_t i = 0; i < a->n; i++) {
		const uint64_t *ra = a->rows + i * a->ncols;

		if (a->w[i] == 0)
			continue;
		for (size_t j = 0; j < b->n; j++) {
			const uint64_t *rb = b->rows + j * b->ncols;
			uint32_t n = 0;

			if (b->w[j] == 0 ||
			    memcmp(ra, rb, (size_t)k * sizeof(uint64_t)) != 0)
				continue;
			for (uint32_t c = 0; c < a->ncols; c++)
				row[n++] = ra[c];
			for (uint32_t c = k; c < b->ncols; c++)
				row[n++] = rb[c];
			zref_add(out, row, a->w[i] * b->w[j]);
		}
	}
}

/* The antijoin from scratch: rows of a whose key has no row of positive
 * weight in b. */
static void
ref_antijoin(const struct zref *a, const struct zref *b, uint32_t k,
	     struct zref *out)
{
	for (size_t i = 0; i < a->n; i++) {
		const uint64_t *ra = a->rows + i * a->ncols;
		bool present = false;

		for (size_t j = 0; j < b->n && !present; j++)
			present = b->w[j] > 0 &&
				  memcmp(ra, b->rows + j * b->ncols,
					 (size_t)k * sizeof(uint64_t)) == 0;
		if (a->w[i] != 0 && !present)
			zref_add(out, ra, a->w[i]);
	}
}

struct sides {
	uint32_t an, bn, k;
	struct opgen ga, gb;
	struct zref ia, ib, out;
};

static void
sides_init(struct sides *s, struct sc_rng *r, uint32_t out_ncols_extra)
{
	s->k = (uint32_t)sc_rng_below(r, 3);
	s->an = s->k + 1 + (uint32_t)sc_rng_below(r, 2);
	s->bn = s->k + (uint32_t)sc_rng_below(r, 2) + (s->k == 0);
	s->ga = (struct opgen){s->an, s->k, col_small, NULL, true};
	s->gb = (struct opgen){s->bn, s->k, col_small, NULL, false};
	zref_init(&s->ia, s->an);
	zref_init(&s->ib, s->bn);
	zref_init(&s->out, out_ncols_extra ? s->an + s->bn - s->k : s->an);
}

static void
sides_fini(struct sides *s)
{
	zref_fini(&s->ia);
	zref_fini(&s->ib);
	zref_fini(&s->out);
}

/* A delta for one side, or sometimes none (NULL). */
static struct sc_batch *
maybe_delta(struct sc_rng *r, const struct opgen *g, const struct zref *z)
{
	if (sc_rng_below(r, 6) == 0)
		return NULL;
	return opgen_delta(r, g, z, sc_rng_below(r, 12));
}

static void
absorb(struct sides *s, struct sc_batch *da, struct sc_batch *db,
       struct sc_batch *out)
{
	if (da)
		zref_add_batch(&s->ia, da, 1);
	if (db)
		zref_add_batch(&s->ib, db, 1);
	zref_add_batch(&s->out, out, 1);
	sc_batch_release(da);
	sc_batch_release(db);
	sc_batch_release(out);
}

Test(join, output_integral_is_the_join_of_the_input_integrals)
{
	uint64_t base = sc_prop_seed(7001);

	for (uint64_t c = 0; c < sc_prop_count(40); c++) {
		struct sc_rng r;
		struct sides s;
		struct sc_join *j;

		sc_rng_seed(&r, base + c);
		sides_init(&s, &r, 1);
		cr_assert_eq(sc_join_create(s.an, s.bn, s.k, &j), 0, "%s",
			     sc_errmsg());
		cr_assert_eq(sc_join_out_ncols(j), s.an + s.bn - s.k);
		for (int step = 0; step < 30; step++) {
			struct sc_batch *da = maybe_delta(&r, &s.ga, &s.ia);
			struct sc_batch *db = maybe_delta(&r, &s.gb, &s.ib);
			struct sc_batch *out;
			struct zref want;
			const uint64_t *bad = NULL;
			int rc = sc_join_step(j, da, db, &out);

			SC_PROP_ASSERT(base + c, SUITE,
				       "output_integral_is_"
				       "the_join_of_the_input_integrals",
				       rc == 0, "step %d: %s", step,
				       sc_errmsg());
			cr_assert(sc_batch_is_consolidated(out));
			absorb(&s, da, db, out);
			zref_init(&want, s.out.ncols);
			ref_join(&s.ia, &s.ib, s.k, &want);
			SC_PROP_ASSERT(base + c, SUITE,
				       "output_integral_is_"
				       "the_join_of_the_input_integrals",
				       zref_same(&want, &s.out, &bad),
				       "step %d k %u: row %llu... want %lld "
				       "got %lld",
				       step, s.k, (unsigned long long)bad[0],
				       zref_w(&want, bad), zref_w(&s.out, bad));
			zref_fini(&want);
			if (sc_rng_below(&r, 2))
				cr_assert_eq(
				    sc_join_work(j, sc_rng_below(&r, 3)
							? sc_rng_below(&r, 40)
							: SIZE_MAX),
				    0);
		}
		sc_join_destroy(j);
		sides_fini(&s);
	}
}

/*
 * A join's output of more than 32 rows is finished in two parts, each of
 * which its pass pushed in key order (join.c, sides_commit): only the runs
 * of a key are sorted, then the parts merge. Deltas of 40 to 200 rows on
 * both sides make both parts long; each step's output is checked against
 * the reference join of the integrals.
 */
Test(join, large_deltas_keep_the_join_of_the_input_integrals)
{
	uint64_t base = sc_prop_seed(7101);

	for (uint64_t c = 0; c < sc_prop_count(20); c++) {
		struct sc_rng r;
		struct sides s;
		struct sc_join *j;

		sc_rng_seed(&r, base + c);
		sides_init(&s, &r, 1);
		cr_assert_eq(sc_join_create(s.an, s.bn, s.k, &j), 0, "%s",
			     sc_errmsg());
		for (int step = 0; step < 6; step++) {
			struct sc_batch *da = opgen_delta(
			    &r, &s.ga, &s.ia, 40 + sc_rng_below(&r, 160));
			struct sc_batch *db = opgen_delta(
			    &r, &s.gb, &s.ib, 40 + sc_rng_below(&r, 160));
			struct sc_batch *out;
			struct zref want;
			const uint64_t *bad = NULL;

			cr_assert_eq(sc_join_step(j, da, db, &out), 0, "%s",
				     sc_errmsg());
			SC_PROP_ASSERT(
			    base + c, SUITE,
			    "large_deltas_keep_the_join_of_the_"
			    "input_integrals",
			    sc_batch_is_consolidated(out),
			    "step %d: the output is not consolidated", step);
			absorb(&s, da, db, out);
			zref_init(&want, s.out.ncols);
			ref_join(&s.ia, &s.ib, s.k, &want);
			SC_PROP_ASSERT(base + c, SUITE,
				       "large_deltas_keep_the_join_of_the_"
				       "input_integrals",
				       zref_same(&want, &s.out, &bad),
				       "step %d k %u: a row's weight differs",
				       step, s.k);
			zref_fini(&want);
		}
		sc_join_destroy(j);
		sides_fini(&s);
	}
}

Test(join, merge_work_settles_the_spines)
{
	struct sc_rng r;
	struct sides s;
	struct sc_join *j;

	sc_rng_seed(&r, sc_prop_seed(7002));
	sides_init(&s, &r, 1);
	cr_assert_eq(sc_join_create(s.an, s.bn, s.k, &j), 0);
	for (int step = 0; step < 40; step++) {
		struct sc_batch *da = opgen_delta(&r, &s.ga, &s.ia, 8);
		struct sc_batch *db = opgen_delta(&r, &s.gb, &s.ib, 8);
		struct sc_batch *out;

		cr_assert_eq(sc_join_step(j, da, db, &out), 0, "%s",
			     sc_errmsg());
		absorb(&s, da, db, out);
	}
	cr_assert_gt(sc_join_pending(j), 0);
	cr_assert_eq(sc_join_work(j, SIZE_MAX), 0);
	cr_assert_eq(sc_join_pending(j), 0);
	cr_assert_gt(sc_join_bytes(j), 0);
	sc_join_destroy(j);
	sides_fini(&s);
}

Test(join, null_deltas_are_empty)
{
	struct sc_join *j;
	struct sc_batch *out;

	cr_assert_eq(sc_join_create(2, 2, 1, &j), 0);
	cr_assert_eq(sc_join_step(j, NULL, NULL, &out), 0);
	cr_assert_eq(sc_batch_count(out), 0);
	cr_assert_eq(sc_batch_ncols(out), 3);
	sc_batch_release(out);
	sc_join_destroy(j);
}

static struct sc_batch *
one(uint32_t ncols, const uint64_t *row, int64_t w)
{
	struct sc_batch *b;

	cr_assert_eq(sc_batch_from_records(ncols, row, &w, 1, &b), 0);
	return b;
}

Test(join, wrong_width_is_eschema_and_changes_nothing)
{
	struct sc_join *j;
	uint64_t ra[2] = {1, 10}, rb[3] = {1, 20, 30};
	struct sc_batch *a = one(2, ra, 1), *b3 = one(3, rb, 1), *out = NULL;

	cr_assert_eq(sc_join_create(2, 2, 1, &j), 0);
	cr_assert_eq(sc_join_step(j, a, b3, &out), SC_ESCHEMA);
	cr_assert_null(out);
	cr_assert(strstr(sc_errmsg(), "delta b") != NULL, "%s", sc_errmsg());
	cr_assert_eq(sc_join_rows(j), 0, "a's delta must not be absorbed");
	sc_batch_release(a);
	sc_batch_release(b3);
	sc_join_destroy(j);
}

/* Step j with da, db (NULL: none); the output's one row's weight, or 0
 * when the output is empty. */
static int64_t
step_weight(struct sc_join *j, const uint64_t *row, int64_t wa, int64_t wb)
{
	struct sc_batch *a = wa ? one(2, row, wa) : NULL;
	uint64_t rb[2] = {row[0], 20};
	struct sc_batch *b = wb ? one(2, rb, wb) : NULL, *out = NULL;
	int64_t w;
	int rc = sc_join_step(j, a, b, &out);

	cr_assert_eq(rc, 0, "%s: %s", sc_errname(rc), sc_errdetail());
	cr_assert_leq(sc_batch_count(out), 1);
	w = sc_batch_count(out) ? sc_batch_weight(out, 0) : 0;
	sc_batch_release(out);
	sc_batch_release(a);
	sc_batch_release(b);
	return w;
}

/* A product past int64 is no error: the output row's
 * integral is clamped at INT64_MAX, and exact again once it fits. */
Test(join, a_weight_product_past_int64_clamps_the_output_and_fails_no_step)
{
	struct sc_join *j;
	uint64_t ra[2] = {1, 10};

	cr_assert_eq(sc_join_create(2, 2, 1, &j), 0);
	cr_assert_eq(step_weight(j, ra, INT64_C(1) << 62, 0), 0);
	/* 2^62 * 4 = 2^64: clamped. */
	cr_assert_eq(step_weight(j, ra, 0, 4), INT64_MAX);
	/* b back to 1: 2^62, exact. */
	cr_assert_eq(step_weight(j, ra, 0, -3), (INT64_C(1) << 62) - INT64_MAX);
	sc_join_destroy(j);
}

/* An integral past int64 is no error either: a's row at MAX + 1 meets b,
 * and comes back to MAX - 1. */
Test(join, an_integral_past_int64_fails_no_step)
{
	struct sc_join *j;
	uint64_t ra[2] = {1, 10};

	cr_assert_eq(sc_join_create(2, 2, 1, &j), 0);
	cr_assert_eq(step_weight(j, ra, INT64_MAX, 0), 0);
	cr_assert_eq(step_weight(j, ra, 1, 0), 0);
	cr_assert_eq(step_weight(j, ra, 0, 1), INT64_MAX);
	cr_assert_eq(step_weight(j, ra, -2, 0), -1);
	sc_join_destroy(j);
}

/* What stays SC_EOVERFLOW: a step that moves an output row's (clamped)
 * integral by more than int64, from INT64_MIN to INT64_MAX; it changes
 * nothing. */
Test(join, a_change_beyond_int64_in_one_step_is_eoverflow_and_changes_nothing)
{
	struct sc_join *j;
	uint64_t ra[2] = {1, 10}, rb[2] = {1, 20};
	struct sc_batch *b = one(2, rb, 4), *out = NULL;

	cr_assert_eq(sc_join_create(2, 2, 1, &j), 0);
	cr_assert_eq(step_weight(j, ra, INT64_C(1) << 62, -2), INT64_MIN);
	cr_assert_eq(sc_join_step(j, NULL, b, &out), SC_EOVERFLOW);
	cr_assert_null(out);
	cr_assert_eq(sc_join_rows(j), 2, "b's delta must not be absorbed");
	/* The state is as before: b at -1 gives -2^62. */
	cr_assert_eq(step_weight(j, ra, 0, 1), -(INT64_C(1) << 62) - INT64_MIN);
	sc_batch_release(b);
	sc_join_destroy(j);
}

Test(join, null_arguments_are_einval)
{
	struct sc_join *j;
	struct sc_batch *out;

	cr_assert_eq(sc_join_create(2, 2, 1, NULL), SC_EINVAL);
	cr_assert_eq(sc_join_create(2, 2, 1, &j), 0);
	cr_assert_eq(sc_join_step(NULL, NULL, NULL, &out), SC_EINVAL);
	cr_assert_eq(sc_join_step(j, NULL, NULL, NULL), SC_EINVAL);
	cr_assert_eq(sc_join_work(NULL, 10), SC_EINVAL);
	sc_join_destroy(j);
	sc_join_destroy(NULL);
}

Test(join, create_rejects_bad_widths)
{
	struct sc_join *j = NULL;

	cr_assert_eq(sc_join_create(0, 2, 0, &j), SC_ESCHEMA);
	cr_assert_eq(sc_join_create(2, 2, 3, &j), SC_ESCHEMA);
	cr_assert_eq(
	    sc_join_create(SC_SCHEMA_MAX_COLS, SC_SCHEMA_MAX_COLS, 1, &j),
	    SC_ESCHEMA);
	cr_assert_null(j);
}

Test(antijoin, output_integral_is_the_antijoin_of_the_input_integrals)
{
	uint64_t base = sc_prop_seed(7101);

	for (uint64_t c = 0; c < sc_prop_count(40); c++) {
		struct sc_rng r;
		struct sides s;
		struct sc_antijoin *aj;

		sc_rng_seed(&r, base + c);
		sides_init(&s, &r, 0);
		cr_assert_eq(sc_antijoin_create(s.an, s.bn, s.k, &aj), 0, "%s",
			     sc_errmsg());
		for (int step = 0; step < 30; step++) {
			struct sc_batch *da = maybe_delta(&r, &s.ga, &s.ia);
			struct sc_batch *db = maybe_delta(&r, &s.gb, &s.ib);
			struct sc_batch *out;
			struct zref want;
			const uint64_t *bad = NULL;
			int rc = sc_antijoin_step(aj, da, db, &out);

			SC_PROP_ASSERT(base + c, "antijoin",
				       "output_integral_"
				       "is_the_antijoin_of_the_input_integrals",
				       rc == 0, "step %d: %s", step,
				       sc_errmsg());
			cr_assert(sc_batch_is_consolidated(out));
			absorb(&s, da, db, out);
			zref_init(&want, s.an);
			ref_antijoin(&s.ia, &s.ib, s.k, &want);
			SC_PROP_ASSERT(base + c, "antijoin",
				       "output_integral_"
				       "is_the_antijoin_of_the_input_integrals",
				       zref_same(&want, &s.out, &bad),
				       "step %d k %u: row %llu... want %lld "
				       "got %lld",
				       step, s.k, (unsigned long long)bad[0],
				       zref_w(&want, bad), zref_w(&s.out, bad));
			zref_fini(&want);
			if (sc_rng_below(&r, 2))
				cr_assert_eq(
				    sc_antijoin_work(aj, sc_rng_below(&r, 40)),
				    0);
		}
		sc_antijoin_destroy(aj);
		sides_fini(&s);
	}
}

Test(antijoin, wrong_width_is_eschema_and_changes_nothing)
{
	struct sc_antijoin *aj;
	uint64_t ra[2] = {1, 10}, rb[1] = {1};
	struct sc_batch *a = one(2, ra, 1), *b1 = one(1, rb, 1), *out = NULL;

	cr_assert_eq(sc_antijoin_create(2, 2, 1, &aj), 0);
	cr_assert_eq(sc_antijoin_step(aj, a, b1, &out), SC_ESCHEMA);
	cr_assert_null(out);
	/* Nothing was absorbed: a's row now passes alone. */
	cr_assert_eq(sc_antijoin_step(aj, a, NULL, &out), 0);
	cr_assert_eq(sc_batch_count(out), 1);
	sc_batch_release(out);
	cr_assert_eq(sc_antijoin_step(NULL, a, NULL, &out), SC_EINVAL);
	sc_batch_release(a);
	sc_batch_release(b1);
	sc_antijoin_destroy(aj);
}

/* --- large states -----------------------------------------------------------
 */

#define LK 3000
#define LV 4

/* The expected join or antijoin output of two dense integrals. */
static struct sc_batch *
dense_expect(const int64_t *wa, const int64_t *wb, bool anti)
{
	struct sc_batch_builder b;
	struct sc_batch *out;

	cr_assert_eq(sc_batch_builder_init(&b, anti ? 2 : 3), 0);
	for (uint64_t key = 0; key < LK; key++) {
		bool present = false;

		for (uint64_t vb = 0; vb < LV; vb++)
			present |= wb[key * LV + vb] > 0;
		for (uint64_t va = 0; va < LV; va++) {
			int64_t w = wa[key * LV + va];
			uint64_t row[3] = {key, va, 0};

			if (w == 0 || (anti && present))
				continue;
			for (uint64_t vb = 0; vb < LV && !anti; vb++) {
				row[2] = vb;
				cr_assert_eq(
				    sc_batch_builder_push(
					&b, row, 3, w * wb[key * LV + vb]),
				    0);
			}
			if (anti)
				cr_assert_eq(
				    sc_batch_builder_push(&b, row, 2, w), 0);
		}
	}
	cr_assert_eq(sc_batch_builder_finish(&b, &out), 0);
	sc_batch_builder_fini(&b);
	return out;
}

/* Twelve steps, the first two of 12,000 rows per side (so the traces hold
 * runs long enough for the batched search), then 400-row deltas. */
static void
large_run(bool anti, uint64_t seed)
{
	struct sc_rng r;
	int64_t *wa = calloc((size_t)LK * LV, sizeof(int64_t));
	int64_t *wb = calloc((size_t)LK * LV, sizeof(int64_t));
	struct sc_join *j = NULL;
	struct sc_antijoin *aj = NULL;
	struct sc_batch *acc;

	cr_assert(wa && wb);
	sc_rng_seed(&r, seed);
	if (anti)
		cr_assert_eq(sc_antijoin_create(2, 2, 1, &aj), 0);
	else
		cr_assert_eq(sc_join_create(2, 2, 1, &j), 0);
	cr_assert_eq(sc_batch_empty(anti ? 2 : 3, &acc), 0);
	for (int step = 0; step < 12; step++) {
		size_t n = step < 2 ? 12000 : 400;
		struct sc_batch *da = opgen_dense_delta(&r, wa, LK, LV, n);
		struct sc_batch *db =
		    step % 3 == 2 ? NULL : opgen_dense_delta(&r, wb, LK, LV, n);
		struct sc_batch *out, *want;

		cr_assert_eq(anti ? sc_antijoin_step(aj, da, db, &out)
				  : sc_join_step(j, da, db, &out),
			     0, "%s", sc_errmsg());
		opgen_dense_add(wa, LV, da);
		opgen_dense_add(wb, LV, db);
		opgen_accumulate(&acc, out);
		sc_batch_release(da);
		sc_batch_release(db);
		want = dense_expect(wa, wb, anti);
		SC_PROP_ASSERT(seed, anti ? "antijoin" : SUITE,
			       "large_state_matches_a_dense_reference",
			       sc_batch_equal(acc, want),
			       "step %d: %zu rows, want %zu", step,
			       sc_batch_count(acc), sc_batch_count(want));
		sc_batch_release(want);
		if (anti)
			cr_assert_eq(sc_antijoin_work(aj, 3000), 0);
		else
			cr_assert_eq(sc_join_work(j, 3000), 0);
	}
	sc_batch_release(acc);
	sc_join_destroy(j);
	sc_antijoin_destroy(aj);
	free(wa);
	free(wb);
}

Test(join, large_state_matches_a_dense_reference)
{
	large_run(false, sc_prop_seed(7003));
}

Test(antijoin, large_state_matches_a_dense_reference)
{
	large_run(true, sc_prop_seed(7102));
}
