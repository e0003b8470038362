/*
 * cli_run.c - `subcirc run`: the arguments of a live grid run, the run
 * itself (cli_grid.h), and what it reports: a summary on the text stream,
 * and --json, --csv and --trace files, created before the run so that a
 * bad path wastes none. The Nexmark workload of `run --workload nexmark`
 * is a command of its own (cli_nexmark.c), which main picks.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "bench/workloads/grid.h"
#include "tools/cli.h"
#include "tools/cli_cmd.h"
#include "tools/cli_grid.h"
#include "tools/cli_ranks.h"
#include "tools/cli_units.h"

const char cli_usage_run[] =
    "usage: subcirc run [--workload grid|nexmark] [options]\n"
    "  (`subcirc run --workload nexmark --help`: the Nexmark queries;\n"
    "  `subcirc run --workload SPEC --help`: any other workload)\n"
    "  a live grid workload (cell edits -> sums per row and column -> a\n"
    "  projection with a total per row) across worker threads; the final\n"
    "  output is checked against the workload's from-scratch reference.\n"
    "\n"
    "  --workers N       worker threads (default: all cores)\n"
    "  --placement P     single | per-node | chains | random:N | sharded:K\n"
    "                    | balanced[:K] (default chains); across MPI\n"
    "                    ranks: ranks:N, or P@ranks:N (P@ranks:R,R,..)\n"
    "                    under `mpirun -np N subcirc run ...`: rank 0\n"
    "                    submits and reports, with per-rank figures\n"
    "  --events N        stop after N cell edits, or\n"
    "  --seconds S       stop after S seconds (default 3 when neither)\n"
    "  --batch R         cell edits per submitted batch (default 256)\n"
    "  --rate E          offer E events/s on an open-loop schedule: each\n"
    "                    event's latency counts from its arrival; the\n"
    "                    machine's floor is measured first, and a rate\n"
    "                    not kept within 5% is warned about (default: as\n"
    "                    fast as backpressure allows, latency from submit)\n"
    "  --linger US       with --rate: submit a batch once its first event\n"
    "                    has waited US microseconds, full or not (default:\n"
    "                    when full; at low rates a full batch of 256 makes\n"
    "                    its first events wait most of its interval)\n"
    "  --warmup S        leave the events submitted in the first S\n"
    "                    seconds out of the latency figures (steady\n"
    "                    state apart from start-up; default 0)\n"
    "  --rows N --cols N grid size (default 256 x 256)\n"
    "  --seed S          the edit generator's seed (default 1)\n"
    "  --capacity C      edge capacity in frames, a power of two (64);\n"
    "                    --edge-capacity C is the same\n"
    "  --budget B        frames per turn (default 64)\n"
    "  --panic-rate X    share (0..1) of projection rows whose callback\n"
    "                    fails, so the unit that runs it panics (a test\n"
    "                    of how a run ends when a unit dies)\n"
    "  --credits W       across ranks: frames in flight per remote edge\n"
    "                    (the MPI link's window, and as many kept beyond\n"
    "                    it; default 32 and 64)\n"
    "  --quiet           no progress lines\n"
    "  --units           the per-unit table at the end (turns, kicks,\n"
    "                    frames moved, state, worker, pending input)\n"
    "  --units-every S   and every S seconds while it runs\n"
    "  --trace FILE      every turn (worker, unit, time, frames and rows)\n"
    "                    and the edges' fill, in the Chrome trace event\n"
    "                    format (open it in ui.perfetto.dev)\n"
    "  --plot FILE       the latency histogram (per event, ms, log axis,\n"
    "                    p50/p99/p99.9/max marked, a caption with date,\n"
    "                    host, load, version) through gnuplot (FILE.png\n"
    "                    or .svg; a missing gnuplot is refused, exit 2)\n"
    "  --json FILE       the report: configuration, summary and progress\n"
    "                    samples (tools/report.schema.json)\n"
    "  --csv FILE        the progress samples and the total as CSV\n"
    "                    (files are created before the run: a path that\n"
    "                    cannot be is refused at once, exit 2; '-' is\n"
    "                    stdout, and the text goes to stderr)\n"
    "  --version         the version and commit\n"
    "\n"
    "  Numbers are digits only (no sign, no spaces). A unit that panics\n"
    "  ends the run soon after, naming it, with exit 3, as does a batch\n"
    "  that has not come through in 30 s; a file that cannot be written\n"
    "  is exit 3 too. Output that differs from the reference is exit 1.\n"
    "  SIGINT, SIGTERM or SIGHUP ends the run early with its summary and\n"
    "  files.\n";

/* --- the reports -----------------------------------------------------------
 */

