/*
 * test_topk.c - top-k per group against a from-scratch reference after
 * every step of random delta sequences that retract current top rows and
 * make ties (with random merge work in between); the Nexmark shapes (q9,
 * q18, q19) by hand; a state large enough for the probes' batched paths;
 * bad input, which must change nothing.
 *
 * The reference ranks every row of the integral by counting, with plain
 * loops over the naive Z-sets of zset_gen.h, the rows of its group
 * strictly ahead of it (topk.h's definition); it shares no code with
 * topk.c, trace.c or probe.c.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "operators/circuit.h"
#include "operators/graph.h"
#include "operators/topk.h"
#include "tests/support/op_gen.h"
#include "tests/support/prop.h"
#include "tests/support/zset_gen.h"

#define SUITE "topk"
#define NCOLS 4

/* --- the reference -------------------------------------------------------- */

/* Is x strictly ahead of y in spec's order? */
static bool
ahead_of(const struct sc_topk_spec *s, const uint64_t *x, const uint64_t *y)
{
	for (uint32_t i = 0; i < s->norder; i++) {
		uint64_t a = x[s->order[i]], b = y[s->order[i]];

		if (a != b)
			return s->desc[i] ? a > b : a < b;
	}
	return false;
}

/* Every row of positive weight with rank <= limit, with its weight. */
static void
ref_topk(const struct zref *in, const struct sc_topk_spec *s, struct zref *out)
{
	for (size_t i = 0; i < in->n; i++) {
		const uint64_t *r = in->rows + i * in->ncols;
		__int128 ahead = 0;

		if (in->w[i] <= 0)
			continue;
		for (size_t j = 0; j < in->n; j++) {
			const uint64_t *q = in->rows + j * in->ncols;

			if (in->w[j] > 0 &&
			    memcmp(q, r, s->key * sizeof(uint64_t)) == 0 &&
			    ahead_of(s, q, r))
				ahead += in->w[j];
		}
		if (ahead + 1 <= (__int128)s->limit)
			zref_add(out, r, in->w[i]);
	}
}

/* --- the random test ------------------------------------------------------ */

/* Column types of the random layout. */
struct layout {
	enum sc_type types[NCOLS];
};

/* Values from tiny domains (0..3), so groups gather and order values tie;
 * signed and float ones straddle zero, whose encodings differ in the top
 * bit, so a descending order must reverse more than the low bits. */
static uint64_t
col_value(struct sc_rng *r, uint32_t col, void *ctx)
{
	const struct layout *l = ctx;
	int64_t x = sc_rng_range(r, -2, 1);

	switch (l->types[col]) {
	case SC_TYPE_I64:
		return sc_enc_i64(x);
	case SC_TYPE_U64:
		return sc_enc_u64((uint64_t)(x + 2));
	default:
		return sc_enc_f64((double)x / 2.0);
	}
}

static void
random_spec(struct sc_rng *r, struct layout *l, struct sc_topk_spec *s)
{
	static const enum sc_type types[] = {SC_TYPE_I64, SC_TYPE_U64,
					     SC_TYPE_F64};
	uint32_t pool[NCOLS], n = 0;

	for (uint32_t c = 0; c < NCOLS; c++)
		l->types[c] = types[sc_rng_below(r, 3)];
	memset(s, 0, sizeof(*s));
	s->ncols = NCOLS;
	s->key = (uint32_t)sc_rng_below(r, 3);
	for (uint32_t c = s->key; c < NCOLS; c++)
		pool[n++] = c;
	s->norder = 1 + (uint32_t)sc_rng_below(r, n);
	for (uint32_t i = 0; i < s->norder; i++) {
		uint32_t j = i + (uint32_t)sc_rng_below(r, n - i), c = pool[j];

		pool[j] = pool[i];
		pool[i] = c;
		s->order[i] = c;
		s->desc[i] = sc_rng_below(r, 2) != 0;
	}
	s->limit = 1 + sc_rng_below(r, 4);
}

/* A delta that retracts up to `n` rows of the current output (all of their
 * input weight), so the next rows must show through. */
