/*
 * test_multiagg.c - the multi-aggregate (COUNT and COUNT_DISTINCT with
 * filters, SUM, AVG, MIN and MAX terms of one group) against a
 * from-scratch reference after every step of random delta sequences that
 * retract distinct values and MIN/MAX extremes, some with rows of negative
 * integrated weight; the same input cut into other steps; output types;
 * bad specs and bad input, which must change nothing; sums outside int64;
 * groups that empty; Nexmark q15 by hand.
 *
 * The reference reads multiagg.h's definitions with plain loops over the
 * naive Z-sets of zset_gen.h and __int128 sums; it shares no code with
 * multiagg.c, groups.c, rowhash.c or trace.c.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/multiagg.h"
#include "tests/support/op_gen.h"
#include "tests/support/prop.h"
#include "tests/support/zset_gen.h"

#define SUITE "multiagg"
/* The random tests' rows: columns 0..k-1 the key (k <= 2), then values
 * up to column 4, then two 0/1 filter columns. */
#define NCOLS 7
#define FILT0 5
#define STEPS 30

static const char *const kind_names[] = {
    "count", "count_distinct", "sum", "avg", "min", "max"};

/* --- the reference -------------------------------------------------------- */

static bool
passes(const struct sc_magg_term *t, const uint64_t *row)
{
	return t->filter == SC_MAGG_ALL || row[t->filter] != 0;
}

/* The summed weight of value v (in t's column) over the rows of `key`'s
 * group that pass t's filter; *first: row i is the first of them. */
static __int128
value_weight(const struct zref *in, uint32_t k, const uint64_t *key,
	     const struct sc_magg_term *t, uint64_t v, size_t i, bool *first)
{
	__int128 w = 0;

	*first = true;
	for (size_t j = 0; j < in->n; j++) {
		const uint64_t *q = in->rows + j * in->ncols;

		if (in->w[j] == 0 || !opgen_same_key(q, key, k) ||
		    !passes(t, q) || q[t->col] != v)
			continue;
		if (j < i)
			*first = false;
		w += in->w[j];
	}
	return w;
}

/* Term t's value in the group of `key` (total weight `total` > 0); false
 * when the group has no row for it: a SUM outside int64, or a MIN or MAX
 * with no value of positive summed weight. */
static bool
ref_term(const struct zref *in, uint32_t k, const uint64_t *key, __int128 total,
	 const struct sc_magg_term *t, uint64_t *word)
{
	__int128 acc = 0;
	uint64_t best = 0;
	bool found = false, first;

	for (size_t i = 0; i < in->n; i++) {
		const uint64_t *r = in->rows + i * in->ncols;
		uint64_t v = r[t->col];

		if (in->w[i] == 0 || !opgen_same_key(r, key, k) ||
		    !passes(t, r))
			continue;
		switch (t->kind) {
		case SC_MAGG_COUNT:
			acc += in->w[i];
			break;
		case SC_MAGG_SUM:
		case SC_MAGG_AVG:
			acc += in->w[i] * (t->col_type == SC_TYPE_I64
					       ? (__int128)sc_dec_i64(v)
					       : (__int128)v);
			break;
		default: /* per distinct value, at its first row */
			if (value_weight(in, k, key, t, v, i, &first) <= 0 ||
			    !first)
				break;
			acc++;
			if (!found ||
			    (t->kind == SC_MAGG_MIN ? v < best : v > best))
				best = v;
			found = true;
			break;
		}
	}
	switch (t->kind) {
	case SC_MAGG_SUM:
		if (acc > INT64_MAX || acc < INT64_MIN)
			return false;
		/* fallthrough */
	case SC_MAGG_COUNT:
	case SC_MAGG_COUNT_DISTINCT:
		*word = sc_enc_i64((int64_t)acc);
		return true;
	case SC_MAGG_AVG:
		*word = sc_enc_f64((double)acc / (double)total);
		return true;
	default:
		*word = best;
		return found;
	}
}

/* The multi-aggregate of the integral `in` from scratch: a row of weight 1
 * per live group that has one. *live: the groups of positive total weight;
 * *keys: the groups with a row of non-zero weight. */
static void
ref_multiagg(const struct zref *in, const struct sc_multiagg_spec *s,
	     struct zref *out, size_t *live, size_t *keys)
{
	uint64_t row[SC_SCHEMA_MAX_COLS];

	*live = *keys = 0;
	for (size_t i = 0; i < in->n; i++) {
		const uint64_t *r = in->rows + i * in->ncols;
		__int128 total = 0;
		bool first = true, has = true;

		if (in->w[i] == 0)
			continue;
		for (size_t j = 0; j < in->n && first; j++) {
			if (in->w[j] == 0 ||
			    !opgen_same_key(in->rows + j * in->ncols, r, s->k))
				continue;
			if (j < i)
				first = false;
			total += in->w[j];
		}
		if (!first)
			continue;
		(*keys)++;
		if (total <= 0)
			continue;
		(*live)++;
		memcpy(row, r, (size_t)s->k * sizeof(uint64_t));
		for (uint32_t t = 0; t < s->nterms && has; t++)
			has = ref_term(in, s->k, r, total, &s->terms[t],
				       &row[s->k + t]);
		if (has)
			zref_add(out, row, 1);
	}
}

/* --- random specs and deltas ---------------------------------------------- */

/* The random test's row layout: the key width and every column's type. */
struct layout {
	uint32_t k;
	enum sc_type types[NCOLS];
};

/* The word of x in 0..4 in a column of type t: values that straddle zero
 * (whose encodings differ in the top bit) where the type has them. */
static uint64_t
word_of(enum sc_type t, int64_t x)
{
	switch (t) {
	case SC_TYPE_I64:
		return sc_enc_i64(x - 2);
	case SC_TYPE_U64:
		return sc_enc_u64((uint64_t)x);
	case SC_TYPE_F64:
		return sc_enc_f64((double)(x - 2) / 2.0);
	case SC_TYPE_BOOL:
		return sc_enc_bool((x & 1) != 0);
	default:
		return sc_enc_symbol((uint64_t)x + 1);
	}
}

/* Small domains, so that groups collide and distinct values repeat: 3 key
 * values a column, 5 values, 0/1 filters. */
static uint64_t
col_value(struct sc_rng *r, uint32_t col, void *ctx)
{
	const struct layout *l = ctx;

	if (col >= FILT0)
		return sc_rng_below(r, 2);
	return word_of(l->types[col],
		       (int64_t)sc_rng_below(r, col < l->k ? 3 : 5));
}

static bool
summable(enum sc_type t)
{
	return t == SC_TYPE_I64 || t == SC_TYPE_U64;
}

/* k of 0..2, 1..6 terms of any kind over any column (SUM and AVG over an
 * integer one), filters on some COUNT and COUNT_DISTINCT terms: mostly a
 * 0/1 column, sometimes any column (a row passes on a non-zero word). */
static void
random_spec(struct sc_rng *r, struct layout *l, struct sc_multiagg_spec *s)
{
	static const enum sc_type any[] = {SC_TYPE_I64, SC_TYPE_U64,
					   SC_TYPE_F64, SC_TYPE_BOOL,
					   SC_TYPE_SYMBOL};

	memset(s, 0, sizeof(*s));
	for (uint32_t c = 0; c < FILT0; c++)
		l->types[c] = any[sc_rng_below(r, 5)];
	l->types[2] = sc_rng_below(r, 2) ? SC_TYPE_I64 : SC_TYPE_U64;
	for (uint32_t c = FILT0; c < NCOLS; c++)
		l->types[c] = SC_TYPE_BOOL;
	l->k = (uint32_t)sc_rng_below(r, 3);
	s->ncols = NCOLS;
	s->k = l->k;
	s->nterms = 1 + (uint32_t)sc_rng_below(r, 6);
	for (uint32_t i = 0; i < s->nterms; i++) {
		struct sc_magg_term *t = &s->terms[i];

		t->kind = (enum sc_magg_kind)sc_rng_below(r, 6);
		t->filter = SC_MAGG_ALL;
		do
			t->col = (uint32_t)sc_rng_below(r, NCOLS);
		while ((t->kind == SC_MAGG_SUM || t->kind == SC_MAGG_AVG) &&
		       !summable(l->types[t->col]));
		t->col_type = l->types[t->col];
		if (t->kind <= SC_MAGG_COUNT_DISTINCT && sc_rng_below(r, 3))
			t->filter = sc_rng_below(r, 6) == 0
					? (uint32_t)sc_rng_below(r, NCOLS)
					: FILT0 + (uint32_t)sc_rng_below(r, 2);
	}
}

