/*
 * test_batch.c - consolidated Z-sets: the group laws on random batches of
 * random schemas, the builder against a naive reference, keys, re-keying,
 * printing, and bad input (which must change nothing).
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "operators/batch.h"
#include "tests/support/prop.h"
#include "tests/support/zset_gen.h"

#define SUITE "batch"

/* A batch from (row, weight) pairs written inline: rows of ncols words. */
static struct sc_batch *
mk(uint32_t ncols, size_t n, const uint64_t *rows, const int64_t *w)
{
	struct sc_batch *b;

	cr_assert_eq(sc_batch_from_records(ncols, rows, w, n, &b), 0, "%s",
		     sc_errmsg());
	return b;
}

/* Fail with both batches printed. */
static void
assert_batch_eq(const struct sc_batch *got, const struct sc_batch *want,
		const char *what)
{
	char *g = NULL, *w = NULL;

	if (sc_batch_equal(got, want))
		return;
	sc_batch_to_string(got, NULL, 20, &g);
	sc_batch_to_string(want, NULL, 20, &w);
	cr_log_error("got %s", g);
	cr_log_error("want %s", w);
	free(g);
	free(w);
	cr_assert_fail("%s", what);
}

Test(batch, builder_consolidates_like_the_reference)
{
	uint64_t base = sc_prop_seed(101);

	for (uint64_t c = 0; c < sc_prop_count(200); c++) {
		struct sc_rng r;
		struct sc_schema s;
		struct zref z;
		struct sc_batch *b;

		sc_rng_seed(&r, base + c);
		zgen_schema(&r, 4, &s);
		zref_init(&z, s.ncols);
		b = zgen_batch(&r, &s, 300, 1 + sc_rng_below(&r, 12), &z);
		SC_PROP_ASSERT(
		    base + c, SUITE, "builder_consolidates_like_the_reference",
		    zref_equals(&z, b) && sc_batch_is_consolidated(b),
		    "batch differs from the reference");
		sc_batch_release(b);
		zref_fini(&z);
	}
}

/*
 * Builders of up to 32 records take their own path in batch.c (insertion
 * sort, compaction in place, the records inline after the header); 33..40
 * take the radix sort. Each case mixes what that path must get right:
 * random or already sorted or reversed order, rows from tiny domains
 * (duplicates), pairs that cancel exactly, and weights near the int64 limits
 * whose totals may overflow (SC_EOVERFLOW, builder kept) or come back in
 * range (only the total counts).
 */
#define SMALL_MAX 40

/* One record's weight: small, huge, or the negation of an earlier one. */
static int64_t
small_weight(struct sc_rng *r)
{
	static const int64_t big[] = {INT64_MAX, INT64_MIN, INT64_MAX - 1,
				      -INT64_MAX, INT64_MIN + 1};

	if (sc_rng_below(r, 8) == 0)
		return big[sc_rng_below(r, sizeof(big) / sizeof(big[0]))];
	return sc_rng_range(r, -3, 3);
}

/* n records (rows of s->ncols words, weights) for one small case. */
static size_t
small_records(struct sc_rng *r, const struct sc_schema *s, uint64_t *rows,
	      int64_t *w)
{
	size_t n = sc_rng_below(r, SMALL_MAX + 1), k = s->ncols;
	uint64_t spread = 1 + sc_rng_below(r, 6);

	for (size_t i = 0; i < n; i++) {
		if (i > 0 && sc_rng_below(r, 4) == 0) {
			/* the exact negation of an earlier record */
			size_t j = sc_rng_below(r, i);

			memcpy(rows + i * k, rows + j * k, k * 8);
			w[i] = w[j] == INT64_MIN ? INT64_MAX : -w[j];
			continue;
		}
		zgen_row(r, s, spread, rows + i * k);
		w[i] = small_weight(r);
	}
	return n;
}

/* Put records in row order (ascending, or descending if `down`), by a
 * stable insertion sort written apart from batch.c's. */
static void
small_order(uint64_t *rows, int64_t *w, size_t n, uint32_t k, bool down)
{
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0; j--) {
			uint64_t tr[SC_SCHEMA_MAX_COLS];
			int64_t tw;
			int c = zref_cmp(rows + (j - 1) * k, rows + j * k, k);

			if (down ? c >= 0 : c <= 0)
				break;
			memcpy(tr, rows + j * k, k * sizeof(uint64_t));
			memcpy(rows + j * k, rows + (j - 1) * k,
			       k * sizeof(uint64_t));
			memcpy(rows + (j - 1) * k, tr, k * sizeof(uint64_t));
			tw = w[j];
			w[j] = w[j - 1];
			w[j - 1] = tw;
		}
}

/* Does any row's total weight leave int64? */
static bool
zref_overflows(const struct zref *z)
{
	for (size_t i = 0; i < z->n; i++)
		if (z->w[i] > INT64_MAX || z->w[i] < INT64_MIN)
			return true;
	return false;
}

Test(batch, small_builders_consolidate_like_the_reference)
{
	uint64_t base = sc_prop_seed(131);
	struct sc_batch_builder bld;
	const char *name = "small_builders_consolidate_like_the_reference";

	for (uint64_t c = 0; c < sc_prop_count(3000); c++) {
		uint64_t rows[SMALL_MAX * 6];
		int64_t w[SMALL_MAX];
		struct sc_rng r;
		struct sc_schema s;
		struct zref z;
		struct sc_batch *b = NULL;
		size_t n, kept = 0;
		int rc;

		sc_rng_seed(&r, base + c);
		zgen_schema(&r, 6, &s);
		n = small_records(&r, &s, rows, w);
		if (sc_rng_below(&r, 4) == 0)
			small_order(rows, w, n, s.ncols, sc_rng_below(&r, 2));
		zref_init(&z, s.ncols);
		cr_assert_eq(sc_batch_builder_init(&bld, s.ncols), 0);
		for (size_t i = 0; i < n; i++) {
			cr_assert_eq(sc_batch_builder_push(&bld,
							   rows + i * s.ncols,
							   s.ncols, w[i]),
				     0);
			zref_add(&z, rows + i * s.ncols, w[i]);
			kept += w[i] != 0;
		}
		rc = sc_batch_builder_finish(&bld, &b);
		if (zref_overflows(&z)) {
			SC_PROP_ASSERT(base + c, SUITE, name,
				       rc == SC_EOVERFLOW && b == NULL &&
					   sc_batch_builder_count(&bld) == kept,
				       "%zu records overflow: rc %d, builder "
				       "holds %zu",
				       n, rc, sc_batch_builder_count(&bld));
		} else {
			SC_PROP_ASSERT(base + c, SUITE, name,
				       rc == 0 && zref_equals(&z, b) &&
					   sc_batch_is_consolidated(b) &&
					   sc_batch_builder_count(&bld) == 0,
				       "%zu records of %u columns: rc %d or "
				       "batch differs from the reference",
				       n, s.ncols, rc);
			sc_batch_release(b);
		}
		sc_batch_builder_fini(&bld);
		zref_fini(&z);
	}
}

