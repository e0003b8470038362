/*
 * multiagg.c - several aggregates of one group (multiagg.h).
 *
 * A step has two phases, as aggregate.c's. Phase 1 may fail and changes
 * nothing a failure cannot undo: it reserves every room the step needs,
 * lays out each MIN/MAX term's delta as (key, v, the rest) and reads the
 * groups' new extremes through a probe of the trace and that delta,
 * applies the delta to the distinct table (undone, row by row, on a later
 * failure), folds each group's rows into a pending copy of its state and
 * writes the output. Phase 2 cannot fail: it stores the pending states,
 * drops the empty groups, moves the symbol holds of the distinct rows that
 * came and went, and inserts the MIN/MAX deltas into their traces.
 *
 * A MIN/MAX term's trace holds the input's whole rows, permuted to (key,
 * v, the rest): v is the term's column, and where that is a key column
 * the rows are (key, the rest) and v is read in the key. A permutation
 * makes no two rows one, so no step adds two rows' weights (which may
 * leave int64) before the trace holds them; a v is present while the
 * summed weight of its rows in the group, read exactly in 128 bits, is
 * positive.
 *
 * A group's state is nw words in segments that mirror the group table's
 * entries (groups_int.h: an entry's index names its words too; a removal
 * moves the last entry's words into the hole, as the table moves its key).
 */
#include "operators/multiagg.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "operators/batch_int.h"
#include "operators/error.h"
#include "operators/groups_int.h"
#include "operators/probe_int.h"
#include "operators/rowhash_int.h"
#include "operators/symbol.h"
#include "operators/symbol_int.h"
#include "operators/trace.h"
#include "operators/waterline_int.h"
#include "operators/words_int.h"

/* Words of a term's state: a 128-bit count, a 192-bit sum, a distinct
 * count, or a MIN/MAX value and whether there is one. */
static uint32_t
term_words(enum sc_magg_kind kind)
{
	switch (kind) {
	case SC_MAGG_COUNT:
		return 2;
	case SC_MAGG_SUM:
	case SC_MAGG_AVG:
		return 3;
	case SC_MAGG_COUNT_DISTINCT:
		return 1;
	default:
		return 2;
	}
}

/* One MIN/MAX term: its trace of whole rows as (key, v, the rest) and
 * the step's delta so. */
struct mm_term {
	uint32_t term;		  /* its index in the spec */
	uint32_t vcol;		  /* v's column in the trace */
	struct sc__layout lay;	  /* rows as (key, v, the rest) */
	struct sc_trace *t;	  /* the integral, so laid out */
	struct sc__fences fences; /* of the trace's long runs */
	struct sc_batch *proj;	  /* this step's delta so */
	uint64_t mass;		  /* sum of |w| inserted, saturating */
};

/* A touched group in phase 1. */
struct pending {
	size_t idx;	     /* its entry, or SC__GROUPS_NONE if new */
	const uint64_t *key; /* k words, in the delta */
	int dwide;	     /* change in the live groups out of range */
};

struct sc_multiagg {
	struct sc_multiagg_spec spec;
	uint32_t nw;			   /* state words a group */
	uint32_t off[SC_MAGG_MAX_TERMS];   /* each term's first word */
	uint32_t refs;			   /* the word counting the group's
					      distinct rows */
	uint32_t ndist;			   /* COUNT_DISTINCT terms */
	uint32_t dterm[SC_MAGG_MAX_TERMS]; /* their indices */
	uint32_t nmm;			   /* MIN/MAX terms */
	struct mm_term *mm;		   /* nmm of them */
	struct sc__groups g;		   /* key -> entry */
	uint64_t *ws[SC__GROUPS_SEGS];	   /* entry states, as g's segments */
	uint32_t nws;			   /* segments of ws allocated */
	struct sc__rowhash rows;	   /* (key, term, v) -> weight */
	size_t nwide;			   /* live groups with a value outside
					      int64 (no output row) */
	struct sc__symcols ksym;	   /* the key's symbol columns */
	uint32_t vsym;			   /* bit t: term t's value is an id */
	struct sc_batch_builder out;	   /* output scratch */
	/* phase-1 scratch */
	struct pending *pend;
	size_t npend, pend_cap;
	uint64_t *pw;	 /* npend * nw words: the pending states */
	size_t pw_cap;	 /* words pw holds */
	uint8_t *dcode;	 /* per (row, distinct term): what the row did */
	uint64_t *hv;	 /* per (row, distinct term): the row's hash */
	size_t dc_cap;	 /* entries dcode holds */
	size_t hv_cap;	 /* entries hv holds */
	uint64_t *mmv;	 /* per (group, MIN/MAX term): value, found */
	size_t mmv_cap;	 /* words mmv holds */
	size_t *rm;	 /* phase 2: entries to remove */
	size_t rm_cap;	 /* entries rm holds */
	size_t napplied; /* rows of this step applied to `rows` */
	size_t sweep_group, sweep_row; /* cleanup's cursors */
};

/* dcode: bits 0-1 the distinct count's change + 1, bits 2-3 the table's
 * (a row inserted +1, removed -1) + 1. */
