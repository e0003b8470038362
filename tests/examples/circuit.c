/*
 * circuit.c - a graph of Z-set operators run as one synchronous circuit
 * (operators/graph.h, operators/circuit.h).
 *
 * Bids (auction, price) and auctions (auction, seller) arrive as batches of
 * changes: a row of weight +1 is inserted, -1 retracted. The graph keeps
 * the bids of 10 or more, sums their prices per auction and joins the sums
 * with the auctions:
 *
 *   bids -> filter(price >= 10) -> SUM(price) per auction -+
 *   auctions ----------------------------------------------+-> join -> totals
 *
 * Each sc_circuit_step is one tick: the batches fed since the last step
 * enter and every operator runs once. The program prints each tick's
 * change of "totals" (its delta) and, at the end, "totals" whole (its
 * integral, the sum of the deltas).
 *
 * Build against an installed subcirc, and run:
 *   cc circuit.c $(pkg-config --cflags --libs subcirc) -o circuit
 *   ./circuit
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <subcirc/subcirc.h>

/* One change: a row (two i64 columns) and its weight. */
struct change {
	int64_t a, b, w;
};

/* Rows are encoded words (schema.h): sc_enc_i64 in, sc_dec_i64 out. */
static int
keep_ten_or_more(void *ctx, const uint64_t *row, bool *keep)
{
	(void)ctx;
	*keep = sc_dec_i64(row[1]) >= 10;
	return 0;
}

/* Adds the nodes; returns the output's id, or the first error (each node
 * call passes a negative id from an inner call on unchanged). */
static int
build(struct sc_graph *g, int *bids, int *auctions)
{
	enum sc_type types[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_aggregate_spec sum = {.ncols = 2,
					.k = 1, /* group by column 0 */
					.kind = SC_AGG_SUM,
					.col = 1,
					.col_type = SC_TYPE_I64};
	struct sc_schema s;
	int totals, rc = sc_schema_init(&s, 2, types, NULL);

	if (rc != 0)
		return rc;
	*bids = sc_graph_input(g, "bids", &s);
	*auctions = sc_graph_input(g, "auctions", &s);
	totals = sc_graph_aggregate(
	    g, sc_graph_filter(g, *bids, keep_ten_or_more, NULL), &sum);
	/* A join's row: the key (k columns), then the left side's other
	 * columns, then the right side's: (auction, seller, total). */
	return sc_graph_output(g, "totals",
			       sc_graph_join(g, *auctions, totals, 1));
}

/* The changes of each tick; a weight of 0 ends a list. */
static const struct change auction_rows[] = {{1, 100, 1}, {2, 200, 1}, {0}};
static const struct change bid_rows[3][4] = {
    {{1, 5, 1}, {1, 20, 1}, {2, 30, 1}},
    {{1, 40, 1}, {2, 7, 1}},
    {{1, 20, -1}, {2, 30, -1}}, /* two bids retracted */
};

/* Feeds changes to input `in`; they enter at the next step. A builder
 * takes rows in any order and sums equal ones into a batch. */
static int
feed(struct sc_circuit *c, int in, const struct change *ch)
{
	struct sc_batch_builder bb = {0};
	struct sc_batch *b = NULL;
	int rc = sc_batch_builder_init(&bb, 2);

	for (; rc == 0 && ch->w != 0; ch++) {
		uint64_t row[2] = {sc_enc_i64(ch->a), sc_enc_i64(ch->b)};

		rc = sc_batch_builder_push(&bb, row, 2, ch->w);
	}
	if (rc == 0)
		rc = sc_batch_builder_finish(&bb, &b);
	if (rc == 0)
		rc = sc_circuit_feed(c, in, b); /* the circuit retains b */
	sc_batch_release(b);
	sc_batch_builder_fini(&bb);
	return rc;
}

/* Prints (auction, seller, total) rows, sorted, with their weights. */
static void
print_rows(const char *title, const struct sc_batch *b)
{
	(void)printf("%s:\n", title);
	for (size_t i = 0; i < sc_batch_count(b); i++) {
		const uint64_t *r = sc_batch_row(b, i);

		(void)printf("  auction %" PRId64 " seller %" PRId64
			     " total %" PRId64 "  weight %+" PRId64 "\n",
			     sc_dec_i64(r[0]), sc_dec_i64(r[1]),
			     sc_dec_i64(r[2]), sc_batch_weight(b, i));
	}
}

/* Each tick: feed, step, read the output's delta (a new reference). */
static int
run(struct sc_graph *g, struct sc_circuit **c)
{
	const char *title[3] = {"tick 0 delta", "tick 1 delta", "tick 2 delta"};
	struct sc_batch *d = NULL;
	int in_bids = -1, in_auctions = -1, out, rc;

	out = build(g, &in_bids, &in_auctions);
	if (out < 0)
		return out;
	rc = sc_circuit_create(g, c);
	if (rc == 0)
		rc = feed(*c, in_auctions,
			  auction_rows); /* enters with tick 0 */
	for (int t = 0; rc == 0 && t < 3; t++) {
		rc = feed(*c, in_bids, bid_rows[t]);
		if (rc == 0)
			rc = sc_circuit_step(*c);
		if (rc == 0)
			rc = sc_circuit_delta(*c, out, &d);
		if (rc == 0)
			print_rows(title[t], d);
		sc_batch_release(d);
		d = NULL;
	}
	if (rc == 0)
		rc = sc_circuit_integral(*c, out, &d);
	if (rc == 0)
		print_rows("integral", d);
	sc_batch_release(d);
	return rc;
}

int
main(void)
{
	struct sc_graph *g = NULL;
	struct sc_circuit *c = NULL;
	int rc = sc_graph_create(&g);

	if (rc == 0)
		rc = run(g, &c);
	if (rc != 0)
		(void)fprintf(stderr, "circuit: %s: %s\n", sc_strerror(rc),
			      sc_errmsg());
	sc_circuit_destroy(c); /* before the graph: it thaws the graph */
	if (sc_graph_destroy(g) != 0 && rc == 0)
		rc = SC_EBUSY;
	return rc == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
