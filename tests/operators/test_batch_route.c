/*
 * test_batch_route.c - the partition of a batch by key (sc_batch_route):
 * every row of a key lands in one share, the shares sum to the batch, and
 * bad arguments are refused.
 */
#include <criterion/criterion.h>

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
