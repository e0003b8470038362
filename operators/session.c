/*
 * session.c - session windows per group (session.h).
 *
 * A step lays its delta out as (key, t, the rest): a permutation, so no
 * two rows become one (their weights would add, maybe past int64). Then
 * for each key it touches
 * walks the key's present times from the back twice, through the trace
 * alone (before) and through the trace and the delta (after), down to the
 * boundary session.h names, cuts each walk into sessions and writes the
 * before's as -1 and the after's as +1 (what did not change cancels when
 * the output is finished). Only then, when nothing can fail any more, the
 * delta joins the trace.
 */
#include "operators/session.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "operators/batch_int.h"
#include "operators/error.h"
#include "operators/probe_int.h"
#include "operators/symbol_int.h"
#include "operators/trace.h"

/* One present time of a walk: its multiplicity, and whether a row's
 * summed weight behind it left int64 (the probe reads it clamped). */
struct tm {
	int64_t t;
	__int128 m;
	bool wide;
};

struct sc_session {
	struct sc_session_spec spec;
	struct sc_trace *t;	  /* the integral as (key, t, the rest) */
	struct sc__fences fences; /* of its long runs */
	struct sc__layout lay;	  /* rows as (key, t, the rest) */
	struct sc_batch_builder out;
	struct tm *walk; /* scratch: one walk's times, latest first */
	size_t walk_cap;
	size_t nwithheld; /* sessions with no row (session.h) */
	uint64_t mass;	  /* sum of |w| inserted, saturating */
};

int
sc_session_spec_check(const struct sc_session_spec *s, const char *who)
{
	if (!who)
		who = "sc_session_spec_check";
	if (!s)
		return sc__fail(SC_EINVAL, "%s: spec is NULL", who);
	if (s->ncols == 0 || s->ncols > SC_SCHEMA_MAX_COLS)
		return sc__fail(SC_ESCHEMA, "%s: ncols %u is not in 1..%u", who,
				s->ncols, SC_SCHEMA_MAX_COLS);
	if (s->k >= s->ncols || s->k + 3 > SC_SCHEMA_MAX_COLS)
		return sc__fail(SC_ESCHEMA,
				"%s: a key of %u columns leaves no time column "
				"in %u, or no room for start, end and count",
				who, s->k, s->ncols);
	if (s->time_col < s->k || s->time_col >= s->ncols)
		return sc__fail(SC_ESCHEMA,
				"%s: time column %u is not one of the columns "
				"%u..%u after the key",
				who, s->time_col, s->k, s->ncols - 1);
	if (s->gap <= 0)
		return sc__fail(SC_EINVAL, "%s: gap %lld is not positive", who,
				(long long)s->gap);
	return 0;
}

void
sc_session_destroy(struct sc_session *s)
{
	if (!s)
		return;
	sc_trace_destroy(s->t);
	sc__fences_fini(&s->fences);
	sc_batch_builder_fini(&s->out);
	free(s->walk);
	free(s);
}

static int
session_create_body(const struct sc_session_spec *spec, struct sc_session **out)
{
	const char *fn = "sc_session_create";
	struct sc_session *s;
	int rc;

	if (!spec || !out)
		return sc__fail(SC_EINVAL, "%s: %s is NULL", fn,
				!spec ? "spec" : "out");
	rc = sc_session_spec_check(spec, fn);
	if (rc)
		return rc;
	s = calloc(1, sizeof(*s));
	if (!s)
		return sc__fail(SC_ENOMEM, "%s: no memory", fn);
	s->spec = *spec;
	sc__layout_init(&s->lay, spec->ncols, spec->k, spec->time_col);
	sc__fences_init(&s->fences);
	rc = sc_trace_create(spec->ncols, &s->t);
	if (rc == 0)
		rc = sc_batch_builder_init(&s->out, spec->k + 3);
	if (rc) {
		sc_session_destroy(s);
		return rc;
	}
	*out = s;
	return 0;
}

int
sc_session_create(const struct sc_session_spec *spec, struct sc_session **out)
{
	return sc__errwrap(session_create_body(spec, out), "sc_session_create");
}

