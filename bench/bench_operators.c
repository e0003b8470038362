/*
 * bench_operators.c - the stateful operators (count, sum, avg and min
 * aggregates, distinct, join) on a delta of 1,000 rows against an
 * integrated state of N rows, N = 10K, 100K, 1M (--quick: 10K and 100K),
 * against a hash-based recomputation from scratch in the same run.
 *
 * Incremental: the operator's step on the delta plus the merge work a
 * caller would spend to keep its spine in shape (sc_*_work with a budget
 * of 2 * log2(N) units per delta row, see trace.h; count, sum, avg and
 * distinct keep hash tables and have none), timed together; the step alone
 * is reported too.
 *
 * Recompute: what a system without incremental state does per delta: it
 * keeps the input as it arrived (a table of records, inserts and
 * retractions, appended to) and runs the operator over all of it with
 * open-addressing hash tables sized in advance (32-byte slots, linear
 * probing, load 0.5, one multiply-shift hash): count, sum and avg in one
 * pass that folds each record into its group; min and distinct first
 * fold records into a row -> weight table, then take each group's least
 * live value or each positive row; the join builds a key -> rows table
 * over B and probes it with every record of A. Its output is an unsorted array
 * of rows, neither consolidated nor diffed against the previous output, and its
 * count, sum and avg trust that a group's rows never cancel to a zero weight
 * sum while one is live (true of these inputs); every shortcut flatters the
 * baseline. The ratio is incremental rows/s over recompute rows/s (the same
 * delta): higher is better. Beside it, what one delta row costs the
 * incremental step (ns per delta row) against what one input row costs
 * the recomputation (ns per row it reads): the ratio of the two says how
 * many rows of state a delta row is worth, so the speed-up at a state of
 * S rows is about S / 1000 over that ratio. Medians, and the same as a
 * mean, which counts the steps a table's growth is spread over.
 *
 * Rows: the join's A and B are (key, id) with keys uniform in [0, N) (about
 * one match per probe); distinct's rows are (x, y) with x in [0, N);
 * the aggregates' rows are (group, value) with N / 10 groups. A delta is
 * 90% fresh inserts and 10% retractions of rows the state holds.
 *
 * Memory: the operator's bytes per integrated row (its hash tables, or its
 * traces and the fences of their long runs), against the raw row (its 2
 * words), once loaded and after the deltas.
 *
 * SC_BENCH_OPS=join (a substring of an operator's name) and
 * SC_BENCH_MAX_ROWS=N limit a run; SC_BENCH_REPS=n (<= 32) sets the
 * repetitions (default 21, 5 with --quick).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/harness.h"
#include "operators/aggregate.h"
#include "operators/batch.h"
#include "operators/distinct.h"
#include "operators/join.h"

#define DELTA	   1000
#define LOAD_CHUNK 100000

static void
check(int rc, const char *what)
{
	if (rc)
		sc_bench_fail(what);
}

/* --- the subjects ----------------------------------------------------------
 */

enum kind { K_COUNT, K_SUM, K_AVG, K_MIN, K_DISTINCT, K_JOIN, K_NKINDS };

static const char *const kind_name[] = {"aggregate count", "aggregate sum",
					"aggregate avg",   "aggregate min",
					"distinct",	   "join"};

static bool
is_agg(enum kind k)
{
	return k <= K_MIN;
}

/* The row with index i of a stream, 2 columns. `salt` tells the streams
 * apart (join's A and B). */
static void
make_row(enum kind k, uint64_t n, uint64_t i, uint64_t salt, uint64_t *row)
{
	uint64_t h = sc_splitmix_mix(i ^ salt);

	if (!is_agg(k)) {
		row[0] = h % n;
		row[1] = i;
		return;
	}
	row[0] = h % (n / 10 ? n / 10 : 1);
	row[1] = sc_enc_i64((int64_t)(sc_splitmix_mix(h) % 2000000) - 1000000);
}