/* Merges of at most 32 rows write into the result's own block (as small
 * builders do); 33..40 rows take the separate buffer. Sums that cancel
 * partly or wholly must come out consolidated and freed cleanly. */
Test(batch, small_adds_match_the_reference)
{
	uint64_t base = sc_prop_seed(137);

	for (uint64_t c = 0; c < sc_prop_count(2000); c++) {
		struct sc_rng r;
		struct sc_schema s;
		struct zref z;
		struct sc_batch *a, *b, *nb, *ab;

		sc_rng_seed(&r, base + c);
		zgen_schema(&r, 6, &s);
		zref_init(&z, s.ncols);
		a = zgen_batch(&r, &s, 20, 1 + sc_rng_below(&r, 6), &z);
		b = zgen_batch(&r, &s, 20, 1 + sc_rng_below(&r, 6), &z);
		if (sc_rng_below(&r, 4) == 0) { /* a + (b - a): cancels */
			cr_assert_eq(sc_batch_add(a, b, &ab), 0);
			cr_assert_eq(sc_batch_negate(a, &nb), 0);
			sc_batch_release(b);
			b = nb;
			zref_add_batch(&z, a, -1);
			sc_batch_release(a);
			a = ab;
		}
		cr_assert_eq(sc_batch_add(a, b, &ab), 0);
		SC_PROP_ASSERT(
		    base + c, SUITE, "small_adds_match_the_reference",
		    zref_equals(&z, ab) && sc_batch_is_consolidated(ab),
		    "a + b differs (%zu + %zu rows)", sc_batch_count(a),
		    sc_batch_count(b));
		sc_batch_release(a);
		sc_batch_release(b);
		sc_batch_release(ab);
		zref_fini(&z);
	}
}

/* Large inputs take the radix path through many levels: random words,
 * words that agree on their high bytes, few distinct values. */
Test(batch, radix_sort_of_large_inputs_matches_the_reference_order)
{
	uint64_t base = sc_prop_seed(202);

	for (uint64_t c = 0; c < sc_prop_count(6); c++) {
		struct sc_rng r;
		struct sc_batch_builder bld;
		struct sc_batch *b;
		uint32_t ncols = 1 + (uint32_t)(c % 3);
		size_t n;
		int64_t total = 0, got = 0;

		sc_rng_seed(&r, base + c);
		n = 20000 + sc_rng_below(&r, 20000);
		cr_assert_eq(sc_batch_builder_init(&bld, ncols), 0);
		for (size_t i = 0; i < n; i++) {
			uint64_t row[3];

			for (uint32_t j = 0; j < ncols; j++) {
				uint64_t x = sc_rng_next(&r);

				switch (c % 3) {
				case 0:
					row[j] = x;
					break;
				case 1: /* high bytes shared: skipped levels */
					row[j] = 0xabcdef0000000000ULL |
						 (x & 0xffffff);
					break;
				default: /* many duplicates */
					row[j] = x % 50;
					break;
				}
			}
			cr_assert_eq(sc_batch_builder_push(&bld, row, ncols, 1),
				     0);
			total++;
		}
		cr_assert_eq(sc_batch_builder_finish(&bld, &b), 0);
		for (size_t i = 0; i < sc_batch_count(b); i++) {
			got += sc_batch_weight(b, i);
			if (i > 0)
				SC_PROP_ASSERT(
				    base + c, SUITE,
				    "radix_sort_of_large_inputs_matches_the_"
				    "reference_order",
				    zref_cmp(sc_batch_row(b, i - 1),
					     sc_batch_row(b, i), ncols) < 0,
				    "rows %zu and %zu out of order", i - 1, i);
		}
		cr_assert_eq(got, total,
			     "weights lost: %" PRId64 " of %" PRId64, got,
			     total);
		sc_batch_release(b);
		sc_batch_builder_fini(&bld);
	}
}

static uint32_t qsort_ncols; /* width for cmp_qsort_rec */

static int
cmp_qsort_rec(const void *a, const void *b)
{
	return zref_cmp(a, b, qsort_ncols);
}

/* The reference for large inputs: qsort (not our radix sort) and a
 * compaction written here, independent of batch.c. */
static size_t
qsort_consolidate(uint64_t *recs, size_t n, uint32_t ncols)
{
	size_t stride = ncols + 1, out = 0;

	qsort_ncols = ncols;
	qsort(recs, n, stride * 8, cmp_qsort_rec);
	for (size_t i = 0; i < n;) {
		__int128 w = 0;
		size_t j = i;

		while (j < n && zref_cmp(recs + j * stride, recs + i * stride,
					 ncols) == 0)
			w += (int64_t)recs[j++ * stride + ncols];
		if (w != 0) {
			memmove(recs + out * stride, recs + i * stride,
				ncols * sizeof(uint64_t));
			recs[out * stride + ncols] = (uint64_t)(int64_t)w;
			out++;
		}
		i = j;
	}
	return out;
}

/* A word of one of several shapes that stress different sort paths. */
static uint64_t
adversarial_word(struct sc_rng *r, int shape, size_t i)
{
	uint64_t x = sc_rng_next(r);

	switch (shape) {
	case 0: /* one bucket holds half the input */
		return sc_rng_below(r, 2) ? 0x8000000000000000ULL : x;
	case 1: /* only the last bit varies */
		return 0x123456789abcdef0ULL | (x & 1);
	case 2: /* two huge groups at every byte: 0x00.. or 0xff.. */
		return (x & 1) ? UINT64_MAX - (x >> 60) : (x >> 60);
	case 3: /* already sorted, then a few swaps */
		return (uint64_t)i * 3 + (sc_rng_below(r, 100) == 0 ? 7 : 0);
	case 4: /* small integers: constant high bytes */
		return sc_enc_i64((int64_t)sc_rng_below(r, 3000) - 1500);
	default: /* few distinct values */
		return x % 3;
	}
}

