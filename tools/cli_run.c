/*
 * cli_run.c - `subcirc run`: the arguments of a live grid run, the run
 * itself (cli_grid.h), and what it reports: a summary on the text stream,
 * and --json, --csv and --trace files, created before the run so that a
 * bad path wastes none. The Nexmark workload of `run --workload nexmark`
 * is a command of its own (cli_nexmark.c), which main picks.
 */
#include <inttypes.h>
#include <signal.h>
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

/* The version of run's JSON: 2 added schema, config, host, latency
 * (per event, p50..max), rate, floor and interrupted (1: flat fields). */
#define RUN_JSON_SCHEMA 2

const char cli_usage_run[] =
    "usage: subcirc run [--workload grid|nexmark] [options]\n"
    "  (`subcirc run --workload nexmark --help`: the Nexmark queries)\n"
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
    "  --rows N --cols N grid size (default 256 x 256)\n"
    "  --seed S          the edit generator's seed (default 1)\n"
    "  --capacity C      edge capacity in frames, a power of two (64)\n"
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
    "  --json FILE       the summary and progress samples as JSON\n"
    "  --csv FILE        the progress samples and the total as CSV\n"
    "                    (files are created before the run: a path that\n"
    "                    cannot be is refused at once, exit 2; '-' is\n"
    "                    stdout, and the text goes to stderr)\n"
    "\n"
    "  Numbers are digits only (no sign, no spaces). A unit that panics\n"
    "  ends the run soon after, naming it, with exit 3, as does a batch\n"
    "  that has not come through in 30 s; a file that cannot be written\n"
    "  is exit 3 too. Output that differs from the reference is exit 1.\n"
    "  SIGINT or SIGTERM ends the run early with its summary and files.\n";

/* --- the reports -----------------------------------------------------------
 */

/* A number as given (15 digits: what the option said), or null when
 * `have` is false. */
static void
json_num(FILE *f, const char *key, bool have, double v, const char *sep)
{
	if (have)
		(void)fprintf(f, "\"%s\": %.15g%s", key, v, sep);
	else
		(void)fprintf(f, "\"%s\": null%s", key, sep);
}

static const char *
signal_name(int sig)
{
	return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "signal";
}

/* The run's full configuration: what reproduces it. */
static void
json_config(const struct cli_run_cfg *c, FILE *f)
{
	(void)fprintf(
	    f,
	    " \"config\": {\"workload\": \"grid\", \"rows\": %" PRId64
	    ", \"cols\": %" PRId64 ", \"batch\": %u, \"seed\": %" PRIu64
	    ", \"placement\": \"%s\", \"workers\": %u, \"budget\": %u,"
	    " \"capacity\": %u, \"outbox_bound\": %u, ",
	    c->rows, c->cols, c->batch, c->seed, c->placement, c->workers,
	    c->budget, c->capacity, c->outbox_bound);
	json_num(f, "rate", c->rate > 0, c->rate, ", ");
	json_num(f, "linger_us", c->linger > 0, c->linger, ", ");
	if (c->events)
		(void)fprintf(f, "\"events\": %" PRIu64 ", ", c->events);
	else
		(void)fprintf(f, "\"events\": null, ");
	json_num(f, "seconds", c->seconds > 0, c->seconds, ", ");
	(void)fprintf(f, "\"panic_rate\": %.15g},\n", c->panic_rate);
}

static void
json_host(FILE *f)
{
	double load[3] = {0, 0, 0};
	long cores = sysconf(_SC_NPROCESSORS_ONLN);

	(void)fprintf(f, " \"host\": {\"cores\": %ld, \"load_avg\": ", cores);
	if (cli_host_load(load))
		(void)fprintf(f, "[%.2f, %.2f, %.2f]},\n", load[0], load[1],
			      load[2]);
	else
		(void)fprintf(f, "null},\n");
}

static void
json_latency(const struct cli_run_cfg *c, const struct cli_run_result *r,
	     FILE *f)
{
	const struct cli_run_floor *fl = &r->floor;

	if (!r->latency_measured)
		(void)fprintf(f, " \"latency\": null,\n");
	else
		(void)fprintf(
		    f,
		    " \"latency\": {\"per\": \"event\", \"from\": \"%s\", "
		    "\"to\": \"output visible\", \"unit\": \"us\", "
		    "\"better\": \"lower\", \"relative_error\": 0.03125, "
		    "\"p50_us\": %.2f, \"p90_us\": %.2f, \"p99_us\": %.2f, "
		    "\"p999_us\": %.2f, \"max_us\": %.2f},\n",
		    c->rate > 0 ? "arrival (due time)" : "submit", r->p50_us,
		    r->p90_us, r->p99_us, r->p999_us, r->max_us);
	if (c->rate > 0)
		(void)fprintf(f,
			      " \"rate\": {\"offered_events_per_s\": %.1f, "
			      "\"achieved_events_per_s\": %.1f, \"short\": "
			      "%s},\n",
			      c->rate, r->achieved_eps,
			      r->rate_short ? "true" : "false");
	else
		(void)fprintf(f, " \"rate\": null,\n");
	if (!fl->measured) {
		(void)fprintf(f, " \"floor\": null,\n");
		return;
	}
	(void)fprintf(f,
		      " \"floor\": {\"sleep_us\": %.2f, \"sleeps\": %u, "
		      "\"wake_late_p50_us\": %.2f, \"wake_late_p99_us\": %.2f, "
		      "\"service_batches\": %u, \"service_p50_us\": %.2f},\n",
		      fl->sleep_us, fl->sleeps, fl->wake_p50_us,
		      fl->wake_p99_us, fl->services, fl->service_p50_us);
}

