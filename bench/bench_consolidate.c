/*
 * bench_consolidate.c - building a batch from unsorted records.
 *
 * Subject: push N random records of two u64 columns (about 10% of them
 * repeats of an earlier row, weights in [-3, 3] without 0) into a builder
 * and finish it (sort + consolidate into a new batch). Baseline, same input,
 * same run: copy the records into an array, glibc qsort with a row
 * comparator, and one compaction pass. Figures are medians of several
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

/* The baseline: qsort, then merge equal neighbours and drop zeros. */
static size_t
qsort_compact(const uint64_t *in, size_t n, uint64_t *work)
{
	size_t out = 0;

	memcpy(work, in, n * STRIDE * 8);
	qsort(work, n, STRIDE * 8, cmp_rec);
	for (size_t i = 0; i < n;) {
		uint64_t *r = work + i * STRIDE;
		int64_t w = (int64_t)r[NCOLS];

		for (i++; i < n && sc_row_eq(work + i * STRIDE, r, NCOLS); i++)
			w += (int64_t)work[i * STRIDE + NCOLS];
		if (w != 0) {
			memmove(work + out * STRIDE, r,
				NCOLS * sizeof(uint64_t));
			work[out * STRIDE + NCOLS] = (uint64_t)w;
			out++;
		}
	}
	return out;
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

static void
emit_pair(const char *kase, double *sw, double *sc, double *bw, double *bc,
	  int reps)
{
	char k[128];

	(void)snprintf(k, sizeof(k), "%s [wall]", kase);
	sc_bench_emit("consolidate", k, "Mrec/s",
		      sc_bench_median(sw, (size_t)reps),
		      bw ? "qsort+compact" : NULL,
		      bw ? sc_bench_median(bw, (size_t)reps) : 0);
	(void)snprintf(k, sizeof(k), "%s [cpu]", kase);
	sc_bench_emit("consolidate", k, "Mrec/s",
		      sc_bench_median(sc, (size_t)reps),
		      bc ? "qsort+compact" : NULL,
		      bc ? sc_bench_median(bc, (size_t)reps) : 0);
}

static void
run_case(size_t n, int reps)
{
	uint64_t *in = make_input(n, 42), *work = malloc(n * STRIDE * 8);
	struct sc_batch_builder b;
	double sw[16], sc[16], bw[16], bc[16];
	size_t rows = 0, rows_q = 0, bytes = 0;
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
		rows_q = qsort_compact(in, n, work);
		rates_since(t0, (double)n, &bw[r], &bc[r]);
	}
	if (rows != rows_q) {
		(void)fprintf(stderr,
			      "bench_consolidate: %zu rows vs qsort's %zu\n",
			      rows, rows_q);
		abort(); /* a wrong result is a bug, not a figure */
	}
	(void)snprintf(kase, sizeof(kase), "%zu u64x2 random, 10%% repeats", n);
	emit_pair(kase, sw, sc, bw, bc, reps);
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
	emit_pair(kase, sw, sc, NULL, NULL, reps);
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
