/*
 * test_aggregate.c - count, sum, avg, min and max against a from-scratch
 * reference after every step of random delta sequences (with random merge
 * work in between); exactness of f64 sums and averages after many inserts
 * and retractions; bad input, which must change nothing.
 *
 * The reference is written out here with plain loops over the naive Z-sets
 * of zset_gen.h, with wide (__int128) integer sums; it shares no code with
 * aggregate.c, trace.c or xsum.c.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "operators/aggregate.h"
#include "tests/support/op_gen.h"
#include "tests/support/prop.h"
#include "tests/support/zset_gen.h"

#define SUITE "aggregate"
#define NCOLS 3

/* The random test's row layout: every column's type. */
struct layout {
	enum sc_type types[NCOLS];
};

/* Small domains, so groups collide; f64 values are multiples of 1/4 so a
 * plain double sum of them is exact in the reference. */
static uint64_t
col_value(struct sc_rng *r, uint32_t col, void *ctx)
{
	const struct layout *l = ctx;
	int64_t x = sc_rng_range(r, -6, 6);

	switch (l->types[col]) {
	case SC_TYPE_I64:
		return sc_enc_i64(x);
	case SC_TYPE_U64:
		return sc_enc_u64((uint64_t)(x + 6));
	default:
		return sc_enc_f64((double)x / 4.0);
	}
}

/* The value of a word of a numeric column, as a double (exact here). */
static double
num(enum sc_type t, uint64_t w)
{
	if (t == SC_TYPE_I64)
		return (double)sc_dec_i64(w);
	if (t == SC_TYPE_U64)
		return (double)sc_dec_u64(w);
	return sc_dec_f64(w);
}

/* One group of the reference. */
struct rgroup {
	const uint64_t *key;
	__int128 count, isum;
	double fsum;
	uint64_t min, max;
};

/* The aggregate of an integral from scratch: one (key, value) of weight 1
 * per group with a row of non-zero weight. */
static void
ref_aggregate(const struct zref *in, const struct sc_aggregate_spec *s,
	      struct zref *out)
{
	struct rgroup *g = calloc(in->n + 1, sizeof(*g));
	size_t ng = 0;
	uint64_t row[NCOLS + 1];

	for (size_t i = 0; i < in->n; i++) {
		const uint64_t *r = in->rows + i * in->ncols;
		uint64_t v = r[s->col];
		size_t j;

		if (in->w[i] == 0)
			continue;
		for (j = 0; j < ng; j++)
			if (memcmp(g[j].key, r, (size_t)s->k * 8) == 0)
				break;
		if (j == ng) {
			g[ng++] = (struct rgroup){r, 0, 0, 0.0, v, v};
		}
		g[j].count += in->w[i];
		if (s->kind != SC_AGG_COUNT) {
			if (s->col_type == SC_TYPE_I64)
				g[j].isum += in->w[i] * sc_dec_i64(v);
			else
				g[j].isum += in->w[i] * (__int128)v;
			g[j].fsum += (double)in->w[i] * num(s->col_type, v);
		}
		g[j].min = v < g[j].min ? v : g[j].min;
		g[j].max = v > g[j].max ? v : g[j].max;
	}
	for (size_t j = 0; j < ng; j++) {
		uint64_t v;

		switch (s->kind) {
		case SC_AGG_COUNT:
			v = sc_enc_i64((int64_t)g[j].count);
			break;
		case SC_AGG_SUM:
			v = s->col_type == SC_TYPE_F64
				? sc_enc_f64(g[j].fsum)
				: sc_enc_i64((int64_t)g[j].isum);
			break;
		case SC_AGG_AVG:
			v = sc_enc_f64(g[j].count == 0
					   ? NAN
					   : g[j].fsum / (double)g[j].count);
			break;
		case SC_AGG_MIN:
			v = g[j].min;
			break;
		default:
			v = g[j].max;
			break;
		}
		memcpy(row, g[j].key, (size_t)s->k * 8);
		row[s->k] = v;
		zref_add(out, row, 1);
	}
	free(g);
}

/* A random spec over a random layout. */
static void
random_spec(struct sc_rng *r, struct layout *l, struct sc_aggregate_spec *s)
{
	static const enum sc_type num_types[] = {SC_TYPE_I64, SC_TYPE_U64,
						 SC_TYPE_F64};

	for (uint32_t c = 0; c < NCOLS; c++)
		l->types[c] = num_types[sc_rng_below(r, 3)];
	s->ncols = NCOLS;
	s->kind = (enum sc_agg_kind)sc_rng_below(r, 5);
	s->k = (uint32_t)sc_rng_below(r, NCOLS);
	if (s->kind == SC_AGG_MIN || s->kind == SC_AGG_MAX)
		s->col = (uint32_t)sc_rng_below(r, NCOLS); /* even in the key */
	else
		s->col = s->k + (uint32_t)sc_rng_below(r, NCOLS - s->k);
	s->col_type = l->types[s->col];
}