static void
spec_print(const struct sc_multiagg_spec *s, const struct layout *l,
	   bool nonneg, char *buf, size_t len)
{
	int at = snprintf(buf, len, "%s, k %u, types",
			  nonneg ? "nonnegative" : "signed", s->k);

	for (uint32_t c = 0; c < NCOLS && at > 0 && (size_t)at < len; c++)
		at += snprintf(buf + at, len - (size_t)at, " %s",
			       sc_type_name(l->types[c]));
	for (uint32_t i = 0; i < s->nterms && at > 0 && (size_t)at < len; i++) {
		const struct sc_magg_term *t = &s->terms[i];

		at += snprintf(buf + at, len - (size_t)at, "%s %s(%u)",
			       i ? "," : ":", kind_names[t->kind], t->col);
		if (t->filter != SC_MAGG_ALL && at > 0 && (size_t)at < len)
			at += snprintf(buf + at, len - (size_t)at, " filter %u",
				       t->filter);
	}
}

static const char *
row_str(const uint64_t *row, uint32_t n, char *buf, size_t len)
{
	int at = snprintf(buf, len, "(");

	for (uint32_t i = 0; row && i < n && at > 0 && (size_t)at < len; i++)
		at += snprintf(buf + at, len - (size_t)at, "%s%llx",
			       i ? " " : "", (unsigned long long)row[i]);
	if (at > 0 && (size_t)at < len)
		(void)snprintf(buf + at, len - (size_t)at, ")");
	return buf;
}

/* How a case's deltas are drawn. */
struct gen {
	struct opgen og; /* values (col_value) and signed weights */
	const struct sc_multiagg_spec *s;
	bool nonneg; /* every row's integrated weight stays >= 0 */
};

/* Push (row, w) into the delta and the running integral. */
static void
put(struct sc_batch_builder *b, struct zref *cur, const uint64_t *row,
    int64_t w)
{
	cr_assert_eq(sc_batch_builder_push(b, row, NCOLS, w), 0);
	zref_add(cur, row, w);
}

/* A column whose values some term reads (any column for a COUNT). */
static uint32_t
value_col(struct sc_rng *r, const struct sc_multiagg_spec *s)
{
	const struct sc_magg_term *t = &s->terms[sc_rng_below(r, s->nterms)];

	return t->kind == SC_MAGG_COUNT ? (uint32_t)sc_rng_below(r, NCOLS)
					: t->col;
}

/* Retract all of every row of p's group whose column c holds p's value
 * there, or (half the time) the group's smallest or largest value in c of
 * a row of positive weight: a distinct value leaves, or a MIN or MAX goes
 * and the next one must show through. */
static void
retract_value(struct sc_rng *r, struct sc_batch_builder *b, struct zref *cur,
	      uint32_t k, const uint64_t *p, uint32_t c)
{
	uint64_t v = p[c], row[NCOLS];
	uint64_t pick = sc_rng_below(r, 4);

	for (size_t i = 0; pick >= 2 && i < cur->n; i++) {
		const uint64_t *q = cur->rows + i * NCOLS;

		if (cur->w[i] > 0 && opgen_same_key(q, p, k) &&
		    (pick == 2 ? q[c] < v : q[c] > v))
			v = q[c];
	}
	for (size_t i = 0; i < cur->n; i++) {
		if (cur->w[i] == 0 ||
		    !opgen_same_key(cur->rows + i * NCOLS, p, k) ||
		    cur->rows[i * NCOLS + c] != v)
			continue;
		memcpy(row, cur->rows + i * NCOLS, sizeof(row));
		put(b, cur, row, -(int64_t)cur->w[i]);
	}
}

/* A fresh row's weight: 1..3, or in a signed case negative a third of
 * the time (and sometimes +-2^40, opgen.h's). */
static int64_t
insert_weight(struct sc_rng *r, const struct gen *g)
{
	if (g->nonneg)
		return 1 + (int64_t)sc_rng_below(r, 3);
	if (sc_rng_below(r, 3) == 0)
		return -1 - (int64_t)sc_rng_below(r, 2);
	return opgen_weight(r, &g->og);
}

/* A step's delta against the running integral `cur` (updated): fresh
 * rows (9 changes in 14), whole and partial retractions, overwrites (a
 * row retracted and its key inserted with other values), retractions of a
 * value of a group. NULL sometimes (an empty step). */
static struct sc_batch *
make_delta(struct sc_rng *r, const struct gen *g, struct zref *cur)
{
	struct sc_batch_builder b;
	struct sc_batch *out;
	uint64_t row[NCOLS];
	size_t nops = sc_rng_below(r, 13);

	if (sc_rng_below(r, 10) == 0)
		return NULL;
	cr_assert_eq(sc_batch_builder_init(&b, NCOLS), 0);
	for (size_t i = 0; i < nops; i++) {
		uint64_t op = sc_rng_below(r, 14);
		__int128 w = 0;
		const uint64_t *old = op < 9 ? NULL : opgen_pick(r, cur, &w);
		int64_t wi = (int64_t)w;

		if (!old) {
			for (uint32_t c = 0; c < NCOLS; c++)
				row[c] = col_value(r, c, g->og.ctx);
			put(&b, cur, row, insert_weight(r, g));
			continue;
		}
		memcpy(row, old, sizeof(row));
		switch (op) {
		case 9: /* retract all of it */
			put(&b, cur, row, -wi);
			break;
		case 10: /* retract part of it */
			put(&b, cur, row, wi > 0 ? -1 : 1);
			break;
		case 11: /* overwrite */
			put(&b, cur, row, -wi);
			for (uint32_t c = g->s->k; c < NCOLS; c++)
				row[c] = col_value(r, c, g->og.ctx);
			put(&b, cur, row, wi);
			break;
		default:
			retract_value(r, &b, cur, g->s->k, row,
				      value_col(r, g->s));
			break;
		}
	}
	cr_assert_eq(sc_batch_builder_finish(&b, &out), 0);
	sc_batch_builder_fini(&b);
	return out;
}

/* One random case: a spec and its deltas. */
struct run {
	struct layout l;
	struct sc_multiagg_spec spec;
	bool nonneg;
	struct sc_batch *d[STEPS]; /* NULL: an empty step */
	char what[320];
};

/* Draw a case from r: three in four keep every integrated weight >= 0,
 * the rest insert rows of negative weight too (and some of +-2^40). */
static void
make_run(struct sc_rng *r, struct run *run)
{
	struct zref cur;
	struct gen g;

	random_spec(r, &run->l, &run->spec);
	run->nonneg = sc_rng_below(r, 4) != 0;
	g = (struct gen){{NCOLS, run->spec.k, col_value, &run->l, true},
			 &run->spec,
			 run->nonneg};
	zref_init(&cur, NCOLS);
	for (int i = 0; i < STEPS; i++)
		run->d[i] = make_delta(r, &g, &cur);
	zref_fini(&cur);
	spec_print(&run->spec, &run->l, run->nonneg, run->what,
		   sizeof(run->what));
}

static void
run_fini(struct run *run)
{
	for (int i = 0; i < STEPS; i++)
		sc_batch_release(run->d[i]);
}

/* --- the random tests ----------------------------------------------------- */

#define T_REF "output_integral_is_the_multi_aggregate_of_the_input_integral"

