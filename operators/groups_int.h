/*
 * groups_int.h - the aggregate's table from a group key (k words) to the
 * group's running state. Internal to aggregate.c.
 *
 * Open addressing with linear probing over a power-of-two array of slots
 * (each the index + 1 of a dense entry, 0 empty), kept at most half full;
 * deletion shifts the following cluster back (no tombstones, so probes stay
 * short under churn). Entries are dense (keys, states, exact sums) so
 * that a removal moves the last entry into the hole.
 *
 * The entries live in segments that are never copied: segment 0 holds
 * entries 0..15, segment j >= 1 the 16 << (j - 1) after those before it,
 * so each new segment doubles the room and an entry's place is a shift
 * and a count of bits away (sc__groups_st). One array grown by realloc
 * would copy every entry at each doubling, inside the step that needs
 * the room: at millions of groups, hundreds of ms.
 *
 * Growth is separate from insertion: sc__groups_reserve may fail with
 * SC_ENOMEM, and after it the next `n` inserts cannot fail, which is what
 * lets a step validate before it changes anything.
 *
 * The slot array grows in slices, as the row table's does (rowhash_int.h):
 * a fresh array beside the old one, which each reserve drains by a number
 * of slots in proportion to the groups it reserves, a whole cluster at a
 * time in slot order from an empty slot (a probe never leaves its
 * cluster, so the clusters left stay exact). An entry's index is in
 * exactly one of the two arrays; inserts go to the new one, and a find
 * that misses there probes the old one.
 */
#ifndef SC_GROUPS_INT_H
#define SC_GROUPS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "operators/xsum.h"

/* One group's running state. The sums are wider than int64 (two's
 * complement words, low first) so that a partial integral never overflows:
 * a group holds < 2^64 rows of int64 weight, so the count stays below 2^127
 * and the sum of w * v (each below 2^127) below 2^191 (aggregate.h). */
struct sc__gstate {
	int64_t live; /* rows of the group with non-zero integrated weight */
	uint64_t count[2]; /* the sum of their weights, 128 bits */
	uint64_t isum[3];  /* the sum of w * v over an integer column, 192 */
	uint64_t out;	   /* the value word of the group's output row... */
	uint64_t has_out;  /* ...if it has one (1), else 0: the last value
			    * emitted, so a step need not read the old
			    * state's value again (an exact mean is ~100 ns) */
};

/* Segments at most: room for 16 << (SC__GROUPS_SEGS - 2) entries, past
 * the UINT32_MAX - 1 that the slots can name. */
#define SC__GROUPS_SEGS 30

struct sc__groups {
	uint32_t k;    /* key words */
	bool exact;    /* entries carry an sc_xsum */
	size_t n;      /* entries in use */
	size_t cap;    /* entries allocated: those of nseg segments */
	uint32_t nseg; /* segments allocated */
	uint64_t *keys[SC__GROUPS_SEGS];	/* segment j's keys, k words
						 * an entry */
	struct sc__gstate *st[SC__GROUPS_SEGS]; /* its states */
	struct sc_xsum *xs[SC__GROUPS_SEGS];	/* its exact sums, if exact */
	uint32_t *slots; /* nslots: 0 empty, else entry index + 1 */
	size_t mask;	 /* nslots - 1 (nslots a power of two) */
	uint32_t *old;	 /* growing: the slot array being drained,
			  * else NULL */
	size_t omask;	 /* its slots - 1 */
	size_t on;	 /* indices left in it */
	size_t drain;	 /* the next of its slots the drain looks
			  * at: the clusters behind it are gone */
};

#define SC__GROUPS_NONE SIZE_MAX

/* The segment of entry i, and i's place in it (*off). */
static inline uint32_t
sc__groups_seg(size_t i, size_t *off)
{
	size_t q = i >> 4;
	uint32_t j;

	if (q == 0) {
		*off = i;
		return 0;
	}
	j = 64 - (uint32_t)__builtin_clzll((unsigned long long)q);
	*off = i - ((size_t)1 << (j + 3));
	return j;
}

/* Entry i's key (k words), state and exact sum (if exact). i < cap. */
static inline uint64_t *
sc__groups_key(const struct sc__groups *g, size_t i)
{
	size_t off;
	uint32_t j = sc__groups_seg(i, &off);

	return g->keys[j] + off * g->k;
}

static inline struct sc__gstate *
sc__groups_st(const struct sc__groups *g, size_t i)
{
	size_t off;
	uint32_t j = sc__groups_seg(i, &off);

	return &g->st[j][off];
}

static inline struct sc_xsum *
sc__groups_xs(const struct sc__groups *g, size_t i)
{
	size_t off;
	uint32_t j = sc__groups_seg(i, &off);

	return &g->xs[j][off];
}

void sc__groups_init(struct sc__groups *g, uint32_t k, bool exact);
void sc__groups_fini(struct sc__groups *g);

/* The entry of key, or SC__GROUPS_NONE. */
size_t sc__groups_find(const struct sc__groups *g, const uint64_t *key);

/*
 * sc__groups_prefetch - start loading what a find of key will read: with
 * `entry` false, the key's home slot; with it true (after the slot has
 * arrived), the entry that slot names. A step calls it over all its groups
 * before it finds them, so the table's cache misses overlap.
 */
void sc__groups_prefetch(const struct sc__groups *g, const uint64_t *key,
			 bool entry);

/* Room for `more` inserts that then cannot fail. 0 or SC_ENOMEM. Drains
 * a growing slot array by a number of slots proportional to `more`. */
int sc__groups_reserve(struct sc__groups *g, size_t more);

/* Drain the old slot array of a growing table completely (cannot fail). */
void sc__groups_settle(struct sc__groups *g);

/* Insert key (absent; room reserved) with state st and exact sum *xs (moved
 * in, if exact). Returns the entry index. */
size_t sc__groups_insert(struct sc__groups *g, const uint64_t *key,
			 const struct sc__gstate *st, const struct sc_xsum *xs);

/* Remove entry i (its exact sum is finalised). The last entry moves to i. */
void sc__groups_remove(struct sc__groups *g, size_t i);

/* Bytes held. */
size_t sc__groups_bytes(const struct sc__groups *g);

#endif /* SC_GROUPS_INT_H */
