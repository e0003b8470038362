/*
 * cli_ranks.h - the CLI across MPI ranks (tools/cli_ranks.c): SPMD under
 * mpirun, every rank parses the same arguments, builds the same graph and
 * placement and runs its own replicas; the host (submissions, progress
 * line, summary, files) is rank 0's. Built without MPI, the same calls
 * run one process and refuse a placement over several ranks.
 *
 * A helper of the commands (run, nexmark, stress) and of the campaign
 * across ranks; it uses the core (cli.h) alone.
 */
#ifndef SC_TOOLS_CLI_RANKS_H
#define SC_TOOLS_CLI_RANKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct cli_json;
struct sc_graph;
struct sc_placement;
struct sc_runtime;

/* The ranks the launcher started (OMPI_COMM_WORLD_SIZE, PMI_SIZE), read
 * from the environment without starting MPI; 1 outside mpirun. */
uint32_t cli_ranks_launched(void);

/* Whether subcirc was built with MPI (sc_mpi). */
bool cli_ranks_built(void);

/* For a placement over `span` ranks: exit 2, saying why, when it cannot
 * run here (several ranks outside mpirun, or without MPI; a launch of
 * another number of ranks; a placement on one rank under mpirun -np N >
 * 1); else initialise MPI when span > 1. Returns this rank (0 alone). */
int cli_ranks_start(const char *cmd, uint32_t span);

/* cli_ranks_start for the placement `spec` of g (already checked). */
int cli_ranks_start_placement(const char *cmd, const struct sc_graph *g,
			      const char *spec, uint64_t seed);

/* Whether cli_ranks_start initialised MPI; this rank; the number of ranks. */
bool cli_ranks_active(void);
int cli_ranks_rank(void);
int cli_ranks_size(void);

/* MPI_Finalize, when cli_ranks_start initialised MPI (main calls it). */
void cli_ranks_stop(void);

struct sc_runtime_opts;

/* sc_runtime_create, or across ranks sc_mpi_runtime_create (*mpi its
 * handle, else NULL) with a link of `credits` frames in flight and as
 * many kept beyond per remote edge (0: the link's defaults, 32 and 64);
 * destroy either (collective across ranks). */
int cli_ranks_runtime_create(struct sc_graph *g, const struct sc_placement *p,
			     const struct sc_runtime_opts *ro, uint32_t credits,
			     struct sc_runtime **rt, void **mpi);
void cli_ranks_runtime_destroy(struct sc_runtime *rt, void *mpi);

/* One rank's figures, gathered to rank 0 after the run. */
struct cli_rank_figs {
	uint64_t frames_sent, frames_recv; /* data frames over MPI */
	uint64_t bytes_sent, bytes_recv;   /* their bytes */
	uint64_t credit_waits;		   /* progress passes that left a
					      frame waiting for credit */
	uint64_t credit_msgs;		   /* credit messages sent */
	uint64_t undeliverable;		   /* frames for a dead rank */
	uint64_t waves;			   /* termination waves done */
	uint64_t turns;			   /* this rank's turns */
	uint64_t frames_delivered;	   /* frames its units polled */
	uint64_t stamp;			   /* newest stamp seen here */
	uint32_t units_here;		   /* replicas run here */
	int32_t failed;			   /* a check failed here (1) */
};

/* The link's counters of handle mpi into f (nothing when NULL). */
void cli_ranks_link_figs(void *mpi, struct cli_rank_figs *f);

/* This rank's figures of a run into f, zeroed first: rt's turns and
 * frames delivered (none when rt is NULL), the link's counters of mpi,
 * and the replicas of placement p (may be NULL) placed on this rank. The
 * caller adds the stamp and whether a check failed. */
void cli_ranks_figs_of(struct sc_runtime *rt, void *mpi,
		       const struct sc_placement *p, struct cli_rank_figs *f);

/* Every rank's figures into all[0..cli_ranks_size()) on rank 0 (after the
 * runtime is destroyed; a deadline of 60 s, 5 s when mine->failed: a
 * rank may have died); 0 or CLI_EXIT_LIBRARY. */
int cli_ranks_gather(const struct cli_rank_figs *mine,
		     struct cli_rank_figs *all);

/* Rank 0's exit code rc to every rank: each returns its own failure, or
 * rank 0's code. Collective (after cli_ranks_gather; 60 s, 5 s when rc). */
int cli_ranks_agree(int rc);

/* Sums over n ranks (stamp and waves: the largest). */
void cli_ranks_figs_total(const struct cli_rank_figs *all, int n,
			  struct cli_rank_figs *sum);

/* v[0..n) summed over the ranks, on every rank (after the runtime is
 * destroyed; a deadline of 60 s); 0 or CLI_EXIT_LIBRARY. */
int cli_ranks_sum(uint64_t *v, size_t n);

/* End the whole job with exit code rc (MPI_Abort), or this process
 * alone without MPI. */
void __attribute__((noreturn)) cli_ranks_abort(int rc);

/* The per-rank table of the summary; the report's "ranks" member (an
 * entry per rank) into j. */
void cli_ranks_print(FILE *o, const struct cli_rank_figs *all, int n);
void cli_ranks_write_json(struct cli_json *j, const struct cli_rank_figs *all,
			  int n);

#endif /* SC_TOOLS_CLI_RANKS_H */