static struct sc_batch *
retract_tops(struct sc_rng *r, const struct zref *in, const struct zref *got,
	     size_t n)
{
	struct sc_batch_builder b;
	struct sc_batch *out;

	cr_assert_eq(sc_batch_builder_init(&b, in->ncols), 0);
	for (size_t i = 0; i < got->n && n > 0; i++) {
		const uint64_t *row = got->rows + i * got->ncols;

		if (got->w[i] == 0 || sc_rng_below(r, 2))
			continue;
		cr_assert_eq(
		    sc_batch_builder_push(&b, row, in->ncols,
					  -(int64_t)zref_weight(in, row)),
		    0);
		n--;
	}
	cr_assert_eq(sc_batch_builder_finish(&b, &out), 0);
	sc_batch_builder_fini(&b);
	return out;
}

/* The step's delta: random changes (opgen) plus retractions of top rows. */
static struct sc_batch *
next_delta(struct sc_rng *r, const struct opgen *g, const struct zref *in,
	   const struct zref *got)
{
	struct sc_batch *a, *b, *sum;

	if (sc_rng_below(r, 8) == 0)
		return NULL;
	a = opgen_delta(r, g, in, sc_rng_below(r, 10));
	b = retract_tops(r, in, got, sc_rng_below(r, 3));
	cr_assert_eq(sc_batch_add(a, b, &sum), 0);
	sc_batch_release(a);
	sc_batch_release(b);
	return sum;
}

static void
spec_fprint(const struct sc_topk_spec *s, char *buf, size_t len)
{
	int at = snprintf(buf, len, "key %u limit %llu order", s->key,
			  (unsigned long long)s->limit);

	for (uint32_t i = 0; i < s->norder && at > 0 && (size_t)at < len; i++)
		at += snprintf(buf + at, len - (size_t)at, " %u%s", s->order[i],
			       s->desc[i] ? "d" : "a");
}

Test(topk, output_integral_is_the_top_k_of_the_input_integral)
{
	uint64_t base = sc_prop_seed(8101);

	for (uint64_t c = 0; c < sc_prop_count(80); c++) {
		struct sc_rng r;
		struct layout l;
		struct sc_topk_spec spec;
		struct sc_topk *tk;
		struct zref in, got;
		struct opgen g;
		char what[128];

		sc_rng_seed(&r, base + c);
		random_spec(&r, &l, &spec);
		spec_fprint(&spec, what, sizeof(what));
		g = (struct opgen){NCOLS, spec.key, col_value, &l, true};
		zref_init(&in, NCOLS);
		zref_init(&got, NCOLS);
		cr_assert_eq(sc_topk_create(&spec, &tk), 0, "%s", sc_errmsg());
		for (int step = 0; step < 40; step++) {
			struct sc_batch *delta = next_delta(&r, &g, &in, &got);
			struct sc_batch *out;
			struct zref want;
			const uint64_t *bad = NULL;
			int rc = sc_topk_step(tk, delta, &out);

			SC_PROP_ASSERT(
			    base + c, SUITE,
			    "output_integral_is_the_top_k_of_the_input_"
			    "integral",
			    rc == 0, "step %d: %s", step, sc_errmsg());
			cr_assert(sc_batch_is_consolidated(out));
			if (delta)
				zref_add_batch(&in, delta, 1);
			zref_add_batch(&got, out, 1);
			sc_batch_release(delta);
			sc_batch_release(out);
			zref_init(&want, NCOLS);
			ref_topk(&in, &spec, &want);
			SC_PROP_ASSERT(
			    base + c, SUITE,
			    "output_integral_is_the_top_k_of_the_input_"
			    "integral",
			    zref_same(&want, &got, &bad),
			    "step %d %s: row (%llx %llx %llx %llx) want %lld "
			    "got %lld",
			    step, what, (unsigned long long)bad[0],
			    (unsigned long long)bad[1],
			    (unsigned long long)bad[2],
			    (unsigned long long)bad[3], zref_w(&want, bad),
			    zref_w(&got, bad));
			zref_fini(&want);
			if (sc_rng_below(&r, 2))
				cr_assert_eq(
				    sc_topk_work(tk, sc_rng_below(&r, 30)), 0);
		}
		sc_topk_destroy(tk);
		zref_fini(&in);
		zref_fini(&got);
	}
}

