/*
 * test_partial_topk.c - top-k whose row weight leaves int64 only between
 * steps: stepped one delta at a time or all at once,
 * the same deltas give the same output integral, the settled one, and no
 * step fails.
 */
#include <criterion/criterion.h>
#include <stdint.h>

#include "operators/schema.h"
#include "operators/topk.h"

#define NDELTAS 5

static struct sc_batch *
row3(int64_t g, int64_t id, int64_t v, int64_t w)
{
	uint64_t rec[] = {sc_enc_i64(g), sc_enc_i64(id), sc_enc_i64(v)};
	struct sc_batch *out;

	cr_assert_eq(sc_batch_from_records(3, rec, &w, 1, &out), 0);
	return out;
}

/* The sum of the outputs of stepping tk through d, `group` deltas a step. */
static struct sc_batch *
run_grouped(struct sc_topk *tk, struct sc_batch **d, size_t group)
{
	struct sc_batch *acc;

	cr_assert_eq(sc_batch_empty(3, &acc), 0);
	for (size_t i = 0; i < NDELTAS; i += group) {
		struct sc_batch *s, *out, *t;
		size_t n = NDELTAS - i < group ? NDELTAS - i : group;
		int rc;

		cr_assert_eq(sc_batch_sum(d + i, n, &s), 0);
		rc = sc_topk_step(tk, s, &out);
		cr_assert_eq(rc, 0, "step at delta %zu, groups of %zu: %s: %s",
			     i, group, sc_errname(rc), sc_errdetail());
		cr_assert_eq(sc_batch_add(acc, out, &t), 0, "%s",
			     sc_errdetail());
		sc_batch_release(acc);
		sc_batch_release(out);
		sc_batch_release(s);
		acc = t;
	}
	return acc;
}

/* Every grouping of d settles at the one row (7, id, v) x w. */
static void
settles_at(struct sc_batch **d, bool desc, int64_t id, int64_t v, int64_t w)
{
	struct sc_topk_spec spec = {3, 1, 1, {2}, {desc}, 1};

	for (size_t group = 1; group <= NDELTAS; group += NDELTAS - 1) {
		struct sc_topk *tk;
		struct sc_batch *got;

		cr_assert_eq(sc_topk_create(&spec, &tk), 0);
		got = run_grouped(tk, d, group);
		cr_assert_eq(sc_batch_count(got), 1, "groups of %zu: %zu rows",
			     group, sc_batch_count(got));
		cr_assert_eq(sc_dec_i64(sc_batch_row(got, 0)[1]), id,
			     "groups of %zu", group);
		cr_assert_eq(sc_dec_i64(sc_batch_row(got, 0)[2]), v);
		cr_assert_eq(sc_batch_weight(got, 0), w, "groups of %zu: %lld",
			     group, (long long)sc_batch_weight(got, 0));
		sc_batch_release(got);
		sc_topk_destroy(tk);
	}
	for (size_t i = 0; i < NDELTAS; i++)
		sc_batch_release(d[i]);
}

/* (7, 1, 5) reaches MAX + 1 between steps and settles at 0; (7, 2, 9)
 * settles at 1: the top row of group 7 (by v descending) is (7, 2, 9). */
Test(partial_topk, a_row_weight_past_int64_that_leaves_the_top_settles)
{
	struct sc_batch *d[NDELTAS] = {
	    row3(7, 1, 5, INT64_MAX), row3(7, 1, 5, 1), row3(7, 2, 9, 1),
	    row3(7, 1, 5, -1), row3(7, 1, 5, -INT64_MAX)};

	settles_at(d, true, 2, 9, 1);
}

/* The top row itself passes int64 between steps (MAX + 1, then MAX + 3)
 * and settles at 3: the output row's weight is exact once it fits. */
Test(partial_topk, a_top_row_weight_past_int64_between_steps_settles_exactly)
{
	struct sc_batch *d[NDELTAS] = {
	    row3(7, 1, 9, INT64_MAX), row3(7, 2, 5, 1), row3(7, 1, 9, 1),
	    row3(7, 1, 9, 2), row3(7, 1, 9, -INT64_MAX + 0)};

	settles_at(d, true, 1, 9, 3);
}
