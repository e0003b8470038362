/*
 * test_mpi_runtime.c - a runtime placed across MPI ranks
 * (units/mpi_runtime.h) under mpirun: a plain driver (Criterion forks its
 * tests, which MPI does not survive), registered by tests/mpi/CMakeLists.txt:
 *
 *   settle WORKLOAD STRATEGY WORKERS SEEDS
 *        WORKLOAD random (bench/workloads/random.h), grid
 *        (bench/workloads/grid.h) or nexmark (the seed draws the query of
 *        bench/workloads/nexmark_queries.h and the generator's streams,
 *        symbols included, whose bytes then cross ranks); STRATEGY
 *        ranks (chains@ranks:N), sharded (sharded:2@ranks:N: replica i
 *        on rank i mod N) or manual (every replica slot on rank
 *        (N - 1 - i mod N), by sc_placement_set_ranks); for each seed
 *        1..SEEDS, rank 0 submits the workload's batches, every rank
 *        waits for idle and gathers every output, and rank 0's integrals
 *        must equal the single circuit's fed the same batches; a failing
 *        seed prints its replay command;
 *   relink WORKLOAD STRATEGY WORKERS SEEDS
 *        settle, the ranks leaving each seed's runtime at different
 *        times: rank 0 destroys at once, the others 300 ms later (their
 *        link threads beating meanwhile), and all meet on
 *        MPI_COMM_WORLD before the next seed: no message of one seed's
 *        link may land in the next's (Open MPI reuses a freed
 *        communicator's id; units/mpi_link.h, Leaving);
 *   backpressure WORKERS SEEDS
 *        the random circuits over ranks:N with one credit, an outbox of
 *        one frame and edges of one frame: the ranks wait on credits,
 *        and still settle to the single circuit with no frame lost;
 *   kill WORKERS
 *        rank 1 kills itself mid-run; the others report its units dead
 *        (wait_idle says SC_EPANIC, an output behind it is partial) and
 *        end on their own within the deadline;
 *   lateness STRATEGY WORKERS SEEDS
 *        a windowed circuit with lateness (in(t, k), t at most LATE
 *        behind; a distinct of its rows, a tumbling window, the COUNT
 *        per window) with the input, distinct and window in a unit on
 *        rank 0 and the COUNT on rank 1 (STRATEGY ranks), or the first
 *        unit sharded over both ranks
 *        (sharded: the consumer takes the lower of its two producers'
 *        waterlines, one of them remote), cleanup on: the outputs equal
 *        the single circuit's with cleanup off, the consumer's waterline
 *        on t came across the remote edge (it is at least the input's
 *        max t before the last submission less LATE) and its state is a
 *        small part of the rows it was fed.
 *
 * Any failed check prints the rank and the reason and exits 1 (mpirun
 * then fails); alarm() ends a hung rank.
 */
#include <inttypes.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/workloads/grid.h"
#include "bench/workloads/nexmark.h"
#include "bench/workloads/nexmark_queries.h"
#include "bench/workloads/random.h"
#include "operators/base.h"
#include "operators/batch.h"
#include "operators/aggregate.h"
#include "operators/circuit.h"
#include "operators/waterline.h"
#include "operators/window.h"
#include "units/mpi_runtime.h"
#include "units/placement.h"

static int me, nranks;
static char replay[256];
static bool stagger; /* relink: the ranks leave at different times */

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			(void)fprintf(stderr, "rank %d: %s:%d: ", me,          \
				      __FILE__, __LINE__);                     \
			(void)fprintf(stderr, __VA_ARGS__);                    \
			(void)fprintf(stderr, " (%s)\n", sc_errmsg());         \
			if (replay[0])                                         \
				(void)fprintf(stderr, "replay: %s\n", replay); \
			_exit(1);                                              \
		}                                                              \
	} while (0)

/* One workload: its graph, its inputs' batches, its outputs. */
struct wl {
	struct sc_randc *rc;
	struct sc_grid *gr;
	struct sc_symtab *syms;	    /* nexmark: owned unless shared */
	bool own_syms;		    /* nexmark: syms is this workload's */
	struct sc_nexmark *nx;	    /* nexmark: the generator */
	struct sc_nexmark_query *q; /* nexmark: the query */
	struct sc_nexmark_feed feed;
	size_t next; /* nexmark: submissions made */
	int out[SC_RANDC_MAX_IO];
	size_t nout;
};

