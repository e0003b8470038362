/*
 * bench_symbols.c - what it costs the circuit to hold the symbols of the
 * rows it keeps (symbol.h, "Who holds an id"), on a join/aggregate-heavy
 * circuit whose rows carry unique strings, against the same circuit whose
 * schemas name no table (then the circuit takes no holds and the host has
 * to keep every id alive itself until it retracts the row).
 *
 * The circuit: bids (url, auction, price) with a unique url per bid, and
 * auctions (auction, name); bids re-keyed by auction and joined with the
 * auctions; the join counted per auction name (aggregate) and its distinct
 * urls (distinct); a materialized output of each. Each tick feeds DELTA
 * fresh bids (each url interned) and retracts the bids fed WINDOW ticks
 * earlier, so the state stays at about DELTA * WINDOW bids and every url
 * is interned once, held, and given back.
 *
 *   holds  the schemas name the table: the host releases each url as soon
 *          as it fed the bid (and again after the retraction)
 *   none   the schemas name no table: the host keeps each url until it
 *          has fed the bid's retraction
 *
 * Both intern the same strings the same number of times; what differs is
 * the holds the circuit's traces, feeds and kept batches take and drop.
 *   scoped the host never releases: a table that lives as long as the
 *          run (a table scoped to a runtime), timed as `none`
 *
 * Reported: bids per second of CPU time (higher is better), the median of
 * REPS runs of TICKS ticks, alternating holds and none; and the table's
 * live ids and bytes at the end (lower is better), which follow the state
 * with holds and none, and every string ever seen when scoped.
 *
 * SC_BENCH_REPS=n sets the repetitions (default 7, 3 with --quick);
 * SC_BENCH_MODE=holds or none runs that mode once (for callgrind).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/harness.h"
#include "operators/aggregate.h"
#include "operators/circuit.h"
#include "operators/graph.h"
#include "operators/symbol.h"

#define DELTA	 1000
#define WINDOW	 20
#define AUCTIONS 500

struct run {
	struct sc_symtab *t;
	struct sc_graph *g;
	struct sc_circuit *c;
	int bids, auctions;
	uint64_t *url; /* url id of bid i (ring of WINDOW + 1 ticks) */
	bool holds;
	bool scoped; /* the host never releases (a table per run) */
};

static void
check(int rc, const char *what)
{
	if (rc)
		sc_bench_fail(what);
}

static void
build(struct run *r, bool holds)
{
	enum sc_type bt[3] = {SC_TYPE_SYMBOL, SC_TYPE_I64, SC_TYPE_I64};
	enum sc_type at[2] = {SC_TYPE_I64, SC_TYPE_SYMBOL};
	struct sc_aggregate_spec count = {
	    .ncols = 2, .k = 1, .kind = SC_AGG_COUNT};
	struct sc_schema bs, as;
	uint32_t by_auction[3] = {1, 0, 2}, by_name[2] = {3, 1};
	uint32_t url_only[1] = {1};
	struct sc_symtab *tab;
	int j;

	check(sc_symtab_create(&r->t), "symtab");
	tab = holds ? r->t : NULL;
	check(sc_schema_init(&bs, 3, bt, tab), "schema");
	check(sc_schema_init(&as, 2, at, tab), "schema");
	check(sc_graph_create(&r->g), "graph");
	r->bids = sc_graph_input(r->g, "bids", &bs);
	r->auctions = sc_graph_input(r->g, "auctions", &as);
	/* (auction, url, price) join (auction, name) on the auction:
	 * (auction, url, price, name). */
	j = sc_graph_join(r->g, sc_graph_index_by(r->g, r->bids, by_auction, 3),
			  r->auctions, 1);
	check(sc_graph_output(r->g, "per_name",
			      sc_graph_aggregate(
				  r->g, sc_graph_index_by(r->g, j, by_name, 2),
				  &count)) < 0,
	      "graph");
	check(sc_graph_output(
		  r->g, "urls",
		  sc_graph_distinct(
		      r->g, sc_graph_index_by(r->g, j, url_only, 1))) < 0,
	      "graph");
	check(sc_circuit_create(r->g, &r->c), "circuit");
	r->url = calloc((size_t)DELTA * (WINDOW + 1), sizeof(uint64_t));
	if (!r->url)
		sc_bench_fail("no memory");
	r->holds = holds;
}

static void
destroy(struct run *r)
{
	sc_circuit_destroy(r->c);
	check(sc_graph_destroy(r->g), "graph destroy");
	sc_symtab_destroy(r->t);
	free(r->url);
}

static void
feed_auctions(struct run *r)
{
	struct sc_batch_builder b;
	struct sc_batch *out;
	char text[32];

	check(sc_batch_builder_init(&b, 2), "builder");
	for (int a = 0; a < AUCTIONS; a++) {
		uint64_t row[2];

		(void)snprintf(text, sizeof(text), "auction item %d", a);
		row[0] = sc_enc_i64(a);
		check(sc_symtab_intern_cstr(r->t, text, &row[1]), "intern");
		check(sc_batch_builder_push(&b, row, 2, 1), "push");
	}
	check(sc_batch_builder_finish(&b, &out), "finish");
	check(sc_circuit_feed(r->c, r->auctions, out), "feed");
	sc_batch_release(out);
	sc_batch_builder_fini(&b);
}

