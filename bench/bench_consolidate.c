/*
 * bench_consolidate.c - building a batch from unsorted records.
 *
 * Subject: push N random records of two u64 columns (about 10% of them
 * repeats of an earlier row, weights in [-3, 3] without 0) into a builder
 * and finish it (sort + consolidate into a new batch). Baselines, same
 * input, same run: copy the records into an array, sort them, and one
 * compaction pass, with two sorts: glibc qsort with a row comparator (a
 * call through a function pointer per compare), and an introsort written
 * here with the compare inlined (intro_sort: median-of-three quicksort,
 * insertion sort below 16 records, heapsort past 2 log2 n levels, as
 * Musser's), the fair one: what a careful C programmer writes without a
 * radix sort. Higher is better (Mrec/s). Figures are medians of several
 * repetitions, in millions of input records per second, each measured two
 * ways: wall-clock time (the harness's clock) and this thread's CPU time.
 * The CPU-time figure is the one to compare across runs on a shared
 * machine: it does not count time the scheduler gave to other processes.
 * Also prints the memory a batch takes per row against the raw row size,
 * and the cost of small batches (1, 4, 16, 64 rows) in ns per batch against
 * an insertion sort written here (see run_small_case; `--small N` runs only
 * that case, for callgrind).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/harness.h"
#include "operators/batch.h"

#define NCOLS  2
#define STRIDE ((size_t)NCOLS + 1)

/* Wall and thread-CPU time at one instant. */
struct stamp {
	uint64_t wall, cpu; /* nanoseconds */
};

static struct stamp
stamp_now(void)
{
	struct stamp s;

	s.cpu = sc_bench_cpu_ns();
	s.wall = sc_bench_now_ns();
	return s;
}

/* Millions of `items` per second since t0, by wall and by CPU time. */
static void
rates_since(struct stamp t0, double items, double *wall, double *cpu)
{
	struct stamp t1 = stamp_now();

	*wall = items / 1e6 / ((double)(t1.wall - t0.wall) / 1e9);
	*cpu = items / 1e6 / ((double)(t1.cpu - t0.cpu + 1) / 1e9);
}

/* n records (row words then weight) with ~10% repeated rows. */
static uint64_t *
make_input(size_t n, uint64_t seed)
{
	uint64_t *d = calloc(n * STRIDE, sizeof(uint64_t)), s = seed;

	if (!d)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		uint64_t *r = d + i * STRIDE;
		int64_t w = (int64_t)(sc_splitmix_next(&s) % 6) - 3;

		if (i > 0 && sc_splitmix_next(&s) % 10 == 0) {
			memcpy(r, d + (sc_splitmix_next(&s) % i) * STRIDE,
			       NCOLS * sizeof(uint64_t));
		} else {
			r[0] = sc_splitmix_next(&s);
			r[1] = sc_splitmix_next(&s);
		}
		r[NCOLS] = (uint64_t)(w >= 0 ? w + 1 : w);
	}
	return d;
}

static int
cmp_rec(const void *a, const void *b)
{
	return sc_row_cmp(a, b, NCOLS);
}

/* ---- the introsort baseline, compares inlined ---------------------------- */

/* A record as the input lays it out: two key words, then the weight. */
struct rec {
	uint64_t k0, k1, w;
};

static inline bool
rec_less(const struct rec *a, const struct rec *b)
{
	return a->k0 < b->k0 || (a->k0 == b->k0 && a->k1 < b->k1);
}

static inline void
rec_swap(struct rec *a, struct rec *b)
{
	struct rec t = *a;

	*a = *b;
	*b = t;
}

static void
rec_insertion(struct rec *a, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct rec t = a[i];
		size_t j = i;

		for (; j > 0 && rec_less(&t, &a[j - 1]); j--)
			a[j] = a[j - 1];
		a[j] = t;
	}
}

static void
rec_sift(struct rec *a, size_t root, size_t n)
{
	for (size_t c; (c = 2 * root + 1) < n; root = c) {
		if (c + 1 < n && rec_less(&a[c], &a[c + 1]))
			c++;
		if (!rec_less(&a[root], &a[c]))
			return;
		rec_swap(&a[root], &a[c]);
	}
}

static void
rec_heapsort(struct rec *a, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		rec_sift(a, i, n);
	for (size_t i = n; i-- > 1;) {
		rec_swap(&a[0], &a[i]);
		rec_sift(a, 0, i);
	}
}