/* A Nexmark query drawn by the seed, its generator interning into syms
 * (NULL: a table of its own). The reference on rank 0 shares the runtime's
 * table, so that both intern the same texts to the same symbols and the
 * integrals compare word for word. Events 10 ms apart, so that windows
 * close within a run. */
static void
wl_make_nexmark(uint64_t seed, struct sc_symtab *syms, struct wl *w)
{
	const char *const *names;
	size_t nq = sc_nexmark_query_names(&names);
	struct sc_nexmark_opts o;

	w->own_syms = syms == NULL;
	if (w->own_syms)
		CHECK(sc_symtab_create(&syms) == 0, "symtab");
	w->syms = syms;
	CHECK(sc_nexmark_query_create(names[seed % nq], syms, 0, &w->q) == 0,
	      "query %s", names[seed % nq]);
	sc_nexmark_opts_default(&o);
	o.seed = seed;
	o.gap_us = 10000;
	CHECK(sc_nexmark_create(&o, syms, &w->nx) == 0, "generator");
	w->feed.nx = w->nx;
	w->feed.q = w->q;
	w->feed.events = 20 + (size_t)(seed % 41);
	w->out[0] = sc_nexmark_query_output(w->q);
	w->nout = 1;
}

static void
wl_make(const char *kind, uint64_t seed, struct sc_symtab *syms, struct wl *w)
{
	memset(w, 0, sizeof(*w));
	if (!strcmp(kind, "nexmark")) {
		wl_make_nexmark(seed, syms, w);
	} else if (!strcmp(kind, "random")) {
		CHECK(sc_randc_create(seed, &w->rc) == 0, "randc %" PRIu64,
		      seed);
		w->nout = sc_randc_outputs(w->rc, w->out, SC_RANDC_MAX_IO);
	} else {
		struct sc_grid_opts o = {.rows = 6, .cols = 5, .seed = seed};
		struct sc_grid_nodes n;

		CHECK(!strcmp(kind, "grid"), "unknown workload '%s'", kind);
		CHECK(sc_grid_create(&o, &w->gr) == 0, "grid");
		sc_grid_nodes(w->gr, &n);
		w->out[0] = n.out_grid;
		w->out[1] = n.out_totals;
		w->nout = 2;
	}
}

static struct sc_graph *
wl_graph(const struct wl *w)
{
	return w->rc  ? sc_randc_graph(w->rc)
	       : w->q ? sc_nexmark_query_graph(w->q)
		      : sc_grid_graph(w->gr);
}

static void
wl_next(struct wl *w, int *input, struct sc_batch **b)
{
	if (w->rc) {
		CHECK(sc_randc_next(w->rc, input, b) == 0, "next");
	} else if (w->q) {
		struct sc_settle_step st;

		CHECK(sc_nexmark_settle_step(&w->feed, w->next++, &st) == 0,
		      "nexmark step");
		*input = st.input;
		*b = st.batch;
	} else {
		struct sc_grid_nodes n;

		sc_grid_nodes(w->gr, &n);
		*input = n.cells;
		CHECK(sc_grid_next(w->gr, 3, b) == 0, "grid next");
	}
}

static void
wl_free(struct wl *w)
{
	CHECK(sc_randc_destroy(w->rc) == 0 && sc_grid_destroy(w->gr) == 0,
	      "workload destroy");
	sc_nexmark_feed_fini(&w->feed);
	sc_nexmark_destroy(w->nx);
	CHECK(sc_nexmark_query_destroy(w->q) == 0, "query destroy");
	if (w->own_syms)
		sc_symtab_destroy(w->syms);
}

/* The placement of `strategy` over every rank. */
static struct sc_placement *
place(struct sc_graph *g, const char *strategy, uint64_t seed)
{
	struct sc_placement *p = NULL;
	char spec[64];

	if (!strcmp(strategy, "ranks") || !strcmp(strategy, "manual"))
		(void)snprintf(spec, sizeof(spec), "chains@ranks:%d", nranks);
	else if (!strcmp(strategy, "sharded"))
		(void)snprintf(spec, sizeof(spec), "sharded:2@ranks:%d",
			       nranks);
	else
		CHECK(0, "unknown strategy '%s'", strategy);
	CHECK(sc_placement_parse(g, spec, seed, &p) == 0, "placement %s", spec);
	if (!strcmp(strategy, "manual")) {
		size_t n = sc_placement_replicas(p);
		uint32_t *r = calloc(n ? n : 1, sizeof(*r));

		CHECK(r != NULL, "memory");
		for (size_t i = 0; i < n; i++)
			r[i] =
			    (uint32_t)(nranks - 1 - (int)(i % (size_t)nranks));
		CHECK(sc_placement_set_ranks(p, (uint32_t)nranks, r, n) == 0,
		      "manual ranks");
		free(r);
	}
	return p;
}

