/*
 * probe.c - monotone galloping probes into trace runs (see probe_int.h).
 */
#include "operators/probe_int.h"

#include <stdlib.h>

void
sc__probe_init(struct sc__probe *p, uint32_t ncols, const struct sc_trace *t,
	       const struct sc_batch *extra)
{
	size_t n = t ? sc_trace_runs(t) : 0;

	p->ncols = ncols;
	p->nruns = 0;
	for (size_t i = 0; i < n; i++) {
		p->run[p->nruns] = sc_trace_run(t, i);
		p->from[p->nruns] = 0;
		p->lo[p->nruns] = p->hi[p->nruns] = 0;
		p->nruns++;
	}
	if (extra && sc_batch_count(extra) > 0) {
		p->run[p->nruns] = extra;
		p->from[p->nruns] = 0;
		p->lo[p->nruns] = p->hi[p->nruns] = 0;
		p->nruns++;
	}
}

/* Does row i of b come at or after key (strict: after) on k words? */
static inline bool
past(const struct sc_batch *b, size_t i, const uint64_t *key, uint32_t k,
     bool strict)
{
	int c = sc_row_cmp(sc_batch_row(b, i), key, k);

	return strict ? c > 0 : c >= 0;
}

/*
 * The first index in [from, count) that is past the key: gallop forward in
 * steps 1, 2, 4, ... until one is, then binary search the last step.
 */
static size_t
gallop(const struct sc_batch *b, size_t from, const uint64_t *key, uint32_t k,
       bool strict)
{
	size_t n = sc_batch_count(b), lo = from, hi, step = 1;

	if (lo >= n || past(b, lo, key, k, strict))
		return lo;
	/* Invariant: row lo is not past the key. */
	for (;;) {
		hi = lo + step;
		if (hi >= n) {
			hi = n;
			break;
		}
		if (past(b, hi, key, k, strict))
			break;
		lo = hi;
		step *= 2;
	}
	/* Row lo is not past, row hi is (or hi == n): search (lo, hi]. */
	lo++;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (past(b, mid, key, k, strict))
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

void
sc__probe_seek(struct sc__probe *p, const uint64_t *key, uint32_t k)
{
	for (uint32_t i = 0; i < p->nruns; i++) {
		size_t lo = gallop(p->run[i], p->from[i], key, k, false);

		p->from[i] = lo;
		p->lo[i] = lo;
		p->hi[i] = gallop(p->run[i], lo, key, k, true);
	}
}

int
sc__probe_weight(struct sc__probe *p, const uint64_t *row, int64_t *w)
{
	int64_t sum = 0;

	for (uint32_t i = 0; i < p->nruns; i++) {
		const struct sc_batch *b = p->run[i];
		size_t lo = gallop(b, p->from[i], row, p->ncols, false);

		p->from[i] = lo;
		if (lo < sc_batch_count(b) &&
		    sc_row_eq(sc_batch_row(b, lo), row, p->ncols) &&
		    __builtin_add_overflow(sum, sc_batch_weight(b, lo), &sum))
			return sc__fail(SC_EOVERFLOW,
					"probe: a row's integrated weight "
					"leaves int64");
	}
	*w = sum;
	return 0;
}

/*
 * One step of a walk: the extreme row (smallest going forward, largest
 * going back) among the runs' range ends, its weights summed and every
 * copy consumed. 1 with the row, 0 when the ranges are exhausted.
 */
static int
walk_step(struct sc__probe *p, bool back, const uint64_t **row, int64_t *w)
{
	const uint64_t *best = NULL;
	int64_t sum = 0;
	bool over = false;

	for (uint32_t i = 0; i < p->nruns; i++) {
		const uint64_t *r;

		if (p->lo[i] == p->hi[i])
			continue;
		r = sc_batch_row(p->run[i], back ? p->hi[i] - 1 : p->lo[i]);
		if (!best || (sc_row_cmp(r, best, p->ncols) < 0) != back)
			best = r;
	}
	if (!best)
		return 0;
	for (uint32_t i = 0; i < p->nruns; i++) {
		size_t at;

		if (p->lo[i] == p->hi[i])
			continue;
		at = back ? p->hi[i] - 1 : p->lo[i];
		if (!sc_row_eq(sc_batch_row(p->run[i], at), best, p->ncols))
			continue;
		over |= __builtin_add_overflow(
		    sum, sc_batch_weight(p->run[i], at), &sum);
		if (back)
			p->hi[i]--;
		else
			p->lo[i]++;
	}
	if (over)
		return sc__fail(SC_EOVERFLOW, "probe: a row's integrated "
					      "weight leaves int64");
	*row = best;
	*w = sum;
	return 1;
}

static int
walk(struct sc__probe *p, bool back, const uint64_t **row, int64_t *w)
{
	int rc;

	while ((rc = walk_step(p, back, row, w)) == 1)
		if (*w != 0)
			return 1;
	return rc;
}

int
sc__probe_next(struct sc__probe *p, const uint64_t **row, int64_t *w)
{
	return walk(p, false, row, w);
}

int
sc__probe_prev(struct sc__probe *p, const uint64_t **row, int64_t *w)
{
	return walk(p, true, row, w);
}

uint64_t
sc__batch_mass(const struct sc_batch *b)
{
	uint64_t m = 0;

	for (size_t i = 0; b && i < sc_batch_count(b); i++) {
		int64_t w = sc_batch_weight(b, i);
		uint64_t a = w < 0 ? 0 - (uint64_t)w : (uint64_t)w;

		m = sc__mass_add(m, a);
	}
	return m;
}

int
sc__trace_make_room(struct sc_trace *t)
{
	if (sc_trace_runs(t) + 1 < SC_TRACE_MAX_RUNS)
		return 0;
	return sc_trace_work(t, SIZE_MAX, NULL);
}

int
sc__check_delta(const char *fn, const char *what, const struct sc_batch *b,
		uint32_t ncols)
{
	if (b && sc_batch_ncols(b) != ncols)
		return sc__fail(SC_ESCHEMA, "%s: %s has %u columns, want %u",
				fn, what, sc_batch_ncols(b), ncols);
	return 0;
}
