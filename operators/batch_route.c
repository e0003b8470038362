/*
 * batch_route.c - partition a batch by key (sc_batch_route, batch.h).
 *
 * A row's share depends on its key columns only, so every row of a key
 * meets the same replica of a sharded consumer (the exchange,
 * units/exchange.h). Each share of a consolidated batch is a subsequence
 * of it, and so is consolidated as it stands: sorted, distinct, no zero
 * weight. So nothing is sorted here: one pass hashes each row's key and
 * counts the shares' rows, and a second copies every record, in order,
 * straight into its share's batch (records inline after the header for a
 * share of at most SC__SMALL_ROWS, as a builder's finish makes them). A
 * builder per share would copy each record twice and check or sort what
 * is known to be in order.
 */
#include "operators/batch_int.h"
#include "operators/mem_int.h"

/* The share of each row, one byte each (SC_BATCH_ROUTE_MAX fits): on the
 * stack up to this many rows. */
#define ROUTE_STACK_ROWS 1024

/* A share of `n` records (n >= 1) to fill: its batch's storage, or NULL
 * when out of memory. Small shares live inline after their header. */
static uint64_t *
share_alloc(size_t n, uint32_t stride, struct sc_batch **hdr)
{
	*hdr = NULL;
	if (n <= SC__SMALL_ROWS) {
		*hdr = sc__small_alloc(n, stride);
		return *hdr ? (uint64_t *)(*hdr + 1) : NULL;
	}
	return sc__rec_alloc(n, stride);
}

/* Seal share i: its `n` records are written at data (hdr: its inline
 * header, or NULL). 0 or SC_ENOMEM (data freed). */
static int
share_seal(uint32_t ncols, struct sc_batch *hdr, uint64_t *data, size_t n,
	   struct sc_batch **out)
{
	if (hdr) {
		*out = sc__small_seal(hdr, ncols, n, n);
		return 0;
	}
	return sc__batch_adopt(ncols, data, n, n, out);
}

int
sc_batch_route(const struct sc_batch *b, uint32_t key, uint32_t n,
	       struct sc_batch **out)
{
	uint8_t stack[ROUTE_STACK_ROWS], *to = stack;
	size_t cnt[SC_BATCH_ROUTE_MAX] = {0};
	uint64_t *data[SC_BATCH_ROUTE_MAX] = {0}, *at[SC_BATCH_ROUTE_MAX];
	struct sc_batch *hdr[SC_BATCH_ROUTE_MAX] = {0};
	struct sc_batch *res[SC_BATCH_ROUTE_MAX] = {0};
	uint32_t ncols, stride, i;
	size_t count;
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
	stride = ncols + 1;
	count = sc_batch_count(b);
	if (count > ROUTE_STACK_ROWS && !(to = malloc(count)))
		return sc__fail(SC_ENOMEM, "sc_batch_route: out of memory");
	for (size_t r = 0; r < count; r++) {
		to[r] = (uint8_t)(sc_row_hash(sc_batch_row(b, r), key) % n);
		cnt[to[r]]++;
	}
	for (i = 0; i < n && !rc; i++) {
		if (cnt[i] && !(data[i] = share_alloc(cnt[i], stride, &hdr[i])))
			rc = sc__fail(SC_ENOMEM,
				      "sc_batch_route: out of memory");
		at[i] = data[i];
	}
	for (size_t r = 0; r < count && !rc; r++) {
		sc__rec_copy(at[to[r]], b->data + r * stride, stride);
		at[to[r]] += stride;
	}
	for (i = 0; i < n; i++) {
		if (!data[i])
			continue;
		if (rc) { /* undo: nothing was sealed */
			if (hdr[i])
				free(hdr[i]);
			else
				sc__mem_free(data[i]);
		} else if (share_seal(ncols, hdr[i], data[i], cnt[i],
				      &res[i]) != 0) {
			rc = sc__fail(SC_ENOMEM,
				      "sc_batch_route: out of memory");
		}
	}
	if (to != stack)
		free(to);
	for (i = 0; i < n; i++) {
		if (rc)
			sc_batch_release(res[i]);
		else
			out[i] = res[i];
	}
	return rc;
}