#define DC_COUNT(c) ((int)((c)&3u) - 1)
#define DC_TABLE(c) ((int)(((c) >> 2) & 3u) - 1)

static void drop_row(void *ctx, const uint64_t *rec);

/* Probes a step starts ahead of the one it makes (dist_apply). */
#define PREFETCH ((size_t)8)

/* --- the spec -------------------------------------------------------------
 */

static bool
kind_known(enum sc_magg_kind k)
{
	return (int)k >= SC_MAGG_COUNT && (int)k <= SC_MAGG_MAX;
}

static int
term_check(const struct sc_multiagg_spec *s, uint32_t t, const char *who)
{
	const struct sc_magg_term *tm = &s->terms[t];

	if (!kind_known(tm->kind))
		return sc__fail(SC_EINVAL, "%s: term %u has unknown kind %d",
				who, t, (int)tm->kind);
	if (tm->filter != SC_MAGG_ALL && tm->filter >= s->ncols)
		return sc__fail(SC_ESCHEMA,
				"%s: term %u's filter column %u is not one of "
				"the %u columns",
				who, t, tm->filter, s->ncols);
	if (tm->filter != SC_MAGG_ALL && tm->kind != SC_MAGG_COUNT &&
	    tm->kind != SC_MAGG_COUNT_DISTINCT)
		return sc__fail(SC_EINVAL,
				"%s: term %u has a filter, which only COUNT "
				"and COUNT_DISTINCT take",
				who, t);
	if (tm->kind == SC_MAGG_COUNT)
		return 0;
	if (tm->col >= s->ncols)
		return sc__fail(SC_ESCHEMA,
				"%s: term %u's value column %u is not one of "
				"the %u columns",
				who, t, tm->col, s->ncols);
	if ((int)tm->col_type < 0 || (int)tm->col_type >= SC__TYPE_COUNT)
		return sc__fail(SC_ETYPE,
				"%s: term %u's col_type %d is no type", who, t,
				(int)tm->col_type);
	if ((tm->kind == SC_MAGG_SUM || tm->kind == SC_MAGG_AVG) &&
	    tm->col_type != SC_TYPE_I64 && tm->col_type != SC_TYPE_U64)
		return sc__fail(SC_ETYPE,
				"%s: term %u cannot sum or average a %s column "
				"(i64 and u64 only)",
				who, t, sc_type_name(tm->col_type));
	return 0;
}

int
sc_multiagg_spec_check(const struct sc_multiagg_spec *s, const char *who)
{
	int rc = 0;

	if (!who)
		who = "sc_multiagg_spec_check";
	if (!s)
		return sc__fail(SC_EINVAL, "%s: spec is NULL", who);
	if (s->ncols == 0 || s->ncols > SC_SCHEMA_MAX_COLS)
		return sc__fail(SC_ESCHEMA, "%s: ncols %u is not in 1..%u", who,
				s->ncols, SC_SCHEMA_MAX_COLS);
	if (s->k > s->ncols)
		return sc__fail(SC_ESCHEMA,
				"%s: key of %u columns is wider than the %u "
				"columns",
				who, s->k, s->ncols);
	if (s->nterms == 0 || s->nterms > SC_MAGG_MAX_TERMS)
		return sc__fail(SC_ESCHEMA, "%s: nterms %u is not in 1..%u",
				who, s->nterms, SC_MAGG_MAX_TERMS);
	if (s->k + s->nterms > SC_SCHEMA_MAX_COLS)
		return sc__fail(SC_ESCHEMA,
				"%s: %u key columns and %u terms make %u "
				"output columns, above %u",
				who, s->k, s->nterms, s->k + s->nterms,
				SC_SCHEMA_MAX_COLS);
	for (uint32_t t = 0; rc == 0 && t < s->nterms; t++)
		rc = term_check(s, t, who);
	return rc;
}

int
sc_multiagg_out_type(const struct sc_multiagg_spec *spec, uint32_t t,
		     enum sc_type *out)
{
	if (!spec || !out)
		return sc__fail(SC_EINVAL, "sc_multiagg_out_type: %s is NULL",
				!spec ? "spec" : "out");
	if (t >= spec->nterms || t >= SC_MAGG_MAX_TERMS)
		return sc__fail(SC_EINVAL,
				"sc_multiagg_out_type: term %u of %u", t,
				spec->nterms);
	switch (spec->terms[t].kind) {
	case SC_MAGG_AVG:
		*out = SC_TYPE_F64;
		return 0;
	case SC_MAGG_MIN:
	case SC_MAGG_MAX:
		*out = spec->terms[t].col_type;
		return 0;
	default:
		*out = SC_TYPE_I64;
		return 0;
	}
}

/* --- creation ------------------------------------------------------------
 */