/* A batch of rows [from, from + count) of a stream, weight 1, plus
 * `retract` retractions of earlier rows (indices below `from`, each
 * retracted at most once thanks to the bitmap `gone`). */
static struct sc_batch *
make_delta(enum kind k, uint64_t n, uint64_t from, size_t count, size_t retract,
	   uint64_t salt, uint8_t *gone, uint64_t *seed)
{
	struct sc_batch_builder b;
	struct sc_batch *out;
	uint64_t row[2];

	check(sc_batch_builder_init(&b, 2), "builder");
	check(sc_batch_builder_reserve(&b, count + retract), "reserve");
	for (size_t i = 0; i < count; i++) {
		make_row(k, n, from + i, salt, row);
		check(sc_batch_builder_push(&b, row, 2, 1), "push");
	}
	for (size_t r = 0; r < retract && from > 0; r++) {
		uint64_t j = sc_splitmix_mix((*seed)++) % from;

		if (gone[j / 8] & (1u << (j % 8)))
			continue;
		gone[j / 8] |= (uint8_t)(1u << (j % 8));
		make_row(k, n, j, salt, row);
		check(sc_batch_builder_push(&b, row, 2, -1), "push");
	}
	check(sc_batch_builder_finish(&b, &out), "finish");
	sc_batch_builder_fini(&b);
	return out;
}

struct subject {
	enum kind k;
	struct sc_join *j;
	struct sc_distinct *d;
	struct sc_aggregate *a;
};

static void
subject_create(struct subject *s, enum kind k)
{
	static const enum sc_agg_kind agg[] = {SC_AGG_COUNT, SC_AGG_SUM,
					       SC_AGG_AVG, SC_AGG_MIN};
	struct sc_aggregate_spec spec = {2, 1, SC_AGG_SUM, 1, SC_TYPE_I64};

	memset(s, 0, sizeof(*s));
	s->k = k;
	if (k == K_JOIN)
		check(sc_join_create(2, 2, 1, &s->j), "join");
	else if (k == K_DISTINCT)
		check(sc_distinct_create(2, &s->d), "distinct");
	else {
		spec.kind = agg[k];
		check(sc_aggregate_create(&spec, &s->a), "aggregate");
	}
}

static void
subject_destroy(struct subject *s)
{
	sc_join_destroy(s->j);
	sc_distinct_destroy(s->d);
	sc_aggregate_destroy(s->a);
}

/* One step on delta (to A for the join; db to B), output released. */
static void
subject_step(struct subject *s, struct sc_batch *delta, struct sc_batch *db)
{
	struct sc_batch *out;

	if (s->j)
		check(sc_join_step(s->j, delta, db, &out), "join step");
	else if (s->d)
		check(sc_distinct_step(s->d, delta, &out), "distinct step");
	else
		check(sc_aggregate_step(s->a, delta, &out), "aggregate step");
	sc_bench_keep(out);
	sc_batch_release(out);
}

static void
subject_work(struct subject *s, size_t budget)
{
	if (s->j)
		check(sc_join_work(s->j, budget), "join work");
	else if (s->d)
		check(sc_distinct_work(s->d, budget), "distinct work");
	else
		check(sc_aggregate_work(s->a, budget), "aggregate work");
}

static size_t
subject_bytes(const struct subject *s)
{
	if (s->j)
		return sc_join_bytes(s->j);
	if (s->d)
		return sc_distinct_bytes(s->d);
	return sc_aggregate_bytes(s->a);
}

/* --- recomputation from scratch, by hashing ----------------------------------
 */

/* The input as it arrived: a table of records, appended to. */
struct table {
	uint64_t *rows;	  /* n * 2 words */
	int64_t *weights; /* n */
	size_t n, cap;
};

