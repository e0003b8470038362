/*
 * bench_mpi_runtime.c - circuits through the runtime across two MPI ranks
 * (units/mpi_runtime.h) against the same circuits in one process, in one
 * run: `mpirun -np 2 build/bench/bench_mpi_runtime [--quick]` (rank 0
 * prints). Built only with MPI (sc_mpi).
 *
 * Same placement, two ways, alternating repetitions:
 *   2 ranks     the units spread over ranks 0 and 1, 1 worker each (and
 *               each rank's link thread);
 *   1 rank      every unit in rank 0's process, a plain sc_runtime of 2
 *               workers, while rank 1 sleeps (it polls an MPI_Ibarrier
 *               with naps, so it takes no core): the in-process edges.
 * Both run 2 workers in all, so neither side is oversubscribed by its
 * own workers on a machine of 2 cores.
 *
 *  pipeline R-row  input -> filter -> filter -> filter -> output stream,
 *                  4 units, one per stage (the last holds the output);
 *                  on 2 ranks stages 0-1 on rank 0 and 2-3 on rank 1: one
 *                  remote edge, between stages 1 and 2. The host submits
 *                  batches of R = 1 or 256 rows (one u64 column).
 *  agg R-row       the sharded aggregate of bench_shard (rows (key,
 *                  value), SUM per key, keys from a domain of 1M): one
 *                  unit of input, aggregate and output, 2 replicas; on 2
 *                  ranks replica i on rank i (the host on rank 0 routes
 *                  each batch by key, so rank 1's half crosses the host
 *                  edge as frames).
 * Items/s are rows submitted over the time from the first submit to idle
 * (sc_runtime_wait_idle), higher is better. Bytes per row on the wire:
 * rank 0's link bytes sent over the rows they carried (lower is better,
 * against a record's 16 bytes in memory), with the frames' mean rows
 * (a host or a unit coalesces rows while an edge is full, so a 1-row
 * submission need not be a 1-row frame).
 *
 *  latency         input -> filter -> filter -> output stream in 3 units,
 *                  unit 1 on rank 1 and units 0 and 2 on rank 0: a row
 *                  submitted on rank 0 crosses to rank 1 and back; the
 *                  host waits (yielding) for the last unit's delta
 *                  callback. Half the round trip is a sample of "one
 *                  frame across one remote edge" (each half also holds a
 *                  unit's turn and a worker's wake-up), p50 and p99 in
 *                  us, lower is better; beside it the same placement in
 *                  one process (2 in-process edges), and Open MPI's own
 *                  ping-pong of the same 1-row frame's bytes (MPI_Send /
 *                  MPI_Recv on MPI_COMM_WORLD, half the round trip: the
 *                  limit), measured between the runtimes' lives (while a
 *                  runtime lives the program makes no MPI call).
 * Each figure is the median of 5 repetitions (3 with --quick). The load
 * average at the start is printed first: on a shared machine the figures
 * move with it.
 */
#include <mpi.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/harness.h"
#include "bench/mpi_pingpong.h"
#include "operators/aggregate.h"
#include "operators/batch.h"
#include "operators/graph.h"
#include "units/mpi_runtime.h"
#include "units/placement.h"
#include "units/runtime.h"
#include "units/wire.h"

#define REPS_MAX 5
#define POOL	 64 /* distinct batches a run cycles through */

static int me;

/* --- the circuits ----------------------------------------------------- */

static int
keep_all(void *ctx, const uint64_t *row, bool *keep)
{
	(void)ctx;
	(void)row;
	*keep = true;
	return 0;
}

struct work {
	struct sc_graph *g;
	int in;
	int last; /* the node whose deltas the latency waits on */
	struct sc_placement *one; /* every unit on rank 0 */
	struct sc_placement *two; /* over 2 ranks */
	struct sc_batch *pool[POOL];
	size_t rows; /* rows per batch */
};

static void
placements(struct work *w, const int32_t *unit_of, size_t n, uint32_t units,
	   uint32_t shards, const uint32_t *ranks)
{
	size_t reps;

	if (sc_placement_manual(w->g, unit_of, n, units, &w->one) ||
	    sc_placement_manual(w->g, unit_of, n, units, &w->two) ||
	    (shards > 1 && (sc_placement_set_shards(w->one, 0, shards) ||
			    sc_placement_set_shards(w->two, 0, shards))))
		sc_bench_fail("placement");
	reps = sc_placement_replicas(w->two);
	if (sc_placement_set_ranks(w->two, 2, ranks, reps))
		sc_bench_fail("placement ranks");
}

/* A chain of `stages` units: input, then filters, the last one with an
 * output stream; units on ranks[]. */