Test(multiagg, output_integral_is_the_multi_aggregate_of_the_input_integral)
{
	uint64_t base = sc_prop_seed(9101);

	for (uint64_t c = 0; c < sc_prop_count(80); c++) {
		uint64_t seed = base + c;
		struct sc_rng r;
		struct run run;
		struct sc_multiagg *m;
		struct zref in, got;
		uint32_t width;
		bool minmax = false;

		sc_rng_seed(&r, seed);
		make_run(&r, &run);
		width = run.spec.k + run.spec.nterms;
		for (uint32_t t = 0; t < run.spec.nterms; t++)
			minmax |= run.spec.terms[t].kind >= SC_MAGG_MIN;
		zref_init(&in, NCOLS);
		zref_init(&got, width);
		cr_assert_eq(sc_multiagg_create(&run.spec, &m), 0, "%s: %s",
			     run.what, sc_errmsg());
		for (int step = 0; step < STEPS; step++) {
			struct sc_batch *out = NULL;
			struct zref want;
			const uint64_t *bad = NULL;
			size_t live, keys, held;
			char rs[160];
			int rc = sc_multiagg_step(m, run.d[step], &out);

			SC_PROP_ASSERT(seed, SUITE, T_REF, rc == 0,
				       "step %d, %s: %s", step, run.what,
				       sc_errmsg());
			SC_PROP_ASSERT(seed, SUITE, T_REF,
				       opgen_pm1_batch(out, width),
				       "step %d, %s: the output delta is not "
				       "%u wide, consolidated, of weights +-1",
				       step, run.what, width);
			SC_PROP_ASSERT(seed, SUITE, T_REF,
				       run.d[step] || sc_batch_count(out) == 0,
				       "step %d, %s: an empty step changed "
				       "the output",
				       step, run.what);
			if (run.d[step])
				zref_add_batch(&in, run.d[step], 1);
			zref_add_batch(&got, out, 1);
			sc_batch_release(out);
			zref_init(&want, width);
			ref_multiagg(&in, &run.spec, &want, &live, &keys);
			SC_PROP_ASSERT(
			    seed, SUITE, T_REF, zref_same(&want, &got, &bad),
			    "step %d, %s: row %s want %lld got %lld", step,
			    run.what, row_str(bad, width, rs, sizeof(rs)),
			    zref_w(&want, bad), zref_w(&got, bad));
			held = sc_multiagg_groups(m);
			SC_PROP_ASSERT(seed, SUITE, T_REF,
				       live <= held && held <= keys,
				       "step %d, %s: %zu groups held, %zu "
				       "live, %zu with rows",
				       step, run.what, held, live, keys);
			SC_PROP_ASSERT(seed, SUITE, T_REF,
				       minmax || sc_multiagg_pending(m) == 0,
				       "step %d, %s: merge work owed without "
				       "a MIN or MAX term",
				       step, run.what);
			zref_fini(&want);
			if (sc_rng_below(&r, 2))
				cr_assert_eq(
				    sc_multiagg_work(m, sc_rng_below(&r, 40)),
				    0, "%s", sc_errmsg());
		}
		cr_assert_eq(sc_multiagg_work(m, SIZE_MAX), 0, "%s",
			     sc_errmsg());
		SC_PROP_ASSERT(seed, SUITE, T_REF, sc_multiagg_pending(m) == 0,
			       "%s: %zu units owed after "
			       "sc_multiagg_work(m, SIZE_MAX)",
			       run.what, sc_multiagg_pending(m));
		SC_PROP_ASSERT(seed, SUITE, T_REF, sc_multiagg_check(m) == 0,
			       "%s: %s", run.what, sc_errmsg());
		sc_multiagg_destroy(m);
		zref_fini(&in);
		zref_fini(&got);
		run_fini(&run);
	}
}

/* The integral of m's outputs over `n` steps of d (NULLs allowed) into
 * got, with random merge work between steps. */
static int
feed(struct sc_rng *r, struct sc_multiagg *m, struct sc_batch *const *d,
     size_t n, struct zref *got)
{
	for (size_t i = 0; i < n; i++) {
		struct sc_batch *out = NULL;
		int rc = sc_multiagg_step(m, d[i], &out);

		if (rc)
			return rc;
		zref_add_batch(got, out, 1);
		sc_batch_release(out);
		if (sc_rng_below(r, 3) == 0 &&
		    (rc = sc_multiagg_work(m, sc_rng_below(r, 64))) != 0)
			return rc;
	}
	return 0;
}

/* a + b (either may be NULL), a released. */
static struct sc_batch *
plus(struct sc_batch *a, const struct sc_batch *b)
{
	struct sc_batch *s;

	if (!b)
		return a;
	if (!a)
		return sc_batch_retain((struct sc_batch *)b);
	cr_assert_eq(sc_batch_add(a, b, &s), 0);
	sc_batch_release(a);
	return s;
}

/* Schedule 1: the deltas gathered into runs of random length. */
static void
cut_gathered(struct sc_rng *r, const struct run *run, struct opgen_cut *c)
{
	struct sc_batch *acc = NULL;

	for (int i = 0; i < STEPS; i++) {
		acc = plus(acc, run->d[i]);
		if (i == STEPS - 1 || sc_rng_below(r, 3) == 0) {
			opgen_cut_push(c, acc);
			acc = NULL;
		}
	}
}

#define T_CUT "cutting_the_input_into_other_steps_settles_to_the_same_integral"

Test(multiagg, cutting_the_input_into_other_steps_settles_to_the_same_integral)
{
	static const char *const names[] = {
	    "a step per delta", "deltas gathered into runs",
	    "the whole input in one step", "half-rows one a step, shuffled"};
	uint64_t base = sc_prop_seed(9201);

	for (uint64_t c = 0; c < sc_prop_count(40); c++) {
		uint64_t seed = base + c;
		struct sc_rng r;
		struct run run;
		struct opgen_cut cuts[4];
		struct sc_batch *all = NULL;
		struct zref in, want;
		size_t live, keys;
		uint32_t width;

		sc_rng_seed(&r, seed);
		make_run(&r, &run);
		width = run.spec.k + run.spec.nterms;
		memset(cuts, 0, sizeof(cuts));
		zref_init(&in, NCOLS);
		for (int i = 0; i < STEPS; i++) {
			all = plus(all, run.d[i]);
			if (run.d[i])
				zref_add_batch(&in, run.d[i], 1);
			opgen_cut_push(&cuts[0], run.d[i]
						     ? sc_batch_retain(run.d[i])
						     : NULL);
		}
		cut_gathered(&r, &run, &cuts[1]);
		opgen_cut_push(&cuts[2], all ? sc_batch_retain(all) : NULL);
		opgen_cut_halves(&r, all, &cuts[3]);
		zref_init(&want, width);
		ref_multiagg(&in, &run.spec, &want, &live, &keys);
		for (int s = 0; s < 4; s++) {
			struct sc_multiagg *m;
			struct zref got;
			const uint64_t *bad = NULL;
			char rs[160];
			int rc;

			cr_assert_eq(sc_multiagg_create(&run.spec, &m), 0);
			zref_init(&got, width);
			rc = feed(&r, m, cuts[s].d, cuts[s].n, &got);
			SC_PROP_ASSERT(seed, SUITE, T_CUT, rc == 0,
				       "%s, %s: %s", names[s], run.what,
				       sc_errmsg());
			SC_PROP_ASSERT(seed, SUITE, T_CUT,
				       zref_same(&want, &got, &bad),
				       "%s (%zu steps), %s: row %s want %lld "
				       "got %lld",
				       names[s], cuts[s].n, run.what,
				       row_str(bad, width, rs, sizeof(rs)),
				       zref_w(&want, bad), zref_w(&got, bad));
			SC_PROP_ASSERT(seed, SUITE, T_CUT,
				       sc_multiagg_check(m) == 0, "%s, %s: %s",
				       names[s], run.what, sc_errmsg());
			sc_multiagg_destroy(m);
			zref_fini(&got);
		}
		for (int s = 0; s < 4; s++)
			opgen_cut_fini(&cuts[s]);
		sc_batch_release(all);
		zref_fini(&in);
		zref_fini(&want);
		run_fini(&run);
	}
}

/* --- helpers for the tests by hand ---------------------------------------- */

static struct sc_multiagg *
make(const struct sc_multiagg_spec *s)
{
	struct sc_multiagg *m;

	cr_assert_eq(sc_multiagg_create(s, &m), 0, "%s", sc_errmsg());
	return m;
}

/* Step m with `delta` (released) and expect exactly `want` (released),
 * both printed on a difference. */
static void
step_expect(struct sc_multiagg *m, struct sc_batch *delta,
	    struct sc_batch *want, const char *what)
{
	struct sc_batch *out = NULL;
	char *g = NULL, *w = NULL;

	cr_assert_eq(sc_multiagg_step(m, delta, &out), 0, "%s: %s", what,
		     sc_errmsg());
	if (!sc_batch_equal(out, want)) {
		(void)sc_batch_to_string(out, NULL, 20, &g);
		(void)sc_batch_to_string(want, NULL, 20, &w);
		cr_log_error("got %s", g ? g : "?");
		cr_log_error("want %s", w ? w : "?");
		free(g);
		free(w);
		cr_assert_fail("%s: the output delta differs", what);
	}
	sc_batch_release(out);
	sc_batch_release(delta);
	sc_batch_release(want);
}

/* --- output types --------------------------------------------------------- */

