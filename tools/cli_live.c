/*
 * cli_live.c - what the live runs (the grid's, cli_grid.c, and
 * Nexmark's, cli_nexmark.c) share: the check for a unit that panicked,
 * and the --trace timeline (a Chrome trace: a track per worker, the
 * edges' fill and the events through per second as counters); and the
 * progress line that every command draws (cli.h).
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "operators/base.h"
#include "operators/error.h"
#include "runtime/executor.h"
#include "runtime/timeline.h"
#include "tools/cli.h"
#include "units/runtime.h"

/* The trace's counter of the events through per second: after the
 * edges' (the runtime numbers those from 0). */
#define TRACE_HOST_COUNTER (TRACE_COUNTERS - 1)
#define TRACE_COUNTERS	   4096
/* Unit ids the timeline can name; the host's slices take the last ones
 * (the runtime numbers its units from 0, and no run has thousands). */
#define TRACE_UNITS	   8192
#define TRACE_HOST_UNIT(k) (TRACE_UNITS - 1 - (uint32_t)(k))

static const char *const trace_host_names[CLI_TRACE_HOST_KINDS] = {
    [CLI_TRACE_SUBMIT] = "host: submit",
    [CLI_TRACE_WAIT_ROOM] = "host: wait for room (an input edge full)",
    [CLI_TRACE_WAIT_FLIGHT] = "host: wait for batches in flight",
    [CLI_TRACE_WAIT_IDLE] = "host: wait until idle (the drain)",
};

/* A dead unit ends the run: its name and message, and exit 3. The
 * executor's lock is taken, so the callers ask at most every millisecond
 * (or between naps). */
int
cli_runtime_check_alive(struct sc_runtime *rt)
{
	struct sc_exec *ex = sc_runtime_exec(rt);
	struct sc_exec_info info;
	struct sc_panic_record pr;

	sc_exec_info(ex, &info);
	if (info.panics == 0)
		return 0;
	memset(&pr, 0, sizeof(pr));
	(void)sc_exec_panic(ex, 0, &pr);
	(void)fprintf(stderr,
		      "subcirc run: unit %s panicked, so the run cannot "
		      "finish: %s\n",
		      pr.name, pr.message);
	return CLI_EXIT_LIBRARY;
}

double
cli_edge_fill(const struct sc_runtime_stats *st, uint32_t capacity)
{
	return st->edges ? (double)st->pending /
			       ((double)st->edges * (double)capacity)
			 : 0.0;
}

/* --trace: a timeline for every worker, the host and a spare thread,
 * with room for a million records each (their pages are touched only as
 * turns fill them), and the counter of events through named. */
int
cli_trace_open(uint32_t workers, struct sc_timeline **out)
{
	struct sc_timeline_opts o = {.tracks = workers + 2,
				     .records_per_track = (size_t)1 << 20,
				     .counters = TRACE_COUNTERS,
				     .units = TRACE_UNITS};
	int rc = sc_timeline_create(&o, out);

	if (rc == 0)
		rc = sc_timeline_name(*out, SC_TIMELINE_COUNTER,
				      TRACE_HOST_COUNTER, "events out per s");
	for (int k = 0; rc == 0 && k < CLI_TRACE_HOST_KINDS; k++)
		rc = sc_timeline_name(*out, SC_TIMELINE_UNIT,
				      TRACE_HOST_UNIT(k), trace_host_names[k]);
	if (rc == 0)
		rc = sc_timeline_start(*out);
	if (rc) {
		sc_timeline_destroy(*out);
		*out = NULL;
		return cli_lib_error("sc_timeline_create", rc);
	}
	return 0;
}

int
cli_trace_close(struct sc_timeline *tl, FILE *f)
{
	int rc = 0;

	if (!tl)
		return 0;
	(void)sc_timeline_stop(tl);
	if (f && (rc = sc_timeline_write(tl, f)) != 0)
		rc = cli_lib_error("sc_timeline_write", rc);
	sc_timeline_destroy(tl);
	return rc;
}

