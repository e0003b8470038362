/*
 * groups.c - the aggregate's group table (see groups_int.h).
 */
#include "operators/groups_int.h"

#include <stdlib.h>
#include <string.h>

#include "operators/mem_int.h"
#include "operators/schema.h"

/* Old slots drained per group reserved, and at least per reserve, while
 * the slot array grows (the reasoning of rowhash.c's RH_DRAIN_PER_ROW:
 * the old array empties before the new one is half full). */
#define G_DRAIN_PER_ROW 8
#define G_DRAIN_MIN	64

void
sc__groups_init(struct sc__groups *g, uint32_t k, bool exact)
{
	memset(g, 0, sizeof(*g));
	g->k = k;
	g->exact = exact;
}

void
sc__groups_fini(struct sc__groups *g)
{
	for (size_t i = 0; g->exact && i < g->n; i++)
		sc_xsum_fini(sc__groups_xs(g, i));
	for (uint32_t j = 0; j < g->nseg; j++)
		free(g->keys[j]); /* the segment's one block */
	free(g->slots);
	free(g->old);
	memset(g, 0, sizeof(*g));
}

static const uint64_t *
key_of(const struct sc__groups *g, size_t i)
{
	return sc__groups_key(g, i);
}

static size_t
home(const struct sc__groups *g, const uint64_t *key)
{
	return (size_t)sc_row_hash(key, g->k) & g->mask;
}

/* The entry of key (of hash hv) in slot array slots (mask + 1 slots), or
 * SC__GROUPS_NONE. */
static size_t
find_in(const struct sc__groups *g, const uint32_t *slots, size_t mask,
	const uint64_t *key, uint64_t hv)
{
	for (size_t s = (size_t)hv & mask;; s = (s + 1) & mask) {
		uint32_t v = slots[s];

		if (v == 0)
			return SC__GROUPS_NONE;
		if (sc_row_eq(key_of(g, v - 1), key, g->k))
			return v - 1;
	}
}

size_t
sc__groups_find(const struct sc__groups *g, const uint64_t *key)
{
	uint64_t hv;
	size_t i;

	if (!g->slots)
		return SC__GROUPS_NONE;
	hv = sc_row_hash(key, g->k);
	i = find_in(g, g->slots, g->mask, key, hv);
	if (i == SC__GROUPS_NONE && g->old)
		i = find_in(g, g->old, g->omask, key, hv);
	return i;
}

void
sc__groups_prefetch(const struct sc__groups *g, const uint64_t *key, bool entry)
{
	size_t s;
	uint32_t v;

	if (!g->slots)
		return;
	s = home(g, key);
	if (!entry) {
		__builtin_prefetch(&g->slots[s]);
		return;
	}
	v = g->slots[s];
	if (v == 0)
		return;
	__builtin_prefetch(key_of(g, v - 1));
	__builtin_prefetch(sc__groups_st(g, v - 1));
	if (g->exact)
		__builtin_prefetch(sc__groups_xs(g, v - 1));
}

/* Put entry i into the slot array (its key is absent from it). */
static void
slot_put(struct sc__groups *g, size_t i)
{
	size_t s = home(g, key_of(g, i));

	while (g->slots[s])
		s = (s + 1) & g->mask;
	g->slots[s] = (uint32_t)(i + 1);
}

/* Add segments until cap entries fit: each one block, keys then states
 * then exact sums (all of 8-byte alignment). A failure keeps the
 * segments added: harmless. */
static int
grow_entries(struct sc__groups *g, size_t cap)
{
	while (g->cap < cap) {
		uint32_t j = g->nseg;
		size_t size = j == 0 ? 16 : (size_t)16 << (j - 1);
		size_t per = (size_t)g->k * 8 + sizeof(struct sc__gstate) +
			     (g->exact ? sizeof(struct sc_xsum) : 0);
		unsigned char *p;

		if (j == SC__GROUPS_SEGS)
			return SC_ENOMEM;
		p = malloc(size * per);
		if (!p)
			return SC_ENOMEM;
		if (size * per >= SC__MEM_BIG)
			sc__mem_hint_huge(p, size * per);
		g->keys[j] = (uint64_t *)p;
		g->st[j] = (struct sc__gstate *)(p + size * g->k * 8);
		g->xs[j] =
		    g->exact ? (struct sc_xsum *)(g->st[j] + size) : NULL;
		g->nseg++;
		g->cap += size;
	}
	return 0;
}

/*
 * Empty slot s of slot array slots (mask + 1 slots) and shift back the
 * cluster after it: an entry may move into the hole unless its home lies
 * cyclically in (hole, its slot].
 */
static void
delete_in(const struct sc__groups *g, uint32_t *slots, size_t mask, size_t s)
{
	size_t j = s;

	for (;;) {
		slots[s] = 0;
		for (;;) {
			size_t h;

			j = (j + 1) & mask;
			if (!slots[j])
				return;
			h = (size_t)sc_row_hash(key_of(g, slots[j] - 1), g->k) &
			    mask;
			if (((j - h) & mask) >= ((j - s) & mask))
				break;
		}
		slots[s] = slots[j];
		s = j;
	}
}