static void
chain_make(struct work *w, uint32_t stages, const uint32_t *ranks, size_t rows)
{
	enum sc_type t = SC_TYPE_U64;
	int32_t unit_of[8];
	struct sc_schema s;
	int node;
	size_t n = 0;

	memset(w, 0, sizeof(*w));
	if (sc_schema_init(&s, 1, &t, NULL) || sc_graph_create(&w->g))
		sc_bench_fail("chain graph");
	node = w->in = sc_graph_input(w->g, "in", &s);
	unit_of[n++] = 0;
	for (uint32_t i = 1; i < stages; i++) {
		node = sc_graph_filter(w->g, node, keep_all, NULL);
		unit_of[n++] = (int32_t)i;
	}
	w->last = node;
	if (sc_graph_output_stream(w->g, "out", node) < 0 || node < 0)
		sc_bench_fail("chain graph");
	unit_of[n++] = (int32_t)stages - 1;
	placements(w, unit_of, n, stages, 1, ranks);
	w->rows = rows;
	for (size_t b = 0; b < POOL; b++) {
		uint64_t keys[256];

		for (size_t i = 0; i < rows; i++)
			keys[i] = b * 256 + i;
		if (sc_batch_from_records(1, keys, NULL, rows, &w->pool[b]))
			sc_bench_fail("chain batch");
	}
}

static void
agg_make(struct work *w, size_t rows)
{
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_aggregate_spec sp = {.ncols = 2,
				       .k = 1,
				       .kind = SC_AGG_SUM,
				       .col = 1,
				       .col_type = SC_TYPE_I64};
	static const int32_t unit_of[3] = {0, 0, 0};
	static const uint32_t ranks[2] = {0, 1};
	uint64_t kv[2 * 256], x = 12345;
	struct sc_schema s;

	memset(w, 0, sizeof(*w));
	if (sc_schema_init(&s, 2, t, NULL) || sc_graph_create(&w->g))
		sc_bench_fail("agg graph");
	w->in = sc_graph_input(w->g, "kv", &s);
	w->last = sc_graph_aggregate(w->g, w->in, &sp);
	if (sc_graph_output(w->g, "sums", w->last) < 0)
		sc_bench_fail("agg graph");
	placements(w, unit_of, 3, 1, 2, ranks);
	w->rows = rows;
	for (size_t b = 0; b < POOL; b++) {
		for (size_t r = 0; r < rows; r++) {
			uint64_t v = sc_splitmix_next(&x);

			kv[2 * r] = sc_enc_i64((int64_t)(v % 1000000));
			kv[2 * r + 1] = sc_enc_i64((int64_t)(v >> 54));
		}
		if (sc_batch_from_records(2, kv, NULL, rows, &w->pool[b]))
			sc_bench_fail("agg batch");
	}
}

static void
work_free(struct work *w)
{
	for (size_t b = 0; b < POOL; b++)
		sc_batch_release(w->pool[b]);
	sc_placement_destroy(w->one);
	sc_placement_destroy(w->two);
	sc_graph_destroy(w->g);
}

/* --- the runs ----------------------------------------------------------- */

/* Rank 1 while rank 0 runs alone: wait at a barrier without a core. */
static void
nap_barrier(void)
{
	struct timespec ts = {0, 200000};
	MPI_Request r;
	int done = 0;

	MPI_Ibarrier(MPI_COMM_WORLD, &r);
	while (!done) {
		MPI_Test(&r, &done, MPI_STATUS_IGNORE);
		if (!done)
			(void)nanosleep(&ts, NULL);
	}
}

static const struct sc_runtime_opts one_opts = {.workers = 2};
static const struct sc_runtime_opts two_opts = {.workers = 1};

/* Link options: a benchmark's ranks may be busy a while between two
 * passes of a link thread on a loaded host. */
static void
link_opts(struct sc_mpi_link_opts *lo)
{
	sc_mpi_link_opts_default(lo);
	lo->dead_ns = 60ULL * 1000000000ULL;
}

/* Rank 0: submit `n` batches of the pool, then wait for idle. */
static void
feed(struct sc_runtime *rt, struct work *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (sc_runtime_submit_wait(rt, w->in, w->pool[i % POOL], 0))
			sc_bench_fail("submit");
}

/* Rows per second through the in-process runtime (rank 0; rank 1 naps). */
static double
items_one(struct work *w, size_t n)
{
	struct sc_runtime *rt = NULL;
	uint64_t t0;
	double s = 1; /* rank 1 reports nothing */

	if (me == 0) {
		if (sc_runtime_create(w->g, w->one, &one_opts, &rt))
			sc_bench_fail("runtime");
		t0 = sc_bench_now_ns();
		feed(rt, w, n);
		if (sc_runtime_wait_idle(rt, 0, NULL))
			sc_bench_fail("wait_idle");
		s = (double)(sc_bench_now_ns() - t0) / 1e9;
		sc_runtime_destroy(rt);
	}
	nap_barrier();
	return (double)(n * w->rows) / s;
}