Test(batch, radix_sort_agrees_with_qsort_on_adversarial_inputs)
{
	uint64_t base = sc_prop_seed(222);

	for (uint64_t c = 0; c < sc_prop_count(12); c++) {
		struct sc_rng r;
		struct sc_batch_builder bld;
		struct sc_batch *b;
		uint32_t ncols = 1 + (uint32_t)(c % 3);
		int shape = (int)(c % 6);
		size_t n, m, stride = ncols + 1;
		uint64_t *recs;
		bool same;

		sc_rng_seed(&r, base + c);
		n = 30000 + sc_rng_below(&r, 30000);
		recs = malloc(n * stride * 8);
		cr_assert_eq(sc_batch_builder_init(&bld, ncols), 0);
		for (size_t i = 0; i < n; i++) {
			uint64_t *rec = recs + i * stride;

			for (uint32_t j = 0; j < ncols; j++)
				rec[j] = adversarial_word(&r, shape, i);
			rec[ncols] = (uint64_t)sc_rng_range(&r, -2, 3);
			cr_assert_eq(sc_batch_builder_push(&bld, rec, ncols,
							   (int64_t)rec[ncols]),
				     0);
		}
		cr_assert_eq(sc_batch_builder_finish(&bld, &b), 0);
		m = qsort_consolidate(recs, n, ncols);
		same = sc_batch_count(b) == m &&
		       (m == 0 || memcmp(b->data, recs, m * stride * 8) == 0);
		SC_PROP_ASSERT(base + c, SUITE,
			       "radix_sort_agrees_with_qsort_on_adversarial_"
			       "inputs",
			       same, "shape %d, %u columns: %zu rows vs %zu",
			       shape, ncols, sc_batch_count(b), m);
		sc_batch_release(b);
		sc_batch_builder_fini(&bld);
		free(recs);
	}
}

/* Rows wider than the specialised strides take the generic code paths. */
Test(batch, wide_rows_consolidate_like_the_reference)
{
	uint64_t base = sc_prop_seed(111);

	for (uint64_t c = 0; c < sc_prop_count(40); c++) {
		struct sc_rng r;
		struct sc_schema s;
		struct zref z;
		struct sc_batch *b, *nb, *sum;

		sc_rng_seed(&r, base + c);
		zgen_schema(&r, SC_SCHEMA_MAX_COLS, &s);
		zref_init(&z, s.ncols);
		b = zgen_batch(&r, &s, 400, 1 + sc_rng_below(&r, 3), &z);
		SC_PROP_ASSERT(base + c, SUITE,
			       "wide_rows_consolidate_like_the_reference",
			       zref_equals(&z, b), "%u columns", s.ncols);
		cr_assert_eq(sc_batch_negate(b, &nb), 0);
		cr_assert_eq(sc_batch_add(b, nb, &sum), 0);
		cr_assert_eq(sc_batch_count(sum), 0);
		sc_batch_release(b);
		sc_batch_release(nb);
		sc_batch_release(sum);
		zref_fini(&z);
	}
}

Test(batch, large_wide_inputs_sort_like_qsort)
{
	uint64_t base = sc_prop_seed(112);
	struct sc_rng r;
	struct sc_batch_builder bld;
	struct sc_batch *b;
	const uint32_t ncols = 9;
	size_t n = 40000, m, stride = ncols + 1;
	uint64_t *recs = malloc(n * stride * 8);

	sc_rng_seed(&r, base);
	cr_assert_eq(sc_batch_builder_init(&bld, ncols), 0);
	for (size_t i = 0; i < n; i++) {
		uint64_t *rec = recs + i * stride;

		for (uint32_t j = 0; j < ncols; j++)
			rec[j] = j == 4 ? sc_rng_next(&r) : sc_rng_below(&r, 3);
		rec[ncols] = (uint64_t)sc_rng_range(&r, -1, 2);
		cr_assert_eq(sc_batch_builder_push(&bld, rec, ncols,
						   (int64_t)rec[ncols]),
			     0);
	}
	cr_assert_eq(sc_batch_builder_finish(&bld, &b), 0);
	m = qsort_consolidate(recs, n, ncols);
	SC_PROP_ASSERT(base, SUITE, "large_wide_inputs_sort_like_qsort",
		       sc_batch_count(b) == m &&
			   memcmp(b->data, recs, m * stride * 8) == 0,
		       "%zu rows vs %zu", sc_batch_count(b), m);
	sc_batch_release(b);
	sc_batch_builder_fini(&bld);
	free(recs);
}

/*
 * Every row width the hot loops are specialised for (1 to 4 and 7
 * columns) and the generic ones beside them, at each size the builder
 * sorts differently: a handful (insertion sort), in cache (the scan that
 * stops at the first pair out of order, then msd_small from the top bit),
 * past the cache (the full scan and the first level's scatter). Columns
 * take few values at the front and many behind, so buckets recurse
 * through constant words as bids grouped by auction and bidder do; a few
 * inputs arrive sorted already, a few in order of their first column
 * only.
 */
Test(batch, every_width_and_size_sorts_like_qsort)
{
	static const size_t sizes[] = {12, 900, 5000};
	uint64_t base = sc_prop_seed(113);

	/* The case follows from its seed alone (so SC_SEED replays it), and
	 * 27 seeds in a row give each of 9 widths x 3 sizes once. */
	for (uint64_t c = 0; c < sc_prop_count(27); c++) {
		uint64_t seed = base + c;
		uint32_t ncols = 1 + (uint32_t)(seed % 9);
		size_t n = sizes[seed / 9 % 3], m, stride = ncols + 1;
		uint64_t *recs = malloc(n * stride * 8);
		bool sorted_input = seed % 5 == 0;
		struct sc_batch_builder bld;
		struct sc_batch *b;
		struct sc_rng r;

		sc_rng_seed(&r, seed);
		for (size_t i = 0; i < n; i++) {
			uint64_t *rec = recs + i * stride;

			for (uint32_t j = 0; j < ncols; j++)
				rec[j] = j + 1 < ncols ? sc_rng_below(&r, 2 + j)
						       : sc_rng_next(&r);
			rec[ncols] = (uint64_t)sc_rng_range(&r, -1, 2);
		}
		if (sorted_input)
			m = qsort_consolidate(recs, n, ncols), n = m;
		if (seed % 5 == 1) { /* in order of the first column only */
			qsort_ncols = 1;
			qsort(recs, n, stride * 8, cmp_qsort_rec);
		}
		cr_assert_eq(sc_batch_builder_init(&bld, ncols), 0);
		for (size_t i = 0; i < n; i++)
			cr_assert_eq(sc_batch_builder_push(
					 &bld, recs + i * stride, ncols,
					 (int64_t)recs[i * stride + ncols]),
				     0);
		cr_assert_eq(sc_batch_builder_finish(&bld, &b), 0);
		m = qsort_consolidate(recs, n, ncols);
		SC_PROP_ASSERT(
		    seed, SUITE, "every_width_and_size_sorts_like_qsort",
		    sc_batch_count(b) == m &&
			(m == 0 || memcmp(b->data, recs, m * stride * 8) == 0),
		    "%u columns, %zu rows: %zu rows vs %zu", ncols, n,
		    sc_batch_count(b), m);
		sc_batch_release(b);
		sc_batch_builder_fini(&bld);
		free(recs);
	}
}

