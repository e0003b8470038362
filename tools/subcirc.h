/*
 * subcirc.h - what the files of the `subcirc` command line share (not an
 * installed header: the CLI is a program, and these names are its own).
 *
 *   subcirc.c         main and the usage texts
 *   subcirc_args.c    argument parsing and the exits on a bad argument
 *   subcirc_hist.c    the latency histogram
 *   subcirc_report.c  the report writers: summary, table, plot, JSON, CSV
 *   subcirc_run.c     `subcirc run`: the live grid workload (run_once)
 *   subcirc_place.c   `subcirc place`: strategies x workers x budgets,
 *                     repeated in rounds, ranked (bench/rank.h)
 *   subcirc_units.c   run's --units: the per-unit table
 *   subcirc_stress.c  `subcirc stress`: the settle check (units/settle.h)
 *                     over seeds x workers x placements x modes, with
 *                     injected faults: a campaign (--faults, --json,
 *                     --shrink)
 *   subcirc_alloc.c   the ld --wrap allocators and the hook that lets
 *                     `stress --faults alloc` fail the Nth allocation
 *   subcirc_failalloc.c  not the CLI: the LD_PRELOAD that fails the Nth
 *                     allocation, for the CLI's out-of-memory tests
 *   subcirc_mpi.c     run and stress under mpirun: MPI started when the
 *                     placement spans ranks, the runtime across ranks,
 *                     the per-rank figures gathered to rank 0
 *   subcirc_stress_ranks.c  `stress` under mpirun: seeded cases across
 *                     the ranks, each checked against the single circuit
 *
 * Exit codes: 0 success, 1 a failed check (a result that is not the
 * reference, a stress case that does not settle), 2 a bad argument (an
 * output file that cannot be created included), 3 an error of the library
 * (a unit that panicked, SC_ENOMEM, a run stuck for 30 s, an output file
 * that could not be written).
 */
#ifndef SC_TOOLS_SUBCIRC_H
#define SC_TOOLS_SUBCIRC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define EXIT_CHECK   1
#define EXIT_USAGE   2
#define EXIT_LIBRARY 3

#define MAX_LIST 32 /* entries of a comma list */

/* --- the allocation hook (subcirc_alloc.c) --------------------------------
 */

/* Install the hook of SC_SETTLE_FAULT_ALLOC (sc_settle_alloc_hook_set)
 * when the CLI was linked with the wrap; else nothing. */
void cli_alloc_hook_install(void);

/* --- usage (subcirc.c) -----------------------------------------------------
 */

extern const char usage_main[], usage_run[], usage_place[], usage_stress[];

/* --- argument parsing (subcirc_args.c) -------------------------------------
 */

/* How the argument checks end the process: exit(code) (subcirc.c). The
 * fuzzer's harness (tests/fuzz/fuzz_cli_args.c) links the same parsers
 * with its own definition, which jumps back to its loop instead. */
void __attribute__((noreturn)) subcirc_exit(int code);

/* A bad argument: say which and exit 2 (through subcirc_exit). */
void __attribute__((noreturn, format(printf, 2, 3)))
die_usage(const char *cmd, const char *fmt, ...);

/* A library call failed: name it, with the library's message; returns 3. */
int lib_error(const char *what, int rc);

/* A library call failed while arguments are checked: name it, exit 3. */
void __attribute__((noreturn)) die_library(const char *what, int rc);

struct args {
	const char *cmd; /* for messages */
	int argc;
	char **argv;
	int i; /* next argument */
};

/* Whether argv[i] is option `name`; its value (from "--name=v" or the next
 * argument) in *val when the option takes one (val non-NULL). */
bool args_opt(struct args *a, const char *name, const char **val);

/* A whole number in lo..hi, or a number in lo..hi; else exit 2. */
uint64_t parse_u64(const char *cmd, const char *name, const char *s,
		   uint64_t lo, uint64_t hi);
double parse_double(const char *cmd, const char *name, const char *s, double lo,
		    double hi);

/* Numbers are strict: digits only (and, for a number, one '.' and an
 * exponent), no sign, no spaces; a comma list has no empty entry. */

/* A comma list of whole numbers (at most MAX_LIST) into out; its length. */
size_t parse_u32_list(const char *cmd, const char *name, const char *s,
		      uint32_t lo, uint32_t hi, uint32_t *out);

/* A comma list of placement names, checked against the grid's graph so a
 * misspelled one is refused before anything runs. */
size_t parse_placements(const char *cmd, const char *s, char out[][32]);

struct sc_graph;
struct sc_placement;
struct sc_runtime;

/* The parameter of a "random:N" or "sharded:K" placement: digits in the
 * strategy's range, else exit 2 with the range (any other name passes). */
