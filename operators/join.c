/*
 * join.c - the incremental join and antijoin (see join.h for the design).
 */
#include "operators/join.h"

#include <stdlib.h>

#include "operators/batch_int.h"
#include "operators/probe_int.h"
#include "operators/symbol_int.h"
#include "operators/trace.h"
#include "operators/waterline_int.h"

struct wlist;

/* The state both operators share: the two integrals. */
struct sides {
	uint32_t a_ncols;    /* width of a's rows */
	uint32_t b_ncols;    /* width of b's rows */
	uint32_t k;	     /* key columns, a prefix of both */
	struct sc_trace *ta; /* integral of a */
	struct sc_trace *tb; /* integral of b */
	uint64_t mass_a;     /* sum of |w| ever inserted into ta (saturating) */
	uint64_t mass_b;     /* the same for tb */
	struct sc_batch_builder out; /* output scratch, kept for its buffer */
	struct sc__fences fa;	     /* fences of ta's long runs */
	struct sc__fences fb;	     /* fences of tb's long runs */
	bool within;		     /* a time-bounded join: only pairs with
					a[lo] <= b[t] <= a[hi] */
	uint32_t lo, hi, t;	     /* those columns (encoded words of one
					order-preserving type) */
	struct wlist *wide;	     /* the wide step's scratch, or NULL
					until a step first needs it */
	struct sc__wide *spill;	     /* a change's part past int64 goes
					here, or NULL (sc__join_set_spill) */
	struct sc__wide *emit;	     /* the antijoin's wide redo: output
					rows go here, or NULL: the builder */
	size_t split; /* out's rows before it, and from it on, are each in
			 key order (a join's two passes); SIZE_MAX: no order
			 known */
};

struct sc_join {
	struct sides s;	    /* the integrals */
	uint32_t out_ncols; /* a_ncols + b_ncols - k */
};

struct sc_antijoin {
	struct sides s; /* the integrals; output is a_ncols wide */
};

/* --- shared state ----------------------------------------------------------
 */

static int
sides_init(struct sides *s, const char *fn, uint32_t a_ncols, uint32_t b_ncols,
	   uint32_t k, uint32_t out_ncols)
{
	int rc;

	s->split = SIZE_MAX;
	if (a_ncols == 0 || a_ncols > SC_SCHEMA_MAX_COLS || b_ncols == 0 ||
	    b_ncols > SC_SCHEMA_MAX_COLS)
		return sc__fail(SC_ESCHEMA,
				"%s: inputs of %u and %u columns, "
				"want 1..%d",
				fn, a_ncols, b_ncols, SC_SCHEMA_MAX_COLS);
	if (k > a_ncols || k > b_ncols)
		return sc__fail(SC_ESCHEMA,
				"%s: key of %u columns, inputs "
				"have %u and %u",
				fn, k, a_ncols, b_ncols);
	if (out_ncols == 0 || out_ncols > SC_SCHEMA_MAX_COLS)
		return sc__fail(SC_ESCHEMA,
				"%s: output rows of %u columns, "
				"want 1..%d",
				fn, out_ncols, SC_SCHEMA_MAX_COLS);
	s->a_ncols = a_ncols;
	s->b_ncols = b_ncols;
	s->k = k;
	s->mass_a = s->mass_b = 0;
	s->within = false;
	s->wide = NULL;
	s->spill = NULL;
	s->emit = NULL;
	s->ta = s->tb = NULL;
	sc__fences_init(&s->fa);
	sc__fences_init(&s->fb);
	rc = sc_trace_create(a_ncols, &s->ta);
	if (rc == 0)
		rc = sc_trace_create(b_ncols, &s->tb);
	if (rc == 0)
		rc = sc_batch_builder_init(&s->out, out_ncols);
	if (rc) {
		sc_trace_destroy(s->ta);
		sc_trace_destroy(s->tb);
	}
	return rc;
}

static void wide_free(struct wlist *w);