/*
 * Deltas of more than 32 rows take the builder's sorting path when the
 * top-k lays them out in its trace's order (topk.c, relay): the key
 * columns it leaves in front keep the delta's order, so only the runs of
 * one key are sorted. Checked against the reference with deltas of 40 to
 * 400 rows and a key of one or two columns.
 */
Test(topk, large_deltas_relaid_keep_the_top_k_of_the_input_integral)
{
	uint64_t base = sc_prop_seed(8201);

	for (uint64_t c = 0; c < sc_prop_count(30); c++) {
		struct sc_rng r;
		struct layout l;
		struct sc_topk_spec spec;
		struct sc_topk *tk;
		struct zref in, got;
		struct opgen g;

		sc_rng_seed(&r, base + c);
		do
			random_spec(&r, &l, &spec);
		while (spec.key == 0);
		g = (struct opgen){NCOLS, spec.key, col_value, &l, true};
		zref_init(&in, NCOLS);
		zref_init(&got, NCOLS);
		cr_assert_eq(sc_topk_create(&spec, &tk), 0, "%s", sc_errmsg());
		for (int step = 0; step < 12; step++) {
			struct sc_batch *delta = opgen_delta(
			    &r, &g, &in, 40 + sc_rng_below(&r, 360));
			struct sc_batch *out;
			struct zref want;
			const uint64_t *bad = NULL;

			cr_assert_eq(sc_topk_step(tk, delta, &out), 0, "%s",
				     sc_errmsg());
			SC_PROP_ASSERT(
			    base + c, SUITE,
			    "large_deltas_relaid_keep_the_top_k_of_"
			    "the_input_integral",
			    sc_batch_is_consolidated(out),
			    "step %d: the output is not consolidated", step);
			zref_add_batch(&in, delta, 1);
			zref_add_batch(&got, out, 1);
			sc_batch_release(delta);
			sc_batch_release(out);
			zref_init(&want, NCOLS);
			ref_topk(&in, &spec, &want);
			SC_PROP_ASSERT(base + c, SUITE,
				       "large_deltas_relaid_keep_the_top_k_of_"
				       "the_input_integral",
				       zref_same(&want, &got, &bad),
				       "step %d: a row's weight differs", step);
			zref_fini(&want);
		}
		sc_topk_destroy(tk);
		zref_fini(&in);
		zref_fini(&got);
	}
}

/* --- by hand: (auction, price, date_time, bidder) ------------------------- */

/* A one-step delta of rows (a, p, t, b) with weights w. */
static struct sc_batch *
bids(size_t n, const int64_t (*rows)[5])
{
	struct sc_batch_builder b;
	struct sc_batch *out;

	cr_assert_eq(sc_batch_builder_init(&b, 4), 0);
	for (size_t i = 0; i < n; i++) {
		uint64_t row[4];

		for (int c = 0; c < 4; c++)
			row[c] = sc_enc_i64(rows[i][c]);
		cr_assert_eq(sc_batch_builder_push(&b, row, 4, rows[i][4]), 0);
	}
	cr_assert_eq(sc_batch_builder_finish(&b, &out), 0);
	sc_batch_builder_fini(&b);
	return out;
}

/* Step tk with `delta` and check its output delta equals `want` exactly. */
static void
step_expect(struct sc_topk *tk, struct sc_batch *delta, struct sc_batch *want)
{
	struct sc_batch *out;

	cr_assert_eq(sc_topk_step(tk, delta, &out), 0, "%s", sc_errmsg());
	cr_assert(sc_batch_equal(out, want), "output delta differs");
	sc_batch_release(out);
	sc_batch_release(delta);
	sc_batch_release(want);
}

static struct sc_topk *
make(uint32_t key, uint64_t limit, uint32_t norder, const uint32_t *order,
     const bool *desc)
{
	struct sc_topk_spec s;
	struct sc_topk *tk;

	memset(&s, 0, sizeof(s));
	s.ncols = 4;
	s.key = key;
	s.norder = norder;
	s.limit = limit;
	memcpy(s.order, order, norder * sizeof(uint32_t));
	memcpy(s.desc, desc, norder * sizeof(bool));
	cr_assert_eq(sc_topk_create(&s, &tk), 0, "%s", sc_errmsg());
	return tk;
}