void
cli_trace_host(struct sc_timeline *tl, enum cli_trace_host k, uint64_t start_ns,
	       uint64_t rows)
{
	struct sc_timeline_slice sl;

	if (!sc_timeline_on(tl))
		return;
	memset(&sl, 0, sizeof(sl));
	sl.start_ns = start_ns;
	sl.end_ns = sc_clock_ns();
	sl.end_ns = sl.end_ns > start_ns ? sl.end_ns : start_ns;
	sl.unit = TRACE_HOST_UNIT(k);
	sl.rows_out = rows;
	sc_timeline_slice(tl, &sl);
}

int
cli_trace_report(struct sc_timeline *tl, void (*write)(void *ctx, FILE *f),
		 void *ctx)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	if (!tl)
		return 0;
	if (!(f = open_memstream(&text, &len)))
		return cli_lib_error("open_memstream", SC_ENOMEM);
	write(ctx, f);
	if (fclose(f) != 0) {
		free(text);
		return cli_lib_error("the trace's report", SC_ENOMEM);
	}
	rc = sc_timeline_other(tl, "report", text);
	free(text);
	return rc ? cli_lib_error("sc_timeline_other", rc) : 0;
}

void
cli_trace_sample(struct sc_timeline *tl, struct sc_runtime *rt, uint64_t now,
		 uint64_t *last_ns, uint64_t *last_events, uint64_t events)
{
	if (now - *last_ns < 1000000ull)
		return;
	sc_runtime_trace_sample(rt);
	if (*last_ns)
		sc_timeline_sample(tl, TRACE_HOST_COUNTER, now,
				   (int64_t)((double)(events - *last_events) *
					     1e9 / (double)(now - *last_ns)));
	*last_ns = now;
	*last_events = events;
}

/* --- the progress line -----------------------------------------------------
 */

/* Where the line goes (NULL: nowhere), whether it is redrawn in place
 * (a terminal), and whether one is on the screen now. */
static FILE *progress_out;
static bool progress_tty, progress_drawn;

void
cli_progress_begin(FILE *o, bool quiet)
{
	progress_out = quiet ? NULL : o;
	progress_tty = !quiet && isatty(fileno(o));
	progress_drawn = false;
}

/* "  ETA 42s", "  ETA 3m05s", "  ETA 2h10m" into buf (empty when the
 * share done says nothing yet). */
static void
progress_eta(double elapsed_s, double done, char *buf, size_t n)
{
	long left;

	buf[0] = 0;
	if (!(done > 0 && done < 1) || elapsed_s <= 0)
		return;
	left = (long)(elapsed_s * (1 - done) / done + 0.5);
	if (left < 60)
		(void)snprintf(buf, n, "  ETA %lds", left);
	else if (left < 3600)
		(void)snprintf(buf, n, "  ETA %ldm%02lds", left / 60,
			       left % 60);
	else
		(void)snprintf(buf, n, "  ETA %ldh%02ldm", left / 3600,
			       left % 3600 / 60);
}

void
cli_progress_line(double elapsed_s, double done, const char *fmt, ...)
{
	char eta[48];
	va_list ap;

	if (!progress_out)
		return;
	progress_eta(elapsed_s, done, eta, sizeof(eta));
	/* On a terminal the line is drawn again in place; into a file or
	 * a pipe, a line each time. */
	(void)fprintf(progress_out, "%s[%6.1fs] ",
		      progress_tty ? "\r\033[K" : "", elapsed_s);
	va_start(ap, fmt);
	// NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized)
	(void)vfprintf(progress_out, fmt, ap);
	va_end(ap);
	(void)fprintf(progress_out, "%s%s", eta, progress_tty ? "" : "\n");
	progress_drawn = progress_tty;
	(void)fflush(progress_out);
}

void
cli_progress_end(void)
{
	if (progress_drawn)
		(void)fputc('\n', progress_out);
	progress_drawn = false;
}
