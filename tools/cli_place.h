/*
 * cli_place.h - what the two files of `subcirc place` share (not an
 * installed header): the sweep (cli_place.c) and its outputs
 * (cli_place_out.c: table, ranking, JSON, CSV, gnuplot, DOT), and the
 * plot of a saved report (cli_place_replot.c).
 *
 * The two call each other, and only each other: the sweep hands its
 * result to the outputs, and the DOT output asks the sweep for each
 * case's placement (cli_place_make), so that it draws exactly the
 * placements that ran, made the one way the sweep makes them. They are
 * one module in two files; nothing else includes this header.
 *
 * A sweep is every placement x worker count x budget of one workload. It
 * runs in rounds: a warm-up round (each case once, for --warmup seconds,
 * not kept), then --reps rounds in each of which every case runs once for
 * --time-per-case seconds, so a noisy moment of a shared machine hits the
 * cases of a round alike and per-round ratios pair up (units/rank.h).
 */
#ifndef SC_TOOLS_CLI_PLACE_H
#define SC_TOOLS_CLI_PLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "units/rank.h"
#include "tools/cli.h"
#include "tools/cli_grid.h"
#include "units/sweep.h"
#include "units/workload.h"

/* A workload that place sweeps. The grid runs through its direct path
 * (cli_grid_run); every other workload (a built-in of
 * bench/workloads/builtin.h or a plugin) through the library's sweep
 * (units/sweep.h), its result mapped onto the cases below, and `run`,
 * `graph`, `calibrate` unused (NULL). */
struct cli_place_workload {
	const char *name;
	const char *about; /* one line for the outputs */
	/* One run as cfg says into *r: 0 or an exit code (cli.h). */
	int (*run)(const struct cli_run_cfg *cfg, struct cli_run_result *r);
	/* The workload's graph as cfg sizes it, for --dot and the
	 * calibration; graph_free frees what *owner holds. 0 or SC_E*. */
	int (*graph)(const struct cli_run_cfg *cfg, void **owner,
		     struct sc_graph **g);
	void (*graph_free)(void *owner);
	/* The measured cost of each of the n nodes of its graph
	 * (sc_placement_calibrate on a short prefix). 0 or SC_E*. */
	int (*calibrate)(const struct cli_run_cfg *cfg, double *cost, size_t n);
};

/* One case of the sweep and its repetitions. */
struct cli_place_case {
	char placement[32]; /* as run: "balanced" resolved to balanced:W */
	char label[80];	    /* "chains x2 b64": for the ranking */
	uint32_t workers, budget;
	struct cli_run_result *r; /* reps results (their samples freed) */
	double *eps;		  /* events/s of each repetition */
	uint32_t done;		  /* repetitions run */
	bool ok;		  /* every repetition matched the reference */
};

/* The sweep, as the command line set it. */
struct cli_place_sweep {
	const struct cli_place_workload *w;
	struct cli_run_cfg base; /* rows, cols, batch, seed, capacity, rate */
	struct cli_place_case *cases;
	size_t n;
	uint32_t reps;
	double time_per_case; /* seconds; 0: by base.events */
	double warmup;	      /* seconds of the warm-up round; 0: none */
	uint32_t cores;
	double *cost; /* calibrated node costs (for balanced), or NULL */
	size_t ncost;
	double seconds; /* the sweep's wall time */
	/* A workload other than the grid: an instance whose graph --dot
	 * draws (cli_workload_open), else NULL. */
	struct sc_workload *inst;
};

/* The medians of a case's figures (over its repetitions). */
struct cli_place_figures {
	double p50_us, p99_us, p99_lo, p99_hi;
	double turns, kicks, frames_per_turn;
	uint32_t units, edges;
};
void cli_place_figures(const struct cli_place_case *c,
		       struct cli_place_figures *f);

/* The table, then one ranking per worker count, on stdout. */
void cli_place_print(const struct cli_place_sweep *s);

/* The sweep's results as members of the report's "results" (j):
 * seconds, calibrated, "cases" (each with its "reps") and "rankings";
 * the sweep as CSV into f (cli_close_out says whether it got there). */
void cli_place_json_results(const struct cli_place_sweep *s,
			    struct cli_json *j);
void cli_place_csv(const struct cli_place_sweep *s, FILE *f);

/* What a place plot draws: a case's median and min-max of events/s and
 * of p99 latency over its repetitions. */
struct cli_plot_case {
	char label[80]; /* "chains x2 b64" */
	uint32_t workers;
	double eps, eps_lo, eps_hi;    /* events/s */
	double p99_us, p99_lo, p99_hi; /* us */
};

/* A whole plot: from a sweep that ran (cli_place_plot_file) or from its
 * report read back (cli_place_replot). */
struct cli_place_plot {
	const struct cli_plot_case *cases;
	size_t n;
	char workload[64];
	uint32_t reps;
	bool open_loop;
	char loop[64]; /* "open loop at R events/s" when open_loop */
	struct cli_plot_meta meta;
};

/* Draw p through gnuplot into path (checked by cli_plot_check): 0, or
 * CLI_EXIT_LIBRARY (said). */
int cli_place_plot_draw(const struct cli_place_plot *p, const char *path);

/* The sweep's plot, captioned from its report rep. */
int cli_place_plot_file(const struct cli_place_sweep *s,
			const struct cli_report *rep, const char *path);

/* --replot: the plot of a saved place --json report, nothing run: 0, 2
 * (a report missing, unreadable, not JSON, not a place report: said,
 * naming the file) or 3 (gnuplot failed). */
int cli_place_replot(const char *json, const char *path);

/* Every distinct placement of the sweep as a DOT digraph into f:
 * 0 or CLI_EXIT_LIBRARY (said). */
int cli_place_dot(const struct cli_place_sweep *s, FILE *f);

/* Make case c's placement of g (the hook of run_cfg): parse, or the
 * calibrated balanced one. */
int cli_place_make(const struct cli_place_sweep *s,
		   const struct cli_place_case *c, const struct sc_graph *g,
		   struct sc_placement **out);

#endif /* SC_TOOLS_CLI_PLACE_H */