void
sc_multiagg_destroy(struct sc_multiagg *m)
{
	if (!m)
		return;
	for (uint32_t j = 0; m->mm && j < m->nmm; j++) {
		sc_trace_destroy(m->mm[j].t);
		sc__fences_fini(&m->mm[j].fences);
		sc_batch_release(m->mm[j].proj);
	}
	free(m->mm);
	/* Every kept distinct row and group entry holds its ids. */
	if (m->rows.recs || m->rows.old)
		sc__rowhash_settle(&m->rows);
	if (m->rows.recs && m->rows.n) {
		size_t stride = m->rows.stride;

		for (size_t i = 0; i <= m->rows.mask; i++) {
			const uint64_t *rec = m->rows.recs + i * stride;

			if (rec[m->rows.ncols] != 0)
				drop_row(m, rec);
		}
	}
	sc__rowhash_fini(&m->rows);
	for (size_t i = 0; i < m->g.n; i++)
		for (uint32_t b = m->ksym.mask; sc__symcols_any(&m->ksym) && b;
		     b &= b - 1)
			(void)sc_symtab_release(
			    m->ksym.tab,
			    sc__groups_key(&m->g, i)[__builtin_ctz(b)]);
	sc__groups_fini(&m->g);
	for (uint32_t j = 0; j < m->nws; j++)
		free(m->ws[j]);
	sc_batch_builder_fini(&m->out);
	free(m->pend);
	free(m->pw);
	free(m->dcode);
	free(m->hv);
	free(m->mmv);
	free(m->rm);
	free(m);
}

/* Term t's trace layout: the key, then v unless it is a key column, then
 * the rest of the row in its order. */
static void
mm_layout(const struct sc_multiagg_spec *spec, uint32_t t, struct mm_term *mt)
{
	uint32_t k = spec->k, col = spec->terms[t].col;

	mt->term = t;
	mt->vcol = col < k ? col : k;
	sc__layout_init(&mt->lay, spec->ncols, k, col);
}

static int
multiagg_create_body(const struct sc_multiagg_spec *spec,
		     struct sc_multiagg **out)
{
	const char *fn = "sc_multiagg_create";
	struct sc_multiagg *m;
	uint32_t w = 2; /* the total weight, 128 bits */
	int rc;

	if (!spec || !out)
		return sc__fail(SC_EINVAL, "%s: %s is NULL", fn,
				!spec ? "spec" : "out");
	rc = sc_multiagg_spec_check(spec, fn);
	if (rc)
		return rc;
	m = calloc(1, sizeof(*m));
	if (!m)
		return sc__fail(SC_ENOMEM, "%s: no memory", fn);
	m->spec = *spec;
	for (uint32_t t = 0; t < spec->nterms; t++) {
		enum sc_magg_kind k = spec->terms[t].kind;

		m->off[t] = w;
		w += term_words(k);
		if (k == SC_MAGG_COUNT_DISTINCT)
			m->dterm[m->ndist++] = t;
		if (k == SC_MAGG_MIN || k == SC_MAGG_MAX)
			m->nmm++;
	}
	m->refs = w++;
	m->nw = w;
	sc__groups_init(&m->g, spec->k, false);
	sc__rowhash_init(&m->rows, spec->k + 2);
	rc = sc_batch_builder_init(&m->out, spec->k + spec->nterms);
	if (rc == 0 && m->nmm) {
		m->mm = calloc(m->nmm, sizeof(*m->mm));
		if (!m->mm)
			rc = sc__fail(SC_ENOMEM, "%s: no memory", fn);
	}
	for (uint32_t t = 0, j = 0; rc == 0 && t < spec->nterms; t++) {
		enum sc_magg_kind k = spec->terms[t].kind;

		if (k != SC_MAGG_MIN && k != SC_MAGG_MAX)
			continue;
		mm_layout(spec, t, &m->mm[j]);
		sc__fences_init(&m->mm[j].fences);
		rc = sc_trace_create(spec->ncols, &m->mm[j].t);
		j++;
	}
	if (rc) {
		sc_multiagg_destroy(m);
		return rc;
	}
	*out = m;
	return 0;
}

int
sc_multiagg_create(const struct sc_multiagg_spec *spec,
		   struct sc_multiagg **out)
{
	return sc__errwrap(multiagg_create_body(spec, out),
			   "sc_multiagg_create");
}

/* --- group states ---------------------------------------------------------
 */

/* Entry i's state words. */
static uint64_t *
state_of(const struct sc_multiagg *m, size_t i)
{
	size_t off;
	uint32_t j = sc__groups_seg(i, &off);

	return m->ws[j] + off * m->nw;
}

/* State segments for every entry the group table has room for. */
static int
states_reserve(struct sc_multiagg *m)
{
	while (m->nws < m->g.nseg) {
		size_t n = m->nws == 0 ? 16 : (size_t)16 << (m->nws - 1);

		m->ws[m->nws] = malloc(n * m->nw * sizeof(uint64_t));
		if (!m->ws[m->nws])
			return sc__fail(SC_ENOMEM,
					"sc_multiagg_step: no memory");
		m->nws++;
	}
	return 0;
}

/* Whether a state is all zero: its entry may go. */
static bool
state_empty(const uint64_t *st, uint32_t nw)
{
	for (uint32_t i = 0; i < nw; i++)
		if (st[i])
			return false;
	return true;
}

/*
 * The output row of a state into row[k..): 1 if the group has one, 0 if
 * not (not live, or a MIN/MAX with no value), -1 if it is live with a
 * COUNT or SUM outside int64 (withheld, and counted by the check).
 */
