/*
 * test_rowhash.c - the row table (operators/rowhash_int.h) while it grows
 * in slices: every lookup and update agrees with a plain array of
 * weights at every moment of a growth (rows in the old array, in the new
 * one, and strays inserted into the new one while the old one was at its
 * cap), each reserve drains no more than its budget, and the old array
 * is empty before the new one must grow.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "operators/rowhash_int.h"
#include "operators/waterline_int.h"
#include "bench/faults/failalloc.h"
#include "tests/support/prop.h"

#define SUITE "rowhash"

/* The drain budget of a reserve of `more` rows (rowhash.c). */
#define DRAIN_PER_ROW 8
#define DRAIN_MIN     64
#define CLUSTER	      128 /* longer than any cluster at load 1/2, here */

/* Row of key k: two words, so that the row is not its hash's input alone. */
static void
row_of(uint64_t k, uint64_t *row)
{
	row[0] = k;
	row[1] = k * 0x9e3779b97f4a7c15ull + 1;
}

static int64_t
get(const struct sc__rowhash *h, uint64_t k)
{
	uint64_t row[SC_SCHEMA_MAX_COLS] = {0};

	row_of(k, row);
	return (int64_t)sc__rowhash_get(h, row);
}

static void
drop_none(void *ctx, const uint64_t *rec)
{
	(void)ctx;
	(void)rec;
}