/* The trace holds its rows' symbols, in its column order. */
void
sc__session_set_symbols(struct sc_session *s, const struct sc__symcols *in)
{
	struct sc__symcols ts;

	sc__symcols_permute(in, s->lay.perm, NULL, s->spec.ncols, &ts);
	if (ts.tab)
		sc__trace_set_symbols(s->t, &ts);
}

/* --- the walk -------------------------------------------------------------
 */

static int
walk_push(struct sc_session *s, size_t n, int64_t t, __int128 m, bool wide)
{
	if (n == s->walk_cap) {
		size_t cap = s->walk_cap ? 2 * s->walk_cap : 64;
		struct tm *w = realloc(s->walk, cap * sizeof(*w));

		if (!w)
			return sc__fail(SC_ENOMEM,
					"sc_session_step: no memory");
		s->walk = w;
		s->walk_cap = cap;
	}
	s->walk[n].t = t;
	s->walk[n].m = m;
	s->walk[n].wide = wide;
	return 0;
}

/* The key's present times from the last back to the boundary below tmin
 * (session.h) into s->walk, latest first: *n of them. A time's rows are
 * adjacent in the trace's order, so the walk sums them as it goes. */
static int
walk_key(struct sc_session *s, struct sc__probe *p, const uint64_t *key,
	 int64_t tmin, size_t *n)
{
	uint32_t k = s->spec.k;
	const uint64_t *r;
	int64_t w, t = 0;
	__int128 m = 0;
	bool have = false, wide = false, stop = false;
	size_t got = 0;
	int rc = 0, more;

	sc__probe_seek(p, key, k);
	do {
		more = sc__probe_prev_live(p, &r, &w);
		if (have && (more != 1 || sc_dec_i64(r[k]) != t)) {
			/* time t is complete: keep it if present */
			if (m > 0 && got > 0 && s->walk[got - 1].t < tmin &&
			    (__int128)s->walk[got - 1].t - t >= s->spec.gap)
				stop = true;
			else if (m > 0 &&
				 (rc = walk_push(s, got, t, m, wide)) == 0)
				got++;
			have = false;
		}
		if (more != 1 || stop || rc)
			break;
		if (!have) {
			t = sc_dec_i64(r[k]);
			m = 0;
			wide = false;
			have = true;
		}
		m += w;
		wide |= w == INT64_MAX || w == INT64_MIN;
	} while (1);
	*n = got;
	return rc;
}

/* Cut a walk into sessions and write each as `sign`; *withheld counts
 * those with no row. */
static int
emit_sessions(struct sc_session *s, const uint64_t *key, size_t n, int64_t sign,
	      size_t *withheld)
{
	uint32_t k = s->spec.k;
	uint64_t row[SC_SCHEMA_MAX_COLS];
	int rc = 0;

	memcpy(row, key, k * sizeof(uint64_t));
	/* The walk is latest first: a session is a run from index i down
	 * to j (earliest), read from the back of the array. */
	for (size_t e = n; rc == 0 && e > 0;) {
		size_t j = e - 1, i = j;
		__int128 count = s->walk[j].m, end;
		bool wide = s->walk[j].wide;

		while (i > 0 && (__int128)s->walk[i - 1].t - s->walk[i].t <
				    s->spec.gap) {
			i--;
			count += s->walk[i].m;
			wide |= s->walk[i].wide;
		}
		e = i;
		if (wide || count > INT64_MAX) {
			(*withheld)++;
			continue;
		}
		end = (__int128)s->walk[i].t + s->spec.gap;
		row[k] = sc_enc_i64(s->walk[j].t);
		row[k + 1] =
		    sc_enc_i64(end > INT64_MAX ? INT64_MAX : (int64_t)end);
		row[k + 2] = sc_enc_i64((int64_t)count);
		rc = sc_batch_builder_push(&s->out, row, k + 3, sign);
	}
	return rc;
}

