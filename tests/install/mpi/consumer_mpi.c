/*
 * consumer_mpi.c - a program outside the tree that runs installed subcirc
 * across MPI ranks as a user would: it includes <subcirc/subcirc_mpi.h>
 * and links libsubcirc-mpi (tests/install/check.sh builds it through
 * pkg-config subcirc-mpi and through find_package(subcirc COMPONENTS mpi),
 * then runs it under mpirun -np 2).
 *
 * The circuit counts bids per auction, its COUNT sharded two ways with
 * one replica on each rank ("sharded:2@ranks:2"): auction a
 * (1..SC_AUCTIONS) gets a bids, which rank 0 alone submits, in three
 * submissions, so the bids of the replica on rank 1 cross the MPI link.
 * Once idle, the integral gathered to rank 0 must hold exactly the rows
 * (a, a) with weight 1, and rank 1's own part must be some of those rows,
 * received over the link. Every rank then learns every rank's verdict, so
 * that all exit with the same status: 0 only when all of that holds.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <subcirc/subcirc_mpi.h>

#define SC_AUCTIONS 12
#define SC_SUBMITS  3
#define SC_RANKS    2

struct consumer {
	int me;
	struct sc_graph *g;
	struct sc_placement *p;
	struct sc_mpi_runtime *m;
	struct sc_batch *result;
	struct sc_mpi_link_stats link;
	int in, out;
};

/* Submission k holds the bids j of auction a with j % SC_SUBMITS == k. */
static int
submit_bids(struct consumer *c, int k)
{
	uint64_t rows[2 * SC_AUCTIONS * SC_AUCTIONS];
	struct sc_batch *b = NULL;
	size_t n = 0;
	int rc;

	for (int a = 1; a <= SC_AUCTIONS; a++) {
		for (int j = 0; j < a; j++) {
			if (j % SC_SUBMITS != k)
				continue;
			rows[2 * n] = sc_enc_i64(a);
			rows[2 * n + 1] = sc_enc_i64(100 + j);
			n++;
		}
	}
	rc = sc_batch_from_records(2, rows, NULL, n, &b);
	if (rc == 0)
		rc = sc_runtime_submit_wait(sc_mpi_runtime_rt(c->m), c->in, b,
					    0);
	sc_batch_release(b);
	return rc;
}

/* Every rank: the same graph and placement, the runtime, rank 0's
 * submissions, then the collective wait for idle and integral. */
static int
run(struct consumer *c)
{
	enum sc_type types[2] = {SC_TYPE_I64, SC_TYPE_I64}; /* auction, price */
	struct sc_aggregate_spec count = {
	    .ncols = 2, .k = 1, .kind = SC_AGG_COUNT};
	struct sc_runtime_opts opts = {.workers = 2};
	struct sc_schema bid;
	int rc;

	rc = sc_graph_create(&c->g);
	if (rc == 0)
		rc = sc_schema_init(&bid, 2, types, NULL);
	if (rc != 0)
		return rc;
	c->in = sc_graph_input(c->g, "bids", &bid);
	c->out = sc_graph_output(c->g, "bids_per_auction",
				 sc_graph_aggregate(c->g, c->in, &count));
	if (c->out < 0)
		return c->out;
	rc = sc_placement_parse(c->g, "sharded:2@ranks:2", 0, &c->p);
	if (rc == 0)
		rc = sc_mpi_runtime_create(c->g, c->p, &opts, NULL, &c->m);
	for (int k = 0; rc == 0 && c->me == 0 && k < SC_SUBMITS; k++)
		rc = submit_bids(c, k);
	if (rc == 0)
		rc = sc_runtime_wait_idle(sc_mpi_runtime_rt(c->m), 0, NULL);
	if (rc == 0)
		rc = sc_runtime_integral(sc_mpi_runtime_rt(c->m), c->out,
					 &c->result);
	if (rc == 0)
		sc_mpi_runtime_stats(c->m, &c->link);
	return rc;
}

/* Rows are (auction, count), sorted by auction: on rank 0 all of them;
 * on rank 1 a part, at least one, that came over the link. */
static int
check(const struct consumer *c)
{
	size_t n = sc_batch_count(c->result);
	int64_t prev = 0;
	int bad = 0;

	if (c->me == 0 ? n != SC_AUCTIONS : n == 0 || n >= SC_AUCTIONS) {
		(void)fprintf(stderr, "consumer_mpi: rank %d has %zu rows\n",
			      c->me, n);
		return 1;
	}
	if (c->me != 0 && c->link.frames_recv == 0) {
		(void)fprintf(stderr,
			      "consumer_mpi: rank %d received no "
			      "frame over the link\n",
			      c->me);
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		const uint64_t *row = sc_batch_row(c->result, i);
		int64_t a = sc_dec_i64(row[0]), cnt = sc_dec_i64(row[1]);
		int64_t w = sc_batch_weight(c->result, i);

		/* Increasing, in 1..SC_AUCTIONS: on rank 0, with
		 * SC_AUCTIONS rows, that is every auction once. */
		if (a <= prev || a > SC_AUCTIONS || cnt != a || w != 1) {
			(void)fprintf(
			    stderr,
			    "consumer_mpi: rank %d: row %zu is (%" PRId64
			    ", %" PRId64 ") x %" PRId64 "\n",
			    c->me, i, a, cnt, w);
			bad = 1;
		}
		prev = a;
	}
	return bad;
}

int
main(int argc, char **argv)
{
	struct consumer c = {0};
	int level = 0, nranks = 0, bad = 1, any_bad = 1, rc;

	alarm(120); /* a hung rank fails the check rather than stalling it */
	if (MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &level) !=
	    MPI_SUCCESS)
		return EXIT_FAILURE;
	(void)MPI_Comm_rank(MPI_COMM_WORLD, &c.me);
	(void)MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (nranks != SC_RANKS) {
		(void)fprintf(stderr,
			      "consumer_mpi: %d ranks, run with -np %d\n",
			      nranks, SC_RANKS);
	} else if (strcmp(sc_version_string(), SC_VERSION_STRING) != 0) {
		(void)fprintf(stderr, "consumer_mpi: library %s, headers %s\n",
			      sc_version_string(), SC_VERSION_STRING);
	} else if ((rc = run(&c)) != 0) {
		(void)fprintf(stderr, "consumer_mpi: rank %d: %s: %s\n", c.me,
			      sc_errname(rc), sc_errmsg());
	} else {
		bad = check(&c);
	}
	/* Collective, and it ends the link: MPI is the program's again. */
	sc_mpi_runtime_destroy(c.m);
	sc_batch_release(c.result);
	sc_placement_destroy(c.p);
	sc_graph_destroy(c.g);
	if (MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX,
			  MPI_COMM_WORLD) != MPI_SUCCESS)
		any_bad = 1;
	if (!any_bad && c.me == 0)
		(void)printf("consumer_mpi: %d auctions counted over %d ranks, "
			     "subcirc %s\n",
			     SC_AUCTIONS, nranks, sc_version_string());
	(void)MPI_Finalize();
	return any_bad ? EXIT_FAILURE : EXIT_SUCCESS;
}
