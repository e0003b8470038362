/*
 * test_runtime_late.c - lateness at the runtime's host side
 * (units/runtime.h, "Lateness"): a submission with a row below its
 * input's waterline is refused whole with SC_ELATE before anything is
 * sent, its late rows counted; with SC_LATE_ADMIT it is sent and its late
 * rows counted; the waterline advances only with what was sent.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/waterline.h"
#include "units/placement.h"
#include "units/runtime.h"

/* in(t, k) -> filter -> out, lateness 10 on t. */
struct late_graph {
	struct sc_graph *g;
	int in, out;
};

static int
keep_all(void *ctx, const uint64_t *row, bool *keep)
{
	(void)ctx;
	(void)row;
	*keep = true;
	return 0;
}

static void
late_graph_init(struct late_graph *c, unsigned flags)
{
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_schema s;

	cr_assert_eq(sc_schema_init(&s, 2, t, NULL), 0);
	cr_assert_eq(sc_graph_create(&c->g), 0);
	c->in = sc_graph_input(c->g, "in", &s);
	cr_assert_eq(sc_graph_lateness(c->g, c->in, 0, 10, flags), 0, "%s",
		     sc_errmsg());
	c->out = sc_graph_output(c->g, "out",
				 sc_graph_filter(c->g, c->in, keep_all, NULL));
	cr_assert_geq(c->out, 0, "%s", sc_errmsg());
}

/* Rows (t, i) for t in ts[0..n), weight 1. */
static struct sc_batch *
times(const int64_t *ts, size_t n)
{
	uint64_t rows[32];
	struct sc_batch *b = NULL;

	for (size_t i = 0; i < n; i++) {
		rows[2 * i] = sc_enc_i64(ts[i]);
		rows[2 * i + 1] = sc_enc_i64((int64_t)i);
	}
	cr_assert_eq(sc_batch_from_records(2, rows, NULL, n, &b), 0);
	return b;
}

static size_t
settled_rows(struct sc_runtime *rt, int out)
{
	struct sc_batch *got = NULL;
	size_t n;

	cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), 0);
	cr_assert_eq(sc_runtime_integral(rt, out, &got), 0);
	n = sc_batch_count(got);
	sc_batch_release(got);
	return n;
}

static void
submit_three(const char *strategy, unsigned flags, int want_rc,
	     size_t want_rows, uint64_t want_admitted, uint64_t want_refused)
{
	static const int64_t first[] = {100, 105, 98};
	static const int64_t late[] = {95, 89, 120}; /* 89 < 105 - 10 */
	static const int64_t after[] = {105, 130};
	struct late_graph c;
	struct sc_placement *p = NULL;
	struct sc_runtime *rt = NULL;
	struct sc_batch *b;
	uint64_t admitted = 7, refused = 7;

	late_graph_init(&c, flags);
	cr_assert_eq(sc_placement_parse(c.g, strategy, 1, &p), 0);
	cr_assert_eq(sc_runtime_create(c.g, p, NULL, &rt), 0, "%s",
		     sc_errmsg());
	b = times(first, 3);
	cr_assert_eq(sc_runtime_submit(rt, c.in, b), 0, "%s", sc_errmsg());
	sc_batch_release(b);
	b = times(late, 3);
	cr_assert_eq(sc_runtime_submit(rt, c.in, b), want_rc);
	if (want_rc == SC_ELATE)
		cr_assert(strstr(sc_errmsg(), "1 late row") &&
			      strstr(sc_errmsg(), "89"),
			  "%s", sc_errmsg());
	sc_batch_release(b);
	/* Refused, 120 did not move the waterline: 105 is on time against
	 * 105 - 10. Admitted, it did: 105 is late against 120 - 10, and
	 * admitted too. */
	b = times(after, 2);
	cr_assert_eq(sc_runtime_submit(rt, c.in, b), 0, "%s", sc_errmsg());
	sc_batch_release(b);
	cr_assert_eq(settled_rows(rt, c.out), want_rows);
	cr_assert_eq(sc_runtime_late(rt, c.in, &admitted, &refused), 0);
	cr_assert_eq(admitted, want_admitted);
	cr_assert_eq(refused, want_refused);
	cr_assert_eq(sc_runtime_late(rt, c.out, NULL, NULL), SC_ENOENT);
	cr_assert_eq(sc_runtime_shutdown(rt, NULL), 0);
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
	cr_assert_eq(sc_graph_destroy(c.g), 0);
}

Test(runtime_late, a_late_submission_is_refused_whole_and_moves_nothing)
{
	/* 3 + 2 rows applied, the 3 of the late one not */
	submit_three("per-node", 0, SC_ELATE, 5, 0, 1);
}

Test(runtime_late, a_late_submission_is_refused_on_a_sharded_input_too)
{
	submit_three("sharded:2", 0, SC_ELATE, 5, 0, 1);
}

Test(runtime_late, with_admit_a_late_row_is_sent_and_counted)
{
	/* every row applied, 89 and then 105 counted */
	submit_three("per-node", SC_LATE_ADMIT, 0, 8, 2, 0);
}