void check_placement(const char *cmd, const char *opt, const char *spec);

/* check_placement, then sc_placement_parse on g: SC_EINVAL exits 2 naming
 * option opt, another error (SC_ENOMEM) exits 3. */
void check_placement_of(const char *cmd, const char *opt,
			const struct sc_graph *g, const char *spec,
			uint64_t seed);

struct run_cfg;

/* Options shared by run and place (--batch, --rows, --cols, --seed,
 * --capacity, --budget); true if argv[i] was one. */
bool parse_workload_opt(struct args *a, struct run_cfg *c);

/* --- latency histogram (subcirc_hist.c) ------------------------------------
 * Bucket of v ns: v itself below 32; else 16 steps per power of two, so a
 * percentile is within 1/32 (3.2%) of the sample at its rank (exact below
 * 32 ns, and the max exact). Adds are atomic (any worker). */

#define HIST_SUB     16
#define HIST_BUCKETS (61 * HIST_SUB) /* the last holds 2^63..2^64-1 */

struct hist {
	_Atomic uint64_t b[HIST_BUCKETS];
	_Atomic uint64_t max; /* the largest value added */
};

/* A copy of a histogram's counts (hist_take), which percentiles read. */
struct hist_counts {
	uint64_t b[HIST_BUCKETS];
	uint64_t n, max; /* values in all, the largest */
};

void hist_add(struct hist *h, uint64_t v);

/* n values v at once (a batch's events that all waited v ns). */
void hist_add_n(struct hist *h, uint64_t v, uint64_t n);

/* The n values first + floor(j * step), j = 0..n-1 (step >= 0, in ns):
 * a batch's events, arrived evenly spread; the same counts as n
 * hist_add, in one increment per bucket crossed. */
void hist_add_linear(struct hist *h, uint64_t first, double step, uint64_t n);

/* Copy h into *out (and zero h if `reset`); returns the count. */
uint64_t hist_take(struct hist *h, struct hist_counts *out, bool reset);

/* The q-quantile (0..1) of c by nearest rank (the value at 1-based rank
 * ceil(q * n)): the midpoint of its bucket, never past the max; q = 1 is
 * the max itself. 0 when empty. In ns, or in us. */
double hist_quantile_ns(const struct hist_counts *c, double q);
double hist_quantile_us(const struct hist_counts *c, double q);

/* --- run (subcirc_run.c) ---------------------------------------------------
 */

struct sc_timeline;
struct rank_figs;

struct run_cfg {
	uint32_t workers;
	char placement[32];
	uint64_t events; /* 0: by time */
	double seconds;	 /* 0: by events */
	double rate;	 /* events/s offered; 0: as fast as backpressure
			    lets the host go (closed loop) */
	double linger;	 /* open loop: the longest a batch waits for its
			    events, in us (0: until it is full) */
	uint32_t batch;	 /* edits per batch */
	int64_t rows, cols;
	uint64_t seed;
	uint32_t capacity;
	uint32_t budget;
	uint32_t outbox_bound;
	double panic_rate; /* share of projection rows that fail (grid.h) */
	bool quiet;	   /* no progress lines */
	const char *json;  /* files, or NULL */
	const char *csv;
	/* place: makes the placement instead of parsing `placement` (a
	 * calibrated balanced one); NULL: sc_placement_parse */
	int (*make_placement)(void *ctx, const struct sc_graph *g,
			      struct sc_placement **out);
	void *place_ctx;
	uint32_t credits;   /* run --credits: the MPI link's window; 0:
			       its default */
	double units_every; /* run --units-every S; 0: none */
	bool units;	    /* run --units: the unit table at the end */
	const char *trace;  /* run --trace FILE, or NULL */
	struct sc_timeline *timeline; /* made for --trace, or NULL */
};

/* One progress sample. */
struct sample {
	double t;	 /* seconds since the start */
	uint64_t events; /* edits done (their batches came through) */
	double eps;	 /* edits per second in the interval */
	double p50_us, p99_us;
	double fill; /* frames in rings / room of all edges */
};

/* The machine's floor under an open-loop run (run_floor): how late a
 * bare sleep wakes at the run's interval, and one batch's service time on
 * the idle runtime. */
struct run_floor {
	bool measured;	       /* only with --rate */
	double sleep_us;       /* the interval slept */
	uint32_t sleeps;       /* wake-ups measured */
	double wake_p50_us;    /* lateness past the due time */
	double wake_p99_us;    /* ... */
	uint32_t services;     /* batches served one at a time */
	double service_p50_us; /* submit -> output, the median */
};

