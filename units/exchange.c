/*
 * exchange.c - partition by key and send on every edge (see exchange.h).
 */
#include "units/exchange.h"

#include <stdlib.h>
#include <string.h>

#include "operators/base.h"
#include "units/edge_int.h"

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
	free(x->traces);
	x->edges = NULL;
	x->traces = NULL;
	x->nedges = 0;
}

bool
sc_exchange_room(const struct sc_exchange *x)
{
	if (!x)
		return false;
	SC_ASSERT(well_formed(x));
	for (uint32_t j = 0; j < x->nedges; j++)
		if (!sc_edge_is_closed(x->edges[j]) &&
		    sc_edge_room(x->edges[j]) == 0)
			return false;
	return true;
}

/* --- traces ---------------------------------------------------------------
 */

void
sc_exchange_trace_init(struct sc_exchange_trace *t, uint32_t ncols)
{
	if (t)
		*t = (struct sc_exchange_trace){.ncols = ncols};
}

void
sc__exchange_trace_set_symbols(struct sc_exchange_trace *t,
			       const struct sc__symcols *s)
{
	if (!t || !s)
		return;
	t->symtab = s->tab;
	t->symmask = s->mask;
}

/* The trace's symbol columns (none: every hold below does nothing). */
static struct sc__symcols
trace_syms(const struct sc_exchange_trace *t)
{
	return (struct sc__symcols){.tab = t->symtab, .mask = t->symmask};
}

void
sc_exchange_trace_fini(struct sc_exchange_trace *t)
{
	struct sc__symcols sy;

	if (!t)
		return;
	sy = trace_syms(t);
	for (size_t i = 0; i < t->nruns; i++) {
		sc__symtab_unhold(&sy, t->runs[i]);
		sc_batch_release(t->runs[i]);
	}
	free(t->runs);
	t->runs = NULL;
	t->nruns = t->cap = 0;
}

/* Room for one more run, before the send it will record (exchange.h,
 * Traces): the commit after an accepted send then cannot fail. */
static int
trace_reserve(struct sc_exchange_trace *t)
{
	struct sc_batch **n;
	size_t c;

	if (t->nruns < t->cap)
		return 0;
	c = t->cap ? 2 * t->cap : 8;
	n = realloc(t->runs, c * sizeof(struct sc_batch *));
	if (!n)
		return sc__fail(SC_ENOMEM, "exchange: a trace of %zu runs", c);
	t->runs = n;
	t->cap = c;
	return 0;
}

/* Record share b (the reference is the trace's), then merge the newest
 * runs while the older is not more than twice the newer. A merge that
 * fails leaves both runs: the integral sums them. */
static void
trace_commit(struct sc_exchange_trace *t, struct sc_batch *b)
{
	struct sc__symcols sy = trace_syms(t);

	SC_ASSERT(t->nruns < t->cap); /* trace_reserve ran */
	if (sc_batch_count(b) == 0) {
		sc_batch_release(b);
		return;
	}
	/* The sender still holds b's ids (the host until its submit
	 * returns, a unit's circuit until its next step). */
	sc__symtab_hold(&sy, b);
	t->runs[t->nruns++] = b;
	while (t->nruns >= 2) {
		struct sc_batch *older = t->runs[t->nruns - 2];
		struct sc_batch *newer = t->runs[t->nruns - 1];
		struct sc_batch *m = NULL;

		if (sc_batch_count(older) > 2 * sc_batch_count(newer) ||
		    sc_batch_add(older, newer, &m) != 0)
			return;
		/* The sum holds before the runs it replaces let go. */
		sc__symtab_hold(&sy, m);
		sc__symtab_unhold(&sy, older);
		sc__symtab_unhold(&sy, newer);
		sc_batch_release(older);
		sc_batch_release(newer);
		t->nruns -= 2;
		if (sc_batch_count(m) == 0)
			sc_batch_release(m); /* it all cancelled */
		else
			t->runs[t->nruns++] = m;
	}
}

int
sc_exchange_trace_integral(const struct sc_exchange_trace *t,
			   struct sc_batch **out)
{
	if (!t || !out)
		return sc__fail(SC_EINVAL, "sc_exchange_trace_integral: NULL");
	if (t->nruns == 0)
		return sc_batch_empty(t->ncols, out);
	if (t->nruns == 1) {
		*out = sc_batch_retain(t->runs[0]);
		return 0;
	}
	return sc_batch_sum(t->runs, t->nruns, out);
}

int
sc_exchange_set_traces(struct sc_exchange *x,
		       struct sc_exchange_trace *const *traces)
{
	struct sc_exchange_trace **n = NULL;

