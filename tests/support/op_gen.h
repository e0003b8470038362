/*
 * op_gen.h - random delta sequences for the stateful operator tests, and
 * comparisons of reference Z-sets, small batches and an input cut into
 * steps. Header-only; builds on zset_gen.h's naive reference (struct
 * zref).
 *
 * A delta mixes the changes a live stream makes: inserts of new rows
 * (weights 1..3, some negative, some large), retractions of rows the
 * integral holds (all of their weight or part of it), and overwrites (a
 * row retracted and the same key inserted with other values), so that
 * integrated weights cross zero both ways.
 */
#ifndef SC_TEST_OP_GEN_H
#define SC_TEST_OP_GEN_H

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "operators/batch.h"
#include "tests/support/prop.h"
#include "tests/support/zset_gen.h"

/* A column value: the word for column `col` of a fresh row. */
typedef uint64_t (*opgen_col_fn)(struct sc_rng *r, uint32_t col, void *ctx);

struct opgen {
	uint32_t ncols;	  /* row width */
	uint32_t k;	  /* key columns (kept by overwrites) */
	opgen_col_fn col; /* values */
	void *ctx;	  /* for col */
	bool big;	  /* sometimes weights of +-2^40 */
};

/* A random weight for an insert. */
static inline int64_t
opgen_weight(struct sc_rng *r, const struct opgen *g)
{
	uint64_t c = sc_rng_below(r, 20);

	if (g->big && c == 0)
		return sc_rng_below(r, 2) ? INT64_C(1) << 40
					  : -(INT64_C(1) << 40);
	if (c < 3)
		return -(int64_t)(1 + sc_rng_below(r, 2));
	return (int64_t)(1 + sc_rng_below(r, 3));
}

/* A random live row of the reference (NULL if none). */
static inline const uint64_t *
opgen_pick(struct sc_rng *r, const struct zref *z, __int128 *w)
{
	size_t live = zref_nonzero(z), at;

	if (live == 0)
		return NULL;
	at = sc_rng_below(r, live);
	for (size_t i = 0; i < z->n; i++) {
		if (z->w[i] == 0)
			continue;
		if (at-- == 0) {
			*w = z->w[i];
			return z->rows + i * z->ncols;
		}
	}
	return NULL;
}

/* A delta of about `nops` changes against the integral z (not changed). */
static inline struct sc_batch *
opgen_delta(struct sc_rng *r, const struct opgen *g, const struct zref *z,
	    size_t nops)
{
	struct sc_batch_builder b;
	struct sc_batch *out;
	uint64_t row[SC_SCHEMA_MAX_COLS];
	const uint64_t *old;
	__int128 w;

	if (sc_batch_builder_init(&b, g->ncols))
		abort();
	for (size_t i = 0; i < nops; i++) {
		uint64_t op = sc_rng_below(r, 4);

		old = op == 0 ? NULL : opgen_pick(r, z, &w);
		if (old && (w > 1000 || w < -1000))
			w = w > 0 ? 1 : -1; /* keep big weights big */
		if (old)
			memcpy(row, old, g->ncols * sizeof(uint64_t));
		if (old && op == 1) { /* retract all of it */
			if (sc_batch_builder_push(&b, row, g->ncols,
						  -(int64_t)w))
				abort();
			continue;
		}
		if (old && op == 2) { /* retract part of it */
			if (sc_batch_builder_push(&b, row, g->ncols,
						  w > 0 ? -1 : 1))
				abort();
			continue;
		}
		if (old) { /* overwrite: same key, new values */
			if (sc_batch_builder_push(&b, row, g->ncols,
						  -(int64_t)w))
				abort();
			for (uint32_t c = g->k; c < g->ncols; c++)
				row[c] = g->col(r, c, g->ctx);
			if (sc_batch_builder_push(&b, row, g->ncols,
						  (int64_t)w))
				abort();
			continue;
		}
		for (uint32_t c = 0; c < g->ncols; c++)
			row[c] = g->col(r, c, g->ctx);
		if (sc_batch_builder_push(&b, row, g->ncols,
					  opgen_weight(r, g)))
			abort();
	}
	if (sc_batch_builder_finish(&b, &out))
		abort();
	sc_batch_builder_fini(&b);
	return out;
}

/* Do two references hold the same Z-set (zero entries ignored)? On a
 * difference, *bad points at a row that differs. */
static inline bool
zref_same(const struct zref *x, const struct zref *y, const uint64_t **bad)
{
	for (size_t i = 0; i < x->n; i++)
		if (zref_weight(y, x->rows + i * x->ncols) != x->w[i]) {
			*bad = x->rows + i * x->ncols;
			return false;
		}
	for (size_t i = 0; i < y->n; i++)
		if (zref_weight(x, y->rows + i * y->ncols) != y->w[i]) {
			*bad = y->rows + i * y->ncols;
			return false;
		}
	return true;
}

/* The weights of a row in two references, for a failure message. */
static inline long long
zref_w(const struct zref *z, const uint64_t *row)
{
	return (long long)zref_weight(z, row);
}

/* --- large states against dense references --------------------------------
 *
 * A state of rows (key, v), key < keys and v < vals (raw words), whose
 * integral is a dense array w[key * vals + v]: big enough for the trace's
 * runs to reach thousands of rows (so the operators take their batched
 * search paths), with references that cost O(keys * vals) per check.
 */

/* A delta of n changes: retract a live cell entirely, or add 1, 2 or -1
 * to a random cell. The dense array is NOT updated (see opgen_dense_add). */
