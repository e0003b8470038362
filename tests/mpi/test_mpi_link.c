/*
 * test_mpi_link.c - remote edges (units/mpi_link.h) under mpirun: a plain
 * driver (Criterion forks each test, which MPI does not survive), one
 * scenario per argument, registered by tests/mpi/CMakeLists.txt:
 *
 *   order        every rank feeds the next through a ring of edges; each
 *                frame's rows say its number, and every frame arrives
 *                decoded, in order, numbered 1, 2, ... with no gap;
 *   backpressure one credit and an outbox of two: the producer meets
 *                SC_EFULL and credit waits, and loses nothing; (both)
 *                sc_mpi_link_room says beforehand what send will do;
 *   order_mixed, backpressure_mixed
 *                the same with frames of 1 to 256 rows mixed, on both
 *                sides of the link's 4 KiB receive slots (168 rows fit,
 *                169 do not): the large frames, announced in the slots
 *                and sent on the second communicator, keep their place
 *                among the small ones;
 *   idle         tokens hop around the ring with random local delays;
 *                quiet says idle only once every hop is done, and no frame
 *                arrives after it says so;
 *   kill         rank 1 kills itself mid-run; the others report it dead
 *                within the deadline, refuse to send to it, and end;
 *   gather_late  the last rank joins a gather 3 s late (alive, its
 *                heartbeats going): rank 0's gather, given 1 s, says
 *                SC_ETIMEDOUT naming the gather instead of waiting;
 *   relink       links made and destroyed one after another, rank 0
 *                destroying first while the others go on a while
 *                (heartbeats to it): each new link still carries every
 *                frame in order and goes idle. Open MPI gives a new
 *                communicator the id of a freed one, and a message sent
 *                to a rank after it freed it lands in the new one at its
 *                old sequence number, where it takes the place of a
 *                message of the new link (which is lost): destroy must
 *                not free before every peer has sent its last message.
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
#include <unistd.h>

#include "operators/base.h"
#include "operators/batch.h"
#include "units/mpi_link.h"
#include "units/wire.h"

static int me, nranks;

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			(void)fprintf(stderr, "rank %d: %s:%d: ", me,          \
				      __FILE__, __LINE__);                     \
			(void)fprintf(stderr, __VA_ARGS__);                    \
			(void)fprintf(stderr, " (%s)\n", sc_errmsg());         \
			_exit(1);                                              \
		}                                                              \
	} while (0)

static struct sc_schema schema2;

/* A frame of edge e whose rows are (n, 0..rows-1), weight n. */
static void
make_frame(uint32_t e, uint64_t n, size_t rows, struct sc_wire_buf *buf)
{
	uint64_t w[2 * 256];
	struct sc_batch *b;

	for (size_t i = 0; i < rows; i++) {
		w[2 * i] = n;
		w[2 * i + 1] = i;
	}
	CHECK(sc_batch_from_records(2, w, NULL, rows, &b) == 0, "batch");
	CHECK(sc_wire_encode(b, &schema2, NULL, e, 1, 0, buf) == 0, "encode");
	sc_batch_release(b);
}

/* The number a frame's rows carry, checked against its shape. */
static uint64_t
frame_number(const struct sc_wire_buf *buf, struct sc_wire_rx *rx, size_t rows,
	     uint64_t *seq)
{
	struct sc_wire_header h;
	struct sc_batch *b;
	uint64_t n;

	CHECK(sc_wire_decode(buf->data, buf->len, rx, &h, &b) == 0, "decode");
	CHECK(sc_batch_count(b) == rows, "%zu rows", sc_batch_count(b));
	n = sc_batch_row(b, 0)[0];
	for (size_t i = 0; i < rows; i++)
		CHECK(sc_batch_row(b, i)[0] == n && sc_batch_row(b, i)[1] == i,
		      "row %zu", i);
	*seq = h.seq;
	sc_batch_release(b);
	return n;
}