Test(batch, builder_result_does_not_depend_on_push_order)
{
	uint64_t base = sc_prop_seed(303);

	for (uint64_t c = 0; c < sc_prop_count(100); c++) {
		struct sc_rng r;
		struct sc_schema s;
		struct sc_batch_builder bld;
		struct sc_batch *a, *b;
		uint64_t *rows;
		int64_t *w;
		size_t n;

		sc_rng_seed(&r, base + c);
		zgen_schema(&r, 3, &s);
		n = sc_rng_below(&r, 200);
		rows = malloc((n + 1) * s.ncols * 8);
		w = malloc((n + 1) * 8);
		for (size_t i = 0; i < n; i++) {
			zgen_row(&r, &s, 6, rows + i * s.ncols);
			w[i] = sc_rng_range(&r, -2, 2);
		}
		a = mk(s.ncols, n, rows, w);
		/* Push the same records in a random permutation. */
		cr_assert_eq(sc_batch_builder_init(&bld, s.ncols), 0);
		for (size_t i = n; i > 0; i--) {
			size_t j = sc_rng_below(&r, i);

			cr_assert_eq(sc_batch_builder_push(&bld,
							   rows + j * s.ncols,
							   s.ncols, w[j]),
				     0);
			memcpy(rows + j * s.ncols, rows + (i - 1) * s.ncols,
			       s.ncols * sizeof(uint64_t));
			w[j] = w[i - 1];
		}
		cr_assert_eq(sc_batch_builder_finish(&bld, &b), 0);
		SC_PROP_ASSERT(base + c, SUITE,
			       "builder_result_does_not_depend_on_push_order",
			       sc_batch_equal(a, b), "orders disagree");
		sc_batch_release(a);
		sc_batch_release(b);
		sc_batch_builder_fini(&bld);
		free(rows);
		free(w);
	}
}

Test(batch, consolidation_is_idempotent)
{
	uint64_t base = sc_prop_seed(404);

	for (uint64_t c = 0; c < sc_prop_count(100); c++) {
		struct sc_rng r;
		struct sc_schema s;
		struct sc_batch_builder bld;
		struct sc_batch *a, *b;

		sc_rng_seed(&r, base + c);
		zgen_schema(&r, 4, &s);
		a = zgen_batch(&r, &s, 200, 5, NULL);
		cr_assert_eq(sc_batch_builder_init(&bld, s.ncols), 0);
		cr_assert_eq(sc_batch_builder_push_batch(&bld, a, 1), 0);
		cr_assert_eq(sc_batch_builder_finish(&bld, &b), 0);
		SC_PROP_ASSERT(base + c, SUITE, "consolidation_is_idempotent",
			       sc_batch_equal(a, b),
			       "re-consolidating changed it");
		sc_batch_release(a);
		sc_batch_release(b);
		sc_batch_builder_fini(&bld);
	}
}

Test(batch, add_is_associative_and_commutative)
{
	uint64_t base = sc_prop_seed(505);

	for (uint64_t c = 0; c < sc_prop_count(150); c++) {
		struct sc_rng r;
		struct sc_schema s;
		struct sc_batch *a, *b, *d, *ab, *ba, *ab_d, *bd, *a_bd;

		sc_rng_seed(&r, base + c);
		zgen_schema(&r, 3, &s);
		a = zgen_batch(&r, &s, 100, 4, NULL);
		b = zgen_batch(&r, &s, 100, 4, NULL);
		d = zgen_batch(&r, &s, 100, 4, NULL);
		cr_assert_eq(sc_batch_add(a, b, &ab), 0);
		cr_assert_eq(sc_batch_add(b, a, &ba), 0);
		cr_assert_eq(sc_batch_add(ab, d, &ab_d), 0);
		cr_assert_eq(sc_batch_add(b, d, &bd), 0);
		cr_assert_eq(sc_batch_add(a, bd, &a_bd), 0);
		SC_PROP_ASSERT(base + c, SUITE,
			       "add_is_associative_and_commutative",
			       sc_batch_equal(ab, ba), "a + b != b + a");
		SC_PROP_ASSERT(
		    base + c, SUITE, "add_is_associative_and_commutative",
		    sc_batch_equal(ab_d, a_bd), "(a + b) + d != a + (b + d)");
		SC_PROP_ASSERT(
		    base + c, SUITE, "add_is_associative_and_commutative",
		    sc_batch_is_consolidated(ab_d), "sum not consolidated");
		sc_batch_release(a);
		sc_batch_release(b);
		sc_batch_release(d);
		sc_batch_release(ab);
		sc_batch_release(ba);
		sc_batch_release(ab_d);
		sc_batch_release(bd);
		sc_batch_release(a_bd);
	}
}

Test(batch, add_matches_the_reference)
{
	uint64_t base = sc_prop_seed(606);

	for (uint64_t c = 0; c < sc_prop_count(150); c++) {
		struct sc_rng r;
		struct sc_schema s;
		struct zref z;
		struct sc_batch *a, *b, *ab;

		sc_rng_seed(&r, base + c);
		zgen_schema(&r, 3, &s);
		zref_init(&z, s.ncols);
		a = zgen_batch(&r, &s, 150, 5, &z);
		b = zgen_batch(&r, &s, 150, 5, &z);
		cr_assert_eq(sc_batch_add(a, b, &ab), 0);
		SC_PROP_ASSERT(base + c, SUITE, "add_matches_the_reference",
			       zref_equals(&z, ab), "a + b differs");
		sc_batch_release(a);
		sc_batch_release(b);
		sc_batch_release(ab);
		zref_fini(&z);
	}
}

Test(batch, zero_is_the_identity_and_a_plus_neg_a_is_zero)
{
	uint64_t base = sc_prop_seed(707);

	for (uint64_t c = 0; c < sc_prop_count(150); c++) {
		struct sc_rng r;
		struct sc_schema s;
		struct sc_batch *a, *zero, *a0, *na, *sum, *nna;

		sc_rng_seed(&r, base + c);
		zgen_schema(&r, 4, &s);
		a = zgen_batch(&r, &s, 150, 6, NULL);
		cr_assert_eq(sc_batch_empty(s.ncols, &zero), 0);
		cr_assert_eq(sc_batch_add(a, zero, &a0), 0);
		cr_assert_eq(sc_batch_negate(a, &na), 0);
		cr_assert_eq(sc_batch_negate(na, &nna), 0);
		cr_assert_eq(sc_batch_add(a, na, &sum), 0);
		SC_PROP_ASSERT(base + c, SUITE,
			       "zero_is_the_identity_and_a_plus_neg_a_is_zero",
			       sc_batch_equal(a, a0), "a + 0 != a");
		SC_PROP_ASSERT(base + c, SUITE,
			       "zero_is_the_identity_and_a_plus_neg_a_is_zero",
			       sc_batch_count(sum) == 0, "a + -a != 0");
		SC_PROP_ASSERT(base + c, SUITE,
			       "zero_is_the_identity_and_a_plus_neg_a_is_zero",
			       sc_batch_equal(a, nna), "--a != a");
		sc_batch_release(a);
		sc_batch_release(zero);
		sc_batch_release(a0);
		sc_batch_release(na);
		sc_batch_release(nna);
		sc_batch_release(sum);
	}
}