/*
 * Drain the old slot array by about `budget` units (a slot visited, an
 * index moved), a whole cluster at a time (groups_int.h), so the budget
 * may be passed by the rest of one cluster; free it once empty.
 */
static void
drain(struct sc__groups *g, size_t budget)
{
	while (g->old && g->on > 0 && budget > 0) {
		size_t s = g->drain;

		budget--;
		for (; g->old[s] != 0; s = (s + 1) & g->omask) {
			slot_put(g, g->old[s] - 1);
			g->old[s] = 0;
			g->on--;
			if (budget > 0)
				budget--;
		}
		g->drain = (s + 1) & g->omask;
	}
	if (g->old && g->on == 0) {
		free(g->old);
		g->old = NULL;
		g->omask = 0;
		g->drain = 0;
	}
}

void
sc__groups_settle(struct sc__groups *g)
{
	drain(g, SIZE_MAX);
}

/* Start growing into a fresh slot array of nslots (a growth in hand is
 * finished first): the current one becomes the old one. */
static int
rehash(struct sc__groups *g, size_t nslots)
{
	uint32_t *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return SC_ENOMEM;
	sc__groups_settle(g);
	if (g->slots && g->n > 0) {
		g->old = g->slots;
		g->omask = g->mask;
		g->on = g->n;
		/* Begin at an empty slot, so that no cluster is cut. */
		for (g->drain = 0; g->old[g->drain];)
			g->drain++;
	} else {
		free(g->slots);
	}
	g->slots = slots;
	g->mask = nslots - 1;
	return 0;
}

int
sc__groups_reserve(struct sc__groups *g, size_t more)
{
	size_t need = g->n + more, nslots;
	size_t budget =
	    G_DRAIN_MIN +
	    G_DRAIN_PER_ROW * (more < UINT32_MAX ? more : UINT32_MAX);
	int rc;

	if (need > UINT32_MAX - 1)
		return sc__fail(SC_ENOMEM, "aggregate: too many groups (%zu)",
				need);
	if (need > g->cap) {
		rc = grow_entries(g, need);
		if (rc)
			return sc__fail(rc,
					"aggregate: out of memory for %zu "
					"groups",
					need);
	}
	nslots = g->slots ? g->mask + 1 : 32;
	if (!g->slots || 2 * need > nslots) {
		while (2 * need > nslots)
			nslots *= 2;
		rc = rehash(g, nslots);
		if (rc)
			return sc__fail(rc,
					"aggregate: out of memory for %zu "
					"slots",
					nslots);
	}
	drain(g, budget);
	return 0;
}

size_t
sc__groups_insert(struct sc__groups *g, const uint64_t *key,
		  const struct sc__gstate *st, const struct sc_xsum *xs)
{
	size_t i = g->n++;

	memcpy(sc__groups_key(g, i), key, g->k * sizeof(uint64_t));
	*sc__groups_st(g, i) = *st;
	if (g->exact)
		*sc__groups_xs(g, i) = *xs;
	slot_put(g, i);
	return i;
}

/* Where entry i's index is: a slot of one of the two arrays. */
struct where {
	uint32_t *slots; /* the array */
	size_t mask;	 /* its slots - 1 */
	size_t s;	 /* the slot */
};

/* The slot that holds entry i: in the current array, or, while growing,
 * in the old one (an empty slot ends the probe of the array without it). */
static struct where
slot_of(const struct sc__groups *g, size_t i)
{
	size_t s = home(g, key_of(g, i));

	for (; g->slots[s] != 0; s = (s + 1) & g->mask)
		if (g->slots[s] == i + 1)
			return (struct where){g->slots, g->mask, s};
	s = (size_t)sc_row_hash(key_of(g, i), g->k) & g->omask;
	while (g->old[s] != i + 1)
		s = (s + 1) & g->omask;
	return (struct where){g->old, g->omask, s};
}

void
sc__groups_remove(struct sc__groups *g, size_t i)
{
	size_t last = g->n - 1;
	struct where w;

	if (g->exact)
		sc_xsum_fini(sc__groups_xs(g, i));
	w = slot_of(g, i);
	delete_in(g, w.slots, w.mask, w.s);
	if (w.slots == g->old)
		g->on--;
	if (i != last) {
		w = slot_of(g, last);
		w.slots[w.s] = (uint32_t)(i + 1);
		memcpy(sc__groups_key(g, i), key_of(g, last),
		       g->k * sizeof(uint64_t));
		*sc__groups_st(g, i) = *sc__groups_st(g, last);
		if (g->exact) /* an sc_xsum holds no pointer into itself */
			*sc__groups_xs(g, i) = *sc__groups_xs(g, last);
	}
	g->n--;
}

size_t
sc__groups_bytes(const struct sc__groups *g)
{
	size_t per = (size_t)g->k * 8 + sizeof(struct sc__gstate) +
		     (g->exact ? sizeof(struct sc_xsum) : 0);

	return g->cap * per + (g->slots ? (g->mask + 1) * 4 : 0) +
	       (g->old ? (g->omask + 1) * 4 : 0);
}
