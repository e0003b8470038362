/*
 * groups.c - the aggregate's group table (see groups_int.h).
 */
#include "operators/groups_int.h"

#include <stdlib.h>
#include <string.h>

#include "operators/schema.h"

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
		sc_xsum_fini(&g->xs[i]);
	free(g->keys);
	free(g->st);
	free(g->xs);
	free(g->slots);
	memset(g, 0, sizeof(*g));
}

static const uint64_t *
key_of(const struct sc__groups *g, size_t i)
{
	return g->keys + i * g->k;
}

static size_t
home(const struct sc__groups *g, const uint64_t *key)
{
	return (size_t)sc_row_hash(key, g->k) & g->mask;
}

size_t
sc__groups_find(const struct sc__groups *g, const uint64_t *key)
{
	if (!g->slots)
		return SC__GROUPS_NONE;
	for (size_t s = home(g, key);; s = (s + 1) & g->mask) {
		uint32_t v = g->slots[s];

		if (v == 0)
			return SC__GROUPS_NONE;
		if (sc_row_eq(key_of(g, v - 1), key, g->k))
			return v - 1;
	}
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
	__builtin_prefetch(g->keys + (size_t)(v - 1) * g->k);
	__builtin_prefetch(&g->st[v - 1]);
	if (g->exact)
		__builtin_prefetch(&g->xs[v - 1]);
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

static int
grow_entries(struct sc__groups *g, size_t cap)
{
	uint64_t *keys;
	struct sc__gstate *st;
	struct sc_xsum *xs;

	/* Each realloc keeps the old block on failure, so a partial growth
	 * only leaves some arrays larger than cap: harmless. */
	keys = realloc(g->keys, (g->k ? cap * g->k : 1) * 8);
	if (!keys)
		return SC_ENOMEM;
	g->keys = keys;
	st = realloc(g->st, cap * sizeof(*st));
	if (!st)
		return SC_ENOMEM;
	g->st = st;
	if (g->exact) {
		/* An sc_xsum holds no pointer into itself: it may move. */
		xs = realloc(g->xs, cap * sizeof(*xs));
		if (!xs)
			return SC_ENOMEM;
		g->xs = xs;
	}
	g->cap = cap;
	return 0;
}

static int
rehash(struct sc__groups *g, size_t nslots)
{
	uint32_t *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return SC_ENOMEM;
	free(g->slots);
	g->slots = slots;
	g->mask = nslots - 1;
	for (size_t i = 0; i < g->n; i++)
		slot_put(g, i);
	return 0;
}

int
sc__groups_reserve(struct sc__groups *g, size_t more)
{
	size_t need = g->n + more, cap, nslots;
	int rc;

	if (need > UINT32_MAX - 1)
		return sc__fail(SC_ENOMEM, "aggregate: too many groups (%zu)",
				need);
	if (need > g->cap) {
		cap = g->cap ? g->cap : 16;
		while (cap < need)
			cap *= 2;
		rc = grow_entries(g, cap);
		if (rc)
			return sc__fail(rc,
					"aggregate: out of memory for %zu "
					"groups",
					need);
	}
	nslots = g->slots ? g->mask + 1 : 32;
	if (g->slots && 2 * need <= nslots)
		return 0;
	while (2 * need > nslots)
		nslots *= 2;
	rc = rehash(g, nslots);
	if (rc)
		return sc__fail(rc, "aggregate: out of memory for %zu slots",
				nslots);
	return 0;
}

size_t
sc__groups_insert(struct sc__groups *g, const uint64_t *key,
		  const struct sc__gstate *st, const struct sc_xsum *xs)
{
	size_t i = g->n++;

	memcpy(g->keys + i * g->k, key, g->k * sizeof(uint64_t));
	g->st[i] = *st;
	if (g->exact)
		g->xs[i] = *xs;
	slot_put(g, i);
	return i;
}

/* The slot that holds entry i. */
static size_t
slot_of(const struct sc__groups *g, size_t i)
{
	size_t s = home(g, key_of(g, i));

	while (g->slots[s] != i + 1)
		s = (s + 1) & g->mask;
	return s;
}

/*
 * Empty slot s and shift back the cluster after it: an entry may move into
 * the hole unless its home lies cyclically in (hole, its slot].
 */
static void
slot_delete(struct sc__groups *g, size_t s)
{
	size_t j = s;

	for (;;) {
		g->slots[s] = 0;
		for (;;) {
			size_t h;

			j = (j + 1) & g->mask;
			if (!g->slots[j])
				return;
			h = home(g, key_of(g, g->slots[j] - 1));
			if (((j - h) & g->mask) >= ((j - s) & g->mask))
				break;
		}
		g->slots[s] = g->slots[j];
		s = j;
	}
}

void
sc__groups_remove(struct sc__groups *g, size_t i)
{
	size_t last = g->n - 1;

	if (g->exact)
		sc_xsum_fini(&g->xs[i]);
	slot_delete(g, slot_of(g, i));
	if (i != last) {
		g->slots[slot_of(g, last)] = (uint32_t)(i + 1);
		memcpy(g->keys + i * g->k, key_of(g, last),
		       g->k * sizeof(uint64_t));
		g->st[i] = g->st[last];
		if (g->exact)
			g->xs[i] = g->xs[last];
	}
	g->n--;
}

size_t
sc__groups_bytes(const struct sc__groups *g)
{
	size_t per = (size_t)g->k * 8 + sizeof(struct sc__gstate) +
		     (g->exact ? sizeof(struct sc_xsum) : 0);

	return g->cap * per + (g->slots ? (g->mask + 1) * 4 : 0);
}
