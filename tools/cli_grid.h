/*
 * cli_grid.h - one run of the live grid workload (tools/cli_grid.c):
 * a grid circuit (bench/workloads/grid.h) placed on worker threads, fed
 * batches open or closed loop, its latency measured per event and its
 * output checked against the workload's from-scratch reference.
 *
 * Below the commands that share it: `subcirc run` parses a cli_run_cfg
 * and reports one result, `subcirc place` sweeps many. It calls the core
 * (cli.h), the unit table (cli_units.h) and the ranks (cli_ranks.h),
 * never a command.
 */
#ifndef SC_TOOLS_CLI_GRID_H
#define SC_TOOLS_CLI_GRID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/cli.h"

struct sc_graph;
struct sc_placement;
struct sc_timeline;
struct cli_rank_figs;

struct cli_run_cfg {
	uint32_t workers;
	char placement[32];
	uint64_t events; /* 0: by time */
	double seconds;	 /* 0: by events */
	double rate;	 /* events/s offered; 0: as fast as backpressure
			    lets the host go (closed loop) */
	double linger;	 /* open loop: the longest a batch waits for its
			    events, in us (0: until it is full) */
	double warmup;	 /* run --warmup S: the events of batches submitted
			    in the run's first S seconds are left out of its
			    latency figures (0: none) */
	uint32_t batch;	 /* edits per batch */
	int64_t rows, cols;
	uint64_t seed;
	uint32_t capacity;
	uint32_t budget;
	uint32_t outbox_bound;
	double panic_rate; /* share of projection rows that fail (grid.h) */
	bool quiet;	   /* no progress lines (cli_progress_line) */
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
	const char *plot;	      /* run --plot FILE, or NULL */
	/* run --plot: the run's latency histogram is copied here at its
	 * end (the caller's memory), or NULL: not kept */
	struct cli_hist_counts *hist_out;
};

/* The machine's floor under an open-loop run (run_floor): how late a
 * bare sleep wakes at the run's interval, and one batch's service time on
 * the idle runtime. */
struct cli_run_floor {
	bool measured;	       /* only with --rate */
	double sleep_us;       /* the interval slept */
	uint32_t sleeps;       /* wake-ups measured */
	double wake_p50_us;    /* lateness past the due time */
	double wake_p99_us;    /* ... */
	uint32_t services;     /* batches served one at a time */
	double service_p50_us; /* submit -> output, the median */
};

struct cli_unit_longest;

struct cli_run_result {
	uint64_t events;  /* edits submitted (and, at idle, done) */
	uint64_t batches; /* batches submitted */
	double seconds;	  /* first submit to idle */
	double eps;	  /* events / seconds */
	/* Per event: from its arrival (open loop: its due time on the
	 * schedule; closed loop: its batch's submit) to its output. */
	double p50_us, p90_us, p99_us, p999_us, max_us;
	uint64_t latency_events; /* the events those figures count */
	double achieved_eps;	 /* open loop: the rate the schedule was kept */
	bool rate_short;	 /* achieved_eps < 95% of the offered rate */
	struct cli_run_floor floor;
	int interrupted; /* the signal that ended the run early, or 0 */
	uint64_t turns, kicks, efull;
	uint64_t frames; /* frames the units' polls took (all edges) */
	uint32_t units, edges;
	bool ok;	      /* output == reference, stamps all seen */
	char why[512];	      /* when not ok */
	struct cli_sample *s; /* progress samples (the caller frees) */
	size_t ns, cap_s;
	/* Across ranks (rank 0): every rank's figures, and whether rank 0 read
	 * the stamps (the totals output runs there): else no latency is
	 * measured, and the progress line counts the events submitted. */
	int nranks;			   /* 1 in one process */
	const struct cli_rank_figs *ranks; /* nranks of them (the run's own
					    * memory), or NULL */
	bool latency_measured;
	/* Every unit's longest turn (cli_units.h; the caller frees it, as
	 * s), for the report. */
	struct cli_unit_longest *longest;
	size_t nlongest;
};

/* The defaults of run (and place). */

/* The defaults of run (and place): every core, chains, batches of 256 on
 * a 256 x 256 grid, seed 1, edges of 64 frames, a budget of 64. */
void cli_grid_defaults(struct cli_run_cfg *c);

/* One run of the grid workload as cfg says, into *r; 0 or an exit code.
 * r->s (the progress samples) is the caller's to free, also after a
 * failure. */
int cli_grid_run(const struct cli_run_cfg *cfg, struct cli_run_result *r);

/* The options shared by run and place (--batch, --rows, --cols, --seed,
 * --capacity, --budget) into c; true if argv[i] was one. */
bool cli_grid_parse_opt(struct cli_args *a, struct cli_run_cfg *c);

#endif /* SC_TOOLS_CLI_GRID_H */
