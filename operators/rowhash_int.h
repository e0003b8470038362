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
 * Growth in slices. A step must not pay for the state it does not touch,
 * so growing never copies the whole table at once (at millions of rows
 * that copy, and the page faults of the fresh memory, took tens of ms in
 * one step). As Redis's dict does, the table grows into a fresh array
 * while the old one stays beside it, and each reserve drains a number of
 * the old array's slots in proportion to the rows it reserves
 * (RH_DRAIN_PER_ROW in rowhash.c), so the old array is empty long before
 * the new one fills.
 *
 * A row's home is the top bits of its hash (as many as the array has
 * slots, a power of two), so doubling an array maps home s to 2s or
 * 2s + 1: the old array read in slot order lands in the new one in slot
 * order too, and the drain streams through both instead of writing the
 * new array at random (a cache miss per record moved, at millions of
 * rows). The drain goes a whole cluster (a maximal run of occupied slots)
 * at a time, in slot order from a slot that was empty when the growth
 * began (dstart), so the slots it has walked (dn of them) hold no
 * cluster begun and not finished: a row whose old home lies among them
 * has moved, and one whose old home lies beyond has not. That decides
 * where every row lives, so a lookup probes one array, never both: a row
 * whose old home the drain has passed is in the new array, any other in
 * the old one, inserts too, while the old array is under half full (a
 * probe that begins beyond the drain never leaves its cluster, and the
 * clusters behind the drain are empty, so no probe crosses into moved
 * ground but a cluster that runs on past dstart, which the drain takes
 * whole when it gets there). Past half, an insert goes to the new array
 * and the table counts it a stray; while strays exist, a row looked for
 * in the old array and absent there is looked for in the new one as
 * well. Updates never move records between the arrays (only reserve and
 * the sweep drain), so an update's undo finds its row where the update
 * left it. A table whose weights left int64 grows all at once, as its
 * widening does (both rare).
 *
 * The fresh array is faulted in before it takes rows. Inserts land at
 * random slots, so the first step after a switch would touch every page
 * of a fresh array at once, and the kernel zeroes each page (2 MiB under
 * the huge-page hint) on its first touch: at millions of rows that is
 * the whole array's zeroing in one step again. So a growth is prepared
 * ahead: once the table is 3/8 full the next array is allocated and
 * handed to the background prefault (mem_int.h), which faults it in off
 * the thread that steps, and reads a word of each page as well (where a
 * machine maps pages to a process lazily, the first touch of a present
 * page still costs microseconds: a whole drain's worth of them); the
 * table switches to it once the prefault is over. An array a prefault
 * may still read is freed after it (sc__mem_prefault_free): each array
 * keeps its ticket. Should the table reach 13/32 before that (or no prefault
 * run: an old kernel), each reserve touches its pages in proportion to the rows
 * it reserves, and it switches once all are touched (or at once, should a
 * reserve find no room before that).
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
	uint32_t ncols;	  /* words per row */
	uint32_t stride;  /* ncols + 1: the row, then its weight; wide:
			     ncols + 3, the row, the view, lo, hi */
	bool wide;	  /* records hold 128-bit weights (see above) */
	size_t nwide;	  /* wide: rows whose weight is outside int64 */
	size_t n;	  /* rows held, each of non-zero weight */
	size_t mask;	  /* slots - 1 (slots a power of two), 0 if none */
	uint64_t *recs;	  /* (mask + 1) * stride words, or NULL */
	uint64_t *old;	  /* growing: the array being drained, in the
			     narrow layout, else NULL */
	size_t omask;	  /* its slots - 1 */
	size_t on;	  /* records left in it (counted in n too) */
	size_t drain;	  /* the next of its slots the drain looks at: the
			     clusters behind it, back to dstart, are gone */
	size_t dstart;	  /* the slot the drain began at (empty then) */
	size_t dn;	  /* slots the drain has walked from dstart */
	size_t stray;	  /* rows inserted into the new array while their
			     old home was not yet drained (the old array
			     full): lookups that miss the old array look
			     in the new one too while any may exist */
	uint64_t *next;	  /* a growth prepared: the next array, empty,
			     narrow, or NULL */
	size_t nmask;	  /* its slots - 1 */
	size_t touched;	  /* bytes of it faulted in so far */
	uint64_t ticket;  /* its prefault (sc__mem_prefault), 0: none */
	uint64_t rticket; /* the prefault recs had as the next array, and */
	uint64_t oticket; /* old's: each freed after it (mem_int.h) */
};

void sc__rowhash_init(struct sc__rowhash *h, uint32_t ncols);
void sc__rowhash_fini(struct sc__rowhash *h);

/* Room for `more` inserts that then cannot fail. 0 or SC_ENOMEM (the
 * rows held unchanged). Drains a growing table's old array by a number
 * of slots proportional to `more` (at least a few): the only place,
 * besides the sweep, where records move. */
int sc__rowhash_reserve(struct sc__rowhash *h, size_t more);

/* Whether the table is growing: an old array is still being drained. */
static inline bool
sc__rowhash_growing(const struct sc__rowhash *h)
{
	return h->old != NULL;
}

/* Drain the old array of a growing table completely (no allocation,
 * cannot fail); a no-op when not growing. */
void sc__rowhash_settle(struct sc__rowhash *h);

/* The home slot of hash hv in an array of mask + 1 slots (a power of
 * two, at least 2): the hash's top bits, so that doubling the array maps
 * home s to 2s or 2s + 1 and keeps the slots' order. */
static inline size_t
sc__rowhash_home(uint64_t hv, size_t mask)
{
	return (size_t)(hv >> __builtin_clzll((unsigned long long)mask));
}

/* Whether a row of hash hv lives in the old array of a growing table:
 * its home there lies beyond the slots the drain has walked. */
static inline bool
sc__rowhash_in_old(const struct sc__rowhash *h, uint64_t hv)
{
	return h->old && ((sc__rowhash_home(hv, h->omask) - h->dstart) &
			  h->omask) >= h->dn;
}

/* The hash a row's lookups use. */
static inline uint64_t
sc__rowhash_hash(const struct sc__rowhash *h, const uint64_t *row)
{
	return sc_row_hash(row, h->ncols);
}

/* Start loading the home slot of a row of hash `hv`, in the array
 * where the row lives. Always inlined: GCC counts a prefetch as no side
 * effect, so a call to a function that only prefetches is one it may
 * drop as dead (GCC 12 -O2 dropped every call of this one, left to
 * inline itself, from the aggregate's and distinct's loops). */
static inline __attribute__((always_inline)) void
sc__rowhash_prefetch(const struct sc__rowhash *h, uint64_t hv)
{
	if (sc__rowhash_in_old(h, hv))
		__builtin_prefetch(h->old +
				   sc__rowhash_home(hv, h->omask) * h->stride);
	else if (h->recs)
		__builtin_prefetch(h->recs +
				   sc__rowhash_home(hv, h->mask) * h->stride);
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

/* Bytes held (every array: current, old, prepared). */
size_t sc__rowhash_bytes(const struct sc__rowhash *h);

#endif /* SC_ROWHASH_INT_H */