/* Median of a[0], a[n/2], a[n-1] moved to a[0]; then a Hoare partition
 * around it. Returns the split: a[0..p) <= pivot <= a[p..n). */
static size_t
rec_partition(struct rec *a, size_t n)
{
	struct rec *m = &a[n / 2], *z = &a[n - 1], pivot;
	size_t i = 0, j = n;

	if (rec_less(m, a))
		rec_swap(m, a);
	if (rec_less(z, m)) {
		rec_swap(z, m);
		if (rec_less(m, a))
			rec_swap(m, a);
	}
	pivot = *m;
	for (;;) {
		while (rec_less(&a[i], &pivot))
			i++;
		do
			j--;
		while (rec_less(&pivot, &a[j]));
		if (i >= j)
			return j + 1;
		rec_swap(&a[i], &a[j]);
		i++;
	}
}

static void
intro_loop(struct rec *a, size_t n, unsigned depth)
{
	while (n > 16) {
		size_t p;

		if (depth-- == 0) {
			rec_heapsort(a, n);
			return;
		}
		p = rec_partition(a, n);
		/* Recurse into the smaller side, loop on the larger. */
		if (p < n - p) {
			intro_loop(a, p, depth);
			a += p;
			n -= p;
		} else {
			intro_loop(a + p, n - p, depth);
			n = p;
		}
	}
	rec_insertion(a, n);
}

static void
intro_sort(struct rec *a, size_t n)
{
	unsigned depth = 0;

	for (size_t m = n; m > 1; m >>= 1)
		depth += 2;
	intro_loop(a, n, depth);
}

/* ---- the baselines ------------------------------------------------------ */

/* Merge equal neighbours of sorted work and drop zeros; the new count. */
static size_t compact_rows(uint64_t *d, size_t n);

/* Sort a copy of in into work (by intro_sort or qsort), then compact. */
static size_t
sort_compact(const uint64_t *in, size_t n, uint64_t *work, bool intro)
{
	memcpy(work, in, n * STRIDE * 8);
	if (intro)
		intro_sort((struct rec *)(void *)work, n);
	else
		qsort(work, n, STRIDE * 8, cmp_rec);
	return compact_rows(work, n);
}

/* The qsort baseline, then merge equal neighbours and drop zeros. */
static size_t
qsort_compact(const uint64_t *in, size_t n, uint64_t *work)
{
	return sort_compact(in, n, work, false);
}

/* Push all n records and finish. One builder lives across repetitions, as
 * an operator's does across steps (so does the baseline's work array). */
static struct sc_batch *
build(struct sc_batch_builder *b, const uint64_t *in, size_t n)
{
	struct sc_batch *out;

	if (sc_batch_builder_reserve(b, n))
		abort();
	for (size_t i = 0; i < n; i++)
		sc_batch_builder_push(b, in + i * STRIDE, NCOLS,
				      (int64_t)in[i * STRIDE + NCOLS]);
	if (sc_batch_builder_finish(b, &out))
		abort();
	return out;
}

/* One case against one baseline, by wall and by CPU time. */
static void
emit_pair(const char *kase, const char *base, double *sw, double *sc,
	  double *bw, double *bc, int reps)
{
	char k[128];

	(void)snprintf(k, sizeof(k), "%s [wall]", kase);
	sc_bench_emit("consolidate", k, "Mrec/s",
		      sc_bench_median(sw, (size_t)reps), bw ? base : NULL,
		      bw ? sc_bench_median(bw, (size_t)reps) : 0);
	(void)snprintf(k, sizeof(k), "%s [cpu]", kase);
	sc_bench_emit("consolidate", k, "Mrec/s",
		      sc_bench_median(sc, (size_t)reps), bc ? base : NULL,
		      bc ? sc_bench_median(bc, (size_t)reps) : 0);
}

/* The subject and both baselines on the same input, interleaved, so a
 * noisy moment hurts them alike. A result that differs is a bug. */