/* The same across the ranks; *bytes, *frames: what rank 0's link sent
 * (data frames only). */
static double
items_two(struct work *w, size_t n, double *bytes, double *frames)
{
	struct sc_mpi_link_opts lo;
	struct sc_mpi_runtime *m = NULL;
	struct sc_mpi_link_stats st;
	struct sc_runtime *rt;
	uint64_t t0;
	double s;

	link_opts(&lo);
	if (sc_mpi_runtime_create(w->g, w->two, &two_opts, &lo, &m))
		sc_bench_fail("mpi runtime");
	rt = sc_mpi_runtime_rt(m);
	t0 = sc_bench_now_ns();
	if (me == 0)
		feed(rt, w, n);
	if (sc_runtime_wait_idle(rt, 0, NULL))
		sc_bench_fail("wait_idle across ranks");
	s = (double)(sc_bench_now_ns() - t0) / 1e9;
	sc_mpi_runtime_stats(m, &st);
	sc_mpi_runtime_destroy(m);
	*bytes = (double)st.bytes_sent;
	*frames = (double)st.frames_sent;
	return (double)(n * w->rows) / s;
}

static void
bench_items(const char *name, struct work *w, size_t n, int reps,
	    size_t row_bytes)
{
	double one[REPS_MAX], two[REPS_MAX], bytes[REPS_MAX], frames[REPS_MAX];
	char kase[96];

	for (int r = 0; r < reps; r++) {
		one[r] = items_one(w, n) / 1e6;
		two[r] = items_two(w, n, &bytes[r], &frames[r]) / 1e6;
	}
	if (me != 0)
		return;
	(void)snprintf(kase, sizeof(kase), "%s %zu-row, 2 ranks x 1 worker",
		       name, w->rows);
	sc_bench_emit("mpi_runtime", kase, "Mitems/s",
		      sc_bench_median(two, (size_t)reps),
		      "1 rank x 2 workers (in-process edges)",
		      sc_bench_median(one, (size_t)reps));
	{
		/* Rows on the wire from rank 0: the bytes less the frames'
		 * headers (48 + ncols each), over a row's bytes. */
		double b = sc_bench_median(bytes, (size_t)reps);
		double f = sc_bench_median(frames, (size_t)reps);
		double hdr = 48.0 + (double)row_bytes / 8.0 - 1.0;
		double wrows = f > 0 ? (b - f * hdr) / (double)row_bytes : 0;

		(void)snprintf(kase, sizeof(kase), "%s %zu-row, wire", name,
			       w->rows);
		sc_bench_emit("mpi_runtime", kase, "bytes/row",
			      wrows > 0 ? b / wrows : 0, "record_in_memory",
			      (double)row_bytes);
		(void)snprintf(kase, sizeof(kase), "%s %zu-row, rows/frame",
			       name, w->rows);
		sc_bench_emit("mpi_runtime", kase, "rows/frame",
			      f > 0 ? wrows / f : 0, "submitted",
			      (double)w->rows);
	}
}

/* --- latency -------------------------------------------------------------- */

static _Atomic uint64_t seen; /* deltas of the last unit */

static int
on_last(void *ctx, int node, const struct sc_batch *delta)
{
	(void)ctx;
	(void)node;
	(void)delta;
	atomic_fetch_add_explicit(&seen, 1, memory_order_release);
	return 0;
}

/* Rank 0: n round trips, half of each into ns[]. */
static void
round_trips(struct sc_runtime *rt, struct work *w, size_t n, uint64_t *ns)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t want = atomic_load(&seen) + 1;
		uint64_t t0 = sc_bench_now_ns();

		if (sc_runtime_submit(rt, w->in, w->pool[i % POOL]))
			sc_bench_fail("submit");
		while (atomic_load_explicit(&seen, memory_order_acquire) < want)
			(void)sched_yield();
		ns[i] = (sc_bench_now_ns() - t0) / 2;
	}
}

static void
lat_one(struct work *w, size_t n, uint64_t *ns)
{
	struct sc_runtime *rt = NULL;

	if (me == 0) {
		if (sc_runtime_create(w->g, w->one, &one_opts, &rt) ||
		    sc_runtime_on_delta(rt, w->last, on_last, NULL))
			sc_bench_fail("runtime");
		round_trips(rt, w, n, ns);
		if (sc_runtime_wait_idle(rt, 0, NULL))
			sc_bench_fail("wait_idle");
		sc_runtime_destroy(rt);
	}
	nap_barrier();
}