Test(topk, retracting_the_top_row_shows_the_next_one)
{
	static const uint32_t order[] = {1};
	static const bool desc[] = {true};
	struct sc_topk *tk = make(1, 2, 1, order, desc);
	static const int64_t in[][5] = {
	    {7, 10, 1, 1, 1}, {7, 30, 2, 1, 1}, {7, 20, 3, 1, 1}};
	static const int64_t top[][5] = {{7, 30, 2, 1, 1}, {7, 20, 3, 1, 1}};
	static const int64_t gone[][5] = {{7, 30, 2, 1, -1}};
	static const int64_t swap[][5] = {{7, 30, 2, 1, -1}, {7, 10, 1, 1, 1}};

	step_expect(tk, bids(3, in), bids(2, top));
	step_expect(tk, bids(1, gone), bids(2, swap));
	sc_topk_destroy(tk);
}

Test(topk, rows_tied_at_the_last_rank_are_all_kept)
{
	static const uint32_t order[] = {1};
	static const bool desc[] = {true};
	struct sc_topk *tk = make(1, 1, 1, order, desc);
	static const int64_t in[][5] = {
	    {1, 5, 1, 1, 1}, {1, 5, 2, 2, 1}, {1, 3, 3, 3, 1}};
	static const int64_t top[][5] = {{1, 5, 1, 1, 1}, {1, 5, 2, 2, 1}};
	static const int64_t better[][5] = {{1, 6, 4, 4, 1}};
	static const int64_t swap[][5] = {
	    {1, 5, 1, 1, -1}, {1, 5, 2, 2, -1}, {1, 6, 4, 4, 1}};

	step_expect(tk, bids(3, in), bids(2, top));
	step_expect(tk, bids(1, better), bids(3, swap));
	sc_topk_destroy(tk);
}

Test(topk, a_row_of_weight_two_takes_two_ranks)
{
	static const uint32_t order[] = {1};
	static const bool desc[] = {true};
	struct sc_topk *tk = make(1, 2, 1, order, desc);
	static const int64_t in[][5] = {{1, 9, 1, 1, 2}, {1, 8, 2, 2, 1}};
	static const int64_t top[][5] = {{1, 9, 1, 1, 2}};
	static const int64_t half[][5] = {{1, 9, 1, 1, -1}};
	static const int64_t now[][5] = {{1, 9, 1, 1, -1}, {1, 8, 2, 2, 1}};

	step_expect(tk, bids(2, in), bids(1, top));
	step_expect(tk, bids(1, half), bids(2, now));
	sc_topk_destroy(tk);
}

Test(topk, rows_of_negative_weight_are_absent_and_rank_nothing)
{
	static const uint32_t order[] = {1};
	static const bool desc[] = {true};
	struct sc_topk *tk = make(1, 1, 1, order, desc);
	static const int64_t in[][5] = {{1, 9, 1, 1, -1}, {1, 8, 2, 2, 1}};
	static const int64_t top[][5] = {{1, 8, 2, 2, 1}};

	step_expect(tk, bids(2, in), bids(1, top));
	sc_topk_destroy(tk);
}

/* q9: per auction the highest price, and of those the earliest. */
Test(topk, price_descending_then_time_ascending_picks_the_earliest_best)
{
	static const uint32_t order[] = {1, 2};
	static const bool desc[] = {true, false};
	struct sc_topk *tk = make(1, 1, 2, order, desc);
	static const int64_t in[][5] = {{3, 50, 20, 1, 1},
					{3, 50, 10, 2, 1},
					{3, 40, 5, 3, 1},
					{4, -1, 7, 4, 1},
					{4, -2, 1, 5, 1}};
	static const int64_t top[][5] = {{3, 50, 10, 2, 1}, {4, -1, 7, 4, 1}};
	static const int64_t gone[][5] = {{3, 50, 10, 2, -1}};
	static const int64_t next[][5] = {{3, 50, 10, 2, -1},
					  {3, 50, 20, 1, 1}};

	step_expect(tk, bids(5, in), bids(2, top));
	step_expect(tk, bids(1, gone), bids(2, next));
	sc_topk_destroy(tk);
}

