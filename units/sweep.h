/*
 * sweep.h - ranking the placements of a workload: every placement x
 * worker count x budget run in rounds, measured, and ranked per worker
 * count with ties where the measurements cannot tell two cases apart.
 * `subcirc place` is this call with a command line around it; a C
 * program ranks the placements of its own circuit the same way.
 *
 * Rounds. A warm-up round (each case once, for opts.warmup seconds, not
 * kept), then opts.reps rounds in each of which every case runs once, in
 * the same order. A noisy moment of a shared machine then hits the cases
 * of one round alike, and the ratio of two cases is taken round by round
 * (units/rank.h: the median of the per-round ratios, +- half their range).
 *
 * A case-run. A fresh instance of the workload (sc_workload_create with
 * the caller's env, so every run sees the same input), its graph placed as
 * the case says, a runtime with the case's workers, budget and the sweep's
 * edge capacity (tick mode for a SC_WORKLOAD_TICKS workload); then the
 * workload's submissions (sc_workload_next), each with
 * sc_runtime_submit_wait, until opts.seconds have passed, or
 * opts.submissions were made, or the workload ends; then it waits until
 * the runtime is idle, and everything is destroyed. Each submission is
 * fed before the next is asked for, the calibration's too, and no output
 * is read: a caller may set SC_WORKLOAD_ENV_IN_ORDER and
 * SC_WORKLOAD_ENV_STREAM in env (units/workload.h), so that a workload
 * keeps what it would keep under a plain run. Measured: rows
 * submitted (the events), wall seconds and process CPU seconds from the
 * first submission to idle, events/s, events per CPU-second, and the
 * runtime's turns, frames, units and edges (sc_runtime_stats).
 *
 * Placements. opts.placements are sc_placement_parse specs, checked on
 * the workload's graph before anything runs. "balanced" is a unit per
 * worker by measured cost: the graph is calibrated once
 * (sc_placement_calibrate over the workload's first
 * SC_SWEEP_CALIBRATE_STEPS submissions, through sc_workload_gen on an
 * instance of its own), and the case with W workers runs balanced:W from
 * those costs; "balanced:K" keeps K units, also calibrated. Row counts
 * are deterministic, so a calibrated placement is the same every run.
 *
 * The ranking. Per worker count, in the order the counts are given: the
 * cases with that count, best median events/s first, each compared with
 * the one above it (sc_rank_order: a tie where their min-max intervals
 * overlap, else how many times faster the one above ran).
 *
 * Threads. One host thread (the caller's) submits; the runtime's workers
 * run the units. A workload's instance is used by that thread only.
 */
#ifndef SC_UNITS_SWEEP_H
#define SC_UNITS_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "units/rank.h"
#include "units/workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Submissions the calibration of "balanced" feeds the single circuit. */
#define SC_SWEEP_CALIBRATE_STEPS 32
/* The most repetitions (rounds) and workers of a case. */
#define SC_SWEEP_MAX_REPS    99u
#define SC_SWEEP_MAX_WORKERS 1024u

struct sc_sweep_opts {
	const char *const *placements; /* specs (see the top), at least one */
	size_t nplacements;
	const uint32_t *workers; /* worker counts, each 1..MAX_WORKERS */
	size_t nworkers;
	const uint32_t *budgets; /* frames per turn, each >= 1; none: the
				    runtime's default alone */
	size_t nbudgets;
	uint32_t reps;		/* rounds kept, 1..SC_SWEEP_MAX_REPS */
	double seconds;		/* each case-run at most; 0: no limit */
	uint64_t submissions;	/* each case-run at most; 0: no limit (with
				   seconds 0 too: until the workload ends) */
	double warmup;		/* seconds of each warm-up run; 0: no warm-up */
	uint64_t seed;		/* of the random placements ("random:N") */
	uint32_t edge_capacity; /* frames per edge, a power of two; 0: the
				   runtime's default */
	/* Optional: asked before each case-run; true ends the sweep there
	 * (result->interrupted), what ran is kept and ranked. */
	bool (*stop)(void *ctx);
	/* Optional: before each case-run; round 0 is the warm-up, `done` the
	 * kept runs finished of `total`. */
	void (*progress)(void *ctx, uint32_t round, size_t icase, size_t done,
			 size_t total);
	void *ctx;
};

