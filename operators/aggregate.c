/*
 * aggregate.c - incremental count, sum, avg, min and max (see aggregate.h).
 *
 * A step runs in two phases. The first computes everything: the output
 * batch, and for COUNT/SUM/AVG one pending new state per touched group
 * (exact sums built as fresh copies). MIN/MAX only read the state in it;
 * COUNT/SUM/AVG update the row table as they read it (one probe per row)
 * and, if the phase fails, undo those updates (rows_undo), so either way a
 * failure frees the scratch and leaves nothing changed. The second inserts
 * the delta into the trace (MIN/MAX) or swaps the pending group states in;
 * it cannot fail (room in the spine and in the tables is made first).
 */
#include "operators/aggregate.h"
#include "operators/aggregate_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "operators/batch_int.h"
#include "operators/groups_int.h"
#include "operators/probe_int.h"
#include "operators/rowhash_int.h"
#include "operators/symbol_int.h"
#include "operators/words_int.h"
#include "operators/trace.h"
#include "operators/waterline_int.h"
#include "operators/xsum.h"

/* Delta rows ahead of the current one whose row-table slots are being
 * loaded. */
#define PREFETCH ((size_t)8)

/* A touched group's new state, computed in phase 1. */
struct pending {
	size_t idx;	      /* its entry, or SC__GROUPS_NONE if new */
	const uint64_t *key;  /* k words, in the delta */
	struct sc__gstate st; /* the new state */
	struct sc_xsum xs;    /* the new exact sum (if exact), owned */
	int dwide;	      /* change in the live groups out of range */
	int dbad;	      /* SC_AGG_NONNEGATIVE: change in the groups
				 whose state breaks the declaration */
};

struct sc_aggregate {
	struct sc_aggregate_spec spec; /* as created */
	bool minmax;		       /* MIN or MAX: no group table */
	bool exact;		       /* f64 SUM or any AVG: exact sums */
	bool nonneg;		       /* SC_AGG_NONNEGATIVE: no row table */
	bool permuted;		       /* trace rows are (key, value, rest) */
	uint32_t perm[SC_SCHEMA_MAX_COLS]; /* input column of trace column i */
	uint32_t vpos;	    /* the value's column in trace rows */
	struct sc_trace *t; /* MIN/MAX: the integral, in trace column order */
	uint64_t mass;	    /* MIN/MAX: sum of |w| ever inserted, saturating */
	struct sc__rowhash rows; /* COUNT/SUM/AVG: the integral, row -> w */
	uint64_t *hv;		 /* the delta rows' hashes (scratch) */
	size_t *gend;		 /* the delta's group ends (scratch) */
	size_t hv_cap;		 /* entries hv and gend hold */
	size_t napplied;	 /* rows of this step applied to `rows` */
	size_t nwide; /* live groups whose value is outside int64 (no row) */
	size_t nbad;  /* SC_AGG_NONNEGATIVE: groups whose total weight is
			 negative, or 0 with a sum that is not (aggregate.h,
			 "Nonnegative inputs") */
	struct sc_xsum zero;	     /* the empty exact sum, to compare */
	struct sc__symcols ksym;     /* SC_AGG_NONNEGATIVE: the symbol
					columns of the key, which each group
					entry holds (no row holds them) */
	struct sc__groups g;	     /* group states (COUNT/SUM/AVG) */
	struct pending *pend;	     /* phase-1 scratch */
	size_t npend, pend_cap;	     /* in use, allocated */
	struct sc_batch_builder out; /* output scratch */
	struct sc__fences fences;    /* of the trace's long runs */
	struct sc__symcols sym;	     /* COUNT/SUM/AVG: the symbol columns of
					`rows` (trace order); each row kept
					holds its ids */
	size_t sweep_row;	     /* cleanup: the rows' sweep's next slot */
	size_t sweep_group;	     /* cleanup: the groups' next entry */
};

/* A row's integrated weight in `rows` now (sc__symtab_hold_changes). */
static __int128
row_weight_now(void *ctx, const uint64_t *row)
{
	return sc__rowhash_get(&((struct sc_aggregate *)ctx)->rows, row);
}

/* SC_AGG_NONNEGATIVE: take (hold) or drop one reference per symbol word
 * of a group's key, for as long as its entry is kept. Keys come from
 * delta rows, which hold their ids, so a take cannot find one dead. */
static void
key_syms(const struct sc_aggregate *agg, const uint64_t *key, bool hold)
{
	const struct sc__symcols *s = &agg->ksym;

	if (!sc__symcols_any(s))
		return;
	for (uint32_t m = s->mask; m; m &= m - 1) {
		uint64_t id = key[__builtin_ctz(m)];

		if (hold)
			(void)sc_symtab_retain(s->tab, id);
		else
			(void)sc_symtab_release(s->tab, id);
	}
}