static struct sc_mpi_link *
link_make(uint32_t credits, uint32_t outbox, uint64_t dead_ms)
{
	struct sc_mpi_link_opts o;
	struct sc_mpi_link *l;

	sc_mpi_link_opts_default(&o);
	o.credits = credits;
	o.outbox = outbox;
	o.heartbeat_ns = 50000000;
	o.dead_ns = dead_ms * 1000000;
	CHECK(sc_mpi_link_create(&o, &l) == 0, "create");
	/* The ring: edge r from rank r to rank r+1. */
	for (int r = 0; r < nranks; r++)
		CHECK(sc_mpi_link_add_edge(l, (uint32_t)r, r,
					   (r + 1) % nranks) == 0,
		      "add_edge");
	return l;
}

/* Send, making progress while the link says full. */
static uint64_t
send_all_the_way(struct sc_mpi_link *l, uint32_t e, struct sc_wire_buf *buf)
{
	uint64_t fulls = 0;
	int rc;

	while ((rc = sc_mpi_link_send(l, e, buf)) == SC_EFULL) {
		fulls++;
		CHECK(sc_mpi_link_progress(l) == 0, "progress");
	}
	CHECK(rc == 0, "send: %d", rc);
	return fulls;
}

/* Frame n's rows: `rows`, or with 0 the mixed sizes (a 2-column frame
 * of r rows is 50 + 24 r bytes: 168 rows fill 4,082 of a slot's 4,096,
 * 169 take 4,106). */
static size_t
rows_of(size_t rows, uint64_t n)
{
	static const size_t mixed[] = {4, 256, 168, 169, 1, 200, 2};

	return rows ? rows : mixed[n % (sizeof(mixed) / sizeof(mixed[0]))];
}

static void
ring(uint32_t credits, uint32_t outbox, uint64_t frames, size_t rows,
     unsigned slow)
{
	struct sc_mpi_link *l = link_make(credits, outbox, 10000);
	uint32_t out = (uint32_t)me,
		 in = (uint32_t)((me + nranks - 1) % nranks);
	struct sc_wire_buf buf, got;
	struct sc_wire_rx rx;
	struct sc_mpi_link_stats st;
	uint64_t sent = 0, next = 1, fulls = 0, loops = 0;
	bool room;

	sc_wire_buf_init(&buf);
	sc_wire_buf_init(&got);
	CHECK(sc_wire_rx_init(&rx, NULL) == 0, "rx");
	CHECK(!sc_mpi_link_room(l, in), "room at the consumer end");
	/* Until every frame was received here and every frame of ours is
	 * on the wire (not in the outbox, waiting for credit). */
	for (;;) {
		uint64_t seq;
		int rc;

		sc_mpi_link_stats(l, &st);
		if (next > frames && st.frames_sent == frames)
			break;

		CHECK(sc_mpi_link_progress(l) == 0, "progress");
		if (sent < frames) {
			/* A full edge keeps its frame for the next loop: the
			 * ring would deadlock if a rank waited on it. */
			if (buf.len == 0)
				make_frame(out, sent + 1,
					   rows_of(rows, sent + 1), &buf);
			room = sc_mpi_link_room(l, out);
			rc = sc_mpi_link_send(l, out, &buf);
			CHECK(rc == 0 || rc == SC_EFULL, "send: %d", rc);
			CHECK(room == (rc == 0), "room said %d, send %d", room,
			      rc);
			fulls += rc == SC_EFULL;
			sent += rc == 0;
		}
		/* A slow consumer takes a frame one loop in `slow`. */
		if (slow && loops++ % slow)
			continue;
		rc = sc_mpi_link_recv(l, in, &got);
		if (rc == SC_EEMPTY)
			continue;
		CHECK(rc == 0, "recv: %d", rc);
		CHECK(frame_number(&got, &rx, rows_of(rows, next), &seq) ==
			      next &&
			  seq == next,
		      "frame %" PRIu64 " where %" PRIu64 " was next", seq,
		      next);
		next++;
	}
	sc_mpi_link_stats(l, &st);
	CHECK(st.frames_sent == frames && st.frames_recv == frames,
	      "sent %" PRIu64 " received %" PRIu64, st.frames_sent,
	      st.frames_recv);
	if (slow)
		CHECK(fulls > 0 && st.credit_waits > 0,
		      "a slow consumer and one credit, yet no backpressure "
		      "(%" PRIu64 " full, %" PRIu64 " waits)",
		      fulls, st.credit_waits);
	/* Every rank done before any leaves: the last credits are ours. */
	CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS, "barrier");
	printf("rank %d: %" PRIu64 " frames in order, %" PRIu64
	       " SC_EFULL, %" PRIu64 " credit waits\n",
	       me, frames, fulls, st.credit_waits);
	sc_wire_rx_fini(&rx);
	sc_wire_buf_fini(&buf);
	sc_wire_buf_fini(&got);
	sc_mpi_link_destroy(l);
}

