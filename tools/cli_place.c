/*
 * cli_place.c - `subcirc place`: every placement strategy x worker
 * count x budget on a workload, warmed up, repeated in rounds, each case
 * with its median and min-max, and ranked in words with ties where the
 * intervals overlap (units/rank.h; the outputs in cli_place_out.c).
 *
 * "balanced" places by measured cost: the workload's graph is calibrated
 * once (sc_placement_calibrate: its single circuit fed a short prefix of
 * the workload, node costs from the row counts, which are deterministic),
 * and each case with W workers gets balanced:W from those costs, a unit
 * per worker; "balanced:K" keeps K units, also calibrated.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/harness.h"
#include "bench/workloads/grid.h"
#include "operators/error.h"
#include "tools/cli.h"
#include "tools/cli_cmd.h"
#include "tools/cli_grid.h"
#include "tools/cli_place.h"
#include "tools/cli_workload.h"
#include "units/placement.h"

#define PLACE_MAX_REPS 99
/* Submissions of the calibration run (each a batch of --batch edits). */
#define PLACE_CALIBRATE_STEPS 32

const char cli_usage_place[] =
    "usage: subcirc place [options]\n"
    "  every placement strategy x worker count x budget on a workload,\n"
    "  warmed up and repeated in rounds (each round runs every case once,\n"
    "  so noise hits them alike); per case the median events/s and its\n"
    "  min-max over the repetitions, latency, turns, kicks, frames per\n"
    "  turn; then, per worker count, a ranking in words (\"chains x2 b64\n"
    "  ran 1.31 +- 0.04 times faster than single x2 b64\"), where cases\n"
    "  whose min-max intervals overlap are called a tie.\n"
    "\n"
    "  --workload W      grid (default), a built-in (nexmark:q4, random,\n"
    "                    ...) or a plugin's path (./libmine.so); any but\n"
    "                    the grid runs the library's sweep (units/sweep.h):\n"
    "                    events are its rows, no latency nor reference\n"
    "                    check, --events is its size hint (runs go to its\n"
    "                    end), --rows --cols --batch --rate do not apply\n"
    "  --workload-arg K=V  an argument of the workload (repeatable)\n"
    "  --placements LIST comma list (default single,per-node,chains,\n"
    "                    random:3,sharded:K for K = 2 .. cores, balanced)\n"
    "                    balanced: calibrated costs, a unit per worker;\n"
    "                    balanced:K: calibrated, K units\n"
    "  --workers LIST    worker counts (default 1 and the cores)\n"
    "  --budgets LIST    frames per turn (default 64,256)\n"
    "  --time-per-case S seconds each repetition runs (default 0.2)\n"
    "  --events N        or: cell edits each repetition submits\n"
    "  --warmup S        seconds of the warm-up round per case, not kept\n"
    "                    (default 0.05; 0: none)\n"
    "  --reps N          repetitions (rounds) per case (default 5, 1..99)\n"
    "  --rate E          offer E events/s (open loop): latency at a fixed\n"
    "                    rate (default: closed loop, as fast as it goes)\n"
    "  --batch R --rows N --cols N --seed S --capacity C   as for run\n"
    "                    (--edge-capacity C is --capacity C)\n"
    "  --json FILE       the report: configuration, every case with\n"
    "                    every repetition, the rankings\n"
    "                    (tools/report.schema.json)\n"
    "  --csv FILE        one line per repetition\n"
    "  --plot FILE       events/s (k or M) and p99 latency (ms) per case,\n"
    "                    a colour per worker count, min-max bars, and a\n"
    "                    caption (date, host, load, version), through\n"
    "                    gnuplot (FILE.png or .svg)\n"
    "  --replot J.json   with --plot only: draw the plot of a saved\n"
    "                    place --json report; nothing runs\n"
    "  --dot FILE        every placement of the sweep as Graphviz DOT\n"
    "                    (a digraph each: units as clusters, edges bold\n"
    "                    where they cross units)\n"
    "  --quiet           no progress line (on stderr, a line a second)\n"
    "  --version         the version and commit\n"
    "  Files are created before the runs; a missing gnuplot is refused\n"
    "  before the runs too (exit 2). Higher events/s is better, lower\n"
    "  latency is better. SIGINT, SIGTERM or SIGHUP ends the sweep: the\n"
    "  cases finished are ranked and written.\n";