Test(batch, scale_equals_repeated_addition)
{
	uint64_t base = sc_prop_seed(808);

	for (uint64_t c = 0; c < sc_prop_count(100); c++) {
		struct sc_rng r;
		struct sc_schema s;
		struct sc_batch *a, *acc, *k_a, *next;
		int64_t k;

		sc_rng_seed(&r, base + c);
		zgen_schema(&r, 3, &s);
		a = zgen_batch(&r, &s, 80, 5, NULL);
		k = sc_rng_range(&r, 0, 5);
		cr_assert_eq(sc_batch_empty(s.ncols, &acc), 0);
		for (int64_t i = 0; i < k; i++) {
			cr_assert_eq(sc_batch_add(acc, a, &next), 0);
			sc_batch_release(acc);
			acc = next;
		}
		cr_assert_eq(sc_batch_scale(a, k, &k_a), 0);
		SC_PROP_ASSERT(
		    base + c, SUITE, "scale_equals_repeated_addition",
		    sc_batch_equal(acc, k_a), "k * a != a + ... + a");
		sc_batch_release(a);
		sc_batch_release(acc);
		sc_batch_release(k_a);
	}
}

Test(batch, sum_of_many_equals_pairwise_adds)
{
	uint64_t base = sc_prop_seed(909);
	struct sc_rng r;
	struct sc_schema s;
	struct sc_batch *bs[7], *acc, *next, *sum;
	struct zref z;

	sc_rng_seed(&r, base);
	zgen_schema(&r, 3, &s);
	zref_init(&z, s.ncols);
	for (int i = 0; i < 7; i++)
		bs[i] = zgen_batch(&r, &s, 60, 4, &z);
	cr_assert_eq(sc_batch_sum(bs, 7, &sum), 0);
	cr_assert_eq(sc_batch_empty(s.ncols, &acc), 0);
	for (int i = 0; i < 7; i++) {
		cr_assert_eq(sc_batch_add(acc, bs[i], &next), 0);
		sc_batch_release(acc);
		acc = next;
	}
	assert_batch_eq(sum, acc, "sum != fold of adds");
	cr_assert(zref_equals(&z, sum));
	for (int i = 0; i < 7; i++)
		sc_batch_release(bs[i]);
	sc_batch_release(acc);
	sc_batch_release(sum);
	zref_fini(&z);
}

Test(batch, sum_of_many_batches_is_the_sum_of_their_rows)
{
	uint64_t base = sc_prop_seed(910);

	for (uint64_t c = 0; c < sc_prop_count(60); c++) {
		struct sc_batch *bs[70], *sum;
		struct sc_rng r;
		struct sc_schema s;
		struct zref z;
		size_t n;

		sc_rng_seed(&r, base + c);
		n = 1 + sc_rng_below(&r, 70);
		zgen_schema(&r, 4, &s);
		zref_init(&z, s.ncols);
		/* Few distinct rows over many batches: rows meet in
		 * several inputs at once, and some cancel to 0. */
		for (size_t i = 0; i < n; i++)
			bs[i] =
			    zgen_batch(&r, &s, 40, 1 + sc_rng_below(&r, 5), &z);
		cr_assert_eq(sc_batch_sum(bs, n, &sum), 0, "%s", sc_errmsg());
		SC_PROP_ASSERT(base + c, SUITE,
			       "sum_of_many_batches_is_the_sum_of_their_rows",
			       zref_equals(&z, sum) &&
				   sc_batch_is_consolidated(sum),
			       "sum of %zu batches differs", n);
		for (size_t i = 0; i < n; i++)
			sc_batch_release(bs[i]);
		sc_batch_release(sum);
		zref_fini(&z);
	}
}

Test(batch, sum_fails_only_when_a_rows_total_leaves_int64)
{
	uint64_t r1 = 1, r2 = 2;
	int64_t wmax = INT64_MAX, one = 1, mone = -1;
	struct sc_batch *bs[4], *sum, *want;

	/* +MAX and +1 meet in the tree's first half, -1 in the second:
	 * a partial sum passes int64, the total (MAX) does not. */
	cr_assert_eq(sc_batch_from_records(1, &r1, &wmax, 1, &bs[0]), 0);
	cr_assert_eq(sc_batch_from_records(1, &r1, &one, 1, &bs[1]), 0);
	cr_assert_eq(sc_batch_from_records(1, &r1, &mone, 1, &bs[2]), 0);
	cr_assert_eq(sc_batch_from_records(1, &r2, &one, 1, &bs[3]), 0);
	cr_assert_eq(sc_batch_sum(bs, 4, &sum), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_batch_from_records(1, (uint64_t[]){1, 2},
					   (int64_t[]){INT64_MAX, 1}, 2, &want),
		     0);
	cr_assert(sc_batch_equal(sum, want));
	sc_batch_release(sum);
	sc_batch_release(want);
	/* A total outside int64 is still SC_EOVERFLOW. */
	sc_batch_release(bs[2]);
	cr_assert_eq(sc_batch_from_records(1, &r2, &mone, 1, &bs[2]), 0);
	sum = NULL;
	cr_assert_eq(sc_batch_sum(bs, 4, &sum), SC_EOVERFLOW);
	cr_assert_null(sum);
	for (int i = 0; i < 4; i++)
		sc_batch_release(bs[i]);
}

/* A random batch of up to 200 rows of at most 4 columns, 3 values per
 * column (so keys repeat), and a random key of k columns (0..ncols)
 * drawn the same way. */
static struct sc_batch *
keyed_case(struct sc_rng *r, uint64_t seed, uint64_t *key, uint32_t *k)
{
	struct sc_schema s;
	struct sc_batch *b;

	sc_rng_seed(r, seed);
	zgen_schema(r, 4, &s);
	b = zgen_batch(r, &s, 200, 3, NULL);
	*k = (uint32_t)sc_rng_below(r, s.ncols + 1);
	zgen_row(r, &s, 3, key);
	return b;
}

Test(batch, key_range_finds_exactly_the_rows_with_the_prefix)
{
	uint64_t base = sc_prop_seed(1001);

	for (uint64_t c = 0; c < sc_prop_count(100); c++) {
		struct sc_rng r;
		uint64_t key[SC_SCHEMA_MAX_COLS];
		uint32_t k;
		size_t lo, hi;
		struct sc_batch *b = keyed_case(&r, base + c, key, &k);

		cr_assert_eq(sc_batch_key_range(b, key, k, &lo, &hi), 0);
		for (size_t i = 0; i < sc_batch_count(b); i++) {
			bool match = zref_cmp(sc_batch_row(b, i), key, k) == 0;

			SC_PROP_ASSERT(
			    base + c, SUITE,
			    "key_range_finds_exactly_the_rows_with_the_"
			    "prefix",
			    match == (i >= lo && i < hi),
			    "row %zu: match %d, range [%zu, %zu)", i, match, lo,
			    hi);
		}
		sc_batch_release(b);
	}
}