/* --- creation ------------------------------------------------------------ */

static int
spec_check(const struct sc_aggregate_spec *s, uint32_t flags)
{
	bool numeric;

	if ((unsigned)s->kind > SC_AGG_MAX)
		return sc__fail(SC_EINVAL,
				"sc_aggregate_create: unknown "
				"aggregate kind %d",
				(int)s->kind);
	if (s->ncols == 0 || s->ncols > SC_SCHEMA_MAX_COLS || s->k > s->ncols ||
	    s->k + 1 > SC_SCHEMA_MAX_COLS)
		return sc__fail(SC_ESCHEMA,
				"sc_aggregate_create: %u columns grouped by "
				"%u, want 1..%d columns and k <= ncols",
				s->ncols, s->k, SC_SCHEMA_MAX_COLS);
	if (flags & ~(uint32_t)SC_AGG_NONNEGATIVE)
		return sc__fail(SC_EINVAL,
				"sc_aggregate_create: unknown flags 0x%x",
				flags & ~(uint32_t)SC_AGG_NONNEGATIVE);
	if ((flags & SC_AGG_NONNEGATIVE) &&
	    (s->kind == SC_AGG_MIN || s->kind == SC_AGG_MAX))
		return sc__fail(SC_EINVAL,
				"sc_aggregate_create: SC_AGG_NONNEGATIVE is "
				"for COUNT, SUM and AVG, not %s",
				s->kind == SC_AGG_MIN ? "MIN" : "MAX");
	if (s->kind == SC_AGG_COUNT)
		return 0;
	if (s->col >= s->ncols)
		return sc__fail(SC_ESCHEMA,
				"sc_aggregate_create: value column %u of %u",
				s->col, s->ncols);
	if ((unsigned)s->col_type >= SC__TYPE_COUNT)
		return sc__fail(SC_ETYPE,
				"sc_aggregate_create: unknown column type %d",
				(int)s->col_type);
	numeric = s->col_type == SC_TYPE_I64 || s->col_type == SC_TYPE_U64 ||
		  s->col_type == SC_TYPE_F64;
	if ((s->kind == SC_AGG_SUM || s->kind == SC_AGG_AVG) && !numeric)
		return sc__fail(SC_ETYPE,
				"sc_aggregate_create: %s over a %s column",
				s->kind == SC_AGG_SUM ? "sum" : "avg",
				sc_type_name(s->col_type));
	return 0;
}

/* MIN/MAX keep rows as (key, value, the rest), so a group's rows sort by
 * value; a value column inside the key needs no permutation. */
static void
layout(struct sc_aggregate *agg)
{
	const struct sc_aggregate_spec *s = &agg->spec;
	uint32_t n = 0;

	for (uint32_t i = 0; i < s->ncols; i++)
		agg->perm[i] = i;
	agg->vpos = s->col;
	agg->permuted = false;
	if (!agg->minmax || s->col <= s->k)
		return;
	for (uint32_t i = 0; i < s->k; i++)
		agg->perm[n++] = i;
	agg->perm[n++] = s->col;
	for (uint32_t i = s->k; i < s->ncols; i++)
		if (i != s->col)
			agg->perm[n++] = i;
	agg->vpos = s->k;
	agg->permuted = true;
}

int
sc_aggregate_create(const struct sc_aggregate_spec *spec,
		    struct sc_aggregate **out)
{
	return sc_aggregate_create_flags(spec, 0, out);
}

int
sc__aggregate_create_decl(const struct sc__aggregate_decl *d,
			  struct sc_aggregate **out)
{
	return sc_aggregate_create_flags(d ? &d->spec : NULL, d ? d->flags : 0,
					 out);
}

static int
aggregate_create_flags_body(const struct sc_aggregate_spec *spec,
			    uint32_t flags, struct sc_aggregate **out)
{
	struct sc_aggregate *agg;
	int rc;

	if (!spec || !out)
		return sc__fail(SC_EINVAL, "sc_aggregate_create: %s is NULL",
				!spec ? "spec" : "out");
	rc = spec_check(spec, flags);
	if (rc)
		return rc;
	agg = calloc(1, sizeof(*agg));
	if (!agg)
		return sc__fail(SC_ENOMEM,
				"sc_aggregate_create: out of memory");
	agg->spec = *spec;
	agg->minmax = spec->kind == SC_AGG_MIN || spec->kind == SC_AGG_MAX;
	agg->exact =
	    spec->kind == SC_AGG_AVG ||
	    (spec->kind == SC_AGG_SUM && spec->col_type == SC_TYPE_F64);
	agg->nonneg = (flags & SC_AGG_NONNEGATIVE) != 0;
	sc_xsum_init(&agg->zero);
	layout(agg);
	sc__groups_init(&agg->g, spec->k, agg->exact);
	sc__fences_init(&agg->fences);
	sc__rowhash_init(&agg->rows, spec->ncols);
	rc = agg->minmax ? sc_trace_create(spec->ncols, &agg->t) : 0;
	if (rc == 0)
		rc = sc_batch_builder_init(&agg->out, spec->k + 1);
	if (rc) {
		sc_aggregate_destroy(agg);
		return rc;
	}
	*out = agg;
	return 0;
}

