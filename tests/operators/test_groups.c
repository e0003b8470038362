/*
 * test_groups.c - the aggregate's group table (operators/groups_int.h)
 * while its slot array grows in slices: every find agrees with a plain
 * array at every moment of a growth, under inserts and removals.
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "operators/groups_int.h"
#include "tests/support/prop.h"

#define SUITE "groups"

/* The entry of key k, or SC__GROUPS_NONE. */
static size_t
find(const struct sc__groups *g, uint64_t k)
{
	return sc__groups_find(g, &k);
}

Test(groups, finds_every_key_while_its_slots_grow_in_slices)
{
	const char *name = "finds_every_key_while_its_slots_grow_in_slices";
	uint64_t base = sc_prop_seed(2602);

	for (uint64_t c = 0; c < sc_prop_count(12); c++) {
		uint64_t seed = base + c;
		struct sc_rng r;
		struct sc__groups g;
		size_t nkeys, grown = 0;
		int64_t *tag; /* the key's live field, 0 if absent */
		int64_t next = 1;

		sc_rng_seed(&r, seed);
		nkeys = 4000 + sc_rng_below(&r, 30000);
		tag = calloc(nkeys, sizeof(*tag));
		cr_assert_not_null(tag);
		sc__groups_init(&g, 1, false);
		for (int step = 0; step < 300; step++) {
			/* Mostly small deltas, so that growths are
			 * drained over several steps; now and then a large
			 * one, which a growth sizes ahead for. */
			size_t n = sc_rng_below(&r, 40) == 0
				       ? sc_rng_below(&r, 3000)
				       : 1 + sc_rng_below(&r, 150);

			cr_assert_eq(sc__groups_reserve(&g, n), 0);
			grown += g.old != NULL;
			for (size_t i = 0; i < n; i++) {
				uint64_t k = sc_rng_below(&r, nkeys);
				size_t at = find(&g, k);

				SC_PROP_ASSERT(
				    seed, SUITE, name,
				    tag[k] ? at != SC__GROUPS_NONE &&
						 sc__groups_st(&g, at)->live ==
						     tag[k]
					   : at == SC__GROUPS_NONE,
				    "step %d: key %llu found at %zu, tag %lld",
				    step, (unsigned long long)k, at,
				    (long long)tag[k]);
				if (tag[k] && sc_rng_below(&r, 3) == 0) {
					sc__groups_remove(&g, at);
					tag[k] = 0;
				} else if (!tag[k]) {
					struct sc__gstate st = {.live = next};

					sc__groups_insert(&g, &k, &st, NULL);
					tag[k] = next++;
				}
			}
			if (step % 10 == 0 || g.old)
				for (uint64_t k = 0; k < nkeys; k++) {
					size_t at = find(&g, k);

					SC_PROP_ASSERT(
					    seed, SUITE, name,
					    tag[k]
						? at != SC__GROUPS_NONE &&
						      sc__groups_st(&g, at)
							      ->live == tag[k]
						: at == SC__GROUPS_NONE,
					    "step %d: key %llu found at %zu, "
					    "tag %lld (growing: %d)",
					    step, (unsigned long long)k, at,
					    (long long)tag[k], g.old != NULL);
				}
		}
		SC_PROP_ASSERT(seed, SUITE, name, grown > 0,
			       "no step saw a growth in hand");
		sc__groups_settle(&g);
		cr_assert_null(g.old);
		for (uint64_t k = 0; k < nkeys; k++)
			SC_PROP_ASSERT(
			    seed, SUITE, name,
			    (find(&g, k) != SC__GROUPS_NONE) == (tag[k] != 0),
			    "settled: key %llu", (unsigned long long)k);
		sc__groups_fini(&g);
		free(tag);
	}
}
