/*
 * test_partial_weights.c - a row's integrated weight, or a count of NaN
 * rows, that leaves int64 only between steps.
 *
 * How deltas group into steps is the schedule's choice (a placement's
 * turns): the same deltas, stepped one by one or summed into fewer steps,
 * must give the same output integral whenever the settled value fits,
 * though one grouping passes int64 on the way and the other does not.
 * Each test steps an operator through both groupings and compares. The
 * trace test pins the other half of the rule: a read while a row is out
 * of range is SC_EOVERFLOW (an error of the integral read, not of a step).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "operators/aggregate.h"
#include "operators/distinct.h"
#include "operators/schema.h"
#include "operators/trace.h"
#include "operators/xsum.h"

typedef int (*step_fn)(void *op, const struct sc_batch *d,
		       struct sc_batch **out);

static int
distinct_step(void *op, const struct sc_batch *d, struct sc_batch **out)
{
	return sc_distinct_step(op, d, out);
}

static int
aggregate_step(void *op, const struct sc_batch *d, struct sc_batch **out)
{
	return sc_aggregate_step(op, d, out);
}

/* A batch of one row (3 columns) of weight w. */
static struct sc_batch *
row3(uint64_t a, uint64_t b, uint64_t c, int64_t w)
{
	uint64_t rec[] = {a, b, c};
	struct sc_batch *out;

	cr_assert_eq(sc_batch_from_records(3, rec, &w, 1, &out), 0);
	return out;
}

/*
 * Step op through deltas[0..n), grouped as `groups` says (group sizes,
 * summing to n; each group's deltas summed into one step, which must fit),
 * and return the sum of its outputs. Every step must succeed.
 */
static struct sc_batch *
run_grouped(void *op, step_fn step, uint32_t out_ncols,
	    struct sc_batch *const *deltas, size_t n, const size_t *groups,
	    const char *what)
{
	struct sc_batch *acc;
	size_t i = 0;

	cr_assert_eq(sc_batch_empty(out_ncols, &acc), 0);
	for (size_t g = 0; i < n; g++) {
		struct sc_batch *d, *out, *t;
		int rc;

		cr_assert_eq(sc_batch_sum(deltas + i, groups[g], &d), 0);
		i += groups[g];
		rc = step(op, d, &out);
		cr_assert_eq(rc, 0, "%s: step %zu failed: %s: %s", what, g,
			     sc_errname(rc), sc_errdetail());
		cr_assert_eq(sc_batch_add(acc, out, &t), 0);
		sc_batch_release(acc);
		sc_batch_release(out);
		sc_batch_release(d);
		acc = t;
	}
	return acc;
}

/* The deltas of row (7, 1, v): +MAX, then +1 and +MAX - 1 (the partial
 * integral 2 * MAX), then -1 and -(MAX - 1): settled MAX. A second row
 * (7, 2, v) of weight -3 keeps a COUNT within int64 (MAX - 3). */
#define NDELTAS 6
static void
big_row_deltas(uint64_t v, struct sc_batch **d)
{
	uint64_t g = sc_enc_i64(7);

	d[0] = row3(g, 1, v, INT64_MAX);
	d[1] = row3(g, 2, v, -3);
	d[2] = row3(g, 1, v, 1);
	d[3] = row3(g, 1, v, INT64_MAX - 1);
	d[4] = row3(g, 1, v, -1);
	d[5] = row3(g, 1, v, -(INT64_MAX - 1));
}

static void
release_all(struct sc_batch **d, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sc_batch_release(d[i]);
}

static const size_t one_each[NDELTAS] = {1, 1, 1, 1, 1, 1};
static const size_t all_at_once[1] = {NDELTAS};

Test(partial_weights,
     distinct_agrees_when_a_row_weight_passes_int64_between_steps)
{
	struct sc_batch *d[NDELTAS], *a, *b;
	struct sc_distinct *x, *y;

	big_row_deltas(sc_enc_i64(5), d);
	cr_assert_eq(sc_distinct_create(3, &x), 0);
	cr_assert_eq(sc_distinct_create(3, &y), 0);
	a = run_grouped(x, distinct_step, 3, d, NDELTAS, one_each,
			"one delta a step");
	b = run_grouped(y, distinct_step, 3, d, NDELTAS, all_at_once,
			"one step");
	cr_assert(sc_batch_equal(a, b), "the groupings disagree");
	cr_assert_eq(sc_batch_count(a), 1); /* the row of weight MAX */
	cr_assert_eq(sc_batch_weight(a, 0), 1);
	cr_assert_eq(sc_distinct_rows(x), 2);
	sc_batch_release(a);
	sc_batch_release(b);
	sc_distinct_destroy(x);
	sc_distinct_destroy(y);
	release_all(d, NDELTAS);
}

