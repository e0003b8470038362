/*
 * distinct.c - the counting distinct (see distinct.h for the design).
 */
#include "operators/distinct.h"

#include <stdlib.h>

#include "operators/probe_int.h"
#include "operators/symbol_int.h"
#include "operators/trace.h"

struct sc_distinct {
	uint32_t ncols;		     /* row width */
	struct sc_trace *t;	     /* the integral of the input */
	struct sc_batch_builder out; /* output scratch, kept for its buffer */
	struct sc__fences fences;    /* of the trace's long runs */
};

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
	sc__fences_init(&d->fences);
	rc = sc_trace_create(ncols, &d->t);
	if (rc == 0)
		rc = sc_batch_builder_init(&d->out, ncols);
	if (rc) {
		sc_trace_destroy(d->t);
		free(d);
		return rc;
	}
	*out = d;
	return 0;
}

static int distinct_rows(struct sc_distinct *d, struct sc__probe *p,
			 const struct sc_batch *delta);

/*
 * The output of one delta: +1 for a row whose integrated weight rises above
 * zero, -1 for one that falls to zero or below. Reads the trace only.
 */
static int
distinct_changes(struct sc_distinct *d, const struct sc_batch *delta)
{
	struct sc__probe p;
	int rc;

	sc__probe_init(&p, d->ncols, d->t, NULL);
	sc__probe_prepare(&p, delta, d->ncols, &d->fences);
	rc = distinct_rows(d, &p, delta);
	sc__probe_fini(&p);
	return rc;
}

static int
distinct_rows(struct sc_distinct *d, struct sc__probe *p,
	      const struct sc_batch *delta)
{
	int64_t old, now;
	int rc;

	for (size_t i = 0; i < sc_batch_count(delta); i++) {
		const uint64_t *row = sc_batch_row(delta, i);

		rc = sc__probe_weight(p, row, &old);
		if (rc)
			return rc;
		if (__builtin_add_overflow(old, sc_batch_weight(delta, i),
					   &now))
			return sc__fail(SC_EOVERFLOW,
					"sc_distinct_step: row %zu of the "
					"delta takes its integrated weight "
					"beyond int64",
					i);
		if ((old > 0) == (now > 0))
			continue;
		rc = sc_batch_builder_push(&d->out, row, d->ncols,
					   now > 0 ? 1 : -1);
		if (rc)
			return rc;
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
	if (rc == 0)
		rc = sc__trace_make_room(d->t);
	sc__fences_sync(&d->fences, d->t);
	if (rc)
		return rc;
	sc_batch_builder_clear(&d->out);
	if (delta)
		rc = distinct_changes(d, delta);
	if (rc == 0)
		rc = sc_batch_builder_finish(&d->out, &res);
	if (rc) {
		sc_batch_builder_clear(&d->out);
		return rc;
	}
	/* Cannot fail: the spine has room and the width matches. The trace
	 * keeps a reference; the batch itself is never written. */
	if (delta && sc_batch_count(delta))
		(void)sc_trace_insert(d->t, (struct sc_batch *)delta);
	*out = res;
	return 0;
}

int
sc_distinct_work(struct sc_distinct *d, size_t budget)
{
	int rc;

	if (!d)
		return sc__fail(SC_EINVAL,
				"sc_distinct_work: distinct is NULL");
	rc = sc_trace_work(d->t, budget, NULL);
	sc__fences_sync(&d->fences, d->t);
	return rc;
}

size_t
sc_distinct_pending(const struct sc_distinct *d)
{
	return d ? sc_trace_pending(d->t) : 0;
}

size_t
sc_distinct_rows(const struct sc_distinct *d)
{
	return d ? sc_trace_rows(d->t) : 0;
}

size_t
sc_distinct_bytes(const struct sc_distinct *d)
{
	return d ? sc_trace_bytes(d->t) + sc__fences_bytes(&d->fences) : 0;
}

void
sc_distinct_destroy(struct sc_distinct *d)
{
	if (!d)
		return;
	sc_trace_destroy(d->t);
	sc_batch_builder_fini(&d->out);
	sc__fences_fini(&d->fences);
	free(d);
}

void
sc__distinct_set_symbols(struct sc_distinct *d, const struct sc__symcols *s)
{
	sc__trace_set_symbols(d->t, s);
}
