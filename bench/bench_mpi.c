/*
 * bench_mpi.c - a remote edge (units/mpi_link.h) against MPI itself, on
 * two ranks: `mpirun -np 2 build/bench/bench_mpi [--quick] [latency |
 * throughput]` (rank 0 prints; a word runs only that part). Built only
 * with MPI (sc_mpi).
 *
 * 1. Latency of one frame across the link, one way: a ping-pong of a
 *    1-row frame, edge 0 from rank 0 to 1 and edge 1 back, each leg
 *    encoded (sc_wire_encode), sent, progressed, received and decoded;
 *    half of each round trip is a sample, p50 and p99 (us, lower is
 *    better). Baselines, same run: MPI_Send/MPI_Recv ping-pong of the
 *    same bytes, the limit a remote edge can reach; the link's own MPI
 *    calls without the link (MPI_Isend, MPI_Improbe polled, MPI_Imrecv,
 *    MPI_Test); and the same with a receive posted ahead instead of the
 *    probe (MPI_Irecv of any source and tag into a slot, MPI_Test).
 * 2. Throughput: rank 0 streams frames of 1 and of 256 rows on edge 0
 *    (credits 8), rank 1 receives and decodes each; Mrows/s from the
 *    first send to rank 1's acknowledgement of the last (higher is
 *    better). Baseline, same run: the same encoded bytes streamed with
 *    MPI_Isend/MPI_Irecv, a window of 8, no encode or decode.
 * 3. Bytes per row on the wire for both frame sizes (lower is better),
 *    against the 16 bytes of a record in memory (a u64 word and its
 *    weight).
 * Each figure is the median of 5 repetitions (3 with --quick). The
 * link's credits are its default; SC_BENCH_CREDITS=N (passed to the ranks
 * with mpirun -x) tries another window.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/harness.h"
#include "bench/mpi_pingpong.h"
#include "operators/batch.h"
#include "units/mpi_link.h"
#include "units/wire.h"

#define REPS_MAX 5

static int me;
static struct sc_schema schema1;

/* Encode a frame of `rows` rows (1 or 256) for `edge`: the batches are
 * made once, so what is timed is the edge (encode, send, receive,
 * decode), not the making of a batch. */
static void
frame_of(uint32_t edge, size_t rows, struct sc_wire_buf *buf)
{
	static struct sc_batch *made[2];
	struct sc_batch **b = &made[rows > 1];

	if (!*b) {
		uint64_t w[256];

		for (size_t i = 0; i < rows; i++)
			w[i] = i;
		if (sc_batch_from_records(1, w, NULL, rows, b) != 0)
			sc_bench_fail("batch");
	}
	if (sc_wire_encode(*b, &schema1, NULL, edge, 1, 0, buf) != 0)
		sc_bench_fail("encode");
}

/* Wait (progressing) for a frame of `edge`, and decode it. */
static void
take(struct sc_mpi_link *l, uint32_t edge, struct sc_wire_buf *got,
     struct sc_wire_rx *rx)
{
	struct sc_batch *b;
	int rc;

	while ((rc = sc_mpi_link_recv(l, edge, got)) == SC_EEMPTY)
		if (sc_mpi_link_progress(l) != 0)
			sc_bench_fail("progress");
	if (rc != 0 || sc_wire_decode(got->data, got->len, rx, NULL, &b) != 0)
		sc_bench_fail("recv");
	sc_bench_keep(b);
	sc_batch_release(b);
}

static void
give(struct sc_mpi_link *l, uint32_t edge, size_t rows, struct sc_wire_buf *buf)
{
	int rc;

	frame_of(edge, rows, buf);
	while ((rc = sc_mpi_link_send(l, edge, buf)) == SC_EFULL)
		if (sc_mpi_link_progress(l) != 0)
			sc_bench_fail("progress");
	if (rc != 0 || sc_mpi_link_progress(l) != 0)
		sc_bench_fail("send");
}