/* Tokens: a frame's number is the hops it has left; a rank holds each
 * arrived token for a random number of loops, then passes it on with
 * one hop less, until none is left. */
static void
idle(void)
{
	enum { TOKENS = 20, HOPS = 15, HELD = 64 };
	struct sc_mpi_link *l = link_make(4, 64, 10000);
	uint32_t out = (uint32_t)me,
		 in = (uint32_t)((me + nranks - 1) % nranks);
	uint64_t held[HELD], until[HELD], loops = 0, rng = 77 + (uint64_t)me;
	struct sc_mpi_link_stats st, later;
	struct sc_wire_buf buf, got;
	struct sc_wire_rx rx;
	size_t nheld = 0;
	bool quiet = false;
	int64_t recv, all;

	sc_wire_buf_init(&buf);
	sc_wire_buf_init(&got);
	CHECK(sc_wire_rx_init(&rx, NULL) == 0, "rx");
	if (me == 0)
		for (uint64_t t = 0; t < TOKENS; t++) {
			held[nheld] = HOPS;
			until[nheld++] = t * 3;
		}
	while (!quiet) {
		uint64_t seq;

		loops++;
		for (size_t i = 0; i < nheld;) {
			if (until[i] > loops) {
				i++;
				continue;
			}
			/* A token with k hops left goes on with k - 1. */
			if (held[i] > 0) {
				make_frame(out, held[i] - 1, 1, &buf);
				(void)send_all_the_way(l, out, &buf);
			}
			nheld--;
			held[i] = held[nheld];
			until[i] = until[nheld];
		}
		while (nheld < HELD && sc_mpi_link_recv(l, in, &got) == 0) {
			held[nheld] = frame_number(&got, &rx, 1, &seq);
			until[nheld++] = loops + (sc_splitmix_next(&rng) % 200);
		}
		CHECK(sc_mpi_link_quiet(l, nheld == 0, &quiet) == 0, "quiet");
		if (quiet)
			CHECK(nheld == 0, "idle with %zu tokens held", nheld);
	}
	sc_mpi_link_stats(l, &st);
	/* Nothing more may come: wait a while and look. */
	for (uint64_t t0 = sc_clock_ns(); sc_clock_ns() - t0 < 200000000;)
		CHECK(sc_mpi_link_progress(l) == 0, "progress");
	sc_mpi_link_stats(l, &later);
	CHECK(later.frames_recv == st.frames_recv,
	      "%" PRIu64 " frames arrived after idle",
	      later.frames_recv - st.frames_recv);
	recv = (int64_t)st.frames_recv;
	CHECK(MPI_Allreduce(&recv, &all, 1, MPI_INT64_T, MPI_SUM,
			    MPI_COMM_WORLD) == MPI_SUCCESS,
	      "allreduce");
	CHECK(all == (int64_t)TOKENS * HOPS, "%" PRId64 " hops of %d", all,
	      TOKENS * HOPS);
	printf("rank %d: idle after %" PRIu64 " waves, %" PRId64
	       " hops in all\n",
	       me, st.waves, all);
	sc_wire_rx_fini(&rx);
	sc_wire_buf_fini(&buf);
	sc_wire_buf_fini(&got);
	sc_mpi_link_destroy(l);
}