Test(multiagg, out_types_are_i64_for_counts_sums_f64_for_avg_col_for_min_max)
{
	/* Input (i64, u64, f64, bool, symbol), grouped by the i64. */
	struct sc_multiagg_spec s = {
	    .ncols = 5,
	    .k = 1,
	    .nterms = 9,
	    .terms = {
		{SC_MAGG_COUNT, 2, SC_TYPE_F64, SC_MAGG_ALL},
		{SC_MAGG_COUNT_DISTINCT, 4, SC_TYPE_SYMBOL, 3},
		{SC_MAGG_SUM, 1, SC_TYPE_U64, SC_MAGG_ALL},
		{SC_MAGG_AVG, 0, SC_TYPE_I64, SC_MAGG_ALL},
		{SC_MAGG_MIN, 2, SC_TYPE_F64, SC_MAGG_ALL},
		{SC_MAGG_MAX, 4, SC_TYPE_SYMBOL, SC_MAGG_ALL},
		{SC_MAGG_MIN, 3, SC_TYPE_BOOL, SC_MAGG_ALL},
		{SC_MAGG_MAX, 1, SC_TYPE_U64, SC_MAGG_ALL},
		{SC_MAGG_AVG, 1, SC_TYPE_U64, SC_MAGG_ALL},
	    }};
	static const enum sc_type want[] = {
	    SC_TYPE_I64,    SC_TYPE_I64,  SC_TYPE_I64, SC_TYPE_F64, SC_TYPE_F64,
	    SC_TYPE_SYMBOL, SC_TYPE_BOOL, SC_TYPE_U64, SC_TYPE_F64};
	uint64_t in[] = {sc_enc_i64(2), sc_enc_u64(5), sc_enc_f64(-1.5),
			 sc_enc_bool(true), sc_enc_symbol(9)};
	uint64_t out[] = {sc_enc_i64(2),    sc_enc_i64(1),     sc_enc_i64(1),
			  sc_enc_i64(5),    sc_enc_f64(2.0),   sc_enc_f64(-1.5),
			  sc_enc_symbol(9), sc_enc_bool(true), sc_enc_u64(5),
			  sc_enc_f64(5.0)};
	struct sc_multiagg *m;
	enum sc_type t;

	for (uint32_t i = 0; i < s.nterms; i++) {
		t = (enum sc_type)77;
		cr_assert_eq(sc_multiagg_out_type(&s, i, &t), 0, "term %u: %s",
			     i, sc_errmsg());
		cr_assert_eq(t, want[i], "term %u (%s): %s, want %s", i,
			     kind_names[s.terms[i].kind], sc_type_name(t),
			     sc_type_name(want[i]));
	}
	/* Past the terms: multiagg.h says SC_ERANGE, a code error.h does
	 * not have; its SC_EINVAL is "an argument ... out of range". */
	t = (enum sc_type)77;
	cr_assert_eq(sc_multiagg_out_type(&s, s.nterms, &t), SC_EINVAL);
	cr_assert(opgen_names_one_of(sc_errdetail(), "9"), "%s",
		  sc_errdetail());
	cr_assert_eq(sc_multiagg_out_type(&s, UINT32_MAX, &t), SC_EINVAL);
	cr_assert_eq(t, (enum sc_type)77, "a refused call wrote its out");
	cr_assert_eq(sc_multiagg_out_type(NULL, 0, &t), SC_EINVAL);
	cr_assert_eq(sc_multiagg_out_type(&s, 0, NULL), SC_EINVAL);
	/* The row a step writes: k + nterms words of those types. */
	m = make(&s);
	step_expect(m, opgen_batch_of(5, 1, in, NULL),
		    opgen_batch_of(10, 1, out, NULL), "one row");
	sc_multiagg_destroy(m);
}

/* --- bad arguments -------------------------------------------------------- */

#define CNT                                                                    \
	{                                                                      \
		SC_MAGG_COUNT, 0, SC_TYPE_I64, SC_MAGG_ALL                     \
	}

/* A spec and what sc_multiagg_spec_check and sc_multiagg_create must say:
 * the code, and a detail with one of `names` and one of `value` in it
 * ('|'-separated alternatives, any case; NULL: nothing asked): what is
 * wrong, and the bad number or the term that has it. */
struct bad_spec {
	const char *what;
	struct sc_multiagg_spec s;
	int code;
	const char *names, *value;
};

static const struct bad_spec bad_specs[] = {
    {"ncols 0", {0, 0, 1, {CNT}}, SC_ESCHEMA, "column|ncols", NULL},
    {"ncols 33", {33, 1, 1, {CNT}}, SC_ESCHEMA, "column|ncols", "33"},
    {"k past ncols", {4, 5, 1, {CNT}}, SC_ESCHEMA, "k|group|key", "5"},
    {"nterms 0", {4, 1, 0, {CNT}}, SC_ESCHEMA, "term", "0"},
    {"nterms 25", {32, 0, 25, {CNT}}, SC_ESCHEMA, "term", "25"},
    {"k + nterms 33", {32, 10, 23, {CNT}}, SC_ESCHEMA, "term", "23|33"},
    {"count_distinct col 4 of 4",
     {4, 1, 2, {CNT, {SC_MAGG_COUNT_DISTINCT, 4, SC_TYPE_I64, SC_MAGG_ALL}}},
     SC_ESCHEMA,
     "col",
     "term 1"},
    {"max col 7 of 4",
     {4, 1, 2, {CNT, {SC_MAGG_MAX, 7, SC_TYPE_I64, SC_MAGG_ALL}}},
     SC_ESCHEMA,
     "col",
     "term 1"},
    {"sum col 9 of 4",
     {4, 1, 2, {CNT, {SC_MAGG_SUM, 9, SC_TYPE_I64, SC_MAGG_ALL}}},
     SC_ESCHEMA,
     "col",
     "term 1"},
    {"count filter 4 of 4",
     {4, 1, 2, {CNT, {SC_MAGG_COUNT, 0, SC_TYPE_I64, 4}}},
     SC_ESCHEMA,
     "filter",
     "term 1"},
    {"count_distinct filter 1000",
     {4, 1, 2, {CNT, {SC_MAGG_COUNT_DISTINCT, 2, SC_TYPE_I64, 1000}}},
     SC_ESCHEMA,
     "filter",
     "term 1"},
    {"filter on sum",
     {4, 1, 2, {CNT, {SC_MAGG_SUM, 2, SC_TYPE_I64, 3}}},
     SC_EINVAL,
     "filter",
     "term 1"},
    {"filter on avg",
     {4, 1, 2, {CNT, {SC_MAGG_AVG, 2, SC_TYPE_I64, 3}}},
     SC_EINVAL,
     "filter",
     "term 1"},
    {"filter on min",
     {4, 1, 2, {CNT, {SC_MAGG_MIN, 2, SC_TYPE_I64, 3}}},
     SC_EINVAL,
     "filter",
     "term 1"},
    {"filter on max",
     {4, 1, 2, {CNT, {SC_MAGG_MAX, 2, SC_TYPE_I64, 0}}},
     SC_EINVAL,
     "filter",
     "term 1"},
    {"sum over f64",
     {4, 1, 2, {CNT, {SC_MAGG_SUM, 2, SC_TYPE_F64, SC_MAGG_ALL}}},
     SC_ETYPE,
     "f64",
     "term 1"},
    {"avg over symbol",
     {4, 1, 2, {CNT, {SC_MAGG_AVG, 2, SC_TYPE_SYMBOL, SC_MAGG_ALL}}},
     SC_ETYPE,
     "symbol",
     "term 1"},
    {"sum over bool",
     {4, 1, 2, {CNT, {SC_MAGG_SUM, 2, SC_TYPE_BOOL, SC_MAGG_ALL}}},
     SC_ETYPE,
     "bool",
     "term 1"},
    {"min over no type",
     {4, 1, 2, {CNT, {SC_MAGG_MIN, 2, (enum sc_type)9, SC_MAGG_ALL}}},
     SC_ETYPE,
     "type",
     "term 1"},
    {"kind 6",
     {4, 1, 2, {CNT, {(enum sc_magg_kind)6, 2, SC_TYPE_I64, SC_MAGG_ALL}}},
     SC_EINVAL,
     "kind",
     "term 1"},
    {"kind -1",
     {4, 1, 2, {CNT, {(enum sc_magg_kind)(-1), 2, SC_TYPE_I64, SC_MAGG_ALL}}},
     SC_EINVAL,
     "kind",
     "term 1"},
    /* Not faults: a COUNT ignores col and col_type, a filter may be any
     * column (a key's too), k may be ncols, k + nterms may be 32. */
    {"count of col 1000 of no type",
     {4, 1, 2, {CNT, {SC_MAGG_COUNT, 1000, (enum sc_type)77, 0}}},
     0,
     NULL,
     NULL},
    {"k == ncols, min of a key column",
     {2, 2, 2, {CNT, {SC_MAGG_MIN, 1, SC_TYPE_SYMBOL, SC_MAGG_ALL}}},
     0,
     NULL,
     NULL},
    {"k + nterms 32, sum and avg of u64",
     {32,
      8,
      24,
      {CNT,
       {SC_MAGG_SUM, 31, SC_TYPE_U64, SC_MAGG_ALL},
       {SC_MAGG_AVG, 9, SC_TYPE_U64, SC_MAGG_ALL}}},
     0,
     NULL,
     NULL},
};