Test(rowhash, answers_every_lookup_while_it_grows_in_slices)
{
	const char *name = "answers_every_lookup_while_it_grows_in_slices";
	uint64_t base = sc_prop_seed(2601);

	for (uint64_t c = 0; c < sc_prop_count(12); c++) {
		uint64_t seed = base + c;
		struct sc_rng r;
		struct sc__rowhash h;
		size_t nkeys, live = 0, grown = 0, checked = 0, cursor = 0;
		uint64_t floor = 0; /* keys below are swept away */
		int64_t *ref;

		sc_rng_seed(&r, seed);
		nkeys = 8000 + sc_rng_below(&r, 40000);
		ref = calloc(nkeys, sizeof(*ref));
		cr_assert_not_null(ref);
		sc__rowhash_init(&h, 2);
		for (int step = 0; step < 400; step++) {
			/* Deltas mostly small, so that growths are drained
			 * over several steps; now and then a large one,
			 * which a growth sizes ahead for. */
			size_t n = sc_rng_below(&r, 40) == 0
				       ? sc_rng_below(&r, 4000)
				       : 1 + sc_rng_below(&r, 200);
			size_t drain0 = h.drain, mask0 = h.mask;
			bool was_growing = sc__rowhash_growing(&h);
			uint64_t *old0 = h.old;
			size_t on0 = h.on;

			cr_assert_eq(sc__rowhash_reserve(&h, n), 0);
			/* A growth in hand is never finished at once by a
			 * reserve that starts the next. */
			SC_PROP_ASSERT(seed, SUITE, name,
				       !(h.mask != mask0 && was_growing &&
					 on0 > 0 && n < (mask0 + 1) / 8),
				       "step %d: a growth of %zu slots still "
				       "held %zu rows when the next began",
				       step, mask0 + 1, on0);
			/* The drain stays within its budget, slots visited
			 * (each record moved costs as much again), but for
			 * the rest of the last cluster it began. */
			if (was_growing && h.old == old0)
				SC_PROP_ASSERT(
				    seed, SUITE, name,
				    ((h.drain - drain0) & h.omask) <=
					DRAIN_MIN + CLUSTER + DRAIN_PER_ROW * n,
				    "step %d: drained %zu slots for "
				    "%zu rows",
				    step, (h.drain - drain0) & h.omask, n);
			grown += sc__rowhash_growing(&h);
			for (size_t i = 0; i < n; i++) {
				uint64_t k =
				    floor + sc_rng_below(&r, nkeys - floor);
				int64_t w = sc_rng_range(&r, -3, 3), was, now;
				uint64_t row[SC_SCHEMA_MAX_COLS] = {0};

				if (w == 0)
					w = 1;
				row_of(k, row);
				cr_assert_eq(
				    sc__rowhash_add(&h, row,
						    sc__rowhash_hash(&h, row),
						    w, &was, &now),
				    0);
				SC_PROP_ASSERT(
				    seed, SUITE, name,
				    was == ref[k] && now == ref[k] + w,
				    "step %d key %llu: was %lld now "
				    "%lld, want %lld then %lld",
				    step, (unsigned long long)k, (long long)was,
				    (long long)now, (long long)ref[k],
				    (long long)(ref[k] + w));
				live += (ref[k] == 0) - (ref[k] + w == 0);
				ref[k] += w;
				/* A lookup between updates, growing or not. */
				k = sc_rng_below(&r, nkeys);
				SC_PROP_ASSERT(
				    seed, SUITE, name, get(&h, k) == ref[k],
				    "step %d: key %llu reads %lld, "
				    "want %lld (growing: %d)",
				    step, (unsigned long long)k,
				    (long long)get(&h, k), (long long)ref[k],
				    (int)sc__rowhash_growing(&h));
			}
			SC_PROP_ASSERT(seed, SUITE, name, h.n == live,
				       "step %d: %zu rows held, want %zu", step,
				       h.n, live);
			/* Now and then the cleanup sweep drops the keys
			 * below a rising floor, in a bounded slice. */
			if (sc_rng_below(&r, 10) == 0 && floor + 10 < nkeys) {
				struct sc__horizon hz = {.n = 1};

				floor += sc_rng_below(&r, 1 + nkeys / 200);
				hz.col[0] = 0;
				hz.min[0] = floor;
				sc__rowhash_sweep(&h, &hz, &cursor,
						  1 + sc_rng_below(&r, 500),
						  drop_none, NULL);
				/* Rows below the floor may remain until the
				 * sweep's round ends: forget them here by
				 * reading them from the table. */
				live = h.n;
				for (uint64_t k = 0; k < floor; k++)
					ref[k] = get(&h, k);
			}
			/* Every key, at every tenth step (mid-growth too). */
			if (step % 10 == 0 || sc__rowhash_growing(&h)) {
				for (uint64_t k = floor; k < nkeys; k++)
					SC_PROP_ASSERT(
					    seed, SUITE, name,
					    get(&h, k) == ref[k],
					    "step %d: key %llu reads "
					    "%lld, want %lld",
					    step, (unsigned long long)k,
					    (long long)get(&h, k),
					    (long long)ref[k]);
				checked++;
			}
		}
		sc__rowhash_settle(&h);
		cr_assert(!sc__rowhash_growing(&h));
		for (uint64_t k = floor; k < nkeys; k++)
			SC_PROP_ASSERT(seed, SUITE, name, get(&h, k) == ref[k],
				       "settled: key %llu",
				       (unsigned long long)k);
		SC_PROP_ASSERT(seed, SUITE, name, grown > 0,
			       "no step saw a growth in hand");
		cr_assert_gt(checked, 0);
		sc__rowhash_fini(&h);
		free(ref);
	}
}

/* A weight past int64 in the old array of a growing table: the table
 * finishes its growth, widens, and stays exact. */
Test(rowhash, widens_exactly_while_growing)
{
	struct sc__rowhash h;
	uint64_t row[SC_SCHEMA_MAX_COLS] = {0};
	int64_t was, now;

	sc__rowhash_init(&h, 2);
	cr_assert_eq(sc__rowhash_reserve(&h, 1000), 0);
	for (uint64_t k = 0; k < 1000; k++) {
		row_of(k, row);
		cr_assert_eq(sc__rowhash_add(&h, row, sc__rowhash_hash(&h, row),
					     k == 7 ? INT64_MAX : 1, &was,
					     &now),
			     0);
	}
	cr_assert_eq(sc__rowhash_reserve(&h, 200), 0);
	cr_assert(sc__rowhash_growing(&h), "1200 rows outgrow 2048 slots");
	row_of(7, row);
	cr_assert_eq(
	    sc__rowhash_add(&h, row, sc__rowhash_hash(&h, row), 5, &was, &now),
	    0);
	cr_assert_eq(was, INT64_MAX);
	cr_assert_eq(now, INT64_MAX, "clamped");
	cr_assert(!sc__rowhash_growing(&h));
	cr_assert(sc__rowhash_get(&h, row) == (__int128)INT64_MAX + 5);
	for (uint64_t k = 0; k < 1000; k++)
		if (k != 7)
			cr_assert_eq(get(&h, k), 1);
	sc__rowhash_fini(&h);
}