/* Rank 0: submit `steps` batches (feeding the reference circuit the same
 * ones) and step the reference after each. */
static void
submit_all(struct sc_runtime *rt, struct wl *w, struct wl *ref,
	   struct sc_circuit *c, size_t steps)
{
	for (size_t i = 0; i < steps; i++) {
		struct sc_batch *b = NULL, *rb = NULL;
		int in = 0, rin = 0;

		wl_next(w, &in, &b);
		wl_next(ref, &rin, &rb);
		CHECK(in == rin, "the reference drew another input");
		CHECK(sc_runtime_submit_wait(rt, in, b, 20000000000ull) == 0,
		      "submit %zu", i);
		sc_batch_release(b);
		CHECK(sc_circuit_feed(c, rin, rb) == 0, "reference feed");
		sc_batch_release(rb);
		CHECK(sc_circuit_step(c) == 0, "reference step");
	}
}

/* Every rank: wait for idle, gather every output; rank 0 compares. */
static void
compare(struct sc_runtime *rt, struct wl *w, struct sc_circuit *c)
{
	struct sc_panic_record first;
	struct sc_runtime_stats st;

	CHECK(sc_runtime_wait_idle(rt, 30000000000ull, &first) == 0,
	      "wait_idle");
	for (size_t o = 0; o < w->nout; o++) {
		struct sc_batch *got = NULL, *want = NULL;

		CHECK(sc_runtime_integral(rt, w->out[o], &got) == 0,
		      "integral of %d", w->out[o]);
		if (me == 0) {
			CHECK(sc_circuit_integral(c, w->out[o], &want) == 0,
			      "reference integral");
			CHECK(sc_batch_equal(got, want),
			      "output %d: %zu rows across ranks, %zu in the "
			      "single circuit",
			      w->out[o], sc_batch_count(got),
			      sc_batch_count(want));
			sc_batch_release(want);
		}
		sc_batch_release(got);
	}
	CHECK(sc_runtime_check_idle(rt) == 0, "check_idle");
	sc_runtime_stats(rt, &st);
	CHECK(st.frames_undeliverable == 0 && st.panics == 0,
	      "%" PRIu64 " frames undeliverable, %u panics",
	      st.frames_undeliverable, st.panics);
}

/* One seed of one workload and strategy; the link stats summed over
 * ranks into *all (rank 0). */
static void
settle_one(const char *kind, const char *strategy, uint32_t workers,
	   uint64_t seed, const struct sc_mpi_link_opts *lo, uint32_t cap,
	   struct sc_mpi_link_stats *mine)
{
	struct sc_runtime_opts o = {.workers = workers};
	struct sc_mpi_runtime *m = NULL;
	struct sc_circuit *c = NULL;
	struct sc_mpi_link_opts dlo;
	struct sc_placement *p;
	struct wl w, ref = {0};

	/* A loaded test machine may starve a rank for a while: only the
	 * kill scenario wants deaths found fast. */
	sc_mpi_link_opts_default(&dlo);
	dlo.dead_ns = 20000000000ull;
	/* relink: many beats while the others wait to leave. */
	if (stagger)
		dlo.heartbeat_ns = 5000000;
	if (lo)
		dlo.credits = lo->credits, dlo.outbox = lo->outbox;
	lo = &dlo;
	wl_make(kind, seed, NULL, &w);
	p = place(wl_graph(&w), strategy, seed);
	o.edge_capacity = cap;
	o.outbox_bound = cap ? 8 : 0;
	CHECK(sc_mpi_runtime_create(wl_graph(&w), p, &o, lo, &m) == 0,
	      "create");
	if (me == 0) {
		wl_make(kind, seed, w.syms, &ref);
		CHECK(sc_circuit_create(wl_graph(&ref), &c) == 0, "reference");
		submit_all(sc_mpi_runtime_rt(m), &w, &ref, c, w.rc ? 40 : 30);
	}
	compare(sc_mpi_runtime_rt(m), &w, c);
	sc_mpi_runtime_stats(m, mine);
	if (stagger && me != 0) {
		struct timespec ts = {0, 300000000};

		(void)nanosleep(&ts, NULL);
	}
	sc_mpi_runtime_destroy(m);
	/* MPI_COMM_WORLD's barrier lets every rank's MPI take in what is
	 * still on its way before the next link is made. */
	if (stagger)
		CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS, "barrier");
	sc_placement_destroy(p);
	if (me == 0) {
		sc_circuit_destroy(c);
		wl_free(&ref);
	}
	wl_free(&w);
}