static void
run_case(size_t n, int reps)
{
	uint64_t *in = make_input(n, 42), *work = malloc(n * STRIDE * 8);
	struct sc_batch_builder b;
	double sw[16], sc[16], qw[16], qc[16], iw[16], ic[16];
	size_t rows = 0, rows_q = 0, rows_i = 0, bytes = 0;
	char kase[64];

	if (!in || !work || sc_batch_builder_init(&b, NCOLS))
		abort();
	for (int r = 0; r < reps; r++) {
		struct stamp t0 = stamp_now();
		struct sc_batch *out = build(&b, in, n);

		rates_since(t0, (double)n, &sw[r], &sc[r]);
		rows = sc_batch_count(out);
		bytes = sc_batch_bytes(out);
		sc_batch_release(out);
		t0 = stamp_now();
		rows_q = sort_compact(in, n, work, false);
		rates_since(t0, (double)n, &qw[r], &qc[r]);
		t0 = stamp_now();
		rows_i = sort_compact(in, n, work, true);
		rates_since(t0, (double)n, &iw[r], &ic[r]);
	}
	if (rows != rows_q || rows != rows_i) {
		(void)fprintf(stderr,
			      "bench_consolidate: %zu rows vs qsort's %zu and "
			      "introsort's %zu\n",
			      rows, rows_q, rows_i);
		abort(); /* a wrong result is a bug, not a figure */
	}
	(void)snprintf(kase, sizeof(kase), "%zu u64x2 random, 10%% repeats", n);
	emit_pair(kase, "qsort+compact", sw, sc, qw, qc, reps);
	emit_pair(kase, "introsort (inlined compare)+compact", sw, sc, iw, ic,
		  reps);
	(void)snprintf(kase, sizeof(kase), "%zu u64x2, batch bytes per row", n);
	sc_bench_emit("consolidate", kase, "bytes/row",
		      (double)bytes / (double)rows, "raw row bytes",
		      NCOLS * 8.0);
	sc_batch_builder_fini(&b);
	free(in);
	free(work);
}

/* Already sorted input (e.g. a batch re-pushed) is detected, not sorted. */
static void
run_sorted_case(size_t n, int reps)
{
	uint64_t *in = make_input(n, 7), *work = malloc(n * STRIDE * 8);
	struct sc_batch_builder b;
	double sw[16], sc[16];
	size_t m;
	char kase[64];

	if (!in || !work || sc_batch_builder_init(&b, NCOLS))
		abort();
	m = qsort_compact(in, n, work);
	for (int r = 0; r < reps; r++) {
		struct stamp t0 = stamp_now();

		sc_batch_release(build(&b, work, m));
		rates_since(t0, (double)m, &sw[r], &sc[r]);
	}
	(void)snprintf(kase, sizeof(kase), "%zu u64x2 already sorted", m);
	emit_pair(kase, NULL, sw, sc, NULL, NULL, reps);
	sc_batch_builder_fini(&b);
	free(in);
	free(work);
}

/*
 * Many small deltas, the common case of an incremental step (a frame on an
 * edge, a map's output): the cost of one finish, in ns per batch built. A
 * builder lives across batches, as an operator's does across steps, and a
 * new batch is made and released each time. Inputs cycle through a pool of
 * SMALL_POOL deltas so they stay in cache, as a step's output does.
 *
 * Baseline, same rows, same run: the least a small batch can cost here,
 * written out in this file: copy the rows into one malloc'ed buffer,
 * insertion sort, compact in place, free.
 *
 * small_subject and small_baseline are never inlined so that callgrind can
 * count each alone, e.g. for 4-row batches:
 *   valgrind --tool=callgrind --toggle-collect=small_subject \
 *       build/bench/bench_consolidate --quick --small 4
 * (Ir / batches is the instruction count per batch; the batch count is
 * printed on stderr).
 */
#define SMALL_POOL 256

static void
insertion_sort_rows(uint64_t *d, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		uint64_t tmp[STRIDE];
		size_t j = i;

		memcpy(tmp, d + i * STRIDE, sizeof(tmp));
		while (j > 0 &&
		       sc_row_cmp(d + (j - 1) * STRIDE, tmp, NCOLS) > 0) {
			memcpy(d + j * STRIDE, d + (j - 1) * STRIDE,
			       sizeof(tmp));
			j--;
		}
		memcpy(d + j * STRIDE, tmp, sizeof(tmp));
	}
}

/* Merge equal neighbours of sorted d in place, drop zeros; new count. */
static size_t
compact_rows(uint64_t *d, size_t n)
{
	size_t out = 0;

	for (size_t i = 0; i < n;) {
		uint64_t *r = d + i * STRIDE;
		int64_t w = (int64_t)r[NCOLS];

		for (i++; i < n && sc_row_eq(d + i * STRIDE, r, NCOLS); i++)
			w += (int64_t)d[i * STRIDE + NCOLS];
		if (w != 0) {
			memmove(d + out * STRIDE, r, NCOLS * sizeof(uint64_t));
			d[out * STRIDE + NCOLS] = (uint64_t)w;
			out++;
		}
	}
	return out;
}