/* A number as given, or null when the option was not (have false). */
static void
json_opt(struct cli_json *j, const char *key, bool have, double v)
{
	if (have)
		cli_json_real(j, key, v);
	else
		cli_json_null(j, key);
}

/* The run's full configuration: every option's effective value, what
 * reproduces it. */
static void
json_config(const struct cli_run_cfg *c, struct cli_json *j)
{
	cli_json_uint(j, "workers", c->workers);
	cli_json_text(j, "placement", c->placement);
	json_opt(j, "events", c->events > 0, (double)c->events);
	json_opt(j, "seconds", c->seconds > 0, c->seconds);
	cli_json_uint(j, "batch", c->batch);
	json_opt(j, "rate", c->rate > 0, c->rate);
	json_opt(j, "linger_us", c->linger > 0, c->linger);
	json_opt(j, "warmup_s", c->warmup > 0, c->warmup);
	cli_json_int(j, "rows", c->rows);
	cli_json_int(j, "cols", c->cols);
	cli_json_uint(j, "seed", c->seed);
	cli_json_uint(j, "capacity", c->capacity);
	cli_json_uint(j, "budget", c->budget);
	cli_json_uint(j, "outbox_bound", c->outbox_bound);
	cli_json_real(j, "panic_rate", c->panic_rate);
	json_opt(j, "credits", c->credits > 0, c->credits);
	cli_json_bool(j, "quiet", c->quiet);
	cli_json_bool(j, "units", c->units);
	json_opt(j, "units_every", c->units_every > 0, c->units_every);
	cli_json_text(j, "json", c->json);
	cli_json_text(j, "csv", c->csv);
	cli_json_text(j, "trace", c->trace);
	cli_json_text(j, "plot", c->plot);
}

static void
json_latency(const struct cli_run_cfg *c, const struct cli_run_result *r,
	     struct cli_json *j)
{
	if (!r->latency_measured) {
		cli_json_null(j, "latency");
		return;
	}
	cli_json_open(j, "latency", '{', true);
	cli_json_text(j, "per", "event");
	cli_json_text(j, "from", c->rate > 0 ? "arrival (due time)" : "submit");
	cli_json_text(j, "to", "output visible");
	cli_json_text(j, "unit", "us");
	cli_json_text(j, "better", "lower");
	cli_json_real(j, "relative_error", 0.03125);
	cli_json_real(j, "warmup_s", c->warmup);
	cli_json_uint(j, "events", r->latency_events);
	/* No event counted (a warm-up longer than the run): no figure. */
	json_opt(j, "p50_us", r->latency_events > 0, r->p50_us);
	json_opt(j, "p90_us", r->latency_events > 0, r->p90_us);
	json_opt(j, "p99_us", r->latency_events > 0, r->p99_us);
	json_opt(j, "p999_us", r->latency_events > 0, r->p999_us);
	json_opt(j, "max_us", r->latency_events > 0, r->max_us);
	cli_json_close(j);
}

static void
json_rate(const struct cli_run_cfg *c, const struct cli_run_result *r,
	  struct cli_json *j)
{
	const struct cli_run_floor *fl = &r->floor;

