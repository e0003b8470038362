/*
 * cli_ranks.c - `subcirc run` (and `stress`) under mpirun: one process
 * per rank, each running its own replicas of the same graph and placement
 * (units/mpi_runtime.h), the host on rank 0 (tools/cli_ranks.h).
 *
 * When MPI starts. A plain `subcirc run` must not need mpirun, and a
 * process that calls MPI_Init outside mpirun becomes a singleton that
 * spawns Open MPI's daemon: so MPI is initialised only when the placement
 * spans more than one rank and the launcher says how many ranks it
 * started (OMPI_COMM_WORLD_SIZE from Open MPI's mpirun, PMI_SIZE from
 * Hydra's mpiexec), read before MPI starts so that a wrong count is a bad
 * argument (exit 2) on every rank at once, before any rank waits for
 * another. A placement over several ranks outside mpirun, or under a
 * build without MPI, is refused the same way, saying which.
 *
 * Built twice over: with SC_CLI_MPI (sc_mpi was built, MPI found) the
 * runtime across ranks is sc_mpi_runtime_create; without it every
 * placement over several ranks is refused, saying subcirc was built
 * without MPI, and the rest runs as before.
 *
 * After the runtime. The figures are gathered to rank 0 and the verdict
 * sent back with MPI calls made only once the runtime is destroyed (while
 * it lives the program makes none of its own: units/mpi_runtime.h), each
 * non-blocking and polled to a deadline (60 s; 5 s after a run that
 * failed here, which may be a rank that died), so a rank that never
 * comes ends the gather with an error that says so instead of a hang;
 * and then MPI_Finalize is skipped (cli_ranks_stop).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "operators/error.h"
#include "tools/cli.h"
#include "tools/cli_ranks.h"
#include "units/placement.h"
#include "units/runtime.h"

#ifdef SC_CLI_MPI
#include <mpi.h>

#include "units/mpi_runtime.h"
#endif

/* How long a gather after the run waits for every rank; after a run
 * that failed here, which may be a rank that died, not as long (every
 * live rank comes within moments: the calls before were collective). */
#define RANKS_GATHER_NS 60000000000ull
#define RANKS_FAILED_NS 5000000000ull
/* A peer silent this long is dead (the link's heartbeats): 20 s, as
 * tests/mpi/test_mpi_runtime.c chose, since a loaded machine starves a
 * rank for seconds (with 10 s, mpi.cli_stress_over_tcp_np3 beside the
 * other CLI mpi tests at -j2 failed in 2 of 5 passes, once with SC_EDEAD
 * in a gather; the other's code was not printed yet). */
#define RANKS_DEAD_NS 20000000000ull

static int ranks_me, ranks_n = 1;
static bool ranks_on; /* MPI initialised by cli_ranks_start */
#ifdef SC_CLI_MPI
static bool ranks_broken; /* a call after the run failed or timed out */
#endif

uint32_t
cli_ranks_launched(void)
{
	static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		// NOLINTNEXTLINE(concurrency-mt-unsafe): before any thread
		const char *v = getenv(vars[i]);
		char *end = NULL;
		unsigned long n;

		if (!v || !*v)
			continue;
		n = strtoul(v, &end, 10);
		if (*end == '\0' && n >= 1 && n <= UINT32_MAX)
			return (uint32_t)n;
	}
	return 1;
}

bool
cli_ranks_built(void)
{
#ifdef SC_CLI_MPI
	return true;
#else
	return false;
#endif
}