struct run_result {
	uint64_t events;  /* edits submitted (and, at idle, done) */
	uint64_t batches; /* batches submitted */
	double seconds;	  /* first submit to idle */
	double eps;	  /* events / seconds */
	/* Per event: from its arrival (open loop: its due time on the
	 * schedule; closed loop: its batch's submit) to its output. */
	double p50_us, p90_us, p99_us, p999_us, max_us;
	double achieved_eps; /* open loop: the rate the schedule was kept */
	bool rate_short;     /* achieved_eps < 95% of the offered rate */
	struct run_floor floor;
	int interrupted; /* the signal that ended the run early, or 0 */
	uint64_t turns, kicks, efull;
	uint64_t frames; /* frames the units' polls took (all edges) */
	uint32_t units, edges;
	bool ok;	  /* output == reference, stamps all seen */
	char why[512];	  /* when not ok */
	struct sample *s; /* progress samples (the caller frees) */
	size_t ns, cap_s;
	/* Across ranks (rank 0): every rank's figures, and whether rank 0 read
	 * the stamps (the totals output runs there): else no latency is
	 * measured, and the progress line counts the events submitted. */
	int nranks;		       /* 1 in one process */
	const struct rank_figs *ranks; /* nranks of them (the run's own
					* memory), or NULL */
	bool latency_measured;
};

/* The defaults of run (and place). */
void run_defaults(struct run_cfg *c);

/* One run of the grid workload as cfg says, into *r; 0 or an exit code. */
int run_once(const struct run_cfg *cfg, struct run_result *r);

/* --- run's Nexmark workload (subcirc_nexmark.c) ---------------------------
 */

extern const char usage_run_nexmark[];

/* Whether run's arguments ask for --workload nexmark. */
bool run_is_nexmark(int argc, char **argv);

/* `subcirc run --workload nexmark ...`; the exit code. */
int cmd_run_nexmark(int argc, char **argv);

/* --- unit statistics (subcirc_units.c) -------------------------------------
 */

/* run's --units and --units-every S; true if argv[i] was one. */
bool units_parse_opt(struct args *a, struct run_cfg *c);

/* The unit table (sc_exec_snapshot, sc_runtime_stats) on stdout: every
 * --units-every seconds since t0 (call it often), and at the end. */
void units_tick(const struct run_cfg *c, struct sc_runtime *rt, uint64_t t0,
		uint64_t now);
void units_print(const struct run_cfg *c, struct sc_runtime *rt,
		 double elapsed_s);

/* --- reports (subcirc_report.c) --------------------------------------------
 */

/* An output file, created (or truncated) before anything runs, so a bad
 * path wastes no run: the stream, or exit 2 naming option opt and the
 * path. NULL for a NULL path; "-" is stdout (once: a second "-" is exit
 * 2), and the text of report_text moves to stderr. */
FILE *open_out(const char *cmd, const char *opt, const char *path);

/* --trace (tools/subcirc_run.c): a started timeline with a track per
 * worker and the host (0, or exit 3 after a message); write it to f and
 * free it (f may be NULL: only free; 0 or exit 3); and, from the host
 * loop, sample the edges' fill and the events through per second at
 * most every millisecond (last_ns, last_events: the caller's memory). */
/* Whether a unit of rt panicked: 0, or its name and message on stderr
 * and EXIT_LIBRARY (tools/subcirc_run.c). */
int runtime_check_alive(struct sc_runtime *rt);
int trace_open(uint32_t workers, struct sc_timeline **out);
int trace_close(struct sc_timeline *tl, FILE *f);
void trace_sample(struct sc_timeline *tl, struct sc_runtime *rt, uint64_t now,
		  uint64_t *last_ns, uint64_t *last_events, uint64_t events);

/* Flush and close an output file (NULL: nothing; stdout is flushed, not
 * closed); a write that failed on
 * the way (the stream's error flag), a failed flush or close prints the
 * path and returns EXIT_LIBRARY; else 0. */
int close_out(const char *cmd, const char *path, FILE *f);

/* Where the human-readable text (progress, summary, tables) goes: stdout,
 * or stderr once open_out gave stdout to an output file ("-"). */
FILE *report_text(void);

/* The version of run's JSON: 2 added schema, config, host, latency
 * (per event, p50..max), rate, floor and interrupted (1: flat fields). */
#define RUN_JSON_SCHEMA 2

/* The writers write into an open stream; close_out says whether it all
 * reached the file. */
void run_print_summary(const struct run_cfg *c, const struct run_result *r);
void run_write_json(const struct run_cfg *c, const struct run_result *r,
		    FILE *f);
void run_write_csv(const struct run_result *r, FILE *f);