Test(aggregate, output_integral_is_the_aggregate_of_the_input_integral)
{
	uint64_t base = sc_prop_seed(7301);

	for (uint64_t c = 0; c < sc_prop_count(60); c++) {
		struct sc_rng r;
		struct layout l;
		struct sc_aggregate_spec spec;
		struct sc_aggregate *agg;
		struct zref in, got;
		struct opgen g;

		sc_rng_seed(&r, base + c);
		random_spec(&r, &l, &spec);
		g = (struct opgen){NCOLS, spec.k, col_value, &l, true};
		zref_init(&in, NCOLS);
		zref_init(&got, spec.k + 1);
		cr_assert_eq(sc_aggregate_create(&spec, &agg), 0, "%s",
			     sc_errmsg());
		cr_assert_eq(sc_aggregate_out_ncols(agg), spec.k + 1);
		for (int step = 0; step < 30; step++) {
			struct sc_batch *delta =
			    sc_rng_below(&r, 8) == 0
				? NULL
				: opgen_delta(&r, &g, &in,
					      sc_rng_below(&r, 10));
			struct sc_batch *out;
			struct zref want;
			const uint64_t *bad = NULL;
			int rc = sc_aggregate_step(agg, delta, &out);

			SC_PROP_ASSERT(base + c, SUITE,
				       "output_integral_is_the_aggregate_of_"
				       "the_input_integral",
				       rc == 0, "step %d: %s", step,
				       sc_errmsg());
			cr_assert(sc_batch_is_consolidated(out));
			if (delta)
				zref_add_batch(&in, delta, 1);
			zref_add_batch(&got, out, 1);
			sc_batch_release(delta);
			sc_batch_release(out);
			zref_init(&want, spec.k + 1);
			ref_aggregate(&in, &spec, &want);
			SC_PROP_ASSERT(
			    base + c, SUITE,
			    "output_integral_is_the_aggregate_of_the_input_"
			    "integral",
			    zref_same(&want, &got, &bad),
			    "step %d kind %d k %u col %u type %s: row (%llx "
			    "...) want %lld got %lld",
			    step, (int)spec.kind, spec.k, spec.col,
			    sc_type_name(spec.col_type),
			    (unsigned long long)bad[0], zref_w(&want, bad),
			    zref_w(&got, bad));
			zref_fini(&want);
			if (sc_rng_below(&r, 2))
				cr_assert_eq(sc_aggregate_work(
						 agg, sc_rng_below(&r, 30)),
					     0);
		}
		sc_aggregate_destroy(agg);
		zref_fini(&in);
		zref_fini(&got);
	}
}

/* --- exactness ------------------------------------------------------------ */

/* Values m * 2^(e - 60), m < 2^20, e in [0, 80]: 100 bits of spread, so a
 * running double sum would round; the reference sums them as integers. */
static uint64_t
col_wide(struct sc_rng *r, uint32_t col, void *ctx)
{
	double m;

	(void)ctx;
	if (col == 0)
		return sc_rng_below(r, 3);
	m = (double)(1 + sc_rng_below(r, (1u << 20) - 1));
	if (sc_rng_below(r, 2))
		m = -m;
	return sc_enc_f64(ldexp(m, (int)sc_rng_below(r, 81) - 60));
}

/* The exact sum of group `key` in units of 2^-scale. */
static __int128
ref_units(const struct zref *in, uint64_t key, int scale, __int128 *count)
{
	__int128 s = 0;

	*count = 0;
	for (size_t i = 0; i < in->n; i++) {
		const uint64_t *r = in->rows + i * 2;

		if (in->w[i] == 0 || r[0] != key)
			continue;
		s += in->w[i] * (__int128)ldexp(sc_dec_f64(r[1]), scale);
		*count += in->w[i];
	}
	return s;
}

/* Run `steps` random steps of a 2-column (key, f64) aggregate; after each,
 * check every group's value with check(). */
static void
exact_run(enum sc_agg_kind kind, opgen_col_fn col, int steps,
	  void (*check)(const struct zref *in, uint64_t key, double got))
{
	struct sc_aggregate_spec spec = {2, 1, kind, 1, SC_TYPE_F64};
	struct sc_aggregate *agg;
	struct sc_rng r;
	struct zref in;
	struct opgen g = {2, 1, col, NULL, false};
	double cur[3] = {0, 0, 0};

	sc_rng_seed(&r, sc_prop_seed(7302));
	zref_init(&in, 2);
	cr_assert_eq(sc_aggregate_create(&spec, &agg), 0);
	for (int step = 0; step < steps; step++) {
		struct sc_batch *delta = opgen_delta(&r, &g, &in, 6);
		struct sc_batch *out;

		cr_assert_eq(sc_aggregate_step(agg, delta, &out), 0, "%s",
			     sc_errmsg());
		zref_add_batch(&in, delta, 1);
		for (size_t i = 0; i < sc_batch_count(out); i++)
			if (sc_batch_weight(out, i) > 0)
				cur[sc_batch_row(out, i)[0]] =
				    sc_dec_f64(sc_batch_row(out, i)[1]);
		for (uint64_t key = 0; key < 3; key++)
			check(&in, key, cur[key]);
		sc_batch_release(delta);
		sc_batch_release(out);
		(void)sc_aggregate_work(agg, 16);
	}
	sc_aggregate_destroy(agg);
	zref_fini(&in);
}