static int
state_row(const struct sc_multiagg *m, const uint64_t *st, uint64_t *row)
{
	const struct sc_multiagg_spec *s = &m->spec;
	int64_t x = 0;
	bool wide = false;

	if (sc__words_sign(st, 2) <= 0)
		return 0;
	for (uint32_t t = 0; t < s->nterms; t++) {
		const uint64_t *v = st + m->off[t];
		uint64_t *o = &row[s->k + t];

		switch (s->terms[t].kind) {
		case SC_MAGG_COUNT:
			if (!sc__words_i64(v, 2, &x))
				wide = true;
			*o = sc_enc_i64(x);
			break;
		case SC_MAGG_SUM:
			if (!sc__words_i64(v, 3, &x))
				wide = true;
			*o = sc_enc_i64(x);
			break;
		case SC_MAGG_AVG:
			*o = sc_enc_f64(sc__words_double(v, 3) /
					sc__words_double(st, 2));
			break;
		case SC_MAGG_COUNT_DISTINCT:
			*o = sc_enc_i64((int64_t)v[0]);
			break;
		default: /* MIN, MAX */
			if (!v[1])
				return 0;
			*o = v[0];
			break;
		}
	}
	return wide ? -1 : 1;
}

/* --- symbols --------------------------------------------------------------
 */

/* Take (hold) or drop a reference per symbol word of a key. */
static void
key_syms(const struct sc_multiagg *m, const uint64_t *key, bool hold)
{
	if (!sc__symcols_any(&m->ksym))
		return;
	for (uint32_t b = m->ksym.mask; b; b &= b - 1) {
		uint64_t id = key[__builtin_ctz(b)];

		if (hold)
			(void)sc_symtab_retain(m->ksym.tab, id);
		else
			(void)sc_symtab_release(m->ksym.tab, id);
	}
}

/* The same for a distinct row (key, term, v): its key's and, where the
 * term's value is an id, its value's. */
static void
drow_syms(const struct sc_multiagg *m, const uint64_t *rec, bool hold)
{
	uint32_t k = m->spec.k;
	uint64_t t = rec[k];

	key_syms(m, rec, hold);
	if (!m->ksym.tab || t >= 32 || !(m->vsym >> t & 1u))
		return;
	if (hold)
		(void)sc_symtab_retain(m->ksym.tab, rec[k + 1]);
	else
		(void)sc_symtab_release(m->ksym.tab, rec[k + 1]);
}

/* A distinct row leaving the table (cleanup, or destroy). */
static void
drop_row(void *ctx, const uint64_t *rec)
{
	drow_syms(ctx, rec, false);
}

void
sc__multiagg_set_symbols(struct sc_multiagg *m, const struct sc__symcols *s)
{
	const struct sc_multiagg_spec *sp = &m->spec;
	uint32_t kmask = sp->k >= 32 ? UINT32_MAX : (1u << sp->k) - 1u;

	m->ksym = *s;
	m->ksym.flip = 0;
	m->ksym.mask &= kmask;
	m->vsym = 0;
	for (uint32_t t = 0; s->tab && t < sp->nterms; t++)
		if (sp->terms[t].kind != SC_MAGG_COUNT &&
		    (s->mask >> sp->terms[t].col & 1u))
			m->vsym |= 1u << t;
	/* The traces hold their rows' symbols, in their column order. */
	for (uint32_t j = 0; j < m->nmm; j++) {
		struct sc__symcols ts;

		sc__symcols_permute(s, m->mm[j].lay.perm, NULL, sp->ncols, &ts);
		if (ts.tab)
			sc__trace_set_symbols(m->mm[j].t, &ts);
	}
	if (!m->ksym.mask && !m->vsym)
		m->ksym.tab = NULL;
}

/* --- phase 1 --------------------------------------------------------------
 */

static int
grow(void **p, size_t *cap, size_t need, size_t size)
{
	void *q;

	if (need <= *cap)
		return 0;
	if (need < 2 * *cap)
		need = 2 * *cap;
	q = realloc(*p, need * size);
	if (!q)
		return sc__fail(SC_ENOMEM, "sc_multiagg_step: no memory");
	*p = q;
	*cap = need;
	return 0;
}

/* The delta's groups: how many (k == 0: one). */
static size_t
count_groups(const struct sc_multiagg *m, const struct sc_batch *d)
{
	size_t n = 0;

	for (size_t i = 0; i < sc_batch_count(d);
	     i = sc__batch_key_end(d, i, m->spec.k))
		n++;
	return n;
}

