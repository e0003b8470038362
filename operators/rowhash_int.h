/*
 * rowhash_int.h - a table from a row (ncols words) to its integrated weight,
 * for the operators whose state is nothing more: distinct, and the rows
 * behind count, sum and avg (aggregate.c). Internal.
 *
 * Why a hash table and not a trace. Those operators ask one question per
 * delta row: what is this exact row's integrated weight? A trace answers
 * it with a probe into each of its O(log N) runs (probe_int.h), keeps
 * every row twice while its runs merge, and charges merge work for every
 * inserted row; a hash table answers it with one expected cache miss and
 * no merging, so a step costs O(rows of the delta) expected.
 *
 * Layout: open addressing with linear probing over a power-of-two array of
 * records, each the row's words followed by its weight, in place (a
 * lookup touches one or two cache lines, not an index and then an entry).
 * A weight of 0 marks an empty slot: rows of integrated weight 0 are not
 * kept, so that is never a real record. At most half of the slots are
 * used. Removal shifts the following cluster back (Knuth 6.4, algorithm
 * R), so there are no tombstones and probes stay short under churn.
 * A record takes (ncols + 1) * 8 bytes over a load of 0.25..0.5.
 *
 * Growth is apart from updates: sc__rowhash_reserve may fail with
 * SC_ENOMEM, and after it `more` updates that insert cannot fail, which is
 * what lets a step change the table as it reads it and undo the change
 * (each update applied again with the opposite weight) when a later part
 * of the step fails.
 *
 * Weights past int64. A row's integrated weight may
 * leave int64 between steps and come back (+MAX, +1, -1): how a schedule
 * groups deltas into steps decides whether a table ever holds MAX + 1, so
 * that must not be an error. The first update whose sum leaves int64
 * *widens* the table: every record becomes row, view, lo, hi, where lo
 * and hi are the exact weight in 128 bits (fewer than 2^64 updates of
 * |w| <= 2^63 cannot leave int128) and the view is that weight clamped
 * into int64, so that a view is 0 exactly when the weight is, has its
 * sign, and still marks empty slots. Widening copies the table once (it
 * may fail with SC_ENOMEM, changing nothing) at the size it had, so room
 * reserved stays reserved; the next growth with no weight outside int64
 * makes it narrow again. The narrow path pays one predictable branch.
 */
#ifndef SC_ROWHASH_INT_H
#define SC_ROWHASH_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "operators/schema.h"

struct sc__rowhash {
	uint32_t ncols;	 /* words per row */
	uint32_t stride; /* ncols + 1: the row, then its weight; wide:
			    ncols + 3, the row, the view, lo, hi */
	bool wide;	 /* records hold 128-bit weights (see above) */
	size_t nwide;	 /* wide: rows whose weight is outside int64 */
	size_t n;	 /* rows held, each of non-zero weight */
	size_t mask;	 /* slots - 1 (slots a power of two), 0 if none */
	uint64_t *recs;	 /* (mask + 1) * stride words, or NULL */
};

void sc__rowhash_init(struct sc__rowhash *h, uint32_t ncols);
void sc__rowhash_fini(struct sc__rowhash *h);

/* Room for `more` inserts that then cannot fail. 0 or SC_ENOMEM (the
 * table unchanged). */
int sc__rowhash_reserve(struct sc__rowhash *h, size_t more);

/* The hash a row's lookups use. */
static inline uint64_t
sc__rowhash_hash(const struct sc__rowhash *h, const uint64_t *row)
{
	return sc_row_hash(row, h->ncols);
}

/* Start loading the home slot of a row of hash `hv`. */
static inline void
sc__rowhash_prefetch(const struct sc__rowhash *h, uint64_t hv)
{
	if (h->recs)
		__builtin_prefetch(h->recs + (hv & h->mask) * h->stride);
}

/*
 * sc__rowhash_add - add w to the integrated weight of `row` (hash hv). A
 * row whose weight becomes 0 is removed; one that was absent is inserted,
 * which needs room reserved. w must not be 0. Returns
 *   0           the weights before and after into *was and *now, each
 *               clamped into int64 (0 only for 0, the sign kept: what a
 *               caller asks of them, whether a row is live or positive)
 *   SC_ENOMEM   the sum left int64 and the table could not widen (see
 *               above); nothing changed
 * Never SC_EOVERFLOW: a weight outside int64 is held exactly.
 */
int sc__rowhash_add(struct sc__rowhash *h, const uint64_t *row, uint64_t hv,
		    int64_t w, int64_t *was, int64_t *now);

/* The integrated weight of `row` (0 if absent), exact. */
__int128 sc__rowhash_get(const struct sc__rowhash *h, const uint64_t *row);

/* Bytes held. */
size_t sc__rowhash_bytes(const struct sc__rowhash *h);

#endif /* SC_ROWHASH_INT_H */