static void
sides_fini(struct sides *s)
{
	wide_free(s->wide);
	sc_trace_destroy(s->ta);
	sc_trace_destroy(s->tb);
	sc_batch_builder_fini(&s->out);
	sc__fences_fini(&s->fa);
	sc__fences_fini(&s->fb);
}

static int
sides_work(struct sides *s, size_t budget)
{
	size_t done = 0;
	int rc = sc_trace_work(s->ta, budget, &done);

	if (rc == 0 && done < budget)
		rc = sc_trace_work(s->tb, budget - done, NULL);
	sc__fences_sync(&s->fa, s->ta);
	sc__fences_sync(&s->fb, s->tb);
	return rc;
}

static size_t
sides_pending(const struct sides *s)
{
	return sc_trace_pending(s->ta) + sc_trace_pending(s->tb);
}

/*
 * Everything a step does before it computes: arguments, widths and room
 * in both spines. An integral may pass int64 (trace.h), so none is
 * checked.
 */
static int
sides_validate(struct sides *s, const char *fn, const struct sc_batch *da,
	       const struct sc_batch *db, struct sc_batch **out)
{
	int rc;

	if (!out)
		return sc__fail(SC_EINVAL, "%s: out is NULL", fn);
	rc = sc__check_delta(fn, "delta a", da, s->a_ncols);
	if (rc == 0)
		rc = sc__check_delta(fn, "delta b", db, s->b_ncols);
	if (rc == 0)
		rc = sc__trace_make_room(s->ta);
	if (rc == 0)
		rc = sc__trace_make_room(s->tb);
	sc__fences_sync(&s->fa, s->ta);
	sc__fences_sync(&s->fb, s->tb);
	return rc;
}

/*
 * Finish the output and let the traces absorb the deltas. The inserts
 * cannot fail: the spines have room (sides_validate) and the widths match.
 */
static int
sides_commit(struct sides *s, const struct sc_batch *da,
	     const struct sc_batch *db, uint64_t mass_a, uint64_t mass_b,
	     struct sc_batch **out)
{
	struct sc_batch *res;
	/* The join's two passes each push in key order (join_delta): only
	 * the runs of a key need sorting, then the two merge. */
	int rc = sc__batch_builder_finish_parts(&s->out, s->k, s->split, &res);

	if (rc) {
		sc_batch_builder_clear(&s->out);
		return rc;
	}
	/* A trace keeps a reference; the batch itself is never written. */
	if (da && sc_batch_count(da))
		(void)sc_trace_insert(s->ta, (struct sc_batch *)da);
	if (db && sc_batch_count(db))
		(void)sc_trace_insert(s->tb, (struct sc_batch *)db);
	s->mass_a = mass_a;
	s->mass_b = mass_b;
	*out = res;
	return 0;
}

/* The masses after this step's deltas (sums of |w| ever inserted). */
static void
sides_masses(const struct sides *s, const struct sc_batch *da,
	     const struct sc_batch *db, uint64_t *ma, uint64_t *mb)
{
	*ma = da ? sc__mass_add(s->mass_a, sc__batch_mass(da)) : s->mass_a;
	*mb = db ? sc__mass_add(s->mass_b, sc__batch_mass(db)) : s->mass_b;
}

/* --- join ---------------------------------------------------------------- */

/* A time-bounded join's pair condition (sc_graph_join_within). */
static inline bool
in_bounds(const struct sides *s, const uint64_t *a, const uint64_t *b)
{
	return a[s->lo] <= b[s->t] && b[s->t] <= a[s->hi];
}

/* Push (key, a's rest, b's rest) with weight wa * wb. */
static int
push_pair(struct sides *s, const uint64_t *a, int64_t wa, const uint64_t *b,
	  int64_t wb)
{
	uint64_t row[SC_SCHEMA_MAX_COLS];
	uint32_t n = s->a_ncols;
	int64_t w;

	if (s->within && !in_bounds(s, a, b))
		return 0;
	if (__builtin_mul_overflow(wa, wb, &w))
		return sc__fail(SC_EOVERFLOW,
				"sc_join_step: weights %lld * %lld leave int64",
				(long long)wa, (long long)wb);
	for (uint32_t i = 0; i < n; i++)
		row[i] = a[i];
	for (uint32_t i = s->k; i < s->b_ncols; i++)
		row[n++] = b[i];
	return sc_batch_builder_push(&s->out, row, n, w);
}