Test(batch, lower_bound_is_the_first_row_from_start_not_below_the_key)
{
	uint64_t base = sc_prop_seed(1051);

	for (uint64_t c = 0; c < sc_prop_count(100); c++) {
		struct sc_rng r;
		uint64_t key[SC_SCHEMA_MAX_COLS];
		uint32_t k;
		struct sc_batch *b = keyed_case(&r, base + c, key, &k);
		size_t n = sc_batch_count(b), at, from;
		bool ok;

		from = (size_t)sc_rng_below(&r, n + 1);
		at = sc_batch_lower_bound(b, key, k, from);
		ok = at >= from && at <= n;
		for (size_t i = from; ok && i < n; i++)
			ok = (zref_cmp(sc_batch_row(b, i), key, k) < 0) ==
			     (i < at);
		SC_PROP_ASSERT(base + c, SUITE,
			       "lower_bound_is_the_first_row_from_"
			       "start_not_below_the_key",
			       ok, "lower bound %zu from %zu of %zu rows", at,
			       from, n);
		sc_batch_release(b);
	}
}

Test(batch, index_by_projects_and_reconsolidates)
{
	uint64_t base = sc_prop_seed(1101);

	for (uint64_t c = 0; c < sc_prop_count(100); c++) {
		struct sc_rng r;
		struct sc_schema s;
		struct zref z;
		struct sc_batch *b, *ix;
		uint32_t cols[4], n;

		sc_rng_seed(&r, base + c);
		zgen_schema(&r, 4, &s);
		b = zgen_batch(&r, &s, 150, 4, NULL);
		n = 1 + (uint32_t)sc_rng_below(&r, 4);
		for (uint32_t j = 0; j < n; j++)
			cols[j] = (uint32_t)sc_rng_below(&r, s.ncols);
		zref_init(&z, n);
		for (size_t i = 0; i < sc_batch_count(b); i++) {
			uint64_t row[4];

			for (uint32_t j = 0; j < n; j++)
				row[j] = sc_batch_row(b, i)[cols[j]];
			zref_add(&z, row, sc_batch_weight(b, i));
		}
		cr_assert_eq(sc_batch_index_by(b, cols, n, &ix), 0);
		SC_PROP_ASSERT(base + c, SUITE,
			       "index_by_projects_and_reconsolidates",
			       zref_equals(&z, ix), "index_by differs");
		sc_batch_release(b);
		sc_batch_release(ix);
		zref_fini(&z);
	}
}

/*
 * A projection that keeps the first k columns of its input in front
 * comes out in order of those, and only the runs that agree on them are
 * sorted (batch_sort.c, sort_prefix). Checked against a plain sort of
 * the projected rows, with few distinct values (long runs, runs past
 * the insertion sort's 16 and, with one leading value, past the cache,
 * which a run is split to fit), columns repeated or dropped after the
 * prefix, and weights that cancel.
 */
Test(batch, index_by_a_kept_prefix_matches_a_plain_sort)
{
	uint64_t seed = sc_prop_seed(1201);
	struct sc_rng r;

	sc_rng_seed(&r, seed);
	for (uint64_t c = 0; c < sc_prop_count(60); c++) {
		uint32_t ncols = 2 + (uint32_t)sc_rng_below(&r, 5);
		uint32_t k = 1 + (uint32_t)sc_rng_below(&r, ncols);
		uint32_t n = k + (uint32_t)sc_rng_below(&r, 4), cols[16];
		size_t rows =
		    (size_t)sc_rng_below(&r, c % 10 == 9 ? 20000 : 3000);
		uint64_t span = 1 + sc_rng_below(&r, c % 5 == 4 ? 1 : 12);
		uint64_t *in = malloc((rows + 1) * ncols * sizeof(uint64_t));
		uint64_t *proj = malloc((rows + 1) * 16 * sizeof(uint64_t));
		int64_t *w = malloc((rows + 1) * sizeof(int64_t));
		struct sc_batch *b, *ix, *want;

		cr_assert(in && proj && w);
		for (uint32_t j = 0; j < n; j++)
			cols[j] = j < k ? j : (uint32_t)sc_rng_below(&r, ncols);
		for (size_t i = 0; i < rows; i++) {
			for (uint32_t j = 0; j < ncols; j++)
				in[i * ncols + j] =
				    sc_rng_below(&r, j == 0 ? span : 12);
			w[i] = (int64_t)sc_rng_below(&r, 5) - 2;
		}
		cr_assert_eq(sc_batch_from_records(ncols, in, w, rows, &b), 0);
		for (size_t i = 0; i < sc_batch_count(b); i++) {
			for (uint32_t j = 0; j < n; j++)
				proj[i * n + j] = sc_batch_row(b, i)[cols[j]];
			w[i] = sc_batch_weight(b, i);
		}
		cr_assert_eq(
		    sc_batch_from_records(n, proj, w, sc_batch_count(b), &want),
		    0);
		cr_assert_eq(sc_batch_index_by(b, cols, n, &ix), 0);
		SC_PROP_ASSERT(
		    seed, SUITE, "index_by_a_kept_prefix_matches_a_plain_sort",
		    sc_batch_is_consolidated(ix) && sc_batch_equal(ix, want),
		    "round %llu: %zu rows, %u columns, prefix %u "
		    "of %u: differs from the plain sort",
		    (unsigned long long)c, sc_batch_count(b), ncols, k, n);
		sc_batch_release(b);
		sc_batch_release(ix);
		sc_batch_release(want);
		free(in);
		free(proj);
		free(w);
	}
}

/*
 * A re-key that only permutes columns takes a stable radix sort instead
 * of the general one (batch.c, index_by_stable): check it against the
 * reference on batches large enough to take it, with every kind of
 * permutation (one column moved to the front, the identity, random).
 */