/* --- the workloads ---------------------------------------------------------
 */

static int
grid_graph(const struct cli_run_cfg *cfg, void **owner, struct sc_graph **g)
{
	struct sc_grid_opts go = {
	    .rows = cfg->rows, .cols = cfg->cols, .seed = cfg->seed};
	struct sc_grid *gr = NULL;
	int rc = sc_grid_create(&go, &gr);

	if (rc)
		return rc;
	*owner = gr;
	*g = sc_grid_graph(gr);
	return 0;
}

static void
grid_graph_free(void *owner)
{
	(void)sc_grid_destroy(owner);
}

static int
grid_calibrate(const struct cli_run_cfg *cfg, double *cost, size_t n)
{
	struct sc_grid_opts go = {
	    .rows = cfg->rows, .cols = cfg->cols, .seed = cfg->seed};
	struct sc_grid *gr = NULL;
	struct sc_grid_feed feed;
	int rc = sc_grid_create(&go, &gr);

	if (rc)
		return rc;
	feed.gr = gr;
	feed.edits = cfg->batch;
	rc = sc_placement_calibrate(sc_grid_graph(gr), sc_grid_settle_step,
				    &feed, PLACE_CALIBRATE_STEPS, cost, n);
	(void)sc_grid_destroy(gr);
	return rc;
}

static const struct cli_place_workload place_workloads[] = {
    {.name = "grid",
     .about = "cell edits -> sums by row and column -> projection -> "
	      "totals",
     .run = cli_grid_run,
     .graph = grid_graph,
     .graph_free = grid_graph_free,
     .calibrate = grid_calibrate},
};

/* --- placements ------------------------------------------------------------
 */

/* What the hook needs: the sweep and the case. */
struct place_hook {
	const struct cli_place_sweep *s;
	const struct cli_place_case *c;
};

static int
place_hook_make(void *ctx, const struct sc_graph *g, struct sc_placement **out)
{
	const struct place_hook *h = ctx;

	return cli_place_make(h->s, h->c, g, out);
}

int
cli_place_make(const struct cli_place_sweep *s, const struct cli_place_case *c,
	       const struct sc_graph *g, struct sc_placement **out)
{
	unsigned long k;

	if (strncmp(c->placement, "balanced:", 9) != 0 || !s->cost)
		return sc_placement_parse(g, c->placement, s->base.seed, out);
	k = strtoul(c->placement + 9, NULL, 10); /* checked at parse */
	return sc_placement_balanced(g, (uint32_t)k, s->cost, s->ncost, out);
}

/* The calibration, once per sweep, when a balanced case is in it. */
static int
place_calibrate(struct cli_place_sweep *s)
{
	void *owner = NULL;
	struct sc_graph *g = NULL;
	bool any = false;
	int rc;

	for (size_t i = 0; s->cases && i < s->n; i++)
		any = any || !strncmp(s->cases[i].placement, "balanced", 8);
	if (!any)
		return 0;
	if ((rc = s->w->graph(&s->base, &owner, &g)) != 0)
		return cli_lib_error("the workload's graph", rc);
	s->ncost = sc_graph_node_count(g);
	s->w->graph_free(owner);
	if (!(s->cost = calloc(s->ncost, sizeof(*s->cost))))
		return cli_lib_error("calloc", SC_ENOMEM);
	if ((rc = s->w->calibrate(&s->base, s->cost, s->ncost)) != 0)
		return cli_lib_error("sc_placement_calibrate", rc);
	return 0;
}

/* --- the sweep -------------------------------------------------------------
 */

/* One run of case c; `keep` records it as a repetition. Returns 0 or an
 * exit code. */