	if (!x || !x->edges)
		return sc__fail(SC_EINVAL, "sc_exchange_set_traces: NULL");
	if (traces) {
		n = malloc(x->nedges * sizeof(struct sc_exchange_trace *));
		if (!n)
			return sc__fail(SC_ENOMEM, "sc_exchange_set_traces");
		memcpy(n, traces,
		       x->nedges * sizeof(struct sc_exchange_trace *));
	}
	free(x->traces);
	x->traces = n;
	return 0;
}

/* --- sending ---------------------------------------------------------------
 */

static struct sc_exchange_trace *
trace_of(const struct sc_exchange *x, uint32_t j)
{
	return x->traces ? x->traces[j] : NULL;
}

/* Send share j (owned); fold its code into *result. A traced edge records
 * the share exactly when the edge accepts it. */
static int
send_share(struct sc_exchange *x, uint32_t j, struct sc_batch *share,
	   uint64_t *pushed, int *result)
{
	struct sc_exchange_trace *t = trace_of(x, j);
	int rc;

	if (t && (rc = trace_reserve(t)) != 0) {
		sc_batch_release(share);
		return rc;
	}
	if (t)
		(void)sc_batch_retain(share); /* the trace's, if accepted */
	rc = sc_edge_send(x->edges[j], share);
	if (rc == 0 && pushed)
		*pushed |= 1ull << j;
	if (rc == SC_EDEAD)
		*result = SC_EDEAD; /* released and counted by the edge */
	if (rc == 0 || rc == SC_EFULL || rc == SC_EDEAD) {
		/* In the ring, the outbox, or undeliverable: accepted. */
		if (t)
			trace_commit(t, share);
		return 0;
	}
	if (t)
		sc_batch_release(share);
	sc_batch_release(share); /* a hard error leaves it with us */
	return rc;
}

static int
exchange_send_body(struct sc_exchange *x, struct sc_batch *b, uint64_t *pushed)
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
	/* A zeroed exchange (before init, after fini) holds no edge. */
	if (!well_formed(x)) {
		sc_batch_release(b);
		return sc__fail(SC_EINVAL,
				"sc_exchange_send: the exchange is not "
				"initialized");
	}
	/* Every trace's room first, so a submit stays all or nothing. */
	for (j = 0; x->traces && j < x->nedges; j++)
		if (trace_of(x, j) && (rc = trace_reserve(trace_of(x, j)))) {
			sc_batch_release(b);
			return rc;
		}
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
	for (uint32_t j = 0; x && j < x->nedges; j++)
		if (sc_edge_has_outbox(x->edges[j]))
			(void)sc_edge_flush(x->edges[j]); /* EFULL and EDEAD
							     are fine */
}

bool
sc_exchange_backpressured(const struct sc_exchange *x)
{
	for (uint32_t j = 0; x && j < x->nedges; j++)
		if (sc_edge_backpressured(x->edges[j]))
			return true;
	return false;
}

/* share - held: the correction of one traced edge (a new batch). */
static int
correction(const struct sc_exchange_trace *t, struct sc_batch *share,
	   struct sc_batch **out)
{
	struct sc_batch *held = NULL, *neg = NULL;
	int rc = sc_exchange_trace_integral(t, &held);

	if (!rc)
		rc = sc_batch_negate(held, &neg);
	if (!rc && share) {
		struct sc_batch *two[2] = {share, neg};

		rc = sc_batch_sum(two, 2, out);
	} else if (!rc) {
		*out = sc_batch_retain(neg);
	}
	sc_batch_release(neg);
	sc_batch_release(held);
	return rc;
}

int
sc_exchange_correct(struct sc_exchange *x, const struct sc_batch *target)
{
	struct sc_batch *share[SC_EXCHANGE_MAX] = {0};
	int result = 0, rc = 0;

	if (!x || !target)
		return sc__fail(SC_EINVAL, "sc_exchange_correct: NULL");
	SC_ASSERT(well_formed(x));
	if (x->nedges == 1)
		share[0] = sc_batch_retain((struct sc_batch *)target);
	else if ((rc = sc_batch_route(target, x->key, x->nedges, share)) != 0)
		return rc;
	for (uint32_t j = 0; j < x->nedges; j++) {
		struct sc_exchange_trace *t = trace_of(x, j);
		struct sc_batch *c = NULL;

		if (t && !rc)
			rc = correction(t, share[j], &c);
		sc_batch_release(share[j]);
		if (!c)
			continue;
		if (sc_batch_count(c) == 0)
			sc_batch_release(c);
		else if (!rc)
			rc = send_share(x, j, c, NULL, &result);
	}
	return rc ? rc : result;
}

int
sc_exchange_send(struct sc_exchange *x, struct sc_batch *b, uint64_t *pushed)
{
	return sc__errwrap(exchange_send_body(x, b, pushed),
			   "sc_exchange_send");
}