static void
run_write_json(const struct cli_run_cfg *c, const struct cli_run_result *r,
	       FILE *f)
{
	(void)fprintf(f, "{\"schema\": %d, \"command\": \"run\",\n",
		      RUN_JSON_SCHEMA);
	json_config(c, f);
	json_host(f);
	if (r->interrupted)
		(void)fprintf(f, " \"interrupted\": \"%s\",\n",
			      signal_name(r->interrupted));
	else
		(void)fprintf(f, " \"interrupted\": null,\n");
	(void)fprintf(f,
		      " \"events\": %" PRIu64 ", \"batches\": %" PRIu64
		      ", \"seconds\": %.6f, \"events_per_s\": %.1f,\n",
		      r->events, r->batches, r->seconds, r->eps);
	json_latency(c, r, f);
	(void)fprintf(f,
		      " \"turns\": %" PRIu64 ", \"kicks\": %" PRIu64
		      ", \"efull\": %" PRIu64
		      ", \"units\": %u, \"edges\": %u, \"ok\": %s,\n",
		      r->turns, r->kicks, r->efull, r->units, r->edges,
		      r->ok ? "true" : "false");
	if (r->ranks) {
		(void)fputc(' ', f);
		cli_ranks_write_json(f, r->ranks, r->nranks, ",\n");
	} else
		(void)fprintf(f, " \"ranks\": null,\n");
	(void)fprintf(f, " \"progress\": [");
	for (size_t i = 0; i < r->ns; i++)
		(void)fprintf(f,
			      "%s\n  {\"t\": %.3f, \"events\": %" PRIu64
			      ", \"events_per_s\": %.1f, \"p50_us\": %.2f, "
			      "\"p99_us\": %.2f, \"edge_fill\": %.4f}",
			      i ? "," : "", r->s[i].t, r->s[i].events,
			      r->s[i].eps, r->s[i].p50_us, r->s[i].p99_us,
			      r->s[i].fill);
	(void)fprintf(f, "]}\n");
}

static void
run_write_csv(const struct cli_run_result *r, FILE *f)
{
	(void)fprintf(f, "kind,t_s,events,events_per_s,p50_us,p99_us,"
			 "edge_fill\n");
	for (size_t i = 0; i < r->ns; i++)
		(void)fprintf(f,
			      "interval,%.3f,%" PRIu64 ",%.1f,%.2f,%.2f,%.4f\n",
			      r->s[i].t, r->s[i].events, r->s[i].eps,
			      r->s[i].p50_us, r->s[i].p99_us, r->s[i].fill);
	(void)fprintf(f, "total,%.3f,%" PRIu64 ",%.1f,%.2f,%.2f,\n", r->seconds,
		      r->events, r->eps, r->p50_us, r->p99_us);
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
			      signal_name(r->interrupted));
	(void)fprintf(o,
		      "  events %" PRIu64 " in %.3f s: %.0f events/s "
		      "(%" PRIu64 " batches)\n",
		      r->events, r->seconds, r->eps, r->batches);
	if (c->rate > 0)
		(void)fprintf(o,
			      "  open loop: offered %.0f events/s, schedule "
			      "kept at %.0f events/s\n",
			      c->rate, r->achieved_eps);
	if (r->latency_measured)
		(void)fprintf(o,
			      "  latency per event, %s -> output: p50 %.1f "
			      "us, p90 %.1f us, p99 %.1f us, p99.9 %.1f us, "
			      "max %.1f us\n",
			      c->rate > 0 ? "arrival" : "submit", r->p50_us,
			      r->p90_us, r->p99_us, r->p999_us, r->max_us);
	else
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

static void
run_parse(struct cli_args *a, struct cli_run_cfg *c)
{
	const char *v;

	while (a->i < a->argc) {
		if (cli_args_opt(a, "--help", NULL) ||
		    cli_args_opt(a, "-h", NULL)) {
			(void)fputs(cli_usage_run, stdout);
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
	FILE *json, *csv, *trace;
	int rc, rc2, wrc = 0;
	bool host;

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
	run_check_cfg(&c);
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
	cli_grid_catch_signals();
	cli_grid_progress_begin(!c.quiet && isatty(fileno(cli_report_text())));
	rc = cli_grid_run(&c, &r);
	cli_grid_progress_end();
	if (!rc && host) {
		run_print_summary(&c, &r);
		run_warn_rate(&c, &r);
		if (json)
			run_write_json(&c, &r, json);
		if (csv)
			run_write_csv(&r, csv);
	}
	/* Closed even after a failed run (the files stay empty); a write
	 * error is the first failure only when the run succeeded. */
	/* What ran is in the trace even when the run failed or was cut. */
	if ((rc2 = cli_trace_close(c.timeline, host ? trace : NULL)) != 0)
		wrc = rc2;
	wrc = cli_close_out("run", c.json, json) ? CLI_EXIT_LIBRARY : wrc;
	wrc = cli_close_out("run", c.csv, csv) ? CLI_EXIT_LIBRARY : wrc;
	wrc = cli_close_out("run", c.trace, trace) ? CLI_EXIT_LIBRARY : wrc;
	free(r.s); /* the samples, also those taken before a failure */
	if (rc || wrc)
		return cli_ranks_agree(rc ? rc : wrc);
	return cli_ranks_agree(r.ok || !host ? 0 : CLI_EXIT_CHECK);
}
