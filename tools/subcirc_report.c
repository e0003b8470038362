/*
 * subcirc_report.c - the report writers of the command line (subcirc.h):
 * run's summary, JSON and CSV (place's are in subcirc_place_out.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/subcirc.h"

/* --- files ---------------------------------------------------------------- */

FILE *
open_out(const char *cmd, const char *opt, const char *path)
{
	FILE *f;

	if (!path)
		return NULL;
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
	if (fclose(f) != 0 && !err)
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

void
run_write_json(const struct run_cfg *c, const struct run_result *r, FILE *f)
{
	(void)fprintf(
	    f,
	    "{\"command\": \"run\", \"workload\": \"grid\", \"rows\": %" PRId64
	    ", \"cols\": %" PRId64 ", \"placement\": \"%s\", \"workers\": %u, "
	    "\"batch\": %u, \"seed\": %" PRIu64 ",\n \"events\": %" PRIu64
	    ", \"seconds\": %.6f, \"events_per_s\": %.1f, \"p50_us\": %.2f, "
	    "\"p99_us\": %.2f, \"max_us\": %.2f, \"turns\": %" PRIu64
	    ", \"kicks\": %" PRIu64 ", \"efull\": %" PRIu64
	    ", \"units\": %u, \"edges\": %u, \"ok\": %s,\n \"progress\": [",
	    c->rows, c->cols, c->placement, c->workers, c->batch, c->seed,
	    r->events, r->seconds, r->eps, r->p50_us, r->p99_us, r->max_us,
	    r->turns, r->kicks, r->efull, r->units, r->edges,
	    r->ok ? "true" : "false");
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

void
run_print_summary(const struct run_cfg *c, const struct run_result *r)
{
	(void)printf("subcirc run: grid %" PRId64 "x%" PRId64
		     ", placement %s (%u units, %u edges), %u workers, "
		     "batch %u\n",
		     c->rows, c->cols, c->placement, r->units, r->edges,
		     c->workers, c->batch);
	(void)printf("  events %" PRIu64 " in %.3f s: %.0f events/s "
		     "(%" PRIu64 " batches)\n",
		     r->events, r->seconds, r->eps, r->batches);
	(void)printf("  latency submit->output: p50 %.1f us, p99 %.1f us, "
		     "max %.1f us\n",
		     r->p50_us, r->p99_us, r->max_us);
	(void)printf("  turns %" PRIu64 ", kicks %" PRIu64
		     ", submits that met a full edge %" PRIu64 "\n",
		     r->turns, r->kicks, r->efull);
	(void)printf("  output %s\n", r->ok ? "equals the reference"
					    : "DIFFERS from the reference");
	if (!r->ok)
		(void)printf("  %s\n", r->why);
}