/* Tick `tick`: fresh bids, and the retraction of tick - WINDOW's. */
static void
tick(struct run *r, int tick)
{
	struct sc_batch_builder b;
	struct sc_batch *out;
	uint64_t *now = r->url + (size_t)(tick % (WINDOW + 1)) * DELTA;
	uint64_t *old = r->url + (size_t)((tick + 1) % (WINDOW + 1)) * DELTA;
	char text[64];

	check(sc_batch_builder_init(&b, 3), "builder");
	for (int i = 0; i < DELTA; i++) {
		uint64_t row[3];
		int64_t bid = (int64_t)tick * DELTA + i;

		(void)snprintf(text, sizeof(text),
			       "https://www.nexmark.com/item.htm?bid=%lld",
			       (long long)bid);
		check(sc_symtab_intern_cstr(r->t, text, &now[i]), "intern");
		row[0] = now[i];
		row[1] = sc_enc_i64(bid % AUCTIONS);
		row[2] = sc_enc_i64(bid % 997);
		check(sc_batch_builder_push(&b, row, 3, 1), "push");
		if (tick < WINDOW)
			continue;
		bid -= (int64_t)WINDOW * DELTA;
		row[0] = old[i];
		row[1] = sc_enc_i64(bid % AUCTIONS);
		row[2] = sc_enc_i64(bid % 997);
		check(sc_batch_builder_push(&b, row, 3, -1), "push");
	}
	check(sc_batch_builder_finish(&b, &out), "finish");
	check(sc_circuit_feed(r->c, r->bids, out), "feed");
	sc_batch_release(out);
	sc_batch_builder_fini(&b);
	/* With holds the host is done with every id it fed; without, only
	 * with the ones whose retraction it just fed. */
	for (int i = 0; i < DELTA; i++) {
		if (r->holds)
			check(sc_symtab_release(r->t, now[i]), "release");
		if (tick >= WINDOW && !r->holds && !r->scoped)
			check(sc_symtab_release(r->t, old[i]), "release");
	}
	check(sc_circuit_step(r->c), "step");
}

/* One run of `ticks` ticks: bids per CPU second; *live and *bytes the
 * table's live ids and bytes at the end. */
static double
run_once(bool holds, bool scoped, int ticks, size_t *live, size_t *bytes)
{
	struct run r;
	uint64_t t0;
	double secs;

	build(&r, holds);
	r.scoped = scoped;
	feed_auctions(&r);
	t0 = sc_bench_cpu_ns();
	for (int i = 0; i < ticks; i++)
		tick(&r, i);
	secs = (double)(sc_bench_cpu_ns() - t0) / 1e9;
	*live = sc_symtab_count(r.t);
	*bytes = sc_symtab_bytes(r.t);
	destroy(&r);
	return (double)ticks * DELTA / secs;
}

int
main(int argc, char **argv)
{
	bool quick = sc_bench_init(argc, argv);
	int ticks = quick ? 60 : 400, reps = quick ? 3 : 7;
	const char *env = getenv("SC_BENCH_REPS");
	const char *mode = getenv("SC_BENCH_MODE");
	bool only_holds = mode && strcmp(mode, "holds") == 0;
	bool only_none = mode && strcmp(mode, "none") == 0;
	double with[32], without[32];
	size_t live_with = 0, live_without = 0, live_scoped = 0;
	size_t bytes_with = 0, bytes_without = 0, bytes_scoped = 0;
	char kase[64];

	if (env && atoi(env) > 0 && atoi(env) <= 32)
		reps = atoi(env);
	if (only_holds || only_none) {
		/* One mode once, for instruction counts (callgrind). */
		double v =
		    run_once(only_holds, false, ticks, &live_with, &bytes_with);

		sc_bench_emit("symbols", only_holds ? "holds" : "none",
			      "bids/cpu-s", v, NULL, 0);
		return 0;
	}
	for (int i = 0; i < reps; i++) {
		with[i] = run_once(true, false, ticks, &live_with, &bytes_with);
		without[i] = run_once(false, false, ticks, &live_without,
				      &bytes_without);
	}
	(void)run_once(false, true, ticks, &live_scoped, &bytes_scoped);
	(void)snprintf(kase, sizeof(kase), "join+aggregate, %d ticks of %d",
		       ticks, DELTA);
	sc_bench_emit("symbols", kase, "bids/cpu-s",
		      sc_bench_median(with, reps), "none",
		      sc_bench_median(without, reps));
	sc_bench_emit("symbols", "live ids at the end", "ids",
		      (double)live_with, "none", (double)live_without);
	sc_bench_emit("symbols", "live ids at the end", "ids",
		      (double)live_with, "scoped", (double)live_scoped);
	sc_bench_emit("symbols", "table bytes at the end", "bytes",
		      (double)bytes_with, "scoped", (double)bytes_scoped);
	return 0;
}