/* --- across ranks (subcirc_mpi.c) ------------------------------------------
 * SPMD under mpirun: every rank parses the same arguments, builds the same
 * graph and placement and runs its own replicas; the host (submissions,
 * progress line, summary, files) is rank 0's. */

/* The ranks the launcher started (OMPI_COMM_WORLD_SIZE, PMI_SIZE), read
 * from the environment without starting MPI; 1 outside mpirun. */
uint32_t ranks_launched(void);

/* Whether subcirc was built with MPI (sc_mpi). */
bool ranks_built(void);

/* For a placement over `span` ranks: exit 2, saying why, when it cannot
 * run here (several ranks outside mpirun, or without MPI; a launch of
 * another number of ranks; a placement on one rank under mpirun -np N >
 * 1); else initialise MPI when span > 1. Returns this rank (0 alone). */
int ranks_start(const char *cmd, uint32_t span);

/* ranks_start for the placement `spec` of g (already checked). */
int ranks_start_placement(const char *cmd, const struct sc_graph *g,
			  const char *spec, uint64_t seed);

/* Whether ranks_start initialised MPI; this rank; the number of ranks. */
bool ranks_active(void);
int ranks_rank(void);
int ranks_size(void);

/* MPI_Finalize, when ranks_start initialised MPI (main calls it). */
void ranks_stop(void);

struct sc_runtime_opts;

/* sc_runtime_create, or across ranks sc_mpi_runtime_create (*mpi its
 * handle, else NULL) with a link of `credits` frames in flight and as
 * many kept beyond per remote edge (0: the link's defaults, 32 and 64);
 * destroy either (collective across ranks). */
int ranks_runtime_create(struct sc_graph *g, const struct sc_placement *p,
			 const struct sc_runtime_opts *ro, uint32_t credits,
			 struct sc_runtime **rt, void **mpi);
void ranks_runtime_destroy(struct sc_runtime *rt, void *mpi);

/* One rank's figures, gathered to rank 0 after the run. */
struct rank_figs {
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
void ranks_link_figs(void *mpi, struct rank_figs *f);

/* This rank's figures of a run into f, zeroed first: rt's turns and
 * frames delivered (none when rt is NULL), the link's counters of mpi,
 * and the replicas of placement p (may be NULL) placed on this rank. The
 * caller adds the stamp and whether a check failed. */
void ranks_figs_of(struct sc_runtime *rt, void *mpi,
		   const struct sc_placement *p, struct rank_figs *f);

/* Every rank's figures into all[0..ranks_size()) on rank 0 (after the
 * runtime is destroyed; a deadline of 60 s, 5 s when mine->failed: a
 * rank may have died); 0 or EXIT_LIBRARY. */
int ranks_gather(const struct rank_figs *mine, struct rank_figs *all);

/* Rank 0's exit code rc to every rank: each returns its own failure, or
 * rank 0's code. Collective (after ranks_gather; 60 s, 5 s when rc). */
int ranks_agree(int rc);

/* Sums over n ranks (stamp and waves: the largest). */
void ranks_figs_total(const struct rank_figs *all, int n,
		      struct rank_figs *sum);

/* v[0..n) summed over the ranks, on every rank (after the runtime is
 * destroyed; a deadline of 60 s); 0 or EXIT_LIBRARY. */
int ranks_sum(uint64_t *v, size_t n);

/* End the whole job with exit code rc (MPI_Abort), or this process
 * alone without MPI. */
void __attribute__((noreturn)) ranks_abort(int rc);

/* `stress` under mpirun (subcirc_stress_ranks.c): what cmd_stress parsed
 * that applies across ranks; every placement spans every rank. */
struct stress_ranks_cfg {
	uint64_t seed_lo, seed_hi;
	uint32_t workers[MAX_LIST];
	size_t nw;
	char places[MAX_LIST][48];
	size_t np;
	bool grid, random; /* the workloads */
	uint64_t events;   /* submissions per case; 0: from the seed */
	bool keep_going, quiet, verbose;
	bool plant; /* the reference misses the last submission */
	const char *json;
	FILE *json_f;
};

/* The campaign across ranks; the exit code (the same on every rank). */
int stress_ranks(const struct stress_ranks_cfg *c, const char *exe);

/* The per-rank table of the summary; the JSON's "ranks" member, then
 * sep. */
void ranks_print(FILE *o, const struct rank_figs *all, int n);
void ranks_write_json(FILE *f, const struct rank_figs *all, int n,
		      const char *sep);

/* --- the commands ----------------------------------------------------------
 */

/* Each takes the arguments after its name; returns the exit code. */
int cmd_run(int argc, char **argv);
int cmd_place(int argc, char **argv);
int cmd_stress(int argc, char **argv, const char *exe);

#endif /* SC_TOOLS_SUBCIRC_H */
