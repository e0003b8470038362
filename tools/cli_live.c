/*
 * cli_live.c - what the live runs (the grid's, cli_grid.c, and
 * Nexmark's, cli_nexmark.c) share: the check for a unit that panicked,
 * and the --trace timeline (a Chrome trace: a track per worker, the
 * edges' fill and the events through per second as counters).
 */
#include <stdint.h>
#include <stdio.h>

#include "operators/error.h"
#include "runtime/executor.h"
#include "runtime/timeline.h"
#include "tools/cli.h"
#include "units/runtime.h"

/* The trace's counter of the events through per second: after the
 * edges' (the runtime numbers those from 0). */
#define TRACE_HOST_COUNTER (TRACE_COUNTERS - 1)
#define TRACE_COUNTERS	   4096

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

/* --trace: a timeline for every worker, the host and a spare thread,
 * with room for a million records each (their pages are touched only as
 * turns fill them), and the counter of events through named. */
int
cli_trace_open(uint32_t workers, struct sc_timeline **out)
{
	struct sc_timeline_opts o = {.tracks = workers + 2,
				     .records_per_track = (size_t)1 << 20,
				     .counters = TRACE_COUNTERS};
	int rc = sc_timeline_create(&o, out);

	if (rc == 0)
		rc = sc_timeline_name(*out, SC_TIMELINE_COUNTER,
				      TRACE_HOST_COUNTER, "events out per s");
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