static void
table_append(struct table *t, const struct sc_batch *b)
{
	size_t need = t->n + sc_batch_count(b);

	if (need > t->cap) {
		t->cap = need * 2;
		t->rows = realloc(t->rows, t->cap * 2 * sizeof(uint64_t));
		t->weights = realloc(t->weights, t->cap * sizeof(int64_t));
		if (!t->rows || !t->weights)
			sc_bench_fail("table: out of memory");
	}
	for (size_t i = 0; i < sc_batch_count(b); i++, t->n++) {
		memcpy(t->rows + 2 * t->n, sc_batch_row(b, i), 16);
		t->weights[t->n] = sc_batch_weight(b, i);
	}
}

/* One slot of the baseline's tables (32 bytes, two to a cache line): a
 * key of one or two words and what is folded into it. An empty slot has
 * used == 0. */
struct slot {
	uint64_t k0; /* the key's first word */
	union {
		uint64_t k1;  /* two-word keys: the second word */
		int64_t sum;  /* one-word keys: summed w * v (count/sum/avg) */
		uint64_t min; /* one-word keys: least live value (min) */
	};
	int64_t w;     /* summed weight */
	uint32_t used; /* 1 once taken */
	uint32_t next; /* join: next record + 1 of the same key, 0 none */
};

struct htab {
	struct slot *s;
	size_t mask;
};

/* A table for `n` keys at a load of at most 0.5, cleared. */
static void
htab_reset(struct htab *h, size_t n)
{
	size_t slots = 16;

	while (slots < 2 * n)
		slots *= 2;
	if (!h->s || h->mask + 1 != slots) {
		free(h->s);
		h->s = malloc(slots * sizeof(*h->s));
		if (!h->s)
			sc_bench_fail("hash table: out of memory");
		h->mask = slots - 1;
	}
	memset(h->s, 0, slots * sizeof(*h->s));
}

static inline size_t
hash2(uint64_t a, uint64_t b)
{
	return (size_t)(((a * 0x9e3779b97f4a7c15ULL) ^ b) *
			    0xbf58476d1ce4e5b9ULL >>
			20);
}

/* The slot of the one-word key k0, taken if it was empty. */
static inline struct slot *
htab_get1(struct htab *h, uint64_t k0)
{
	for (size_t i = hash2(k0, 0) & h->mask;; i = (i + 1) & h->mask) {
		struct slot *e = &h->s[i];

		if (!e->used) {
			e->used = 1;
			e->k0 = k0;
			return e;
		}
		if (e->k0 == k0)
			return e;
	}
}

/* The slot of key (k0, k1), taken if it was empty. */
static inline struct slot *
htab_get(struct htab *h, uint64_t k0, uint64_t k1)
{
	for (size_t i = hash2(k0, k1) & h->mask;; i = (i + 1) & h->mask) {
		struct slot *e = &h->s[i];

		if (!e->used) {
			e->used = 1;
			e->k0 = k0;
			e->k1 = k1;
			return e;
		}
		if (e->k0 == k0 && e->k1 == k1)
			return e;
	}
}

/* The baseline's output: rows appended, never sorted. */
struct outbuf {
	uint64_t *w; /* n * 3 words */
	size_t n, cap;
};

static inline void
out_push(struct outbuf *o, uint64_t a, uint64_t b, uint64_t c)
{
	if (o->n == o->cap) {
		o->cap = o->cap ? 2 * o->cap : 4096;
		o->w = realloc(o->w, o->cap * 3 * sizeof(uint64_t));
		if (!o->w)
			sc_bench_fail("output: out of memory");
	}
	o->w[3 * o->n] = a;
	o->w[3 * o->n + 1] = b;
	o->w[3 * o->n + 2] = c;
	o->n++;
}

struct baseline {
	struct htab h, h2; /* the tables, kept between runs (cleared) */
	struct outbuf out;
};

/* count, sum, avg: fold each record into its group, then one row per
 * group of non-zero weight. */