/*
 * A growth whose old array is at its cap (half full, every row still
 * there: the rows' homes crowd the middle of the array, so the slots the
 * drain walks first are empty, and no growth was prepared ahead, its
 * allocations failing) inserts the rows whose old home the drain has not
 * passed into the new array as strays. Every row is still found, updated
 * and removed where it lives, and once the old array is drained the
 * strays are rows like any other.
 */
#define STRAY_KEYS 20000

Test(rowhash, strays_past_a_full_old_array_are_found_and_removed)
{
	struct sc__rowhash h;
	uint64_t row[SC_SCHEMA_MAX_COLS] = {0};
	static int64_t ref[STRAY_KEYS];
	int64_t was, now;
	uint64_t k = 0, hv;
	size_t inserted = 0;

	memset(ref, 0, sizeof(ref));
	sc__rowhash_init(&h, 2);
	cr_assert_eq(sc__rowhash_reserve(&h, 600), 0);
	cr_assert_eq(h.mask + 1, 2048);
	sc_failalloc_arm(1, true);
	while (h.n + 1 < 1024) {
		row_of(++k, row);
		hv = sc__rowhash_hash(&h, row);
		if (sc__rowhash_home(hv, h.mask) < 512 ||
		    sc__rowhash_home(hv, h.mask) >= 1536)
			continue;
		cr_assert_eq(sc__rowhash_reserve(&h, 1), 0);
		cr_assert_eq(sc__rowhash_add(&h, row, hv, 1, &was, &now), 0);
		ref[k] = 1;
	}
	cr_assert_gt(sc_failalloc_failed(), 0, "no growth was tried ahead");
	sc_failalloc_disarm();
	cr_assert(!sc__rowhash_growing(&h));
	/* Growing now: the drain walks 64 + 8 x 40 empty slots. */
	cr_assert_eq(sc__rowhash_reserve(&h, 40), 0);
	cr_assert(sc__rowhash_growing(&h));
	cr_assert_eq(h.on, 1023);
	while (inserted < 40) {
		row_of(++k, row);
		cr_assert_lt(k, STRAY_KEYS);
		hv = sc__rowhash_hash(&h, row);
		if (!sc__rowhash_in_old(&h, hv))
			continue; /* only rows whose home is the old array */
		cr_assert_eq(sc__rowhash_add(&h, row, hv, 2, &was, &now), 0);
		cr_assert(was == 0 && now == 2);
		ref[k] = 2;
		inserted++;
	}
	cr_assert_eq(h.on, 1024, "the old array took one row to its cap");
	cr_assert_eq(h.stray, 39);
	for (uint64_t i = 0; i <= k; i++)
		cr_assert_eq(get(&h, i), ref[i], "key %llu",
			     (unsigned long long)i);
	/* Update every third row and remove every other, strays among
	 * them, still growing. */
	for (uint64_t i = 0; i <= k; i++) {
		int64_t w = i % 2 ? -ref[i] : i % 3 ? 0 : 5;

		if (ref[i] == 0 || w == 0)
			continue;
		row_of(i, row);
		cr_assert_eq(sc__rowhash_add(&h, row, sc__rowhash_hash(&h, row),
					     w, &was, &now),
			     0);
		cr_assert(was == ref[i] && now == ref[i] + w, "key %llu",
			  (unsigned long long)i);
		ref[i] += w;
	}
	cr_assert(sc__rowhash_growing(&h));
	for (uint64_t i = 0; i <= k; i++)
		cr_assert_eq(get(&h, i), ref[i], "key %llu after updates",
			     (unsigned long long)i);
	sc__rowhash_settle(&h);
	cr_assert(!sc__rowhash_growing(&h));
	cr_assert_eq(h.stray, 0);
	for (uint64_t i = 0; i <= k; i++)
		cr_assert_eq(get(&h, i), ref[i], "key %llu settled",
			     (unsigned long long)i);
	sc__rowhash_fini(&h);
}