int
cli_ranks_start(const char *cmd, uint32_t span)
{
	uint32_t n = cli_ranks_launched();

	if (span <= 1 && n <= 1)
		return 0;
	if (span <= 1)
		cli_die_usage(
		    cmd,
		    "mpirun started %u ranks, but the placement runs "
		    "on one: give a placement over %u ranks (ranks:%u, "
		    "or a strategy and @ranks:%u)",
		    n, n, n, n);
	if (!cli_ranks_built())
		cli_die_usage(cmd,
			      "the placement spans %u ranks, but subcirc was "
			      "built without MPI (no sc_mpi: install Open MPI, "
			      "tools/deps --optional, and build again)",
			      span);
	if (n == 1)
		cli_die_usage(cmd,
			      "the placement spans %u ranks: run one process "
			      "per rank, `mpirun -np %u subcirc %s ...`",
			      span, span, cmd);
	if (n != span)
		cli_die_usage(
		    cmd,
		    "the placement spans %u ranks, but mpirun started "
		    "%u: give -np %u, or a placement over %u ranks",
		    span, n, span, n);
#ifdef SC_CLI_MPI
	{
		int level = 0, size = 0;

		if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED,
				    &level) != MPI_SUCCESS)
			cli_die_library("MPI_Init_thread", SC_EIO);
		if (level < MPI_THREAD_SERIALIZED) {
			(void)fprintf(stderr,
				      "subcirc %s: MPI gives thread level "
				      "%d, below MPI_THREAD_SERIALIZED\n",
				      cmd, level);
			MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_LIBRARY);
		}
		ranks_on = true;
		MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
		MPI_Comm_rank(MPI_COMM_WORLD, &ranks_me);
		MPI_Comm_size(MPI_COMM_WORLD, &size);
		ranks_n = size;
		if ((uint32_t)size != span) {
			(void)fprintf(stderr,
				      "subcirc %s: MPI_COMM_WORLD has %d "
				      "ranks, the placement spans %u\n",
				      cmd, size, span);
			cli_ranks_stop();
			cli_exit(CLI_EXIT_USAGE);
		}
	}
#endif
	return ranks_me;
}

int
cli_ranks_start_placement(const char *cmd, const struct sc_graph *g,
			  const char *spec, uint64_t seed)
{
	struct sc_placement *p = NULL;
	uint32_t span;
	int rc = sc_placement_parse(g, spec, seed, &p);

	if (rc)
		cli_die_library("sc_placement_parse", rc); /* checked before */
	span = sc_placement_ranks(p);
	sc_placement_destroy(p);
	return cli_ranks_start(cmd, span);
}

bool
cli_ranks_active(void)
{
	return ranks_on;
}

int
cli_ranks_rank(void)
{
	return ranks_me;
}

int
cli_ranks_size(void)
{
	return ranks_n;
}

void
cli_ranks_stop(void)
{
#ifdef SC_CLI_MPI
	/* MPI_Finalize with a peer that died can wait for ever (seen with
	 * tests/mpi/kill_cli.sh on a loaded machine: rank 0 had said all
	 * and still ran 82 s later): after a call that did not complete,
	 * the process ends without it, saying so. Nor may it just exit:
	 * Open MPI 4's mpirun, told to keep a job whose rank died
	 * (orte_abort_on_non_zero_status 0), then waits for ever for the
	 * MPI_Finalize of a process that is gone. MPI_Abort is the one call
	 * that ends the job without the dead peer: mpirun kills what is
	 * left and returns (the code the command ends with). */
	if (ranks_on && ranks_broken) {
		(void)fprintf(stderr,
			      "subcirc: rank %d: not every rank came to the "
			      "end: ending the job with MPI_Abort\n",
			      ranks_me);
		(void)fflush(stdout);
		MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_LIBRARY);
	} else if (ranks_on)
		MPI_Finalize();
#endif
	ranks_on = false;
}

int
cli_ranks_runtime_create(struct sc_graph *g, const struct sc_placement *p,
			 const struct sc_runtime_opts *ro, uint32_t credits,
			 struct sc_runtime **rt, void **mpi)
{
	*mpi = NULL;
#ifdef SC_CLI_MPI
	if (ranks_on) {
		struct sc_mpi_runtime *m = NULL;
		struct sc_mpi_link_opts lo;
		int rc;

		sc_mpi_link_opts_default(&lo);
		/* A rank starved of the cores for 2 s (the link's default)
		 * is not dead: on a loaded machine, with more ranks than
		 * cores, it happens (RANKS_DEAD_NS). */
		lo.dead_ns = RANKS_DEAD_NS;
		if (credits) /* a small window: backpressure across ranks */
			lo.credits = lo.outbox = credits;
		rc = sc_mpi_runtime_create(g, p, ro, &lo, &m);

		if (rc)
			return rc;
		*mpi = m;
		*rt = sc_mpi_runtime_rt(m);
		return 0;
	}
#endif
	return sc_runtime_create(g, p, ro, rt);
}