/* "N" is seeds 1..N, "A:B" seeds A..B. */
static void
seed_range(const char *arg, uint64_t *lo, uint64_t *hi)
{
	const char *colon = strchr(arg, ':');

	*lo = colon ? strtoull(arg, NULL, 10) : 1;
	*hi = strtoull(colon ? colon + 1 : arg, NULL, 10);
	CHECK(*lo >= 1 && *hi >= *lo, "seeds '%s'", arg);
}

static void
settle(const char *argv0, const char *kind, const char *strategy,
       uint32_t workers, const char *seeds)
{
	uint64_t lo, hi, sent = 0;

	seed_range(seeds, &lo, &hi);
	for (uint64_t s = lo; s <= hi; s++) {
		struct sc_mpi_link_stats st;

		(void)snprintf(replay, sizeof(replay),
			       "mpirun --oversubscribe --allow-run-as-root -np "
			       "%d %s %s %s %s %u %" PRIu64 ":%" PRIu64,
			       nranks, argv0, stagger ? "relink" : "settle",
			       kind, strategy, workers, s, s);
		settle_one(kind, strategy, workers, s, NULL, 0, &st);
		sent += st.frames_sent;
	}
	replay[0] = 0;
	/* The placements must have cut edges: frames crossed ranks. */
	CHECK(MPI_Allreduce(MPI_IN_PLACE, &sent, 1, MPI_UINT64_T, MPI_SUM,
			    MPI_COMM_WORLD) == MPI_SUCCESS,
	      "allreduce");
	CHECK(sent > 0, "no frame crossed ranks");
	if (me == 0)
		printf("OK settle %s %s: %d ranks x %u workers, seeds %" PRIu64
		       "..%" PRIu64 ", %" PRIu64 " frames across ranks\n",
		       kind, strategy, nranks, workers, lo, hi, sent);
}

/* One credit, one frame of outbox, one-frame edges: every rank's credit
 * waits are summed on rank 0, which needs some (backpressure happened). */
static void
backpressure(const char *argv0, uint32_t workers, uint64_t seeds)
{
	struct sc_mpi_link_opts lo;
	uint64_t waits = 0, sent = 0;

	sc_mpi_link_opts_default(&lo);
	lo.credits = 1;
	lo.outbox = 1;
	for (uint64_t s = 1; s <= seeds; s++) {
		struct sc_mpi_link_stats st;

		(void)snprintf(replay, sizeof(replay),
			       "mpirun --oversubscribe --allow-run-as-root -np "
			       "%d %s backpressure %u %" PRIu64,
			       nranks, argv0, workers, s);
		settle_one("random", "ranks", workers, s, &lo, 1, &st);
		CHECK(st.undeliverable == 0, "%" PRIu64 " undeliverable",
		      st.undeliverable);
		waits += st.credit_waits;
		sent += st.frames_sent;
	}
	replay[0] = 0;
	CHECK(MPI_Allreduce(MPI_IN_PLACE, &waits, 1, MPI_UINT64_T, MPI_SUM,
			    MPI_COMM_WORLD) == MPI_SUCCESS,
	      "allreduce");
	CHECK(waits > 0, "no credit wait in %" PRIu64 " seeds", seeds);
	if (me == 0)
		printf("OK backpressure: %" PRIu64 " credit waits, rank 0 sent "
		       "%" PRIu64 " frames\n",
		       waits, sent);
}