void
sc_aggregate_destroy(struct sc_aggregate *agg)
{
	if (!agg)
		return;
	sc_trace_destroy(agg->t);
	if (agg->rows.recs)
		sc__symtab_unhold_slots(&agg->sym, agg->rows.recs,
					agg->rows.mask + 1, agg->rows.stride,
					agg->spec.ncols);
	sc__rowhash_fini(&agg->rows);
	for (size_t i = 0; agg->nonneg && i < agg->g.n; i++)
		key_syms(agg, sc__groups_key(&agg->g, i), false);
	sc_xsum_fini(&agg->zero);
	free(agg->hv);
	free(agg->gend);
	sc__groups_fini(&agg->g);
	free(agg->pend);
	sc_batch_builder_fini(&agg->out);
	sc__fences_fini(&agg->fences);
	free(agg);
}

int
sc_aggregate_out_type(const struct sc_aggregate *agg, enum sc_type *out)
{
	if (!agg || !out)
		return sc__fail(SC_EINVAL, "sc_aggregate_out_type: %s is NULL",
				!agg ? "aggregate" : "out");
	if (agg->minmax)
		*out = agg->spec.col_type;
	else if (agg->exact)
		*out = SC_TYPE_F64;
	else
		*out = SC_TYPE_I64;
	return 0;
}

uint32_t
sc_aggregate_out_ncols(const struct sc_aggregate *agg)
{
	return agg ? agg->spec.k + 1 : 0;
}

/* --- shared pieces of a step --------------------------------------------- */

/* Push (key, value) with weight w. */
static int
push_out(struct sc_aggregate *agg, const uint64_t *key, uint64_t value,
	 int64_t w)
{
	uint64_t row[SC_SCHEMA_MAX_COLS];
	uint32_t k = agg->spec.k;

	/* A constant-size copy for the common keys: a copy of k words is a
	 * call to memcpy, dearer than the rest of the push. */
	if (k == 1)
		row[0] = key[0];
	else if (k == 2)
		memcpy(row, key, 2 * sizeof(uint64_t));
	else
		memcpy(row, key, k * sizeof(uint64_t));
	row[k] = value;
	return sc_batch_builder_push(&agg->out, row, k + 1, w);
}

/* Emit -old and +new for a group, each only if present, nothing if equal. */
static int
push_change(struct sc_aggregate *agg, const uint64_t *key, bool was,
	    uint64_t old, bool is, uint64_t now)
{
	int rc = 0;

	if (was && is && old == now)
		return 0;
	/* Groups come in key order; pushing a group's two rows in value
	 * order too keeps the whole output sorted, so finishing it is one
	 * compaction pass instead of a sort. */
	if (was && is && now < old) {
		rc = push_out(agg, key, now, 1);
		return rc ? rc : push_out(agg, key, old, -1);
	}
	if (was)
		rc = push_out(agg, key, old, -1);
	if (rc == 0 && is)
		rc = push_out(agg, key, now, 1);
	return rc;
}

/* --- COUNT, SUM, AVG ------------------------------------------------------ */

/*
 * The output word of a group state into *out, or false if the value is
 * outside int64 (COUNT, or SUM over an integer column): then the group has
 * no output row. An AVG whose count is outside int64 reads the exact sum
 * rounded, divided by the count rounded (three roundings, but a function
 * of the group's integral all the same).
 */
static bool
state_value(const struct sc_aggregate *agg, const struct sc__gstate *st,
	    const struct sc_xsum *xs, uint64_t *out)
{
	double v = NAN;
	int64_t x;

	switch (agg->spec.kind) {
	case SC_AGG_COUNT:
		if (!sc__words_i64(st->count, 2, &x))
			return false;
		*out = sc_enc_i64(x);
		return true;
	case SC_AGG_SUM:
		if (!agg->exact) {
			if (!sc__words_i64(st->isum, 3, &x))
				return false;
			*out = sc_enc_i64(x);
			return true;
		}
		(void)sc_xsum_read(xs, &v);
		*out = sc_enc_f64(v);
		return true;
	default: /* AVG; a zero count (negative weights) reads NaN */
		if (!sc__words_i64(st->count, 2, &x)) {
			(void)sc_xsum_read(xs, &v);
			v /= sc__words_double(st->count, 2);
		} else if (x != 0) {
			(void)sc_xsum_mean(xs, x, &v);
		}
		*out = sc_enc_f64(v);
		return true;
	}
}

