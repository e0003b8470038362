/*
 * batch_route.c - partition a batch by key (sc_batch_route, batch.h).
 *
 * One builder per share; each row goes to the share its key hashes to, and
 * each share is sorted and consolidated by its builder's finish. A row's
 * share depends on its key columns only, so the shares of a consolidated
 * batch are consolidated too, and every row of a key meets the same
 * replica of a sharded consumer (the exchange, units/exchange.h).
 */
#include "operators/batch.h"

int
sc_batch_route(const struct sc_batch *b, uint32_t key, uint32_t n,
	       struct sc_batch **out)
{
	struct sc_batch_builder bld[SC_BATCH_ROUTE_MAX];
	struct sc_batch *res[SC_BATCH_ROUTE_MAX];
	uint32_t ncols;
	uint32_t i;
	int rc = 0;

	if (!b || !out || n == 0 || n > SC_BATCH_ROUTE_MAX)
		return sc__fail(SC_EINVAL, "sc_batch_route: %s",
				!b || !out ? "NULL"
				: n	   ? "too many shards"
					   : "0 shards");
	ncols = sc_batch_ncols(b);
	if (key == 0 || key > ncols)
		return sc__fail(SC_EINVAL,
				"sc_batch_route: key %u of %u columns", key,
				ncols);
	for (i = 0; i < n; i++) {
		/* Cannot fail: ncols is a batch's own width. */
		(void)sc_batch_builder_init(&bld[i], ncols);
		res[i] = NULL;
	}
	for (size_t r = 0; r < sc_batch_count(b) && !rc; r++) {
		const uint64_t *row = sc_batch_row(b, r);

		rc = sc_batch_builder_push(&bld[sc_row_hash(row, key) % n], row,
					   ncols, sc_batch_weight(b, r));
	}
	for (i = 0; i < n && !rc; i++)
		if (sc_batch_builder_count(&bld[i]))
			rc = sc_batch_builder_finish(&bld[i], &res[i]);
	for (i = 0; i < n; i++) {
		sc_batch_builder_fini(&bld[i]);
		if (rc)
			sc_batch_release(res[i]);
		else
			out[i] = res[i];
	}
	return rc;
}
