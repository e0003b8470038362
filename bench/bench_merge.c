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
#include <time.h>

#include "bench/harness.h"
#include "operators/batch.h"
#include "operators/trace.h"

#define NCOLS 2u

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

		if (like && sc_batch_count(like) &&
		    sc_splitmix_next(&s) % 10 == 0) {
			size_t j = sc_splitmix_next(&s) % sc_batch_count(like);

			memcpy(row, sc_batch_row(like, j), sizeof(row));
			w = sc_splitmix_next(&s) % 2 ? -sc_batch_weight(like, j)
						     : 1;
		} else {
			row[0] = sc_splitmix_next(&s);
			row[1] = sc_splitmix_next(&s);
		}
		if (sc_batch_builder_push(&b, row, NCOLS, w))
			abort();
	}
	if (sc_batch_builder_finish(&b, &out))
		abort();
	sc_batch_builder_fini(&b);
	return out;
}

/* Wall and thread-CPU time at one instant: on a shared machine the CPU
 * figure does not count time the scheduler gave to other processes. */
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

/* Millions of `items` per second since t0: rate[0] by wall, rate[1] by
 * CPU time. */
static void
rates_since(struct stamp t0, double items, double rate[2])
{
	struct stamp t1 = stamp_now();

	rate[0] = items / 1e6 / ((double)(t1.wall - t0.wall + 1) / 1e9);
	rate[1] = items / 1e6 / ((double)(t1.cpu - t0.cpu + 1) / 1e9);
}

/* Emit the median of subject and baseline, by wall and by CPU time. */
static void
emit2(const char *kase, double (*subj)[2], const char *base_name,
      double (*base)[2], int reps)
{
	static const char *clock_name[2] = {"wall", "cpu"};

	for (int c = 0; c < 2; c++) {
		double v[16], b[16];
		char k[128];

		for (int r = 0; r < reps; r++) {
			v[r] = subj[r][c];
			b[r] = base ? base[r][c] : 0;
		}
		(void)snprintf(k, sizeof(k), "%s [%s]", kase, clock_name[c]);
		sc_bench_emit("merge", k, "Mrec/s",
			      sc_bench_median(v, (size_t)reps),
			      base ? base_name : NULL,
			      base ? sc_bench_median(b, (size_t)reps) : 0);
	}
}

static void
run_add(const struct sc_batch *a, const struct sc_batch *b, int reps)
{
	size_t nin = sc_batch_count(a) + sc_batch_count(b);
	size_t bytes_a = sc_batch_bytes(a) - sizeof(*a);
	size_t bytes_b = sc_batch_bytes(b) - sizeof(*b);
	double add[16][2], fresh[16][2], warm[16][2];
	char *buf = malloc(bytes_a + bytes_b);
	char kase[80];

	if (!buf)
		abort();
	memset(buf, 0, bytes_a + bytes_b);
	for (int r = 0; r < reps; r++) {
		struct sc_batch *sum;
		char *dst;
		struct stamp t0 = stamp_now();

		if (sc_batch_add(a, b, &sum))
			abort();
		rates_since(t0, (double)nin, add[r]);
		sc_batch_release(sum);

		t0 = stamp_now();
		dst = malloc(bytes_a + bytes_b);
		if (!dst)
			abort();
		memcpy(dst, a->data, bytes_a);
		memcpy(dst + bytes_a, b->data, bytes_b);
		sc_bench_keep(dst);
		rates_since(t0, (double)nin, fresh[r]);
		free(dst);

		t0 = stamp_now();
		memcpy(buf, a->data, bytes_a);
		memcpy(buf + bytes_a, b->data, bytes_b);
		sc_bench_keep(buf);
		rates_since(t0, (double)nin, warm[r]);
	}
	(void)snprintf(kase, sizeof(kase), "%zu + %zu u64x2", sc_batch_count(a),
		       sc_batch_count(b));
	emit2(kase, add, "memcpy to a fresh buffer", fresh, reps);
	emit2(kase, add, "memcpy to a touched buffer", warm, reps);
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
	double rate[16][2];

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
		struct stamp t0;

		if (sc_trace_create(NCOLS, &t))
			abort();
		t0 = stamp_now();
		for (size_t i = 0; i < nslices; i++)
			if (sc_trace_insert(t, slices[i]) ||
			    sc_trace_work(t, 8 * sc_batch_count(slices[i]),
					  NULL))
				abort();
		if (sc_trace_work(t, SIZE_MAX, NULL))
			abort();
		rates_since(t0, (double)nin, rate[r]);
		bytes = sc_trace_bytes(t);
		rows = sc_trace_rows(t);
		sc_trace_destroy(t);
	}
	for (size_t i = 0; i < nslices; i++)
		sc_batch_release(slices[i]);
	emit2("trace insert+work, 2 x 64 slices, settled", rate, NULL, NULL,
	      reps);
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
