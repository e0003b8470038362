/*
 * bench_tick.c - tick mode against the coalescing mode (units/runtime.h,
 * Modes), on a pool of 2 workers, and the cost of empty ticks.
 *
 * Workloads:
 *   grid     bench/workloads/grid.h, staged into its 2 units
 *            (sc_grid_staged); a host batch is EDITS cell edits;
 *   q1       Nexmark q1 (bench/workloads/nexmark_queries.h: a map over the
 *            bids, integral-functional, so the coalescing mode takes it)
 *            with its output a stream (nothing kept), placed per-node
 *            (3 units: input, map, output); a host batch is the bids of
 *            NX_EVENTS generated events.
 * The host submits the batches as fast as the runtime takes them
 * (sc_runtime_submit_wait: a closed loop), then waits for idle. In tick
 * mode it also closes a host tick (sc_runtime_tick) after every T
 * batches, T = 1, 16 and 256; the coalescing mode is every case's
 * baseline, run in the same process, alternating with it, REPS times
 * each. Figures, the medians of the repetitions:
 *   events/s   events (cell edits, bids) by the wall clock from the first
 *              submit to idle (higher is better);
 *   p99 us     per host batch, from just before its submit to the moment
 *              an output delta reflects it (lower is better). The grid's
 *              stamp (sc_grid_stamp) says which batch a "totals" delta
 *              reflects; for q1, the largest date_time in an output
 *              delta, against each batch's largest (event time grows
 *              with the event number, and a batch's bids span NX_EVENTS
 *              events' worth of it, so each batch's largest is new). In
 *              tick mode a batch is reflected only when its tick is
 *              stepped, so with T batches per tick the first batch of a
 *              tick waits for the T - 1 after it: the latency a tick
 *              costs by construction.
 * Empty ticks: a chain of 10 units (an input and 9 negations, one unit
 * each, the output beside the last), tick mode, 2 workers:
 *   one empty tick   sc_runtime_tick with nothing submitted, then
 *                    wait_idle: ns from the close to idle (the marker
 *                    through 10 units), baseline a tick of one 1-row
 *                    batch (submit, close, idle);
 *   1000 empty ticks 1000 closes back to back, then wait_idle: ns for the
 *                    range (markers a unit reads in one turn leave it as
 *                    one), baseline 1000 ticks of one row each.
 * Lower is better for both. --quick shrinks the sizes for a smoke run.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/harness.h"
#include "bench/workloads/grid.h"
#include "bench/workloads/nexmark.h"
#include "bench/workloads/nexmark_queries.h"
#include "operators/schema.h"
#include "operators/symbol.h"
#include "units/placement.h"
#include "units/runtime.h"

#define REPS	  5
#define EDITS	  16
#define NX_EVENTS 200
#define CHAIN	  10
#define RANGE	  1000

/* --- latency: when each host batch was submitted and reflected ---------- */

struct lat {
	size_t n;		  /* batches */
	uint64_t *sent;		  /* ns, just before each submit */
	_Atomic uint64_t *seen;	  /* ns, when an output reflected it */
	_Atomic size_t done;	  /* batches reflected so far (a prefix) */
	const struct sc_grid *gr; /* grid: reads the stamp */
	const int64_t *last_dt;	  /* q1: each batch's largest date_time */
	int dt_col;		  /* q1: date_time's column in the output */
};

/* Batches [done, upto) were reflected now (deltas are in order on the
 * stamp's path, and reflect every batch before the newest). */
static void
lat_reach(struct lat *l, size_t upto)
{
	uint64_t now = sc_bench_now_ns();
	size_t d = atomic_load(&l->done);

	if (upto > l->n)
		upto = l->n;
	while (d < upto && !atomic_compare_exchange_weak(&l->done, &d, upto))
		;
	for (size_t q = d; q < upto; q++)
		atomic_store_explicit(&l->seen[q], now, memory_order_relaxed);
}

static int
on_grid(void *ctx, int node, const struct sc_batch *delta)
{
	struct lat *l = ctx;
	uint64_t s;

	(void)node;
	if (sc_grid_stamp(l->gr, delta, &s) == 0)
		lat_reach(l, (size_t)s); /* stamp s: batch s - 1 */
	return 0;
}

