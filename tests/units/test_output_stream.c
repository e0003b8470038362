/*
 * test_output_stream.c - stream outputs (graph.h) under the runtime and
 * the settle check: the sink installed with sc_runtime_on_delta sees every
 * delta of a placed circuit once (their sum is the materialized output's
 * integral), reading a stream output whole is SC_ESTATE, and settle
 * compares only the materialized outputs; and the runtime's circuits hold
 * the symbols of the rows they keep. Host-driven turns (workers 0),
 * so the sink needs no lock.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "operators/aggregate.h"
#include "operators/graph.h"
#include "operators/schema.h"
#include "operators/symbol.h"
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

/* --- symbols under a runtime (symbol.h, "Who holds an id") ---------------- */

/* Intern each text, submit (id, 1) x w, keep the host's references in
 * ids[] until the caller has seen the runtime idle. */
static void
submit_texts(struct sc_runtime *rt, struct sc_symtab *t, int in,
	     const char *prefix, int from, int n, int64_t w, uint64_t *ids)
{
	for (int i = 0; i < n; i++) {
		char text[32];
		uint64_t row[2];
		struct sc_batch *b;

		(void)snprintf(text, sizeof(text), "%s-%d", prefix, from + i);
		cr_assert_eq(sc_symtab_intern_cstr(t, text, &ids[i]), 0);
		row[0] = ids[i];
		row[1] = sc_enc_i64(from + i);
		cr_assert_eq(sc_batch_from_records(2, row, &w, 1, &b), 0);
		cr_assert_eq(sc_runtime_submit_wait(rt, in, b, 0), 0, "%s",
			     sc_errmsg());
		sc_batch_release(b);
	}
}

static void
release_all(struct sc_symtab *t, const uint64_t *ids, int n)
{
	for (int i = 0; i < n; i++)
		cr_assert_eq(sc_symtab_release(t, ids[i]), 0);
}

/* Every row of output `out` reads "<prefix>-<v>" for its value v. */
static void
check_texts(struct sc_runtime *rt, struct sc_symtab *t, int out,
	    size_t want_rows)
{
	struct sc_batch *got;

	cr_assert_eq(sc_runtime_integral(rt, out, &got), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_batch_count(got), want_rows);
	for (size_t i = 0; i < sc_batch_count(got); i++) {
		const uint64_t *row = sc_batch_row(got, i);
		int64_t v = sc_dec_i64(row[1]);
		const char *text = NULL;
		char want[32];

		(void)snprintf(want, sizeof(want), "%s-%lld",
			       v < 100 ? "fruit" : "veg", (long long)v);
		cr_assert_eq(sc_symtab_lookup(t, row[0], &text, NULL), 0);
		cr_assert_str_eq(text, want, "id %llu names another string",
				 (unsigned long long)row[0]);
	}
	sc_batch_release(got);
}

Test(output_stream, runtime_circuits_hold_the_symbols_of_their_rows)
{
	static const char *const strategies[] = {"single", "per-node",
						 "chains"};

	for (size_t k = 0; k < 3; k++) {
		enum sc_type ty[2] = {SC_TYPE_SYMBOL, SC_TYPE_I64};
		struct sc_symtab *t;
		struct sc_schema sch;
		struct sc_graph *g;
		struct sc_placement *p;
		struct sc_runtime *rt;
		uint64_t ids[50];
		int in, out;

		cr_assert_eq(sc_symtab_create(&t), 0);
		cr_assert_eq(sc_schema_init(&sch, 2, ty, t), 0);
		cr_assert_eq(sc_graph_create(&g), 0);
		in = sc_graph_input(g, "names", &sch);
		out = sc_graph_output(g, "kept", sc_graph_distinct(g, in));
		cr_assert_eq(sc_placement_parse(g, strategies[k], 1, &p), 0);
		cr_assert_eq(sc_runtime_create(g, p, NULL, &rt), 0, "%s",
			     sc_errmsg());
		/* 50 fruits in, the host's references dropped at idle. */
		submit_texts(rt, t, in, "fruit", 0, 50, 1, ids);
		cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), 0);
		release_all(t, ids, 50);
		check_texts(rt, t, out, 50);
		/* 25 retracted; then 25 new strings, which must not take
		 * the ids of the 25 fruits still alive. */
		submit_texts(rt, t, in, "fruit", 0, 25, -1, ids);
		cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), 0);
		release_all(t, ids, 25);
		submit_texts(rt, t, in, "veg", 100, 25, 1, ids);
		cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), 0);
		release_all(t, ids, 25);
		check_texts(rt, t, out, 50);
		sc_runtime_destroy(rt);
		sc_placement_destroy(p);
		cr_assert_eq(sc_symtab_count(t), 0, "%s: %zu ids outlived it",
			     strategies[k], sc_symtab_count(t));
		cr_assert_eq(sc_graph_destroy(g), 0);
		sc_symtab_destroy(t);
	}
}