/* Add w times the value word v into the exact sum: a double as it is, an
 * integer as two exactly representable halves. */
static int
xsum_add_word(struct sc_xsum *x, enum sc_type t, uint64_t v, int64_t w)
{
	int rc;

	if (t == SC_TYPE_F64)
		return sc_xsum_add_weighted(x, sc_dec_f64(v), w);
	if (t == SC_TYPE_I64) {
		int64_t s = sc_dec_i64(v);

		rc = sc_xsum_add_weighted(x, ldexp((double)(s >> 32), 32), w);
		if (rc == 0)
			rc = sc_xsum_add_weighted(
			    x, (double)(s & INT64_C(0xffffffff)), w);
		return rc;
	}
	rc = sc_xsum_add_weighted(x, ldexp((double)(v >> 32), 32), w);
	if (rc == 0)
		rc = sc_xsum_add_weighted(x, (double)(v & 0xffffffffu), w);
	return rc;
}

/* The sign of a 128-bit count: -1, 0 or 1. */
static int
count_sign(const uint64_t c[2])
{
	__int128 v = (__int128)(((unsigned __int128)c[1] << 64) | c[0]);

	return (v > 0) - (v < 0);
}

/* SC_AGG_NONNEGATIVE: whether a group's state is all zero (total weight,
 * sum, exact sum and its special counts), so its entry can go. */
static bool
state_empty(const struct sc_aggregate *agg, const struct sc__gstate *st,
	    const struct sc_xsum *xs)
{
	if (st->count[0] | st->count[1])
		return false;
	if (agg->spec.kind == SC_AGG_SUM && !agg->exact)
		return !(st->isum[0] | st->isum[1] | st->isum[2]);
	return !agg->exact || sc_xsum_equal(xs, &agg->zero);
}

/* SC_AGG_NONNEGATIVE: whether a group's state can only come from an
 * integral with a negative row: a negative total weight, or a zero one
 * with a sum that is not zero (rows of weight >= 0 summing to 0 are all
 * 0). */
static bool
state_bad(const struct sc_aggregate *agg, const struct sc__gstate *st,
	  const struct sc_xsum *xs)
{
	int sign = count_sign(st->count);

	return sign < 0 || (sign == 0 && !state_empty(agg, st, xs));
}

/* Whether a group has a value to emit: one of its rows has a non-zero
 * integrated weight, or, under SC_AGG_NONNEGATIVE (where that is the same
 * for an input that keeps the declaration), its total weight is > 0. */
static bool
group_on(const struct sc_aggregate *agg, const struct sc__gstate *st)
{
	return agg->nonneg ? count_sign(st->count) > 0 : st->live > 0;
}

static int
pend_reserve(struct sc_aggregate *agg, size_t n)
{
	struct pending *p;

	if (n <= agg->pend_cap)
		return 0;
	p = realloc(agg->pend, n * sizeof(*p));
	if (!p)
		return sc__fail(SC_ENOMEM, "sc_aggregate_step: out of memory");
	agg->pend = p;
	agg->pend_cap = n;
	return 0;
}

static void
pend_drop(struct sc_aggregate *agg)
{
	for (size_t i = 0; agg->exact && i < agg->npend; i++)
		sc_xsum_fini(&agg->pend[i].xs);
	agg->npend = 0;
}

/*
 * The delta's rows [i, e) of one group: the new state into *pd (pd->xs
 * initialised here when exact; the caller finalises it on failure too).
 * Only a row's integrated weight can leave int64 here (the trace's limit):
 * the count and the sum are wide, so a partial integral never fails.
 */