static void
check_sum(const struct zref *in, uint64_t key, double got)
{
	__int128 count, s = ref_units(in, key, 60, &count);
	double want = ldexp((double)s, -60); /* one rounding */

	if (count == 0 && s == 0)
		return; /* (probably) empty group: no current value */
	cr_assert(got == want, "group %llu: sum %a, exact %a",
		  (unsigned long long)key, got, want);
}

Test(aggregate, f64_sum_is_exact_after_many_inserts_and_retractions)
{
	exact_run(SC_AGG_SUM, col_wide, 400, check_sum);
}

/* Values m * 2^-40 with |m| < 2^44: the exact sum (in units) fits a
 * double's 53 bits, so sum / count rounds once in the reference too. */
static uint64_t
col_avg(struct sc_rng *r, uint32_t col, void *ctx)
{
	int64_t m;

	(void)ctx;
	if (col == 0)
		return sc_rng_below(r, 3);
	m = (int64_t)(sc_rng_next(r) >> 20) - (INT64_C(1) << 43);
	return sc_enc_f64(ldexp((double)m, -40));
}

static void
check_avg(const struct zref *in, uint64_t key, double got)
{
	__int128 count, s = ref_units(in, key, 40, &count);
	double want;

	if (count == 0)
		return;
	want = ldexp((double)s / (double)count, -40);
	cr_assert(got == want, "group %llu: avg %a, exact %a",
		  (unsigned long long)key, got, want);
}

Test(aggregate, f64_avg_is_the_exact_sum_over_the_count_rounded_once)
{
	exact_run(SC_AGG_AVG, col_avg, 400, check_avg);
}

/* --- specific behaviours ----------------------------------------------------
 */

static struct sc_batch *
rows(uint32_t ncols, size_t n, const uint64_t *r, const int64_t *w)
{
	struct sc_batch *b;

	cr_assert_eq(sc_batch_from_records(ncols, r, w, n, &b), 0);
	return b;
}

/* Step and expect exactly the output rows (key, value) x weight. */
static void
step_expect(struct sc_aggregate *agg, struct sc_batch *delta, size_t n,
	    const uint64_t *want_rows, const int64_t *want_w)
{
	struct sc_batch *out, *want = rows(2, n, want_rows, want_w);

	cr_assert_eq(sc_aggregate_step(agg, delta, &out), 0, "%s", sc_errmsg());
	cr_assert(sc_batch_equal(out, want));
	sc_batch_release(out);
	sc_batch_release(want);
	sc_batch_release(delta);
}

Test(aggregate, min_and_max_show_the_next_value_after_a_retraction)
{
	struct sc_aggregate_spec mn = {2, 1, SC_AGG_MIN, 1, SC_TYPE_I64};
	struct sc_aggregate *agg;
	uint64_t in[] = {5, sc_enc_i64(3), 5, sc_enc_i64(-1), 5, sc_enc_i64(2)};
	int64_t ones[] = {1, 1, 1}, minus[] = {-1};
	uint64_t o1[] = {5, sc_enc_i64(-1)},
		 o2[] = {5, sc_enc_i64(-1), 5, sc_enc_i64(2)};
	int64_t w1[] = {1}, w2[] = {-1, 1};

	cr_assert_eq(sc_aggregate_create(&mn, &agg), 0);
	step_expect(agg, rows(2, 3, in, ones), 1, o1, w1);
	step_expect(agg, rows(2, 1, in + 2, minus), 2, o2, w2);
	sc_aggregate_destroy(agg);
}

Test(aggregate, a_group_that_empties_retracts_its_row)
{
	struct sc_aggregate_spec cnt = {2, 1, SC_AGG_COUNT, 0, SC_TYPE_I64};
	struct sc_aggregate *agg;
	uint64_t in[] = {5, 1, 5, 2};
	int64_t ws[] = {1, 2}, back[] = {-1, -2};
	uint64_t o1[] = {5, sc_enc_i64(3)};
	int64_t w1[] = {1}, wm1[] = {-1};

	cr_assert_eq(sc_aggregate_create(&cnt, &agg), 0);
	step_expect(agg, rows(2, 2, in, ws), 1, o1, w1);
	cr_assert_eq(sc_aggregate_groups(agg), 1);
	step_expect(agg, rows(2, 2, in, back), 1, o1, wm1);
	cr_assert_eq(sc_aggregate_groups(agg), 0);
	sc_aggregate_destroy(agg);
}