static void
kill_one(void)
{
	struct sc_mpi_link *l = link_make(8, 64, 1000);
	uint32_t out = (uint32_t)me,
		 in = (uint32_t)((me + nranks - 1) % nranks);
	struct sc_wire_buf buf, got;
	uint64_t t0 = sc_clock_ns(), n = 0, seen_ms;
	bool q;
	int rc;

	sc_wire_buf_init(&buf);
	sc_wire_buf_init(&got);
	while (!sc_mpi_link_peer_dead(l, 1)) {
		if (me == 1 && sc_clock_ns() - t0 > 300000000)
			(void)raise(SIGKILL); /* dies here, mid-run */
		CHECK(sc_clock_ns() - t0 < 5000000000ULL,
		      "rank 1 not reported dead within 5 s");
		CHECK(sc_mpi_link_progress(l) == 0, "progress");
		if (buf.len == 0)
			make_frame(out, ++n, 1, &buf);
		rc = sc_mpi_link_send(l, out, &buf);
		CHECK(rc == 0 || rc == SC_EFULL || rc == SC_EDEAD, "send %d",
		      rc);
		while ((rc = sc_mpi_link_recv(l, in, &got)) == 0)
			;
		CHECK(rc == SC_EEMPTY || rc == SC_EDEAD, "recv %d", rc);
	}
	seen_ms = (sc_clock_ns() - t0) / 1000000;
	if (buf.len == 0)
		make_frame(out, ++n, 1, &buf);
	if (me == 0) /* rank 0's edge goes to rank 1 */
		CHECK(sc_mpi_link_send(l, out, &buf) == SC_EDEAD,
		      "a send to a dead rank");
	if (me == 2) { /* rank 2's edge comes from rank 1 */
		while ((rc = sc_mpi_link_recv(l, in, &got)) == 0)
			;
		CHECK(rc == SC_EDEAD, "recv from a dead rank: %d", rc);
	}
	CHECK(sc_mpi_link_quiet(l, true, &q) == SC_EDEAD,
	      "no wave with a dead peer");
	printf("OK rank %d: rank 1 reported dead after %" PRIu64 " ms\n", me,
	       seen_ms);
	(void)fflush(stdout);
	sc_wire_buf_fini(&buf);
	sc_wire_buf_fini(&got);
	sc_mpi_link_destroy(l);
}

static void
gather_late(void)
{
	struct sc_mpi_link_opts o;
	struct sc_mpi_link *l = NULL;
	uint8_t *parts = NULL, byte = (uint8_t)me;
	size_t *lens = NULL;
	uint64_t t0;
	int rc;

	sc_mpi_link_opts_default(&o);
	o.heartbeat_ns = 50000000;
	o.dead_ns = 20000000000ULL;
	o.collective_ns = 1000000000ULL;
	CHECK(sc_mpi_link_create(&o, &l) == 0, "link");
	if (me == nranks - 1) {
		/* Alive but late: heartbeats go on. */
		for (t0 = sc_clock_ns(); sc_clock_ns() - t0 < 3000000000ULL;)
			CHECK(sc_mpi_link_progress(l) == 0, "progress");
		rc = sc_mpi_link_gather(l, &byte, 1, &parts, &lens);
		CHECK(rc == 0 || rc == SC_ETIMEDOUT, "late gather %d", rc);
	} else {
		t0 = sc_clock_ns();
		rc = sc_mpi_link_gather(l, &byte, 1, &parts, &lens);
		/* Rank 0 gathers: it cannot finish without the late rank.
		 * Another may finish at once (its part sent eagerly). */
		CHECK(rc == SC_ETIMEDOUT || (me != 0 && rc == 0),
		      "gather said %d, not SC_ETIMEDOUT", rc);
		CHECK(sc_clock_ns() - t0 < 2500000000ULL,
		      "the deadline took %" PRIu64 " ms",
		      (sc_clock_ns() - t0) / 1000000);
		if (rc) {
			CHECK(strstr(sc_errmsg(), "gather") != NULL,
			      "the message names no gather: %s", sc_errmsg());
			printf("OK rank %d: %s\n", me, sc_errmsg());
		}
		/* Stay alive until the late rank has joined. */
		for (t0 = sc_clock_ns(); sc_clock_ns() - t0 < 3000000000ULL;)
			CHECK(sc_mpi_link_progress(l) == 0, "progress");
	}
	(void)fflush(stdout);
	free(parts);
	free(lens);
	/* The timed-out requests are MPI's: the link is not destroyed
	 * (its communicator holds them). */
}