void
cli_ranks_runtime_destroy(struct sc_runtime *rt, void *mpi)
{
#ifdef SC_CLI_MPI
	if (mpi) {
		sc_mpi_runtime_destroy(mpi);
		return;
	}
#endif
	(void)mpi;
	sc_runtime_destroy(rt);
}

void
cli_ranks_link_figs(void *mpi, struct cli_rank_figs *f)
{
#ifdef SC_CLI_MPI
	struct sc_mpi_link_stats st;

	if (!mpi)
		return;
	sc_mpi_runtime_stats(mpi, &st);
	f->frames_sent = st.frames_sent;
	f->frames_recv = st.frames_recv;
	f->bytes_sent = st.bytes_sent;
	f->bytes_recv = st.bytes_recv;
	f->credit_waits = st.credit_waits;
	f->undeliverable = st.undeliverable;
	f->credit_msgs = st.credit_msgs;
	f->waves = st.waves;
#else
	(void)mpi;
	(void)f;
#endif
}

void
cli_ranks_figs_of(struct sc_runtime *rt, void *mpi,
		  const struct sc_placement *p, struct cli_rank_figs *f)
{
	memset(f, 0, sizeof(*f));
	if (rt) {
		struct sc_runtime_stats st;

		sc_runtime_stats(rt, &st);
		f->turns = st.turns;
		f->frames_delivered = st.frames_delivered;
	}
	cli_ranks_link_figs(mpi, f);
	for (uint32_t u = 0; p && u < sc_placement_units(p); u++)
		for (uint32_t i = 0; i < sc_placement_shards(p, u); i++)
			f->units_here +=
			    sc_placement_rank_of(p, u, i) == cli_ranks_rank();
}

#ifdef SC_CLI_MPI
/* Wait for request q until the deadline, yielding; 0, or CLI_EXIT_LIBRARY
 * after a message naming what did not come. */
static int
ranks_wait(MPI_Request *q, const char *what, uint64_t deadline_ns)
{
	struct timespec t0, now, nap = {0, 100000};
	int done = 0;

	(void)clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (MPI_Test(q, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
			(void)fprintf(stderr, "subcirc: rank %d: %s failed\n",
				      ranks_me, what);
			ranks_broken = true;
			return CLI_EXIT_LIBRARY;
		}
		if (done)
			return 0;
		(void)clock_gettime(CLOCK_MONOTONIC, &now);
		if ((uint64_t)(now.tv_sec - t0.tv_sec) * 1000000000ull +
			(uint64_t)(now.tv_nsec - t0.tv_nsec) >=
		    deadline_ns) {
			(void)fprintf(
			    stderr,
			    "subcirc: rank %d: %s: not every rank "
			    "came in %llu s\n",
			    ranks_me, what,
			    (unsigned long long)(deadline_ns / 1000000000ull));
			ranks_broken = true;
			return CLI_EXIT_LIBRARY;
		}
		(void)nanosleep(&nap, NULL);
	}
}
#endif

/* The requests below end in ranks_wait's MPI_Test loop, which the MPI
 * checker does not follow. */
// NOLINTBEGIN(clang-analyzer-optin.mpi.MPI-Checker)
int
cli_ranks_gather(const struct cli_rank_figs *mine, struct cli_rank_figs *all)
{
#ifdef SC_CLI_MPI
	if (ranks_on) {
		MPI_Request q;

		if (MPI_Igather(mine, (int)sizeof(*mine), MPI_BYTE, all,
				(int)sizeof(*mine), MPI_BYTE, 0, MPI_COMM_WORLD,
				&q) != MPI_SUCCESS) {
			(void)fprintf(stderr,
				      "subcirc: rank %d: MPI_Igather of the "
				      "figures failed\n",
				      ranks_me);
			return CLI_EXIT_LIBRARY;
		}
		return ranks_wait(&q, "the gather of the per-rank figures",
				  mine->failed ? RANKS_FAILED_NS
					       : RANKS_GATHER_NS);
	}
#endif
	all[0] = *mine;
	return 0;
}