Test(batch, index_by_a_permutation_matches_the_reference)
{
	uint64_t base = sc_prop_seed(1102);

	for (uint64_t c = 0; c < sc_prop_count(100); c++) {
		struct sc_rng r;
		struct sc_schema s;
		struct zref z;
		struct sc_batch *b, *ix;
		uint32_t cols[4], n;

		sc_rng_seed(&r, base + c);
		zgen_schema(&r, 4, &s);
		b = zgen_batch(&r, &s, 3000, 1 + sc_rng_below(&r, 300), NULL);
		n = s.ncols;
		for (uint32_t j = 0; j < n; j++)
			cols[j] = j;
		if (c % 3 == 0 && n > 1) { /* move one column to the front */
			uint32_t m = 1 + (uint32_t)sc_rng_below(&r, n - 1);

			for (uint32_t j = m; j > 0; j--)
				cols[j] = cols[j - 1];
			cols[0] = m;
		} else if (c % 3 == 1) { /* a random permutation */
			for (uint32_t j = n; j > 1; j--) {
				uint32_t x = (uint32_t)sc_rng_below(&r, j);
				uint32_t tmp = cols[j - 1];

				cols[j - 1] = cols[x];
				cols[x] = tmp;
			}
		}
		zref_init(&z, n);
		for (size_t i = 0; i < sc_batch_count(b); i++) {
			uint64_t row[4];

			for (uint32_t j = 0; j < n; j++)
				row[j] = sc_batch_row(b, i)[cols[j]];
			zref_add(&z, row, sc_batch_weight(b, i));
		}
		cr_assert_eq(sc_batch_index_by(b, cols, n, &ix), 0);
		SC_PROP_ASSERT(
		    base + c, SUITE,
		    "index_by_a_permutation_matches_the_reference",
		    zref_equals(&z, ix) && sc_batch_is_consolidated(ix),
		    "index_by of %zu rows differs", sc_batch_count(b));
		sc_batch_release(b);
		sc_batch_release(ix);
		zref_fini(&z);
	}
}

Test(batch, zero_weights_are_dropped)
{
	uint64_t rows[] = {5, 5, 7, 9};
	int64_t w[] = {2, -2, 0, 1};
	struct sc_batch *b = mk(1, 4, rows, w);

	cr_assert_eq(sc_batch_count(b), 1);
	cr_assert_eq(sc_batch_row(b, 0)[0], 9);
	cr_assert_eq(sc_batch_weight(b, 0), 1);
	sc_batch_release(b);
}

Test(batch, retained_batch_outlives_its_first_release)
{
	uint64_t rows[] = {1, 2};
	struct sc_batch *b = mk(1, 2, rows, NULL);

	cr_assert_eq(sc_batch_retain(b), b);
	sc_batch_release(b);
	cr_assert_eq(sc_batch_count(b), 2); /* still alive (ASan checks) */
	sc_batch_release(b);
}

/* --- bad input changes nothing
 * ---------------------------------------------
 */

static void
assert_msg_names(const char *needle)
{
	cr_assert(strstr(sc_errmsg(), needle) != NULL,
		  "message \"%s\" does not name \"%s\"", sc_errmsg(), needle);
}

Test(batch, push_with_wrong_column_count_is_eschema_and_changes_nothing)
{
	struct sc_batch_builder bld;
	uint64_t row[3] = {1, 2, 3};

	cr_assert_eq(sc_batch_builder_init(&bld, 2), 0);
	cr_assert_eq(sc_batch_builder_push(&bld, row, 2, 1), 0);
	cr_assert_eq(sc_batch_builder_push(&bld, row, 3, 1), SC_ESCHEMA);
	assert_msg_names("3 columns");
	assert_msg_names("SC_ESCHEMA");
	cr_assert_eq(sc_batch_builder_count(&bld), 1);
	sc_batch_builder_fini(&bld);
}

Test(batch, builder_with_bad_column_count_is_eschema)
{
	struct sc_batch_builder bld = {.ncols = 77};

	cr_assert_eq(sc_batch_builder_init(&bld, 0), SC_ESCHEMA);
	assert_msg_names("0 columns");
	cr_assert_eq(bld.ncols, 77, "builder written on failure");
	cr_assert_eq(sc_batch_builder_init(&bld, SC_SCHEMA_MAX_COLS + 1),
		     SC_ESCHEMA);
}

Test(batch, add_of_different_widths_is_eschema)
{
	uint64_t r1[] = {1}, r2[] = {1, 2};
	struct sc_batch *a = mk(1, 1, r1, NULL), *b = mk(2, 1, r2, NULL);
	struct sc_batch *out = (struct sc_batch *)0x1;

	cr_assert_eq(sc_batch_add(a, b, &out), SC_ESCHEMA);
	assert_msg_names("1 and 2 columns");
	cr_assert_eq(out, (struct sc_batch *)0x1, "out written on failure");
	sc_batch_release(a);
	sc_batch_release(b);
}

Test(batch, add_overflow_is_eoverflow_and_changes_nothing)
{
	uint64_t rows[] = {1, 2};
	int64_t wa[] = {INT64_MAX, 5}, wb[] = {1, 5};
	struct sc_batch *a = mk(1, 2, rows, wa), *b = mk(1, 2, rows, wb);
	struct sc_batch *a_copy = mk(1, 2, rows, wa), *out = NULL;

	cr_assert_eq(sc_batch_add(a, b, &out), SC_EOVERFLOW);
	assert_msg_names("SC_EOVERFLOW");
	assert_msg_names("9223372036854775807");
	cr_assert_null(out);
	assert_batch_eq(a, a_copy, "a changed by a failed add");
	sc_batch_release(a);
	sc_batch_release(b);
	sc_batch_release(a_copy);
}

Test(batch, scale_overflow_is_eoverflow_and_changes_nothing)
{
	uint64_t rows[] = {1, 2};
	int64_t w[] = {3, INT64_MAX / 2};
	struct sc_batch *a = mk(1, 2, rows, w), *a_copy = mk(1, 2, rows, w);
	struct sc_batch *out = NULL;

	cr_assert_eq(sc_batch_scale(a, 3, &out), SC_EOVERFLOW);
	assert_msg_names("leaves int64");
	cr_assert_null(out);
	assert_batch_eq(a, a_copy, "a changed by a failed scale");
	sc_batch_release(a);
	sc_batch_release(a_copy);
}

Test(batch, negate_of_int64_min_is_eoverflow)
{
	uint64_t rows[] = {4};
	int64_t w[] = {INT64_MIN};
	struct sc_batch *a = mk(1, 1, rows, w), *out = NULL;

	cr_assert_eq(sc_batch_negate(a, &out), SC_EOVERFLOW);
	assert_msg_names("sc_batch_negate");
	cr_assert_null(out);
	cr_assert_eq(sc_batch_weight(a, 0), INT64_MIN);
	sc_batch_release(a);
}

Test(batch, finish_overflow_is_eoverflow_and_keeps_the_records)
{
	struct sc_batch_builder bld;
	struct sc_batch *out = NULL, *half;
	uint64_t row[2] = {8, 9}, other[2] = {1, 1};

	cr_assert_eq(sc_batch_builder_init(&bld, 2), 0);
	cr_assert_eq(sc_batch_builder_push(&bld, row, 2, INT64_MAX), 0);
	cr_assert_eq(sc_batch_builder_push(&bld, other, 2, 1), 0);
	cr_assert_eq(sc_batch_builder_push(&bld, row, 2, 1), 0);
	cr_assert_eq(sc_batch_builder_finish(&bld, &out), SC_EOVERFLOW);
	assert_msg_names("sum beyond int64");
	cr_assert_null(out);
	cr_assert_eq(sc_batch_builder_count(&bld), 3);
	/* Still the same records: taking one back makes it finish. */
	cr_assert_eq(sc_batch_builder_push(&bld, row, 2, -1), 0);
	cr_assert_eq(sc_batch_builder_finish(&bld, &half), 0);
	cr_assert_eq(sc_batch_count(half), 2);
	cr_assert_eq(sc_batch_weight(half, 1), INT64_MAX);
	sc_batch_release(half);
	sc_batch_builder_fini(&bld);
}

