/*
 * test_partial_minmax.c - MIN/MAX whose row weight leaves int64 only
 * between steps: stepped one delta at a time or all at
 * once, the same deltas give the same output integral, and no step fails.
 */
#include <criterion/criterion.h>
#include <stdint.h>

#include "operators/aggregate.h"
#include "operators/schema.h"

#define NDELTAS 5

static struct sc_batch *
row3(int64_t g, int64_t id, int64_t v, int64_t w)
{
	uint64_t rec[] = {sc_enc_i64(g), sc_enc_i64(id), sc_enc_i64(v)};
	struct sc_batch *out;

	cr_assert_eq(sc_batch_from_records(3, rec, &w, 1, &out), 0);
	return out;
}

/* (7, 1, 5) reaches MAX + 1 between steps and settles at 0; (7, 2, 9)
 * settles at 1: MIN and MAX of group 7 settle at 9. */
static void
deltas(struct sc_batch **d)
{
	d[0] = row3(7, 1, 5, INT64_MAX);
	d[1] = row3(7, 1, 5, 1);
	d[2] = row3(7, 2, 9, 1);
	d[3] = row3(7, 1, 5, -1);
	d[4] = row3(7, 1, 5, -INT64_MAX);
}

/* The sum of the outputs of stepping agg through d, `group` deltas a step. */
static struct sc_batch *
run_grouped(struct sc_aggregate *agg, struct sc_batch **d, size_t group)
{
	struct sc_batch *acc;

	cr_assert_eq(sc_batch_empty(2, &acc), 0);
	for (size_t i = 0; i < NDELTAS; i += group) {
		struct sc_batch *s, *out, *t;
		size_t n = NDELTAS - i < group ? NDELTAS - i : group;
		int rc;

		cr_assert_eq(sc_batch_sum(d + i, n, &s), 0);
		rc = sc_aggregate_step(agg, s, &out);
		cr_assert_eq(rc, 0, "step at delta %zu: %s: %s", i,
			     sc_errname(rc), sc_errdetail());
		cr_assert_eq(sc_batch_add(acc, out, &t), 0);
		sc_batch_release(acc);
		sc_batch_release(out);
		sc_batch_release(s);
		acc = t;
	}
	return acc;
}

static void
agrees(enum sc_agg_kind kind)
{
	struct sc_aggregate_spec spec = {3, 1, kind, 2, SC_TYPE_I64};
	struct sc_batch *d[NDELTAS], *a, *b;
	struct sc_aggregate *x, *y;

	deltas(d);
	cr_assert_eq(sc_aggregate_create(&spec, &x), 0);
	cr_assert_eq(sc_aggregate_create(&spec, &y), 0);
	a = run_grouped(x, d, 1);
	b = run_grouped(y, d, NDELTAS);
	cr_assert(sc_batch_equal(a, b), "the groupings disagree");
	cr_assert_eq(sc_batch_count(a), 1);
	cr_assert_eq(sc_batch_weight(a, 0), 1);
	cr_assert_eq(sc_dec_i64(sc_batch_row(a, 0)[1]), 9);
	sc_batch_release(a);
	sc_batch_release(b);
	sc_aggregate_destroy(x);
	sc_aggregate_destroy(y);
	for (size_t i = 0; i < NDELTAS; i++)
		sc_batch_release(d[i]);
}

Test(partial_minmax, min_agrees_when_a_row_weight_passes_int64_between_steps)
{
	agrees(SC_AGG_MIN);
}

Test(partial_minmax, max_agrees_when_a_row_weight_passes_int64_between_steps)
{
	agrees(SC_AGG_MAX);
}