Test(partial_weights, count_agrees_when_a_row_weight_passes_int64_between_steps)
{
	struct sc_aggregate_spec cnt = {3, 1, SC_AGG_COUNT, 0, SC_TYPE_I64};
	struct sc_batch *d[NDELTAS], *a, *b;
	struct sc_aggregate *x, *y;

	big_row_deltas(sc_enc_i64(5), d);
	cr_assert_eq(sc_aggregate_create(&cnt, &x), 0);
	cr_assert_eq(sc_aggregate_create(&cnt, &y), 0);
	a = run_grouped(x, aggregate_step, 2, d, NDELTAS, one_each,
			"one delta a step");
	b = run_grouped(y, aggregate_step, 2, d, NDELTAS, all_at_once,
			"one step");
	cr_assert(sc_batch_equal(a, b), "the groupings disagree");
	cr_assert_eq(sc_batch_count(a), 1);
	cr_assert_eq(sc_dec_i64(sc_batch_row(a, 0)[1]), INT64_MAX - 3);
	cr_assert_eq(sc_aggregate_check(x), 0);
	cr_assert_eq(sc_aggregate_rows(x), 2);
	sc_batch_release(a);
	sc_batch_release(b);
	sc_aggregate_destroy(x);
	sc_aggregate_destroy(y);
	release_all(d, NDELTAS);
}

/*
 * f64 SUM: rows (7, i, NaN) of weights MAX (i = 1) and 1 (i = 2..3), the
 * latter retracted later: the group's NaN count is MAX + 2 between steps,
 * MAX settled; the sum reads NaN throughout. Then every NaN retracted: the
 * group's sum reads 0 again (a finite row keeps it alive).
 */
Test(partial_weights,
     f64_sum_agrees_when_a_nan_count_passes_int64_between_steps)
{
	struct sc_aggregate_spec sum = {3, 1, SC_AGG_SUM, 2, SC_TYPE_F64};
	uint64_t g = sc_enc_i64(7), nan = sc_enc_f64(NAN);
	struct sc_batch *d[8], *a, *b;
	struct sc_aggregate *x, *y;
	const size_t each[8] = {1, 1, 1, 1, 1, 1, 1, 1}, once[1] = {8};
	const size_t split[2] = {4, 4};
	uint64_t want_key;
	double got;

	d[0] = row3(g, 9, sc_enc_f64(2.5), 1);
	d[1] = row3(g, 1, nan, INT64_MAX);
	d[2] = row3(g, 2, nan, 1);
	d[3] = row3(g, 3, nan, 1);
	d[4] = row3(g, 2, nan, -1);
	d[5] = row3(g, 3, nan, -1);
	d[6] = row3(g, 1, nan, -INT64_MAX);
	d[7] = row3(g, 1, nan, INT64_MAX);
	cr_assert_eq(sc_aggregate_create(&sum, &x), 0);
	cr_assert_eq(sc_aggregate_create(&sum, &y), 0);
	a = run_grouped(x, aggregate_step, 2, d, 8, each, "one delta a step");
	b = run_grouped(y, aggregate_step, 2, d, 8, once, "one step");
	cr_assert(sc_batch_equal(a, b), "the groupings disagree");
	cr_assert_eq(sc_batch_count(a), 1);
	want_key = sc_batch_row(a, 0)[0];
	cr_assert_eq(want_key, g);
	got = sc_dec_f64(sc_batch_row(a, 0)[1]);
	cr_assert(isnan(got), "a NaN of weight MAX is left: %g", got);
	sc_batch_release(a);
	sc_batch_release(b);
	sc_aggregate_destroy(y);
	cr_assert_eq(sc_aggregate_create(&sum, &y), 0);
	b = run_grouped(y, aggregate_step, 2, d, 8, split, "two steps");
	sc_batch_release(b);
	sc_aggregate_destroy(x);
	sc_aggregate_destroy(y);
	release_all(d, 8);
}

/* The same rule in the accumulator itself: a special count passes int64
 * on the way and comes back; merges add counts the same way. */