static int
reserve_all(struct sc_multiagg *m, const struct sc_batch *d, size_t ng)
{
	size_t n = sc_batch_count(d);
	/* A group may be inserted forward and another removed: the removal
	 * needs no room, and every insert is one of the delta's groups. */
	int rc = sc__groups_reserve(&m->g, ng);

	if (rc == 0)
		rc = states_reserve(m);
	if (rc == 0 && m->ndist)
		rc = sc__rowhash_reserve(&m->rows, n * m->ndist);
	if (rc == 0)
		rc = sc_batch_builder_reserve(&m->out, 2 * ng);
	if (rc == 0)
		rc =
		    grow((void **)&m->pend, &m->pend_cap, ng, sizeof(*m->pend));
	if (rc == 0)
		rc = grow((void **)&m->pw, &m->pw_cap, ng * m->nw,
			  sizeof(*m->pw));
	if (rc == 0)
		rc = grow((void **)&m->rm, &m->rm_cap, ng, sizeof(*m->rm));
	if (rc == 0 && m->ndist)
		rc = grow((void **)&m->dcode, &m->dc_cap, n * m->ndist,
			  sizeof(*m->dcode));
	if (rc == 0 && m->ndist)
		rc = grow((void **)&m->hv, &m->hv_cap, n * m->ndist,
			  sizeof(*m->hv));
	if (rc == 0 && m->nmm)
		rc = grow((void **)&m->mmv, &m->mmv_cap, 2 * ng * m->nmm,
			  sizeof(*m->mmv));
	for (uint32_t j = 0; rc == 0 && j < m->nmm; j++) {
		rc = sc__trace_make_room(m->mm[j].t);
		sc__fences_sync(&m->mm[j].fences, m->mm[j].t);
	}
	return rc;
}

static void
mm_release(struct sc_multiagg *m)
{
	for (uint32_t j = 0; j < m->nmm; j++) {
		sc_batch_release(m->mm[j].proj);
		m->mm[j].proj = NULL;
	}
}

/*
 * The extreme v of positive summed weight among the rows of the key p was
 * seeked to, walking from the front (MIN) or the back (MAX): a v's rows
 * are adjacent, so the walk sums them as it goes, exactly: a row's weight
 * summed over at most SC_TRACE_MAX_RUNS + 1 runs is below 2^69 in
 * magnitude, so fewer than 2^58 rows cannot leave 128 bits. A v whose rows
 * sum to 0 or less (a retraction ahead of its insertion) is passed over.
 * 1 and *v, or 0 when no v is present.
 */
static int
mm_extreme(struct sc__probe *p, uint32_t vcol, bool max, uint64_t *v)
{
	const uint64_t *r;
	__int128 w, sum = 0;
	bool have = false;
	int more;

	do {
		more = max ? sc__probe_prev_wide(p, &r, &w)
			   : sc__probe_next_wide(p, &r, &w);
		if (have && (more != 1 || r[vcol] != *v)) {
			/* v's rows are all summed */
			if (sum > 0)
				return 1;
			have = false;
		}
		if (more != 1)
			return 0;
		if (!have) {
			*v = r[vcol];
			sum = 0;
			have = true;
		}
		sum += w;
	} while (1);
}

/* Each MIN/MAX term's delta as (key, v, the rest), and every group's
 * extreme after the step into mmv[2 * (g * nmm + j)..] (value, found). */
static int
mm_compute(struct sc_multiagg *m, const struct sc_batch *d)
{
	uint32_t k = m->spec.k;
	size_t n = sc_batch_count(d);
	int rc = 0;

	for (uint32_t j = 0; rc == 0 && j < m->nmm; j++) {
		struct mm_term *mt = &m->mm[j];
		bool max = m->spec.terms[mt->term].kind == SC_MAGG_MAX;
		struct sc__probe p;
		size_t g = 0;

		rc = sc__layout_apply(&mt->lay, d, &mt->proj);
		if (rc)
			break;
		sc__probe_init(&p, m->spec.ncols, mt->t, mt->proj);
		sc__probe_prepare(&p, d, k, &mt->fences);
		for (size_t i = 0; i < n; i = sc__batch_key_end(d, i, k), g++) {
			uint64_t *o = &m->mmv[2 * (g * m->nmm + j)];

			sc__probe_seek(&p, sc_batch_row(d, i), k);
			o[1] = (uint64_t)mm_extreme(&p, mt->vcol, max, &o[0]);
			if (!o[1])
				o[0] = 0;
		}
		sc__probe_fini(&p);
	}
	if (rc)
		mm_release(m);
	return rc;
}

/* Whether row x passes term t's filter. */
static inline bool
passes(const struct sc_magg_term *tm, const uint64_t *x)
{
	return tm->filter == SC_MAGG_ALL || x[tm->filter] != 0;
}

/* Apply (sign 1) or undo (sign -1) the first `upto` rows of d to the
 * distinct table; forward, note in dcode what each row did. Only a
 * forward add can fail (a weight leaving int64 widens the table). */
