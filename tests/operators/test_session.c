/*
 * test_session.c - session windows per group against a from-scratch
 * reference after every step of random delta sequences that retract rows
 * (sessions split), land rows between sessions (sessions merge), repeat
 * times in other rows and leave times at summed weight zero or below (with
 * random merge work in between); the same input cut into other steps;
 * merges, splits, the gap's edge and INT64_MAX ends by hand; a long
 * advancing stream whose steps touch only its last session; bad specs and
 * bad input, which must change nothing; sessions withheld for counts
 * outside int64.
 *
 * The reference reads session.h's definitions with plain loops over the
 * naive Z-sets of zset_gen.h and __int128 sums; it shares no code with
 * session.c, trace.c or probe.c.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/session.h"
#include "tests/support/op_gen.h"
#include "tests/support/prop.h"
#include "tests/support/zset_gen.h"

#define SUITE "session"
#define STEPS 30
#define TSPAN 30 /* random times lie in base..base + TSPAN */

#define I(x) sc_enc_i64(x)

/* --- the reference -------------------------------------------------------- */

/* One (key, time) of the integral and its multiplicity m(t). */
struct kt {
	const uint64_t *row; /* a row of the integral with that key */
	int64_t t;
	__int128 m; /* the rows' weights summed, each read clamped */
	bool wide;  /* a row's weight is INT64_MAX or more in size */
};

/* A row's integrated weight as the operator reads it (session.h). */
static int64_t
clamped(__int128 w)
{
	return w > INT64_MAX   ? INT64_MAX
	       : w < INT64_MIN ? INT64_MIN
			       : (int64_t)w;
}

/* Key words first (unsigned), then the time (signed). */
static int
kt_cmp(const struct kt *a, const struct kt *b, uint32_t k)
{
	for (uint32_t i = 0; i < k; i++)
		if (a->row[i] != b->row[i])
			return a->row[i] < b->row[i] ? -1 : 1;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	return 0;
}

/* The row of one session, or a count of the withheld. */
static void
ref_flush(const struct sc_session_spec *s, const uint64_t *key, int64_t start,
	  int64_t last, __int128 count, bool wide, struct zref *out,
	  size_t *withheld)
{
	uint64_t row[SC_SCHEMA_MAX_COLS];
	__int128 end = (__int128)last + s->gap;

	if (wide || count > INT64_MAX) {
		(*withheld)++;
		return;
	}
	memcpy(row, key, (size_t)s->k * sizeof(uint64_t));
	row[s->k] = I(start);
	row[s->k + 1] = I(end > INT64_MAX ? INT64_MAX : (int64_t)end);
	row[s->k + 2] = I((int64_t)count);
	zref_add(out, row, 1);
}

/* The sessions of the integral `in` from scratch into out (weight 1 a
 * session); *withheld: sessions with no row; *pairs: the rows of
 * non-zero weight (the trace keeps whole rows). */
static void
ref_sessions(const struct zref *in, const struct sc_session_spec *s,
	     struct zref *out, size_t *withheld, size_t *pairs)
{
	struct kt *v = calloc(in->n + 1, sizeof(*v));
	size_t n = 0;