static void
assert_detail(const char *what, const char *who, const struct bad_spec *b)
{
	const char *d = sc_errdetail();

	cr_assert(strstr(d, who) != NULL, "%s: \"%s\" does not name %s", what,
		  d, who);
	cr_assert(!b->names || opgen_names_one_of(d, b->names),
		  "%s: \"%s\" names none of %s", what, d, b->names);
	cr_assert(!b->value || opgen_names_one_of(d, b->value),
		  "%s: \"%s\" names none of %s", what, d, b->value);
}

Test(multiagg, bad_specs_are_refused_with_a_code_and_a_detail_naming_the_fault)
{
	struct sc_multiagg_spec ok = {4, 1, 1, {CNT}};
	struct sc_multiagg *m, *sentinel = (struct sc_multiagg *)&ok;

	for (size_t i = 0; i < sizeof(bad_specs) / sizeof(bad_specs[0]); i++) {
		const struct bad_spec *b = &bad_specs[i];
		int rc;

		sc_error_clear();
		rc = sc_multiagg_spec_check(&b->s, "the_caller");
		cr_assert_eq(rc, b->code, "%s: spec_check %s, want %s (%s)",
			     b->what, sc_errname(rc), sc_errname(b->code),
			     sc_errmsg());
		if (b->code)
			assert_detail(b->what, "the_caller", b);
		m = sentinel;
		rc = sc_multiagg_create(&b->s, &m);
		cr_assert_eq(rc, b->code, "%s: create %s, want %s (%s)",
			     b->what, sc_errname(rc), sc_errname(b->code),
			     sc_errmsg());
		if (b->code == 0) {
			cr_assert_neq(m, sentinel);
			sc_multiagg_destroy(m);
			continue;
		}
		cr_assert_eq(m, sentinel, "%s: a refused create wrote *out",
			     b->what);
		assert_detail(b->what, "sc_multiagg_create", b);
	}
	/* NULL arguments. */
	cr_assert_eq(sc_multiagg_spec_check(NULL, "the_caller"), SC_EINVAL);
	cr_assert(opgen_names_one_of(sc_errdetail(), "spec"), "%s",
		  sc_errdetail());
	m = sentinel;
	cr_assert_eq(sc_multiagg_create(NULL, &m), SC_EINVAL);
	cr_assert(opgen_names_one_of(sc_errdetail(), "spec"), "%s",
		  sc_errdetail());
	cr_assert_eq(m, sentinel);
	cr_assert_eq(sc_multiagg_create(&ok, NULL), SC_EINVAL);
	cr_assert(opgen_names_one_of(sc_errdetail(), "out"), "%s",
		  sc_errdetail());
}

/* (key, v, f) rows for the by-hand tests. */
static const struct sc_multiagg_spec kvf = {
    3,
    1,
    4,
    {CNT,
     {SC_MAGG_COUNT_DISTINCT, 1, SC_TYPE_I64, 2},
     {SC_MAGG_SUM, 1, SC_TYPE_I64, SC_MAGG_ALL},
     {SC_MAGG_MIN, 1, SC_TYPE_I64, SC_MAGG_ALL}}};

Test(multiagg, a_delta_of_the_wrong_width_is_eschema_and_changes_nothing)
{
	struct sc_multiagg *a = make(&kvf), *b = make(&kvf);
	uint64_t r1[] = {1, sc_enc_i64(3),  1, 1, sc_enc_i64(5), 0,
			 2, sc_enc_i64(-1), 1};
	uint64_t r2[] = {1, sc_enc_i64(3), 1, 2, sc_enc_i64(4), 1};
	uint64_t narrow[] = {1, sc_enc_i64(7)};
	int64_t w1[] = {1, 2, 1}, w2[] = {-1, 1};
	struct sc_batch *d1 = opgen_batch_of(3, 3, r1, w1),
			*d2 = opgen_batch_of(3, 2, r2, w2);
	struct sc_batch *bad = opgen_batch_of(2, 1, narrow, NULL),
			*empty = opgen_none(2);
	struct sc_batch *oa, *ob, *out;

	cr_assert_eq(sc_multiagg_step(a, d1, &oa), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_multiagg_step(b, d1, &ob), 0, "%s", sc_errmsg());
	sc_batch_release(oa);
	sc_batch_release(ob);
	out = NULL;
	cr_assert_eq(sc_multiagg_step(a, bad, &out), SC_ESCHEMA);
	cr_assert_null(out, "a refused step wrote *out");
	cr_assert(opgen_names_one_of(sc_errdetail(), "2 columns|width|wide"),
		  "%s", sc_errdetail());
	cr_assert(opgen_names_one_of(sc_errdetail(), "sc_multiagg_step"), "%s",
		  sc_errdetail());
	cr_assert_eq(sc_multiagg_step(a, empty, &out), SC_ESCHEMA,
		     "an empty delta of 2 columns is not 3 wide");
	cr_assert_null(out);
	/* a saw a refused step, b did not: the same state. */
	cr_assert_eq(sc_multiagg_groups(a), sc_multiagg_groups(b));
	cr_assert_eq(sc_multiagg_rows(a), sc_multiagg_rows(b));
	cr_assert_eq(sc_multiagg_pending(a), sc_multiagg_pending(b));
	cr_assert_eq(sc_multiagg_step(a, d2, &oa), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_multiagg_step(b, d2, &ob), 0, "%s", sc_errmsg());
	cr_assert(sc_batch_equal(oa, ob), "the refused step changed the state");
	cr_assert_eq(sc_batch_count(oa), 4, "groups 1 and 2 change");
	sc_batch_release(oa);
	sc_batch_release(ob);
	sc_batch_release(d1);
	sc_batch_release(d2);
	sc_batch_release(bad);
	sc_batch_release(empty);
	sc_multiagg_destroy(a);
	sc_multiagg_destroy(b);
}

Test(multiagg, null_arguments_are_einval_and_empty_steps_emit_nothing)
{
	struct sc_multiagg *m = make(&kvf);
	uint64_t row[] = {1, sc_enc_i64(3), 1};
	uint64_t o[] = {1, sc_enc_i64(1), sc_enc_i64(1), sc_enc_i64(3),
			sc_enc_i64(3)};
	struct sc_batch *d = opgen_batch_of(3, 1, row, NULL), *out = NULL;

	cr_assert_eq(sc_multiagg_step(NULL, d, &out), SC_EINVAL);
	cr_assert_null(out);
	cr_assert(opgen_names_one_of(sc_errdetail(), "sc_multiagg_step"), "%s",
		  sc_errdetail());
	cr_assert_eq(sc_multiagg_step(m, d, NULL), SC_EINVAL);
	cr_assert_eq(sc_multiagg_work(NULL, 1), SC_EINVAL);
	cr_assert_eq(sc_multiagg_check(NULL), SC_EINVAL);
	cr_assert_eq(sc_multiagg_pending(NULL), 0);
	cr_assert_eq(sc_multiagg_groups(NULL), 0);
	cr_assert_eq(sc_multiagg_rows(NULL), 0);
	cr_assert_eq(sc_multiagg_bytes(NULL), 0);
	sc_multiagg_destroy(NULL);
	/* The refused step with d absorbed nothing: d's row appears now. */
	step_expect(m, NULL, opgen_none(5), "a NULL delta");
	step_expect(m, opgen_none(3), opgen_none(5), "an empty delta");
	step_expect(m, d, opgen_batch_of(5, 1, o, NULL),
		    "the row after refusals");
	cr_assert_eq(sc_multiagg_groups(m), 1);
	step_expect(m, NULL, opgen_none(5), "a NULL delta after a row");
	sc_multiagg_destroy(m);
}

