/*
 * test_trace.c - the LSM spine: after every insert and any spread of merge
 * work, the integral equals the sum of everything inserted (kept by an
 * independent reference), key lookups agree with a scan of it, the spine
 * settles into geometric sizes, and bad input changes nothing.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "operators/trace.h"
#include "operators/waterline_int.h"
#include "tests/support/prop.h"
#include "tests/support/zset_gen.h"

#define SUITE "trace"

/* The lookup of key[0..k) checked against a scan of the reference. */
static bool
lookup_matches_reference(const struct sc_trace *t, const struct zref *z,
			 const uint64_t *key, uint32_t k)
{
	struct sc_batch *got;
	struct zref want;
	bool ok;

	zref_init(&want, z->ncols);
	for (size_t i = 0; i < z->n; i++)
		if (zref_cmp(z->rows + i * z->ncols, key, k) == 0)
			zref_add(&want, z->rows + i * z->ncols, z->w[i]);
	cr_assert_eq(sc_trace_lookup(t, key, k, &got), 0, "%s", sc_errmsg());
	ok = zref_equals(&want, got);
	sc_batch_release(got);
	zref_fini(&want);
	return ok;
}

static bool
integral_matches_reference(const struct sc_trace *t, const struct zref *z)
{
	struct sc_batch *I;
	bool ok;

	cr_assert_eq(sc_trace_integral(t, &I), 0, "%s", sc_errmsg());
	ok = zref_equals(z, I);
	sc_batch_release(I);
	return ok;
}

Test(trace, integral_is_the_sum_of_inserts_under_any_spread_of_work)
{
	uint64_t base = sc_prop_seed(2001);

	for (uint64_t c = 0; c < sc_prop_count(25); c++) {
		struct sc_rng r;
		struct sc_schema s;
		struct sc_trace *t;
		struct zref z;
		const char *name =
		    "integral_is_the_sum_of_inserts_under_any_spread_of_work";

		sc_rng_seed(&r, base + c);
		zgen_schema(&r, 3, &s);
		zref_init(&z, s.ncols);
		cr_assert_eq(sc_trace_create(s.ncols, &t), 0);
		for (int step = 0; step < 40; step++) {
			struct sc_batch *b =
			    zgen_batch(&r, &s, 1 + sc_rng_below(&r, 60), 8, &z);
			uint64_t key[SC_SCHEMA_MAX_COLS];
			size_t budget, done;

			cr_assert_eq(sc_trace_insert(t, b), 0);
			sc_batch_release(b); /* the trace holds its own */
			SC_PROP_ASSERT(base + c, SUITE, name,
				       integral_matches_reference(t, &z),
				       "after insert %d", step);
			/* Random budgets: none, a little, a lot. */
			budget = sc_rng_below(&r, 3) == 0
				     ? 0
				     : sc_rng_below(&r, 1 + 40 * (size_t)step);
			cr_assert_eq(sc_trace_work(t, budget, &done), 0);
			cr_assert_leq(done, budget);
			SC_PROP_ASSERT(base + c, SUITE, name,
				       integral_matches_reference(t, &z),
				       "after work %zu at step %d", budget,
				       step);
			zgen_row(&r, &s, 8, key);
			SC_PROP_ASSERT(
			    base + c, SUITE, name,
			    lookup_matches_reference(
				t, &z, key,
				(uint32_t)sc_rng_below(&r, s.ncols + 1)),
			    "lookup at step %d", step);
		}
		zref_fini(&z);
		sc_trace_destroy(t);
	}
}

Test(trace, settled_spine_has_geometrically_shrinking_runs)
{
	struct sc_trace *t;
	size_t done;

	cr_assert_eq(sc_trace_create(1, &t), 0);
	for (uint64_t i = 0; i < 300; i++) {
		uint64_t rows[4] = {4 * i, 4 * i + 1, 4 * i + 2, 4 * i + 3};
		struct sc_batch *b;

		cr_assert_eq(sc_batch_from_records(1, rows, NULL, 4, &b), 0);
		cr_assert_eq(sc_trace_insert(t, b), 0);
		sc_batch_release(b);
		cr_assert_eq(sc_trace_work(t, SIZE_MAX, &done), 0);
		cr_assert_eq(sc_trace_pending(t), 0);
		for (size_t j = 0; j + 1 < sc_trace_runs(t); j++)
			cr_assert_gt(sc_batch_count(sc_trace_run(t, j)),
				     2 * sc_batch_count(sc_trace_run(t, j + 1)),
				     "runs %zu and %zu after insert %llu", j,
				     j + 1, (unsigned long long)i);
	}
	/* 1200 rows: at most log2(1200) + 1 runs. */
	cr_assert_leq(sc_trace_runs(t), 11);
	cr_assert_eq(sc_trace_rows(t), 1200);
	sc_trace_destroy(t);
}

