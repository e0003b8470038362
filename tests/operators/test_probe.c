/*
 * test_probe.c - the operators' internal trace probes (operators/probe_int.h)
 * on long runs, where the batched (prepared) search is used: every seek,
 * walk and point weight must equal a plain scan of the runs.
 *
 * The operator tests check the probes through the operators, but their
 * states are small; these states are long enough (runs of thousands of
 * rows) for sc__probe_prepare to take its lockstep path.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "operators/probe_int.h"
#include "operators/trace.h"
#include "tests/support/prop.h"

#define SUITE "probe"

/* A random batch of n rows (key in [0, keys), value in [0, 4)), weights in
 * [-2, 3] \ {0}. */
static struct sc_batch *
random_batch(struct sc_rng *r, size_t n, uint64_t keys)
{
	struct sc_batch_builder b;
	struct sc_batch *out;

	cr_assert_eq(sc_batch_builder_init(&b, 2), 0);
	for (size_t i = 0; i < n; i++) {
		uint64_t row[2] = {sc_rng_below(r, keys), sc_rng_below(r, 4)};
		int64_t w = sc_rng_range(r, -2, 3);

		cr_assert_eq(sc_batch_builder_push(&b, row, 2, w ? w : 1), 0);
	}
	cr_assert_eq(sc_batch_builder_finish(&b, &out), 0);
	sc_batch_builder_fini(&b);
	return out;
}

/* The summed weight of a row over the runs and the extra batch, by a
 * linear scan of each. */
static int64_t
scan_weight(struct sc_batch *const *runs, size_t n, const uint64_t *row,
	    uint32_t k)
{
	int64_t w = 0;

	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < sc_batch_count(runs[i]); j++)
			if (memcmp(sc_batch_row(runs[i], j), row,
				   k * sizeof(uint64_t)) == 0)
				w += sc_batch_weight(runs[i], j);
	return w;
}

Test(probe, prepared_seeks_and_weights_equal_a_plain_scan)
{
	uint64_t base = sc_prop_seed(7401);

	for (uint64_t c = 0; c < sc_prop_count(4); c++) {
		struct sc_rng r;
		struct sc_trace *t;
		struct sc_batch *runs[5], *keys;
		struct sc__probe p, q;
		uint64_t nkeys;

		sc_rng_seed(&r, base + c);
		nkeys = 2000 + sc_rng_below(&r, 20000);
		cr_assert_eq(sc_trace_create(2, &t), 0);
		for (int i = 0; i < 4; i++) {
			runs[i] = random_batch(
			    &r, 3000 + sc_rng_below(&r, 9000), nkeys);
			cr_assert_eq(sc_trace_insert(t, runs[i]), 0);
		}
		runs[4] = random_batch(&r, 50, nkeys); /* the extra batch */
		keys = random_batch(&r, 1 + sc_rng_below(&r, 300), nkeys);
		/* Walks by key (k = 1), prepared (p) and plain (q). */
		sc__probe_init(&p, 2, t, runs[4]);
		sc__probe_init(&q, 2, t, runs[4]);
		sc__probe_prepare(&p, keys, 1, NULL);
		cr_assert_gt(p.pm, 0, "the long runs were not prepared");
		for (size_t i = 0; i < sc_batch_count(keys); i++) {
			const uint64_t *key = sc_batch_row(keys, i), *rp, *rq;
			int64_t wp, wq;
			int a, b;

			if (i > 0 && sc_batch_row(keys, i - 1)[0] == key[0])
				continue;
			/* Skip some keys: a caller may seek only some. */
			if (sc_rng_below(&r, 4) == 0)
				continue;
			sc__probe_seek(&p, key, 1);
			sc__probe_seek(&q, key, 1);
			do {
				a = sc__probe_next(&p, &rp, &wp);
				b = sc__probe_next(&q, &rq, &wq);
				cr_assert_eq(a, b);
				if (a == 1) {
					cr_assert(memcmp(rp, rq, 16) == 0);
					cr_assert_eq(wp, wq);
					cr_assert_eq(
					    wp, scan_weight(runs, 5, rp, 2));
				}
			} while (a == 1);
		}
		sc__probe_fini(&p);
		/* Point weights (k = ncols), prepared. */
		sc__probe_init(&p, 2, t, runs[4]);
		sc__probe_prepare(&p, keys, 2, NULL);
		for (size_t i = 0; i < sc_batch_count(keys); i++) {
			const uint64_t *row = sc_batch_row(keys, i);
			int64_t w;

			cr_assert_eq(sc__probe_weight(&p, row, &w), 0);
			cr_assert_eq(w, scan_weight(runs, 5, row, 2),
				     "row (%llu, %llu)",
				     (unsigned long long)row[0],
				     (unsigned long long)row[1]);
		}
		sc__probe_fini(&p);
		sc_trace_destroy(t);
		for (int i = 0; i < 5; i++)
			sc_batch_release(runs[i]);
		sc_batch_release(keys);
	}
}