static void
recompute_linear(enum kind k, const struct table *t, uint64_t groups,
		 struct baseline *b)
{
	htab_reset(&b->h, groups);
	for (size_t i = 0; i < t->n; i++) {
		const uint64_t *r = t->rows + 2 * i;
		struct slot *e = htab_get1(&b->h, r[0]);

		e->w += t->weights[i];
		e->sum += t->weights[i] * sc_dec_i64(r[1]);
	}
	for (size_t i = 0; i <= b->h.mask; i++) {
		const struct slot *e = &b->h.s[i];
		double avg;
		uint64_t v;

		if (!e->used || e->w == 0)
			continue;
		avg = (double)e->sum / (double)e->w;
		v = k == K_COUNT ? sc_enc_i64(e->w)
		    : k == K_SUM ? sc_enc_i64(e->sum)
				 : sc_enc_f64(avg);
		out_push(&b->out, e->k0, v, 1);
	}
}

/* Fold the records into a row -> weight table. */
static void
fold_rows(const struct table *t, struct htab *h)
{
	htab_reset(h, t->n);
	for (size_t i = 0; i < t->n; i++) {
		const uint64_t *r = t->rows + 2 * i;

		htab_get(h, r[0], r[1])->w += t->weights[i];
	}
}

/* min: the live rows, then each group's least value. */
static void
recompute_min(const struct table *t, uint64_t groups, struct baseline *b)
{
	fold_rows(t, &b->h);
	htab_reset(&b->h2, groups);
	for (size_t i = 0; i <= b->h.mask; i++) {
		const struct slot *r = &b->h.s[i];
		struct slot *g;

		if (!r->used || r->w == 0)
			continue;
		g = htab_get1(&b->h2, r->k0);
		if (g->w == 0 || r->k1 < g->min)
			g->min = r->k1;
		g->w = 1;
	}
	for (size_t i = 0; i <= b->h2.mask; i++)
		if (b->h2.s[i].used)
			out_push(&b->out, b->h2.s[i].k0, b->h2.s[i].min, 1);
}

static void
recompute_distinct(const struct table *t, struct baseline *b)
{
	fold_rows(t, &b->h);
	for (size_t i = 0; i <= b->h.mask; i++) {
		const struct slot *r = &b->h.s[i];

		if (r->used && r->w > 0)
			out_push(&b->out, r->k0, r->k1, 1);
	}
}

/* join: B's records chained by key, probed by every record of A. The
 * chain is kept in the slots of a second table, one per record of B. */
static void
recompute_join(const struct table *a, const struct table *bt,
	       struct baseline *b)
{
	htab_reset(&b->h, bt->n);
	htab_reset(&b->h2, bt->n);
	for (size_t i = 0; i < bt->n; i++) {
		const uint64_t *r = bt->rows + 2 * i;
		struct slot *head = htab_get1(&b->h, r[0]);
		struct slot *rec = &b->h2.s[i];

		rec->k1 = r[1];
		rec->w = bt->weights[i];
		rec->next = head->next;
		head->next = (uint32_t)(i + 1);
	}
	for (size_t i = 0; i < a->n; i++) {
		const uint64_t *r = a->rows + 2 * i;
		size_t j = hash2(r[0], 0) & b->h.mask;

		for (;; j = (j + 1) & b->h.mask) {
			const struct slot *e = &b->h.s[j];

			if (!e->used)
				break;
			if (e->k0 != r[0])
				continue;
			for (uint32_t x = e->next; x; x = b->h2.s[x - 1].next) {
				const struct slot *m = &b->h2.s[x - 1];

				out_push(&b->out, r[1], m->k1,
					 (uint64_t)(a->weights[i] * m->w));
			}
			break;
		}
	}
}

static void
recompute(enum kind k, const struct table *a, const struct table *bt,
	  uint64_t n, struct baseline *b)
{
	uint64_t groups = n / 10 ? n / 10 : 1;

	b->out.n = 0;
	if (k == K_JOIN)
		recompute_join(a, bt, b);
	else if (k == K_DISTINCT)
		recompute_distinct(a, b);
	else if (k == K_MIN)
		recompute_min(a, groups, b);
	else
		recompute_linear(k, a, groups, b);
	sc_bench_keep(b->out.w);
}