Test(trace, work_stops_at_its_budget_and_pending_falls_to_zero)
{
	struct sc_trace *t;
	size_t done, before;

	cr_assert_eq(sc_trace_create(2, &t), 0);
	for (uint64_t i = 0; i < 8; i++) {
		uint64_t rows[200];
		struct sc_batch *b;

		for (size_t j = 0; j < 100; j++) {
			rows[2 * j] = (uint64_t)j;
			rows[2 * j + 1] = i;
		}
		cr_assert_eq(sc_batch_from_records(2, rows, NULL, 100, &b), 0);
		cr_assert_eq(sc_trace_insert(t, b), 0);
		sc_batch_release(b);
	}
	cr_assert_eq(sc_trace_runs(t), 8);
	before = sc_trace_pending(t);
	cr_assert_gt(before, 0);
	cr_assert_eq(sc_trace_work(t, 10, &done), 0);
	cr_assert_eq(done, 10);
	cr_assert_eq(sc_trace_runs(t), 8, "an unfinished merge is invisible");
	cr_assert_lt(sc_trace_pending(t), before);
	while (sc_trace_pending(t) > 0) {
		cr_assert_eq(sc_trace_work(t, 37, &done), 0);
		cr_assert_gt(done, 0);
	}
	cr_assert_eq(sc_trace_work(t, 100, &done), 0);
	cr_assert_eq(done, 0, "settled: no work left");
	cr_assert_eq(sc_trace_rows(t), 800);
	cr_assert_eq(sc_trace_runs(t), 1);
	sc_trace_destroy(t);
}

Test(trace, cursor_sums_across_runs_and_skips_cancelled_rows)
{
	struct sc_trace *t;
	struct sc_trace_cursor c;
	uint64_t r1[] = {1, 10, 1, 20, 2, 30}, r2[] = {1, 10, 1, 20};
	int64_t w1[] = {5, 1, 1}, w2[] = {2, -1};
	struct sc_batch *a, *b;
	const uint64_t *row;
	int64_t w;
	uint64_t key = 1;

	cr_assert_eq(sc_batch_from_records(2, r1, w1, 3, &a), 0);
	cr_assert_eq(sc_batch_from_records(2, r2, w2, 2, &b), 0);
	cr_assert_eq(sc_trace_create(2, &t), 0);
	cr_assert_eq(sc_trace_insert(t, a), 0);
	cr_assert_eq(sc_trace_insert(t, b), 0);
	cr_assert_eq(sc_trace_seek(t, &key, 1, &c), 0);
	cr_assert_eq(sc_trace_cursor_next(&c, &row, &w), 1);
	cr_assert_eq(row[1], 10);
	cr_assert_eq(w, 7);
	cr_assert_eq(sc_trace_cursor_next(&c, &row, &w), 0,
		     "(1, 20) cancels and (2, 30) has another key");
	sc_trace_destroy(t);
	sc_batch_release(a);
	sc_batch_release(b);
}

/* A caller that never calls work still gets a bounded spine. */
Test(trace, insert_keeps_the_run_count_bounded_without_work)
{
	struct sc_trace *t;

	cr_assert_eq(sc_trace_create(1, &t), 0);
	for (uint64_t i = 0; i < 500; i++) {
		struct sc_batch *b;

		cr_assert_eq(sc_batch_from_records(1, &i, NULL, 1, &b), 0);
		cr_assert_eq(sc_trace_insert(t, b), 0);
		sc_batch_release(b);
		cr_assert_lt(sc_trace_runs(t), SC_TRACE_MAX_RUNS);
	}
	cr_assert_eq(sc_trace_rows(t), 500);
	sc_trace_destroy(t);
}