	if (c->rate > 0) {
		cli_json_open(j, "rate", '{', true);
		cli_json_real(j, "offered_events_per_s", c->rate);
		cli_json_real(j, "achieved_events_per_s", r->achieved_eps);
		cli_json_bool(j, "short", r->rate_short);
		cli_json_close(j);
	} else {
		cli_json_null(j, "rate");
	}
	if (!fl->measured) {
		cli_json_null(j, "floor");
		return;
	}
	cli_json_open(j, "floor", '{', true);
	cli_json_real(j, "sleep_us", fl->sleep_us);
	cli_json_uint(j, "sleeps", fl->sleeps);
	cli_json_real(j, "wake_late_p50_us", fl->wake_p50_us);
	cli_json_real(j, "wake_late_p99_us", fl->wake_p99_us);
	cli_json_uint(j, "service_batches", fl->services);
	cli_json_real(j, "service_p50_us", fl->service_p50_us);
	cli_json_close(j);
}

static void
run_write_json(struct cli_report *rep, const struct cli_run_cfg *c,
	       const struct cli_run_result *r, FILE *f)
{
	struct cli_json *j = &rep->j;

	cli_report_open(rep, f, r->interrupted);
	json_config(c, j);
	cli_report_results(rep);
	cli_json_uint(j, "events", r->events);
	cli_json_uint(j, "batches", r->batches);
	cli_json_real(j, "seconds", r->seconds);
	cli_json_real(j, "events_per_s", r->eps);
	json_latency(c, r, j);
	json_rate(c, r, j);
	cli_json_uint(j, "turns", r->turns);
	cli_json_uint(j, "kicks", r->kicks);
	cli_json_uint(j, "efull", r->efull);
	cli_json_uint(j, "units", r->units);
	cli_json_uint(j, "edges", r->edges);
	cli_units_json(j, r->longest, r->nlongest);
	cli_json_bool(j, "ok", r->ok);
	cli_json_text(j, "why", r->ok ? NULL : r->why);
	if (r->ranks)
		cli_ranks_write_json(j, r->ranks, r->nranks);
	else
		cli_json_null(j, "ranks");
	cli_report_samples(j, r->s, r->ns);
	cli_report_close(rep);
}

static void
run_write_csv(const struct cli_run_result *r, FILE *f)
{
	struct cli_sample total = {.t = r->seconds,
				   .events = r->events,
				   .eps = r->eps,
				   .p50_us = r->p50_us,
				   .p99_us = r->p99_us};

	cli_report_csv(f, r->s, r->ns, &total);
}

/* --- run ------------------------------------------------------------------ */

/* The floor and how the latencies compare with it (the targets:
 * p99 <= 3x (wake p99 + service) at half the max rate, p50 <= 2x (wake
 * p50 + service) at a tenth). */
static void
run_print_floor(FILE *o, const struct cli_run_result *r)
{
	const struct cli_run_floor *f = &r->floor;
	double f50 = f->wake_p50_us + f->service_p50_us;
	double f99 = f->wake_p99_us + f->service_p50_us;

	if (!f->measured)
		return;
	(void)fprintf(o,
		      "  floor: a bare sleep of %.1f us wakes p50 %.1f us, "
		      "p99 %.1f us late (%u sleeps); one batch on the idle "
		      "runtime takes %.1f us (median of %u)\n",
		      f->sleep_us, f->wake_p50_us, f->wake_p99_us, f->sleeps,
		      f->service_p50_us, f->services);
	if (f50 > 0 && f99 > 0)
		(void)fprintf(o,
			      "  latency / floor: p50 = %.2f x (wake p50 + "
			      "service), p99 = %.2f x (wake p99 + service)\n",
			      r->p50_us / f50, r->p99_us / f99);
}