	cr_assert_not_null(v);
	*withheld = *pairs = 0;
	for (size_t i = 0; i < in->n; i++) {
		const uint64_t *r = in->rows + i * in->ncols;
		struct kt x = {r, sc_dec_i64(r[s->time_col]), clamped(in->w[i]),
			       in->w[i] >= INT64_MAX || in->w[i] <= INT64_MIN};
		size_t j = 0;

		if (in->w[i] == 0)
			continue;
		while (j < n && kt_cmp(&v[j], &x, s->k) != 0)
			j++;
		if (j < n) {
			v[j].m += x.m;
			v[j].wide |= x.wide;
		} else
			v[n++] = x;
	}
	for (size_t i = 1; i < n; i++) /* insertion sort: n is small */
		for (size_t j = i; j > 0 && kt_cmp(&v[j - 1], &v[j], s->k) > 0;
		     j--) {
			struct kt t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	for (size_t i = 0; i < in->n; i++)
		*pairs += in->w[i] != 0; /* the trace keeps whole rows */
	for (size_t i = 0, e; i < n; i = e) {
		const uint64_t *key = v[i].row;
		int64_t start = 0, last = 0;
		__int128 count = 0;
		bool open = false, wide = false;

		for (e = i; e < n && opgen_same_key(v[e].row, key, s->k); e++) {
			if (v[e].m <= 0)
				continue; /* not present */
			if (open && (__int128)v[e].t - last >= s->gap) {
				ref_flush(s, key, start, last, count, wide, out,
					  withheld);
				open = false;
			}
			if (!open) {
				start = v[e].t;
				count = 0;
				wide = false;
				open = true;
			}
			last = v[e].t;
			count += v[e].m;
			wide |= v[e].wide;
		}
		if (open)
			ref_flush(s, key, start, last, count, wide, out,
				  withheld);
	}
	free(v);
}

/* --- random specs and deltas ---------------------------------------------- */

/* Weights of a "big" case: a time of BIG alone fits, four in a session
 * do not; no (key, time) ever holds more than LIM in absolute weights, so
 * that no delta, gathered deltas or their projections leave int64. */
#define BIG (INT64_C(1) << 61)
#define LIM (BIG + 4096)

/* One random case's shape. */
struct gen {
	struct sc_session_spec s;
	int64_t tbase; /* times in tbase..tbase + TSPAN */
	bool big;      /* some rows of weight BIG */
};

/* k of 0..2, 0..2 other columns, the time column anywhere after the
 * key, gap 1..5; one case in four straddles time 0 (whose encodings
 * differ in the top bit), one in five has BIG weights. */
static void
random_gen(struct sc_rng *r, struct gen *g)
{
	uint32_t extra = (uint32_t)sc_rng_below(r, 3);

	memset(g, 0, sizeof(*g));
	g->s.k = (uint32_t)sc_rng_below(r, 3);
	g->s.ncols = g->s.k + 1 + extra;
	g->s.time_col = g->s.k + (uint32_t)sc_rng_below(r, extra + 1);
	g->s.gap = sc_rng_range(r, 1, 5);
	g->tbase = sc_rng_below(r, 4) == 0 ? -TSPAN / 2 : 0;
	g->big = sc_rng_below(r, 5) == 0;
}

static void
gen_print(const struct gen *g, char *buf, size_t len)
{
	(void)snprintf(buf, len,
		       "ncols %u, k %u, time_col %u, gap %lld, times %lld..%lld"
		       "%s",
		       g->s.ncols, g->s.k, g->s.time_col, (long long)g->s.gap,
		       (long long)g->tbase, (long long)g->tbase + TSPAN,
		       g->big ? ", big weights" : "");
}

/* A fresh random row: keys of 3 values a column, other columns 0/1. */
static void
fresh_row(struct sc_rng *r, const struct gen *g, uint64_t *row)
{
	for (uint32_t c = 0; c < g->s.ncols; c++)
		row[c] = c < g->s.k ? sc_rng_below(r, 3) : sc_rng_below(r, 2);
	row[g->s.time_col] = I(g->tbase + (int64_t)sc_rng_below(r, TSPAN + 1));
}

/* Same key and time as row q? */
static bool
same_kt(const struct gen *g, const uint64_t *a, const uint64_t *q)
{
	return opgen_same_key(a, q, g->s.k) &&
	       a[g->s.time_col] == q[g->s.time_col];
}

/* Would (row, w) keep every (key, time) of cur within LIM? */
static bool
fits(const struct gen *g, const struct zref *cur, const uint64_t *row,
     int64_t w)
{
	__int128 abs_sum = 0, mine = zref_weight(cur, row) + w;

	for (size_t i = 0; i < cur->n; i++) {
		const uint64_t *q = cur->rows + i * cur->ncols;

		if (!same_kt(g, q, row) ||
		    memcmp(q, row, (size_t)cur->ncols * 8) == 0)
			continue;
		abs_sum += cur->w[i] < 0 ? -cur->w[i] : cur->w[i];
	}
	abs_sum += mine < 0 ? -mine : mine;
	return abs_sum <= LIM;
}

/* Push (row, w) into the delta and the running integral, unless it would
 * take a (key, time) past LIM. */
static void
put(const struct gen *g, struct sc_batch_builder *b, struct zref *cur,
    const uint64_t *row, int64_t w)
{
	if (w == 0 || !fits(g, cur, row, w))
		return;
	cr_assert_eq(sc_batch_builder_push(b, row, g->s.ncols, w), 0);
	zref_add(cur, row, w);
}

/* The summed weight m(t) of row's (key, time) in cur. */
static __int128
time_weight(const struct gen *g, const struct zref *cur, const uint64_t *row)
{
	__int128 m = 0;

	for (size_t i = 0; i < cur->n; i++)
		if (same_kt(g, cur->rows + i * cur->ncols, row))
			m += cur->w[i];
	return m;
}

/* A fresh row's weight: 1..3, negative one time in five, BIG one in four
 * of a big case's. */
static int64_t
insert_weight(struct sc_rng *r, const struct gen *g)
{
	if (g->big && sc_rng_below(r, 4) == 0)
		return BIG;
	if (sc_rng_below(r, 5) == 0)
		return -1 - (int64_t)sc_rng_below(r, 2);
	return 1 + (int64_t)sc_rng_below(r, 3);
}

/* A live row's weight, as an int64 a retraction may use. */
static int64_t
live_weight(__int128 w)
{
	if (w > LIM || w < -LIM)
		return w > 0 ? BIG : -BIG;
	return (int64_t)w;
}

/* A step's delta against the running integral `cur` (updated): fresh
 * rows, whole and partial retractions, rows near a present time (into
 * the gap between two sessions, or past it), every row of a time
 * retracted (a session splits), a row moved to another time, a second
 * row at a present time, a time brought to summed weight 0 or below.
 * NULL sometimes (an empty step). */
static struct sc_batch *
make_delta(struct sc_rng *r, const struct gen *g, struct zref *cur)
{
	uint32_t tc = g->s.time_col, nc = g->s.ncols;
	struct sc_batch_builder b;
	struct sc_batch *out;
	uint64_t row[SC_SCHEMA_MAX_COLS];
	size_t nops = sc_rng_below(r, 13);

	if (sc_rng_below(r, 10) == 0)
		return NULL;
	cr_assert_eq(sc_batch_builder_init(&b, nc), 0);
	for (size_t i = 0; i < nops; i++) {
		uint64_t op = sc_rng_below(r, 14);
		__int128 w = 0;
		const uint64_t *old = op < 6 ? NULL : opgen_pick(r, cur, &w);
		int64_t wi = live_weight(w), t, d;

		if (!old) {
			fresh_row(r, g, row);
			put(g, &b, cur, row, insert_weight(r, g));
			continue;
		}
		memcpy(row, old, (size_t)nc * sizeof(uint64_t));
		t = sc_dec_i64(row[tc]);
		switch (op) {
		case 6: /* retract all of it */
			put(g, &b, cur, row, -wi);
			break;
		case 7: /* retract part of it */
			put(g, &b, cur, row, wi > 0 ? -1 : 1);
			break;
		case 8: /* near it: into a gap between sessions, or past */
		case 9:
			d = sc_rng_range(r, 1, 2 * g->s.gap);
			row[tc] = I(sc_rng_below(r, 2) ? t + d : t - d);
			for (uint32_t c = g->s.k; c < nc; c++)
				if (c != tc)
					row[c] = sc_rng_below(r, 2);
			put(g, &b, cur, row, 1);
			break;
		case 10: /* every row of its time: the time leaves */
			for (size_t j = 0; j < cur->n; j++) {
				uint64_t q[SC_SCHEMA_MAX_COLS];

				if (cur->w[j] == 0 ||
				    !same_kt(g, cur->rows + j * nc, row))
					continue;
				memcpy(q, cur->rows + j * nc,
				       (size_t)nc * sizeof(uint64_t));
				put(g, &b, cur, q, -live_weight(cur->w[j]));
			}
			break;
		case 11: /* moved to another time (out of order) */
			put(g, &b, cur, row, -wi);
			row[tc] =
			    I(g->tbase + (int64_t)sc_rng_below(r, TSPAN + 1));
			put(g, &b, cur, row, wi);
			break;
		case 12: /* another row at its time */
			for (uint32_t c = g->s.k; c < nc; c++)
				if (c != tc)
					row[c] = sc_rng_below(r, 2);
			put(g, &b, cur, row, sc_rng_below(r, 3) ? 1 : -1);
			break;
		default: /* its time to summed weight 0 or -1 */
			for (uint32_t c = g->s.k; c < nc; c++)
				if (c != tc)
					row[c] = sc_rng_below(r, 2);
			put(g, &b, cur, row,
			    -live_weight(time_weight(g, cur, row)) -
				(int64_t)sc_rng_below(r, 2));
			break;
		}
	}
	cr_assert_eq(sc_batch_builder_finish(&b, &out), 0, "%s", sc_errmsg());
	sc_batch_builder_fini(&b);
	return out;
}

/* One random case: its shape and its deltas. */
struct run {
	struct gen g;
	struct sc_batch *d[STEPS]; /* NULL: an empty step */
	char what[160];
};

static void
make_run(struct sc_rng *r, struct run *run)
{
	struct zref cur;

	random_gen(r, &run->g);
	zref_init(&cur, run->g.s.ncols);
	for (int i = 0; i < STEPS; i++)
		run->d[i] = make_delta(r, &run->g, &cur);
	zref_fini(&cur);
	gen_print(&run->g, run->what, sizeof(run->what));
}

static void
run_fini(struct run *run)
{
	for (int i = 0; i < STEPS; i++)
		sc_batch_release(run->d[i]);
}

static const char *
row_str(const uint64_t *row, uint32_t k, char *buf, size_t len)
{
	int at = snprintf(buf, len, "(");

	for (uint32_t i = 0; row && i < k + 3 && at > 0 && (size_t)at < len;
	     i++) {
		if (i < k)
			at += snprintf(buf + at, len - (size_t)at, "%llx ",
				       (unsigned long long)row[i]);
		else
			at += snprintf(buf + at, len - (size_t)at, "%s%lld",
				       i > k ? " " : "",
				       (long long)sc_dec_i64(row[i]));
	}
	if (at > 0 && (size_t)at < len)
		(void)snprintf(buf + at, len - (size_t)at, ")");
	return buf;
}

/* --- the random tests ----------------------------------------------------- */

#define T_REF "output_integral_is_the_sessions_of_the_input_integral"

Test(session, output_integral_is_the_sessions_of_the_input_integral)
{
	uint64_t base = sc_prop_seed(7301);

	for (uint64_t c = 0; c < sc_prop_count(150); c++) {
		uint64_t seed = base + c;
		struct sc_rng r;
		struct run run;
		struct sc_session *s;
		struct zref in, got;
		uint32_t width;

		sc_rng_seed(&r, seed);
		make_run(&r, &run);
		width = run.g.s.k + 3;
		zref_init(&in, run.g.s.ncols);
		zref_init(&got, width);
		cr_assert_eq(sc_session_create(&run.g.s, &s), 0, "%s: %s",
			     run.what, sc_errmsg());
		for (int step = 0; step < STEPS; step++) {
			struct sc_batch *out = NULL;
			struct zref want;
			const uint64_t *bad = NULL;
			size_t withheld, pairs;
			char rs[200];
			int rc = sc_session_step(s, run.d[step], &out), chk;

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
			ref_sessions(&in, &run.g.s, &want, &withheld, &pairs);
			SC_PROP_ASSERT(
			    seed, SUITE, T_REF, zref_same(&want, &got, &bad),
			    "step %d, %s: session %s want %lld got %lld", step,
			    run.what, row_str(bad, run.g.s.k, rs, sizeof(rs)),
			    zref_w(&want, bad), zref_w(&got, bad));
			chk = sc_session_check(s);
			SC_PROP_ASSERT(
			    seed, SUITE, T_REF,
			    chk == (withheld ? SC_EOVERFLOW : 0),
			    "step %d, %s: check %s with %zu sessions withheld",
			    step, run.what, sc_errname(chk), withheld);
			SC_PROP_ASSERT(
			    seed, SUITE, T_REF, sc_session_rows(s) >= pairs,
			    "step %d, %s: %zu rows held, %zu rows of "
			    "non-zero weight",
			    step, run.what, sc_session_rows(s), pairs);
			zref_fini(&want);
			if (sc_rng_below(&r, 2))
				cr_assert_eq(
				    sc_session_work(s, sc_rng_below(&r, 40)), 0,
				    "%s", sc_errmsg());
		}
		cr_assert_eq(sc_session_work(s, SIZE_MAX), 0, "%s",
			     sc_errmsg());
		SC_PROP_ASSERT(seed, SUITE, T_REF, sc_session_pending(s) == 0,
			       "%s: %zu units owed after "
			       "sc_session_work(s, SIZE_MAX)",
			       run.what, sc_session_pending(s));
		sc_session_destroy(s);
		zref_fini(&in);
		zref_fini(&got);
		run_fini(&run);
	}
}

/* The integral of s's outputs over `n` steps of d (NULLs allowed) into
 * got, with random merge work between steps. */
static int
feed(struct sc_rng *r, struct sc_session *s, struct sc_batch *const *d,
     size_t n, struct zref *got)
{
	for (size_t i = 0; i < n; i++) {
		struct sc_batch *out = NULL;
		int rc = sc_session_step(s, d[i], &out);

		if (rc)
			return rc;
		zref_add_batch(got, out, 1);
		sc_batch_release(out);
		if (sc_rng_below(r, 3) == 0 &&
		    (rc = sc_session_work(s, sc_rng_below(r, 64))) != 0)
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
	cr_assert_eq(sc_batch_add(a, b, &s), 0, "%s", sc_errmsg());
	sc_batch_release(a);
	return s;
}

/* The deltas gathered into runs of random length. */
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

Test(session, cutting_the_input_into_other_steps_settles_to_the_same_integral)
{
	static const char *const names[] = {
	    "a step per delta", "deltas gathered into runs",
	    "the whole input in one step", "half-rows one a step, shuffled"};
	uint64_t base = sc_prop_seed(7401);

	for (uint64_t c = 0; c < sc_prop_count(60); c++) {
		uint64_t seed = base + c;
		struct sc_rng r;
		struct run run;
		struct opgen_cut cuts[4];
		struct sc_batch *all = NULL;
		struct zref in, want;
		size_t withheld, pairs;
		uint32_t width;

		sc_rng_seed(&r, seed);
		make_run(&r, &run);
		width = run.g.s.k + 3;
		memset(cuts, 0, sizeof(cuts));
		zref_init(&in, run.g.s.ncols);
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
		ref_sessions(&in, &run.g.s, &want, &withheld, &pairs);
		for (int k = 0; k < 4; k++) {
			struct sc_session *s;
			struct zref got;
			const uint64_t *bad = NULL;
			char rs[200];
			int rc, chk;

			cr_assert_eq(sc_session_create(&run.g.s, &s), 0);
			zref_init(&got, width);
			rc = feed(&r, s, cuts[k].d, cuts[k].n, &got);
			SC_PROP_ASSERT(seed, SUITE, T_CUT, rc == 0,
				       "%s, %s: %s", names[k], run.what,
				       sc_errmsg());
			SC_PROP_ASSERT(
			    seed, SUITE, T_CUT, zref_same(&want, &got, &bad),
			    "%s (%zu steps), %s: session %s want %lld got %lld",
			    names[k], cuts[k].n, run.what,
			    row_str(bad, run.g.s.k, rs, sizeof(rs)),
			    zref_w(&want, bad), zref_w(&got, bad));
			chk = sc_session_check(s);
			SC_PROP_ASSERT(seed, SUITE, T_CUT,
				       chk == (withheld ? SC_EOVERFLOW : 0),
				       "%s, %s: check %s with %zu sessions "
				       "withheld",
				       names[k], run.what, sc_errname(chk),
				       withheld);
			/* One step: the trace holds one run, the projection
			 * of the whole input. */
			SC_PROP_ASSERT(seed, SUITE, T_CUT,
				       k != 2 || sc_session_rows(s) == pairs,
				       "%s, %s: %zu rows held, %zu rows of "
				       "non-zero weight",
				       names[k], run.what, sc_session_rows(s),
				       pairs);
			sc_session_destroy(s);
			zref_fini(&got);
		}
		for (int k = 0; k < 4; k++)
			opgen_cut_fini(&cuts[k]);
		sc_batch_release(all);
		zref_fini(&in);
		zref_fini(&want);
		run_fini(&run);
	}
}

/* --- helpers for the tests by hand ---------------------------------------- */

static struct sc_session *
make(const struct sc_session_spec *spec)
{
	struct sc_session *s;

	cr_assert_eq(sc_session_create(spec, &s), 0, "%s", sc_errmsg());
	return s;
}

/* Step s with `delta` (released) and expect exactly `want` (released),
 * both printed on a difference. */
static void
step_expect(struct sc_session *s, struct sc_batch *delta, struct sc_batch *want,
	    const char *what)
{
	struct sc_batch *out = NULL;
	char *g = NULL, *w = NULL;

	cr_assert_eq(sc_session_step(s, delta, &out), 0, "%s: %s", what,
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

/* (key, t) rows, one key column, sessions (key, start, end, count). */
static const struct sc_session_spec kt10 = {2, 1, 1, 10};
/* (key, x, t) rows: two rows may share a key and a time. */
static const struct sc_session_spec kxt10 = {3, 1, 2, 10};

/* A delta of (key 5, t) rows of `kt10`, weights w (NULL: 1). */
static struct sc_batch *
times(size_t n, const int64_t *t, const int64_t *w)
{
	uint64_t rows[2 * 64];

	cr_assert_leq(n, 64);
	for (size_t i = 0; i < n; i++) {
		rows[2 * i] = 5;
		rows[2 * i + 1] = I(t[i]);
	}
	return opgen_batch_of(2, n, rows, w);
}

/* A delta of (key 5, x, t) rows of `kxt10`: {x, t, w} each. */
static struct sc_batch *
xts(size_t n, const int64_t (*r)[3])
{
	uint64_t rows[3 * 16];
	int64_t w[16];

	cr_assert_leq(n, 16);
	for (size_t i = 0; i < n; i++) {
		rows[3 * i] = 5;
		rows[3 * i + 1] = (uint64_t)r[i][0];
		rows[3 * i + 2] = I(r[i][1]);
		w[i] = r[i][2];
	}
	return opgen_batch_of(3, n, rows, w);
}

/* Sessions of key 5: {start, end, count, weight} each. */
static struct sc_batch *
sess(size_t n, const int64_t (*o)[4])
{
	uint64_t rows[4 * 16];
	int64_t w[16];

	cr_assert_leq(n, 16);
	for (size_t i = 0; i < n; i++) {
		rows[4 * i] = 5;
		rows[4 * i + 1] = I(o[i][0]);
		rows[4 * i + 2] = I(o[i][1]);
		rows[4 * i + 3] = I(o[i][2]);
		w[i] = o[i][3];
	}
	return opgen_batch_of(4, n, rows, w);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* --- merges and splits by hand -------------------------------------------- */

Test(session,
     a_row_between_sessions_closer_than_two_gaps_merges_and_splits_them)
{
	struct sc_session *s = make(&kt10);
	static const int64_t t1[] = {0, 15}, t2[] = {8};
	static const int64_t o1[][4] = {{0, 10, 1, 1}, {15, 25, 1, 1}};
	static const int64_t o2[][4] = {
	    {0, 10, 1, -1}, {15, 25, 1, -1}, {0, 25, 3, 1}};
	static const int64_t o3[][4] = {
	    {0, 10, 1, 1}, {15, 25, 1, 1}, {0, 25, 3, -1}};
	int64_t minus = -1;

	step_expect(s, times(2, t1, NULL), sess(2, o1),
		    "0 and 15, 15 apart: two sessions");
	step_expect(s, times(1, t2, NULL), sess(3, o2),
		    "8 between them: exactly two retractions and one insert");
	cr_assert_eq(sc_session_check(s), 0, "%s", sc_errmsg());
	step_expect(s, times(1, t2, &minus), sess(3, o3),
		    "8 retracted: split back into the two");
	/* Again, with merge work done in between. */
	cr_assert_eq(sc_session_work(s, SIZE_MAX), 0, "%s", sc_errmsg());
	step_expect(s, times(1, t2, NULL), sess(3, o2), "8 again");
	step_expect(s, times(1, t2, &minus), sess(3, o3), "8 out again");
	sc_session_destroy(s);
}

Test(session, a_row_between_sessions_two_gaps_apart_starts_its_own_session)
{
	struct sc_session *s = make(&kt10);
	static const int64_t t1[] = {0, 20}, t2[] = {10}, t3[] = {11};
	static const int64_t o1[][4] = {{0, 10, 1, 1}, {20, 30, 1, 1}};
	static const int64_t o2[][4] = {{10, 20, 1, 1}};
	static const int64_t o3[][4] = {
	    {10, 20, 1, -1}, {20, 30, 1, -1}, {10, 30, 3, 1}};

	step_expect(s, times(2, t1, NULL), sess(2, o1), "0 and 20");
	step_expect(s, times(1, t2, NULL), sess(1, o2),
		    "10 is a gap from both: a session of its own");
	step_expect(s, times(1, t3, NULL), sess(3, o3),
		    "11 joins 10 and 20, not 0");
	sc_session_destroy(s);
}

Test(session,
     a_time_a_gap_after_the_last_starts_a_session_and_gap_minus_one_joins)
{
	struct sc_session *s = make(&kt10), *u = make(&kt10);
	static const int64_t t0[] = {0}, t10[] = {10}, t9[] = {9}, t18[] = {18};
	static const int64_t o0[][4] = {{0, 10, 1, 1}};
	static const int64_t o10[][4] = {{10, 20, 1, 1}};
	static const int64_t o9[][4] = {
	    {0, 10, 1, -1}, {10, 20, 1, -1}, {0, 20, 3, 1}};
	static const int64_t u9[][4] = {{0, 10, 1, -1}, {0, 19, 2, 1}};
	static const int64_t u18[][4] = {{0, 19, 2, -1}, {0, 28, 3, 1}};

	step_expect(s, times(1, t0, NULL), sess(1, o0), "0");
	step_expect(s, times(1, t10, NULL), sess(1, o10),
		    "10, exactly a gap after 0: a new session");
	step_expect(s, times(1, t9, NULL), sess(3, o9),
		    "9 joins 0 (9 after) and 10 (1 before)");
	step_expect(u, times(1, t0, NULL), sess(1, o0), "0");
	step_expect(u, times(1, t9, NULL), sess(2, u9),
		    "9, a gap - 1 after 0, joins it");
	step_expect(u, times(1, t18, NULL), sess(2, u18),
		    "19, a gap - 1 after 9, joins too");
	sc_session_destroy(s);
	sc_session_destroy(u);
}

Test(session,
     a_session_end_saturates_at_int64_max_and_extreme_times_chain_exactly)
{
	struct sc_session *s = make(&kt10);
	static const struct sc_session_spec widest = {2, 1, 1, INT64_MAX};
	struct sc_session *w = make(&widest);
	const int64_t M = INT64_MAX, m = INT64_MIN;
	const int64_t t1[] = {M - 3}, t2[] = {M}, t3[] = {M - 10}, t4[] = {m};
	const int64_t o1[][4] = {{M - 3, M, 1, 1}};
	const int64_t o2[][4] = {{M - 3, M, 1, -1}, {M - 3, M, 2, 1}};
	const int64_t o3[][4] = {{M - 3, M, 2, -1}, {M - 10, M, 3, 1}};
	const int64_t o4[][4] = {{m, m + 10, 1, 1}};
	/* A gap of INT64_MAX: INT64_MIN and -1 lie exactly a gap apart,
	 * INT64_MIN and -2 a gap - 1. */
	const int64_t w1[] = {m, -1}, w2[] = {-2};
	const int64_t ow1[][4] = {{m, -1, 1, 1}, {-1, M - 1, 1, 1}};
	const int64_t ow2[][4] = {
	    {m, -1, 1, -1}, {-1, M - 1, 1, -1}, {m, M - 1, 3, 1}};
	/* INT64_MAX - 1 and INT64_MAX: a gap after -1 and a gap - 1. */
	const int64_t w3[] = {M - 1}, w4[] = {M};
	const int64_t ow3[][4] = {{M - 1, M, 1, 1}};
	const int64_t ow4[][4] = {{M - 1, M, 1, -1}, {M - 1, M, 2, 1}};

	step_expect(s, times(1, t1, NULL), sess(1, o1),
		    "INT64_MAX - 3 + 10 saturates");
	step_expect(s, times(1, t2, NULL), sess(2, o2), "INT64_MAX joins");
	step_expect(s, times(1, t3, NULL), sess(2, o3),
		    "INT64_MAX - 10 joins (7 before)");
	step_expect(s, times(1, t4, NULL), sess(1, o4),
		    "INT64_MIN: its own session, no wrap-around");
	step_expect(w, times(2, w1, NULL), sess(2, ow1),
		    "gap INT64_MAX: INT64_MIN and -1 a gap apart");
	step_expect(w, times(1, w2, NULL), sess(3, ow2),
		    "gap INT64_MAX: -2 joins INT64_MIN and -1");
	step_expect(w, times(1, w3, NULL), sess(1, ow3),
		    "gap INT64_MAX: INT64_MAX - 1, a gap after -1, starts a "
		    "session whose end saturates");
	step_expect(w, times(1, w4, NULL), sess(2, ow4),
		    "gap INT64_MAX: INT64_MAX joins INT64_MAX - 1");
	cr_assert_eq(sc_session_check(s), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_session_check(w), 0, "%s", sc_errmsg());
	sc_session_destroy(s);
	sc_session_destroy(w);
}

Test(session, a_time_of_summed_weight_zero_or_negative_is_not_present)
{
	struct sc_session *s = make(&kxt10);
	/* {x, t, w}: 5 at 1 - 1 = 0, 20 at -2. */
	static const int64_t d1[][3] = {{1, 5, 1}, {2, 5, -1}, {1, 20, -2}};
	/* 12 and 29: joined through 5 or 20 if those counted. */
	static const int64_t d2[][3] = {{1, 12, 1}, {1, 29, 1}};
	static const int64_t o2[][4] = {{12, 22, 1, 1}, {29, 39, 1, 1}};
	/* 20 to -2 + 3 = 1: present, joins them. */
	static const int64_t d3[][3] = {{2, 20, 3}};
	static const int64_t o3[][4] = {
	    {12, 22, 1, -1}, {29, 39, 1, -1}, {12, 39, 3, 1}};
	/* 20 to 0: gone, they split. */
	static const int64_t d4[][3] = {{2, 20, -1}};
	static const int64_t o4[][4] = {
	    {12, 22, 1, 1}, {29, 39, 1, 1}, {12, 39, 3, -1}};
	/* 5 to 0 + 1: present, joins 12 (7 after). */
	static const int64_t d5[][3] = {{3, 5, 1}};
	static const int64_t o5[][4] = {{12, 22, 1, -1}, {5, 22, 2, 1}};

	step_expect(s, xts(N(d1), d1), opgen_none(4),
		    "times at summed weight 0 and -2: no session");
	cr_assert_eq(sc_session_check(s), 0, "%s", sc_errmsg());
	step_expect(s, xts(N(d2), d2), sess(N(o2), o2),
		    "12 and 29 are not joined through 20 (at -2) or 5 (at 0)");
	step_expect(s, xts(N(d3), d3), sess(N(o3), o3), "20 to weight 1");
	step_expect(s, xts(N(d4), d4), sess(N(o4), o4), "20 back to 0");
	step_expect(s, xts(N(d5), d5), sess(N(o5), o5), "5 to weight 1");
	sc_session_destroy(s);
}

Test(session, count_is_the_sum_of_multiplicities_over_the_rows_of_its_times)
{
	struct sc_session *s = make(&kxt10);
	/* Two rows at 0 (x 1 twice, x 2 once), one at 4 of weight 3. */
	static const int64_t d1[][3] = {{1, 0, 2}, {2, 0, 1}, {7, 4, 3}};
	static const int64_t o1[][4] = {{0, 14, 6, 1}};
	static const int64_t d2[][3] = {{1, 0, -1}};
	static const int64_t o2[][4] = {{0, 14, 6, -1}, {0, 14, 5, 1}};
	/* A row of a time moved to another row of the same time: no
	 * change at all. */
	static const int64_t d3[][3] = {{1, 0, -1}, {9, 0, 1}};

	step_expect(s, xts(N(d1), d1), sess(N(o1), o1), "count 2 + 1 + 3");
	step_expect(s, xts(N(d2), d2), sess(N(o2), o2), "one row less");
	step_expect(s, xts(N(d3), d3), opgen_none(4),
		    "a row replaced by another of its time");
	sc_session_destroy(s);
}

Test(session, keys_have_sessions_of_their_own)
{
	/* (a, b, t): k = 2; rows of keys (1, 1), (1, 2), (2, 1). */
	static const struct sc_session_spec spec = {3, 2, 2, 10};
	struct sc_session *s = make(&spec);
	uint64_t in[] = {1, 1, I(0), 1, 2, I(5), 2, 1, I(9)};
	uint64_t o[] = {1,     1,    I(0), I(10), I(1), 1,     2,   I(5),
			I(15), I(1), 2,	   1,	  I(9), I(19), I(1)};
	uint64_t in2[] = {1, 1, I(4)};
	uint64_t o2[] = {1, 1, I(0), I(10), I(1), 1, 1, I(0), I(14), I(2)};
	int64_t w2[] = {-1, 1};

	step_expect(s, opgen_batch_of(3, 3, in, NULL),
		    opgen_batch_of(5, 3, o, NULL),
		    "three keys 5 apart: three sessions, not one");
	step_expect(s, opgen_batch_of(3, 1, in2, NULL),
		    opgen_batch_of(5, 2, o2, w2),
		    "4 in key (1, 1) touches only that key");
	sc_session_destroy(s);
}

/* --- an advancing stream -------------------------------------------------- */

#define STREAM 10000

/* Feed STREAM in-order rows of key 5, CHUNK a step, with times a random
 * 5..9 apart (gap 10: one session; a time gone opens a gap of 10 or
 * more), each step emitting one row more than the first (-old +new);
 * returns the times (caller frees). */
#define CHUNK 50
static int64_t *
long_session(struct sc_session *s, uint64_t seed)
{
	int64_t *t = malloc(STREAM * sizeof(int64_t)), at = -3000;
	struct sc_rng r;

	cr_assert_not_null(t);
	sc_rng_seed(&r, seed);
	for (size_t i = 0; i < STREAM; i++) {
		t[i] = at;
		at += sc_rng_range(&r, 5, 9);
	}
	for (size_t i = 0; i < STREAM; i += CHUNK) {
		struct sc_batch *d = times(CHUNK, &t[i], NULL), *out;

		cr_assert_eq(sc_session_step(s, d, &out), 0, "%s", sc_errmsg());
		cr_assert_eq(sc_batch_count(out), i == 0 ? 1 : 2,
			     "rows from %zu: %zu rows out", i,
			     sc_batch_count(out));
		sc_batch_release(out);
		sc_batch_release(d);
		cr_assert_eq(sc_session_work(s, 1024), 0, "%s", sc_errmsg());
	}
	return t;
}

Test(session, an_advancing_stream_emits_only_its_last_session_per_step)
{
	struct sc_session *s = make(&kt10);
	struct sc_rng r;
	int64_t at = -3000, first = at, last = at;
	size_t bytes_early = 0;

	sc_rng_seed(&r, 7501);
	for (int64_t i = 0; i < STREAM; i++) {
		struct sc_batch *d = times(1, &at, NULL), *out = NULL;
		const int64_t o[][4] = {{first, last + 10, i, -1},
					{first, at + 10, i + 1, 1}};
		struct sc_batch *want = i == 0 ? sess(1, o + 1) : sess(2, o);

		cr_assert_eq(sc_session_step(s, d, &out), 0, "row %lld: %s",
			     (long long)i, sc_errmsg());
		cr_assert(sc_batch_equal(out, want),
			  "row %lld at %lld: %zu rows, not exactly -(the "
			  "session so far) +(it with the row)",
			  (long long)i, (long long)at, sc_batch_count(out));
		sc_batch_release(out);
		sc_batch_release(want);
		sc_batch_release(d);
		/* A stream's budget: about 2 log2(N) units per row. */
		cr_assert_eq(sc_session_work(s, 32), 0, "%s", sc_errmsg());
		if (i == 100)
			bytes_early = sc_session_bytes(s);
		last = at;
		at += sc_rng_range(&r, 5, 9);
	}
	cr_assert_gt(sc_session_bytes(s), bytes_early,
		     "the trace keeps every time");
	cr_assert_eq(sc_session_check(s), 0, "%s", sc_errmsg());
	sc_session_destroy(s);
}

/* A stream of sessions that close: times 5..9 apart, and one gap in 20
 * of 10..30 (a new session). Each row's step touches only the last
 * session: +(a new one) alone, or -(the last) +(it with the row); then a
 * time retracted in the first session splits that one only. */
Test(session, a_stream_of_closing_sessions_touches_only_its_last_session)
{
	struct sc_session *s = make(&kt10);
	struct sc_rng r;
	int64_t at = 0, start = 0, last = 0, count = 0, minus = -1;
	int64_t t0[4] = {0}, end0 = 0, n0 = 0; /* the first session */
	size_t nsessions = 0;

	sc_rng_seed(&r, 7551);
	for (int64_t i = 0; i < STREAM; i++) {
		struct sc_batch *d = times(1, &at, NULL), *out = NULL, *want;
		bool fresh = i == 0 || at - last >= 10;
		const int64_t o[][4] = {
		    {start, last + 10, count, -1},
		    {fresh ? at : start, at + 10, fresh ? 1 : count + 1, 1}};

		want = fresh ? sess(1, o + 1) : sess(2, o);
		cr_assert_eq(sc_session_step(s, d, &out), 0, "%s", sc_errmsg());
		cr_assert(sc_batch_equal(out, want),
			  "row %lld at %lld (%s): %zu rows out, not only the "
			  "last session's",
			  (long long)i, (long long)at,
			  fresh ? "a new session" : "joins the last",
			  sc_batch_count(out));
		sc_batch_release(out);
		sc_batch_release(want);
		sc_batch_release(d);
		cr_assert_eq(sc_session_work(s, 32), 0, "%s", sc_errmsg());
		if (fresh) {
			nsessions++;
			start = at;
			count = 0;
		}
		count++;
		last = at;
		if (nsessions == 1) {
			if (n0 < 4)
				t0[n0] = at;
			n0++;
			end0 = at + 10;
		}
		at += sc_rng_below(&r, 20) == 0 ? sc_rng_range(&r, 10, 30)
						: sc_rng_range(&r, 5, 9);
	}
	cr_assert_gt(nsessions, 100);
	cr_assert_gt(n0, 3, "the first session has %lld times", (long long)n0);
	{
		/* Its second time out: [t0[0]] and [t0[2] ...]. */
		const int64_t o[][4] = {{t0[0], end0, n0, -1},
					{t0[0], t0[0] + 10, 1, 1},
					{t0[2], end0, n0 - 2, 1}};

		step_expect(s, times(1, &t0[1], &minus), sess(3, o),
			    "a time of the first session retracted");
	}
	cr_assert_eq(sc_session_check(s), 0, "%s", sc_errmsg());
	sc_session_destroy(s);
}

Test(session, a_retraction_deep_in_a_long_session_splits_it_exactly)
{
	struct sc_session *s = make(&kt10);
	int64_t *t = long_session(s, 7601);
	const int64_t last = t[STREAM - 1], n = STREAM;
	const size_t deep = 17;
	int64_t minus = -1;
	/* 17 times before the one retracted, 9982 after: both gaps to it
	 * are 5..9, so the two sides lie 10..18 apart. */
	const int64_t o1[][4] = {
	    {t[0], last + 10, n, -1},
	    {t[0], t[deep - 1] + 10, (int64_t)deep, 1},
	    {t[deep + 1], last + 10, n - 1 - (int64_t)deep, 1}};
	const int64_t o2[][4] = {
	    {t[0], last + 10, n, 1},
	    {t[0], t[deep - 1] + 10, (int64_t)deep, -1},
	    {t[deep + 1], last + 10, n - 1 - (int64_t)deep, -1}};
	const int64_t o3[][4] = {{t[0], last + 10, n, -1},
				 {t[1], last + 10, n - 1, 1}};
	/* The next row of the stream after all that: only the last. */
	const int64_t next = last + 9;
	const int64_t o4[][4] = {{t[1], last + 10, n - 1, -1},
				 {t[1], next + 10, n, 1}};

	cr_assert_eq(sc_session_work(s, SIZE_MAX), 0, "%s", sc_errmsg());
	step_expect(s, times(1, &t[deep], &minus), sess(3, o1),
		    "a time deep in the past retracted: the session splits");
	step_expect(s, times(1, &t[deep], NULL), sess(3, o2),
		    "and put back: one session again");
	step_expect(s, times(1, &t[0], &minus), sess(2, o3),
		    "the first time retracted: the session starts later");
	step_expect(s, times(1, &next, NULL), sess(2, o4),
		    "the stream goes on");
	cr_assert_eq(sc_session_check(s), 0, "%s", sc_errmsg());
	free(t);
	sc_session_destroy(s);
}

/* --- bad arguments -------------------------------------------------------- */

/* A spec and what sc_session_spec_check and sc_session_create must say:
 * the code, and a detail with one of `names` and one of `value` in it
 * ('|'-separated alternatives, any case; NULL: nothing asked). */
struct bad_spec {
	const char *what;
	struct sc_session_spec s;
	int code;
	const char *names, *value;
};

static const struct bad_spec bad_specs[] = {
    {"ncols 0", {0, 0, 0, 10}, SC_ESCHEMA, "ncols|column", "0"},
    {"ncols 33", {33, 1, 1, 10}, SC_ESCHEMA, "ncols|column", "33"},
    {"ncols UINT32_MAX",
     {UINT32_MAX, 1, 1, 10},
     SC_ESCHEMA,
     "ncols|column",
     "4294967295"},
    {"k == ncols", {3, 3, 2, 10}, SC_ESCHEMA, "key|k ", "3"},
    {"k past ncols", {3, 7, 2, 10}, SC_ESCHEMA, "key|k ", "7"},
    {"k + 3 == 33", {32, 30, 31, 10}, SC_ESCHEMA, "key|k |start|count", "30"},
    {"k + 3 == 35", {32, 31, 31, 10}, SC_ESCHEMA, "key|k |start|count", "31"},
    {"time_col in the key", {4, 2, 1, 10}, SC_ESCHEMA, "time", "1"},
    {"time_col 0 with k 1", {2, 1, 0, 10}, SC_ESCHEMA, "time", "0"},
    {"time_col == ncols", {4, 1, 4, 10}, SC_ESCHEMA, "time", "4"},
    {"time_col UINT32_MAX",
     {4, 1, UINT32_MAX, 10},
     SC_ESCHEMA,
     "time",
     "4294967295"},
    {"gap 0", {2, 1, 1, 0}, SC_EINVAL, "gap", "0"},
    {"gap -1", {2, 1, 1, -1}, SC_EINVAL, "gap", "-1"},
    {"gap INT64_MIN",
     {2, 1, 1, INT64_MIN},
     SC_EINVAL,
     "gap",
     "-9223372036854775808"},
    /* Not faults: the widest key (k + 3 == 32), k 0, one column, the
     * time last, the largest gap. */
    {"k 29 of 32", {32, 29, 31, 10}, 0, NULL, NULL},
    {"k 0, one column", {1, 0, 0, 1}, 0, NULL, NULL},
    {"time last of 32", {32, 0, 31, 1}, 0, NULL, NULL},
    {"gap INT64_MAX", {2, 1, 1, INT64_MAX}, 0, NULL, NULL},
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

Test(session, bad_specs_are_refused_with_a_code_and_a_detail_naming_the_fault)
{
	struct sc_session *s, *sentinel = (struct sc_session *)&kt10;

	for (size_t i = 0; i < N(bad_specs); i++) {
		const struct bad_spec *b = &bad_specs[i];
		int rc;

		sc_error_clear();
		rc = sc_session_spec_check(&b->s, "the_caller");
		cr_assert_eq(rc, b->code, "%s: spec_check %s, want %s (%s)",
			     b->what, sc_errname(rc), sc_errname(b->code),
			     sc_errmsg());
		if (b->code)
			assert_detail(b->what, "the_caller", b);
		s = sentinel;
		rc = sc_session_create(&b->s, &s);
		cr_assert_eq(rc, b->code, "%s: create %s, want %s (%s)",
			     b->what, sc_errname(rc), sc_errname(b->code),
			     sc_errmsg());
		if (b->code == 0) {
			cr_assert_neq(s, sentinel);
			sc_session_destroy(s);
			continue;
		}
		cr_assert_eq(s, sentinel, "%s: a refused create wrote *out",
			     b->what);
		assert_detail(b->what, "sc_session_create", b);
	}
	/* NULL arguments; a NULL `who` names the check itself. */
	cr_assert_eq(sc_session_spec_check(NULL, "the_caller"), SC_EINVAL);
	cr_assert(opgen_names_one_of(sc_errdetail(), "spec"), "%s",
		  sc_errdetail());
	cr_assert(opgen_names_one_of(sc_errdetail(), "the_caller"), "%s",
		  sc_errdetail());
	cr_assert_eq(sc_session_spec_check(&bad_specs[0].s, NULL), SC_ESCHEMA);
	cr_assert(opgen_names_one_of(sc_errdetail(), "sc_session_spec_check"),
		  "%s", sc_errdetail());
	cr_assert_eq(sc_session_spec_check(&kt10, NULL), 0);
	s = sentinel;
	cr_assert_eq(sc_session_create(NULL, &s), SC_EINVAL);
	cr_assert(opgen_names_one_of(sc_errdetail(), "spec"), "%s",
		  sc_errdetail());
	cr_assert_eq(s, sentinel);
	cr_assert_eq(sc_session_create(&kt10, NULL), SC_EINVAL);
	cr_assert(opgen_names_one_of(sc_errdetail(), "out"), "%s",
		  sc_errdetail());
}

Test(session, a_delta_of_the_wrong_width_is_eschema_and_changes_nothing)
{
	struct sc_session *a = make(&kxt10), *b = make(&kxt10);
	static const int64_t d1[][3] = {{1, 0, 1}, {1, 30, 1}, {2, 3, -1}};
	static const int64_t d2[][3] = {{1, 15, 1}, {2, 3, 2}};
	uint64_t narrow[] = {5, I(15)}, wide[] = {5, 1, I(15), 0};
	struct sc_batch *b1 = xts(N(d1), d1), *b2 = xts(N(d2), d2);
	struct sc_batch *bad[3] = {opgen_batch_of(2, 1, narrow, NULL),
				   opgen_batch_of(4, 1, wide, NULL),
				   opgen_none(2)};
	struct sc_batch *oa, *ob, *out;

	cr_assert_eq(sc_session_step(a, b1, &oa), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_session_step(b, b1, &ob), 0, "%s", sc_errmsg());
	sc_batch_release(oa);
	sc_batch_release(ob);
	for (int i = 0; i < 3; i++) {
		out = (struct sc_batch *)&kt10;
		cr_assert_eq(sc_session_step(a, bad[i], &out), SC_ESCHEMA,
			     "a delta %u wide", sc_batch_ncols(bad[i]));
		cr_assert_eq(out, (struct sc_batch *)&kt10,
			     "a refused step wrote *out");
		cr_assert(opgen_names_one_of(sc_errdetail(), "sc_session_step"),
			  "%s", sc_errdetail());
		cr_assert(
		    opgen_names_one_of(sc_errdetail(), i == 1 ? "4" : "2"),
		    "%s: the width", sc_errdetail());
	}
	/* a saw the refused steps, b did not: the same state. */
	cr_assert_eq(sc_session_rows(a), sc_session_rows(b));
	cr_assert_eq(sc_session_pending(a), sc_session_pending(b));
	cr_assert_eq(sc_session_check(a), 0);
	cr_assert_eq(sc_session_step(a, b2, &oa), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_session_step(b, b2, &ob), 0, "%s", sc_errmsg());
	cr_assert(sc_batch_equal(oa, ob),
		  "the refused steps changed the state");
	cr_assert_eq(sc_batch_count(oa), 3, "15 joins 0 and 30, 3 comes");
	sc_batch_release(oa);
	sc_batch_release(ob);
	sc_batch_release(b1);
	sc_batch_release(b2);
	for (int i = 0; i < 3; i++)
		sc_batch_release(bad[i]);
	sc_session_destroy(a);
	sc_session_destroy(b);
}

Test(session, null_arguments_are_einval_and_empty_steps_emit_nothing)
{
	struct sc_session *s = make(&kt10);
	const int64_t t[] = {4};
	const int64_t o[][4] = {{4, 14, 1, 1}};
	struct sc_batch *d = times(1, t, NULL);

	cr_assert_eq(sc_session_step(s, d, NULL), SC_EINVAL);
	cr_assert(opgen_names_one_of(sc_errdetail(), "sc_session_step"), "%s",
		  sc_errdetail());
	cr_assert(opgen_names_one_of(sc_errdetail(), "out"), "%s",
		  sc_errdetail());
	cr_assert_eq(sc_session_work(NULL, 1), SC_EINVAL);
	cr_assert_eq(sc_session_check(NULL), SC_EINVAL);
	cr_assert_eq(sc_session_pending(NULL), 0);
	cr_assert_eq(sc_session_rows(NULL), 0);
	cr_assert_eq(sc_session_bytes(NULL), 0);
	sc_session_destroy(NULL);
	/* The refused steps with d absorbed nothing: d's row appears now. */
	step_expect(s, NULL, opgen_none(4), "a NULL delta");
	step_expect(s, opgen_none(2), opgen_none(4), "an empty delta");
	cr_assert_eq(sc_session_rows(s), 0);
	step_expect(s, d, sess(1, o), "the row after refusals");
	step_expect(s, NULL, opgen_none(4), "a NULL delta after a row");
	sc_session_destroy(s);
}

/* Apart from the test above: a crash here must not hide its checks. */
Test(session, a_step_of_a_null_session_is_einval_and_writes_nothing)
{
	const int64_t t[] = {4};
	struct sc_batch *d = times(1, t, NULL), *out = NULL;

	cr_assert_eq(sc_session_step(NULL, d, &out), SC_EINVAL);
	cr_assert_null(out, "a refused step wrote *out");
	cr_assert(opgen_names_one_of(sc_errdetail(), "sc_session_step"), "%s",
		  sc_errdetail());
	cr_assert(opgen_names_one_of(sc_errdetail(), "session"), "%s",
		  sc_errdetail());
	cr_assert_eq(sc_session_step(NULL, NULL, &out), SC_EINVAL);
	cr_assert_null(out);
	sc_batch_release(d);
}

/* --- sessions withheld ---------------------------------------------------- */

Test(session, a_row_of_weight_int64_max_has_no_session_row_until_retracted)
{
	struct sc_session *s = make(&kxt10);
	const int64_t M = INT64_MAX;
	/* {x, t, w}: 0 at INT64_MAX; 50 on its own. */
	const int64_t d1[][3] = {{1, 0, M}, {1, 50, 1}};
	const int64_t o1[][4] = {{50, 60, 1, 1}};
	const int64_t d2[][3] = {{1, 0, -1}};
	const int64_t o2[][4] = {{0, 10, M - 1, 1}};
	const int64_t d3[][3] = {{2, 0, 1}};
	const int64_t o3[][4] = {{0, 10, M - 1, -1}, {0, 10, M, 1}};

	step_expect(s, xts(N(d1), d1), sess(N(o1), o1),
		    "multiplicity INT64_MAX: no row for its session");
	cr_assert_eq(sc_session_check(s), SC_EOVERFLOW);
	cr_assert(opgen_names_one_of(sc_errdetail(), "1 session"), "%s",
		  sc_errdetail());
	step_expect(s, xts(N(d2), d2), sess(N(o2), o2),
		    "INT64_MAX - 1: the row comes");
	cr_assert_eq(sc_session_check(s), 0, "%s", sc_errmsg());
	step_expect(s, xts(N(d3), d3), sess(N(o3), o3),
		    "INT64_MAX again from two rows, neither outside int64: a "
		    "row");
	cr_assert_eq(sc_session_check(s), 0, "%s", sc_errmsg());
	sc_session_destroy(s);
}

Test(session, a_time_of_multiplicity_past_int64_max_is_held_exactly)
{
	struct sc_session *s = make(&kxt10);
	const int64_t M = INT64_MAX;
	const int64_t d1[][3] = {{1, 100, M}}, d2[][3] = {{2, 100, M}};
	const int64_t d3[][3] = {{1, 100, -M}}, d4[][3] = {{2, 100, -1}};
	const int64_t o4[][4] = {{100, 110, M - 1, 1}};

	step_expect(s, xts(N(d1), d1), opgen_none(4), "INT64_MAX");
	step_expect(s, xts(N(d2), d2), opgen_none(4),
		    "2 * INT64_MAX in the trace: no step fails");
	cr_assert_eq(sc_session_check(s), SC_EOVERFLOW);
	step_expect(s, xts(N(d3), d3), opgen_none(4),
		    "back to INT64_MAX: still none");
	cr_assert_eq(sc_session_check(s), SC_EOVERFLOW);
	step_expect(s, xts(N(d4), d4), sess(N(o4), o4),
		    "INT64_MAX - 1: exact, so the row comes");
	cr_assert_eq(sc_session_check(s), 0, "%s", sc_errmsg());
	sc_session_destroy(s);
}

Test(session, two_rows_of_one_time_past_int64_max_in_one_step_are_withheld)
{
	/* The same rows as above in one step instead of two: session.h's
	 * integral does not depend on how the input was cut. */
	struct sc_session *s = make(&kxt10);
	const int64_t M = INT64_MAX;
	const int64_t d1[][3] = {{1, 100, M}, {2, 100, M}, {1, 130, 1}};
	const int64_t o1[][4] = {{130, 140, 1, 1}};
	const int64_t d2[][3] = {{1, 100, -M}, {2, 100, -1}};
	const int64_t o2[][4] = {{100, 110, M - 1, 1}};

	step_expect(s, xts(N(d1), d1), sess(N(o1), o1),
		    "two rows of 100 at INT64_MAX each, one step");
	cr_assert_eq(sc_session_check(s), SC_EOVERFLOW);
	step_expect(s, xts(N(d2), d2), sess(N(o2), o2),
		    "both retracted to INT64_MAX - 1 in one step");
	cr_assert_eq(sc_session_check(s), 0, "%s", sc_errmsg());
	sc_session_destroy(s);
}

Test(session, a_session_whose_count_passes_int64_max_has_no_row_until_it_fits)
{
	struct sc_session *s = make(&kxt10);
	const int64_t M = INT64_MAX, H = INT64_MAX / 2; /* 2H = M - 1 */
	const int64_t d1[][3] = {{1, 0, H}, {1, 5, H}};
	const int64_t o1[][4] = {{0, 15, M - 1, 1}};
	const int64_t d2[][3] = {{2, 5, 1}};
	const int64_t o2[][4] = {{0, 15, M - 1, -1}, {0, 15, M, 1}};
	const int64_t d3[][3] = {{1, 9, 1}};
	const int64_t o3[][4] = {{0, 15, M, -1}};
	/* Retracting the first time leaves 5 and 9: H + 2. */
	const int64_t d4[][3] = {{1, 0, -H}};
	const int64_t o4[][4] = {{5, 19, H + 2, 1}};

	step_expect(s, xts(N(d1), d1), sess(N(o1), o1), "count INT64_MAX - 1");
	step_expect(s, xts(N(d2), d2), sess(N(o2), o2), "count INT64_MAX");
	cr_assert_eq(sc_session_check(s), 0, "%s", sc_errmsg());
	step_expect(s, xts(N(d3), d3), sess(N(o3), o3),
		    "count INT64_MAX + 1: the row goes");
	cr_assert_eq(sc_session_check(s), SC_EOVERFLOW);
	step_expect(s, xts(N(d4), d4), sess(N(o4), o4),
		    "a time retracted: the count fits again");
	cr_assert_eq(sc_session_check(s), 0, "%s", sc_errmsg());
	sc_session_destroy(s);
}

Test(session, withheld_sessions_merge_split_and_are_counted_by_check)
{
	struct sc_session *s = make(&kxt10);
	const int64_t M = INT64_MAX;
	/* 100 at INT64_MAX (withheld), 115 on its own, 300 at INT64_MAX
	 * (withheld). */
	const int64_t d1[][3] = {{1, 100, M}, {1, 115, 1}};
	const int64_t o1[][4] = {{115, 125, 1, 1}};
	const int64_t d2[][3] = {{1, 108, 1}};
	const int64_t o2[][4] = {{115, 125, 1, -1}};
	const int64_t d3[][3] = {{1, 300, M}};
	const int64_t d4[][3] = {{1, 108, -1}};
	const int64_t o4[][4] = {{115, 125, 1, 1}};
	const int64_t d5[][3] = {{1, 100, -M}, {1, 300, -1}};
	const int64_t o5[][4] = {{300, 310, M - 1, 1}};

	step_expect(s, xts(N(d1), d1), sess(N(o1), o1), "one withheld");
	cr_assert_eq(sc_session_check(s), SC_EOVERFLOW);
	cr_assert(opgen_names_one_of(sc_errdetail(), "1 session"), "%s",
		  sc_errdetail());
	step_expect(s, xts(N(d2), d2), sess(N(o2), o2),
		    "108 joins 115 into the withheld one");
	cr_assert_eq(sc_session_check(s), SC_EOVERFLOW);
	cr_assert(opgen_names_one_of(sc_errdetail(), "1 session"), "%s",
		  sc_errdetail());
	step_expect(s, xts(N(d3), d3), opgen_none(4), "a second withheld");
	cr_assert_eq(sc_session_check(s), SC_EOVERFLOW);
	cr_assert(opgen_names_one_of(sc_errdetail(), "2 sessions"), "%s",
		  sc_errdetail());
	step_expect(s, xts(N(d4), d4), sess(N(o4), o4),
		    "108 retracted: 115 splits off");
	cr_assert(sc_session_check(s) == SC_EOVERFLOW &&
		      opgen_names_one_of(sc_errdetail(), "2 sessions"),
		  "%s", sc_errdetail());
	step_expect(s, xts(N(d5), d5), sess(N(o5), o5),
		    "100 retracted, 300 to INT64_MAX - 1");
	cr_assert_eq(sc_session_check(s), 0, "%s", sc_errmsg());
	sc_session_destroy(s);
}

/* --- merge work and rows held --------------------------------------------- */

Test(session, unbounded_work_leaves_none_owed_and_rows_are_the_rows_held)
{
	/* (key, x, t): several rows of a (key, time) pair in one step, never
	 * retracted: every stored row is a distinct input row once the work
	 * is done (the trace keeps whole rows, so no two add up). */
	struct sc_session *s = make(&kxt10);
	struct sc_rng r;
	size_t pairs = 0;

	sc_rng_seed(&r, 7701);
	for (int64_t i = 0; i < 300; i++) {
		uint64_t rows[3 * 3];
		size_t n = 1 + sc_rng_below(&r, 3);
		struct sc_batch *d, *out;

		for (size_t j = 0; j < n; j++) {
			rows[3 * j] = (uint64_t)(i % 4);
			rows[3 * j + 1] = j;
			rows[3 * j + 2] = I(i * 3);
		}
		d = opgen_batch_of(3, n, rows, NULL);
		cr_assert_eq(sc_session_step(s, d, &out), 0, "%s", sc_errmsg());
		sc_batch_release(out);
		sc_batch_release(d);
		pairs += n;
	}
	cr_assert_gt(sc_session_pending(s), 0,
		     "300 one-pair steps owe no merge work");
	cr_assert_eq(sc_session_work(s, SIZE_MAX), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_session_pending(s), 0,
		     "%zu units owed after sc_session_work(s, SIZE_MAX)",
		     sc_session_pending(s));
	cr_assert_eq(sc_session_rows(s), pairs,
		     "%zu rows held for %zu distinct rows", sc_session_rows(s),
		     pairs);
	cr_assert_gt(sc_session_bytes(s), 0);
	sc_session_destroy(s);
}
