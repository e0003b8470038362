/*
 * subcirc_report.c - the report writers of the command line (subcirc.h):
 * run's summary, JSON and CSV; place's table, bar plot, JSON and CSV.
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

/* --- place ---------------------------------------------------------------- */

void
place_print_header(void)
{
	(void)printf("%-12s %7s %5s %5s %12s %10s %10s %10s %10s %4s\n",
		     "placement", "workers", "units", "edges", "events/s",
		     "p50 us", "p99 us", "turns", "kicks", "ok");
}

void
place_print_row(const struct place_row *row)
{
	const struct run_result *r = &row->r;

	(void)printf("%-12s %7u %5u %5u %12.0f %10.1f %10.1f "
		     "%10" PRIu64 " %10" PRIu64 " %4s\n",
		     row->placement, row->workers, r->units, r->edges, r->eps,
		     r->p50_us, r->p99_us, r->turns, r->kicks,
		     r->ok ? "yes" : "NO");
	(void)fflush(stdout);
}

/* Throughput as bars, scaled to the best case: the plot of the table. */
void
place_plot(const struct place_row *rows, size_t n)
{
	double best = 0;

	for (size_t i = 0; i < n; i++)
		best = rows[i].r.eps > best ? rows[i].r.eps : best;
	if (best <= 0)
		return;
	(void)printf("\nevents/s (bar = share of the best, %.0f)\n", best);
	for (size_t i = 0; i < n; i++) {
		int len = (int)(50.0 * rows[i].r.eps / best + 0.5);

		(void)printf(
		    "%-12s x%-3u |%.*s%*s| %.0f\n", rows[i].placement,
		    rows[i].workers, len,
		    "##################################################",
		    50 - len, "", rows[i].r.eps);
	}
}

void
place_write_csv(FILE *f, const struct place_row *rows, size_t n)
{
	(void)fprintf(f, "placement,workers,units,edges,events,seconds,"
			 "events_per_s,p50_us,p99_us,turns,kicks,"
			 "efull,ok\n");
	for (size_t i = 0; i < n; i++) {
		const struct run_result *r = &rows[i].r;

		(void)fprintf(f,
			      "%s,%u,%u,%u,%" PRIu64 ",%.6f,%.1f,%.2f,"
			      "%.2f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%s\n",
			      rows[i].placement, rows[i].workers, r->units,
			      r->edges, r->events, r->seconds, r->eps,
			      r->p50_us, r->p99_us, r->turns, r->kicks,
			      r->efull, r->ok ? "1" : "0");
	}
}

void
place_write_json(FILE *f, const struct place_row *rows, size_t n)
{
	(void)fprintf(f, "[");
	for (size_t i = 0; i < n; i++) {
		const struct run_result *r = &rows[i].r;

		(void)fprintf(
		    f,
		    "%s\n {\"placement\": \"%s\", \"workers\": %u, "
		    "\"units\": %u, \"edges\": %u, \"events\": %" PRIu64
		    ", \"seconds\": %.6f, \"events_per_s\": %.1f, "
		    "\"p50_us\": %.2f, \"p99_us\": %.2f, \"turns\": "
		    "%" PRIu64 ", \"kicks\": %" PRIu64 ", \"efull\": %" PRIu64
		    ", \"ok\": %s}",
		    i ? "," : "", rows[i].placement, rows[i].workers, r->units,
		    r->edges, r->events, r->seconds, r->eps, r->p50_us,
		    r->p99_us, r->turns, r->kicks, r->efull,
		    r->ok ? "true" : "false");
	}
	(void)fprintf(f, "\n]\n");
}