static void
run_print_summary(const struct cli_run_cfg *c, const struct cli_run_result *r)
{
	FILE *o = cli_report_text();

	(void)fprintf(o,
		      "subcirc run: grid %" PRId64 "x%" PRId64
		      ", placement %s (%u units, %u edges), %u workers%s, "
		      "batch %u\n",
		      c->rows, c->cols, c->placement, r->units, r->edges,
		      c->workers, r->nranks > 1 ? " per rank" : "", c->batch);
	if (r->nranks > 1)
		(void)fprintf(o,
			      "  across %d ranks (MPI), the host on rank 0\n",
			      r->nranks);
	if (r->interrupted)
		(void)fprintf(o,
			      "  interrupted by %s: the figures are for what "
			      "ran\n",
			      cli_signal_name(r->interrupted));
	(void)fprintf(o,
		      "  events %" PRIu64 " in %.3f s: %.0f events/s "
		      "(%" PRIu64 " batches)\n",
		      r->events, r->seconds, r->eps, r->batches);
	if (c->rate > 0)
		(void)fprintf(o,
			      "  open loop: offered %.0f events/s, schedule "
			      "kept at %.0f events/s\n",
			      c->rate, r->achieved_eps);
	if (r->latency_measured && c->warmup > 0)
		(void)fprintf(o,
			      "  latency counted after a warm-up of %.3g s: "
			      "%" PRIu64 " of the events%s\n",
			      c->warmup, r->latency_events,
			      r->latency_events ? ""
						: " (the run ended first)");
	if (r->latency_measured && r->latency_events > 0)
		(void)fprintf(o,
			      "  latency per event, %s -> output: p50 %.1f "
			      "us, p90 %.1f us, p99 %.1f us, p99.9 %.1f us, "
			      "max %.1f us\n",
			      c->rate > 0 ? "arrival" : "submit", r->p50_us,
			      r->p90_us, r->p99_us, r->p999_us, r->max_us);
	else if (!r->latency_measured)
		(void)fprintf(o, "  latency: not measured (the totals output "
				 "runs on another rank than the host's)\n");
	run_print_floor(o, r);
	(void)fprintf(o,
		      "  turns %" PRIu64 ", kicks %" PRIu64
		      ", submits that met a full edge %" PRIu64 "\n",
		      r->turns, r->kicks, r->efull);
	if (r->ranks)
		cli_ranks_print(o, r->ranks, r->nranks);
	(void)fprintf(o, "  output %s\n",
		      r->ok ? "equals the reference"
			    : "DIFFERS from the reference");
	if (!r->ok)
		(void)fprintf(o, "  %s\n", r->why);
}

/* --- the command -----------------------------------------------------------
 */

static void
run_check_cfg(struct cli_run_cfg *c)
{
	struct sc_grid_opts go = {.rows = c->rows, .cols = c->cols};
	struct sc_grid *gr = NULL;
	int rc;

	if (c->rows * c->cols > (1LL << 28))
		cli_die_usage("run",
			      "--rows x --cols: %" PRId64 " cells, more than "
			      "2^28",
			      c->rows * c->cols);
	if ((rc = sc_grid_create(&go, &gr)) != 0)
		cli_die_library("sc_grid_create", rc);
	cli_check_placement_of("run", "--placement", sc_grid_graph(gr),
			       c->placement, c->seed);
	/* MPI starts here when the placement spans ranks (every rank has
	 * checked the same arguments: a bad one ended them all before). */
	(void)cli_ranks_start_placement("run", sc_grid_graph(gr), c->placement,
					c->seed);
	(void)sc_grid_destroy(gr);
}

/* The warning of a schedule not kept, on stderr (the JSON says it too). */
static void
run_warn_rate(const struct cli_run_cfg *c, const struct cli_run_result *r)
{
	if (!r->rate_short)
		return;
	(void)fprintf(stderr,
		      "subcirc run: warning: offered %.0f events/s, achieved "
		      "%.0f (%.0f%%): the host fell behind its schedule "
		      "(backpressure or slow submits); the latencies count "
		      "from the due times\n",
		      c->rate, r->achieved_eps,
		      100.0 * r->achieved_eps / c->rate);
}

/* What the trace's otherData "report" holds: the run's report, whole
 * when it ran to its end; else the envelope and the configuration. */
struct run_trace_doc {
	struct cli_report *rep;
	const struct cli_run_cfg *c;
	const struct cli_run_result *r;
	bool ran;
};