/* One case-run's figures. */
struct sc_sweep_rep {
	uint64_t submissions;
	uint64_t rows;		 /* rows submitted: the events */
	double seconds;		 /* wall, first submission to idle */
	double cpu_seconds;	 /* the process's, over the same span */
	double events_per_s;	 /* rows / seconds */
	double events_per_cpu_s; /* rows / cpu_seconds */
	uint64_t turns, frames;	 /* sc_runtime_stats */
	uint32_t units, edges;
};

/* One case and its repetitions. */
struct sc_sweep_case {
	char placement[32]; /* as run: "balanced" resolved to balanced:W */
	char label[80];	    /* "chains x2 b64": the ranking's name */
	uint32_t workers, budget;
	struct sc_sweep_rep *reps; /* done of them, in round order */
	double *eps;		   /* events/s of each, the ranked figure */
	uint32_t done;
	struct sc_rank_summary eps_summary; /* median, min-max of eps */
	struct sc_sweep_rep median;	    /* each figure's median */
};

/* The ranking of one worker count: cases[k] is the sweep's case
 * index[k]; order[] indexes cases[] (sc_rank_order), best first. */
struct sc_sweep_ranking {
	uint32_t workers;
	size_t n;
	struct sc_rank_case *cases;
	size_t *index;
	struct sc_rank_entry *order;
};

struct sc_sweep_result {
	struct sc_sweep_case *cases; /* placement x workers x budget, in
					that nesting order */
	size_t ncases;
	struct sc_sweep_ranking *rankings; /* one per worker count that
					      has a case with a repetition */
	size_t nrankings;
	double *cost; /* the calibrated node costs, or NULL (no balanced) */
	size_t ncost;
	double seconds;	  /* the sweep's wall time, warm-up included */
	bool interrupted; /* opts.stop ended it */
};

/*
 * sc_sweep_run - rank the placements of def's workload (env: its seed,
 * events hint and arguments, borrowed for every instance) as opts say,
 * into *result, which the caller frees with sc_sweep_result_free after
 * any return (it is zeroed when nothing ran). Returns
 *   0             *result: every case, and the rankings;
 *   SC_EINVAL     NULL def, env, opts or result; opts naming the field:
 *                 no placements, a placement that is NULL, longer than
 *                 31 bytes or that sc_placement_parse refuses on the
 *                 workload's graph (its reason kept), no worker counts
 *                 or one of 0 or above SC_SWEEP_MAX_WORKERS, a budget of
 *                 0, reps 0 or above SC_SWEEP_MAX_REPS, seconds or
 *                 warmup negative or not finite, an edge capacity that
 *                 is not a power of two;
 *   other         what sc_workload_create returned for the first
 *                 instance (a workload that cannot be made: its message
 *                 kept), or the calibration's error; or the first error
 *                 of a case-run (the workload's next, the placement, the
 *                 runtime, a submission, a unit's panic: SC_EPANIC),
 *                 the message naming the case; the cases run before it
 *                 are in *result, ranked;
 *   SC_ENOMEM
 */
int sc_sweep_run(const struct sc_workload_def *def, struct sc_workload_env *env,
		 const struct sc_sweep_opts *opts,
		 struct sc_sweep_result *result);

/* sc_sweep_result_free - what sc_sweep_run put in *r, which is zeroed.
 * NULL is allowed. */
void sc_sweep_result_free(struct sc_sweep_result *r);

#ifdef __cplusplus
}
#endif

#endif /* SC_UNITS_SWEEP_H */