Test(aggregate, a_sum_outside_int64_has_no_row_and_check_is_eoverflow)
{
	struct sc_aggregate_spec sum = {2, 1, SC_AGG_SUM, 1, SC_TYPE_I64};
	struct sc_aggregate *agg;
	uint64_t big[] = {5, sc_enc_i64(INT64_MAX)}, one[] = {5, sc_enc_i64(1)};
	uint64_t o1[] = {5, sc_enc_i64(INT64_MAX)};
	uint64_t o2[] = {5, sc_enc_i64(INT64_MAX), 5, sc_enc_i64(0)};
	int64_t w1[] = {1}, w2[] = {-1, 1}, wneg[] = {-1};

	cr_assert_eq(sc_aggregate_create(&sum, &agg), 0);
	step_expect(agg, rows(2, 1, big, w1), 1, o1, w1);
	cr_assert_eq(sc_aggregate_check(agg), 0);
	/* The sum is now INT64_MAX + 1: the group stays live, its row goes. */
	step_expect(agg, rows(2, 1, one, w1), 1, o1, wneg);
	cr_assert_eq(sc_aggregate_rows(agg), 2, "the delta was absorbed");
	cr_assert_eq(sc_aggregate_groups(agg), 1);
	cr_assert_eq(sc_aggregate_check(agg), SC_EOVERFLOW);
	cr_assert(strstr(sc_errmsg(), "sum") != NULL, "%s", sc_errmsg());
	/* Back to INT64_MAX: the row comes back, and check is content. */
	step_expect(agg, rows(2, 1, one, wneg), 1, o1, w1);
	cr_assert_eq(sc_aggregate_check(agg), 0);
	/* A row of value 0 changes nothing... */
	one[1] = sc_enc_i64(0);
	step_expect(agg, rows(2, 1, one, w1), 0, NULL, NULL);
	/* ...and a retraction of the big row leaves 0 in a live group. */
	step_expect(agg, rows(2, 1, big, wneg), 2, o2, w2);
	sc_aggregate_destroy(agg);
}

Test(aggregate, a_count_outside_int64_has_no_row_and_check_is_eoverflow)
{
	struct sc_aggregate_spec cnt = {2, 1, SC_AGG_COUNT, 0, SC_TYPE_I64};
	struct sc_aggregate *agg;
	uint64_t a[] = {5, 1}, b2[] = {5, 2};
	int64_t wmax[] = {INT64_MAX}, wmin[] = {-INT64_MAX};
	uint64_t o1[] = {5, sc_enc_i64(INT64_MAX)};
	int64_t w1[] = {1}, wm1[] = {-1};

	cr_assert_eq(sc_aggregate_create(&cnt, &agg), 0);
	step_expect(agg, rows(2, 1, a, wmax), 1, o1, w1);
	step_expect(agg, rows(2, 1, b2, wmax), 1, o1, wm1);
	cr_assert_eq(sc_aggregate_rows(agg), 2);
	cr_assert_eq(sc_aggregate_groups(agg), 1);
	cr_assert_eq(sc_aggregate_check(agg), SC_EOVERFLOW);
	cr_assert(strstr(sc_errmsg(), "count") != NULL, "%s", sc_errmsg());
	step_expect(agg, rows(2, 1, b2, wmin), 1, o1, w1);
	cr_assert_eq(sc_aggregate_check(agg), 0);
	sc_aggregate_destroy(agg);
}

/*
 * Feed the rows of `in` (3 columns: key, row id, value) to a fresh
 * aggregate grouped by whole rows: all in one step, and one step per row;
 * every step must succeed and the output's integrals must agree. The
 * partial integrals of the second run may leave int64 where the whole
 * does not: the schedule must not matter.
 */
static void
same_in_any_steps(const struct sc_aggregate_spec *spec, size_t n,
		  const uint64_t *in, const int64_t *w)
{
	struct sc_batch *I[2] = {NULL, NULL};

	for (int run = 0; run < 2; run++) {
		struct sc_aggregate *agg;
		size_t per = run == 0 ? n : 1;

		cr_assert_eq(sc_aggregate_create(spec, &agg), 0);
		cr_assert_eq(sc_batch_empty(2, &I[run]), 0);
		for (size_t i = 0; i < n; i += per) {
			struct sc_batch *d = rows(3, per, in + i * 3, w + i);
			struct sc_batch *out, *sum;

			cr_assert_eq(sc_aggregate_step(agg, d, &out), 0,
				     "run %d, step %zu: %s", run, i / per,
				     sc_errmsg());
			cr_assert_eq(sc_batch_add(I[run], out, &sum), 0);
			sc_batch_release(I[run]);
			sc_batch_release(out);
			sc_batch_release(d);
			I[run] = sum;
		}
		cr_assert_eq(sc_aggregate_check(agg), 0, "%s", sc_errmsg());
		sc_aggregate_destroy(agg);
	}
	cr_assert(sc_batch_equal(I[0], I[1]),
		  "one step and one step per row settle differently");
	cr_assert_eq(sc_batch_count(I[0]), 1);
	sc_batch_release(I[0]);
	sc_batch_release(I[1]);
}