__attribute__((noinline)) static size_t
small_subject(struct sc_batch_builder *b, const uint64_t *pool, size_t rows,
	      size_t batches)
{
	size_t sink = 0;

	for (size_t k = 0; k < batches; k++) {
		struct sc_batch *out =
		    build(b, pool + (k % SMALL_POOL) * rows * STRIDE, rows);

		sink += sc_batch_count(out);
		sc_batch_release(out);
	}
	return sink;
}

__attribute__((noinline)) static size_t
small_baseline(const uint64_t *pool, size_t rows, size_t batches)
{
	size_t sink = 0;

	for (size_t k = 0; k < batches; k++) {
		uint64_t *d = malloc(rows * STRIDE * sizeof(uint64_t));

		if (!d)
			abort();
		memcpy(d, pool + (k % SMALL_POOL) * rows * STRIDE,
		       rows * STRIDE * sizeof(uint64_t));
		insertion_sort_rows(d, rows);
		sink += compact_rows(d, rows);
		sc_bench_keep(d);
		free(d);
	}
	return sink;
}

/* Batches per repetition: about 2^20 / (rows + 3), so each repetition
 * takes a few tens of milliseconds whatever the size (1/16 of that in
 * quick mode). */
static size_t
small_batches(size_t rows)
{
	return ((size_t)1 << (sc_bench_quick() ? 16 : 20)) / (rows + 3);
}

static void
run_small_case(size_t rows, int reps)
{
	uint64_t *pool = make_input(rows * SMALL_POOL, 11 + rows);
	size_t batches = small_batches(rows);
	struct sc_batch_builder b;
	double sw[16], sc[16], bw[16], bc[16];
	char kase[64];

	if (!pool || sc_batch_builder_init(&b, NCOLS))
		abort();
	(void)fprintf(stderr, "bench_consolidate: %zu batches of %zu rows\n",
		      batches, rows);
	for (int r = 0; r < reps; r++) {
		struct stamp t0 = stamp_now();
		size_t got = small_subject(&b, pool, rows, batches), want;

		rates_since(t0, (double)batches, &sw[r], &sc[r]);
		t0 = stamp_now();
		want = small_baseline(pool, rows, batches);
		rates_since(t0, (double)batches, &bw[r], &bc[r]);
		if (got != want) {
			(void)fprintf(stderr,
				      "bench_consolidate: %zu rows vs the "
				      "baseline's %zu\n",
				      got, want);
			abort(); /* a wrong result is a bug, not a figure */
		}
		/* Mbatch/s -> ns per batch */
		sw[r] = 1e3 / sw[r];
		sc[r] = 1e3 / sc[r];
		bw[r] = 1e3 / bw[r];
		bc[r] = 1e3 / bc[r];
	}
	(void)snprintf(kase, sizeof(kase), "batches of %zu u64x2 rows", rows);
	for (int c = 0; c < 2; c++) {
		char k[96];

		(void)snprintf(k, sizeof(k), "%s [%s]", kase,
			       c ? "cpu" : "wall");
		sc_bench_emit("consolidate", k, "ns/batch",
			      sc_bench_median(c ? sc : sw, (size_t)reps),
			      "insertion sort+compact",
			      sc_bench_median(c ? bc : bw, (size_t)reps));
	}
	sc_batch_builder_fini(&b);
	free(pool);
}

/* `--small N` runs only the small-batch case of N rows (for callgrind). */
static long
small_only(int argc, char **argv)
{
	for (int i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], "--small") == 0)
			return strtol(argv[i + 1], NULL, 10);
	return 0;
}

int
main(int argc, char **argv)
{
	bool quick = sc_bench_init(argc, argv);
	size_t n = quick ? 100000 : 1000000;
	int reps = quick ? 3 : 7;
	static const size_t small_rows[] = {1, 4, 16, 64};
	long only = small_only(argc, argv);

	if (only > 0) {
		run_small_case((size_t)only, reps);
		return 0;
	}
	run_case(n, reps);
	run_sorted_case(n, reps);
	for (size_t i = 0; i < sizeof(small_rows) / sizeof(small_rows[0]); i++)
		run_small_case(small_rows[i], reps);
	return 0;
}