int
cli_ranks_agree(int rc)
{
#ifdef SC_CLI_MPI
	if (ranks_on) {
		MPI_Request q;
		int v = rc;

		if (MPI_Ibcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD, &q) !=
		    MPI_SUCCESS)
			return CLI_EXIT_LIBRARY;
		if (ranks_wait(&q, "the verdict from rank 0",
			       rc ? RANKS_FAILED_NS : RANKS_GATHER_NS) != 0)
			return CLI_EXIT_LIBRARY;
		/* A rank's own failure stands; else rank 0's verdict. */
		return rc ? rc : v;
	}
#endif
	return rc;
}
int
cli_ranks_sum(uint64_t *v, size_t n)
{
#ifdef SC_CLI_MPI
	if (ranks_on) {
		MPI_Request q;

		if (MPI_Iallreduce(MPI_IN_PLACE, v, (int)n, MPI_UINT64_T,
				   MPI_SUM, MPI_COMM_WORLD,
				   &q) != MPI_SUCCESS) {
			(void)fprintf(stderr,
				      "subcirc: rank %d: MPI_Iallreduce "
				      "failed\n",
				      ranks_me);
			return CLI_EXIT_LIBRARY;
		}
		return ranks_wait(&q, "a sum over the ranks", RANKS_GATHER_NS);
	}
#endif
	(void)v;
	(void)n;
	return 0;
}
// NOLINTEND(clang-analyzer-optin.mpi.MPI-Checker)

void
cli_ranks_abort(int rc)
{
	(void)fflush(stdout);
#ifdef SC_CLI_MPI
	if (ranks_on)
		MPI_Abort(MPI_COMM_WORLD, rc);
#endif
	cli_exit(rc);
}

void
cli_ranks_figs_total(const struct cli_rank_figs *all, int n,
		     struct cli_rank_figs *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (int r = 0; r < n; r++) {
		const struct cli_rank_figs *f = &all[r];

		sum->frames_sent += f->frames_sent;
		sum->frames_recv += f->frames_recv;
		sum->bytes_sent += f->bytes_sent;
		sum->bytes_recv += f->bytes_recv;
		sum->credit_waits += f->credit_waits;
		sum->undeliverable += f->undeliverable;
		sum->credit_msgs += f->credit_msgs;
		sum->turns += f->turns;
		sum->frames_delivered += f->frames_delivered;
		sum->units_here += f->units_here;
		if (f->stamp > sum->stamp)
			sum->stamp = f->stamp;
		if (f->waves > sum->waves)
			sum->waves = f->waves;
	}
}

void
cli_ranks_print(FILE *o, const struct cli_rank_figs *all, int n)
{
	(void)fprintf(o,
		      "  per rank:  %4s %6s %7s %12s %12s %12s %12s %9s "
		      "%9s\n",
		      "rank", "units", "turns", "frames sent", "frames recv",
		      "bytes sent", "bytes recv", "credit w.", "undeliv.");
	for (int r = 0; r < n; r++) {
		const struct cli_rank_figs *f = &all[r];

		(void)fprintf(o,
			      "             %4d %6u %7" PRIu64 " %12" PRIu64
			      " %12" PRIu64 " %12" PRIu64 " %12" PRIu64
			      " %9" PRIu64 " %9" PRIu64 "\n",
			      r, f->units_here, f->turns, f->frames_sent,
			      f->frames_recv, f->bytes_sent, f->bytes_recv,
			      f->credit_waits, f->undeliverable);
	}
}

void
cli_ranks_write_json(struct cli_json *j, const struct cli_rank_figs *all, int n)
{
	cli_json_open(j, "ranks", '[', false);
	for (int r = 0; r < n; r++) {
		const struct cli_rank_figs *x = &all[r];

		cli_json_open(j, NULL, '{', true);
		cli_json_int(j, "rank", r);
		cli_json_uint(j, "units", x->units_here);
		cli_json_uint(j, "turns", x->turns);
		cli_json_uint(j, "frames_sent", x->frames_sent);
		cli_json_uint(j, "frames_recv", x->frames_recv);
		cli_json_uint(j, "bytes_sent", x->bytes_sent);
		cli_json_uint(j, "bytes_recv", x->bytes_recv);
		cli_json_uint(j, "credit_waits", x->credit_waits);
		cli_json_uint(j, "credit_msgs", x->credit_msgs);
		cli_json_uint(j, "undeliverable", x->undeliverable);
		cli_json_uint(j, "waves", x->waves);
		cli_json_close(j);
	}
	cli_json_close(j);
}