Test(partial_weights, xsum_special_counts_pass_int64_and_come_back)
{
	struct sc_xsum x, y, empty;
	double v;

	sc_xsum_init(&x);
	sc_xsum_init(&y);
	sc_xsum_init(&empty);
	cr_assert_eq(sc_xsum_add_weighted(&x, NAN, INT64_MAX), 0);
	cr_assert_eq(sc_xsum_add_weighted(&x, NAN, INT64_MAX), 0,
		     "a partial count of 2 * MAX must not fail: %s",
		     sc_errdetail());
	cr_assert_eq(sc_xsum_add_weighted(&x, INFINITY, INT64_MIN), 0);
	cr_assert_eq(sc_xsum_add_weighted(&x, INFINITY, INT64_MIN), 0);
	cr_assert_eq(sc_xsum_read(&x, &v), 0);
	cr_assert(isnan(v));
	/* y = x, then x + y: counts of 4 * MAX and -2^65. */
	cr_assert_eq(sc_xsum_merge(&y, &x), 0);
	cr_assert_eq(sc_xsum_merge(&x, &y), 0, "%s", sc_errdetail());
	cr_assert_eq(sc_xsum_negate(&y), 0, "%s", sc_errdetail());
	cr_assert_eq(sc_xsum_merge(&x, &y), 0); /* x is its old self again */
	cr_assert(!sc_xsum_equal(&x, &empty));
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(sc_xsum_add_weighted(&x, NAN, -INT64_MAX), 0);
		cr_assert_eq(sc_xsum_add_weighted(&x, INFINITY, INT64_MAX), 0);
		cr_assert_eq(sc_xsum_add_weighted(&x, INFINITY, 1), 0);
	}
	cr_assert(sc_xsum_equal(&x, &empty), "every count is back at 0");
	cr_assert_eq(sc_xsum_read(&x, &v), 0);
	cr_assert_eq(v, 0.0);
	sc_xsum_fini(&x);
	sc_xsum_fini(&y);
	sc_xsum_fini(&empty);
}

/* A trace's integral: the row at MAX, then MAX + 1, 2 * MAX and 3 * MAX
 * across inserts (with merge work after each), reads SC_EOVERFLOW while
 * out of range, and reads MAX again once the retractions come; its runs
 * stay few however many small inserts arrive meanwhile. */
Test(partial_weights, trace_holds_a_row_past_int64_between_inserts)
{
	struct sc_trace *t;
	struct sc_batch *b, *got;
	uint64_t g = sc_enc_i64(7), v = sc_enc_i64(5);
	const int64_t ws[] = {INT64_MAX, 1, INT64_MAX - 1, INT64_MAX};
	int rc;

	cr_assert_eq(sc_trace_create(3, &t), 0);
	for (size_t i = 0; i < sizeof(ws) / sizeof(ws[0]); i++) {
		b = row3(g, 1, v, ws[i]);
		cr_assert_eq(sc_trace_insert(t, b), 0);
		sc_batch_release(b);
		rc = sc_trace_work(t, SIZE_MAX, NULL);
		cr_assert_eq(rc, 0, "insert %zu: work failed: %s", i,
			     sc_errdetail());
	}
	cr_assert_eq(sc_trace_integral(t, &got), SC_EOVERFLOW);
	/* Many small inserts of other rows: the spine stays bounded. */
	for (uint64_t i = 0; i < 200; i++) {
		b = row3(g, 100 + i, v, 1);
		cr_assert_eq(sc_trace_insert(t, b), 0, "%s", sc_errdetail());
		sc_batch_release(b);
		cr_assert_eq(sc_trace_work(t, 64, NULL), 0, "%s",
			     sc_errdetail());
	}
	cr_assert_eq(sc_trace_work(t, SIZE_MAX, NULL), 0);
	cr_assert_eq(sc_trace_pending(t), 0, "settled work leaves none");
	cr_assert_leq(sc_trace_runs(t), 8, "%zu runs", sc_trace_runs(t));
	for (size_t i = 1; i < sizeof(ws) / sizeof(ws[0]); i++) {
		b = row3(g, 1, v, -ws[i]);
		cr_assert_eq(sc_trace_insert(t, b), 0);
		sc_batch_release(b);
		cr_assert_eq(sc_trace_work(t, SIZE_MAX, NULL), 0, "%s",
			     sc_errdetail());
	}
	cr_assert_eq(sc_trace_integral(t, &got), 0, "%s", sc_errdetail());
	cr_assert_eq(sc_batch_count(got), 201);
	cr_assert_eq(sc_batch_weight(got, 0), INT64_MAX);
	sc_batch_release(got);
	sc_trace_destroy(t);
}