static int
on_q1(void *ctx, int node, const struct sc_batch *delta)
{
	struct lat *l = ctx;
	int64_t dt = INT64_MIN;
	size_t d = atomic_load(&l->done);

	(void)node;
	for (size_t i = 0; i < sc_batch_count(delta); i++) {
		int64_t v = sc_dec_i64(sc_batch_row(delta, i)[l->dt_col]);

		dt = v > dt ? v : dt;
	}
	while (d < l->n && l->last_dt[d] <= dt)
		d++;
	lat_reach(l, d);
	return 0;
}

/* The p99 of the batches' latencies, in us. */
static double
lat_p99_us(struct lat *l)
{
	uint64_t *v = malloc(l->n * sizeof(*v));
	size_t idx;
	double p;

	if (!v)
		sc_bench_fail("latencies");
	for (size_t i = 0; i < l->n; i++) {
		uint64_t s = atomic_load(&l->seen[i]);

		if (!s)
			sc_bench_fail("a batch never reflected");
		v[i] = s > l->sent[i] ? s - l->sent[i] : 0;
	}
	sc_bench_sort_u64(v, l->n);
	idx = l->n * 99 / 100; /* the 99th percentile's rank, rounded down */
	p = (double)v[idx] / 1e3;
	free(v);
	return p;
}

/* --- one run of a workload ----------------------------------------------- */

struct work {
	struct sc_graph *g;
	struct sc_placement *p;
	int input;
	int output;
	sc_delta_fn on_delta;
	struct sc_batch **bs;
	size_t n;	 /* batches */
	uint64_t events; /* in all of them */
	struct lat lat;
};

struct result {
	double events_s;
	double p99_us;
};

/* One run: ticks_per 0 is the coalescing mode. */
static struct result
run_once(struct work *w, size_t ticks_per)
{
	struct sc_runtime_opts o = {.workers = 2, .ticks = ticks_per > 0};
	struct sc_runtime *rt = NULL;
	struct result r;
	uint64_t t0, t1;

	memset(w->lat.seen, 0, w->n * sizeof(*w->lat.seen));
	atomic_store(&w->lat.done, 0);
	if (sc_runtime_create(w->g, w->p, &o, &rt) != 0 ||
	    sc_runtime_on_delta(rt, w->output, w->on_delta, &w->lat) != 0)
		sc_bench_fail("runtime");
	t0 = sc_bench_now_ns();
	for (size_t i = 0; i < w->n; i++) {
		w->lat.sent[i] = sc_bench_now_ns();
		if (sc_runtime_submit_wait(rt, w->input, w->bs[i], 0) != 0)
			sc_bench_fail("submit");
		if (ticks_per && (i + 1) % ticks_per == 0 &&
		    sc_runtime_tick(rt, 0, NULL) != 0)
			sc_bench_fail("tick");
	}
	if (sc_runtime_wait_idle(rt, 0, NULL) != 0)
		sc_bench_fail("wait_idle");
	t1 = sc_bench_now_ns();
	if (sc_runtime_shutdown(rt, NULL) != 0)
		sc_bench_fail("shutdown");
	sc_runtime_destroy(rt);
	r.events_s = (double)w->events * 1e9 / (double)(t1 - t0 ? t1 - t0 : 1);
	r.p99_us = lat_p99_us(&w->lat);
	return r;
}

static void
work_alloc(struct work *w, size_t n)
{
	w->n = n;
	w->lat.n = n;
	w->bs = calloc(n, sizeof(struct sc_batch *));
	w->lat.sent = calloc(n, sizeof(*w->lat.sent));
	w->lat.seen = calloc(n, sizeof(*w->lat.seen));
	if (!w->bs || !w->lat.sent || !w->lat.seen)
		sc_bench_fail("batches");
}

static void
work_free(struct work *w)
{
	for (size_t i = 0; i < w->n; i++)
		sc_batch_release(w->bs[i]);
	free(w->bs);
	free(w->lat.sent);
	free((void *)w->lat.seen);
	free((void *)w->lat.last_dt);
	sc_placement_destroy(w->p);
}

/* Every case of one workload: T = 1, 16, 256 against the coalescing mode,
 * alternating, REPS times each. */