/* Every touched key's sessions, before and after, into s->out. */
static int
compute(struct sc_session *s, const struct sc_batch *proj, size_t *dwith_add,
	size_t *dwith_sub)
{
	uint32_t k = s->spec.k;
	struct sc__probe before, after;
	size_t n = sc_batch_count(proj);
	int rc = 0;

	sc__probe_init(&before, s->spec.ncols, s->t, NULL);
	sc__probe_init(&after, s->spec.ncols, s->t, proj);
	sc__probe_prepare(&before, proj, k, &s->fences);
	sc__probe_prepare(&after, proj, k, &s->fences);
	for (size_t i = 0, e; rc == 0 && i < n; i = e) {
		const uint64_t *key = sc_batch_row(proj, i);
		/* (key, t, ...) sorted: the key's first row has its least t */
		int64_t tmin = sc_dec_i64(key[k]);
		size_t nw;

		e = sc__batch_key_end(proj, i, k);
		rc = walk_key(s, &before, key, tmin, &nw);
		if (rc == 0)
			rc = emit_sessions(s, key, nw, -1, dwith_sub);
		if (rc == 0)
			rc = walk_key(s, &after, key, tmin, &nw);
		if (rc == 0)
			rc = emit_sessions(s, key, nw, 1, dwith_add);
	}
	sc__probe_fini(&before);
	sc__probe_fini(&after);
	return rc;
}

/* --- the step -------------------------------------------------------------
 */

static int
session_step_body(struct sc_session *s, const struct sc_batch *delta,
		  struct sc_batch **out)
{
	struct sc_batch *proj = NULL, *res = NULL;
	size_t add = 0, sub = 0;
	int rc;

	if (!s || !out)
		return sc__fail(SC_EINVAL, "sc_session_step: %s is NULL",
				!s ? "session" : "out");
	rc = sc__check_delta("sc_session_step", "delta", delta, s->spec.ncols);
	if (rc == 0) {
		rc = sc__trace_make_room(s->t);
		sc__fences_sync(&s->fences, s->t);
	}
	if (rc)
		return rc;
	if (!delta || sc_batch_count(delta) == 0)
		return sc_batch_empty(s->spec.k + 3, out);
	if ((rc = sc__layout_apply(&s->lay, delta, &proj)) != 0)
		return rc;
	sc_batch_builder_clear(&s->out);
	rc = compute(s, proj, &add, &sub);
	if (rc == 0)
		rc = sc_batch_builder_finish(&s->out, &res);
	if (rc) {
		sc_batch_builder_clear(&s->out);
		sc_batch_release(proj);
		return rc;
	}
	/* Cannot fail: room was made in the trace. */
	(void)sc_trace_insert(s->t, proj);
	s->mass = sc__mass_add(s->mass, sc__batch_mass(proj));
	s->nwithheld = s->nwithheld + add - sub;
	sc_batch_release(proj);
	*out = res;
	return 0;
}

int
sc_session_step(struct sc_session *s, const struct sc_batch *delta,
		struct sc_batch **out)
{
	return sc__errwrap(session_step_body(s, delta, out), "sc_session_step");
}

int
sc_session_work(struct sc_session *s, size_t budget)
{
	int rc;

	if (!s)
		return sc__fail(SC_EINVAL, "sc_session_work: session is NULL");
	rc = sc_trace_work(s->t, budget, NULL);
	sc__fences_sync(&s->fences, s->t);
	return rc;
}

size_t
sc_session_pending(const struct sc_session *s)
{
	return s ? sc_trace_pending(s->t) : 0;
}

size_t
sc_session_rows(const struct sc_session *s)
{
	return s ? sc_trace_rows(s->t) : 0;
}

size_t
sc_session_bytes(const struct sc_session *s)
{
	if (!s)
		return 0;
	return sc_trace_bytes(s->t) + sc__fences_bytes(&s->fences) +
	       s->walk_cap * sizeof(*s->walk);
}

int
sc_session_check(const struct sc_session *s)
{
	if (!s)
		return sc__fail(SC_EINVAL, "sc_session_check: session is NULL");
	if (s->nwithheld == 0)
		return 0;
	return sc__fail(SC_EOVERFLOW,
			"sc_session_check: %zu session%s a count outside "
			"int64 (no output row)",
			s->nwithheld, s->nwithheld == 1 ? " has" : "s have");
}
