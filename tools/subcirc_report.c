/*
 * subcirc_report.c - the report writers of the command line (subcirc.h):
 * run's summary, JSON and CSV (place's are in subcirc_place_out.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/subcirc.h"

/* --- files ---------------------------------------------------------------- */

/* stdout, until an output file takes it. */
static FILE *text_out;
static bool stdout_taken;

FILE *
report_text(void)
{
	return text_out ? text_out : stdout;
}

FILE *
open_out(const char *cmd, const char *opt, const char *path)
{
	FILE *f;

	if (!path)
		return NULL;
	if (!strcmp(path, "-")) {
		if (stdout_taken)
			die_usage(cmd,
				  "%s: '-': stdout is taken by another "
				  "output already",
				  opt);
		stdout_taken = true;
		text_out = stderr;
		return stdout;
	}
	if (!(f = fopen(path, "w"))) {
		char msg[128] = "";

		(void)strerror_r(errno, msg, sizeof(msg));
		die_usage(cmd, "%s: cannot create '%s': %s", opt, path, msg);
	}
	return f;
}

int
close_out(const char *cmd, const char *path, FILE *f)
{
	int err = 0;

	if (!f)
		return 0;
	/* The writers' fprintf results are not checked one by one: a
	 * failed write sets the stream's error flag, read here, and most
	 * errors (a full disk) only show when the buffer is flushed. */
	if (ferror(f))
		err = errno ? errno : EIO;
	if (fflush(f) != 0 && !err)
		err = errno;
	if (f != stdout && fclose(f) != 0 && !err)
		err = errno;
	if (err) {
		char msg[128] = "";

		(void)strerror_r(err, msg, sizeof(msg));
		(void)fprintf(stderr, "subcirc %s: writing '%s' failed: %s\n",
			      cmd, path, msg);
		return EXIT_LIBRARY;
	}
	return 0;
}

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
json_config(const struct run_cfg *c, FILE *f)
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
	/* getloadavg is not POSIX; Linux says the same in /proc. */
	FILE *la = fopen("/proc/loadavg", "r");
	int n =
	    la ? fscanf(la, "%lf %lf %lf", &load[0], &load[1], &load[2]) : 0;

	if (la)
		(void)fclose(la);

	(void)fprintf(f, " \"host\": {\"cores\": %ld, \"load_avg\": ", cores);
	if (n == 3)
		(void)fprintf(f, "[%.2f, %.2f, %.2f]},\n", load[0], load[1],
			      load[2]);
	else
		(void)fprintf(f, "null},\n");
}

static void
json_latency(const struct run_cfg *c, const struct run_result *r, FILE *f)
{
	const struct run_floor *fl = &r->floor;

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

void
run_write_json(const struct run_cfg *c, const struct run_result *r, FILE *f)
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
		ranks_write_json(f, r->ranks, r->nranks, ",\n");
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

void
run_write_csv(const struct run_result *r, FILE *f)
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

/* The floor and how the latencies compare with it (issue 9's targets:
 * p99 <= 3x (wake p99 + service) at half the max rate, p50 <= 2x (wake
 * p50 + service) at a tenth). */
static void
run_print_floor(FILE *o, const struct run_result *r)
{
	const struct run_floor *f = &r->floor;
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

void
run_print_summary(const struct run_cfg *c, const struct run_result *r)
{
	FILE *o = report_text();

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
		ranks_print(o, r->ranks, r->nranks);
	(void)fprintf(o, "  output %s\n",
		      r->ok ? "equals the reference"
			    : "DIFFERS from the reference");
	if (!r->ok)
		(void)fprintf(o, "  %s\n", r->why);
}