/*
 * delta join trace: for each key of `delta` (one side's rows), the matching
 * rows of probe `p` (the other side's integral), pushed as pairs in
 * (a, b) order; `delta_is_a` says which side the delta is.
 */
static int
join_delta(struct sides *s, const struct sc_batch *delta, struct sc__probe *p,
	   bool delta_is_a)
{
	const uint64_t *other;
	int64_t wo;
	int rc = 0;

	for (size_t i = 0, e; i < sc_batch_count(delta); i = e) {
		e = sc__batch_key_end(delta, i, s->k);
		sc__probe_seek(p, sc_batch_row(delta, i), s->k);
		while ((rc = sc__probe_next(p, &other, &wo)) == 1) {
			for (size_t r = i; r < e && rc >= 0; r++) {
				const uint64_t *d = sc_batch_row(delta, r);
				int64_t wd = sc_batch_weight(delta, r);

				rc = delta_is_a
					 ? push_pair(s, d, wd, other, wo)
					 : push_pair(s, other, wo, d, wd);
			}
			if (rc < 0)
				return rc;
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* --- the wide step -----------------------------------------------------------
 *
 * Past the mass bound (join.h) a product, a partial integral or an output
 * row's integral may leave int64, and which of them does is up to how a
 * schedule grouped deltas into steps. The wide step computes, for every
 * output row the step touches (one pair (a, b): an output row names its a
 * row and its b row), its integral before, Ia * Ib, and after, (Ia + da) *
 * (Ib + db), in 128 bits (saturating, which clamping cannot tell from
 * exact), and emits clamp(after) - clamp(before), so the output's integral
 * is always the join of the inputs' integrals with each row's weight
 * clamped into int64: exact whenever it fits, as settled values do. Cold
 * and out of line: the narrow step never reaches it.
 */

#define WIDE_MAX ((__int128)(((unsigned __int128)1 << 127) - 1))
#define WIDE_MIN (-WIDE_MAX - 1)

/* One row of a side for one key: its integral before the step, its delta. */
struct wrow {
	const uint64_t *row; /* borrowed from a run or the delta */
	__int128 old;	     /* integral before the step (exact) */
	int64_t d;	     /* this step's delta (0: none) */
};

struct wside {
	struct wrow *r;
	size_t n, cap;
};

struct wlist {
	struct wside a, b; /* the key's rows of each side */
	size_t *db_at;	   /* indices into b.r of rows with a delta */
	size_t db_cap;
};

static void
wide_free(struct wlist *w)
{
	if (!w)
		return;
	free(w->a.r);
	free(w->b.r);
	free(w->db_at);
	free(w);
}

static __int128
mul_sat(__int128 x, __int128 y)
{
	__int128 r;

	if (!__builtin_mul_overflow(x, y, &r))
		return r;
	return (x < 0) != (y < 0) ? WIDE_MIN : WIDE_MAX;
}

static int64_t
clamp64(__int128 x)
{
	return x > INT64_MAX   ? INT64_MAX
	       : x < INT64_MIN ? INT64_MIN
			       : (int64_t)x;
}

static int
wside_push(struct wside *ws, const uint64_t *row, __int128 old, int64_t d)
{
	if (ws->n == ws->cap) {
		size_t cap = ws->cap ? 2 * ws->cap : 16;
		struct wrow *r = realloc(ws->r, cap * sizeof(*r));

		if (!r)
			return sc__fail(SC_ENOMEM,
					"sc_join_step: out of memory");
		ws->r = r;
		ws->cap = cap;
	}
	ws->r[ws->n++] = (struct wrow){row, old, d};
	return 0;
}

/*
 * The rows of one key on one side: the integral's (probe p, seeked) merged
 * with the delta's rows [lo, hi), in row order.
 */
static int
wside_collect(struct wside *ws, struct sc__probe *p, uint32_t ncols,
	      const struct sc_batch *delta, size_t lo, size_t hi)
{
	const uint64_t *row = NULL;
	__int128 w = 0;
	int more = sc__probe_next_wide(p, &row, &w), rc = 0;

	ws->n = 0;
	while (rc == 0 && (more == 1 || lo < hi)) {
		int c = more != 1 ? 1
			: lo == hi
			    ? -1
			    : sc_row_cmp(row, sc_batch_row(delta, lo), ncols);

		if (c < 0) {
			rc = wside_push(ws, row, w, 0);
		} else if (c > 0) {
			rc = wside_push(ws, sc_batch_row(delta, lo), 0,
					sc_batch_weight(delta, lo));
			lo++;
		} else {
			rc = wside_push(ws, row, w, sc_batch_weight(delta, lo));
			lo++;
		}
		if (c <= 0)
			more = sc__probe_next_wide(p, &row, &w);
	}
	return rc;
}

/* Push pair (a, b)'s change of its clamped integral. */
static int
wide_pair(struct sides *s, const struct wrow *a, const struct wrow *b)
{
	uint64_t row[SC_SCHEMA_MAX_COLS];
	uint32_t n = s->a_ncols;
	__int128 before, after, d;

	if (s->within && !in_bounds(s, a->row, b->row))
		return 0;
	before = mul_sat(a->old, b->old);
	after = mul_sat(a->old + a->d, b->old + b->d);
	d = (__int128)clamp64(after) - clamp64(before);
	if (d == 0)
		return 0;
	for (uint32_t i = 0; i < n; i++)
		row[i] = a->row[i];
	for (uint32_t i = s->k; i < s->b_ncols; i++)
		row[n++] = b->row[i];
	if ((d > INT64_MAX || d < INT64_MIN) && s->spill) {
		int rc = sc__wide_add(s->spill, row, d - clamp64(d));

		return rc ? rc
			  : sc_batch_builder_push(&s->out, row, n, clamp64(d));
	}
	if (d > INT64_MAX || d < INT64_MIN)
		return sc__fail(SC_EOVERFLOW,
				"sc_join_step: an output row's weight moves "
				"from %lld to %lld in one step, a change "
				"beyond int64",
				(long long)clamp64(before),
				(long long)clamp64(after));
	return sc_batch_builder_push(&s->out, row, n, (int64_t)d);
}

/* Every touched pair of one key: a with a delta meets every b, a without
 * one only the b rows with a delta. */
static int
wide_key(struct sides *s)
{
	struct wlist *w = s->wide;
	size_t nd = 0;
	int rc = 0;

	if (w->b.n > w->db_cap) {
		size_t *at = realloc(w->db_at, w->b.n * sizeof(*at));

		if (!at)
			return sc__fail(SC_ENOMEM,
					"sc_join_step: out of memory");
		w->db_at = at;
		w->db_cap = w->b.n;
	}
	for (size_t j = 0; j < w->b.n; j++)
		if (w->b.r[j].d)
			w->db_at[nd++] = j;
	for (size_t i = 0; rc == 0 && i < w->a.n; i++) {
		const struct wrow *a = &w->a.r[i];

		if (a->d)
			for (size_t j = 0; rc == 0 && j < w->b.n; j++)
				rc = wide_pair(s, a, &w->b.r[j]);
		else
			for (size_t j = 0; rc == 0 && j < nd; j++)
				rc = wide_pair(s, a, &w->b.r[w->db_at[j]]);
	}
	return rc;
}

/* The rows [*at, end) of delta d (NULL: none) with key `key`, from *at. */
static void
key_rows(const struct sc_batch *d, const uint64_t *key, uint32_t k, size_t *at,
	 size_t *end)
{
	size_t n = d ? sc_batch_count(d) : 0;

	if (*at < n && sc_row_eq(sc_batch_row(d, *at), key, k))
		*end = sc__batch_key_end(d, *at, k);
	else
		*end = *at;
}

/* The wide step's output, into s->out: every key of da or db in order. */
static __attribute__((noinline, cold)) int
join_wide(struct sides *s, const struct sc_batch *da, const struct sc_batch *db)
{
	struct sc__probe pa, pb;
	size_t na = da ? sc_batch_count(da) : 0,
	       nb = db ? sc_batch_count(db) : 0;
	size_t ia = 0, ib = 0;
	int rc = 0;

	if (!s->wide) {
		s->wide = calloc(1, sizeof(*s->wide));
		if (!s->wide)
			return sc__fail(SC_ENOMEM,
					"sc_join_step: out of memory");
	}
	sc__probe_init(&pa, s->a_ncols, s->ta, NULL);
	sc__probe_init(&pb, s->b_ncols, s->tb, NULL);
	while (rc == 0 && (ia < na || ib < nb)) {
		const uint64_t *key;
		size_t ea, eb;
		int c = ia == na   ? 1
			: ib == nb ? -1
				   : sc_row_cmp(sc_batch_row(da, ia),
						sc_batch_row(db, ib), s->k);

		key = c <= 0 ? sc_batch_row(da, ia) : sc_batch_row(db, ib);
		key_rows(da, key, s->k, &ia, &ea);
		key_rows(db, key, s->k, &ib, &eb);
		sc__probe_seek(&pa, key, s->k);
		sc__probe_seek(&pb, key, s->k);
		rc = wside_collect(&s->wide->a, &pa, s->a_ncols, da, ia, ea);
		if (rc == 0)
			rc = wside_collect(&s->wide->b, &pb, s->b_ncols, db, ib,
					   eb);
		if (rc == 0)
			rc = wide_key(s);
		ia = ea;
		ib = eb;
	}
	return rc;
}

int
sc_join_create(uint32_t a_ncols, uint32_t b_ncols, uint32_t k,
	       struct sc_join **out)
{
	struct sc_join *j;
	uint32_t on = a_ncols + b_ncols - k;
	int rc;

	if (!out)
		return sc__fail(SC_EINVAL, "sc_join_create: out is NULL");
	j = calloc(1, sizeof(*j));
	if (!j)
		return sc__fail(SC_ENOMEM, "sc_join_create: out of memory");
	rc = sides_init(&j->s, "sc_join_create", a_ncols, b_ncols, k,
			k > a_ncols + b_ncols ? 0 : on);
	if (rc) {
		free(j);
		return rc;
	}
	j->out_ncols = on;
	*out = j;
	return 0;
}

/* Within the mass bound (join.h): 2 * M_a * M_b fits int64, so every
 * integral, product and output weight does, and clamping changes nothing. */
static bool
narrow(uint64_t ma, uint64_t mb)
{
	return (unsigned __int128)ma * mb <= (uint64_t)INT64_MAX / 2;
}

int
sc_join_step(struct sc_join *j, const struct sc_batch *da,
	     const struct sc_batch *db, struct sc_batch **out)
{
	struct sc__probe p;
	uint64_t ma, mb;
	int rc;

	if (!j)
		return sc__fail(SC_EINVAL, "sc_join_step: join is NULL");
	rc = sides_validate(&j->s, "sc_join_step", da, db, out);
	if (rc)
		return rc;
	sc_batch_builder_clear(&j->s.out);
	j->s.split = SIZE_MAX;
	sides_masses(&j->s, da, db, &ma, &mb);
	if (!narrow(ma, mb)) {
		size_t spilled = j->s.spill ? j->s.spill->n : 0;

		rc = join_wide(&j->s, da, db);
		if (rc == 0)
			rc = sides_commit(&j->s, da, db, ma, mb, out);
		if (rc && j->s.spill) /* as it was */
			j->s.spill->n = spilled;
		if (rc)
			sc_batch_builder_clear(&j->s.out);
		return rc;
	}
	/* da x Ib, then (Ia + da) x db = Ia x db + da x db: the traces as
	 * they were before this step, the deltas seen as extra runs. */
	if (da && sc_batch_count(da)) {
		sc__probe_init(&p, j->s.b_ncols, j->s.tb, NULL);
		sc__probe_prepare(&p, da, j->s.k, &j->s.fb);
		rc = join_delta(&j->s, da, &p, true);
		sc__probe_fini(&p);
	}
	j->s.split = sc_batch_builder_count(&j->s.out);
	if (rc == 0 && db && sc_batch_count(db)) {
		sc__probe_init(&p, j->s.a_ncols, j->s.ta, da);
		sc__probe_prepare(&p, db, j->s.k, &j->s.fa);
		rc = join_delta(&j->s, db, &p, false);
		sc__probe_fini(&p);
	}
	if (rc) {
		sc_batch_builder_clear(&j->s.out);
		return rc;
	}
	return sides_commit(&j->s, da, db, ma, mb, out);
}

int
sc_join_work(struct sc_join *j, size_t budget)
{
	if (!j)
		return sc__fail(SC_EINVAL, "sc_join_work: join is NULL");
	return sides_work(&j->s, budget);
}

size_t
sc_join_pending(const struct sc_join *j)
{
	return j ? sides_pending(&j->s) : 0;
}

uint32_t
sc_join_out_ncols(const struct sc_join *j)
{
	return j ? j->out_ncols : 0;
}

size_t
sc_join_rows(const struct sc_join *j)
{
	return j ? sc_trace_rows(j->s.ta) + sc_trace_rows(j->s.tb) : 0;
}

size_t
sc_join_bytes(const struct sc_join *j)
{
	if (!j)
		return 0;
	return sc_trace_bytes(j->s.ta) + sc_trace_bytes(j->s.tb) +
	       sc__fences_bytes(&j->s.fa) + sc__fences_bytes(&j->s.fb);
}

size_t
sc_antijoin_rows(const struct sc_antijoin *aj)
{
	return aj ? sc_trace_rows(aj->s.ta) + sc_trace_rows(aj->s.tb) : 0;
}

size_t
sc_antijoin_bytes(const struct sc_antijoin *aj)
{
	if (!aj)
		return 0;
	return sc_trace_bytes(aj->s.ta) + sc_trace_bytes(aj->s.tb) +
	       sc__fences_bytes(&aj->s.fa) + sc__fences_bytes(&aj->s.fb);
}

void
sc_join_destroy(struct sc_join *j)
{
	if (!j)
		return;
	sides_fini(&j->s);
	free(j);
}

/* --- antijoin ------------------------------------------------------------ */

/* Is key present (a row of positive summed weight) in what p sees? */
static int
present(struct sc__probe *p, const uint64_t *key, uint32_t k, bool *yes)
{
	const uint64_t *row;
	int64_t w;
	int rc;

	sc__probe_seek(p, key, k);
	/* Only the sign counts: a b row past int64 fails no step. */
	while ((rc = sc__probe_next_live(p, &row, &w)) == 1)
		if (w > 0)
			break;
	if (rc < 0)
		return rc;
	*yes = rc == 1;
	return 0;
}

/* An output row of the antijoin, w times: into the builder, or in the
 * wide redo into s->emit. A weight past int64 is SC_EOVERFLOW in the first
 * (the step is then redone wide where a spill takes the rest). */
static int
anti_push(struct sides *s, const uint64_t *row, __int128 w)
{
	if (s->emit)
		return sc__wide_add(s->emit, row, w);
	if (w > INT64_MAX || w < INT64_MIN)
		return sc__fail(SC_EOVERFLOW,
				"sc_antijoin_step: an output row's change "
				"leaves int64");
	return sc_batch_builder_push(&s->out, row, s->a_ncols, (int64_t)w);
}

/* Push `sign` times every row of Ia with this key (exact: an integral
 * may be past int64, trace.h). */
static int
push_key_rows(struct sides *s, struct sc__probe *pa, const uint64_t *key,
	      int64_t sign)
{
	const uint64_t *row;
	__int128 w;
	int rc;

	sc__probe_seek(pa, key, s->k);
	while ((rc = sc__probe_next_wide(pa, &row, &w)) == 1) {
		rc = anti_push(s, row, sign * w);
		if (rc)
			return rc;
	}
	return rc;
}

/* Keys whose presence db changes retract or restore Ia's rows. */
static int
anti_presence_changes(struct sides *s, const struct sc_batch *db)
{
	struct sc__probe old_b, new_b, pa;
	bool was, is;
	int rc = 0;

	sc__probe_init(&old_b, s->b_ncols, s->tb, NULL);
	sc__probe_init(&new_b, s->b_ncols, s->tb, db);
	sc__probe_init(&pa, s->a_ncols, s->ta, NULL);
	sc__probe_prepare(&old_b, db, s->k, &s->fb);
	sc__probe_prepare(&new_b, db, s->k, &s->fb);
	for (size_t i = 0, e; rc == 0 && i < sc_batch_count(db); i = e) {
		const uint64_t *key = sc_batch_row(db, i);

		e = sc__batch_key_end(db, i, s->k);
		rc = present(&old_b, key, s->k, &was);
		if (rc == 0)
			rc = present(&new_b, key, s->k, &is);
		if (rc == 0 && was != is)
			rc = push_key_rows(s, &pa, key, is ? -1 : 1);
	}
	sc__probe_fini(&old_b);
	sc__probe_fini(&new_b);
	return rc;
}

/* da's rows whose key is absent from Ib + db. */
static int
anti_new_rows(struct sides *s, const struct sc_batch *da,
	      const struct sc_batch *db)
{
	struct sc__probe new_b;
	bool is;
	int rc = 0;

	sc__probe_init(&new_b, s->b_ncols, s->tb, db);
	sc__probe_prepare(&new_b, da, s->k, &s->fb);
	for (size_t i = 0, e; rc == 0 && i < sc_batch_count(da); i = e) {
		e = sc__batch_key_end(da, i, s->k);
		rc = present(&new_b, sc_batch_row(da, i), s->k, &is);
		for (size_t r = i; rc == 0 && !is && r < e; r++)
			rc = anti_push(s, sc_batch_row(da, r),
				       sc_batch_weight(da, r));
	}
	sc__probe_fini(&new_b);
	return rc;
}

int
sc_antijoin_create(uint32_t a_ncols, uint32_t b_ncols, uint32_t k,
		   struct sc_antijoin **out)
{
	struct sc_antijoin *aj;
	int rc;

	if (!out)
		return sc__fail(SC_EINVAL, "sc_antijoin_create: out is NULL");
	aj = calloc(1, sizeof(*aj));
	if (!aj)
		return sc__fail(SC_ENOMEM, "sc_antijoin_create: out of memory");
	rc = sides_init(&aj->s, "sc_antijoin_create", a_ncols, b_ncols, k,
			a_ncols);
	if (rc) {
		free(aj);
		return rc;
	}
	*out = aj;
	return 0;
}

/* The antijoin's output for da, db, into the builder (or s->emit). */
static int
anti_compute(struct sides *s, const struct sc_batch *da,
	     const struct sc_batch *db)
{
	int rc = 0;

	sc_batch_builder_clear(&s->out);
	if (db && sc_batch_count(db))
		rc = anti_presence_changes(s, db);
	if (rc == 0 && da && sc_batch_count(da))
		rc = anti_new_rows(s, da, db);
	return rc;
}

/*
 * A step whose output has a row past int64 (a's integral past it, or a
 * sum of its rows), in a circuit: the output goes whole into the spill,
 * the step's own batch is empty, and the circuit emits the spill clamped
 * over the next passes (batch_int.h). Cold.
 */
static __attribute__((noinline, cold)) int
anti_wide(struct sides *s, const struct sc_batch *da, const struct sc_batch *db,
	  uint64_t ma, uint64_t mb, struct sc_batch **out)
{
	size_t n0 = s->spill->n;
	int rc;

	s->emit = s->spill;
	rc = anti_compute(s, da, db);
	s->emit = NULL;
	if (rc == 0)
		rc = sides_commit(s, da, db, ma, mb, out);
	if (rc)
		s->spill->n = n0;
	return rc;
}

int
sc_antijoin_step(struct sc_antijoin *aj, const struct sc_batch *da,
		 const struct sc_batch *db, struct sc_batch **out)
{
	uint64_t ma, mb;
	int rc;

	if (!aj)
		return sc__fail(SC_EINVAL,
				"sc_antijoin_step: antijoin is NULL");
	rc = sides_validate(&aj->s, "sc_antijoin_step", da, db, out);
	if (rc)
		return rc;
	sides_masses(&aj->s, da, db, &ma, &mb);
	rc = anti_compute(&aj->s, da, db);
	if (rc == 0)
		rc = sides_commit(&aj->s, da, db, ma, mb, out);
	if (rc == SC_EOVERFLOW && aj->s.spill)
		rc = anti_wide(&aj->s, da, db, ma, mb, out);
	if (rc)
		sc_batch_builder_clear(&aj->s.out);
	return rc;
}

int
sc_antijoin_work(struct sc_antijoin *aj, size_t budget)
{
	if (!aj)
		return sc__fail(SC_EINVAL,
				"sc_antijoin_work: antijoin is NULL");
	return sides_work(&aj->s, budget);
}

size_t
sc_antijoin_pending(const struct sc_antijoin *aj)
{
	return aj ? sides_pending(&aj->s) : 0;
}

void
sc_antijoin_destroy(struct sc_antijoin *aj)
{
	if (!aj)
		return;
	sides_fini(&aj->s);
	free(aj);
}

void
sc__join_set_symbols(struct sc_join *j, const struct sc__symcols *a,
		     const struct sc__symcols *b)
{
	sc__trace_set_symbols(j->s.ta, a);
	sc__trace_set_symbols(j->s.tb, b);
}

void
sc__antijoin_set_symbols(struct sc_antijoin *aj, const struct sc__symcols *a,
			 const struct sc__symcols *b)
{
	sc__trace_set_symbols(aj->s.ta, a);
	sc__trace_set_symbols(aj->s.tb, b);
}

void
sc__join_set_spill(struct sc_join *j, struct sc__wide *spill)
{
	j->s.spill = spill;
}

void
sc__antijoin_set_spill(struct sc_antijoin *aj, struct sc__wide *spill)
{
	aj->s.spill = spill;
}

/* --- time bounds and cleanup (waterline.h) -------------------------------- */

void
sc__join_set_within(struct sc_join *j, uint32_t lo, uint32_t hi, uint32_t t)
{
	j->s.within = true;
	j->s.lo = lo;
	j->s.hi = hi;
	j->s.t = t;
}

/* Half the budget to each side that has a horizon (all of it to one). */
static void
sides_sweep(struct sides *s, const struct sc__horizon *ha,
	    const struct sc__horizon *hb, size_t budget)
{
	size_t part = ha->n && hb->n ? budget / 2 + 1 : budget;

	if (ha->n) {
		sc__trace_sweep(s->ta, ha, part);
		sc__fences_sync(&s->fa, s->ta);
	}
	if (hb->n) {
		sc__trace_sweep(s->tb, hb, part);
		sc__fences_sync(&s->fb, s->tb);
	}
}

void
sc__join_sweep(struct sc_join *j, const struct sc__horizon *ha,
	       const struct sc__horizon *hb, size_t budget)
{
	sides_sweep(&j->s, ha, hb, budget);
}

void
sc__antijoin_sweep(struct sc_antijoin *aj, const struct sc__horizon *ha,
		   const struct sc__horizon *hb, size_t budget)
{
	sides_sweep(&aj->s, ha, hb, budget);
}