/* q18: per (auction, bidder) the latest bid (group of two columns). */
Test(topk, latest_per_two_column_group)
{
	static const uint32_t order[] = {3};
	static const bool desc[] = {true};
	struct sc_topk *tk = make(2, 1, 1, order, desc);
	static const int64_t in[][5] = {
	    {1, 1, 5, 100, 1}, {1, 1, 6, 200, 1}, {1, 2, 7, 150, 1}};
	static const int64_t top[][5] = {{1, 1, 6, 200, 1}, {1, 2, 7, 150, 1}};

	step_expect(tk, bids(3, in), bids(2, top));
	sc_topk_destroy(tk);
}

Test(topk, a_change_behind_the_top_emits_nothing)
{
	static const uint32_t order[] = {1};
	static const bool desc[] = {true};
	struct sc_topk *tk = make(1, 1, 1, order, desc);
	static const int64_t in[][5] = {{1, 9, 1, 1, 1}, {1, 8, 2, 2, 1}};
	static const int64_t top[][5] = {{1, 9, 1, 1, 1}};
	static const int64_t behind[][5] = {{1, 8, 2, 2, -1}, {1, 2, 3, 3, 1}};
	struct sc_batch *empty;

	step_expect(tk, bids(2, in), bids(1, top));
	cr_assert_eq(sc_batch_empty(4, &empty), 0);
	step_expect(tk, bids(2, behind), empty);
	sc_topk_destroy(tk);
}

/* --- a large state -------------------------------------------------------- */

/* Rows (key, v) of a dense state: per key, the `limit` largest v of
 * positive weight (with their weights; v values are distinct per key). */
static bool
dense_matches(const int64_t *w, uint64_t keys, uint64_t vals, uint64_t limit,
	      const struct sc_batch *got, uint64_t *bad)
{
	size_t n = 0;

	for (uint64_t k = 0; k < keys; k++) {
		__int128 ahead = 0;

		for (uint64_t v = vals; v-- > 0 && ahead < (__int128)limit;) {
			uint64_t row[2] = {k, v};
			int64_t wv = w[k * vals + v];
			size_t lo, hi;

			if (wv <= 0)
				continue;
			ahead += wv;
			n++;
			if (sc_batch_key_range(got, row, 2, &lo, &hi) != 0 ||
			    hi != lo + 1 || sc_batch_weight(got, lo) != wv) {
				*bad = k * vals + v;
				return false;
			}
		}
	}
	*bad = UINT64_MAX;
	return n == sc_batch_count(got);
}

Test(topk, large_state_matches_a_dense_reference)
{
	enum { KEYS = 3, VALS = 20000, STEPS = 40, OPS = 3000 };
	struct sc_topk_spec spec = {.ncols = 2,
				    .key = 1,
				    .norder = 1,
				    .order = {1},
				    .desc = {true},
				    .limit = 5};
	int64_t *w = calloc((size_t)KEYS * VALS, sizeof(int64_t));
	struct sc_topk *tk;
	struct sc_batch *acc;
	struct sc_rng r;
	uint64_t seed = sc_prop_seed(8102);

	cr_assert(w);
	sc_rng_seed(&r, seed);
	cr_assert_eq(sc_topk_create(&spec, &tk), 0);
	cr_assert_eq(sc_batch_empty(2, &acc), 0);
	for (int step = 0; step < STEPS; step++) {
		struct sc_batch *d = opgen_dense_delta(&r, w, KEYS, VALS, OPS),
				*out;
		uint64_t bad;

		cr_assert_eq(sc_topk_step(tk, d, &out), 0, "%s", sc_errmsg());
		opgen_dense_add(w, VALS, d);
		opgen_accumulate(&acc, out);
		SC_PROP_ASSERT(seed, SUITE,
			       "large_state_matches_a_dense_"
			       "reference",
			       dense_matches(w, KEYS, VALS, 5, acc, &bad),
			       "step %d: cell %llu", step,
			       (unsigned long long)bad);
		sc_batch_release(d);
		cr_assert_eq(sc_topk_work(tk, (size_t)2 * 16 * OPS), 0);
	}
	cr_assert_gt(sc_topk_rows(tk), 2048);
	sc_batch_release(acc);
	sc_topk_destroy(tk);
	free(w);
}

