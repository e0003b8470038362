/*
 * test_example.c - a single circuit stepped by hand (sc_circuit_feed,
 * sc_circuit_step, sc_circuit_delta): the example that README.md's "A
 * program" points to, compiled and run here so that it cannot rot. The
 * block between the EXAMPLE markers is the part to read. README.md's own
 * program (a runtime over a placement) is compiled and run by
 * docs.readme_example_program (tests/docs/).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* EXAMPLE BEGIN */
#include "operators/aggregate.h"
#include "operators/circuit.h"

#define CHECK(call)                                                            \
	do {                                                                   \
		int rc_ = (call);                                              \
		if (rc_ < 0) {                                                 \
			(void)fprintf(stderr, "%s: %s\n", #call, sc_errmsg()); \
			return rc_;                                            \
		}                                                              \
	} while (0)

/* Keep bids of at least 100. Column 1 is the price. */
static int
is_big(void *ctx, const uint64_t *row, bool *keep)
{
	(void)ctx;
	*keep = sc_dec_i64(row[1]) >= 100;
	return 0;
}

/* Feed one bid (auction, price) with weight w (+1 insert, -1 retract). */
static int
bid(struct sc_circuit *c, int in, int64_t auction, int64_t price, int64_t w)
{
	uint64_t row[2] = {sc_enc_i64(auction), sc_enc_i64(price)};
	struct sc_batch *b;
	int rc;

	CHECK(sc_batch_from_records(2, row, &w, 1, &b));
	rc = sc_circuit_feed(c, in, b);
	sc_batch_release(b);
	return rc;
}

/* The highest big bid per auction, kept up to date as bids come and go. */
static int
example(FILE *out)
{
	enum sc_type types[] = {SC_TYPE_I64, SC_TYPE_I64}; /* auction, price */
	struct sc_aggregate_spec top = {.ncols = 2,
					.k = 1,
					.kind = SC_AGG_MAX,
					.col = 1,
					.col_type = SC_TYPE_I64};
	struct sc_schema bids;
	struct sc_graph *g;
	struct sc_circuit *c;
	struct sc_batch *delta, *all;
	int in, best;

	CHECK(sc_schema_init(&bids, 2, types, NULL));
	CHECK(sc_graph_create(&g));
	in = sc_graph_input(g, "bids", &bids);
	best = sc_graph_output(
	    g, "best",
	    sc_graph_aggregate(g, sc_graph_filter(g, in, is_big, NULL), &top));
	CHECK(best); /* an error anywhere in the chain ends up here */
	CHECK(sc_circuit_create(g, &c));

	CHECK(bid(c, in, 1, 150, 1));
	CHECK(bid(c, in, 1, 120, 1));
	CHECK(bid(c, in, 2, 90, 1)); /* too small */
	CHECK(bid(c, in, 2, 300, 1));
	CHECK(sc_circuit_step(c));

	CHECK(bid(c, in, 1, 150, -1)); /* the 150 bid is withdrawn */
	CHECK(sc_circuit_step(c));
	CHECK(sc_circuit_delta(c, best, &delta)); /* (1, 150) -1, (1, 120) +1 */
	(void)fprintf(out, "change:\n");
	sc_batch_fprint(out, delta, sc_graph_schema(g, best));
	CHECK(sc_circuit_integral(c, best, &all)); /* (1, 120), (2, 300) */
	(void)fprintf(out, "now:\n");
	sc_batch_fprint(out, all, sc_graph_schema(g, best));

	sc_batch_release(delta);
	sc_batch_release(all);
	sc_circuit_destroy(c);
	return sc_graph_destroy(g);
}
/* EXAMPLE END */

Test(example, readme_circuit_runs_and_prints_the_best_bids)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert_not_null(f);
	cr_assert_eq(example(f), 0, "%s", sc_errmsg());
	cr_assert_eq(fclose(f), 0);
	cr_log_info("%s", text);
	cr_assert(strstr(text, "(1, 150) x -1"), "%s", text);
	cr_assert(strstr(text, "(1, 120) x 1"), "%s", text);
	cr_assert(strstr(strstr(text, "now:"), "(2, 300) x 1"), "%s", text);
	free(text);
}