/* --- values outside int64 ------------------------------------------------- */

#define I(x) sc_enc_i64(x)

Test(multiagg, a_sum_outside_int64_has_no_row_and_check_is_eoverflow)
{
	/* (key, v): SUM(v), COUNT(*), MAX(v). */
	struct sc_multiagg_spec s = {
	    2,
	    1,
	    3,
	    {{SC_MAGG_SUM, 1, SC_TYPE_I64, SC_MAGG_ALL},
	     CNT,
	     {SC_MAGG_MAX, 1, SC_TYPE_I64, SC_MAGG_ALL}}};
	struct sc_multiagg *m = make(&s);
	uint64_t big[] = {5, I(INT64_MAX)}, one[] = {5, I(1)};
	uint64_t up[] = {5, I(1), 6, I(2)};
	uint64_t low[] = {7, I(INT64_MIN), 7, I(-1)}, lowest[] = {7, I(-1)};
	uint64_t o5[] = {5, I(INT64_MAX), I(1), I(INT64_MAX)};
	uint64_t o5_o6[] = {5, I(INT64_MAX), I(1), I(INT64_MAX),
			    6, I(2),	     I(1), I(2)};
	uint64_t o7[] = {7, I(INT64_MIN), I(1), I(INT64_MIN)};
	int64_t minus = -1, w_o5_o6[] = {-1, 1};

	step_expect(m, opgen_batch_of(2, 1, big, NULL),
		    opgen_batch_of(4, 1, o5, NULL), "sum INT64_MAX");
	cr_assert_eq(sc_multiagg_check(m), 0, "%s", sc_errmsg());
	/* INT64_MAX + 1: group 5 stays live, its row goes; 6 comes. */
	step_expect(m, opgen_batch_of(2, 2, up, NULL),
		    opgen_batch_of(4, 2, o5_o6, w_o5_o6), "sum INT64_MAX + 1");
	cr_assert_eq(sc_multiagg_groups(m), 2, "the delta was absorbed");
	cr_assert_eq(sc_multiagg_check(m), SC_EOVERFLOW);
	cr_assert(opgen_names_one_of(sc_errdetail(), "sum"), "%s",
		  sc_errdetail());
	cr_assert(opgen_names_one_of(sc_errdetail(), "1"), "%s",
		  sc_errdetail());
	/* INT64_MIN - 1 in group 7: no row either; two groups now. */
	step_expect(m, opgen_batch_of(2, 2, low, NULL), opgen_none(4),
		    "sum INT64_MIN - 1");
	cr_assert_eq(sc_multiagg_groups(m), 3);
	cr_assert_eq(sc_multiagg_check(m), SC_EOVERFLOW);
	cr_assert(opgen_names_one_of(sc_errdetail(), "2"), "%s: two groups",
		  sc_errdetail());
	/* Back to INT64_MAX in 5, to INT64_MIN in 7: the rows come back. */
	step_expect(m, opgen_batch_of(2, 1, one, &minus),
		    opgen_batch_of(4, 1, o5, NULL),
		    "group 5 back to INT64_MAX");
	cr_assert_eq(sc_multiagg_check(m), SC_EOVERFLOW, "group 7's is out");
	step_expect(m, opgen_batch_of(2, 1, lowest, &minus),
		    opgen_batch_of(4, 1, o7, NULL),
		    "group 7 back to INT64_MIN");
	cr_assert_eq(sc_multiagg_check(m), 0, "%s", sc_errmsg());
	sc_multiagg_destroy(m);
}

Test(multiagg, a_u64_sum_past_int64_max_has_no_row_until_it_fits)
{
	/* (key, v u64): SUM(v), COUNT(*). */
	struct sc_multiagg_spec s = {
	    2, 1, 2, {{SC_MAGG_SUM, 1, SC_TYPE_U64, SC_MAGG_ALL}, CNT}};
	struct sc_multiagg *m = make(&s);
	uint64_t big[] = {5, sc_enc_u64(UINT64_C(1) << 63)};
	uint64_t back[] = {5, sc_enc_u64(1), 5, sc_enc_u64(0)};
	int64_t w_back[] = {-1, 1};
	uint64_t o5[] = {5, I(INT64_MAX), I(1)};

	step_expect(m, opgen_batch_of(2, 1, big, NULL), opgen_none(3),
		    "sum 2^63");
	cr_assert_eq(sc_multiagg_groups(m), 1);
	cr_assert_eq(sc_multiagg_check(m), SC_EOVERFLOW);
	step_expect(m, opgen_batch_of(2, 2, back, w_back),
		    opgen_batch_of(3, 1, o5, NULL), "sum 2^63 - 1");
	cr_assert_eq(sc_multiagg_check(m), 0, "%s", sc_errmsg());
	sc_multiagg_destroy(m);
}

/* Feed rows (key, id, v) x w to a fresh multi-aggregate of `s`: all in
 * one step, and one step per row; every step must succeed and the
 * outputs' integrals must agree, one row. The partial integrals of the
 * second run leave int64 where the whole does not. */
static void
same_in_any_steps(const struct sc_multiagg_spec *s, size_t n,
		  const uint64_t *in, const int64_t *w)
{
	uint32_t width = s->k + s->nterms;
	struct sc_batch *I[2] = {NULL, NULL};

	for (int run = 0; run < 2; run++) {
		struct sc_multiagg *m = make(s);
		size_t per = run == 0 ? n : 1;

		I[run] = opgen_none(width);
		for (size_t i = 0; i < n; i += per) {
			struct sc_batch *d =
			    opgen_batch_of(3, per, in + i * 3, w + i);
			struct sc_batch *out;

			cr_assert_eq(sc_multiagg_step(m, d, &out), 0,
				     "run %d, step %zu: %s", run, i / per,
				     sc_errmsg());
			I[run] = plus(I[run], out);
			sc_batch_release(out);
			sc_batch_release(d);
		}
		cr_assert_eq(sc_multiagg_check(m), 0, "run %d: %s", run,
			     sc_errmsg());
		sc_multiagg_destroy(m);
	}
	cr_assert(sc_batch_equal(I[0], I[1]),
		  "one step and one step per row settle differently");
	cr_assert_eq(sc_batch_count(I[0]), 1);
	sc_batch_release(I[0]);
	sc_batch_release(I[1]);
}

Test(multiagg, a_sum_whose_partial_integral_leaves_int64_settles_as_one_step)
{
	/* (key, id, v): SUM(v), COUNT(*), AVG(v), MAX(v). */
	struct sc_multiagg_spec s = {
	    3,
	    1,
	    4,
	    {{SC_MAGG_SUM, 2, SC_TYPE_I64, SC_MAGG_ALL},
	     CNT,
	     {SC_MAGG_AVG, 2, SC_TYPE_I64, SC_MAGG_ALL},
	     {SC_MAGG_MAX, 2, SC_TYPE_I64, SC_MAGG_ALL}}};
	uint64_t up[] = {5, 1, I(INT64_MAX), 5, 2, I(1), 5, 2, I(1)};
	uint64_t down[] = {5, 1, I(INT64_MIN), 5, 2, I(-1), 5, 2, I(-1)};
	int64_t w[] = {1, 1, -1};

	same_in_any_steps(&s, 3, up, w);
	same_in_any_steps(&s, 3, down, w);
}

/* --- groups that empty ---------------------------------------------------- */