static int
place_run(struct cli_place_sweep *s, struct cli_place_case *c, double seconds,
	  bool keep)
{
	struct place_hook h = {.s = s, .c = c};
	struct cli_run_cfg cfg = s->base;
	struct cli_run_result r;
	int rc;

	cfg.workers = c->workers;
	cfg.budget = c->budget;
	(void)snprintf(cfg.placement, sizeof(cfg.placement), "%s",
		       c->placement);
	cfg.make_placement = place_hook_make;
	cfg.place_ctx = &h;
	cfg.seconds = seconds;
	cfg.quiet = true;
	if (seconds > 0)
		cfg.events = 0;
	rc = s->w->run(&cfg, &r);
	free(r.s);
	free(r.longest);
	r.longest = NULL;
	r.nlongest = 0;
	r.s = NULL;
	r.ns = r.cap_s = 0;
	if (rc) {
		(void)fprintf(stderr, "subcirc place: case %s failed\n",
			      c->label);
		return rc;
	}
	if (!r.ok)
		(void)fprintf(stderr,
			      "subcirc place: case %s: output differs from "
			      "the reference: %s\n",
			      c->label, r.why);
	/* A repetition a signal cut short is no figure of its case. */
	if (!keep || r.interrupted)
		return 0;
	c->ok = c->ok && r.ok;
	c->r[c->done] = r;
	c->eps[c->done++] = r.eps;
	return 0;
}

/* The progress line: before each case, at most once a second. */
static void
place_progress(const struct cli_place_sweep *s, uint64_t t0, const char *what,
	       size_t i, size_t done, size_t total)
{
	static uint64_t last;
	uint64_t now = sc_bench_now_ns();

	if (last && now - last < 1000000000ull)
		return;
	last = now;
	cli_progress_line(
	    (double)(now - t0) / 1e9, (double)done / (double)total,
	    "%s, case %zu of %zu: %s", what, i + 1, s->n, s->cases[i].label);
}

static int
place_rounds(struct cli_place_sweep *s)
{
	uint64_t t0 = sc_bench_now_ns();
	size_t done = 0, total = s->n * s->reps;
	char what[48];
	int rc;

	/* The warm-up is short: the share done counts the rounds kept. */
	if (s->warmup > 0) {
		for (size_t i = 0; i < s->n && !cli_signal_caught(); i++) {
			place_progress(s, t0, "warm-up round", i, 0, total);
			if ((rc = place_run(s, &s->cases[i], s->warmup,
					    false)) != 0)
				return rc;
		}
	}
	/* A signal ends the sweep: what finished is ranked and written. */
	for (uint32_t k = 0; k < s->reps && !cli_signal_caught(); k++) {
		(void)snprintf(what, sizeof(what), "round %u of %u", k + 1,
			       s->reps);
		for (size_t i = 0; i < s->n && !cli_signal_caught();
		     i++, done++) {
			place_progress(s, t0, what, i, done, total);
			if ((rc = place_run(s, &s->cases[i], s->time_per_case,
					    true)) != 0)
				return rc;
		}
	}
	s->seconds = (double)(sc_bench_now_ns() - t0) / 1e9;
	return 0;
}

/* What the command line set beyond the sweep itself. */
struct place_args {
	char places[CLI_MAX_LIST][32];
	size_t np;
	uint32_t workers[CLI_MAX_LIST], budgets[CLI_MAX_LIST];
	size_t nw, nb;
	const char *json, *csv, *plot, *dot;
	const char *wspec; /* --workload; NULL: the grid */
	struct cli_workload_args wargs;
	bool by_events;
	bool quiet; /* no progress line */
};

/* --- any other workload: the library's sweep ------------------------------
 */

struct place_lib_ctx {
	const struct cli_place_sweep *s;
	uint64_t t0;
};

static bool
place_lib_stop(void *ctx)
{
	(void)ctx;
	return cli_signal_caught() != 0;
}

static void
place_lib_progress(void *ctx, uint32_t round, size_t icase, size_t done,
		   size_t total)
{
	const struct place_lib_ctx *p = ctx;
	char what[48];

	if (round == 0)
		(void)snprintf(what, sizeof(what), "warm-up round");
	else
		(void)snprintf(what, sizeof(what), "round %u of %u", round,
			       p->s->reps);
	place_progress(p->s, p->t0, what, icase, done, total);
}

