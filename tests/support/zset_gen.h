/*
 * zset_gen.h - random schemas, rows and batches for the operators/ tests,
 * and a naive reference Z-set to check them against.
 *
 * The reference (struct zref) is deliberately simple and shares no code
 * with batch.c: an unsorted array of (row, weight) with linear search, and
 * wide (__int128) weight sums, so it cannot share a bug with the radix sort
 * or the merge. Header-only (static functions): include it in one test
 * file at a time.
 */
#ifndef SC_TEST_ZSET_GEN_H
#define SC_TEST_ZSET_GEN_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "operators/batch.h"
#include "operators/schema.h"
#include "tests/support/prop.h"

/* --- random values ----------------------------------------------------- */

static const double zgen_f64_edges[] = {
    0.0,      -0.0,	1.0,	   -1.0,     DBL_MAX,	-DBL_MAX, DBL_MIN,
    -DBL_MIN, 4.9e-324, -4.9e-324, 2.2e-308, -2.2e-308, INFINITY, -INFINITY,
    NAN,      0.5,	-0.5,	   1e300,    -1e-300,	3.0,
};

static const int64_t zgen_i64_edges[] = {
    INT64_MIN, INT64_MIN + 1, -2, -1, 0, 1, 2, INT64_MAX - 1, INT64_MAX,
};

/* A random double: an edge case, a random finite value, or random bits. */
static inline double
zgen_f64(struct sc_rng *r)
{
	uint64_t bits;
	double x;

	switch (sc_rng_below(r, 3)) {
	case 0:
		return zgen_f64_edges[sc_rng_below(
		    r, sizeof(zgen_f64_edges) / sizeof(zgen_f64_edges[0]))];
	case 1:
		return (sc_rng_unit(r) - 0.5) *
		       pow(10.0, (double)sc_rng_range(r, -30, 30));
	default:
		bits = sc_rng_next(r);
		memcpy(&x, &bits, sizeof(x));
		return x; /* any bit pattern: NaN payloads, subnormals, ... */
	}
}

static inline int64_t
zgen_i64(struct sc_rng *r)
{
	if (sc_rng_below(r, 2))
		return zgen_i64_edges[sc_rng_below(
		    r, sizeof(zgen_i64_edges) / sizeof(zgen_i64_edges[0]))];
	return (int64_t)sc_rng_next(r);
}

/* A random schema of 1..maxcols columns. */
static inline void
zgen_schema(struct sc_rng *r, uint32_t maxcols, struct sc_schema *s)
{
	enum sc_type t[SC_SCHEMA_MAX_COLS];
	uint32_t n = 1 + (uint32_t)sc_rng_below(r, maxcols);

	for (uint32_t i = 0; i < n; i++)
		t[i] = (enum sc_type)sc_rng_below(r, SC__TYPE_COUNT);
	if (sc_schema_init(s, n, t, NULL) != 0)
		abort();
}

/*
 * A random encoded row for schema s. Values come from small domains
 * (`spread` distinct values per column, some edge cases) so that random
 * rows collide often enough to exercise consolidation.
 */
static inline void
zgen_row(struct sc_rng *r, const struct sc_schema *s, uint64_t spread,
	 uint64_t *row)
{
	for (uint32_t i = 0; i < s->ncols; i++) {
		uint64_t k = sc_rng_below(r, spread);

		switch (s->types[i]) {
		case SC_TYPE_I64:
			row[i] = sc_enc_i64(k < 2 ? zgen_i64_edges[k * 8]
						  : (int64_t)k -
							(int64_t)spread / 2);
			break;
		case SC_TYPE_U64:
			row[i] = sc_enc_u64(k == 0 ? UINT64_MAX : k);
			break;
		case SC_TYPE_F64:
			row[i] = sc_enc_f64(k < 20 ? zgen_f64_edges[k]
						   : (double)k / 4.0);
			break;
		case SC_TYPE_BOOL:
			row[i] = sc_enc_bool(k & 1);
			break;
		default:
			row[i] = sc_enc_symbol(1 + k);
			break;
		}
	}
}

/* --- the reference Z-set ------------------------------------------------- */