/* Rounds of link, ring, idle, staggered destroy; round r sends more
 * frames than r - 1 so that its sequence numbers pass those of a
 * message left over from r - 1. */
static void
relink(unsigned rounds)
{
	for (unsigned r = 0; r < rounds; r++) {
		struct sc_mpi_link *l = link_make(8, 64, 20000);
		uint32_t out = (uint32_t)me,
			 in = (uint32_t)((me + nranks - 1) % nranks);
		uint64_t frames = 40 * ((uint64_t)r + 1), sent = 0, next = 1,
			 seq;
		uint64_t t0 = sc_clock_ns();
		struct sc_wire_buf buf, got;
		struct sc_wire_rx rx;
		bool quiet = false;
		int rc;

		sc_wire_buf_init(&buf);
		sc_wire_buf_init(&got);
		CHECK(sc_wire_rx_init(&rx, NULL) == 0, "rx");
		while (!quiet) {
			CHECK(sc_clock_ns() - t0 < 20000000000ULL,
			      "round %u: %" PRIu64 " of %" PRIu64
			      " frames received, not idle in 20 s (a "
			      "message lost)",
			      r, next - 1, frames);
			if (sent < frames && buf.len == 0)
				make_frame(out, sent + 1, 2, &buf);
			if (sent < frames) {
				rc = sc_mpi_link_send(l, out, &buf);
				CHECK(rc == 0 || rc == SC_EFULL,
				      "round %u: send %d", r, rc);
				sent += rc == 0;
			}
			while ((rc = sc_mpi_link_recv(l, in, &got)) == 0) {
				CHECK(frame_number(&got, &rx, 2, &seq) ==
					      next &&
					  seq == next,
				      "round %u: frame %" PRIu64
				      " where %" PRIu64 " was next",
				      r, seq, next);
				next++;
			}
			CHECK(rc == SC_EEMPTY, "round %u: recv %d", r, rc);
			CHECK(sc_mpi_link_quiet(l, sent == frames, &quiet) == 0,
			      "round %u: quiet", r);
		}
		CHECK(next == frames + 1,
		      "round %u: idle with %" PRIu64 " of %" PRIu64 " frames",
		      r, next - 1, frames);
		/* Rank 0 leaves first; the others beat a while longer. */
		for (t0 = sc_clock_ns();
		     me != 0 && sc_clock_ns() - t0 < 250000000;)
			CHECK(sc_mpi_link_progress(l) == 0, "progress");
		sc_wire_rx_fini(&rx);
		sc_wire_buf_fini(&buf);
		sc_wire_buf_fini(&got);
		sc_mpi_link_destroy(l);
		/* Rank 0's MPI receives the late beats before the next link
		 * is made. */
		CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS, "barrier");
	}
	printf("OK rank %d: %u links one after another\n", me, rounds);
}

int
main(int argc, char **argv)
{
	enum sc_type t[2] = {SC_TYPE_U64, SC_TYPE_U64};
	const char *what = argc > 1 ? argv[1] : "";
	int level;

	alarm(60);
	if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &level) !=
	    MPI_SUCCESS)
		return 1;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	CHECK(nranks >= 2, "needs 2 ranks or more");
	CHECK(sc_schema_init(&schema2, 2, t, NULL) == 0, "schema");
	if (!strcmp(what, "order"))
		ring(8, 64, 3000, 16, 0);
	else if (!strcmp(what, "backpressure"))
		ring(1, 2, 500, 4, 7);
	else if (!strcmp(what, "order_mixed"))
		ring(8, 64, 1400, 0, 0);
	else if (!strcmp(what, "backpressure_mixed"))
		ring(1, 2, 350, 0, 7);
	else if (!strcmp(what, "idle"))
		idle();
	else if (!strcmp(what, "kill"))
		kill_one();
	else if (!strcmp(what, "gather_late"))
		gather_late();
	else if (!strcmp(what, "relink"))
		relink(8);
	else
		CHECK(0, "unknown scenario '%s'", what);
	MPI_Finalize();
	return 0;
}