static int
group_fold(struct sc_aggregate *agg, const struct sc_batch *d, size_t i,
	   size_t e, struct pending *pd)
{
	const struct sc_aggregate_spec *s = &agg->spec;
	const struct sc__gstate *old =
	    pd->idx == SC__GROUPS_NONE ? NULL : sc__groups_st(&agg->g, pd->idx);
	bool isum = s->kind == SC_AGG_SUM && !agg->exact;
	/* The delta's own count and sum, folded into the wide state at the
	 * end: fewer than 2^64 int64 weights cannot overflow dc, and ds is
	 * flushed whenever the next product would overflow it. */
	__int128 dc = 0, ds = 0, prod, t;
	int64_t live = old ? old->live : 0, was, now, w;
	int rc = 0;

	if (old)
		pd->st = *old;
	else
		memset(&pd->st, 0, sizeof(pd->st));
	for (; i < e; i++) {
		const uint64_t *row = sc_batch_row(d, i);

		w = sc_batch_weight(d, i);
		if (!agg->nonneg) {
			if (i + PREFETCH < sc_batch_count(d))
				sc__rowhash_prefetch(&agg->rows,
						     agg->hv[i + PREFETCH]);
			rc = sc__rowhash_add(&agg->rows, row, agg->hv[i], w,
					     &was, &now);
			if (rc) /* SC_ENOMEM widening past int64 */
				return rc;
			agg->napplied++; /* undone if the step fails later */
			live += (now != 0) - (was != 0);
		}
		dc += w;
		if (isum) {
			prod = sc__words_product(s->col_type, row[s->col], w);
			if (__builtin_add_overflow(ds, prod, &t)) {
				sc__words_add(pd->st.isum, 3, ds);
				t = prod;
			}
			ds = t;
		}
		if (agg->exact)
			rc =
			    xsum_add_word(&pd->xs, s->col_type, row[s->col], w);
		if (rc)
			return rc;
	}
	sc__words_add(pd->st.count, 2, dc);
	if (isum)
		sc__words_add(pd->st.isum, 3, ds);
	/* Under SC_AGG_NONNEGATIVE no row is kept: `live` says only whether
	 * the entry must stay (its state is not all zero). */
	pd->st.live = agg->nonneg ? !state_empty(agg, &pd->st,
						 agg->exact ? &pd->xs : NULL)
				  : live;
	return 0;
}

/* Phase 1 for one group: fold, then emit the change of its value. */
static int
group_step(struct sc_aggregate *agg, const struct sc_batch *d, size_t i,
	   size_t e)
{
	struct pending *pd = &agg->pend[agg->npend];
	const struct sc__gstate *old;
	uint64_t ov = 0, nv = 0;
	bool was = false, is = false;
	int rc = 0;

	pd->key = sc_batch_row(d, i);
	pd->idx = sc__groups_find(&agg->g, pd->key);
	old =
	    pd->idx == SC__GROUPS_NONE ? NULL : sc__groups_st(&agg->g, pd->idx);
	if (agg->exact) {
		sc_xsum_init(&pd->xs);
		if (old)
			rc = sc_xsum_merge(&pd->xs,
					   sc__groups_xs(&agg->g, pd->idx));
	}
	agg->npend++; /* from here pend_drop finalises pd->xs */
	if (rc == 0)
		rc = group_fold(agg, d, i, e, pd);
	if (rc)
		return rc;
	/* A live group out of range has no row, and is counted in nwide. */
	pd->dwide = 0;
	pd->dbad = 0;
	if (agg->nonneg)
		pd->dbad =
		    (int)state_bad(agg, &pd->st, agg->exact ? &pd->xs : NULL) -
		    (int)(old &&
			  state_bad(agg, old,
				    agg->exact ? sc__groups_xs(&agg->g, pd->idx)
					       : NULL));
	if (old && group_on(agg, old)) {
		was = old->has_out != 0;
		ov = old->out;
		pd->dwide -= !was;
	}
	if (group_on(agg, &pd->st)) {
		is =
		    state_value(agg, &pd->st, agg->exact ? &pd->xs : NULL, &nv);
		pd->dwide += !is;
	}
	pd->st.has_out = is;
	pd->st.out = is ? nv : 0;
	return push_change(agg, pd->key, was, ov, is, nv);
}