/* Rank 1 dies mid-run; the survivors report it and end. */
static void
kill_one(uint32_t workers)
{
	struct sc_runtime_opts o = {.workers = workers};
	struct sc_mpi_link_opts lo;
	struct sc_mpi_runtime *m = NULL;
	struct sc_placement *p;
	struct sc_runtime *rt;
	struct sc_panic_record first;
	uint64_t t0 = sc_clock_ns();
	uint32_t dead = 0;
	int rc, partial = 0;
	struct wl w;

	sc_mpi_link_opts_default(&lo);
	lo.heartbeat_ns = 50000000;
	lo.dead_ns = 1000000000;
	wl_make("grid", 7, NULL, &w);
	p = place(wl_graph(&w), "ranks", 7);
	CHECK(sc_mpi_runtime_create(wl_graph(&w), p, &o, &lo, &m) == 0,
	      "create");
	rt = sc_mpi_runtime_rt(m);
	if (me == 1) {
		struct sc_mpi_link_stats st;

		do {
			sc_mpi_runtime_stats(m, &st);
			CHECK(sc_clock_ns() - t0 < 10000000000ull,
			      "no frame came");
		} while (st.frames_recv < 3);
		(void)raise(SIGKILL); /* dies here, mid-run */
	}
	for (int i = 0; me == 0 && i < 400; i++) {
		struct sc_batch *b = NULL;
		int in = 0;

		wl_next(&w, &in, &b);
		rc = sc_runtime_submit_wait(rt, in, b, 3000000000ull);
		sc_batch_release(b);
		CHECK(rc == 0 || rc == SC_EDEAD || rc == SC_ETIMEDOUT,
		      "submit: %d", rc);
	}
	rc = sc_runtime_wait_idle(rt, 20000000000ull, &first);
	CHECK(rc == SC_EPANIC, "wait_idle said %d, not SC_EPANIC", rc);
	for (size_t i = 0; i < w.nout; i++)
		if (sc_runtime_upstream_dead(rt, w.out[i], &dead) == SC_EDEAD)
			partial++;
	CHECK(partial > 0, "no output reported partial");
	CHECK(sc_clock_ns() - t0 < 30000000000ull, "past the deadline");
	printf("OK rank %d: rank 1 reported dead (%s), %d outputs partial, "
	       "%.1f s\n",
	       me, first.message, partial, (double)(sc_clock_ns() - t0) / 1e9);
	(void)fflush(stdout);
	sc_mpi_runtime_destroy(m);
	sc_placement_destroy(p);
	wl_free(&w);
}

/* --- lateness across ranks ------------------------------------------------ */

#define LATE   10 /* the input's lateness on t */
#define ROUNDS 8  /* rounds of submissions, each ending at idle */
#define PER    20 /* submissions a round */
#define ROWS   16 /* rows a submission */
#define WIDTH  32 /* the tumbling window's width */

struct late_graph {
	struct sc_graph *g;
	int in, win, by, count, dist, out_count, out_dist;
};

static void
late_graph(struct late_graph *c)
{
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_I64};
	static const uint32_t by[2] = {2, 0}; /* (start, t) */
	struct sc_aggregate_spec sp = {
	    .ncols = 2, .k = 1, .kind = SC_AGG_COUNT};
	struct sc_schema s;

	CHECK(sc_schema_init(&s, 2, t, NULL) == 0 &&
		  sc_graph_create(&c->g) == 0,
	      "late graph");
	c->in = sc_graph_input(c->g, "in", &s);
	CHECK(sc_graph_lateness(c->g, c->in, 0, LATE, 0) == 0, "lateness");
	c->dist = sc_graph_distinct(c->g, c->in);
	c->out_dist = sc_graph_output(c->g, "seen", c->dist);
	c->win = sc_window_tumbling(c->g, c->dist, 0, WIDTH);
	c->by = sc_graph_index_by(c->g, c->win, by, 2);
	c->count = sc_graph_aggregate(c->g, c->by, &sp);
	c->out_count = sc_graph_output(c->g, "count", c->count);
	CHECK(c->out_dist >= 0 && c->out_count >= 0, "late graph");
}

/* Unit 0 = the input, its distinct (a keyed node, so it can be sharded)
 * and the window; unit 1 = the rest (the COUNT per window, both
 * outputs), on rank 1: its inputs are unit 0's streams, whose
 * waterline only a publication can bring (a unit fed by an input node
 * computes that input's own). Sharded: unit 0 in two replicas, on ranks
 * 0 and 1. */
