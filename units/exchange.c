/*
 * exchange.c - partition by key and send on every edge (see exchange.h).
 */
#include "units/exchange.h"

#include <stdlib.h>
#include <string.h>

#include "operators/base.h"

/* What sc_exchange_init made: for SC_ASSERT. */
static inline bool
well_formed(const struct sc_exchange *x)
{
	return x->edges && x->nedges >= 1 && x->nedges <= SC_EXCHANGE_MAX &&
	       (x->nedges == 1) == (x->key == 0);
}

int
sc_exchange_init(struct sc_exchange *x, uint32_t key, uint32_t nedges,
		 struct sc_edge *const *edges)
{
	if (!x || !edges || nedges == 0 || nedges > SC_EXCHANGE_MAX ||
	    (nedges > 1 && key == 0))
		return sc__fail(SC_EINVAL, "sc_exchange_init: %u edges, key %u",
				nedges, key);
	memset(x, 0, sizeof(*x));
	for (uint32_t j = 0; j < nedges; j++)
		if (!edges[j])
			return sc__fail(SC_EINVAL,
					"sc_exchange_init: edge %u is NULL", j);
	x->edges = malloc(nedges * sizeof(struct sc_edge *));
	if (!x->edges)
		return sc__fail(SC_ENOMEM, "sc_exchange_init: %u edges",
				nedges);
	memcpy(x->edges, edges, nedges * sizeof(struct sc_edge *));
	x->key = nedges > 1 ? key : 0;
	x->nedges = nedges;
	return 0;
}

void
sc_exchange_fini(struct sc_exchange *x)
{
	if (!x)
		return;
	free(x->edges);
	x->edges = NULL;
	x->nedges = 0;
}

bool
sc_exchange_room(const struct sc_exchange *x)
{
	SC_ASSERT(well_formed(x));
	for (uint32_t j = 0; j < x->nedges; j++)
		if (!sc_edge_is_closed(x->edges[j]) &&
		    sc_edge_room(x->edges[j]) == 0)
			return false;
	return true;
}

/* Send share j (owned); fold its code into *result. */
static int
send_share(struct sc_exchange *x, uint32_t j, struct sc_batch *share,
	   uint64_t *pushed, int *result)
{
	int rc = sc_edge_send(x->edges[j], share);

	if (rc == 0 && pushed)
		*pushed |= 1ull << j;
	if (rc == 0 || rc == SC_EFULL)
		return 0; /* in the ring, or the outbox: accepted */
	if (rc == SC_EDEAD) {
		*result = SC_EDEAD; /* released and counted by the edge */
		return 0;
	}
	sc_batch_release(share); /* a hard error leaves it with us */
	return rc;
}

int
sc_exchange_send(struct sc_exchange *x, struct sc_batch *b, uint64_t *pushed)
{
	struct sc_batch *share[SC_EXCHANGE_MAX];
	int result = 0, rc = 0;
	uint32_t j;

	if (pushed)
		*pushed = 0;
	if (!x || !b) {
		sc_batch_release(b);
		return sc__fail(SC_EINVAL, "sc_exchange_send: NULL");
	}
	SC_ASSERT(well_formed(x));
	if (x->nedges == 1) {
		rc = send_share(x, 0, b, pushed, &result);
		return rc ? rc : result;
	}
	rc = sc_batch_route(b, x->key, x->nedges, share);
	sc_batch_release(b);
	if (rc)
		return rc;
	for (j = 0; j < x->nedges && !rc; j++)
		if (share[j])
			rc = send_share(x, j, share[j], pushed, &result);
	for (; j < x->nedges; j++)
		sc_batch_release(share[j]);
	return rc ? rc : result;
}

void
sc_exchange_flush(struct sc_exchange *x)
{
	for (uint32_t j = 0; j < x->nedges; j++)
		if (sc_edge_has_outbox(x->edges[j]))
			(void)sc_edge_flush(x->edges[j]); /* EFULL and EDEAD
							     are fine */
}

bool
sc_exchange_backpressured(const struct sc_exchange *x)
{
	for (uint32_t j = 0; j < x->nedges; j++)
		if (sc_edge_backpressured(x->edges[j]))
			return true;
	return false;
}