Test(trace, a_merge_past_int64_that_a_third_run_cancels_is_no_error)
{
	struct sc_trace *t;
	struct sc_batch *b, *I;
	uint64_t r1[] = {0, 1, 2, 3}, r2[] = {0}, r3[] = {0, 4, 5};
	int64_t w1[] = {INT64_MAX, 1, 1, 1}, w2[] = {-1}, w3[] = {1, 1, 1};

	/* Runs of 4, 3 and 1 rows read MAX, +1, -1 for row 0, and the
	 * spine's next merge is the first two: their sum passes int64, the
	 * integral (MAX) does not. */
	cr_assert_eq(sc_trace_create(1, &t), 0);
	cr_assert_eq(sc_batch_from_records(1, r1, w1, 4, &b), 0);
	cr_assert_eq(sc_trace_insert(t, b), 0);
	sc_batch_release(b);
	cr_assert_eq(sc_batch_from_records(1, r2, w2, 1, &b), 0);
	cr_assert_eq(sc_trace_insert(t, b), 0);
	sc_batch_release(b);
	cr_assert_eq(sc_batch_from_records(1, r3, w3, 3, &b), 0);
	cr_assert_eq(sc_trace_insert(t, b), 0);
	sc_batch_release(b);
	cr_assert_eq(sc_trace_runs(t), 3);
	cr_assert_eq(sc_trace_work(t, SIZE_MAX, NULL), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_trace_pending(t), 0);
	cr_assert_eq(sc_trace_integral(t, &I), 0);
	cr_assert_eq(sc_batch_count(I), 6);
	cr_assert_eq(sc_batch_weight(I, 0), INT64_MAX);
	sc_batch_release(I);
	sc_trace_destroy(t);
}

/* A merge past int64 is no error of the work: the spine
 * is folded wide (MAX, then the remainder 1), the read says SC_EOVERFLOW,
 * and taking one back makes it whole again. */
Test(trace, merge_past_int64_folds_wide_and_the_integral_stays_exact)
{
	struct sc_trace *t;
	struct sc_batch *a, *b, *I;
	uint64_t row = 3;
	int64_t big = INT64_MAX, one = 1;
	size_t done = 77;

	cr_assert_eq(sc_batch_from_records(1, &row, &big, 1, &a), 0);
	cr_assert_eq(sc_batch_from_records(1, &row, &one, 1, &b), 0);
	cr_assert_eq(sc_trace_create(1, &t), 0);
	cr_assert_eq(sc_trace_insert(t, a), 0);
	cr_assert_eq(sc_trace_insert(t, b), 0);
	cr_assert_eq(sc_trace_work(t, 100, &done), 0, "%s", sc_errmsg());
	cr_assert_leq(done, 100);
	cr_assert_eq(sc_trace_runs(t), 2);
	cr_assert_eq(sc_batch_weight(sc_trace_run(t, 0), 0), INT64_MAX);
	cr_assert_eq(sc_batch_weight(sc_trace_run(t, 1), 0), 1);
	cr_assert_eq(sc_trace_pending(t), 0, "merges wait for an insert");
	cr_assert_eq(sc_trace_integral(t, &I), SC_EOVERFLOW);
	cr_assert(strstr(sc_errmsg(), "int64"), "%s", sc_errmsg());
	/* Taking one back makes it whole again. */
	cr_assert_eq(sc_batch_negate(b, &I), 0);
	cr_assert_eq(sc_trace_insert(t, I), 0);
	sc_batch_release(I);
	cr_assert_eq(sc_trace_integral(t, &I), 0);
	cr_assert_eq(sc_batch_count(I), 1);
	cr_assert_eq(sc_batch_weight(I, 0), INT64_MAX);
	sc_batch_release(I);
	sc_trace_destroy(t);
	sc_batch_release(a);
	sc_batch_release(b);
}

Test(trace, insert_of_wrong_width_is_eschema_and_changes_nothing)
{
	struct sc_trace *t;
	struct sc_batch *b;
	uint64_t rows[2] = {1, 2};

	cr_assert_eq(sc_batch_from_records(2, rows, NULL, 1, &b), 0);
	cr_assert_eq(sc_trace_create(1, &t), 0);
	cr_assert_eq(sc_trace_insert(t, b), SC_ESCHEMA);
	cr_assert(strstr(sc_errmsg(), "batch has 2 columns, trace has 1"), "%s",
		  sc_errmsg());
	cr_assert_eq(sc_trace_runs(t), 0);
	cr_assert_eq(b->refs, 1, "the trace kept a reference on failure");
	sc_trace_destroy(t);
	sc_batch_release(b);
}