static int
dist_apply(struct sc_multiagg *m, const struct sc_batch *d, size_t upto,
	   int sign)
{
	uint32_t k = m->spec.k, nd = m->ndist;
	uint64_t row[SC_SCHEMA_MAX_COLS + 2];

	/* Forward, every (row, term)'s hash first, so that the probes can
	 * load their slots a few ahead: at millions of distinct rows each
	 * probe is a cache miss, and those overlap instead. */
	for (size_t i = 0; sign > 0 && i < upto; i++) {
		const uint64_t *x = sc_batch_row(d, i);

		memcpy(row, x, k * sizeof(uint64_t));
		for (uint32_t q = 0; q < nd; q++) {
			const struct sc_magg_term *tm =
			    &m->spec.terms[m->dterm[q]];

			row[k] = m->dterm[q];
			row[k + 1] = x[tm->col];
			m->hv[i * nd + q] = sc_row_hash(row, k + 2);
		}
	}
	for (size_t e = 0; sign > 0 && e < PREFETCH && e < upto * nd; e++)
		sc__rowhash_prefetch(&m->rows, m->hv[e]);
	for (size_t i = 0; i < upto; i++) {
		const uint64_t *x = sc_batch_row(d, i);
		int64_t w = sc_batch_weight(d, i), was, now;

		memcpy(row, x, k * sizeof(uint64_t));
		for (uint32_t q = 0; q < nd; q++) {
			const struct sc_magg_term *tm =
			    &m->spec.terms[m->dterm[q]];
			size_t e = i * nd + q;
			uint8_t *c = &m->dcode[e];
			int rc;

			if (sign > 0) {
				*c = 1u | 1u << 2;
				if (e + PREFETCH < upto * nd)
					sc__rowhash_prefetch(
					    &m->rows, m->hv[e + PREFETCH]);
			}
			if (!passes(tm, x))
				continue;
			row[k] = m->dterm[q];
			row[k + 1] = x[tm->col];
			if (sign < 0) {
				/* Weights go back to what they were: no
				 * widening, no insert beyond the room. */
				(void)sc__rowhash_add(
				    &m->rows, row, sc_row_hash(row, k + 2),
				    w == INT64_MIN ? INT64_MAX : -w, &was,
				    &now);
				if (w == INT64_MIN)
					(void)sc__rowhash_add(
					    &m->rows, row,
					    sc_row_hash(row, k + 2), 1, &was,
					    &now);
				continue;
			}
			rc = sc__rowhash_add(&m->rows, row, m->hv[e], w, &was,
					     &now);
			if (rc) {
				m->napplied = i;
				/* the terms before q of row i are applied */
				for (uint32_t r = 0; r < q; r++)
					m->dcode[i * m->ndist + r] |= 0x80u;
				return rc;
			}
			*c = (uint8_t)(((was > 0) == (now > 0) ? 1
					: now > 0	       ? 2
							       : 0) |
				       ((was == 0   ? 2
					 : now == 0 ? 0
						    : 1)
					<< 2));
		}
	}
	return 0;
}

/* Undo a forward apply that failed at row m->napplied. */
static void
dist_undo_partial(struct sc_multiagg *m, const struct sc_batch *d)
{
	uint32_t k = m->spec.k;
	size_t i = m->napplied;
	const uint64_t *x = sc_batch_row(d, i);
	int64_t w = sc_batch_weight(d, i), was, now;
	uint64_t row[SC_SCHEMA_MAX_COLS + 2];

	dist_apply(m, d, i, -1);
	memcpy(row, x, k * sizeof(uint64_t));
	for (uint32_t q = 0; q < m->ndist; q++) {
		const struct sc_magg_term *tm = &m->spec.terms[m->dterm[q]];

		if (!(m->dcode[i * m->ndist + q] & 0x80u) || !passes(tm, x))
			continue;
		row[k] = m->dterm[q];
		row[k + 1] = x[tm->col];
		(void)sc__rowhash_add(&m->rows, row, sc_row_hash(row, k + 2),
				      w == INT64_MIN ? INT64_MAX : -w, &was,
				      &now);
		if (w == INT64_MIN)
			(void)sc__rowhash_add(&m->rows, row,
					      sc_row_hash(row, k + 2), 1, &was,
					      &now);
	}
}

/* Fold the rows [i, e) of group g into the pending state st (a copy of
 * the entry's, or zeros). */
static void
group_fold(const struct sc_multiagg *m, const struct sc_batch *d, size_t i,
	   size_t e, size_t g, uint64_t *st)
{
	const struct sc_multiagg_spec *s = &m->spec;

	for (; i < e; i++) {
		const uint64_t *x = sc_batch_row(d, i);
		int64_t w = sc_batch_weight(d, i);

		sc__words_add(st, 2, w);
		for (uint32_t t = 0; t < s->nterms; t++) {
			const struct sc_magg_term *tm = &s->terms[t];
			uint64_t *v = st + m->off[t];

			switch (tm->kind) {
			case SC_MAGG_COUNT:
				if (passes(tm, x))
					sc__words_add(v, 2, w);
				break;
			case SC_MAGG_SUM:
			case SC_MAGG_AVG:
				sc__words_add(v, 3,
					      sc__words_product(tm->col_type,
								x[tm->col], w));
				break;
			default:
				break;
			}
		}
		for (uint32_t q = 0; q < m->ndist; q++) {
			uint8_t c = m->dcode[i * m->ndist + q];

			st[m->off[m->dterm[q]]] +=
			    (uint64_t)(int64_t)DC_COUNT(c);
			st[m->refs] += (uint64_t)(int64_t)DC_TABLE(c);
		}
	}
	for (uint32_t j = 0; j < m->nmm; j++) {
		const uint64_t *o = &m->mmv[2 * (g * m->nmm + j)];
		uint64_t *v = st + m->off[m->mm[j].term];

		v[0] = o[0];
		v[1] = o[1];
	}
}

