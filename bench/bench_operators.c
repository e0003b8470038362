/*
 * bench_operators.c - the stateful operators (join, distinct, aggregate
 * sum and min) on a delta of 1,000 rows against an integrated state of N
 * rows, N = 10K, 100K, 1M, 10M (--quick: 10K and 100K), against
 * recomputation from scratch in the same run.
 *
 * Incremental: the operator's step on the delta plus the merge work a
 * caller would spend to keep the spine in shape (sc_*_work with a budget
 * of 2 * log2(N) units per delta row, see trace.h), timed together; the
 * step alone is reported too ("probe rate" for the join, "update rate" for
 * the aggregate).
 *
 * Recompute: the non-incremental system keeps the integral as one
 * consolidated batch; per delta it adds the delta (sc_batch_add, one linear
 * merge) and applies the operator to the whole new integral with the same
 * library pieces (a merge join of two sorted batches, a pass that keeps
 * positive rows, a pass that groups the sorted rows), building its output
 * with a batch builder. It does not even diff the new output against the
 * old, so the ratio is, if anything, flattering to the baseline.
 *
 * Rows: the join's A and B are (key, id) with keys uniform in [0, N) (about
 * one match per probe); distinct's rows are (x, y) with x in [0, N);
 * the aggregates' rows are (group, value) with N / 10 groups. A delta is
 * 90% fresh inserts and 10% retractions of rows the state holds.
 *
 * Memory: the operator's bytes per integrated row once the spine is
 * settled (its traces, the fences of their long runs, and for the sum its
 * group table), against the raw row (its 2 words). A trace record is the
 * row and its weight word, 1.5x the raw row; a fence adds 1/16 of a word
 * per row of a long run.
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

enum kind { K_JOIN, K_DISTINCT, K_SUM, K_MIN };

static const char *const kind_name[] = {"join", "distinct", "aggregate sum",
					"aggregate min"};

/* The row with index i of a stream, 2 columns. `salt` tells the streams
 * apart (join's A and B). */