Test(probe, prepared_backward_walks_equal_forward_walks_reversed)
{
	struct sc_rng r;
	struct sc_trace *t;
	struct sc_batch *b1, *b2, *keys;
	struct sc__probe f, bk;
	const uint64_t *row;
	int64_t w;

	sc_rng_seed(&r, sc_prop_seed(7402));
	cr_assert_eq(sc_trace_create(2, &t), 0);
	b1 = random_batch(&r, 8000, 500);
	b2 = random_batch(&r, 6000, 500);
	cr_assert_eq(sc_trace_insert(t, b1), 0);
	cr_assert_eq(sc_trace_insert(t, b2), 0);
	keys = random_batch(&r, 40, 500);
	sc__probe_init(&f, 2, t, NULL);
	sc__probe_init(&bk, 2, t, NULL);
	sc__probe_prepare(&bk, keys, 1, NULL);
	for (size_t i = 0; i < sc_batch_count(keys); i++) {
		const uint64_t *key = sc_batch_row(keys, i);
		uint64_t fw[64][2], n = 0;

		if (i > 0 && sc_batch_row(keys, i - 1)[0] == key[0])
			continue;
		sc__probe_seek(&f, key, 1);
		sc__probe_seek(&bk, key, 1);
		while (sc__probe_next(&f, &row, &w) == 1 && n < 64) {
			fw[n][0] = row[0];
			fw[n++][1] = row[1];
		}
		while (sc__probe_prev(&bk, &row, &w) == 1) {
			cr_assert_gt(n, 0);
			n--;
			cr_assert(fw[n][0] == row[0] && fw[n][1] == row[1]);
		}
		cr_assert_eq(n, 0);
	}
	sc__probe_fini(&bk);
	sc_trace_destroy(t);
	sc_batch_release(b1);
	sc_batch_release(b2);
	sc_batch_release(keys);
}

/* Compare a prepared probe (with the fence cache fs) against a plain one
 * on every seek and point weight of `keys`. */
static void
compare_prepared(struct sc_trace *t, struct sc_batch *keys,
		 struct sc__fences *fs)
{
	struct sc__probe p, q;
	const uint64_t *rp, *rq;
	int64_t wp, wq;

	for (uint32_t k = 1; k <= 2; k++) {
		sc__probe_init(&p, 2, t, NULL);
		sc__probe_init(&q, 2, t, NULL);
		sc__probe_prepare(&p, keys, k, fs);
		for (size_t i = 0; i < sc_batch_count(keys); i++) {
			const uint64_t *key = sc_batch_row(keys, i);
			int a, b;

			if (i > 0 && memcmp(sc_batch_row(keys, i - 1), key,
					    k * sizeof(uint64_t)) == 0)
				continue;
			if (k == 2) {
				cr_assert_eq(sc__probe_weight(&p, key, &wp), 0);
				cr_assert_eq(sc__probe_weight(&q, key, &wq), 0);
				cr_assert_eq(wp, wq);
				continue;
			}
			sc__probe_seek(&p, key, k);
			sc__probe_seek(&q, key, k);
			do {
				a = sc__probe_next(&p, &rp, &wp);
				b = sc__probe_next(&q, &rq, &wq);
				cr_assert_eq(a, b);
				cr_assert(a != 1 || (memcmp(rp, rq, 16) == 0 &&
						     wp == wq));
			} while (a == 1);
		}
		sc__probe_fini(&p);
	}
}

Test(probe, fenced_searches_equal_plain_ones_across_merges)
{
	struct sc_rng r;
	struct sc_trace *t;
	struct sc__fences fs;

	sc_rng_seed(&r, sc_prop_seed(7403));
	cr_assert_eq(sc_trace_create(2, &t), 0);
	sc__fences_init(&fs);
	for (int round = 0; round < 6; round++) {
		/* Few keys, 4 values each: many rows share a first word, so
		 * the fence lands before long runs of ties. */
		uint64_t nkeys = round % 3 == 0	  ? 100000
				 : round % 3 == 1 ? 3000
						  : 300;
		struct sc_batch *b = random_batch(&r, 40000, nkeys);
		struct sc_batch *keys = random_batch(&r, 400, nkeys);

		cr_assert_eq(sc_trace_insert(t, b), 0);
		compare_prepared(t, keys, &fs);
		cr_assert_gt(sc__fences_bytes(&fs), 0);
		cr_assert_leq(fs.n, sc_trace_runs(t));
		cr_assert_eq(sc_trace_work(t, 30000, NULL), 0);
		/* A merged-away run must not be kept alive by its fence. */
		sc__fences_sync(&fs, t);
		for (size_t i = 0; i < fs.n; i++) {
			bool live = false;

			for (size_t j = 0; j < sc_trace_runs(t); j++)
				live |= sc_trace_run(t, j) == fs.run[i];
			cr_assert(live, "fence %zu outlived its run", i);
		}
		sc_batch_release(b);
		sc_batch_release(keys);
	}
	sc__fences_fini(&fs);
	cr_assert_eq(fs.n, 0);
	sc_trace_destroy(t);
}