/* --- one size ---------------------------------------------------------------
 */

struct run {
	enum kind k;
	uint64_t n;	   /* rows of state */
	uint64_t next;	   /* next fresh row index of stream A */
	uint64_t seed;	   /* retraction choices */
	uint8_t *gone;	   /* retracted rows of A */
	struct subject s;  /* the incremental operator */
	struct table ta;   /* A as it arrived */
	struct table tb;   /* the join's B as it arrived (fixed) */
	struct baseline b; /* the recomputation's tables */
};

static void
load_stream(struct run *r, uint64_t salt, uint8_t *gone, bool to_b)
{
	for (uint64_t at = 0; at < r->n; at += LOAD_CHUNK) {
		size_t c = r->n - at < LOAD_CHUNK ? r->n - at : LOAD_CHUNK;
		struct sc_batch *d =
		    make_delta(r->k, r->n, at, c, 0, salt, gone, &r->seed);

		subject_step(&r->s, to_b ? NULL : d, to_b ? d : NULL);
		table_append(to_b ? &r->tb : &r->ta, d);
		sc_batch_release(d);
	}
}

static void
run_load(struct run *r, enum kind k, uint64_t n)
{
	uint8_t *gone_b;

	memset(r, 0, sizeof(*r));
	r->k = k;
	r->n = n;
	r->seed = 42;
	r->gone = calloc(2 * n / 8 + DELTA, 1);
	gone_b = calloc(n / 8 + 1, 1);
	if (!r->gone || !gone_b)
		sc_bench_fail("out of memory");
	subject_create(&r->s, k);
	load_stream(r, 1, r->gone, false);
	if (k == K_JOIN)
		load_stream(r, 2, gone_b, true);
	r->next = n;
	subject_work(&r->s, SIZE_MAX);
	free(gone_b);
}

static void
run_free(struct run *r)
{
	subject_destroy(&r->s);
	free(r->ta.rows);
	free(r->ta.weights);
	free(r->tb.rows);
	free(r->tb.weights);
	free(r->b.h.s);
	free(r->b.h2.s);
	free(r->b.out.w);
	free(r->gone);
}

static void
emit_size(const char *what, enum kind k, uint64_t n, const char *unit, double v,
	  const char *base, double bv)
{
	char kase[96];

	(void)snprintf(kase, sizeof(kase), "%s, %s, state %llu rows",
		       kind_name[k], what, (unsigned long long)n);
	sc_bench_emit("operators", kase, unit, v, base, bv);
}

static double
mean(const double *v, size_t n)
{
	double sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += v[i];
	return n ? sum / (double)n : 0;
}

static double
rate(const struct sc_batch *d, uint64_t ns)
{
	return (double)sc_batch_count(d) / ((double)(ns ? ns : 1) / 1e9);
}

static size_t
subject_rows(const struct subject *s)
{
	if (s->j)
		return sc_join_rows(s->j);
	if (s->d)
		return sc_distinct_rows(s->d);
	return sc_aggregate_rows(s->a);
}

