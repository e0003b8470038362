/*
 * bench_consolidate.c - building a batch from unsorted records.
 *
 * Subject: push N random records of two u64 columns (about 10% of them
 * repeats of an earlier row, weights in [-3, 3] without 0) into a builder
 * and finish it (sort + consolidate). Baseline, same input, same run: copy
 * the records into an array, glibc qsort with a row comparator, and one
 * compaction pass. Figures are medians of several repetitions, in millions
 * of input records per second. Also prints the memory a batch takes per row
 * against the raw row size.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/harness.h"
#include "operators/batch.h"

#define NCOLS  2
#define STRIDE (NCOLS + 1)

static uint64_t
rng(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* n records (row words then weight) with ~10% repeated rows. */
static uint64_t *
make_input(size_t n, uint64_t seed)
{
	uint64_t *d = malloc(n * STRIDE * sizeof(uint64_t)), s = seed;

	if (!d)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		uint64_t *r = d + i * STRIDE;
		int64_t w = (int64_t)(rng(&s) % 6) - 3;

		if (i > 0 && rng(&s) % 10 == 0) {
			memcpy(r, d + (rng(&s) % i) * STRIDE, NCOLS * 8);
		} else {
			r[0] = rng(&s);
			r[1] = rng(&s);
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
			memmove(work + out * STRIDE, r, NCOLS * 8);
			work[out * STRIDE + NCOLS] = (uint64_t)w;
			out++;
		}
	}
	return out;
}

/* One builder lives across repetitions, as an operator's does across
 * steps (so does the baseline's work array). */
static double
time_builder(struct sc_batch_builder *b, const uint64_t *in, size_t n,
	     size_t *rows, size_t *bytes)
{
	struct sc_batch *out;
	uint64_t t0;
	double dt;

	t0 = sc_bench_now_ns();
	if (sc_batch_builder_reserve(b, n))
		abort();
	for (size_t i = 0; i < n; i++)
		sc_batch_builder_push(b, in + i * STRIDE, NCOLS,
				      (int64_t)in[i * STRIDE + NCOLS]);
	if (sc_batch_builder_finish(b, &out))
		abort();
	dt = (double)(sc_bench_now_ns() - t0) / 1e9;
	*rows = sc_batch_count(out);
	*bytes = sc_batch_bytes(out);
	sc_batch_release(out);
	return dt;
}

static void
run_case(size_t n, int reps)
{
	uint64_t *in = make_input(n, 42), *work = malloc(n * STRIDE * 8);
	struct sc_batch_builder b;
	double subj[16], base[16];
	size_t rows = 0, rows_q = 0, bytes = 0;
	char kase[64];

	if (!in || !work || sc_batch_builder_init(&b, NCOLS))
		abort();
	for (int r = 0; r < reps; r++) {
		uint64_t t0;

		subj[r] =
		    (double)n / 1e6 / time_builder(&b, in, n, &rows, &bytes);
		t0 = sc_bench_now_ns();
		rows_q = qsort_compact(in, n, work);
		base[r] =
		    (double)n / 1e6 / ((double)(sc_bench_now_ns() - t0) / 1e9);
	}
	if (rows != rows_q) {
		fprintf(stderr, "bench_consolidate: %zu rows vs qsort's %zu\n",
			rows, rows_q);
		exit(1);
	}
	snprintf(kase, sizeof(kase), "%zu u64x2 random, 10%% repeats", n);
	sc_bench_emit("consolidate", kase, "Mrec/s",
		      sc_bench_median(subj, (size_t)reps), "qsort+compact",
		      sc_bench_median(base, (size_t)reps));
	snprintf(kase, sizeof(kase), "%zu u64x2, batch bytes per row", n);
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
	double subj[16];
	size_t rows, bytes, m;
	char kase[64];

	if (!in || !work || sc_batch_builder_init(&b, NCOLS))
		abort();
	m = qsort_compact(in, n, work);
	for (int r = 0; r < reps; r++)
		subj[r] =
		    (double)m / 1e6 / time_builder(&b, work, m, &rows, &bytes);
	sc_batch_builder_fini(&b);
	snprintf(kase, sizeof(kase), "%zu u64x2 already sorted", m);
	sc_bench_emit("consolidate", kase, "Mrec/s",
		      sc_bench_median(subj, (size_t)reps), NULL, 0);
	free(in);
	free(work);
}

int
main(int argc, char **argv)
{
	bool quick = sc_bench_init(argc, argv);
	size_t n = quick ? 100000 : 1000000;
	int reps = quick ? 3 : 7;

	run_case(n, reps);
	run_sorted_case(n, reps);
	return 0;
}
