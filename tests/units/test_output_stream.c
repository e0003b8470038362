/*
 * test_output_stream.c - stream outputs (graph.h) under the runtime and
 * the settle check: the sink installed with sc_runtime_on_delta sees every
 * delta of a placed circuit once (their sum is the materialized output's
 * integral), reading a stream output whole is SC_ESTATE, and settle
 * compares only the materialized outputs. Host-driven turns (workers 0),
 * so the sink needs no lock.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "operators/aggregate.h"
#include "operators/graph.h"
#include "operators/schema.h"
#include "units/placement.h"
#include "units/runtime.h"
#include "units/settle.h"

/* (auction, price) -> count per auction, as a stream and as a table. */
struct bids {
	struct sc_graph *g;
	int in, s, m;
};

static void
bids_init(struct bids *b)
{
	enum sc_type ty[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_aggregate_spec count = {
	    .ncols = 2, .k = 1, .kind = SC_AGG_COUNT};
	struct sc_schema sch;
	int agg;

	cr_assert_eq(sc_schema_init(&sch, 2, ty, NULL), 0);
	cr_assert_eq(sc_graph_create(&b->g), 0);
	b->in = sc_graph_input(b->g, "bids", &sch);
	agg = sc_graph_aggregate(b->g, b->in, &count);
	b->s = sc_graph_output_stream(b->g, "counts_stream", agg);
	b->m = sc_graph_output(b->g, "counts", agg);
	cr_assert_geq(b->m, 0, "%s", sc_errmsg());
}

/* Submission i: bid (i % 7, i); every fourth one retracts bid i - 3. */
static struct sc_batch *
bid(size_t i)
{
	size_t j = i % 4 == 3 ? i - 3 : i;
	uint64_t row[2] = {sc_enc_i64((int64_t)(j % 7)),
			   sc_enc_i64((int64_t)j)};
	int64_t w = i % 4 == 3 ? -1 : 1;
	struct sc_batch *b;

	cr_assert_eq(sc_batch_from_records(2, row, &w, 1, &b), 0);
	return b;
}

struct sink {
	struct sc_batch *sum;
	size_t calls;
};

static int
sink_add(void *ctx, int node, const struct sc_batch *delta)
{
	struct sink *s = ctx;
	struct sc_batch *next;
	int rc = sc_batch_add(s->sum, delta, &next);

	(void)node;
	if (rc)
		return rc;
	sc_batch_release(s->sum);
	s->sum = next;
	s->calls++;
	return 0;
}

Test(output_stream, runtime_sink_sums_to_the_materialized_integral)
{
	static const char *const strategies[] = {"single", "per-node",
						 "chains"};

	for (size_t k = 0; k < 3; k++) {
		struct bids b;
		struct sc_placement *p;
		struct sc_runtime *rt;
		struct sink s = {NULL, 0};
		struct sc_batch *m = NULL, *none = NULL;

		bids_init(&b);
		cr_assert_eq(sc_batch_empty(2, &s.sum), 0);
		cr_assert_eq(sc_placement_parse(b.g, strategies[k], 1, &p), 0);
		cr_assert_eq(sc_runtime_create(b.g, p, NULL, &rt), 0, "%s",
			     sc_errmsg());
		cr_assert_eq(sc_runtime_on_delta(rt, b.s, sink_add, &s), 0);
		for (size_t i = 0; i < 200; i++) {
			struct sc_batch *d = bid(i);

			cr_assert_eq(sc_runtime_submit_wait(rt, b.in, d, 0), 0,
				     "%s", sc_errmsg());
			sc_batch_release(d);
		}
		cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), 0);
		cr_assert_eq(sc_runtime_integral(rt, b.m, &m), 0, "%s",
			     sc_errmsg());
		cr_assert_gt(s.calls, 0);
		cr_assert(sc_batch_equal(s.sum, m),
			  "%s: the sink's sum differs", strategies[k]);
		cr_assert_eq(sc_runtime_integral(rt, b.s, &none), SC_ESTATE);
		cr_assert_null(none);
		cr_assert(strstr(sc_errmsg(), "stream output"), "%s",
			  sc_errmsg());
		sc_batch_release(m);
		sc_batch_release(s.sum);
		sc_runtime_destroy(rt);
		sc_placement_destroy(p);
		cr_assert_eq(sc_graph_destroy(b.g), 0);
	}
}

static int
next_bid(void *ctx, size_t i, struct sc_settle_step *out)
{
	const int *in = ctx;

	out->input = *in;
	out->batch = bid(i);
	return 0;
}

Test(output_stream, settle_compares_only_materialized_outputs)
{
	struct bids b;
	struct sc_settle_work *work = NULL;
	struct sc_placement *p = NULL;
	struct sc_settle_result res;
	struct sc_settle_opts o = {
	    .mode = SC_SETTLE_SIM, .seed = 3, .units = 2, .edge_capacity = 2};

	bids_init(&b);
	cr_assert_eq(
	    sc_settle_work_generate(b.g, next_bid, &b.in, 60, 0, &work), 0,
	    "%s", sc_errmsg());
	cr_assert_eq(sc_placement_parse(b.g, "per-node", 1, &p), 0);
	sc_settle_run(work, p, &o, &res);
	cr_assert(res.ok, "%s", res.why);
	sc_settle_result_fini(&res);
	sc_placement_destroy(p);
	sc_settle_work_destroy(work);
	cr_assert_eq(sc_graph_destroy(b.g), 0);
}