static struct sc_placement *
late_place(const struct late_graph *c, const char *strategy)
{
	size_t n = sc_graph_node_count(c->g);
	int32_t *map = calloc(n, sizeof(*map));
	uint32_t ranks[3] = {0, 1, 1};
	struct sc_placement *p = NULL;
	bool sharded = !strcmp(strategy, "sharded");

	CHECK(map && (sharded || !strcmp(strategy, "ranks")),
	      "strategy '%s' (ranks or sharded)", strategy);
	for (size_t i = 0; i < n; i++)
		map[i] =
		    (int)i == c->in || (int)i == c->win || (int)i == c->dist
			? 0
			: 1;
	CHECK(sc_placement_manual(c->g, map, n, 2, &p) == 0, "manual");
	if (sharded)
		CHECK(sc_placement_set_shards(p, 0, 2) == 0, "shards");
	CHECK(sc_placement_set_ranks(p, 2, ranks, sharded ? 3 : 2) == 0,
	      "ranks");
	free(map);
	return p;
}

/* Submission i: ROWS rows (t, k), t rising by ROWS a submission, each
 * row up to LATE - 1 behind the submission's top (within the lateness). */
static struct sc_batch *
late_batch(uint64_t *rng, uint64_t i, int64_t *max_t)
{
	uint64_t rows[2 * ROWS];
	struct sc_batch *b = NULL;

	for (size_t r = 0; r < ROWS; r++) {
		int64_t t = (int64_t)(i * ROWS + r) -
			    (int64_t)(sc_splitmix_next(rng) % (LATE - 1));

		if (t > *max_t)
			*max_t = t;
		rows[2 * r] = sc_enc_i64(t);
		rows[2 * r + 1] =
		    sc_enc_i64((int64_t)(sc_splitmix_next(rng) % 5));
	}
	CHECK(sc_batch_from_records(2, rows, NULL, ROWS, &b) == 0, "batch");
	return b;
}