static void
latency_link(struct sc_mpi_link *l, size_t n, uint64_t *ns)
{
	struct sc_wire_buf buf, got;
	struct sc_wire_rx rx;

	sc_wire_buf_init(&buf);
	sc_wire_buf_init(&got);
	(void)sc_wire_rx_init(&rx, NULL);
	for (size_t i = 0; i < n; i++) {
		uint64_t t0 = sc_bench_now_ns();

		if (me == 0) {
			give(l, 0, 1, &buf);
			take(l, 1, &got, &rx);
		} else {
			take(l, 0, &got, &rx);
			give(l, 1, 1, &buf);
		}
		ns[i] = (sc_bench_now_ns() - t0) / 2;
	}
	sc_wire_rx_fini(&rx);
	sc_wire_buf_fini(&buf);
	sc_wire_buf_fini(&got);
}

/* The link's own MPI calls without the link: MPI_Isend, then polling
 * MPI_Improbe until the message is there, MPI_Imrecv into a new buffer
 * and MPI_Test to completion. Between the link and MPI_Send/MPI_Recv:
 * what its mechanism costs before any code of ours. */
// NOLINTBEGIN(clang-analyzer-optin.mpi.MPI-Checker)
static void
nb_leg(const uint8_t *msg, int bytes, int to)
{
	MPI_Request r;
	int done = 0;

	MPI_Isend(msg, bytes, MPI_BYTE, to, 9, MPI_COMM_WORLD, &r);
	while (!done)
		MPI_Test(&r, &done, MPI_STATUS_IGNORE);
}

static void
nb_take(int from)
{
	MPI_Message m;
	MPI_Status st;
	MPI_Request r;
	int flag = 0, count = 0, done = 0;
	uint8_t *buf;

	while (!flag)
		MPI_Improbe(from, 9, MPI_COMM_WORLD, &flag, &m, &st);
	MPI_Get_count(&st, MPI_BYTE, &count);
	buf = malloc((size_t)count + 1);
	if (!buf)
		sc_bench_fail("malloc");
	MPI_Imrecv(buf, count, MPI_BYTE, &m, &r);
	while (!done)
		MPI_Test(&r, &done, MPI_STATUS_IGNORE);
	free(buf);
}

/* The same with a receive posted ahead (MPI_ANY_SOURCE, MPI_ANY_TAG, a
 * slot of 4 KiB), polled with MPI_Test, its bytes copied out and the
 * slot posted again: what a link with receives posted ahead would pay
 * instead of MPI_Improbe and MPI_Imrecv. */
static uint8_t slot[4096];
static MPI_Request slot_req;

static void
posted_take(void)
{
	MPI_Status st;
	int done = 0, count = 0;
	uint8_t *buf;

	while (!done)
		MPI_Test(&slot_req, &done, &st);
	MPI_Get_count(&st, MPI_BYTE, &count);
	buf = malloc((size_t)count + 1);
	if (!buf)
		sc_bench_fail("malloc");
	memcpy(buf, slot, (size_t)count);
	sc_bench_keep(buf);
	free(buf);
	MPI_Irecv(slot, (int)sizeof(slot), MPI_BYTE, MPI_ANY_SOURCE,
		  MPI_ANY_TAG, MPI_COMM_WORLD, &slot_req);
}

static void
latency_mpi_posted(size_t n, size_t bytes, uint64_t *ns)
{
	uint8_t msg[512] = {0};

	MPI_Irecv(slot, (int)sizeof(slot), MPI_BYTE, MPI_ANY_SOURCE,
		  MPI_ANY_TAG, MPI_COMM_WORLD, &slot_req);
	MPI_Barrier(MPI_COMM_WORLD);
	for (size_t i = 0; i < n; i++) {
		uint64_t t0 = sc_bench_now_ns();

		if (me == 0) {
			nb_leg(msg, (int)bytes, 1);
			posted_take();
		} else {
			posted_take();
			nb_leg(msg, (int)bytes, 0);
		}
		ns[i] = (sc_bench_now_ns() - t0) / 2;
	}
	MPI_Cancel(&slot_req);
	MPI_Wait(&slot_req, MPI_STATUS_IGNORE);
}

// NOLINTEND(clang-analyzer-optin.mpi.MPI-Checker)

static void
latency_mpi_nb(size_t n, size_t bytes, uint64_t *ns)
{
	uint8_t msg[512] = {0};

	for (size_t i = 0; i < n; i++) {
		uint64_t t0 = sc_bench_now_ns();

		if (me == 0) {
			nb_leg(msg, (int)bytes, 1);
			nb_take(1);
		} else {
			nb_take(0);
			nb_leg(msg, (int)bytes, 0);
		}
		ns[i] = (sc_bench_now_ns() - t0) / 2;
	}
}

