/*
 * test_batch_route.c - the partition of a batch by key (sc_batch_route):
 * every row of a key lands in one share, the shares sum to the batch, and
 * bad arguments are refused.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "operators/batch.h"
#include "tests/support/prop.h"

Test(route, every_row_of_a_key_goes_to_one_shard_and_nothing_is_lost)
{
	struct sc_rng r;

	sc_rng_seed(&r, sc_prop_seed(31));
	for (int round = 0; round < 50; round++) {
		uint64_t rows[3 * 200];
		int64_t w[200];
		struct sc_batch *b = NULL, *parts[5], *sum = NULL;
		uint32_t n = 1 + (uint32_t)sc_rng_below(&r, 5);

		for (int i = 0; i < 200; i++) {
			for (int c = 0; c < 3; c++)
				rows[3 * i + c] = sc_rng_below(&r, 6);
			w[i] = (int64_t)sc_rng_below(&r, 5) - 2;
		}
		cr_assert_eq(sc_batch_from_records(3, rows, w, 200, &b), 0);
		cr_assert_eq(sc_batch_route(b, 2, n, parts), 0);
		cr_assert_eq(sc_batch_empty(3, &sum), 0);
		for (uint32_t j = 0; j < n; j++) {
			struct sc_batch *t = NULL;

			if (!parts[j])
				continue;
			for (size_t i = 0; i < sc_batch_count(parts[j]); i++)
				cr_assert_eq(
				    sc_row_hash(sc_batch_row(parts[j], i), 2) %
					n,
				    j);
			cr_assert_eq(sc_batch_add(sum, parts[j], &t), 0);
			sc_batch_release(sum);
			sc_batch_release(parts[j]);
			sum = t;
		}
		cr_assert(sc_batch_equal(sum, b), "the shares do not sum up");
		sc_batch_release(sum);
		sc_batch_release(b);
	}
}

/*
 * The route keeps each share in its input's order instead of sorting it
 * (batch_route.c): every share must be exactly the batch a plain sort and
 * consolidation of the rows hashed there gives, at sizes across the inline
 * (32 rows) and the stack (1,024 rows) limits, with many equal keys.
 */
Test(route, each_share_equals_a_plain_sort_of_its_rows)
{
	uint64_t seed = sc_prop_seed(47);
	uint64_t rounds = sc_prop_count(40);
	struct sc_rng r;

	sc_rng_seed(&r, seed);
	for (uint64_t round = 0; round < rounds; round++) {
		size_t n = (size_t)sc_rng_below(&r, 3000);
		uint32_t ncols = 1 + (uint32_t)sc_rng_below(&r, 6);
		uint32_t key = 1 + (uint32_t)sc_rng_below(&r, ncols);
		uint32_t shards = 1 + (uint32_t)sc_rng_below(&r, 9);
		uint64_t span = 1 + sc_rng_below(&r, 40);
		uint64_t *rows = calloc((n + 1) * ncols, sizeof(uint64_t));
		uint64_t *mine = malloc((n + 1) * ncols * sizeof(uint64_t));
		int64_t *w = malloc((n + 1) * sizeof(int64_t));
		int64_t *mw = malloc((n + 1) * sizeof(int64_t));
		struct sc_batch *b = NULL, *parts[SC_BATCH_ROUTE_MAX];

		cr_assert(rows && mine && w && mw);
		for (size_t i = 0; i < n; i++) {
			for (uint32_t c = 0; c < ncols; c++)
				rows[i * ncols + c] = sc_rng_below(&r, span);
			w[i] = (int64_t)sc_rng_below(&r, 7) - 3;
		}
		cr_assert_eq(sc_batch_from_records(ncols, rows, w, n, &b), 0);
		cr_assert_eq(sc_batch_route(b, key, shards, parts), 0);
		for (uint32_t j = 0; j < shards; j++) {
			struct sc_batch *want = NULL;
			size_t m = 0;

			for (size_t i = 0; i < n; i++) {
				if (sc_row_hash(rows + i * ncols, key) %
					shards !=
				    j)
					continue;
				memcpy(mine + m * ncols, rows + i * ncols,
				       ncols * sizeof(uint64_t));
				mw[m++] = w[i];
			}
			cr_assert_eq(
			    sc_batch_from_records(ncols, mine, mw, m, &want),
			    0);
			if (sc_batch_count(want) == 0) {
				SC_PROP_ASSERT(seed, "route",
					       "each_share_equals_a_plain_sort_"
					       "of_its_rows",
					       parts[j] == NULL,
					       "round %llu: share %u of %u "
					       "should be empty",
					       (unsigned long long)round, j,
					       shards);
			} else {
				SC_PROP_ASSERT(
				    seed, "route",
				    "each_share_equals_a_plain_sort_of_its_"
				    "rows",
				    parts[j] &&
					sc_batch_equal(parts[j], want) &&
					sc_batch_is_consolidated(parts[j]),
				    "round %llu: share %u of %u (%zu rows, "
				    "%u columns) differs from the sort",
				    (unsigned long long)round, j, shards, n,
				    ncols);
			}
			sc_batch_release(want);
			sc_batch_release(parts[j]);
		}
		sc_batch_release(b);
		free(rows);
		free(mine);
		free(w);
		free(mw);
	}
}

Test(route, bad_key_or_shard_count_is_einval)
{
	uint64_t row[2] = {1, 1};
	struct sc_batch *b = NULL, *parts[SC_BATCH_ROUTE_MAX + 1];

	cr_assert_eq(sc_batch_from_records(2, row, NULL, 1, &b), 0);
	cr_assert_eq(sc_batch_route(b, 0, 2, parts), SC_EINVAL);
	cr_assert_eq(sc_batch_route(b, 3, 2, parts), SC_EINVAL);
	cr_assert_eq(sc_batch_route(b, 1, 0, parts), SC_EINVAL);
	cr_assert_eq(sc_batch_route(b, 1, SC_BATCH_ROUTE_MAX + 1, parts),
		     SC_EINVAL);
	cr_assert_eq(sc_batch_route(NULL, 1, 2, parts), SC_EINVAL);
	sc_batch_release(b);
}