Test(trace, null_and_bad_arguments_are_refused)
{
	struct sc_trace *t = NULL;
	struct sc_trace_cursor c;
	struct sc_batch *out = NULL;
	uint64_t key[3] = {0};

	cr_assert_eq(sc_trace_create(0, &t), SC_ESCHEMA);
	cr_assert_null(t);
	cr_assert_eq(sc_trace_create(1, NULL), SC_EINVAL);
	cr_assert_eq(sc_trace_create(2, &t), 0);
	cr_assert_eq(sc_trace_insert(t, NULL), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "batch is NULL"), "%s", sc_errmsg());
	cr_assert_eq(sc_trace_insert(NULL, NULL), SC_EINVAL);
	cr_assert_eq(sc_trace_work(NULL, 1, NULL), SC_EINVAL);
	cr_assert_eq(sc_trace_seek(t, key, 3, &c), SC_ESCHEMA);
	cr_assert_eq(sc_trace_seek(t, NULL, 1, &c), SC_EINVAL);
	cr_assert_eq(sc_trace_lookup(t, key, 3, &out), SC_ESCHEMA);
	cr_assert_eq(sc_trace_integral(t, NULL), SC_EINVAL);
	cr_assert_null(out);
	cr_assert_eq(sc_trace_integral(t, &out), 0);
	cr_assert_eq(sc_batch_count(out), 0);
	sc_batch_release(out);
	sc_trace_destroy(t);
	sc_trace_destroy(NULL);
}

/* Large and small deltas alternating (bulk loads between single-row
 * updates): the merge work stays within the documented O(N log N) bound
 * (about 0.4 N log2 N steps here). */
Test(trace, alternating_large_and_small_inserts_cost_n_log_n_merge_work)
{
	struct sc_trace *t;
	size_t total = 0, done, n = 0;
	uint64_t next = 0;
	double bound;

	cr_assert_eq(sc_trace_create(1, &t), 0);
	for (int round = 0; round < 150; round++) {
		size_t sizes[2] = {1000, 1};

		for (int k = 0; k < 2; k++) {
			uint64_t rows[1000];
			struct sc_batch *b;

			for (size_t i = 0; i < sizes[k]; i++)
				rows[i] = next++;
			cr_assert_eq(
			    sc_batch_from_records(1, rows, NULL, sizes[k], &b),
			    0);
			cr_assert_eq(sc_trace_insert(t, b), 0);
			sc_batch_release(b);
			n += sizes[k];
			cr_assert_eq(sc_trace_work(t, SIZE_MAX, &done), 0);
			total += done;
		}
	}
	/* At most 1.71 log2(N) merges per row. */
	bound = 2.0 * (double)n * log2((double)n);
	cr_assert_leq((double)total, bound,
		      "%zu merge steps for %zu rows (bound %.0f)", total, n,
		      bound);
	cr_assert_eq(sc_trace_rows(t), n);
	sc_trace_destroy(t);
}

/* Bits of x: the circuit's log2 (operators/circuit.c, tick_work). */
static size_t
bits_of(uint64_t x)
{
	return x ? 64 - (size_t)__builtin_clzll(x) : 0;
}

/*
 * The spine's fuel, as a circuit spends it (tick_work): after each insert
 * of d rows, 2 * log2(rows so far) * d steps of merge work, at least 256.
 * The rows a step moves never pass that, whatever the sizes of the
 * deltas; the spine keeps up on it, so an insert never has to settle it
 * whole (the safety net); and the integral is the sum of the inserts.
 */