/* Rows per second of `frames` frames of `rows` rows on edge 0, rank 0
 * to 1, until rank 1's acknowledgement (edge 1). */
static double
stream_link(struct sc_mpi_link *l, size_t frames, size_t rows)
{
	struct sc_wire_buf buf, got;
	struct sc_wire_rx rx;
	uint64_t t0;

	sc_wire_buf_init(&buf);
	sc_wire_buf_init(&got);
	(void)sc_wire_rx_init(&rx, NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = sc_bench_now_ns();
	for (size_t i = 0; i < frames; i++)
		if (me == 0)
			give(l, 0, rows, &buf);
		else
			take(l, 0, &got, &rx);
	if (me == 0)
		take(l, 1, &got, &rx);
	else
		give(l, 1, 1, &buf);
	t0 = sc_bench_now_ns() - t0;
	sc_wire_rx_fini(&rx);
	sc_wire_buf_fini(&buf);
	sc_wire_buf_fini(&got);
	return (double)(frames * rows) / ((double)t0 / 1e9);
}

/* The same bytes with MPI alone: a window of 8 Isends / Irecvs. */
static double
stream_mpi(size_t frames, size_t rows, const struct sc_wire_buf *frame)
{
	enum { WIN = 8 };
	MPI_Request req[WIN];
	uint8_t *rx = malloc(frame->len * WIN);
	int ack = 0, n = (int)frame->len;
	uint64_t t0;

	if (!rx)
		sc_bench_fail("malloc");
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = sc_bench_now_ns();
	for (size_t i = 0; i < frames; i += WIN) {
		int k = (int)(frames - i < WIN ? frames - i : WIN);

		for (int j = 0; j < k; j++)
			if (me == 0)
				MPI_Isend(frame->data, n, MPI_BYTE, 1, 8,
					  MPI_COMM_WORLD, &req[j]);
			else
				MPI_Irecv(rx + (size_t)j * frame->len, n,
					  MPI_BYTE, 0, 8, MPI_COMM_WORLD,
					  &req[j]);
		MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
	}
	if (me == 0)
		MPI_Recv(&ack, 1, MPI_INT, 1, 7, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
	else
		MPI_Send(&ack, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
	t0 = sc_bench_now_ns() - t0;
	free(rx);
	return (double)(frames * rows) / ((double)t0 / 1e9);
}

static void
throughput(struct sc_mpi_link *l, int reps, size_t rows, size_t frames)
{
	double link[REPS_MAX], raw[REPS_MAX];
	struct sc_wire_buf frame;
	char kase[64];

	sc_wire_buf_init(&frame);
	frame_of(0, rows, &frame);
	for (int r = 0; r < reps; r++) {
		link[r] = stream_link(l, frames, rows) / 1e6;
		raw[r] = stream_mpi(frames, rows, &frame) / 1e6;
	}
	(void)snprintf(kase, sizeof(kase), "%zu-row frames, 2 ranks", rows);
	if (me == 0) {
		sc_bench_emit(
		    "mpi", kase, "Mrows/s", sc_bench_median(link, (size_t)reps),
		    "mpi_isend_same_bytes", sc_bench_median(raw, (size_t)reps));
		sc_bench_emit("mpi", kase, "bytes/row",
			      (double)frame.len / (double)rows,
			      "record_in_memory", 16.0);
	}
	sc_wire_buf_fini(&frame);
}

static void
latency(struct sc_mpi_link *l, int reps, size_t n)
{
	double l50[REPS_MAX], l99[REPS_MAX], m50[REPS_MAX], m99[REPS_MAX];
	double b50[REPS_MAX], b99[REPS_MAX], q50[REPS_MAX], q99[REPS_MAX];
	uint64_t *ns = malloc(n * sizeof(*ns));
	struct sc_wire_buf one;

	if (!ns)
		sc_bench_fail("malloc");
	sc_wire_buf_init(&one);
	frame_of(0, 1, &one);
	for (int r = 0; r < reps; r++) {
		MPI_Barrier(MPI_COMM_WORLD);
		latency_link(l, n, ns);
		sc_bench_percentiles_us(ns, n, &l50[r], &l99[r]);
		MPI_Barrier(MPI_COMM_WORLD);
		sc_bench_mpi_pingpong(n, one.len, ns);
		sc_bench_percentiles_us(ns, n, &m50[r], &m99[r]);
		MPI_Barrier(MPI_COMM_WORLD);
		latency_mpi_nb(n, one.len, ns);
		sc_bench_percentiles_us(ns, n, &b50[r], &b99[r]);
		MPI_Barrier(MPI_COMM_WORLD);
		latency_mpi_posted(n, one.len, ns);
		sc_bench_percentiles_us(ns, n, &q50[r], &q99[r]);
	}
	if (me == 0) {
		sc_bench_emit("mpi", "1-row frame one way p50", "us",
			      sc_bench_median(l50, (size_t)reps),
			      "mpi_pingpong_p50",
			      sc_bench_median(m50, (size_t)reps));
		sc_bench_emit("mpi", "1-row frame one way p99", "us",
			      sc_bench_median(l99, (size_t)reps),
			      "mpi_pingpong_p99",
			      sc_bench_median(m99, (size_t)reps));
		sc_bench_emit("mpi", "1-row frame one way p50, vs its calls",
			      "us", sc_bench_median(l50, (size_t)reps),
			      "mpi_isend_improbe_imrecv_p50",
			      sc_bench_median(b50, (size_t)reps));
		sc_bench_emit("mpi", "1-row frame one way p99, vs its calls",
			      "us", sc_bench_median(l99, (size_t)reps),
			      "mpi_isend_improbe_imrecv_p99",
			      sc_bench_median(b99, (size_t)reps));
		sc_bench_emit("mpi", "1-row frame one way p50, vs posted recvs",
			      "us", sc_bench_median(l50, (size_t)reps),
			      "mpi_isend_posted_irecv_p50",
			      sc_bench_median(q50, (size_t)reps));
		sc_bench_emit("mpi", "1-row frame one way p99, vs posted recvs",
			      "us", sc_bench_median(l99, (size_t)reps),
			      "mpi_isend_posted_irecv_p99",
			      sc_bench_median(q99, (size_t)reps));
	}
	sc_wire_buf_fini(&one);
	free(ns);
}

int
main(int argc, char **argv)
{
	enum sc_type t = SC_TYPE_U64;
	struct sc_mpi_link_opts o;
	struct sc_mpi_link *l;
	bool quick = sc_bench_init(argc, argv);
	int reps = quick ? 3 : REPS_MAX, level, size;
	const char *only = NULL;
	/* Read once, before any thread: MPI's come later. */
	const char *credits =
	    getenv("SC_BENCH_CREDITS"); // NOLINT(concurrency-mt-unsafe)

	if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &level) !=
	    MPI_SUCCESS)
		return 1;
	for (int i = 1; i < argc; i++)
		if (argv[i][0] != '-')
			only = argv[i];
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		(void)fprintf(stderr, "bench_mpi: run it with mpirun -np 2\n");
		MPI_Finalize();
		return 2;
	}
	if (sc_schema_init(&schema1, 1, &t, NULL) != 0)
		sc_bench_fail("schema");
	sc_mpi_link_opts_default(&o);
	/* A benchmark's ranks may be busy a while between progress calls. */
	o.dead_ns = 60ULL * 1000000000ULL;
	if (credits)
		o.credits = (uint32_t)strtoul(credits, NULL, 10);
	if (sc_mpi_link_create(&o, &l) != 0)
		sc_bench_fail("sc_mpi_link_create");
	if (sc_mpi_link_add_edge(l, 0, 0, 1) != 0 ||
	    sc_mpi_link_add_edge(l, 1, 1, 0) != 0)
		sc_bench_fail("add_edge");
	if (!only || !strcmp(only, "latency"))
		latency(l, reps, quick ? 500 : 5000);
	if (!only || !strcmp(only, "throughput")) {
		throughput(l, reps, 1, quick ? 20000 : 200000);
		throughput(l, reps, 256, quick ? 2000 : 20000);
	}
	sc_mpi_link_destroy(l);
	MPI_Finalize();
	return 0;
}
