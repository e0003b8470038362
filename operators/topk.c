/*
 * topk.c - incremental top-k per group (see topk.h).
 *
 * A step runs in two phases, as aggregate.c's: the first reads the trace
 * and the delta through two probes (the integral before the step, and
 * after it: the trace plus the delta) and builds the output; it may fail,
 * and then nothing has changed. The second inserts the delta into the
 * trace and cannot fail (room in the spine is made first).
 */
#include "operators/topk.h"

#include <stdlib.h>
#include <string.h>

#include "operators/batch_int.h"
#include "operators/probe_int.h"
#include "operators/symbol_int.h"
#include "operators/trace.h"
#include "operators/waterline_int.h"

/* One present row of a group's top, as the probe returned it. */
struct top_row {
	const uint64_t *row; /* trace layout, borrowed from a run or delta */
	int64_t w;	     /* its integrated weight, > 0 */
};

/* A growable list of top rows (scratch, reused across steps). */
struct top_list {
	struct top_row *r;
	size_t n, cap;
};

struct sc_topk {
	struct sc_topk_spec spec;	   /* as created */
	bool relaid;			   /* trace layout != input layout */
	uint32_t perm[SC_SCHEMA_MAX_COLS]; /* input column of trace column i */
	uint64_t flip[SC_SCHEMA_MAX_COLS]; /* XOR mask of trace column i */
	struct sc_trace *t;		   /* the integral, trace layout */
	struct top_list before, after;	   /* phase-1 scratch */
	struct sc_batch_builder out;	   /* output, input layout */
	struct sc_batch_builder lay;	   /* the delta, trace layout */
	struct sc__fences fences;	   /* of the trace's long runs */
};

/* --- creation ------------------------------------------------------------ */

int
sc_topk_spec_check(const struct sc_topk_spec *s, const char *fn)
{
	bool seen[SC_SCHEMA_MAX_COLS] = {false};

	if (!fn)
		fn = "sc_topk_spec_check";
	if (!s)
		return sc__fail(SC_EINVAL, "%s: spec is NULL", fn);
	if (s->limit == 0)
		return sc__fail(SC_EINVAL, "%s: limit 0 keeps no row", fn);
	if (s->ncols == 0 || s->ncols > SC_SCHEMA_MAX_COLS ||
	    s->key >= s->ncols)
		return sc__fail(SC_ESCHEMA,
				"%s: %u columns grouped by %u, want 1..%d "
				"columns and key < ncols",
				fn, s->ncols, s->key, SC_SCHEMA_MAX_COLS);
	if (s->norder == 0 || s->norder > s->ncols - s->key)
		return sc__fail(SC_ESCHEMA, "%s: %u order columns, want 1..%u",
				fn, s->norder, s->ncols - s->key);
	for (uint32_t i = 0; i < s->norder; i++) {
		uint32_t c = s->order[i];

		if (c < s->key || c >= s->ncols || seen[c])
			return sc__fail(SC_ESCHEMA, "%s: order column %u is %s",
					fn, c,
					c >= s->ncols ? "out of range"
					: c < s->key  ? "in the group key"
						      : "repeated");
		seen[c] = true;
	}
	return 0;
}

/* Trace layout: (key, order columns, the rest in input order), with the
 * descending order columns complemented. */
static void
layout(struct sc_topk *tk)
{
	const struct sc_topk_spec *s = &tk->spec;
	bool used[SC_SCHEMA_MAX_COLS] = {false};
	uint32_t n = 0;

	for (uint32_t i = 0; i < s->key; i++)
		tk->perm[n++] = i;
	for (uint32_t i = 0; i < s->norder; i++) {
		tk->flip[n] = s->desc[i] ? UINT64_MAX : 0;
		tk->perm[n++] = s->order[i];
		used[s->order[i]] = true;
	}
	for (uint32_t i = s->key; i < s->ncols; i++)
		if (!used[i])
			tk->perm[n++] = i;
	tk->relaid = false;
	for (uint32_t i = 0; i < s->ncols; i++)
		tk->relaid = tk->relaid || tk->perm[i] != i || tk->flip[i];
}

int
sc_topk_create(const struct sc_topk_spec *spec, struct sc_topk **out)
{
	struct sc_topk *tk;
	int rc = sc_topk_spec_check(spec, "sc_topk_create");

	if (rc)
		return rc;
	if (!out)
		return sc__fail(SC_EINVAL, "sc_topk_create: out is NULL");
	tk = calloc(1, sizeof(*tk));
	if (!tk)
		return sc__fail(SC_ENOMEM, "sc_topk_create: out of memory");
	tk->spec = *spec;
	layout(tk);
	sc__fences_init(&tk->fences);
	rc = sc_trace_create(spec->ncols, &tk->t);
	if (rc == 0)
		rc = sc_batch_builder_init(&tk->out, spec->ncols);
	if (rc == 0)
		rc = sc_batch_builder_init(&tk->lay, spec->ncols);
	if (rc) {
		sc_topk_destroy(tk);
		return rc;
	}
	*out = tk;
	return 0;
}