static void
compare(struct work *w, const char *name)
{
	static const size_t per[] = {1, 16, 256};

	for (size_t k = 0; k < sizeof(per) / sizeof(per[0]); k++) {
		double ev[2][REPS], p99[2][REPS];
		char kase[96];

		for (int r = 0; r < REPS; r++) {
			struct result c = run_once(w, 0);
			struct result t = run_once(w, per[k]);

			ev[0][r] = c.events_s;
			p99[0][r] = c.p99_us;
			ev[1][r] = t.events_s;
			p99[1][r] = t.p99_us;
		}
		(void)snprintf(kase, sizeof(kase),
			       "%s 2 workers, %zu batches per tick", name,
			       per[k]);
		sc_bench_emit("tick", kase, "events/s",
			      sc_bench_median(ev[1], REPS), "coalescing",
			      sc_bench_median(ev[0], REPS));
		(void)snprintf(kase, sizeof(kase),
			       "%s 2 workers, %zu batches per tick, p99 per "
			       "batch",
			       name, per[k]);
		sc_bench_emit("tick", kase, "us", sc_bench_median(p99[1], REPS),
			      "coalescing", sc_bench_median(p99[0], REPS));
	}
}

static void
bench_grid(size_t batches)
{
	struct sc_grid_opts go = {.rows = 64, .cols = 64, .seed = 7};
	struct sc_grid *gr = NULL;
	struct sc_grid_nodes nodes;
	struct work w;
	int32_t map[64];
	size_t n;

	memset(&w, 0, sizeof(w));
	if (sc_grid_create(&go, &gr) != 0)
		sc_bench_fail("grid");
	sc_grid_nodes(gr, &nodes);
	w.g = sc_grid_graph(gr);
	n = sc_graph_node_count(w.g);
	if (n > 64 || sc_grid_staged(gr, map, n) != 0 ||
	    sc_placement_manual(w.g, map, n, 2, &w.p) != 0)
		sc_bench_fail("placement");
	work_alloc(&w, batches);
	for (size_t i = 0; i < batches; i++)
		if (sc_grid_next(gr, EDITS, &w.bs[i]) != 0)
			sc_bench_fail("batches");
	w.input = nodes.cells;
	w.output = nodes.out_totals;
	w.on_delta = on_grid;
	w.events = (uint64_t)batches * EDITS;
	w.lat.gr = gr;
	compare(&w, "grid");
	work_free(&w);
	(void)sc_grid_destroy(gr);
}

/* q1's batches: the bids of NX_EVENTS events each, and each one's
 * largest date_time. */
static void
q1_batches(struct work *w, struct sc_nexmark *nx, size_t batches)
{
	int64_t *last = calloc(batches, sizeof(*last));

	if (!last)
		sc_bench_fail("q1 batches");
	for (size_t i = 0; i < batches; i++) {
		struct sc_batch *out[SC_NEXMARK_KINDS] = {NULL};
		struct sc_batch *b;

		if (sc_nexmark_batches(nx, NX_EVENTS, out) != 0 ||
		    !out[SC_NEXMARK_BID])
			sc_bench_fail("nexmark");
		b = out[SC_NEXMARK_BID];
		for (int k = 0; k < SC_NEXMARK_KINDS; k++)
			if (k != SC_NEXMARK_BID)
				sc_batch_release(out[k]);
		last[i] = INT64_MIN;
		for (size_t j = 0; j < sc_batch_count(b); j++) {
			int64_t v =
			    sc_dec_i64(sc_batch_row(b, j)[SC_NXB_DATE_TIME]);

			last[i] = v > last[i] ? v : last[i];
		}
		if (i && last[i] <= last[i - 1])
			sc_bench_fail("q1: a batch with no newer date_time");
		w->bs[i] = b;
		w->events += sc_batch_count(b);
	}
	w->lat.last_dt = last;
}

static void
bench_q1(size_t batches)
{
	struct sc_nexmark_opts no;
	struct sc_symtab *sy = NULL;
	struct sc_nexmark *nx = NULL;
	struct sc_nexmark_query *q = NULL;
	struct work w;

	memset(&w, 0, sizeof(w));
	sc_nexmark_opts_default(&no);
	if (sc_symtab_create(&sy) != 0 ||
	    sc_nexmark_create(&no, sy, &nx) != 0 ||
	    sc_nexmark_query_create("q1", sy, SC_NEXMARK_QUERY_STREAM, &q) != 0)
		sc_bench_fail("q1");
	w.g = sc_nexmark_query_graph(q);
	if (sc_placement_parse(w.g, "per-node", 1, &w.p) != 0)
		sc_bench_fail("q1 placement");
	work_alloc(&w, batches);
	q1_batches(&w, nx, batches);
	w.input = sc_nexmark_query_input(q, SC_NEXMARK_BID);
	w.output = sc_nexmark_query_output(q);
	w.on_delta = on_q1;
	w.lat.dt_col = 3; /* (auction, bidder, price, date_time, extra) */
	compare(&w, "nexmark q1");
	work_free(&w);
	(void)sc_nexmark_query_destroy(q);
	sc_nexmark_destroy(nx);
	sc_symtab_destroy(sy);
}