static void
lat_two(struct work *w, size_t n, uint64_t *ns)
{
	struct sc_mpi_link_opts lo;
	struct sc_mpi_runtime *m = NULL;
	struct sc_runtime *rt;

	link_opts(&lo);
	if (sc_mpi_runtime_create(w->g, w->two, &two_opts, &lo, &m))
		sc_bench_fail("mpi runtime");
	rt = sc_mpi_runtime_rt(m);
	if (me == 0) {
		if (sc_runtime_on_delta(rt, w->last, on_last, NULL))
			sc_bench_fail("on_delta");
		round_trips(rt, w, n, ns);
	}
	if (sc_runtime_wait_idle(rt, 0, NULL))
		sc_bench_fail("wait_idle across ranks");
	sc_mpi_runtime_destroy(m);
}

static void
bench_latency(int reps, size_t n)
{
	static const uint32_t ranks[3] = {0, 1, 0};
	double t50[REPS_MAX], t99[REPS_MAX], o50[REPS_MAX], o99[REPS_MAX];
	double m50[REPS_MAX], m99[REPS_MAX];
	uint64_t *ns = calloc(n, sizeof(*ns));
	enum sc_type t = SC_TYPE_U64;
	struct sc_wire_buf one;
	struct sc_schema s;
	struct work w;

	if (!ns || sc_schema_init(&s, 1, &t, NULL))
		sc_bench_fail("latency");
	chain_make(&w, 3, ranks, 1);
	sc_wire_buf_init(&one);
	if (sc_wire_encode(w.pool[0], &s, NULL, 0, 1, 0, &one))
		sc_bench_fail("encode");
	for (int r = 0; r < reps; r++) {
		lat_two(&w, n, ns);
		if (me == 0)
			sc_bench_percentiles_us(ns, n, &t50[r], &t99[r]);
		lat_one(&w, n, ns);
		if (me == 0)
			sc_bench_percentiles_us(ns, n, &o50[r], &o99[r]);
		MPI_Barrier(MPI_COMM_WORLD);
		sc_bench_mpi_pingpong(n, one.len, ns);
		sc_bench_percentiles_us(ns, n, &m50[r], &m99[r]);
	}
	if (me == 0) {
		sc_bench_emit(
		    "mpi_runtime", "1-row frame, one remote edge, p50", "us",
		    sc_bench_median(t50, (size_t)reps), "mpi_pingpong_p50",
		    sc_bench_median(m50, (size_t)reps));
		sc_bench_emit(
		    "mpi_runtime", "1-row frame, one remote edge, p99", "us",
		    sc_bench_median(t99, (size_t)reps), "mpi_pingpong_p99",
		    sc_bench_median(m99, (size_t)reps));
		sc_bench_emit("mpi_runtime",
			      "1-row frame, one remote edge vs in-process, p50",
			      "us", sc_bench_median(t50, (size_t)reps),
			      "in-process edge p50",
			      sc_bench_median(o50, (size_t)reps));
		sc_bench_emit("mpi_runtime",
			      "1-row frame, one remote edge vs in-process, p99",
			      "us", sc_bench_median(t99, (size_t)reps),
			      "in-process edge p99",
			      sc_bench_median(o99, (size_t)reps));
	}
	sc_wire_buf_fini(&one);
	work_free(&w);
	free(ns);
}

/* --- main ----------------------------------------------------------------- */

static void
print_load(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "r");

	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		(void)fclose(f);
	}
	sc_bench_emit("mpi_runtime", "load average (1 min) at start", "load", l,
		      NULL, 0);
}

int
main(int argc, char **argv)
{
	static const uint32_t pipe_ranks[4] = {0, 0, 1, 1};
	bool quick = sc_bench_init(argc, argv);
	int reps = quick ? 3 : REPS_MAX, level = 0, size = 0;
	struct work w;

	if (MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &level) !=
	    MPI_SUCCESS)
		return 1;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2 || level < MPI_THREAD_SERIALIZED) {
		(void)fprintf(stderr, "bench_mpi_runtime: run it with mpirun "
				      "-np 2 (and MPI_THREAD_SERIALIZED)\n");
		MPI_Finalize();
		return 2;
	}
	if (me == 0)
		print_load();
	chain_make(&w, 4, pipe_ranks, 1);
	bench_items("pipeline", &w, quick ? 4000 : 200000, reps, 16);
	work_free(&w);
	chain_make(&w, 4, pipe_ranks, 256);
	bench_items("pipeline", &w, quick ? 400 : 20000, reps, 16);
	work_free(&w);
	agg_make(&w, 1);
	bench_items("agg x2", &w, quick ? 4000 : 100000, reps, 24);
	work_free(&w);
	agg_make(&w, 256);
	bench_items("agg x2", &w, quick ? 400 : 8000, reps, 24);
	work_free(&w);
	bench_latency(reps, quick ? 300 : 2000);
	MPI_Finalize();
	return 0;
}