static int
push_row(struct sc_multiagg *m, const uint64_t *key, uint64_t *row, int64_t w)
{
	memcpy(row, key, m->spec.k * sizeof(uint64_t));
	return sc_batch_builder_push(&m->out, row, m->spec.k + m->spec.nterms,
				     w);
}

/* Every group of d: its pending state, and its output change. */
static int
groups_compute(struct sc_multiagg *m, const struct sc_batch *d)
{
	uint32_t k = m->spec.k, nw = m->nw;
	size_t n = sc_batch_count(d), g = 0;
	uint64_t orow[SC_SCHEMA_MAX_COLS], nrow[SC_SCHEMA_MAX_COLS];
	int rc = 0;

	m->npend = 0;
	for (size_t i = 0, e; rc == 0 && i < n; i = e, g++) {
		const uint64_t *key = sc_batch_row(d, i);
		struct pending *pd = &m->pend[m->npend];
		uint64_t *st = m->pw + m->npend * nw;
		int was, is;

		e = sc__batch_key_end(d, i, k);
		pd->key = key;
		pd->idx = sc__groups_find(&m->g, key);
		if (pd->idx == SC__GROUPS_NONE) {
			memset(st, 0, nw * sizeof(uint64_t));
			was = 0;
		} else {
			memcpy(st, state_of(m, pd->idx), nw * sizeof(uint64_t));
			was = state_row(m, st, orow);
		}
		group_fold(m, d, i, e, g, st);
		is = state_row(m, st, nrow);
		pd->dwide = (is < 0) - (was < 0);
		m->npend++;
		if (was > 0 && is > 0 &&
		    memcmp(orow + k, nrow + k,
			   m->spec.nterms * sizeof(uint64_t)) == 0)
			continue;
		if (was > 0)
			rc = push_row(m, key, orow, -1);
		if (rc == 0 && is > 0)
			rc = push_row(m, key, nrow, 1);
	}
	return rc;
}

/* --- phase 2 --------------------------------------------------------------
 */

static int
idx_descending(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return (x < y) - (x > y);
}

static void
groups_apply(struct sc_multiagg *m)
{
	static const struct sc__gstate zero;
	size_t nrm = 0;

	for (size_t p = 0; p < m->npend; p++) {
		struct pending *pd = &m->pend[p];
		const uint64_t *st = m->pw + p * m->nw;
		bool empty = state_empty(st, m->nw);

		m->nwide = (size_t)((ptrdiff_t)m->nwide + pd->dwide);
		if (pd->idx == SC__GROUPS_NONE) {
			if (empty)
				continue;
			pd->idx =
			    sc__groups_insert(&m->g, pd->key, &zero, NULL);
			key_syms(m, pd->key, true);
		} else if (empty) {
			m->rm[nrm++] = pd->idx;
		}
		memcpy(state_of(m, pd->idx), st, m->nw * sizeof(uint64_t));
	}
	qsort(m->rm, nrm, sizeof(*m->rm), idx_descending);
	for (size_t r = 0; r < nrm; r++) {
		size_t i = m->rm[r], last = m->g.n - 1;

		key_syms(m, sc__groups_key(&m->g, i), false);
		if (i != last)
			memcpy(state_of(m, i), state_of(m, last),
			       m->nw * sizeof(uint64_t));
		sc__groups_remove(&m->g, i);
	}
}

/* The distinct rows that came hold their ids, those that went drop them
 * (the delta holds them meanwhile). */
static void
dist_syms(struct sc_multiagg *m, const struct sc_batch *d)
{
	uint32_t k = m->spec.k;
	uint64_t row[SC_SCHEMA_MAX_COLS + 2];

	if (!m->ksym.tab)
		return;
	for (size_t i = 0; i < sc_batch_count(d); i++) {
		const uint64_t *x = sc_batch_row(d, i);

		memcpy(row, x, k * sizeof(uint64_t));
		for (uint32_t q = 0; q < m->ndist; q++) {
			int tc = DC_TABLE(m->dcode[i * m->ndist + q]);
			const struct sc_magg_term *tm =
			    &m->spec.terms[m->dterm[q]];

			if (tc == 0)
				continue;
			row[k] = m->dterm[q];
			row[k + 1] = x[tm->col];
			drow_syms(m, row, tc > 0);
		}
	}
}

/* --- the step -------------------------------------------------------------
 */

static int
multiagg_step_body(struct sc_multiagg *m, const struct sc_batch *delta,
		   struct sc_batch **out)
{
	size_t ng;
	struct sc_batch *res = NULL;
	int rc;