Test(aggregate, a_sum_whose_partial_integral_leaves_int64_settles_as_one_step)
{
	struct sc_aggregate_spec sum = {3, 1, SC_AGG_SUM, 2, SC_TYPE_I64};
	uint64_t up[] = {5, 1, sc_enc_i64(INT64_MAX), 5, 2, sc_enc_i64(1),
			 5, 2, sc_enc_i64(1)};
	uint64_t down[] = {5, 1, sc_enc_i64(INT64_MIN), 5, 2, sc_enc_i64(-1),
			   5, 2, sc_enc_i64(-1)};
	int64_t w[] = {1, 1, -1};

	same_in_any_steps(&sum, 3, up, w);
	same_in_any_steps(&sum, 3, down, w);
}

Test(aggregate, a_u64_sum_whose_partial_integral_leaves_int64_settles)
{
	struct sc_aggregate_spec sum = {3, 1, SC_AGG_SUM, 2, SC_TYPE_U64};
	/* 2^63 + 1 with weight 1, then with weight -1 plus 1 (settles at 1):
	 * the products themselves pass int64 on the way. */
	uint64_t in[] = {5, 1, sc_enc_u64(UINT64_C(1) << 63),
			 5, 2, sc_enc_u64(1),
			 5, 1, sc_enc_u64(UINT64_C(1) << 63)};
	int64_t w[] = {1, 1, -1};

	same_in_any_steps(&sum, 3, in, w);
}

Test(aggregate, a_count_whose_partial_integral_leaves_int64_settles_as_one_step)
{
	struct sc_aggregate_spec cnt = {3, 1, SC_AGG_COUNT, 0, SC_TYPE_I64};
	uint64_t in[] = {5, 1, 0, 5, 2, 0, 5, 2, 0};
	int64_t up[] = {INT64_MAX, 1, -1}, down[] = {INT64_MIN, -1, 1};

	same_in_any_steps(&cnt, 3, in, up);
	same_in_any_steps(&cnt, 3, in, down);
}

Test(aggregate, an_avg_whose_partial_count_leaves_int64_settles_as_one_step)
{
	struct sc_aggregate_spec avg = {3, 1, SC_AGG_AVG, 2, SC_TYPE_F64};
	uint64_t in[] = {5, 1, sc_enc_f64(2.0), 5, 2, sc_enc_f64(4.0),
			 5, 2, sc_enc_f64(4.0)};
	int64_t w[] = {INT64_MAX, 1, -1};

	same_in_any_steps(&avg, 3, in, w);
}

/*
 * A row's integrated weight is the sum of its weights over the trace's
 * runs, and which runs exist depends on the merge work done. Row r gets
 * +MAX (in a run of 4 rows), -1 (a run of 1), +1 (a run of 3): its
 * integral is MAX throughout, but the runs, largest first, read MAX, +1,
 * -1, whose first two pass int64, and the spine's next merge is exactly
 * that pair. Neither a lookup nor the merge may fail on it.
 */
Test(aggregate, a_row_weight_past_int64_only_across_runs_is_no_error)
{
	struct sc_aggregate_spec sum = {3, 1, SC_AGG_SUM, 2, SC_TYPE_I64};
	uint64_t r = 0, v0 = sc_enc_i64(0), v1 = sc_enc_i64(1);
	uint64_t d1[] = {5, r, v0, 5, 1, v1, 5, 2, v1, 5, 3, v1};
	uint64_t d2[] = {5, r, v0};
	uint64_t d3[] = {5, r, v0, 5, 4, v1, 5, 5, v1};
	int64_t w1[] = {INT64_MAX, 1, 1, 1}, w2[] = {-1}, w3[] = {1, 1, 1};
	const uint64_t *ds[] = {d1, d2, d3, d2};
	const int64_t *ws[] = {w1, w2, w3, w2};
	size_t ns[] = {4, 1, 3, 1};
	uint64_t want_row[] = {5, sc_enc_i64(5)};
	int64_t one = 1;
	struct sc_batch *want = rows(2, 1, want_row, &one);

	for (int work = 0; work < 2; work++) {
		struct sc_aggregate *agg;
		struct sc_batch *I, *out, *t;

		cr_assert_eq(sc_aggregate_create(&sum, &agg), 0);
		cr_assert_eq(sc_batch_empty(2, &I), 0);
		for (int i = 0; i < 4; i++) {
			struct sc_batch *d = rows(3, ns[i], ds[i], ws[i]);

			cr_assert_eq(sc_aggregate_step(agg, d, &out), 0,
				     "work %d, step %d: %s", work, i,
				     sc_errmsg());
			sc_batch_release(d);
			cr_assert_eq(sc_batch_add(I, out, &t), 0);
			sc_batch_release(I);
			sc_batch_release(out);
			I = t;
			if (work)
				cr_assert_eq(sc_aggregate_work(agg, SIZE_MAX),
					     0, "work after step %d: %s", i,
					     sc_errmsg());
		}
		cr_assert(sc_batch_equal(I, want), "work %d", work);
		cr_assert_eq(sc_aggregate_work(agg, SIZE_MAX), 0, "%s",
			     sc_errmsg());
		cr_assert_eq(sc_aggregate_pending(agg), 0);
		sc_batch_release(I);
		sc_aggregate_destroy(agg);
	}
	sc_batch_release(want);
}