Test(multiagg, a_group_whose_weight_returns_to_zero_emits_only_its_retraction)
{
	/* (key, v, f): COUNT(*), COUNT(*) FILTER f, COUNT(DISTINCT v),
	 * COUNT(DISTINCT v) FILTER f, SUM(v), AVG(v): no trace. */
	struct sc_multiagg_spec s = {
	    3,
	    1,
	    6,
	    {CNT,
	     {SC_MAGG_COUNT, 0, SC_TYPE_I64, 2},
	     {SC_MAGG_COUNT_DISTINCT, 1, SC_TYPE_I64, SC_MAGG_ALL},
	     {SC_MAGG_COUNT_DISTINCT, 1, SC_TYPE_I64, 2},
	     {SC_MAGG_SUM, 1, SC_TYPE_I64, SC_MAGG_ALL},
	     {SC_MAGG_AVG, 1, SC_TYPE_I64, SC_MAGG_ALL}}};
	struct sc_multiagg *m = make(&s);
	uint64_t d1[] = {5, I(3), 1, 5, I(4), 0, 6, I(7), 1};
	int64_t w1[] = {1, 2, 1}, w2[] = {-1, -2};
	/* Group 6 at total weight 0 with rows (and a sum of 7) left. */
	uint64_t d3[] = {6, I(7), 1, 6, I(9), 0, 6, I(2), 0};
	int64_t w3[] = {-1, 1, -1};
	int64_t w4[] = {-1, 1};
	uint64_t o5[] = {
	    5, I(3), I(1), I(2), I(1), I(11), sc_enc_f64(11.0 / 3.0)};
	uint64_t o6[] = {6, I(1), I(1), I(1), I(1), I(7), sc_enc_f64(7.0)};
	uint64_t o56[14];
	int64_t wm = -1;
	size_t bytes = 0;

	memcpy(o56, o5, sizeof(o5));
	memcpy(o56 + 7, o6, sizeof(o6));
	for (int cycle = 0; cycle < 2; cycle++) {
		step_expect(m, opgen_batch_of(3, 3, d1, w1),
			    opgen_batch_of(7, 2, o56, NULL),
			    "groups 5 and 6 appear: only their +");
		cr_assert_eq(sc_multiagg_groups(m), 2);
		cr_assert_gt(sc_multiagg_rows(m), 0);
		step_expect(m, opgen_batch_of(3, 2, d1, w2),
			    opgen_batch_of(7, 1, o5, &wm),
			    "group 5 retracted: only its -");
		cr_assert_eq(sc_multiagg_groups(m), 1, "group 5 is freed");
		step_expect(m, opgen_batch_of(3, 3, d3, w3),
			    opgen_batch_of(7, 1, o6, &wm),
			    "group 6 at weight 0: only its -");
		cr_assert_eq(sc_multiagg_groups(m), 1,
			     "group 6's sum and distinct row are not 0 yet");
		step_expect(m, opgen_batch_of(3, 2, d3 + 3, w4), opgen_none(7),
			    "group 6's last rows retracted: no row changes");
		cr_assert_eq(sc_multiagg_groups(m), 0, "cycle %d", cycle);
		cr_assert_eq(sc_multiagg_rows(m), 0, "cycle %d", cycle);
		cr_assert_eq(sc_multiagg_check(m), 0);
		/* The second cycle reuses the room of the first. */
		if (cycle == 0)
			bytes = sc_multiagg_bytes(m);
		else
			cr_assert_leq(sc_multiagg_bytes(m), bytes,
				      "%zu bytes after the second cycle, %zu "
				      "after the first",
				      sc_multiagg_bytes(m), bytes);
	}
	sc_multiagg_destroy(m);
}

Test(multiagg, min_and_max_show_the_next_value_and_their_group_goes_at_the_end)
{
	/* (key, v): MIN(v), MAX(v), COUNT(*). */
	struct sc_multiagg_spec s = {
	    2,
	    1,
	    3,
	    {{SC_MAGG_MIN, 1, SC_TYPE_I64, SC_MAGG_ALL},
	     {SC_MAGG_MAX, 1, SC_TYPE_I64, SC_MAGG_ALL},
	     CNT}};
	struct sc_multiagg *m = make(&s);
	uint64_t in[] = {5, I(3), 5, I(8), 5, I(1)};
	uint64_t a[] = {5, I(1), I(8), I(3)};
	uint64_t b[] = {5, I(1), I(8), I(3), 5, I(3), I(8), I(2)};
	uint64_t c[] = {5, I(3), I(8), I(2), 5, I(3), I(3), I(1)};
	uint64_t d[] = {5, I(3), I(3), I(1)};
	/* A value of negative weight is no MIN: 2 x -1 and 9 x +2. */
	uint64_t neg[] = {5, I(2), 5, I(9)};
	int64_t wneg[] = {-1, 2}, wback[] = {1, -2};
	uint64_t e[] = {5, I(9), I(9), I(1)};
	int64_t swap[] = {-1, 1}, wm = -1;

	step_expect(m, opgen_batch_of(2, 3, in, NULL),
		    opgen_batch_of(4, 1, a, NULL), "three values");
	step_expect(m, opgen_batch_of(2, 1, in + 4, &wm),
		    opgen_batch_of(4, 2, b, swap),
		    "the MIN retracted: the next shows");
	cr_assert_eq(sc_multiagg_work(m, 3), 0, "%s", sc_errmsg());
	step_expect(m, opgen_batch_of(2, 1, in + 2, &wm),
		    opgen_batch_of(4, 2, c, swap),
		    "the MAX retracted: the next shows");
	step_expect(m, opgen_batch_of(2, 1, in, &wm),
		    opgen_batch_of(4, 1, d, &wm),
		    "the last value retracted: only the -");
	cr_assert_eq(sc_multiagg_groups(m), 0, "the group is freed");
	step_expect(m, opgen_batch_of(2, 2, neg, wneg),
		    opgen_batch_of(4, 1, e, NULL),
		    "a negative row beside a positive one");
	step_expect(m, opgen_batch_of(2, 2, neg, wback),
		    opgen_batch_of(4, 1, e, &wm), "both retracted");
	cr_assert_eq(sc_multiagg_groups(m), 0, "the group is freed");
	cr_assert_eq(sc_multiagg_work(m, SIZE_MAX), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_multiagg_pending(m), 0);
	cr_assert_eq(sc_multiagg_groups(m), 0);
	sc_multiagg_destroy(m);
}

/* Two rows of one (key, v) whose weights sum past int64 in one step: the
 * trace keeps them as two rows, the value is present while their summed
 * weight is positive. */
Test(multiagg, min_max_take_two_rows_of_one_value_at_int64_max_in_one_step)
{
	static const enum sc_magg_kind kinds[] = {SC_MAGG_MIN, SC_MAGG_MAX};

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		/* (key, v, id): MIN(v) or MAX(v). */
		struct sc_multiagg_spec s = {
		    3, 1, 1, {{kinds[i], 1, SC_TYPE_I64, SC_MAGG_ALL}}};
		struct sc_multiagg *m = make(&s);
		uint64_t in[] = {1, I(5), 1, 1, I(5), 2};
		uint64_t o[] = {1, I(5)};
		int64_t w[] = {INT64_MAX, INT64_MAX}, back = -INT64_MAX;
		int64_t wm = -1;
		const char *kn = kind_names[kinds[i]];
		char what[3][64];

		(void)snprintf(what[0], sizeof(what[0]),
			       "%s: two rows of v 5 at INT64_MAX", kn);
		(void)snprintf(what[1], sizeof(what[1]),
			       "%s: one row retracted, still 5", kn);
		(void)snprintf(what[2], sizeof(what[2]),
			       "%s: the other retracted, the group goes", kn);
		step_expect(m, opgen_batch_of(3, 2, in, w),
			    opgen_batch_of(2, 1, o, NULL), what[0]);
		cr_assert_eq(sc_multiagg_groups(m), 1, "%s", what[0]);
		step_expect(m, opgen_batch_of(3, 1, in, &back), opgen_none(2),
			    what[1]);
		cr_assert_eq(sc_multiagg_groups(m), 1, "%s", what[1]);
		step_expect(m, opgen_batch_of(3, 1, in + 3, &back),
			    opgen_batch_of(2, 1, o, &wm), what[2]);
		cr_assert_eq(sc_multiagg_groups(m), 0, "%s", what[2]);
		cr_assert_eq(sc_multiagg_work(m, SIZE_MAX), 0, "%s",
			     sc_errmsg());
		cr_assert_eq(sc_multiagg_rows(m), 0, "%s", what[2]);
		cr_assert_eq(sc_multiagg_check(m), 0, "%s", sc_errmsg());
		sc_multiagg_destroy(m);
	}
}

/* sc_multiagg_work(m, SIZE_MAX) does all the merge work owed, with one
 * MIN/MAX term or several. */