static void
make_row(enum kind k, uint64_t n, uint64_t i, uint64_t salt, uint64_t *row)
{
	uint64_t h = sc_splitmix_mix(i ^ salt);

	switch (k) {
	case K_JOIN:
	case K_DISTINCT:
		row[0] = h % n;
		row[1] = i;
		break;
	default:
		row[0] = h % (n / 10 ? n / 10 : 1);
		row[1] = sc_enc_i64((int64_t)(sc_splitmix_mix(h) % 2000000) -
				    1000000);
		break;
	}
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
	struct sc_aggregate_spec spec = {2, 1, SC_AGG_SUM, 1, SC_TYPE_I64};

	memset(s, 0, sizeof(*s));
	s->k = k;
	if (k == K_JOIN)
		check(sc_join_create(2, 2, 1, &s->j), "join");
	else if (k == K_DISTINCT)
		check(sc_distinct_create(2, &s->d), "distinct");
	else {
		spec.kind = k == K_SUM ? SC_AGG_SUM : SC_AGG_MIN;
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

/* --- recomputation from scratch ---------------------------------------------
 */

/* The end of the rows sharing row i's first column. */
static size_t
group_end(const struct sc_batch *b, size_t i)
{
	size_t n = sc_batch_count(b);
	uint64_t key = sc_batch_row(b, i)[0];

	while (++i < n && sc_batch_row(b, i)[0] == key)
		;
	return i;
}

static void
recompute_join(const struct sc_batch *a, const struct sc_batch *b,
	       struct sc_batch_builder *out)
{
	size_t i = 0, j = 0, na = sc_batch_count(a), nb = sc_batch_count(b);
	uint64_t row[3];

	while (i < na && j < nb) {
		uint64_t ka = sc_batch_row(a, i)[0], kb = sc_batch_row(b, j)[0];
		size_t ea, eb;

		if (ka != kb) {
			if (ka < kb)
				i = group_end(a, i);
			else
				j = group_end(b, j);
			continue;
		}
		ea = group_end(a, i);
		eb = group_end(b, j);
		for (size_t x = i; x < ea; x++)
			for (size_t y = j; y < eb; y++) {
				row[0] = ka;
				row[1] = sc_batch_row(a, x)[1];
				row[2] = sc_batch_row(b, y)[1];
				check(sc_batch_builder_push(
					  out, row, 3,
					  sc_batch_weight(a, x) *
					      sc_batch_weight(b, y)),
				      "push");
			}
		i = ea;
		j = eb;
	}
}

static void
recompute_rest(enum kind k, const struct sc_batch *in,
	       struct sc_batch_builder *out)
{
	size_t n = sc_batch_count(in);

	for (size_t i = 0, e; i < n; i = e) {
		const uint64_t *r = sc_batch_row(in, i);
		uint64_t row[2] = {r[0], r[1]};
		int64_t sum = 0;

		if (k == K_DISTINCT) {
			e = i + 1;
			if (sc_batch_weight(in, i) > 0)
				check(sc_batch_builder_push(out, r, 2, 1),
				      "push");
			continue;
		}
		e = group_end(in, i);
		if (k == K_SUM) {
			for (size_t x = i; x < e; x++)
				sum += sc_batch_weight(in, x) *
				       sc_dec_i64(sc_batch_row(in, x)[1]);
			row[1] = sc_enc_i64(sum);
		}
		check(sc_batch_builder_push(out, row, 2, 1), "push");
	}
}

/* Apply the operator to a consolidated integral; output built and freed. */
static void
apply_op(enum kind k, const struct sc_batch *in, const struct sc_batch *other,
	 struct sc_batch_builder *out)
{
	struct sc_batch *res;

	if (k == K_JOIN)
		recompute_join(in, other, out);
	else
		recompute_rest(k, in, out);
	check(sc_batch_builder_finish(out, &res), "finish");
	sc_bench_keep(res);
	sc_batch_release(res);
}

/* Baseline "kept": the integral is kept consolidated; per delta, one
 * linear merge adds the delta, then the operator runs over all of it. */
static void
recompute_kept(enum kind k, struct sc_batch **integral,
	       const struct sc_batch *delta, const struct sc_batch *other,
	       struct sc_batch_builder *out)
{
	struct sc_batch *next;

	check(sc_batch_add(*integral, delta, &next), "add");
	sc_batch_release(*integral);
	*integral = next;
	apply_op(k, next, other, out);
}

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

/* Baseline "from scratch": append the delta to the table, consolidate the
 * whole integral (radix sort), run the operator over it. */
static void
recompute_scratch(enum kind k, struct table *t, const struct sc_batch *delta,
		  const struct sc_batch *other, struct sc_batch_builder *out)
{
	struct sc_batch *in;

	table_append(t, delta);
	check(sc_batch_from_records(2, t->rows, t->weights, t->n, &in),
	      "consolidate");
	apply_op(k, in, other, out);
	sc_batch_release(in);
}

/* --- one size ---------------------------------------------------------------
 */

struct run {
	enum kind k;
	uint64_t n;		 /* rows of state */
	uint64_t next;		 /* next fresh row index of stream A */
	uint64_t seed;		 /* retraction choices */
	uint8_t *gone;		 /* retracted rows of A */
	struct subject s;	 /* the incremental operator */
	struct sc_batch *base_a; /* the baseline's integral of A */
	struct sc_batch *base_b; /* the join's B (fixed) */
	struct table table;	 /* A as it arrived */
};

static struct sc_batch *
load_stream(struct run *r, uint64_t salt, uint8_t *gone, bool to_b)
{
	struct sc_batch *all, *next;

	check(sc_batch_empty(2, &all), "empty");
	for (uint64_t at = 0; at < r->n; at += LOAD_CHUNK) {
		size_t c = r->n - at < LOAD_CHUNK ? r->n - at : LOAD_CHUNK;
		struct sc_batch *d =
		    make_delta(r->k, r->n, at, c, 0, salt, gone, &r->seed);

		subject_step(&r->s, to_b ? NULL : d, to_b ? d : NULL);
		if (!to_b)
			table_append(&r->table, d);
		check(sc_batch_add(all, d, &next), "add");
		sc_batch_release(all);
		all = next;
		sc_batch_release(d);
	}
	return all;
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
	r->base_a = load_stream(r, 1, r->gone, false);
	if (k == K_JOIN)
		r->base_b = load_stream(r, 2, gone_b, true);
	r->next = n;
	subject_work(&r->s, SIZE_MAX);
	free(gone_b);
}

static void
run_free(struct run *r)
{
	subject_destroy(&r->s);
	sc_batch_release(r->base_a);
	sc_batch_release(r->base_b);
	free(r->table.rows);
	free(r->table.weights);
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
rate(const struct sc_batch *d, uint64_t ns)
{
	return (double)sc_batch_count(d) / ((double)(ns ? ns : 1) / 1e9);
}

static void
bench_size(enum kind k, uint64_t n, int reps, int base_reps)
{
	struct run r;
	struct sc_batch_builder out;
	double inc[32], step[32], kept[32], scratch[32];
	/* Integrated rows (all distinct), over both traces for the join. */
	int64_t live = k == K_JOIN ? 2 * (int64_t)n : (int64_t)n;
	size_t budget = 2 * (size_t)ceil(log2((double)n)) * DELTA;
	size_t rows_settled;

	run_load(&r, k, n);
	rows_settled = k == K_JOIN	 ? sc_join_rows(r.s.j)
		       : k == K_DISTINCT ? sc_distinct_rows(r.s.d)
					 : sc_aggregate_rows(r.s.a);
	emit_size("bytes per row (settled)", k, n, "bytes/row",
		  (double)subject_bytes(&r.s) / (double)rows_settled,
		  "raw 2-word row", 16.0);
	check(sc_batch_builder_init(&out, k == K_JOIN ? 3 : 2), "builder");
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
		/* The kept integral sees every delta, so it stays equal to
		 * the operator's; the slower from-scratch baseline runs on
		 * the first base_reps deltas... */
		t0 = sc_bench_cpu_ns();
		recompute_kept(k, &r.base_a, d, r.base_b, &out);
		t1 = sc_bench_cpu_ns();
		kept[i] = rate(d, t1 - t0);
		if (i < base_reps) {
			/* ...its table is not used after that. */
			t0 = sc_bench_cpu_ns();
			recompute_scratch(k, &r.table, d, r.base_b, &out);
			t1 = sc_bench_cpu_ns();
			scratch[i] = rate(d, t1 - t0);
		}
		for (size_t x = 0; x < sc_batch_count(d); x++)
			live += sc_batch_weight(d, x);
		sc_batch_release(d);
	}
	emit_size("bytes per row (steady: after the deltas, with fences)", k, n,
		  "bytes/row", (double)subject_bytes(&r.s) / (double)live,
		  "raw 2-word row", 16.0);
	emit_size("delta 1000 rows, step+work", k, n, "rows/s",
		  sc_bench_median(inc, (size_t)reps),
		  "recompute from scratch (consolidate integral + operator)",
		  sc_bench_median(scratch, (size_t)base_reps));
	emit_size("delta 1000 rows, step+work", k, n, "rows/s",
		  sc_bench_median(inc, (size_t)reps),
		  "recompute over a kept consolidated integral (add + "
		  "operator)",
		  sc_bench_median(kept, (size_t)reps));
	if (k == K_JOIN || k == K_SUM)
		emit_size(k == K_JOIN ? "probe rate (step only)"
				      : "update rate (step only)",
			  k, n, "rows/s", sc_bench_median(step, (size_t)reps),
			  NULL, 0);
	sc_batch_builder_fini(&out);
	run_free(&r);
}

/* Repetitions: 21 (5 with --quick, or SC_BENCH_REPS); the from-scratch
 * baseline, which sorts the whole state, runs fewer times on big states. */
static void
reps_for(uint64_t n, bool quick, int *reps, int *base_reps)
{
	const char *env = getenv("SC_BENCH_REPS");

	*reps = env ? atoi(env) : quick ? 5 : 21;
	if (*reps < 1 || *reps > 32)
		*reps = 21;
	*base_reps = n >= 10000000 ? 3 : n >= 1000000 ? 5 : *reps;
	if (*base_reps > *reps)
		*base_reps = *reps;
}

int
main(int argc, char **argv)
{
	bool quick = sc_bench_init(argc, argv);
	static const uint64_t sizes[] = {10000, 100000, 1000000, 10000000};
	size_t nsizes = quick ? 2 : 4;
	const char *only = getenv("SC_BENCH_OPS");     /* e.g. "join" */
	const char *max = getenv("SC_BENCH_MAX_ROWS"); /* e.g. 1000000 */
	int reps, base_reps;

	for (int k = K_JOIN; k <= K_MIN; k++) {
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