/* A library case's repetitions as the outputs' (the same labels: both
 * nest placement x workers x budget). */
static void
place_lib_case(struct cli_place_case *c, const struct sc_sweep_case *lc)
{
	for (uint32_t k = 0; k < lc->done; k++) {
		const struct sc_sweep_rep *x = &lc->reps[k];
		struct cli_run_result *r = &c->r[k];

		memset(r, 0, sizeof(*r));
		r->events = x->rows;
		r->seconds = x->seconds;
		r->eps = x->events_per_s;
		r->turns = x->turns;
		r->frames = x->frames;
		r->units = x->units;
		r->edges = x->edges;
		r->ok = true;
		c->eps[k] = x->events_per_s;
	}
	c->done = lc->done;
}

/* The result into s: cases, wall time, calibrated costs. */
static int
place_lib_take(struct cli_place_sweep *s, const struct sc_sweep_result *r)
{
	for (size_t i = 0; i < r->ncases && i < s->n; i++)
		place_lib_case(&s->cases[i], &r->cases[i]);
	s->seconds = r->seconds;
	if (!r->cost)
		return 0;
	if (!(s->cost = calloc(r->ncost ? r->ncost : 1, sizeof(*s->cost))))
		return cli_lib_error("calloc", SC_ENOMEM);
	memcpy(s->cost, r->cost, r->ncost * sizeof(*s->cost));
	s->ncost = r->ncost;
	return 0;
}

/* Every case of s through sc_sweep_run on s->inst's workload. */
static int
place_lib_run(const struct place_args *pa, struct cli_place_sweep *s)
{
	const char *specs[CLI_MAX_LIST];
	struct place_lib_ctx pc = {.s = s, .t0 = sc_bench_now_ns()};
	/* The sweep feeds each submission before it asks for the next and
	 * reads no output (units/sweep.h): the same promises as a run's. */
	struct sc_workload_env env = {
	    .seed = s->base.seed,
	    .events = pa->by_events ? s->base.events : 0,
	    .flags = SC_WORKLOAD_ENV_IN_ORDER | SC_WORKLOAD_ENV_STREAM,
	    .args = pa->wargs.args,
	    .nargs = pa->wargs.n};
	struct sc_sweep_opts o = {.placements = specs,
				  .nplacements = pa->np,
				  .workers = pa->workers,
				  .nworkers = pa->nw,
				  .budgets = pa->budgets,
				  .nbudgets = pa->nb,
				  .reps = s->reps,
				  .seconds = s->time_per_case,
				  .warmup = s->warmup,
				  .seed = s->base.seed,
				  .edge_capacity = s->base.capacity,
				  .stop = place_lib_stop,
				  .progress = place_lib_progress,
				  .ctx = &pc};
	struct sc_sweep_result r;

	for (size_t i = 0; i < pa->np; i++)
		specs[i] = pa->places[i];
	int rc = sc_sweep_run(sc_workload_def(s->inst), &env, &o, &r);
	if (rc)
		(void)fprintf(stderr, "subcirc place: --workload %s: %s\n",
			      s->w->name, sc_errmsg());
	int trc = place_lib_take(s, &r);
	sc_sweep_result_free(&r);
	if (rc)
		return rc == SC_EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_LIBRARY;
	return trc;
}

/* The instance of --workload (refused before any run: exit 2, named) and
 * the outputs' description of it in *w. */
static int
place_lib_open(const struct place_args *pa, struct cli_place_sweep *s,
	       struct cli_place_workload *w)
{
	int rc = cli_workload_open(
	    "place", pa->wspec, &pa->wargs, s->base.seed,
	    pa->by_events ? s->base.events : 0,
	    SC_WORKLOAD_ENV_IN_ORDER | SC_WORKLOAD_ENV_STREAM, &s->inst);

	if (rc)
		return rc;
	const struct sc_workload_def *def = sc_workload_def(s->inst);
	memset(w, 0, sizeof(*w));
	w->name = pa->wspec;
	w->about = def->about ? def->about : def->name;
	s->w = w;
	return 0;
}

/* --- the command line ------------------------------------------------------
 */

static uint32_t
place_cores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (uint32_t)n : 1;
}

