/*
 * distinct.c - the counting distinct (see distinct.h for the design).
 */
#include "operators/distinct.h"

#include <stdlib.h>

#include "operators/base.h"
#include "operators/probe_int.h"
#include "operators/rowhash_int.h"
#include "operators/symbol_int.h"
#include "operators/waterline_int.h"

struct sc_distinct {
	uint32_t ncols;		     /* row width */
	struct sc__rowhash h;	     /* the integral: row -> weight */
	uint64_t *hv;		     /* the delta rows' hashes (scratch) */
	size_t hv_cap;		     /* hashes hv holds */
	struct sc_batch_builder out; /* output scratch, kept for its buffer */
	struct sc__symcols sym;	     /* the rows' symbol columns: the table
					holds one reference per row it keeps */
	size_t sweep_at;	     /* the cleanup sweep's next slot */
};

/* A row's integrated weight now (for sc__symtab_hold_changes). */
static __int128
weight_now(void *ctx, const uint64_t *row)
{
	return sc__rowhash_get(&((struct sc_distinct *)ctx)->h, row);
}

int
sc_distinct_create(uint32_t ncols, struct sc_distinct **out)
{
	struct sc_distinct *d;
	int rc;

	if (!out)
		return sc__fail(SC_EINVAL, "sc_distinct_create: out is NULL");
	if (ncols == 0 || ncols > SC_SCHEMA_MAX_COLS)
		return sc__fail(SC_ESCHEMA,
				"sc_distinct_create: %u columns, want 1..%d",
				ncols, SC_SCHEMA_MAX_COLS);
	d = calloc(1, sizeof(*d));
	if (!d)
		return sc__fail(SC_ENOMEM, "sc_distinct_create: out of memory");
	d->ncols = ncols;
	sc__rowhash_init(&d->h, ncols);
	rc = sc_batch_builder_init(&d->out, ncols);
	if (rc) {
		free(d);
		return rc;
	}
	*out = d;
	return 0;
}

/* Rows ahead of the current one whose home slots are being loaded. */
#define PREFETCH 8

/* Undo the first n rows of delta, applied to the table: each added again
 * with the opposite weight (cannot fail: the sum is the weight before). */
static void
undo_rows(struct sc_distinct *d, const struct sc_batch *delta, size_t n)
{
	int64_t was, now;

	for (size_t i = 0; i < n; i++)
		(void)sc__rowhash_add(&d->h, sc_batch_row(delta, i), d->hv[i],
				      -sc_batch_weight(delta, i), &was, &now);
}

static int
hashes(struct sc_distinct *d, const struct sc_batch *delta)
{
	size_t n = sc_batch_count(delta);

	if (n > d->hv_cap) {
		uint64_t *hv = realloc(d->hv, n * sizeof(*hv));

		if (!hv)
			return sc__fail(SC_ENOMEM,
					"sc_distinct_step: out of memory");
		d->hv = hv;
		d->hv_cap = n;
	}
	for (size_t i = 0; i < n; i++)
		d->hv[i] = sc__rowhash_hash(&d->h, sc_batch_row(delta, i));
	return 0;
}

/*
 * Apply the delta to the table row by row, pushing +1 for a row whose
 * integrated weight rises above zero and -1 for one that falls to zero or
 * below. On failure the rows applied are undone.
 */
static int
distinct_rows(struct sc_distinct *d, const struct sc_batch *delta)
{
	size_t n = sc_batch_count(delta);
	int64_t old, now, w;
	int rc = hashes(d, delta);

	if (rc == 0)
		rc = sc__rowhash_reserve(&d->h, n);
	if (rc)
		return rc;
	for (size_t i = 0; i < n && i < PREFETCH; i++)
		sc__rowhash_prefetch(&d->h, d->hv[i]);
	for (size_t i = 0; i < n; i++) {
		const uint64_t *row = sc_batch_row(delta, i);

		if (i + PREFETCH < n)
			sc__rowhash_prefetch(&d->h, d->hv[i + PREFETCH]);
		w = sc_batch_weight(delta, i);
		rc = sc__rowhash_add(&d->h, row, d->hv[i], w, &old, &now);
		if (rc) { /* SC_ENOMEM widening past int64 */
			undo_rows(d, delta, i);
			return rc;
		}
		if ((old > 0) == (now > 0))
			continue;
		rc = sc_batch_builder_push(&d->out, row, d->ncols,
					   now > 0 ? 1 : -1);
		if (rc) {
			undo_rows(d, delta, i + 1);
			return rc;
		}
	}
	return 0;
}

int
sc_distinct_step(struct sc_distinct *d, const struct sc_batch *delta,
		 struct sc_batch **out)
{
	struct sc_batch *res;
	int rc;

	if (!d || !out)
		return sc__fail(SC_EINVAL, "sc_distinct_step: %s is NULL",
				!d ? "distinct" : "out");
	rc = sc__check_delta("sc_distinct_step", "delta", delta, d->ncols);
	if (rc)
		return rc;
	sc_batch_builder_clear(&d->out);
	if (delta && sc_batch_count(delta))
		rc = distinct_rows(d, delta);
	if (rc)
		goto clear;
	rc = sc_batch_builder_finish(&d->out, &res);
	if (rc) {
		undo_rows(d, delta, delta ? sc_batch_count(delta) : 0);
		goto clear;
	}
	/* The step stands: a row the table took in holds its ids, one it
	 * let go drops them (the delta's own hold keeps them live here). */
	if (delta && sc__symcols_any(&d->sym))
		sc__symtab_hold_changes(&d->sym, delta, weight_now, d);
	*out = res;
	return 0;
clear:
	sc_batch_builder_clear(&d->out);
	return rc;
}

int
sc_distinct_work(struct sc_distinct *d, size_t budget)
{
	(void)budget;
	if (!d)
		return sc__fail(SC_EINVAL,
				"sc_distinct_work: distinct is NULL");
	return 0; /* a hash table has no merge work */
}

size_t
sc_distinct_pending(const struct sc_distinct *d)
{
	(void)d;
	return 0;
}

size_t
sc_distinct_rows(const struct sc_distinct *d)
{
	return d ? d->h.n : 0;
}

size_t
sc_distinct_bytes(const struct sc_distinct *d)
{
	return d ? sc__rowhash_bytes(&d->h) + d->hv_cap * sizeof(uint64_t) : 0;
}

void
sc_distinct_destroy(struct sc_distinct *d)
{
	if (!d)
		return;
	if (d->h.recs)
		sc__symtab_unhold_slots(&d->sym, d->h.recs, d->h.mask + 1,
					d->h.stride, d->ncols);
	sc__rowhash_fini(&d->h);
	free(d->hv);
	sc_batch_builder_fini(&d->out);
	free(d);
}

void
sc__distinct_set_symbols(struct sc_distinct *d, const struct sc__symcols *s)
{
	SC_ASSERT(d->h.n == 0);
	d->sym = *s;
}

/* --- cleanup (waterline.h) ------------------------------------------------ */

/* A record the sweep removes lets its ids go. */
static void
distinct_drop(void *ctx, const uint64_t *rec)
{
	const struct sc_distinct *d = ctx;

	sc__symtab_unhold_slots(&d->sym, rec, 1, d->h.stride, d->ncols);
}

void
sc__distinct_sweep(struct sc_distinct *d, const struct sc__horizon *h,
		   size_t budget)
{
	sc__rowhash_sweep(&d->h, h, &d->sweep_at, budget, distinct_drop, d);
}