	if (!m || !out)
		return sc__fail(SC_EINVAL, "sc_multiagg_step: %s is NULL",
				!m ? "multiagg" : "out");
	rc = sc__check_delta("sc_multiagg_step", "delta", delta, m->spec.ncols);
	if (rc)
		return rc;
	if (!delta || sc_batch_count(delta) == 0)
		return sc_batch_empty(m->spec.k + m->spec.nterms, out);
	ng = count_groups(m, delta);
	rc = reserve_all(m, delta, ng);
	if (rc == 0)
		rc = mm_compute(m, delta);
	if (rc)
		return rc;
	if (m->ndist) {
		rc = dist_apply(m, delta, sc_batch_count(delta), 1);
		if (rc) {
			dist_undo_partial(m, delta);
			mm_release(m);
			return rc;
		}
	}
	sc_batch_builder_clear(&m->out);
	rc = groups_compute(m, delta);
	if (rc == 0)
		rc = sc_batch_builder_finish(&m->out, &res);
	if (rc) {
		if (m->ndist)
			dist_apply(m, delta, sc_batch_count(delta), -1);
		sc_batch_builder_clear(&m->out);
		mm_release(m);
		return rc;
	}
	/* Phase 2: cannot fail. */
	groups_apply(m);
	if (m->ndist)
		dist_syms(m, delta);
	for (uint32_t j = 0; j < m->nmm; j++) {
		struct mm_term *mt = &m->mm[j];

		(void)sc_trace_insert(mt->t, mt->proj);
		mt->mass = sc__mass_add(mt->mass, sc__batch_mass(mt->proj));
	}
	mm_release(m);
	*out = res;
	return 0;
}

int
sc_multiagg_step(struct sc_multiagg *m, const struct sc_batch *delta,
		 struct sc_batch **out)
{
	return sc__errwrap(multiagg_step_body(m, delta, out),
			   "sc_multiagg_step");
}

/* A budget split n ways, at least 1 each (SIZE_MAX stays unbounded). */
static size_t
share(size_t budget, uint32_t n)
{
	size_t b = budget / n;

	return b < SIZE_MAX ? b + 1 : b;
}

int
sc_multiagg_work(struct sc_multiagg *m, size_t budget)
{
	int rc = 0;

	if (!m)
		return sc__fail(SC_EINVAL,
				"sc_multiagg_work: multiagg is NULL");
	for (uint32_t j = 0; rc == 0 && j < m->nmm; j++) {
		rc = sc_trace_work(m->mm[j].t, share(budget, m->nmm), NULL);
		sc__fences_sync(&m->mm[j].fences, m->mm[j].t);
	}
	return rc;
}

size_t
sc_multiagg_pending(const struct sc_multiagg *m)
{
	size_t n = 0;

	for (uint32_t j = 0; m && j < m->nmm; j++)
		n += sc_trace_pending(m->mm[j].t);
	return n;
}

size_t
sc_multiagg_groups(const struct sc_multiagg *m)
{
	return m ? m->g.n : 0;
}

size_t
sc_multiagg_rows(const struct sc_multiagg *m)
{
	size_t n;

	if (!m)
		return 0;
	n = m->g.n + m->rows.n;
	for (uint32_t j = 0; j < m->nmm; j++)
		n += sc_trace_rows(m->mm[j].t);
	return n;
}

size_t
sc_multiagg_bytes(const struct sc_multiagg *m)
{
	size_t n;

	if (!m)
		return 0;
	n = sc__groups_bytes(&m->g) + sc__rowhash_bytes(&m->rows);
	for (uint32_t j = 0; j < m->nws; j++)
		n += (j == 0 ? 16 : (size_t)16 << (j - 1)) * m->nw *
		     sizeof(uint64_t);
	for (uint32_t j = 0; j < m->nmm; j++)
		n += sc_trace_bytes(m->mm[j].t) +
		     sc__fences_bytes(&m->mm[j].fences);
	return n;
}

int
sc_multiagg_check(const struct sc_multiagg *m)
{
	if (!m)
		return sc__fail(SC_EINVAL,
				"sc_multiagg_check: multiagg is NULL");
	if (m->nwide == 0)
		return 0;
	return sc__fail(SC_EOVERFLOW,
			"sc_multiagg_check: %zu live group%s a COUNT or SUM "
			"outside int64 (no output row)",
			m->nwide, m->nwide == 1 ? " has" : "s have");
}

/* --- cleanup (waterline.h) ------------------------------------------------
 */

void
sc__multiagg_sweep(struct sc_multiagg *m, const struct sc__horizon *h,
		   size_t budget)
{
	struct sc__groups *g = &m->g;
	size_t i = m->sweep_group, b = share(budget, 2);

	while (b-- > 0 && g->n > 0) {
		if (i >= g->n)
			i = 0;
		if (sc__horizon_dead(h, sc__groups_key(g, i))) {
			size_t last = g->n - 1;

			/* A swept group out of range stays counted in
			 * nwide: its output lacks that row for good. */
			key_syms(m, sc__groups_key(g, i), false);
			if (i != last)
				memcpy(state_of(m, i), state_of(m, last),
				       m->nw * sizeof(uint64_t));
			sc__groups_remove(g, i);
		} else {
			i++;
		}
	}
	m->sweep_group = i;
	if (m->ndist)
		sc__rowhash_sweep(&m->rows, h, &m->sweep_row, share(budget, 2),
				  drop_row, m);
	for (uint32_t j = 0; j < m->nmm; j++) {
		sc__trace_sweep(m->mm[j].t, h, share(budget, m->nmm));
		sc__fences_sync(&m->mm[j].fences, m->mm[j].t);
	}
}