static void
run_trace_write(void *ctx, FILE *f)
{
	struct run_trace_doc *d = ctx;

	if (d->ran) {
		run_write_json(d->rep, d->c, d->r, f);
		return;
	}
	cli_report_open(d->rep, f, d->r->interrupted);
	json_config(d->c, &d->rep->j);
	cli_report_results(d->rep);
	cli_report_close(d->rep);
}

/* --plot: the run's latency histogram, titled with what ran. */
static int
run_plot(const struct cli_report *rep, const struct cli_run_cfg *c,
	 const struct cli_run_result *r, const struct cli_hist_counts *h)
{
	struct cli_plot_meta m;
	char title[256], loop[64], rate[32];

	cli_plot_rate_text(c->rate, rate, sizeof(rate));
	if (c->rate > 0)
		(void)snprintf(loop, sizeof(loop), "open loop at %s", rate);
	else
		(void)snprintf(loop, sizeof(loop), "closed loop");
	(void)snprintf(title, sizeof(title),
		       "subcirc run: grid, %s, %u worker%s, placement %s, "
		       "%.3g s: latency per event",
		       loop, c->workers, c->workers == 1 ? "" : "s",
		       c->placement, r->seconds);
	cli_plot_meta_now(rep, &m);
	return cli_plot_latency("run", c->plot, h, title, &m);
}

static void
run_parse(struct cli_args *a, struct cli_run_cfg *c)
{
	const char *v;

	while (a->i < a->argc) {
		if (cli_args_opt(a, "--help", NULL) ||
		    cli_args_opt(a, "-h", NULL)) {
			(void)fputs(cli_usage_run, stdout);
			cli_exit(0);
		} else if (cli_args_opt(a, "--version", NULL)) {
			cli_version_print();
			cli_exit(0);
		} else if (cli_args_opt(a, "--workload", &v)) {
			if (strcmp(v, "grid") != 0)
				cli_die_usage("run",
					      "--workload: '%s' is not grid "
					      "or nexmark",
					      v);
		} else if (cli_args_opt(a, "--workers", &v)) {
			c->workers = (uint32_t)cli_parse_u64("run", "--workers",
							     v, 1, 1024);
		} else if (cli_args_opt(a, "--placement", &v)) {
			if (strlen(v) >= sizeof(c->placement))
				cli_die_usage("run",
					      "--placement: '%s' too long", v);
			strcpy(c->placement, v);
		} else if (cli_args_opt(a, "--events", &v)) {
			c->events = cli_parse_u64("run", "--events", v, 1,
						  UINT64_MAX / 2);
		} else if (cli_args_opt(a, "--seconds", &v)) {
			c->seconds =
			    cli_parse_double("run", "--seconds", v, 0.001, 1e6);
		} else if (cli_args_opt(a, "--rate", &v)) {
			c->rate =
			    cli_parse_double("run", "--rate", v, 1.0, 1e12);
		} else if (cli_args_opt(a, "--linger", &v)) {
			c->linger =
			    cli_parse_double("run", "--linger", v, 0.001, 1e9);
		} else if (cli_args_opt(a, "--warmup", &v)) {
			c->warmup =
			    cli_parse_double("run", "--warmup", v, 0.0, 1e6);
		} else if (cli_args_opt(a, "--panic-rate", &v)) {
			c->panic_rate = cli_parse_double("run", "--panic-rate",
							 v, 0.0, 1.0);
		} else if (cli_args_opt(a, "--credits", &v)) {
			c->credits = (uint32_t)cli_parse_u64("run", "--credits",
							     v, 1, 1u << 20);
		} else if (cli_args_opt(a, "--quiet", NULL)) {
			c->quiet = true;
		} else if (cli_args_opt(a, "--json", &v)) {
			c->json = v;
		} else if (cli_args_opt(a, "--csv", &v)) {
			c->csv = v;
		} else if (cli_args_opt(a, "--trace", &v)) {
			c->trace = v;
		} else if (cli_args_opt(a, "--plot", &v)) {
			c->plot = v;
		} else if (!cli_grid_parse_opt(a, c) &&
			   !cli_units_parse_opt(a, &c->units,
						&c->units_every)) {
			cli_die_usage("run", "unknown argument '%s'",
				      a->argv[a->i]);
		}
	}
}