/* --- errors --------------------------------------------------------------- */

Test(topk, wrong_width_is_eschema_and_changes_nothing)
{
	static const uint32_t order[] = {1};
	static const bool desc[] = {true};
	struct sc_topk *tk = make(1, 1, 1, order, desc);
	static const int64_t in[][5] = {{1, 9, 1, 1, 1}};
	struct sc_batch *narrow, *out = NULL;
	uint64_t row[3] = {1, 2, 3};

	cr_assert_eq(sc_batch_from_records(3, row, NULL, 1, &narrow), 0);
	cr_assert_eq(sc_topk_step(tk, narrow, &out), SC_ESCHEMA);
	cr_assert_null(out);
	cr_assert_eq(sc_topk_rows(tk), 0);
	step_expect(tk, bids(1, in), bids(1, in));
	sc_batch_release(narrow);
	sc_topk_destroy(tk);
}

/* A row's integrated weight past int64 is no error: the
 * output holds it clamped at INT64_MAX and exact again once it fits. */
Test(topk, a_weight_past_int64_clamps_the_output_and_fails_no_step)
{
	static const uint32_t order[] = {1};
	static const bool desc[] = {true};
	struct sc_topk *tk = make(1, 1, 1, order, desc);
	static const int64_t big[][5] = {{1, 9, 1, 1, INT64_MAX}};
	static const int64_t one[][5] = {{1, 9, 1, 1, 1}};
	static const int64_t back[][5] = {{1, 9, 1, 1, -INT64_MAX}};
	static const int64_t down[][5] = {{1, 9, 1, 1, -INT64_MAX + 1}};
	static const int64_t minus[][5] = {{1, 9, 1, 1, -1}};
	struct sc_batch *empty;

	step_expect(tk, bids(1, big), bids(1, big));
	/* MAX + 1, clamped: the output's integral stays at MAX. */
	cr_assert_eq(sc_batch_empty(4, &empty), 0);
	step_expect(tk, bids(1, one), empty);
	/* Back to 1: exact again. */
	step_expect(tk, bids(1, back), bids(1, down));
	step_expect(tk, bids(1, minus), bids(1, minus));
	cr_assert_eq(sc_batch_empty(4, &empty), 0);
	step_expect(tk, NULL, empty);
	sc_topk_destroy(tk);
}

Test(topk, null_arguments_are_einval)
{
	static const uint32_t order[] = {1};
	static const bool desc[] = {false};
	struct sc_topk *tk = make(0, 1, 1, order, desc);
	struct sc_batch *out;
	struct sc_topk_spec s = {.ncols = 2, .norder = 1, .limit = 1};

	cr_assert_eq(sc_topk_step(NULL, NULL, &out), SC_EINVAL);
	cr_assert_eq(sc_topk_step(tk, NULL, NULL), SC_EINVAL);
	cr_assert_eq(sc_topk_create(NULL, &tk), SC_EINVAL);
	cr_assert_eq(sc_topk_create(&s, NULL), SC_EINVAL);
	cr_assert_eq(sc_topk_work(NULL, 1), SC_EINVAL);
	cr_assert_eq(sc_topk_rows(NULL), 0);
	sc_topk_destroy(NULL);
	sc_topk_destroy(tk);
}

