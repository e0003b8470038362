/*
 * bench_merge.c - adding two consolidated batches (one linear merge).
 *
 * Subject: sc_batch_add of two consolidated batches of N random rows of two
 * u64 columns each (10% of b's rows also in a, half of those cancelling),
 * in millions of input records per second. Baselines, same run: memcpy of
 * the same bytes (both inputs) into a fresh buffer, as the add writes a
 * fresh batch, and into a buffer already touched (the copy's best case).
 * Medians of several repetitions. Also: sc_trace_insert + sc_trace_work of
 * the same inputs in 64 slices, and the memory a trace of them takes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/harness.h"
#include "operators/batch.h"
#include "operators/trace.h"

#define NCOLS 2

static uint64_t
rng(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A consolidated batch of n random rows; if `like` is given, 10% of the
 * rows are copied from it, half with the opposite weight. */
static struct sc_batch *
make_batch(size_t n, uint64_t seed, const struct sc_batch *like)
{
	struct sc_batch_builder b;
	struct sc_batch *out;
	uint64_t s = seed, row[NCOLS];

	if (sc_batch_builder_init(&b, NCOLS) || sc_batch_builder_reserve(&b, n))
		abort();
	for (size_t i = 0; i < n; i++) {
		int64_t w = 1;

		if (like && sc_batch_count(like) && rng(&s) % 10 == 0) {
			size_t j = rng(&s) % sc_batch_count(like);

			memcpy(row, sc_batch_row(like, j), sizeof(row));
			w = rng(&s) % 2 ? -sc_batch_weight(like, j) : 1;
		} else {
			row[0] = rng(&s);
			row[1] = rng(&s);
		}
		if (sc_batch_builder_push(&b, row, NCOLS, w))
			abort();
	}
	if (sc_batch_builder_finish(&b, &out))
		abort();
	sc_batch_builder_fini(&b);
	return out;
}

static double
secs_since(uint64_t t0)
{
	return (double)(sc_bench_now_ns() - t0) / 1e9;
}

static void
run_add(const struct sc_batch *a, const struct sc_batch *b, int reps)
{
	size_t nin = sc_batch_count(a) + sc_batch_count(b);
	size_t bytes_a = sc_batch_bytes(a) - sizeof(*a);
	size_t bytes_b = sc_batch_bytes(b) - sizeof(*b);
	double add[16], fresh[16], warm[16];
	char *buf = malloc(bytes_a + bytes_b);
	char kase[80];

	if (!buf)
		abort();
	memset(buf, 0, bytes_a + bytes_b);
	for (int r = 0; r < reps; r++) {
		struct sc_batch *sum;
		char *dst;
		uint64_t t0 = sc_bench_now_ns();

		if (sc_batch_add(a, b, &sum))
			abort();
		add[r] = (double)nin / 1e6 / secs_since(t0);
		sc_batch_release(sum);

		t0 = sc_bench_now_ns();
		dst = malloc(bytes_a + bytes_b);
		if (!dst)
			abort();
		memcpy(dst, a->data, bytes_a);
		memcpy(dst + bytes_a, b->data, bytes_b);
		sc_bench_keep(dst);
		fresh[r] = (double)nin / 1e6 / secs_since(t0);
		free(dst);

		t0 = sc_bench_now_ns();
		memcpy(buf, a->data, bytes_a);
		memcpy(buf + bytes_a, b->data, bytes_b);
		sc_bench_keep(buf);
		warm[r] = (double)nin / 1e6 / secs_since(t0);
	}
	snprintf(kase, sizeof(kase), "%zu + %zu u64x2", sc_batch_count(a),
		 sc_batch_count(b));
	sc_bench_emit(
	    "merge", kase, "Mrec/s", sc_bench_median(add, (size_t)reps),
	    "memcpy to a fresh buffer", sc_bench_median(fresh, (size_t)reps));
	sc_bench_emit(
	    "merge", kase, "Mrec/s", sc_bench_median(add, (size_t)reps),
	    "memcpy to a touched buffer", sc_bench_median(warm, (size_t)reps));
	free(buf);
}

/* Rows [lo, hi) of b as a batch of their own. They are sorted already,
 * so the builder sees that and skips the sort. */
static struct sc_batch *
make_slice(const struct sc_batch *b, size_t lo, size_t hi)
{
	struct sc_batch_builder bld;
	struct sc_batch *out;

	if (sc_batch_builder_init(&bld, NCOLS) ||
	    sc_batch_builder_reserve(&bld, hi - lo))
		abort();
	for (size_t i = lo; i < hi; i++)
		if (sc_batch_builder_push(&bld, sc_batch_row(b, i), NCOLS,
					  sc_batch_weight(b, i)))
			abort();
	if (sc_batch_builder_finish(&bld, &out))
		abort();
	sc_batch_builder_fini(&bld);
	return out;
}

/* Insert both inputs into a trace in 64 slices each (built beforehand),
 * with a merge budget of 8 units per inserted row, then settle it. */
static void
run_trace(const struct sc_batch *a, const struct sc_batch *b, int reps)
{
	struct sc_batch *slices[130];
	const struct sc_batch *in[2] = {a, b};
	size_t nslices = 0, nin = 0, bytes = 0, rows = 0;
	double rate[16];

	for (int k = 0; k < 2; k++) {
		size_t n = sc_batch_count(in[k]), step = n / 64 + 1;

		for (size_t lo = 0; lo < n; lo += step) {
			size_t hi = lo + step < n ? lo + step : n;

			slices[nslices++] = make_slice(in[k], lo, hi);
			nin += hi - lo;
		}
	}
	for (int r = 0; r < reps; r++) {
		struct sc_trace *t;
		uint64_t t0;

		if (sc_trace_create(NCOLS, &t))
			abort();
		t0 = sc_bench_now_ns();
		for (size_t i = 0; i < nslices; i++)
			if (sc_trace_insert(t, slices[i]) ||
			    sc_trace_work(t, 8 * sc_batch_count(slices[i]),
					  NULL))
				abort();
		if (sc_trace_work(t, SIZE_MAX, NULL))
			abort();
		rate[r] = (double)nin / 1e6 / secs_since(t0);
		bytes = sc_trace_bytes(t);
		rows = sc_trace_rows(t);
		sc_trace_destroy(t);
	}
	for (size_t i = 0; i < nslices; i++)
		sc_batch_release(slices[i]);
	sc_bench_emit("merge", "trace insert+work, 2 x 64 slices, settled",
		      "Mrec/s", sc_bench_median(rate, (size_t)reps), NULL, 0);
	sc_bench_emit("merge", "settled trace bytes per row", "bytes/row",
		      (double)bytes / (double)(rows ? rows : 1),
		      "raw row bytes", NCOLS * 8.0);
}

int
main(int argc, char **argv)
{
	bool quick = sc_bench_init(argc, argv);
	size_t n = quick ? 100000 : 1000000;
	int reps = quick ? 3 : 7;
	struct sc_batch *a = make_batch(n, 1, NULL);
	struct sc_batch *b = make_batch(n, 2, a);

	run_add(a, b, reps);
	run_trace(a, b, quick ? 1 : 3);
	sc_batch_release(a);
	sc_batch_release(b);
	return 0;
}