static int
idx_descending(const void *a, const void *b)
{
	size_t x = ((const struct pending *)a)->idx;
	size_t y = ((const struct pending *)b)->idx;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* Phase 2: swap the pending states in. Cannot fail (room reserved). */
static void
groups_apply(struct sc_aggregate *agg)
{
	size_t ndel = 0;

	for (size_t i = 0; i < agg->npend; i++) {
		struct pending *pd = &agg->pend[i];

		if (pd->dwide > 0)
			agg->nwide++;
		else if (pd->dwide < 0)
			agg->nwide--;
		agg->nbad += (size_t)(ptrdiff_t)pd->dbad;
		if (pd->idx == SC__GROUPS_NONE) {
			if (pd->st.live > 0) {
				(void)sc__groups_insert(&agg->g, pd->key,
							&pd->st, &pd->xs);
				if (agg->nonneg)
					key_syms(agg, pd->key, true);
			} else if (agg->exact)
				sc_xsum_fini(&pd->xs);
			continue;
		}
		*sc__groups_st(&agg->g, pd->idx) = pd->st;
		if (agg->exact) {
			sc_xsum_fini(sc__groups_xs(&agg->g, pd->idx));
			*sc__groups_xs(&agg->g, pd->idx) = pd->xs;
		}
		if (pd->st.live == 0)
			agg->pend[ndel++].idx = pd->idx; /* reuse as a list */
	}
	/* Remove emptied groups from the highest index down: a removal moves
	 * the last entry, which is then never one still to remove. */
	qsort(agg->pend, ndel, sizeof(agg->pend[0]), idx_descending);
	for (size_t i = 0; i < ndel; i++) {
		if (agg->nonneg)
			key_syms(agg, sc__groups_key(&agg->g, agg->pend[i].idx),
				 false);
		sc__groups_remove(&agg->g, agg->pend[i].idx);
	}
	agg->npend = 0;
}

/* The hashes of the delta's rows, and the first rows' slots prefetched. */
static int
row_hashes(struct sc_aggregate *agg, const struct sc_batch *d)
{
	size_t n = sc_batch_count(d);

	if (n > agg->hv_cap) {
		uint64_t *hv = realloc(agg->hv, n * sizeof(*hv));
		size_t *ge;

		if (hv)
			agg->hv = hv;
		ge = hv ? realloc(agg->gend, n * sizeof(*ge)) : NULL;
		if (!ge)
			return sc__fail(SC_ENOMEM,
					"sc_aggregate_step: out of memory");
		agg->gend = ge;
		agg->hv_cap = n;
	}
	if (agg->nonneg)
		return 0; /* no row table to probe */
	for (size_t i = 0; i < n; i++)
		agg->hv[i] = sc__rowhash_hash(&agg->rows, sc_batch_row(d, i));
	for (size_t i = 0; i < n && i < PREFETCH; i++)
		sc__rowhash_prefetch(&agg->rows, agg->hv[i]);
	return 0;
}

/* The key of the delta's group g (its first row). */
static inline const uint64_t *
group_key(const struct sc_aggregate *agg, const struct sc_batch *d, size_t g)
{
	return sc_batch_row(d, g ? agg->gend[g - 1] : 0);
}

/* Take the rows applied so far back out of the row table (each added
 * again with the opposite weight: cannot fail, the sums are the weights
 * they had). */
static void
rows_undo(struct sc_aggregate *agg, const struct sc_batch *d)
{
	int64_t was, now;

	for (size_t i = 0; i < agg->napplied; i++)
		(void)sc__rowhash_add(&agg->rows, sc_batch_row(d, i),
				      agg->hv[i], -sc_batch_weight(d, i), &was,
				      &now);
	agg->napplied = 0;
}

/*
 * Phase 1 of COUNT/SUM/AVG. The row table is updated as it is read (one
 * probe per row, not a read now and a write in phase 2); whatever fails
 * after that is undone by rows_undo, so the step still changes nothing
 * on failure.
 */
static int
linear_compute(struct sc_aggregate *agg, const struct sc_batch *d)
{
	size_t groups = 0, fresh = 0;
	int rc;

	agg->napplied = 0;
	rc = row_hashes(agg, d);
	if (rc == 0 && !agg->nonneg)
		rc = sc__rowhash_reserve(&agg->rows, sc_batch_count(d));
	if (rc)
		return rc;
	for (size_t i = 0; i < sc_batch_count(d); i = agg->gend[groups++])
		agg->gend[groups] = sc__batch_key_end(d, i, agg->spec.k);
	rc = pend_reserve(agg, groups);
	if (rc)
		return rc;
	agg->npend = 0;
	/* Prefetches a few groups ahead, a group's slot first and its entry
	 * (which the slot names) later, so that the group table's misses
	 * overlap instead of stalling each group in turn. Not all at once:
	 * a core keeps a few dozen misses in flight, and prefetches past
	 * that are dropped. */
	for (size_t g = 0; g < groups && g < 2 * PREFETCH; g++)
		sc__groups_prefetch(&agg->g, group_key(agg, d, g), false);
	for (size_t g = 0; g < groups && g < PREFETCH; g++)
		sc__groups_prefetch(&agg->g, group_key(agg, d, g), true);
	for (size_t g = 0, i = 0; rc == 0 && g < groups; i = agg->gend[g++]) {
		if (g + 2 * PREFETCH < groups)
			sc__groups_prefetch(&agg->g,
					    group_key(agg, d, g + 2 * PREFETCH),
					    false);
		if (g + PREFETCH < groups)
			sc__groups_prefetch(
			    &agg->g, group_key(agg, d, g + PREFETCH), true);
		rc = group_step(agg, d, i, agg->gend[g]);
		fresh +=
		    rc == 0 && agg->pend[agg->npend - 1].idx == SC__GROUPS_NONE;
	}
	if (rc == 0)
		rc = sc__groups_reserve(&agg->g, fresh);
	return rc;
}

/* --- MIN, MAX --------------------------------------------------------------
 */

/* The group's extreme live value in what p sees: *found and *value. */
static int
extreme(struct sc_aggregate *agg, struct sc__probe *p, const uint64_t *key,
	bool *found, uint64_t *value)
{
	const uint64_t *row;
	int64_t w;
	int rc;

	sc__probe_seek(p, key, agg->spec.k);
	/* Only liveness matters here, so a row's weight past int64 (a
	 * partial integral, maybe) is no error: see check_integral. */
	rc = agg->spec.kind == SC_AGG_MIN ? sc__probe_next_live(p, &row, &w)
					  : sc__probe_prev_live(p, &row, &w);
	if (rc < 0)
		return rc;
	*found = rc == 1;
	*value = rc == 1 ? row[agg->vpos] : 0;
	return 0;
}

static int
minmax_compute(struct sc_aggregate *agg, const struct sc_batch *d)
{
	struct sc__probe before, after;
	uint64_t ov, nv;
	bool was, is;
	/* A row's weight outside int64 fails no step here: MIN/MAX read it
	 * only for its sign (live or not) and their output rows weigh 1;
	 * the trace keeps it exactly (trace.h) and the probe sums it wide,
	 * so no step depends on how a schedule grouped deltas. */
	int rc = 0;

	sc__probe_init(&before, agg->spec.ncols, agg->t, NULL);
	sc__probe_init(&after, agg->spec.ncols, agg->t, d);
	sc__probe_prepare(&before, d, agg->spec.k, &agg->fences);
	sc__probe_prepare(&after, d, agg->spec.k, &agg->fences);
	for (size_t i = 0, e; rc == 0 && i < sc_batch_count(d); i = e) {
		const uint64_t *key = sc_batch_row(d, i);

		e = sc__batch_key_end(d, i, agg->spec.k);
		rc = extreme(agg, &before, key, &was, &ov);
		if (rc == 0)
			rc = extreme(agg, &after, key, &is, &nv);
		if (rc == 0)
			rc = push_change(agg, key, was, ov, is, nv);
	}
	sc__probe_fini(&before);
	sc__probe_fini(&after);
	return rc;
}

/* --- the step --------------------------------------------------------------
 */

/* The delta in trace column order (a new reference). */
static int
to_trace_order(struct sc_aggregate *agg, const struct sc_batch *delta,
	       struct sc_batch **out)
{
	if (!agg->permuted) {
		*out = sc_batch_retain((struct sc_batch *)delta);
		return 0;
	}
	return sc_batch_index_by(delta, agg->perm, agg->spec.ncols, out);
}

int
sc_aggregate_step(struct sc_aggregate *agg, const struct sc_batch *delta,
		  struct sc_batch **out)
{
	struct sc_batch *d = NULL, *res;
	int rc;

	if (!agg || !out)
		return sc__fail(SC_EINVAL, "sc_aggregate_step: %s is NULL",
				!agg ? "aggregate" : "out");
	rc = sc__check_delta("sc_aggregate_step", "delta", delta,
			     agg->spec.ncols);
	if (rc == 0 && agg->minmax) {
		rc = sc__trace_make_room(agg->t);
		sc__fences_sync(&agg->fences, agg->t);
	}
	if (rc)
		return rc;
	if (!delta || sc_batch_count(delta) == 0)
		return sc_batch_empty(agg->spec.k + 1, out);
	rc = to_trace_order(agg, delta, &d);
	if (rc)
		return rc;
	sc_batch_builder_clear(&agg->out);
	rc = agg->minmax ? minmax_compute(agg, d) : linear_compute(agg, d);
	if (rc == 0)
		rc = sc_batch_builder_finish(&agg->out, &res);
	if (rc) {
		if (!agg->minmax)
			rows_undo(agg, d);
		pend_drop(agg);
		sc_batch_builder_clear(&agg->out);
		sc_batch_release(d);
		return rc;
	}
	/* Phase 2: cannot fail (room in the spine and the table). */
	if (agg->minmax) {
		(void)sc_trace_insert(agg->t, d);
		agg->mass = sc__mass_add(agg->mass, sc__batch_mass(d));
	} else {
		groups_apply(agg);
		agg->napplied = 0;
		/* Rows the table took in hold their ids, rows it let go drop
		 * them (d holds them meanwhile). Under SC_AGG_NONNEGATIVE
		 * no row is kept: the group entries hold their keys'. */
		if (!agg->nonneg)
			sc__symtab_hold_changes(&agg->sym, d, row_weight_now,
						agg);
	}
	sc_batch_release(d);
	*out = res;
	return 0;
}

int
sc_aggregate_work(struct sc_aggregate *agg, size_t budget)
{
	int rc;

	if (!agg)
		return sc__fail(SC_EINVAL,
				"sc_aggregate_work: aggregate is NULL");
	if (!agg->minmax)
		return 0; /* hash tables have no merge work */
	rc = sc_trace_work(agg->t, budget, NULL);
	sc__fences_sync(&agg->fences, agg->t);
	return rc;
}

size_t
sc_aggregate_pending(const struct sc_aggregate *agg)
{
	return agg && agg->minmax ? sc_trace_pending(agg->t) : 0;
}

size_t
sc_aggregate_groups(const struct sc_aggregate *agg)
{
	return agg ? agg->g.n : 0;
}

size_t
sc_aggregate_rows(const struct sc_aggregate *agg)
{
	if (!agg)
		return 0;
	return agg->minmax ? sc_trace_rows(agg->t) : agg->rows.n;
}

size_t
sc_aggregate_bytes(const struct sc_aggregate *agg)
{
	if (!agg)
		return 0;
	if (!agg->minmax)
		return sc__rowhash_bytes(&agg->rows) +
		       agg->hv_cap * sizeof(uint64_t) +
		       sc__groups_bytes(&agg->g);
	return sc_trace_bytes(agg->t) + sc__fences_bytes(&agg->fences);
}

int
sc_aggregate_check(const struct sc_aggregate *agg)
{
	if (!agg)
		return sc__fail(SC_EINVAL,
				"sc_aggregate_check: aggregate is NULL");
	if (agg->nbad > 0)
		return sc__fail(
		    SC_ESCHEMA,
		    "sc_aggregate_check: %zu group%s of an aggregate declared "
		    "SC_AGG_NONNEGATIVE %s a negative total weight, or a zero "
		    "one with a non-zero sum: its input holds a row of "
		    "negative integrated weight",
		    agg->nbad, agg->nbad == 1 ? "" : "s",
		    agg->nbad == 1 ? "has" : "have");
	if (agg->nwide == 0)
		return 0;
	return sc__fail(SC_EOVERFLOW,
			"sc_aggregate_check: %zu group%s %s outside int64 "
			"(no output row)",
			agg->nwide, agg->nwide == 1 ? "'s" : "s'",
			agg->spec.kind == SC_AGG_COUNT ? "count is" : "sum is");
}

/* The trace (MIN/MAX) or the row table (COUNT/SUM/AVG) keeps rows in
 * trace column order (layout()). */
void
sc__aggregate_set_symbols(struct sc_aggregate *agg, const struct sc__symcols *s)
{
	struct sc__symcols t;

	sc__symcols_permute(s, agg->perm, NULL, agg->spec.ncols, &t);
	if (agg->minmax)
		sc__trace_set_symbols(agg->t, &t);
	else
		agg->sym = t; /* the row table's, kept in trace order too */
	agg->ksym = t;
	/* The key is the first k columns in either order (k < 32). */
	agg->ksym.mask &= (UINT32_C(1) << agg->spec.k) - 1;
}

/* --- cleanup (waterline.h) ------------------------------------------------ */

static void
agg_row_drop(void *ctx, const uint64_t *rec)
{
	const struct sc_aggregate *agg = ctx;

	sc__symtab_unhold_slots(&agg->sym, rec, 1, agg->rows.stride,
				agg->spec.ncols);
}

/*
 * Dead groups go from the group table, their rows from the row table, each
 * with its own cursor. A dead group out of int64's range (no output row)
 * stays counted in nwide: its output lacks that row for good, which is
 * what sc_aggregate_check reports.
 */
static void
groups_sweep(struct sc_aggregate *agg, const struct sc__horizon *h,
	     size_t budget)
{
	struct sc__groups *g = &agg->g;
	size_t i = agg->sweep_group;

	while (budget-- > 0 && g->n > 0) {
		if (i >= g->n)
			i = 0;
		if (sc__horizon_dead(h, sc__groups_key(g, i))) {
			if (agg->nonneg)
				key_syms(agg, sc__groups_key(g, i), false);
			sc__groups_remove(g, i); /* the last entry moves in */
		} else
			i++;
	}
	agg->sweep_group = i;
}

void
sc__aggregate_sweep(struct sc_aggregate *agg, const struct sc__horizon *h,
		    size_t budget)
{
	if (agg->minmax) {
		sc__trace_sweep(agg->t, h, budget);
		sc__fences_sync(&agg->fences, agg->t);
		return;
	}
	groups_sweep(agg, h, budget / 2 + 1);
	if (agg->nonneg)
		return; /* no row table */
	sc__rowhash_sweep(&agg->rows, h, &agg->sweep_row, budget / 2 + 1,
			  agg_row_drop, agg);
}

int
sc_aggregate_create_flags(const struct sc_aggregate_spec *spec, uint32_t flags,
			  struct sc_aggregate **out)
{
	return sc__errwrap(aggregate_create_flags_body(spec, flags, out),
			   "sc_aggregate_create_flags");
}