int
cli_cmd_run(int argc, char **argv)
{
	struct cli_args a = {.cmd = "run", .argc = argc, .argv = argv, .i = 0};
	struct cli_run_cfg c;
	struct cli_run_result r;
	struct cli_report rep;
	/* run --plot's histogram: static, it is large for a stack */
	static struct cli_hist_counts hist;
	struct run_trace_doc doc;
	FILE *json, *csv, *trace;
	int rc, rc2, wrc = 0;
	bool host;

	cli_report_start(&rep, "run", "grid");
	cli_grid_defaults(&c);
	run_parse(&a, &c);
	if (c.events && c.seconds > 0)
		cli_die_usage("run",
			      "--events and --seconds: give one, not both");
	if (!c.events && c.seconds <= 0)
		c.seconds = 3.0;
	if (c.linger > 0 && c.rate <= 0)
		cli_die_usage("run",
			      "--linger needs --rate (an open-loop run)");
	if (c.seconds > 0 && c.warmup >= c.seconds)
		cli_die_usage(
		    "run",
		    "--warmup %g: the run lasts %g s (--seconds), and "
		    "a warm-up must end before it",
		    c.warmup, c.seconds);
	run_check_cfg(&c);
	cli_plot_check("run", c.plot);
	host = cli_ranks_rank() == 0;
	if (!host)
		c.quiet = true; /* rank 0 prints and writes */
	json = cli_open_out("run", "--json", c.json);
	csv = cli_open_out("run", "--csv", c.csv);
	trace = cli_open_out("run", "--trace", c.trace);
	if (trace && (rc = cli_trace_open(c.workers, &c.timeline)) != 0)
		return rc;
	/* The host's sleeps end within a microsecond of their due time,
	 * not the default 50 us of timer slack later (prctl(2)): that
	 * slack would be added to every latency of an open-loop run. */
	(void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	cli_signal_catch();
	cli_progress_begin(cli_report_text(), c.quiet);
	c.hist_out = c.plot ? &hist : NULL;
	rc = cli_grid_run(&c, &r);
	cli_progress_end();
	if (!rc && host) {
		run_print_summary(&c, &r);
		run_warn_rate(&c, &r);
		if (json)
			run_write_json(&rep, &c, &r, json);
		if (csv)
			run_write_csv(&r, csv);
		if (c.plot)
			wrc = run_plot(&rep, &c, &r, &hist);
	}
	/* Closed even after a failed run (empty files are removed); a write
	 * error is the first failure only when the run succeeded. */
	/* What ran is in the trace even when the run failed or was cut. */
	doc = (struct run_trace_doc){&rep, &c, &r, !rc && host};
	if (host &&
	    (rc2 = cli_trace_report(c.timeline, run_trace_write, &doc)) != 0)
		wrc = rc2;
	if ((rc2 = cli_trace_close(c.timeline, host ? trace : NULL)) != 0)
		wrc = rc2;
	wrc = cli_close_out("run", c.json, json) ? CLI_EXIT_LIBRARY : wrc;
	wrc = cli_close_out("run", c.csv, csv) ? CLI_EXIT_LIBRARY : wrc;
	if (cli_close_out("run", c.trace, trace))
		wrc = CLI_EXIT_LIBRARY;
	else if (trace && host && rc2 == 0)
		(void)fprintf(cli_report_text(), "trace written to %s\n",
			      c.trace);
	free(r.s); /* the samples, also those taken before a failure */
	free(r.longest);
	if (rc || wrc)
		return cli_ranks_agree(rc ? rc : wrc);
	return cli_ranks_agree(r.ok || !host ? 0 : CLI_EXIT_CHECK);
}