/* The default strategies: sharded:K for K = 2 .. cores (one at least). */
static void
place_default_list(struct place_args *pa, uint32_t cores)
{
	static const char *const fixed[] = {"single", "per-node", "chains",
					    "random:3"};

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		(void)snprintf(pa->places[pa->np++], 32, "%s", fixed[i]);
	for (uint32_t k = 2;
	     (k <= cores || k == 2) && pa->np < CLI_MAX_LIST - 1; k++)
		(void)snprintf(pa->places[pa->np++], 32, "sharded:%u", k);
	(void)snprintf(pa->places[pa->np++], 32, "balanced");
}

static bool
place_opt(struct cli_args *a, struct place_args *pa, struct cli_place_sweep *s)
{
	const char *v;

	if (cli_args_opt(a, "--workers", &v))
		pa->nw = cli_parse_u32_list("place", "--workers", v, 1, 1024,
					    pa->workers);
	else if (cli_args_opt(a, "--placements", &v))
		pa->np = cli_parse_placements("place", v, pa->places);
	else if (cli_args_opt(a, "--budgets", &v))
		pa->nb = cli_parse_u32_list("place", "--budgets", v, 1, 1 << 20,
					    pa->budgets);
	else if (cli_args_opt(a, "--events", &v)) {
		s->base.events =
		    cli_parse_u64("place", "--events", v, 1, UINT64_MAX / 2);
		pa->by_events = true;
	} else if (cli_args_opt(a, "--time-per-case", &v))
		s->time_per_case = cli_parse_double("place", "--time-per-case",
						    v, 0.001, 3600);
	else if (cli_args_opt(a, "--warmup", &v))
		s->warmup = cli_parse_double("place", "--warmup", v, 0, 3600);
	else if (cli_args_opt(a, "--reps", &v))
		s->reps = (uint32_t)cli_parse_u64("place", "--reps", v, 1,
						  PLACE_MAX_REPS);
	else if (cli_args_opt(a, "--rate", &v))
		s->base.rate =
		    cli_parse_double("place", "--rate", v, 1.0, 1e12);
	else if (cli_args_opt(a, "--workload", &v))
		pa->wspec = v;
	else if (cli_args_opt(a, "--workload-arg", &v))
		cli_workload_arg_add("place", &pa->wargs, v);
	else if (cli_args_opt(a, "--json", &v))
		pa->json = v;
	else if (cli_args_opt(a, "--csv", &v))
		pa->csv = v;
	else if (cli_args_opt(a, "--plot", &v))
		pa->plot = v;
	else if (cli_args_opt(a, "--dot", &v))
		pa->dot = v;
	else if (cli_args_opt(a, "--quiet", NULL))
		pa->quiet = true;
	else
		return cli_grid_parse_opt(a, &s->base);
	return true;
}

/* The checks that need every option: refused by name, before any run. */
static void
place_check(const struct place_args *pa, const struct cli_place_sweep *s,
	    bool timed)
{
	if (pa->by_events && timed)
		cli_die_usage("place",
			      "--events and --time-per-case: give one, "
			      "not both");
	cli_plot_check("place", pa->plot);
	if (!pa->wspec || !strcmp(pa->wspec, "grid")) {
		if (pa->wargs.n)
			cli_die_usage("place", "--workload-arg: the grid takes "
					       "none (--rows, --cols, --batch "
					       "size it)");
	} else if (s->base.rate > 0) {
		cli_die_usage("place",
			      "--rate: only the grid runs open loop "
			      "(--workload %s is closed loop)",
			      pa->wspec);
	}
}