Test(aggregate, wrong_width_is_eschema_and_changes_nothing)
{
	struct sc_aggregate_spec cnt = {2, 1, SC_AGG_COUNT, 0, SC_TYPE_I64};
	struct sc_aggregate *agg;
	uint64_t r3[] = {1, 2, 3};
	int64_t w1[] = {1};
	struct sc_batch *b = rows(3, 1, r3, w1), *out = NULL;

	cr_assert_eq(sc_aggregate_create(&cnt, &agg), 0);
	cr_assert_eq(sc_aggregate_step(agg, b, &out), SC_ESCHEMA);
	cr_assert_null(out);
	cr_assert(strstr(sc_errmsg(), "3 columns") != NULL, "%s", sc_errmsg());
	cr_assert_eq(sc_aggregate_rows(agg), 0);
	sc_batch_release(b);
	sc_aggregate_destroy(agg);
}

Test(aggregate, null_arguments_are_einval)
{
	struct sc_aggregate_spec cnt = {2, 1, SC_AGG_COUNT, 0, SC_TYPE_I64};
	struct sc_aggregate *agg;
	struct sc_batch *out;

	cr_assert_eq(sc_aggregate_create(NULL, &agg), SC_EINVAL);
	cr_assert_eq(sc_aggregate_create(&cnt, NULL), SC_EINVAL);
	cr_assert_eq(sc_aggregate_create(&cnt, &agg), 0);
	cr_assert_eq(sc_aggregate_step(NULL, NULL, &out), SC_EINVAL);
	cr_assert_eq(sc_aggregate_step(agg, NULL, NULL), SC_EINVAL);
	cr_assert_eq(sc_aggregate_work(NULL, 1), SC_EINVAL);
	cr_assert_eq(sc_aggregate_out_type(agg, NULL), SC_EINVAL);
	sc_aggregate_destroy(agg);
	sc_aggregate_destroy(NULL);
}

Test(aggregate, create_rejects_bad_specs)
{
	struct sc_aggregate_spec s = {2, 1, SC_AGG_SUM, 1, SC_TYPE_SYMBOL};
	struct sc_aggregate *agg = NULL;

	cr_assert_eq(sc_aggregate_create(&s, &agg), SC_ETYPE);
	s.kind = SC_AGG_AVG;
	s.col_type = SC_TYPE_BOOL;
	cr_assert_eq(sc_aggregate_create(&s, &agg), SC_ETYPE);
	s.col_type = SC_TYPE_F64;
	s.col = 2;
	cr_assert_eq(sc_aggregate_create(&s, &agg), SC_ESCHEMA);
	s.col = 1;
	s.k = 3;
	cr_assert_eq(sc_aggregate_create(&s, &agg), SC_ESCHEMA);
	s.k = 1;
	s.kind = (enum sc_agg_kind)9;
	cr_assert_eq(sc_aggregate_create(&s, &agg), SC_EINVAL);
	cr_assert_null(agg);
}

Test(aggregate, output_types_follow_the_kind)
{
	struct sc_aggregate_spec s = {2, 1, SC_AGG_COUNT, 1, SC_TYPE_SYMBOL};
	struct sc_aggregate *agg;
	enum sc_type t;

	cr_assert_eq(sc_aggregate_create(&s, &agg), 0);
	cr_assert_eq(sc_aggregate_out_type(agg, &t), 0);
	cr_assert_eq(t, SC_TYPE_I64);
	sc_aggregate_destroy(agg);
	s.kind = SC_AGG_MAX;
	cr_assert_eq(sc_aggregate_create(&s, &agg), 0);
	cr_assert_eq(sc_aggregate_out_type(agg, &t), 0);
	cr_assert_eq(t, SC_TYPE_SYMBOL);
	sc_aggregate_destroy(agg);
	s.kind = SC_AGG_AVG;
	s.col_type = SC_TYPE_I64;
	cr_assert_eq(sc_aggregate_create(&s, &agg), 0);
	cr_assert_eq(sc_aggregate_out_type(agg, &t), 0);
	cr_assert_eq(t, SC_TYPE_F64);
	sc_aggregate_destroy(agg);
}

/* --- large states -----------------------------------------------------------
 */

/* The expected output of a (key, u64 value) aggregate of a dense integral
 * w[key * vals + v]. */