static void
bench_size(enum kind k, uint64_t n, int reps, int base_reps)
{
	struct run r;
	double inc[32], step[32], base[32], inc_ns[32], base_ns[32];
	/* Integrated rows (all distinct), over both sides for the join. */
	int64_t live = k == K_JOIN ? 2 * (int64_t)n : (int64_t)n;
	size_t budget = 2 * (size_t)ceil(log2((double)n)) * DELTA;

	run_load(&r, k, n);
	emit_size("bytes per row (loaded, settled)", k, n, "bytes/row",
		  (double)subject_bytes(&r.s) / (double)subject_rows(&r.s),
		  "raw 2-word row", 16.0);
	for (int i = 0; i < reps; i++) {
		struct sc_batch *d = make_delta(k, n, r.next, DELTA * 9 / 10,
						DELTA / 10, 1, r.gone, &r.seed);
		uint64_t t0 = sc_bench_cpu_ns(), t1, t2;

		r.next += DELTA * 9 / 10;
		subject_step(&r.s, d, NULL);
		t1 = sc_bench_cpu_ns();
		subject_work(&r.s, budget);
		t2 = sc_bench_cpu_ns();
		step[i] = rate(d, t1 - t0);
		inc[i] = rate(d, t2 - t0);
		inc_ns[i] = (double)(t2 - t0) / (double)sc_batch_count(d);
		table_append(&r.ta, d);
		if (i < base_reps) {
			t0 = sc_bench_cpu_ns();
			recompute(k, &r.ta, &r.tb, n, &r.b);
			t1 = sc_bench_cpu_ns();
			base[i] = rate(d, t1 - t0);
			base_ns[i] =
			    (double)(t1 - t0) /
			    (double)(r.ta.n + (k == K_JOIN ? r.tb.n : 0));
		}
		for (size_t x = 0; x < sc_batch_count(d); x++)
			live += sc_batch_weight(d, x);
		sc_batch_release(d);
	}
	emit_size("bytes per row (after the deltas)", k, n, "bytes/row",
		  (double)subject_bytes(&r.s) / (double)live, "raw 2-word row",
		  16.0);
	emit_size("delta 1000 rows, step+work", k, n, "rows/s",
		  sc_bench_median(inc, (size_t)reps),
		  "hash recomputation from scratch over the input",
		  sc_bench_median(base, (size_t)base_reps));
	emit_size("ns per delta row (step+work)", k, n, "ns/row",
		  sc_bench_median(inc_ns, (size_t)reps),
		  "recomputation's ns per input row",
		  sc_bench_median(base_ns, (size_t)base_reps));
	emit_size("delta 1000 rows, step only", k, n, "rows/s",
		  sc_bench_median(step, (size_t)reps), NULL, 0);
	/* The median leaves out the steps a table's growth lands in; the
	 * mean counts them, spread as they are. */
	emit_size("ns per delta row (step+work), mean", k, n, "ns/row",
		  mean(inc_ns, (size_t)reps),
		  "recomputation's ns per input row, mean",
		  mean(base_ns, (size_t)base_reps));
	run_free(&r);
}

/* Repetitions: 21 (5 with --quick, or SC_BENCH_REPS); the baseline, which
 * reads the whole input, runs fewer times on big states. */
static void
reps_for(uint64_t n, bool quick, int *reps, int *base_reps)
{
	const char *env = getenv("SC_BENCH_REPS");

	*reps = env ? atoi(env) : quick ? 5 : 21;
	if (*reps < 1 || *reps > 32)
		*reps = 21;
	*base_reps = n >= 1000000 ? 7 : *reps;
	if (*base_reps > *reps)
		*base_reps = *reps;
}

int
main(int argc, char **argv)
{
	bool quick = sc_bench_init(argc, argv);
	static const uint64_t sizes[] = {10000, 100000, 1000000};
	size_t nsizes = quick ? 2 : 3;
	const char *only = getenv("SC_BENCH_OPS");     /* e.g. "join" */
	const char *max = getenv("SC_BENCH_MAX_ROWS"); /* e.g. 1000000 */
	int reps, base_reps;

	for (int k = 0; k < K_NKINDS; k++) {
		if (only && !strstr(kind_name[k], only))
			continue;
		for (size_t i = 0; i < nsizes; i++) {
			if (max && sizes[i] > strtoull(max, NULL, 10))
				break;
			reps_for(sizes[i], quick, &reps, &base_reps);
			bench_size((enum kind)k, sizes[i], reps, base_reps);
		}
	}
	return 0;
}