/* Every placement x workers x budget; "balanced" resolved per workers. */
static int
place_cases(const struct place_args *pa, struct cli_place_sweep *s)
{
	s->n = pa->np * pa->nw * pa->nb;
	if (!(s->cases = calloc(s->n, sizeof(*s->cases))))
		return cli_lib_error("calloc", SC_ENOMEM);
	for (size_t i = 0, n = 0; i < pa->np; i++)
		for (size_t j = 0; j < pa->nw; j++)
			for (size_t b = 0; b < pa->nb; b++, n++) {
				struct cli_place_case *c = &s->cases[n];

				c->workers = pa->workers[j];
				c->budget = pa->budgets[b];
				if (!strcmp(pa->places[i], "balanced"))
					(void)snprintf(
					    c->placement, sizeof(c->placement),
					    "balanced:%u", c->workers);
				else
					(void)snprintf(c->placement,
						       sizeof(c->placement),
						       "%s", pa->places[i]);
				(void)snprintf(c->label, sizeof(c->label),
					       "%s x%u b%u", c->placement,
					       c->workers, c->budget);
				c->ok = true;
				c->r = calloc(s->reps, sizeof(*c->r));
				c->eps = calloc(s->reps, sizeof(*c->eps));
				if (!c->r || !c->eps)
					return cli_lib_error("calloc",
							     SC_ENOMEM);
			}
	return 0;
}

static void
place_free(struct cli_place_sweep *s)
{
	for (size_t i = 0; i < s->n && s->cases; i++) {
		free(s->cases[i].r);
		free(s->cases[i].eps);
	}
	free(s->cases);
	free(s->cost);
	sc_workload_destroy(s->inst);
}

static void
place_parse(int argc, char **argv, struct place_args *pa,
	    struct cli_place_sweep *s)
{
	struct cli_args a = {
	    .cmd = "place", .argc = argc, .argv = argv, .i = 0};
	bool timed = false;

	while (a.i < argc) {
		if (cli_args_opt(&a, "--help", NULL) ||
		    cli_args_opt(&a, "-h", NULL)) {
			(void)fputs(cli_usage_place, stdout);
			cli_exit(0);
		}
		if (cli_args_opt(&a, "--version", NULL)) {
			cli_version_print();
			cli_exit(0);
		}
		timed = timed || !strncmp(argv[a.i], "--time-per-case", 15);
		if (!place_opt(&a, pa, s))
			cli_die_usage("place", "unknown argument '%s'",
				      argv[a.i]);
	}
	place_check(pa, s, timed);
	if (pa->by_events)
		s->time_per_case = 0;
	if (pa->np == 0)
		place_default_list(pa, s->cores);
	if (pa->nw == 0) {
		pa->workers[pa->nw++] = 1;
		if (s->cores > 1)
			pa->workers[pa->nw++] = s->cores;
	}
	if (pa->nb == 0) {
		pa->budgets[pa->nb++] = 64;
		pa->budgets[pa->nb++] = 256;
	}
}

/* The sweep's configuration: every option's effective value. */
static void
place_json_config(const struct cli_place_sweep *s, const struct place_args *pa,
		  struct cli_json *j)
{
	const struct cli_run_cfg *b = &s->base;

	cli_json_texts(j, "placements", pa->places, pa->np);
	cli_json_uints(j, "workers", pa->workers, pa->nw);
	cli_json_uints(j, "budgets", pa->budgets, pa->nb);
	if (s->time_per_case > 0)
		cli_json_real(j, "time_per_case_s", s->time_per_case);
	else
		cli_json_null(j, "time_per_case_s");
	if (s->time_per_case > 0)
		cli_json_null(j, "events");
	else
		cli_json_uint(j, "events", b->events);
	cli_json_real(j, "warmup_s", s->warmup);
	cli_json_uint(j, "reps", s->reps);
	if (b->rate > 0)
		cli_json_real(j, "rate", b->rate);
	else
		cli_json_null(j, "rate");
	cli_json_uint(j, "batch", b->batch);
	cli_json_int(j, "rows", b->rows);
	cli_json_int(j, "cols", b->cols);
	cli_json_uint(j, "seed", b->seed);
	cli_json_uint(j, "capacity", b->capacity);
	cli_json_bool(j, "quiet", pa->quiet);
	cli_json_text(j, "json", pa->json);
	cli_json_text(j, "csv", pa->csv);
	cli_json_text(j, "plot", pa->plot);
	cli_json_text(j, "dot", pa->dot);
}