static inline struct sc_batch *
opgen_dense_delta(struct sc_rng *r, const int64_t *w, uint64_t keys,
		  uint64_t vals, size_t n)
{
	struct sc_batch_builder b;
	struct sc_batch *out;

	if (sc_batch_builder_init(&b, 2))
		abort();
	for (size_t i = 0; i < n; i++) {
		uint64_t cell = sc_rng_below(r, keys * vals);
		uint64_t row[2] = {cell / vals, cell % vals};
		int64_t dw = w[cell] != 0 && sc_rng_below(r, 3) == 0
				 ? -w[cell]
				 : (int64_t)sc_rng_range(r, -1, 2);

		if (sc_batch_builder_push(&b, row, 2, dw))
			abort();
	}
	if (sc_batch_builder_finish(&b, &out))
		abort();
	sc_batch_builder_fini(&b);
	return out;
}

/* w += delta (rows (key, v)). */
static inline void
opgen_dense_add(int64_t *w, uint64_t vals, const struct sc_batch *d)
{
	for (size_t i = 0; d && i < sc_batch_count(d); i++) {
		const uint64_t *row = sc_batch_row(d, i);

		w[row[0] * vals + row[1]] += sc_batch_weight(d, i);
	}
}

/* *acc += b (the integral of an operator's output), b released. */
static inline void
opgen_accumulate(struct sc_batch **acc, struct sc_batch *b)
{
	struct sc_batch *next;

	if (sc_batch_add(*acc, b, &next))
		abort();
	sc_batch_release(*acc);
	sc_batch_release(b);
	*acc = next;
}

/* --- small batches and messages ------------------------------------------- */

/* A batch of n rows of ncols words (w NULL: weight 1 each). Aborts on
 * failure (a test bug or no memory). */
static inline struct sc_batch *
opgen_batch_of(uint32_t ncols, size_t n, const uint64_t *rows, const int64_t *w)
{
	struct sc_batch *b;

	if (sc_batch_from_records(ncols, rows, w, n, &b))
		abort();
	return b;
}

/* An empty batch of ncols columns. */
static inline struct sc_batch *
opgen_none(uint32_t ncols)
{
	struct sc_batch *b;

	if (sc_batch_empty(ncols, &b))
		abort();
	return b;
}

/* Does s contain one of the '|'-separated needles, ignoring case? */
static inline bool
opgen_names_one_of(const char *s, const char *needles)
{
	const char *n = needles;

	while (*n) {
		size_t len = strcspn(n, "|");

		for (const char *p = s; *p; p++) {
			size_t i = 0;

			while (i < len && p[i] &&
			       tolower((unsigned char)p[i]) ==
				   tolower((unsigned char)n[i]))
				i++;
			if (i == len)
				return true;
		}
		n += len;
		if (*n == '|')
			n++;
	}
	return false;
}

/* Whether two rows agree on their first k words. */
static inline bool
opgen_same_key(const uint64_t *a, const uint64_t *b, uint32_t k)
{
	for (uint32_t i = 0; i < k; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/* An output delta of an operator whose rows each stand once (a group's
 * row, a session): consolidated, `width` wide, every weight +1 or -1. */
static inline bool
opgen_pm1_batch(const struct sc_batch *out, uint32_t width)
{
	if (!out || sc_batch_ncols(out) != width ||
	    !sc_batch_is_consolidated(out))
		return false;
	for (size_t i = 0; i < sc_batch_count(out); i++)
		if (sc_batch_weight(out, i) != 1 &&
		    sc_batch_weight(out, i) != -1)
			return false;
	return true;
}

/* --- one input cut into steps --------------------------------------------- */

/* A schedule: the steps an input is fed in (each a batch, owned). */
struct opgen_cut {
	struct sc_batch **d;
	size_t n, cap;
};

static inline void
opgen_cut_push(struct opgen_cut *c, struct sc_batch *b)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 16;
		c->d = realloc(c->d, c->cap * sizeof(struct sc_batch *));
		if (!c->d)
			abort();
	}
	c->d[c->n++] = b;
}

static inline void
opgen_cut_fini(struct opgen_cut *c)
{
	for (size_t i = 0; i < c->n; i++)
		sc_batch_release(c->d[i]);
	free(c->d);
	memset(c, 0, sizeof(*c));
}

/* The steps of `all` (NULL: none) with each row split into two weights,
 * w - e and e (e in -3..3), one a step in random order: partial
 * integrals that hold rows of negative weight on the way. */
static inline void
opgen_cut_halves(struct sc_rng *r, const struct sc_batch *all,
		 struct opgen_cut *c)
{
	size_t n = all ? sc_batch_count(all) : 0;

	for (size_t i = 0; i < n; i++) {
		int64_t w = sc_batch_weight(all, i),
			e = (int64_t)sc_rng_range(r, -3, 3);
		int64_t ws[2] = {w - e, e};

		for (int h = 0; h < 2; h++)
			if (ws[h] != 0)
				opgen_cut_push(
				    c, opgen_batch_of(sc_batch_ncols(all), 1,
						      sc_batch_row(all, i),
						      &ws[h]));
	}
	for (size_t i = c->n; i > 1; i--) {
		size_t j = sc_rng_below(r, i);
		struct sc_batch *t = c->d[i - 1];

		c->d[i - 1] = c->d[j];
		c->d[j] = t;
	}
}

#endif /* SC_TEST_OP_GEN_H */