static struct sc_batch *
dense_expect(enum sc_agg_kind kind, const int64_t *w, uint64_t keys,
	     uint64_t vals)
{
	struct sc_batch_builder b;
	struct sc_batch *out;

	cr_assert_eq(sc_batch_builder_init(&b, 2), 0);
	for (uint64_t key = 0; key < keys; key++) {
		int64_t count = 0, sum = 0;
		uint64_t lo = UINT64_MAX, hi = 0, row[2] = {key, 0};
		bool live = false;

		for (uint64_t v = 0; v < vals; v++) {
			int64_t x = w[key * vals + v];

			if (x == 0)
				continue;
			live = true;
			count += x;
			sum += x * (int64_t)v;
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
		if (!live)
			continue;
		row[1] = kind == SC_AGG_COUNT ? sc_enc_i64(count)
			 : kind == SC_AGG_SUM ? sc_enc_i64(sum)
			 : kind == SC_AGG_MIN ? lo
					      : hi;
		cr_assert_eq(sc_batch_builder_push(&b, row, 2, 1), 0);
	}
	cr_assert_eq(sc_batch_builder_finish(&b, &out), 0);
	sc_batch_builder_fini(&b);
	return out;
}

Test(aggregate, large_state_matches_a_dense_reference)
{
	enum { K = 2000, V = 12 };
	static const enum sc_agg_kind kinds[] = {SC_AGG_COUNT, SC_AGG_SUM,
						 SC_AGG_MIN, SC_AGG_MAX};
	uint64_t seed = sc_prop_seed(7303);

	for (size_t ki = 0; ki < 4; ki++) {
		struct sc_aggregate_spec spec = {2, 1, kinds[ki], 1,
						 SC_TYPE_U64};
		struct sc_aggregate *agg;
		struct sc_rng r;
		int64_t *w = calloc((size_t)K * V, sizeof(int64_t));
		struct sc_batch *acc;

		cr_assert_not_null(w);
		sc_rng_seed(&r, seed + ki);
		cr_assert_eq(sc_aggregate_create(&spec, &agg), 0);
		cr_assert_eq(sc_batch_empty(2, &acc), 0);
		for (int step = 0; step < 10; step++) {
			struct sc_batch *delta = opgen_dense_delta(
			    &r, w, K, V, step < 2 ? 20000 : 300);
			struct sc_batch *out, *want;

			cr_assert_eq(sc_aggregate_step(agg, delta, &out), 0,
				     "%s", sc_errmsg());
			opgen_dense_add(w, V, delta);
			opgen_accumulate(&acc, out);
			sc_batch_release(delta);
			want = dense_expect(kinds[ki], w, K, V);
			SC_PROP_ASSERT(seed + ki, SUITE,
				       "large_state_matches_a_dense_reference",
				       sc_batch_equal(acc, want),
				       "kind %d step %d", (int)kinds[ki], step);
			sc_batch_release(want);
			cr_assert_eq(sc_aggregate_work(agg, 4000), 0);
		}
		sc_batch_release(acc);
		sc_aggregate_destroy(agg);
		free(w);
	}
}

/*
 * The edge semantics stated in aggregate.h ("Edge cases"), one test each.
 * Inputs are (key, value, id) so that two rows of one group may carry the
 * same value; outputs are (key, value).
 */
static struct sc_aggregate *
agg3(enum sc_agg_kind kind, enum sc_type t)
{
	struct sc_aggregate_spec sp = {3, 1, kind, 1, t};
	struct sc_aggregate *agg;

	cr_assert_eq(sc_aggregate_create(&sp, &agg), 0, "%s", sc_errmsg());
	return agg;
}

/* Step `agg` once with n rows (key 1, value v[i], id i) x w[i] and return
 * the one output row's value word (the group must be live). */
static uint64_t
agg3_value(struct sc_aggregate *agg, size_t n, const double *v,
	   const int64_t *w, enum sc_type t)
{
	uint64_t r[3 * 8];
	struct sc_batch *in, *out;
	uint64_t val;

	cr_assert(n <= 8);
	for (size_t i = 0; i < n; i++) {
		r[3 * i] = sc_enc_i64(1);
		r[3 * i + 1] = t == SC_TYPE_F64 ? sc_enc_f64(v[i])
						: sc_enc_i64((int64_t)v[i]);
		r[3 * i + 2] = sc_enc_i64((int64_t)i);
	}
	in = rows(3, n, r, w);
	cr_assert_eq(sc_aggregate_step(agg, in, &out), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_batch_count(out), 1, "one live group, one row");
	cr_assert_eq(sc_batch_weight(out, 0), 1);
	val = sc_batch_row(out, 0)[1];
	sc_batch_release(out);
	sc_batch_release(in);
	return val;
}

Test(aggregate, nan_rows_of_opposite_weights_cancel_in_sum_but_not_in_max)
{
	double v[] = {NAN, NAN, 2.0};
	int64_t w[] = {1, -1, 1};
	struct sc_aggregate *sum = agg3(SC_AGG_SUM, SC_TYPE_F64);
	struct sc_aggregate *max = agg3(SC_AGG_MAX, SC_TYPE_F64);

	/* SUM counts NaNs by weight: +1 and -1 leave none, so 2.0 stands. */
	cr_assert_eq(sc_dec_f64(agg3_value(sum, 3, v, w, SC_TYPE_F64)), 2.0);
	/* MAX looks at live rows: both NaN rows are live (weights +1 and
	 * -1 are not zero), and NaN orders above every number. */
	cr_assert(isnan(sc_dec_f64(agg3_value(max, 3, v, w, SC_TYPE_F64))));
	sc_aggregate_destroy(sum);
	sc_aggregate_destroy(max);
}

Test(aggregate, avg_of_a_group_whose_weights_sum_to_zero_reads_nan)
{
	double v[] = {2.0, 3.0};
	int64_t w[] = {1, -1};
	struct sc_aggregate *avg = agg3(SC_AGG_AVG, SC_TYPE_F64);

	cr_assert(isnan(sc_dec_f64(agg3_value(avg, 2, v, w, SC_TYPE_F64))));
	sc_aggregate_destroy(avg);
}

Test(aggregate, a_negative_weight_flips_an_infinity_in_sum)
{
	double v[] = {INFINITY, 1.0};
	int64_t w[] = {-1, 1};
	struct sc_aggregate *sum = agg3(SC_AGG_SUM, SC_TYPE_F64);
	double got = sc_dec_f64(agg3_value(sum, 2, v, w, SC_TYPE_F64));

	cr_assert(isinf(got) && got < 0, "-1 x +inf is -inf, got %g", got);
	sc_aggregate_destroy(sum);
}

Test(aggregate, count_of_a_live_group_whose_weights_sum_to_zero_is_zero)
{
	double v[] = {5, 6};
	int64_t w[] = {1, -1};
	struct sc_aggregate *cnt = agg3(SC_AGG_COUNT, SC_TYPE_I64);

	cr_assert_eq(sc_dec_i64(agg3_value(cnt, 2, v, w, SC_TYPE_I64)), 0);
	sc_aggregate_destroy(cnt);
}

/* A row weight passing int64 late in a delta is held exactly: the step
 * succeeds, the rows before it stay applied, and the group's COUNT and SUM, now
 * past int64, have no row until it comes back (sc_aggregate_check says so
 * meanwhile); AVG (1) keeps its row. */
Test(aggregate, a_row_weight_past_int64_late_in_a_delta_is_held_exactly)
{
	struct sc_aggregate_spec kinds[] = {
	    {2, 1, SC_AGG_COUNT, 0, SC_TYPE_I64},
	    {2, 1, SC_AGG_SUM, 1, SC_TYPE_I64},
	    {2, 1, SC_AGG_AVG, 1, SC_TYPE_I64}};
	uint64_t big[] = {9, sc_enc_i64(1)};
	uint64_t d[] = {1, sc_enc_i64(3), 1, sc_enc_i64(4), 9, sc_enc_i64(1)};
	int64_t wmax = INT64_MAX, wd[] = {2, 1, 1};

	for (size_t k = 0; k < 3; k++) {
		struct sc_aggregate *agg;
		struct sc_batch *b = rows(2, 1, big, &wmax), *delta, *out;
		struct sc_batch *again;

		cr_assert_eq(sc_aggregate_create(&kinds[k], &agg), 0);
		cr_assert_eq(sc_aggregate_step(agg, b, &out), 0);
		sc_batch_release(out);
		/* Group 1's rows come first; group 9's row reaches MAX + 1. */
		delta = rows(2, 3, d, wd);
		out = NULL;
		cr_assert_eq(sc_aggregate_step(agg, delta, &out), 0,
			     "kind %zu: %s", k, sc_errmsg());
		sc_batch_release(out);
		cr_assert_eq(sc_aggregate_rows(agg), 3, "kind %zu", k);
		cr_assert_eq(sc_aggregate_groups(agg), 2, "kind %zu", k);
		cr_assert_eq(sc_aggregate_check(agg),
			     kinds[k].kind == SC_AGG_AVG ? 0 : SC_EOVERFLOW,
			     "kind %zu", k);
		/* Group 9's +1 retracted: MAX again, and every row back. */
		wd[2] = -1;
		again = rows(2, 1, d + 4, &wd[2]);
		wd[2] = 1;
		cr_assert_eq(sc_aggregate_step(agg, again, &out), 0, "%s",
			     sc_errmsg());
		cr_assert_eq(sc_aggregate_check(agg), 0, "kind %zu", k);
		cr_assert_eq(sc_aggregate_rows(agg), 3);
		sc_batch_release(out);
		sc_batch_release(again);
		sc_batch_release(delta);
		sc_batch_release(b);
		sc_aggregate_destroy(agg);
	}
}