/* Write the files after the runs (they were created before them). */
static int
place_outputs(struct cli_report *rep, const struct cli_place_sweep *s,
	      const struct place_args *pa, FILE *jf, FILE *cf, FILE *df)
{
	int rc = 0;

	if (jf) {
		cli_report_open(rep, jf, cli_signal_caught());
		place_json_config(s, pa, &rep->j);
		cli_report_results(rep);
		cli_place_json_results(s, &rep->j);
		cli_report_close(rep);
	}
	if (cf)
		cli_place_csv(s, cf);
	if (df && cli_place_dot(s, df) != 0)
		rc = CLI_EXIT_LIBRARY;
	if (pa->plot && cli_place_plot_file(s, rep, pa->plot) != 0)
		rc = CLI_EXIT_LIBRARY;
	if (cli_close_out("place", pa->json, jf))
		rc = CLI_EXIT_LIBRARY;
	if (cli_close_out("place", pa->csv, cf))
		rc = CLI_EXIT_LIBRARY;
	if (cli_close_out("place", pa->dot, df))
		rc = CLI_EXIT_LIBRARY;
	return rc;
}

/* Whether the command line asks for --replot (then nothing runs). */
static bool
place_is_replot(int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], "--replot") ||
		    !strncmp(argv[i], "--replot=", 9))
			return true;
	return false;
}

/* place --replot FILE.json --plot OUT: only those two; the report is
 * checked when it is read, then the plot path as for a sweep. */
static int
place_replot(int argc, char **argv)
{
	struct cli_args a = {
	    .cmd = "place", .argc = argc, .argv = argv, .i = 0};
	const char *json = NULL, *plot = NULL, *v;

	while (a.i < argc) {
		if (cli_args_opt(&a, "--replot", &v))
			json = v;
		else if (cli_args_opt(&a, "--plot", &v))
			plot = v;
		else
			cli_die_usage("place",
				      "--replot: '%s': --replot takes only "
				      "--plot (nothing runs)",
				      argv[a.i]);
	}
	if (!plot)
		cli_die_usage("place", "--replot: give --plot FILE.png or "
				       ".svg to draw into");
	return cli_place_replot(json, plot);
}

int
cli_cmd_place(int argc, char **argv)
{
	struct place_args pa;
	struct cli_place_sweep s;
	struct cli_place_workload wl;
	struct cli_report rep;
	FILE *jf, *cf, *df;
	bool all_ok = true;
	int rc, wrc;

	if (argc > 0 && place_is_replot(argc, argv))
		return place_replot(argc, argv);
	memset(&pa, 0, sizeof(pa));
	memset(&s, 0, sizeof(s));
	s.w = &place_workloads[0];
	s.reps = 5;
	s.time_per_case = 0.2;
	s.warmup = 0.05;
	s.cores = place_cores();
	cli_grid_defaults(&s.base);
	place_parse(argc, argv, &pa, &s);
	if (pa.wspec && strcmp(pa.wspec, "grid") != 0 &&
	    (rc = place_lib_open(&pa, &s, &wl)) != 0)
		return rc;
	cli_report_start(&rep, "place", s.w->name);
	jf = cli_open_out("place", "--json", pa.json);
	cf = cli_open_out("place", "--csv", pa.csv);
	df = cli_open_out("place", "--dot", pa.dot);
	cli_signal_catch();
	rc = place_cases(&pa, &s);
	if (!rc && !s.inst)
		rc = place_calibrate(&s);
	cli_progress_begin(stderr, pa.quiet);
	if (!rc)
		rc = s.inst ? place_lib_run(&pa, &s) : place_rounds(&s);
	cli_progress_end();
	if (cli_signal_caught())
		(void)fprintf(stderr,
			      "subcirc place: interrupted by %s: the cases "
			      "finished are ranked and written\n",
			      cli_signal_name(cli_signal_caught()));
	if (!rc)
		cli_place_print(&s);
	/* The files hold what ran, also after a failed case. */
	wrc = place_outputs(&rep, &s, &pa, jf, cf, df);
	for (size_t i = 0; i < s.n; i++)
		all_ok = all_ok && s.cases[i].ok;
	place_free(&s);
	if (rc || wrc)
		return rc ? rc : wrc;
	return all_ok ? 0 : CLI_EXIT_CHECK;
}