Test(multiagg, unbounded_work_leaves_no_merge_work_owed)
{
	for (uint32_t nmm = 1; nmm <= 3; nmm++) {
		/* (key, v): COUNT(*), then MIN(v), MAX(v), MIN(v). */
		struct sc_multiagg_spec s = {
		    2,
		    1,
		    1 + nmm,
		    {CNT,
		     {SC_MAGG_MIN, 1, SC_TYPE_I64, SC_MAGG_ALL},
		     {SC_MAGG_MAX, 1, SC_TYPE_I64, SC_MAGG_ALL},
		     {SC_MAGG_MIN, 1, SC_TYPE_I64, SC_MAGG_ALL}}};
		struct sc_multiagg *m = make(&s);

		for (int64_t i = 0; i < 64; i++) {
			uint64_t row[] = {(uint64_t)i % 3, I(i)};
			struct sc_batch *d = opgen_batch_of(2, 1, row, NULL),
					*out;

			cr_assert_eq(sc_multiagg_step(m, d, &out), 0, "%s",
				     sc_errmsg());
			sc_batch_release(out);
			sc_batch_release(d);
		}
		cr_assert_gt(sc_multiagg_pending(m), 0,
			     "%u terms: 64 one-row steps owe no work", nmm);
		cr_assert_eq(sc_multiagg_work(m, SIZE_MAX), 0, "%s",
			     sc_errmsg());
		cr_assert_eq(sc_multiagg_pending(m), 0,
			     "%u MIN/MAX terms: %zu units owed after "
			     "sc_multiagg_work(m, SIZE_MAX)",
			     nmm, sc_multiagg_pending(m));
		sc_multiagg_destroy(m);
	}
}

Test(multiagg, count_distinct_counts_a_value_while_its_weight_is_positive)
{
	/* (key, v, id): COUNT(*), COUNT(DISTINCT v). */
	struct sc_multiagg_spec s = {
	    3,
	    1,
	    2,
	    {CNT, {SC_MAGG_COUNT_DISTINCT, 1, SC_TYPE_I64, SC_MAGG_ALL}}};
	struct sc_multiagg *m = make(&s);
	uint64_t d1[] = {1, I(7), 1, 1, I(7), 2, 1, I(8), 3, 1, I(9), 4};
	int64_t w1[] = {1, 1, -1, 1};
	uint64_t d3[] = {1, I(7), 2, 1, I(9), 5};
	int64_t w3[] = {-1, 1};
	uint64_t d4[] = {1, I(8), 6};
	int64_t w4 = 2, wm = -1;
	uint64_t o1[] = {1, I(2), I(2)};
	uint64_t o2[] = {1, I(2), I(2), 1, I(1), I(2)};
	uint64_t o3[] = {1, I(1), I(2), 1, I(1), I(1)};
	uint64_t o4[] = {1, I(1), I(1), 1, I(3), I(2)};
	int64_t swap[] = {-1, 1};

	step_expect(m, opgen_batch_of(3, 4, d1, w1),
		    opgen_batch_of(3, 1, o1, NULL),
		    "7 twice, 8 at -1, 9 once: 2 values");
	step_expect(m, opgen_batch_of(3, 1, d1, &wm),
		    opgen_batch_of(3, 2, o2, swap), "7 at 1 still counts");
	step_expect(m, opgen_batch_of(3, 2, d3, w3),
		    opgen_batch_of(3, 2, o3, swap), "7 at 0 leaves");
	step_expect(m, opgen_batch_of(3, 1, d4, &w4),
		    opgen_batch_of(3, 2, o4, swap), "8 at -1 + 2 comes");
	sc_multiagg_destroy(m);
}

/* --- Nexmark q15 ---------------------------------------------------------- */

/*
 * Per day: COUNT(*) and COUNT(*) FILTER rank_i, COUNT(DISTINCT bidder) and
 * COUNT(DISTINCT bidder) FILTER rank_i, the same of auction, for the three
 * price ranks (< 10000, < 1000000, the rest). Input rows (day, rank1,
 * rank2, rank3, bidder, auction, price), the ranks computed ahead (by a
 * map in a circuit, by bid() here).
 */
static struct sc_multiagg_spec
q15_spec(void)
{
	struct sc_multiagg_spec s = {.ncols = 7, .k = 1, .nterms = 12};

	for (uint32_t i = 0; i < 4; i++) {
		uint32_t f = i == 0 ? SC_MAGG_ALL : i;

		s.terms[i] =
		    (struct sc_magg_term){SC_MAGG_COUNT, 0, SC_TYPE_I64, f};
		s.terms[4 + i] = (struct sc_magg_term){SC_MAGG_COUNT_DISTINCT,
						       4, SC_TYPE_I64, f};
		s.terms[8 + i] = (struct sc_magg_term){SC_MAGG_COUNT_DISTINCT,
						       5, SC_TYPE_I64, f};
	}
	return s;
}

/* A delta of bids {day, bidder, auction, price, weight}. */
static struct sc_batch *
bids(size_t n, const int64_t (*b)[5])
{
	struct sc_batch_builder bb;
	struct sc_batch *out;

	cr_assert_eq(sc_batch_builder_init(&bb, 7), 0);
	for (size_t i = 0; i < n; i++) {
		int64_t price = b[i][3];
		uint64_t row[7] = {
		    I(b[i][0]),
		    sc_enc_bool(price < 10000),
		    sc_enc_bool(price >= 10000 && price < 1000000),
		    sc_enc_bool(price >= 1000000),
		    I(b[i][1]),
		    I(b[i][2]),
		    I(price)};

		cr_assert_eq(sc_batch_builder_push(&bb, row, 7, b[i][4]), 0);
	}
	cr_assert_eq(sc_batch_builder_finish(&bb, &out), 0);
	sc_batch_builder_fini(&bb);
	return out;
}

/* Output rows {day, the 12 values, weight}. */
static struct sc_batch *
days(size_t n, const int64_t (*d)[14])
{
	struct sc_batch_builder bb;
	struct sc_batch *out;

	cr_assert_eq(sc_batch_builder_init(&bb, 13), 0);
	for (size_t i = 0; i < n; i++) {
		uint64_t row[13];

		for (int c = 0; c < 13; c++)
			row[c] = I(d[i][c]);
		cr_assert_eq(sc_batch_builder_push(&bb, row, 13, d[i][13]), 0);
	}
	cr_assert_eq(sc_batch_builder_finish(&bb, &out), 0);
	sc_batch_builder_fini(&bb);
	return out;
}

Test(multiagg, nexmark_q15_counts_bids_bidders_and_auctions_per_day_and_rank)
{
	struct sc_multiagg_spec s = q15_spec();
	struct sc_multiagg *m = make(&s);
	static const int64_t b1[][5] = {
	    {1, 100, 1, 50, 1},	     /* rank 1 */
	    {1, 100, 1, 20000, 1},   /* rank 2 */
	    {1, 101, 2, 5000, 1},    /* rank 1 */
	    {1, 102, 1, 2000000, 1}, /* rank 3 */
	    {1, 100, 3, 70, 1},	     /* rank 1 */
	    {2, 101, 4, 10000, 1},   /* rank 2 (its lower bound) */
	    {2, 101, 4, 999999, 1},  /* rank 2 */
	};
	/* day, bids total r1 r2 r3, bidders total r1 r2 r3, auctions total
	 * r1 r2 r3, weight. */
	static const int64_t o1[][14] = {
	    {1, 5, 3, 1, 1, 3, 2, 1, 1, 3, 3, 1, 1, 1},
	    {2, 2, 0, 2, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1},
	};
	/* Bidder 101's one bid of day 1 retracted; bidder 103 bids in
	 * rank 2 on auction 2. */
	static const int64_t b2[][5] = {
	    {1, 101, 2, 5000, -1},
	    {1, 103, 2, 30000, 1},
	};
	static const int64_t o2[][14] = {
	    {1, 5, 3, 1, 1, 3, 2, 1, 1, 3, 3, 1, 1, -1},
	    {1, 5, 2, 2, 1, 3, 1, 2, 1, 3, 2, 2, 1, 1},
	};
	/* Day 2's bids retracted: its row goes, day 1's stays. */
	static const int64_t b3[][5] = {
	    {2, 101, 4, 10000, -1},
	    {2, 101, 4, 999999, -1},
	};
	static const int64_t o3[][14] = {
	    {2, 2, 0, 2, 0, 1, 0, 1, 0, 1, 0, 1, 0, -1},
	};

	step_expect(m, bids(7, b1), days(2, o1), "two days");
	cr_assert_eq(sc_multiagg_groups(m), 2);
	step_expect(m, bids(2, b2), days(2, o2), "a bid replaced in day 1");
	step_expect(m, bids(2, b3), days(1, o3), "day 2 retracted");
	cr_assert_eq(sc_multiagg_groups(m), 1);
	cr_assert_eq(sc_multiagg_check(m), 0);
	sc_multiagg_destroy(m);
}