Test(topk, create_rejects_bad_specs)
{
	struct sc_topk_spec ok = {
	    .ncols = 3, .key = 1, .norder = 2, .order = {1, 2}, .limit = 3};
	struct sc_topk_spec s;
	struct sc_topk *tk;

	cr_assert_eq(sc_topk_create(&ok, &tk), 0, "%s", sc_errmsg());
	sc_topk_destroy(tk);
	s = ok;
	s.limit = 0;
	cr_assert_eq(sc_topk_create(&s, &tk), SC_EINVAL);
	s = ok;
	s.ncols = 0;
	cr_assert_eq(sc_topk_create(&s, &tk), SC_ESCHEMA);
	s = ok;
	s.key = 3;
	cr_assert_eq(sc_topk_create(&s, &tk), SC_ESCHEMA);
	s = ok;
	s.norder = 0;
	cr_assert_eq(sc_topk_create(&s, &tk), SC_ESCHEMA);
	s = ok;
	s.norder = 3;
	cr_assert_eq(sc_topk_create(&s, &tk), SC_ESCHEMA);
	s = ok;
	s.order[1] = 1; /* repeated */
	cr_assert_eq(sc_topk_create(&s, &tk), SC_ESCHEMA);
	s = ok;
	s.order[0] = 0; /* in the key */
	cr_assert_eq(sc_topk_create(&s, &tk), SC_ESCHEMA);
	s = ok;
	s.order[1] = 3; /* past the row */
	cr_assert_eq(sc_topk_create(&s, &tk), SC_ESCHEMA);
}

/* --- as a graph node ------------------------------------------------------ */

Test(topk, graph_node_checks_its_spec_against_the_stream)
{
	enum sc_type t[4] = {SC_TYPE_I64, SC_TYPE_I64, SC_TYPE_I64,
			     SC_TYPE_I64};
	struct sc_topk_spec s = {.ncols = 3,
				 .key = 1,
				 .norder = 1,
				 .order = {1},
				 .desc = {true},
				 .limit = 1};
	struct sc_schema sch;
	struct sc_graph *g;
	struct sc_node_info ni;
	int in, tk;

	cr_assert_eq(sc_schema_init(&sch, 4, t, NULL), 0);
	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "bids", &sch);
	cr_assert_eq(sc_graph_topk(g, in, &s), SC_ESCHEMA);
	s.ncols = 4;
	cr_assert_eq(sc_graph_topk(g, in, NULL), SC_EINVAL);
	tk = sc_graph_topk(g, in, &s);
	cr_assert_geq(tk, 0, "%s", sc_errmsg());
	cr_assert_eq(sc_graph_node_info(g, tk, &ni), 0);
	cr_assert_eq(ni.kind, SC_NODE_TOPK);
	cr_assert_eq(ni.key, 1);
	cr_assert_str_eq(sc_node_kind_name(ni.kind), "topk");
	cr_assert(sc_schema_equal(ni.schema, &sch));
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(topk, circuit_output_follows_retractions_of_the_top)
{
	enum sc_type t[4] = {SC_TYPE_I64, SC_TYPE_I64, SC_TYPE_I64,
			     SC_TYPE_I64};
	struct sc_topk_spec s = {.ncols = 4,
				 .key = 1,
				 .norder = 1,
				 .order = {1},
				 .desc = {true},
				 .limit = 1};
	static const int64_t in[][5] = {{7, 10, 1, 1, 1}, {7, 30, 2, 1, 1}};
	static const int64_t gone[][5] = {{7, 30, 2, 1, -1}};
	static const int64_t left[][5] = {{7, 10, 1, 1, 1}};
	struct sc_schema sch;
	struct sc_graph *g;
	struct sc_circuit *c;
	struct sc_batch *b, *got, *want;
	int src, out;

	cr_assert_eq(sc_schema_init(&sch, 4, t, NULL), 0);
	cr_assert_eq(sc_graph_create(&g), 0);
	src = sc_graph_input(g, "bids", &sch);
	out = sc_graph_output(g, "top", sc_graph_topk(g, src, &s));
	cr_assert_geq(out, 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_create(g, &c), 0, "%s", sc_errmsg());
	b = bids(2, in);
	cr_assert_eq(sc_circuit_feed(c, src, b), 0);
	sc_batch_release(b);
	cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
	b = bids(1, gone);
	cr_assert_eq(sc_circuit_feed(c, src, b), 0);
	sc_batch_release(b);
	cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_settle(c), 0);
	cr_assert_eq(sc_circuit_pending(c), 0);
	cr_assert_eq(sc_circuit_integral(c, out, &got), 0);
	want = bids(1, left);
	cr_assert(sc_batch_equal(got, want));
	sc_batch_release(got);
	sc_batch_release(want);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(g), 0);
}