static void
late_one(const char *strategy, uint32_t workers, uint64_t seed)
{
	struct sc_runtime_opts o = {.workers = workers};
	struct sc_mpi_link_opts lo;
	struct sc_mpi_runtime *m = NULL;
	struct sc_circuit *ref = NULL;
	const struct sc_circuit *cons;
	struct sc_node_state st = {0};
	struct late_graph c;
	struct sc_placement *p;
	struct sc_runtime *rt;
	uint64_t rng = seed, i = 0;
	int64_t max_t = INT64_MIN, before_last = INT64_MIN, wl = 0;

	sc_mpi_link_opts_default(&lo);
	lo.dead_ns = 20000000000ull;
	late_graph(&c);
	p = late_place(&c, strategy);
	CHECK(sc_mpi_runtime_create(c.g, p, &o, &lo, &m) == 0, "create");
	rt = sc_mpi_runtime_rt(m);
	if (me == 0) {
		CHECK(sc_circuit_create(c.g, &ref) == 0, "reference");
		CHECK(sc_circuit_set_cleanup(ref, false) == 0, "no cleanup");
	}
	/* Rounds that end at idle, so every waterline message of a round
	 * has crossed before the next; one submission more at the end,
	 * whose step raises the consumer to the last round's waterline. */
	for (int round = 0; round <= ROUNDS; round++) {
		for (int k = 0; me == 0 && k < (round < ROUNDS ? PER : 1);
		     k++, i++) {
			struct sc_batch *b;

			if (round == ROUNDS && k == 0)
				before_last = max_t;
			b = late_batch(&rng, i, &max_t);
			CHECK(sc_runtime_submit_wait(rt, c.in, b,
						     20000000000ull) == 0,
			      "submit %" PRIu64, i);
			CHECK(sc_circuit_feed(ref, c.in, b) == 0 &&
				  sc_circuit_step(ref) == 0,
			      "reference step");
			sc_batch_release(b);
		}
		CHECK(sc_runtime_wait_idle(rt, 30000000000ull, NULL) == 0,
		      "wait_idle, round %d", round);
	}
	for (int k = 0; k < 2; k++) {
		int out = k ? c.out_dist : c.out_count;
		struct sc_batch *got = NULL, *want = NULL;

		CHECK(sc_runtime_integral(rt, out, &got) == 0, "integral");
		if (me == 0) {
			CHECK(sc_circuit_integral(ref, out, &want) == 0, "ref");
			CHECK(sc_batch_equal(got, want),
			      "output %s: %zu rows across ranks with cleanup, "
			      "%zu in the single circuit without",
			      k ? "seen" : "count", sc_batch_count(got),
			      sc_batch_count(want));
			sc_batch_release(want);
		}
		sc_batch_release(got);
	}
	if (me == 1) {
		/* The consumer: the last instance, rank 1's. */
		cons = sc_runtime_unit_circuit(rt, sc_runtime_units(rt) - 1);
		CHECK(cons != NULL, "the consumer is not on rank 1");
		CHECK(sc_circuit_waterline(cons, c.win, 0, &wl) == 0,
		      "the consumer's waterline");
		CHECK(sc_circuit_node_state(cons, c.count, &st) == 0, "state");
	}
	/* Rank 0 knows the rows, rank 1 the consumer: swap what each needs. */
	CHECK(MPI_Bcast(&before_last, 1, MPI_INT64_T, 0, MPI_COMM_WORLD) ==
		      MPI_SUCCESS &&
		  MPI_Bcast(&wl, 1, MPI_INT64_T, 1, MPI_COMM_WORLD) ==
		      MPI_SUCCESS,
	      "bcast");
	/* A replica's largest t may trail the largest of all by a few rows
	 * (each sees its share): ROWS of slack. */
	CHECK(wl != SC_WATERLINE_NONE && wl >= before_last - LATE - ROWS,
	      "the consumer's waterline on t is %" PRId64 ", not at least "
	      "%" PRId64 " (max t %" PRId64 " before the last submission, "
	      "less %d and %d): no waterline came across the remote edge",
	      wl, before_last - LATE - ROWS, before_last, LATE, ROWS);
	CHECK(me != 1 || st.rows * 4 < (size_t)(ROUNDS * PER * ROWS),
	      "the consumer's COUNT keeps %zu rows of %d fed", st.rows,
	      ROUNDS * PER * ROWS);
	if (me == 1)
		printf("OK lateness %s: consumer waterline %" PRId64
		       " (max t %" PRId64 "), COUNT keeps %zu of %d rows\n",
		       strategy, wl, before_last, st.rows, ROUNDS * PER * ROWS);
	sc_mpi_runtime_destroy(m);
	sc_circuit_destroy(ref);
	sc_placement_destroy(p);
	CHECK(sc_graph_destroy(c.g) == 0, "graph");
}

static void
lateness(const char *argv0, const char *strategy, uint32_t workers,
	 const char *seeds)
{
	uint64_t lo, hi;

	CHECK(nranks == 2, "lateness runs on 2 ranks");
	seed_range(seeds, &lo, &hi);
	for (uint64_t s = lo; s <= hi; s++) {
		(void)snprintf(replay, sizeof(replay),
			       "mpirun --oversubscribe --allow-run-as-root -np "
			       "2 %s lateness %s %u %" PRIu64 ":%" PRIu64,
			       argv0, strategy, workers, s, s);
		late_one(strategy, workers, s);
	}
	replay[0] = 0;
}

int
main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	int level = 0;

	alarm(240);
	if (MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &level) !=
	    MPI_SUCCESS)
		return 1;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	CHECK(level >= MPI_THREAD_SERIALIZED, "thread level %d", level);
	stagger = !strcmp(what, "relink");
	if ((!strcmp(what, "settle") || stagger) && argc == 6)
		settle(argv[0], argv[2], argv[3], (uint32_t)atoi(argv[4]),
		       argv[5]);
	else if (!strcmp(what, "backpressure") && argc == 4)
		backpressure(argv[0], (uint32_t)atoi(argv[2]),
			     strtoull(argv[3], NULL, 10));
	else if (!strcmp(what, "kill") && argc == 3)
		kill_one((uint32_t)atoi(argv[2]));
	else if (!strcmp(what, "lateness") && argc == 5)
		lateness(argv[0], argv[2], (uint32_t)atoi(argv[3]), argv[4]);
	else
		CHECK(0,
		      "usage: settle|relink WORKLOAD STRATEGY WORKERS SEEDS | "
		      "backpressure WORKERS SEEDS | kill WORKERS | lateness "
		      "STRATEGY WORKERS SEEDS");
	MPI_Finalize();
	return 0;
}