Test(trace, merge_work_per_insert_is_bounded_by_its_fuel)
{
	const char *name = "merge_work_per_insert_is_bounded_by_its_fuel";
	uint64_t base = sc_prop_seed(2603);

	for (uint64_t c = 0; c < sc_prop_count(6); c++) {
		enum { KEYS = 20000 };
		uint64_t seed = base + c, *rows;
		int64_t *ref, *w;
		struct sc_rng r;
		struct sc_trace *t;
		struct sc_batch *b, *I;
		size_t total = 0;

		sc_rng_seed(&r, seed);
		ref = calloc(KEYS, sizeof(*ref));
		rows = malloc(20000 * sizeof(*rows));
		w = malloc(20000 * sizeof(*w));
		cr_assert(ref && rows && w);
		cr_assert_eq(sc_trace_create(1, &t), 0);
		for (int step = 0; step < 600; step++) {
			/* Mostly small deltas, now and then a bulk load. */
			size_t d = sc_rng_below(&r, 50) == 0
				       ? 1 + sc_rng_below(&r, 20000)
				       : 1 + sc_rng_below(&r, 300);
			size_t budget, done, runs = sc_trace_runs(t);

			for (size_t i = 0; i < d; i++) {
				rows[i] = sc_rng_below(&r, KEYS);
				w[i] = sc_rng_below(&r, 4) == 0 ? -1 : 1;
				ref[rows[i]] += w[i];
			}
			cr_assert_eq(sc_batch_from_records(1, rows, w, d, &b),
				     0);
			/* No insert meets the safety net's limit. */
			SC_PROP_ASSERT(seed, SUITE, name,
				       runs + 1 < SC_TRACE_MAX_RUNS &&
					   runs <= 2 * bits_of(total + 1) + 2,
				       "step %d: %zu runs for %zu rows", step,
				       runs, total);
			cr_assert_eq(sc_trace_insert(t, b), 0);
			sc_batch_release(b);
			total += d;
			budget = 2 * bits_of(total) * d;
			if (budget < 256)
				budget = 256;
			cr_assert_eq(sc_trace_work(t, budget, &done), 0);
			SC_PROP_ASSERT(seed, SUITE, name, done <= budget,
				       "step %d: %zu rows moved, fuel %zu",
				       step, done, budget);
		}
		cr_assert_eq(sc_trace_integral(t, &I), 0);
		for (size_t i = 0, k = 0; k < KEYS; k++) {
			int64_t got = 0;

			if (i < sc_batch_count(I) && sc_batch_row(I, i)[0] == k)
				got = sc_batch_weight(I, i++);
			SC_PROP_ASSERT(seed, SUITE, name, got == ref[k],
				       "key %zu: %lld, want %lld", k,
				       (long long)got, (long long)ref[k]);
		}
		sc_batch_release(I);
		sc_trace_destroy(t);
		free(ref);
		free(rows);
		free(w);
	}
}

/* A batch of the 1-column rows lo, lo + 1, ..., hi - 1, each of weight 1. */
static struct sc_batch *
span(uint64_t lo, uint64_t hi)
{
	uint64_t *w = malloc((hi - lo) * sizeof(*w));
	struct sc_batch *b;

	cr_assert_not_null(w);
	for (uint64_t i = lo; i < hi; i++)
		w[i - lo] = i;
	cr_assert_eq(sc_batch_from_records(1, w, NULL, hi - lo, &b), 0);
	free(w);
	return b;
}

/*
 * With cleanup on, the run a merge writes loses its dead rows, but over
 * later calls, a budget of rows read (and copied) at a time, never in the
 * call that ends the merge: no call does work in proportion to the run.
 * The rows read stay exact meanwhile, and the dead ones go once the run
 * has been read whole.
 */
Test(trace, cleanup_reads_a_merged_run_a_budget_at_a_time)
{
	enum { N = 2000, DEAD = 500, BUDGET = 16 };
	struct sc__horizon h = {.n = 1};
	struct sc_trace *t;
	struct sc_batch *a = span(0, N / 2), *b = span(N / 2, N), *all;
	size_t calls = 0, merged_at = 0, done;

	h.col[0] = 0;
	h.min[0] = DEAD; /* rows 0..DEAD-1 are dead */
	cr_assert_eq(sc_trace_create(1, &t), 0);
	sc__trace_sweep(t, &h, 0); /* the horizon, and no sweep work */
	cr_assert_eq(sc_trace_insert(t, a), 0);
	cr_assert_eq(sc_trace_insert(t, b), 0);
	cr_assert_eq(sc_trace_runs(t), 2);
	while (sc_trace_rows(t) == N) {
		cr_assert_eq(sc_trace_work(t, BUDGET, &done), 0);
		calls++;
		if (!merged_at && sc_trace_runs(t) == 1)
			merged_at = calls;
		cr_assert_lt(calls, (size_t)10 * N, "the dead rows never went");
	}
	cr_assert_gt(merged_at, 0);
	/* The merge took N / BUDGET calls; reading the run it wrote took at
	 * least as many again. */
	cr_assert_geq(merged_at, N / BUDGET);
	cr_assert_geq(calls - merged_at, N / BUDGET - 1,
		      "the merged run was cleaned in %zu calls",
		      calls - merged_at);
	cr_assert_eq(sc_trace_rows(t), N - DEAD);
	cr_assert_eq(sc_trace_integral(t, &all), 0);
	cr_assert_eq(all->count, N - DEAD);
	for (size_t i = 0; i < all->count; i++)
		cr_assert_eq(sc_batch_row(all, i)[0], DEAD + i);
	sc_batch_release(all);
	sc_batch_release(a);
	sc_batch_release(b);
	sc_trace_destroy(t);
}