Test(batch, push_batch_overflow_is_eoverflow_and_changes_nothing)
{
	uint64_t rows[] = {1, 2};
	int64_t w[] = {1, INT64_MIN};
	struct sc_batch *a = mk(1, 2, rows, w);
	struct sc_batch_builder bld;

	cr_assert_eq(sc_batch_builder_init(&bld, 1), 0);
	cr_assert_eq(sc_batch_builder_push_batch(&bld, a, -1), SC_EOVERFLOW);
	cr_assert_eq(sc_batch_builder_count(&bld), 0);
	sc_batch_builder_fini(&bld);
	sc_batch_release(a);
}

Test(batch, null_arguments_are_einval)
{
	struct sc_batch *out = NULL, *a;
	struct sc_batch_builder bld;
	uint64_t row[1] = {0};
	size_t lo, hi;

	a = mk(1, 1, row, NULL);
	cr_assert_eq(sc_batch_builder_init(NULL, 1), SC_EINVAL);
	assert_msg_names("NULL");
	cr_assert_eq(sc_batch_builder_init(&bld, 1), 0);
	cr_assert_eq(sc_batch_builder_push(&bld, NULL, 1, 1), SC_EINVAL);
	assert_msg_names("row is NULL");
	cr_assert_eq(sc_batch_builder_push(NULL, row, 1, 1), SC_EINVAL);
	cr_assert_eq(sc_batch_builder_finish(&bld, NULL), SC_EINVAL);
	cr_assert_eq(sc_batch_add(a, NULL, &out), SC_EINVAL);
	assert_msg_names("b is NULL");
	cr_assert_eq(sc_batch_add(NULL, a, &out), SC_EINVAL);
	cr_assert_eq(sc_batch_add(a, a, NULL), SC_EINVAL);
	cr_assert_eq(sc_batch_negate(NULL, &out), SC_EINVAL);
	cr_assert_eq(sc_batch_scale(a, 2, NULL), SC_EINVAL);
	cr_assert_eq(sc_batch_key_range(a, NULL, 1, &lo, &hi), SC_EINVAL);
	cr_assert_eq(sc_batch_key_range(a, row, 2, &lo, &hi), SC_ESCHEMA);
	cr_assert_eq(sc_batch_sum(NULL, 2, &out), SC_EINVAL);
	cr_assert_eq(sc_batch_empty(1, NULL), SC_EINVAL);
	cr_assert_null(out);
	cr_assert_eq(sc_batch_count(a), 1);
	sc_batch_release(a);
	sc_batch_builder_fini(&bld);
	sc_batch_release(NULL); /* allowed */
	cr_assert(sc_batch_equal(NULL, NULL));
}

Test(batch, index_by_with_a_bad_column_is_eschema)
{
	uint64_t row[2] = {1, 2};
	uint32_t cols[2] = {1, 2};
	struct sc_batch *a = mk(2, 1, row, NULL), *out = NULL;

	cr_assert_eq(sc_batch_index_by(a, cols, 2, &out), SC_ESCHEMA);
	assert_msg_names("column 2");
	cr_assert_null(out);
	sc_batch_release(a);
}

/* --- printing
 * ----------------------------------------------------------------- */

Test(batch, to_string_decodes_rows_by_schema)
{
	enum sc_type t[3] = {SC_TYPE_I64, SC_TYPE_F64, SC_TYPE_BOOL};
	struct sc_schema s;
	uint64_t rows[6];
	int64_t w[2] = {3, -1};
	struct sc_batch *b;
	char *text;

	cr_assert_eq(sc_schema_init(&s, 3, t, NULL), 0);
	rows[0] = sc_enc_i64(-7);
	rows[1] = sc_enc_f64(2.5);
	rows[2] = sc_enc_bool(true);
	rows[3] = sc_enc_i64(4);
	rows[4] = sc_enc_f64(-0.0);
	rows[5] = sc_enc_bool(false);
	b = mk(3, 2, rows, w);
	cr_assert_eq(sc_batch_to_string(b, &s, 10, &text), 0);
	cr_assert(strstr(text, "(-7, 2.5, true) x 3") != NULL, "%s", text);
	cr_assert(strstr(text, "(4, 0, false) x -1") != NULL, "%s", text);
	cr_assert(strstr(text, "2 rows") != NULL, "%s", text);
	free(text);
	cr_assert_eq(sc_batch_to_string(b, &s, 1, &text), 0);
	cr_assert(strstr(text, "... 1 more") != NULL, "%s", text);
	free(text);
	sc_batch_release(b);
}

/* --- the large-buffer cache
 * -------------------------------------------------
 */

Test(batch, freed_large_buffers_are_kept_for_reuse_until_trimmed)
{
	struct sc_batch_builder bld;
	struct sc_batch *b;
	size_t n = 300000; /* 300k rows x 3 words = 7.2 MB: a large buffer */

	sc_batch_cache_trim();
	cr_assert_eq(sc_batch_cache_bytes(), 0);
	cr_assert_eq(sc_batch_builder_init(&bld, 2), 0);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t row[2] = {i * 7919 % n, i};

		cr_assert_eq(sc_batch_builder_push(&bld, row, 2, 1), 0);
	}
	cr_assert_eq(sc_batch_builder_finish(&bld, &b), 0);
	cr_assert_eq(sc_batch_count(b), n);
	sc_batch_release(b);
	cr_assert_geq(sc_batch_cache_bytes(), n * 3 * 8,
		      "the batch's buffer was not kept");
	/* The next large batch takes it (the builder's buffers are
	 * still its own), and the rows come out right in recycled
	 * memory. */
	for (uint64_t i = 0; i < n; i++) {
		uint64_t row[2] = {n - i, 0};

		cr_assert_eq(sc_batch_builder_push(&bld, row, 2, 2), 0);
	}
	cr_assert_eq(sc_batch_builder_finish(&bld, &b), 0);
	cr_assert_eq(sc_batch_count(b), n);
	cr_assert_eq(sc_batch_row(b, 0)[0], 1);
	cr_assert_eq(sc_batch_weight(b, n - 1), 2);
	cr_assert(sc_batch_is_consolidated(b));
	sc_batch_release(b);
	sc_batch_builder_fini(&bld);
	sc_batch_cache_trim();
	cr_assert_eq(sc_batch_cache_bytes(), 0);
}