/* --- empty ticks through a chain of 10 units ----------------------------- */

struct chain {
	struct sc_graph *g;
	struct sc_placement *p;
	struct sc_runtime *rt;
	struct sc_batch *row;
	int in;
};

static void
chain_init(struct chain *c)
{
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_runtime_opts o = {.workers = 2, .ticks = true};
	uint64_t row[2] = {sc_enc_i64(1), sc_enc_i64(1)};
	int32_t unit_of[CHAIN + 1];
	struct sc_schema s;
	int n;

	memset(c, 0, sizeof(*c));
	if (sc_schema_init(&s, 2, t, NULL) != 0 || sc_graph_create(&c->g) != 0)
		sc_bench_fail("chain");
	n = c->in = sc_graph_input(c->g, "in", &s);
	for (int k = 1; k < CHAIN; k++)
		n = sc_graph_negate(c->g, n);
	if (sc_graph_output(c->g, "out", n) < 0 ||
	    sc_graph_node_count(c->g) != CHAIN + 1)
		sc_bench_fail("chain nodes");
	for (int k = 0; k < CHAIN; k++)
		unit_of[k] = k;
	unit_of[CHAIN] = CHAIN - 1; /* the output beside the last */
	if (sc_placement_manual(c->g, unit_of, CHAIN + 1, CHAIN, &c->p) != 0 ||
	    sc_runtime_create(c->g, c->p, &o, &c->rt) != 0 ||
	    sc_batch_from_records(2, row, NULL, 1, &c->row) != 0)
		sc_bench_fail("chain runtime");
}

static void
chain_fini(struct chain *c)
{
	if (sc_runtime_shutdown(c->rt, NULL) != 0)
		sc_bench_fail("chain shutdown");
	sc_runtime_destroy(c->rt);
	sc_batch_release(c->row);
	sc_placement_destroy(c->p);
	sc_graph_destroy(c->g);
}

/* ns for `ticks` closes (with a row each when `data`), then idle. */
static double
chain_ticks(struct chain *c, size_t ticks, bool data)
{
	uint64_t t0 = sc_bench_now_ns(), t1;

	for (size_t i = 0; i < ticks; i++) {
		if (data && sc_runtime_submit_wait(c->rt, c->in, c->row, 0))
			sc_bench_fail("chain submit");
		if (sc_runtime_tick(c->rt, 0, NULL) != 0)
			sc_bench_fail("chain tick");
	}
	if (sc_runtime_wait_idle(c->rt, 0, NULL) != 0)
		sc_bench_fail("chain idle");
	t1 = sc_bench_now_ns();
	return (double)(t1 - t0);
}

static void
bench_empty_ticks(size_t singles, size_t ranges)
{
	double *e = calloc(singles, sizeof(double));
	double *d = calloc(singles, sizeof(double));
	struct chain c;

	if (!e || !d)
		sc_bench_fail("samples");
	chain_init(&c);
	(void)chain_ticks(&c, 16, true); /* warm up */
	for (size_t i = 0; i < singles; i++) {
		e[i] = chain_ticks(&c, 1, false);
		d[i] = chain_ticks(&c, 1, true);
	}
	sc_bench_emit("tick", "10-unit chain, one empty tick, close to idle",
		      "ns", sc_bench_median(e, singles), "one tick of one row",
		      sc_bench_median(d, singles));
	for (size_t i = 0; i < ranges; i++) {
		e[i] = chain_ticks(&c, RANGE, false);
		d[i] = chain_ticks(&c, RANGE, true);
	}
	sc_bench_emit("tick",
		      "10-unit chain, 1000 empty ticks closed back to back, "
		      "first close to idle",
		      "ns", sc_bench_median(e, ranges),
		      "1000 ticks of one row each", sc_bench_median(d, ranges));
	chain_fini(&c);
	free(e);
	free(d);
}

int
main(int argc, char **argv)
{
	bool quick;

	sc_bench_init(argc, argv);
	quick = sc_bench_quick();
	bench_grid(quick ? 512 : 32768);
	bench_q1(quick ? 256 : 8192);
	bench_empty_ticks(quick ? 21 : 201, quick ? 3 : 11);
	return 0;
}