struct zref {
	uint32_t ncols;
	size_t n, cap;
	uint64_t *rows; /* n * ncols */
	__int128 *w;	/* n; zero entries are allowed (absent) */
};

static inline void
zref_init(struct zref *z, uint32_t ncols)
{
	if (ncols == 0) /* rows have 1..SC_SCHEMA_MAX_COLS columns */
		abort();
	memset(z, 0, sizeof(*z));
	z->ncols = ncols;
}

static inline void
zref_fini(struct zref *z)
{
	free(z->rows);
	free(z->w);
	memset(z, 0, sizeof(*z));
}

static inline void
zref_add(struct zref *z, const uint64_t *row, __int128 w)
{
	for (size_t i = 0; i < z->n; i++)
		if (memcmp(z->rows + i * z->ncols, row, (size_t)z->ncols * 8) ==
		    0) {
			z->w[i] += w;
			return;
		}
	if (z->n == z->cap) {
		z->cap = z->cap ? 2 * z->cap : 16;
		z->rows = realloc(z->rows, z->cap * (size_t)z->ncols * 8);
		z->w = realloc(z->w, z->cap * sizeof(z->w[0]));
		if (!z->rows || !z->w)
			abort();
	}
	memcpy(z->rows + z->n * z->ncols, row, (size_t)z->ncols * 8);
	z->w[z->n++] = w;
}

static inline void
zref_add_batch(struct zref *z, const struct sc_batch *b, __int128 k)
{
	for (size_t i = 0; i < sc_batch_count(b); i++)
		zref_add(z, sc_batch_row(b, i), k * sc_batch_weight(b, i));
}

/* The reference's weight of a row (0 if absent). */
static inline __int128
zref_weight(const struct zref *z, const uint64_t *row)
{
	for (size_t i = 0; i < z->n; i++)
		if (memcmp(z->rows + i * z->ncols, row, (size_t)z->ncols * 8) ==
		    0)
			return z->w[i];
	return 0;
}

static inline size_t
zref_nonzero(const struct zref *z)
{
	size_t n = 0;

	for (size_t i = 0; i < z->n; i++)
		n += z->w[i] != 0;
	return n;
}

/* Lexicographic unsigned order, written out independently of
 * sc_row_cmp. */
static inline int
zref_cmp(const uint64_t *a, const uint64_t *b, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if (a[i] < b[i])
			return -1;
		if (a[i] > b[i])
			return 1;
	}
	return 0;
}

/*
 * Does batch b equal the reference? Checks the batch's invariant
 * independently too (strictly increasing rows, no zero weight).
 */
static inline bool
zref_equals(const struct zref *z, const struct sc_batch *b)
{
	if (sc_batch_ncols(b) != z->ncols ||
	    sc_batch_count(b) != zref_nonzero(z))
		return false;
	for (size_t i = 0; i < sc_batch_count(b); i++) {
		const uint64_t *row = sc_batch_row(b, i);

		if (sc_batch_weight(b, i) == 0)
			return false;
		if (i > 0 &&
		    zref_cmp(sc_batch_row(b, i - 1), row, z->ncols) >= 0)
			return false;
		if (zref_weight(z, row) != sc_batch_weight(b, i))
			return false;
	}
	return true;
}

/* --- random batches ------------------------------------------------------- */

/* A random batch of up to maxrows pushed records; also adds it to z if z
 * is not NULL. */
static inline struct sc_batch *
zgen_batch(struct sc_rng *r, const struct sc_schema *s, size_t maxrows,
	   uint64_t spread, struct zref *z)
{
	struct sc_batch_builder b;
	struct sc_batch *out;
	uint64_t row[SC_SCHEMA_MAX_COLS];
	size_t n = sc_rng_below(r, maxrows + 1);

	if (sc_batch_builder_init(&b, s->ncols))
		abort();
	for (size_t i = 0; i < n; i++) {
		int64_t w = sc_rng_range(r, -3, 3);

		zgen_row(r, s, spread, row);
		if (sc_batch_builder_push(&b, row, s->ncols, w))
			abort();
		if (z)
			zref_add(z, row, w);
	}
	if (sc_batch_builder_finish(&b, &out))
		abort();
	sc_batch_builder_fini(&b);
	return out;
}

#endif /* SC_TEST_ZSET_GEN_H */