void
sc_topk_destroy(struct sc_topk *tk)
{
	if (!tk)
		return;
	sc_trace_destroy(tk->t);
	free(tk->before.r);
	free(tk->after.r);
	sc_batch_builder_fini(&tk->out);
	sc_batch_builder_fini(&tk->lay);
	sc__fences_fini(&tk->fences);
	free(tk);
}

/* --- one group ------------------------------------------------------------ */

static int
list_push(struct top_list *l, const uint64_t *row, int64_t w)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct top_row *r = realloc(l->r, cap * sizeof(*r));

		if (!r)
			return sc__fail(SC_ENOMEM,
					"sc_topk_step: out of memory");
		l->r = r;
		l->cap = cap;
	}
	l->r[l->n++] = (struct top_row){row, w};
	return 0;
}

/* Do two trace rows tie (equal on every order column)? */
static bool
ties(const struct sc_topk *tk, const uint64_t *a, const uint64_t *b)
{
	uint32_t from = tk->spec.key, to = from + tk->spec.norder;

	for (uint32_t i = from; i < to; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/*
 * The present rows of group `key` whose rank is at most limit, as probe p
 * sees the integral, into l (in trace row order). The walk goes best first
 * and stops at the first tie class that starts past the limit.
 */
static int
group_top(struct sc_topk *tk, struct sc__probe *p, const uint64_t *key,
	  struct top_list *l)
{
	const uint64_t *row, *cls = NULL;
	unsigned __int128 ahead = 0, in_cls = 0; /* multiplicities */
	int64_t w;
	int rc;

	l->n = 0;
	sc__probe_seek(p, key, tk->spec.key);
	/* Clamped: a row whose partial integral passes int64 counts as
	 * INT64_MAX copies, which only a limit past INT64_MAX can tell from
	 * its exact multiplicity (topk.h). */
	while ((rc = sc__probe_next_live(p, &row, &w)) == 1) {
		if (w <= 0)
			continue; /* absent (topk.h) */
		if (!cls || !ties(tk, cls, row)) {
			ahead += in_cls;
			in_cls = 0;
			cls = row;
			if (ahead >= tk->spec.limit)
				return 0; /* this class ranks past limit */
		}
		in_cls += (uint64_t)w;
		rc = list_push(l, row, w);
		if (rc)
			return rc;
	}
	return rc;
}

/* Push `row` (trace layout) into the output, in the input's layout. */
static int
push_out(struct sc_topk *tk, const uint64_t *row, int64_t w)
{
	uint64_t in[SC_SCHEMA_MAX_COLS];

	for (uint32_t i = 0; i < tk->spec.ncols; i++)
		in[tk->perm[i]] = row[i] ^ tk->flip[i];
	return sc_batch_builder_push(&tk->out, in, tk->spec.ncols, w);
}

/* Emit after - before: both lists are in trace row order, so one merge. */
static int
emit_change(struct sc_topk *tk)
{
	const struct top_list *b = &tk->before, *a = &tk->after;
	uint32_t n = tk->spec.ncols;
	size_t i = 0, j = 0;
	int rc = 0;

	while (rc == 0 && (i < b->n || j < a->n)) {
		int c = i == b->n   ? 1
			: j == a->n ? -1
				    : sc_row_cmp(b->r[i].row, a->r[j].row, n);

		if (c < 0) {
			rc = push_out(tk, b->r[i].row, -b->r[i].w);
			i++;
		} else if (c > 0) {
			rc = push_out(tk, a->r[j].row, a->r[j].w);
			j++;
		} else {
			/* Both positive int64: the difference fits. */
			if (a->r[j].w != b->r[i].w)
				rc = push_out(tk, a->r[j].row,
					      a->r[j].w - b->r[i].w);
			i++;
			j++;
		}
	}
	return rc;
}

/* --- the step ------------------------------------------------------------- */

/* The delta in trace layout (a new reference). */
static int
relay(struct sc_topk *tk, const struct sc_batch *delta, struct sc_batch **out)
{
	uint64_t row[SC_SCHEMA_MAX_COLS];
	uint32_t kept = 0;
	int rc;

	if (!tk->relaid) {
		*out = sc_batch_retain((struct sc_batch *)delta);
		return 0;
	}
	/* The leading columns the layout leaves in place, uncomplemented:
	 * the rows come out in order of those (sc_batch_index_by's case). */
	while (kept < tk->spec.ncols && tk->perm[kept] == kept &&
	       tk->flip[kept] == 0)
		kept++;
	rc = sc_batch_builder_reserve(&tk->lay, sc_batch_count(delta));
	for (size_t i = 0; rc == 0 && i < sc_batch_count(delta); i++) {
		const uint64_t *in = sc_batch_row(delta, i);

		for (uint32_t c = 0; c < tk->spec.ncols; c++)
			row[c] = in[tk->perm[c]] ^ tk->flip[c];
		rc = sc_batch_builder_push(&tk->lay, row, tk->spec.ncols,
					   sc_batch_weight(delta, i));
	}
	if (rc == 0)
		rc = sc__batch_builder_finish_prefix(&tk->lay, kept, out);
	if (rc)
		sc_batch_builder_clear(&tk->lay);
	return rc;
}

/* Phase 1: every touched group's change, into tk->out. */
static int
compute(struct sc_topk *tk, const struct sc_batch *d)
{
	struct sc__probe before, after;
	uint32_t k = tk->spec.key;
	int rc = 0;

	sc__probe_init(&before, tk->spec.ncols, tk->t, NULL);
	sc__probe_init(&after, tk->spec.ncols, tk->t, d);
	sc__probe_prepare(&before, d, k, &tk->fences);
	sc__probe_prepare(&after, d, k, &tk->fences);
	for (size_t i = 0; rc == 0 && i < sc_batch_count(d);
	     i = sc__batch_key_end(d, i, k)) {
		const uint64_t *key = sc_batch_row(d, i);

		rc = group_top(tk, &before, key, &tk->before);
		if (rc == 0)
			rc = group_top(tk, &after, key, &tk->after);
		if (rc == 0)
			rc = emit_change(tk);
	}
	sc__probe_fini(&before);
	sc__probe_fini(&after);
	return rc;
}

int
sc_topk_step(struct sc_topk *tk, const struct sc_batch *delta,
	     struct sc_batch **out)
{
	struct sc_batch *d = NULL, *res;
	int rc;

	if (!tk || !out)
		return sc__fail(SC_EINVAL, "sc_topk_step: %s is NULL",
				!tk ? "topk" : "out");
	rc = sc__check_delta("sc_topk_step", "delta", delta, tk->spec.ncols);
	if (rc == 0)
		rc = sc__trace_make_room(tk->t);
	sc__fences_sync(&tk->fences, tk->t);
	if (rc)
		return rc;
	if (!delta || sc_batch_count(delta) == 0)
		return sc_batch_empty(tk->spec.ncols, out);
	rc = relay(tk, delta, &d);
	if (rc)
		return rc;
	sc_batch_builder_clear(&tk->out);
	rc = compute(tk, d);
	if (rc == 0)
		rc = sc_batch_builder_finish(&tk->out, &res);
	if (rc) {
		sc_batch_builder_clear(&tk->out);
		sc_batch_release(d);
		return rc;
	}
	/* Phase 2: cannot fail (room in the spine was made above). */
	(void)sc_trace_insert(tk->t, d);
	sc_batch_release(d);
	*out = res;
	return 0;
}

int
sc_topk_work(struct sc_topk *tk, size_t budget)
{
	int rc;

	if (!tk)
		return sc__fail(SC_EINVAL, "sc_topk_work: topk is NULL");
	rc = sc_trace_work(tk->t, budget, NULL);
	sc__fences_sync(&tk->fences, tk->t);
	return rc;
}

size_t
sc_topk_pending(const struct sc_topk *tk)
{
	return tk ? sc_trace_pending(tk->t) : 0;
}

size_t
sc_topk_rows(const struct sc_topk *tk)
{
	return tk ? sc_trace_rows(tk->t) : 0;
}

size_t
sc_topk_bytes(const struct sc_topk *tk)
{
	if (!tk)
		return 0;
	return sc_trace_bytes(tk->t) + sc__fences_bytes(&tk->fences) +
	       (tk->before.cap + tk->after.cap) * sizeof(struct top_row);
}

/* The trace keeps rows in its layout, descending order columns
 * complemented (layout()). */
void
sc__topk_set_symbols(struct sc_topk *tk, const struct sc__symcols *s)
{
	struct sc__symcols t;

	sc__symcols_permute(s, tk->perm, tk->flip, tk->spec.ncols, &t);
	sc__trace_set_symbols(tk->t, &t);
}

/* --- cleanup (waterline.h) ------------------------------------------------ */

/* The trace's first `key` columns are the input's, as they are: a horizon
 * on the group key reads them in place. */
void
sc__topk_sweep(struct sc_topk *tk, const struct sc__horizon *h, size_t budget)
{
	sc__trace_sweep(tk->t, h, budget);
	sc__fences_sync(&tk->fences, tk->t);
}
