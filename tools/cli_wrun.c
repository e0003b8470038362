/*
 * cli_wrun.c - `subcirc run --workload SPEC` for any workload of the
 * workload interface (units/workload.h) but the two with runs of their
 * own (`grid`: cli_run.c, `nexmark`: cli_nexmark.c): a built-in
 * (bench/workloads/builtin.h: nexmark:Q, random, random-ticks) or a
 * plugin's shared object, live across worker threads, with a progress
 * line a second and a summary.
 *
 * The host thread asks its source for the next submission and submits
 * it (waiting out a full edge: the backpressure), until --events rows were
 * submitted, --seconds passed, the source ended (SC_EEMPTY) or a signal
 * came; then it waits for idle. Events per second and per CPU-second are
 * counted from the first submission to idle, as the Nexmark run counts
 * them (process CPU time, getrusage).
 *
 * The source. Submissions come from one call (struct wr_source): the
 * workload's sc_workload_next, or with --input the CSV inputs'
 * cli_io_next. A source that reads live input may answer SC_EAGAIN
 * (nothing ready yet): the host then checks for a signal and the
 * runtime's health, naps briefly and asks again.
 *
 * The host's promises (SC_WORKLOAD_ENV_*). The host feeds each submission
 * before it asks for the next, always: IN_ORDER. Without --check it reads
 * no output, so it promises STREAM too, and a workload may keep no
 * integral (nexmark:Q then makes its output a stream). --check reads the
 * integrals, so it does not.
 *
 * CSV in and out (tools/cli_io.h). --input NAME=FILE makes the named
 * files the source instead of the workload's next: each step cli_io_next
 * hands out is one submission (and, in a tick workload, one tick), the
 * default 3 s limit does not apply (the run lasts until every input
 * ends), and the workload's own reference is not consulted (the rows are
 * not its). A bad row stops the feeding: what came before it settles and
 * reaches the outputs, the summary is printed, and the run exits 2
 * naming file, line and column. --output NAME=FILE writes each step's
 * change of that output as it happens (a delta sink), or with --integral
 * its final rows, after the drain.
 *
 * --check. A single circuit of the workload's graph is fed in the host the
 * very batches the runtime is, as it goes (one step per submission; for a
 * tick workload, one step per tick), every state kept as the settle
 * check's reference keeps it (units/settle_work.c). At idle every
 * materialized output's integral is compared with the single circuit's,
 * and, for a workload with a reference (verify), verified by it; a stream
 * output keeps no integral and is not compared. A difference names the
 * output and the first row where they differ, exit 1.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench/harness.h"
#include "operators/batch.h"
#include "operators/circuit.h"
#include "operators/error.h"
#include "operators/graph.h"
#include "operators/schema.h"
#include "tools/cli.h"
#include "tools/cli_cmd.h"
#include "tools/cli_io.h"
#include "tools/cli_ranks.h"
#include "tools/cli_workload.h"
#include "units/placement.h"
#include "units/runtime.h"
#include "units/workload.h"

#define WR_STUCK_NS	  30000000000ull  /* a submit or tick wait that long */
#define WR_IDLE_NS	  120000000000ull /* the drain */
#define WR_RETRY_NS	  10000000ull	  /* a wait for room between looks */
#define WR_AGAIN_NS	  1000000ull	  /* the nap after SC_EAGAIN */
#define WR_DEFAULT_SECS	  3.0
#define WR_ALIVE_NS	  1000000ull /* between health checks (a lock) */
#define WR_PLACEMENT_SIZE 64

static const char usage_run_workload[] =
    "usage: subcirc run --workload SPEC [options]\n"
    "  any workload of the workload interface live across worker\n"
    "  threads: a built-in (nexmark:Q, random, random-ticks) or a\n"
    "  plugin's shared object (a SPEC with a '/' or ending in .so).\n"
    "  grid and nexmark have runs of their own (`run --help`,\n"
    "  `run --workload nexmark --help`).\n"
    "\n"
    "  --workload SPEC     the workload\n"
    "  --workload-arg K=V  an argument of the workload (repeatable); one\n"
    "                      it does not read is refused by name\n"
    "  --workers N         worker threads (default: all cores)\n"
    "  --placement P       single | per-node | chains | random:N |\n"
    "                      sharded:K | balanced:K (default: the\n"
    "                      workload's suggestion, else chains)\n"
    "  --events N          stop once N rows were submitted (also the\n"
    "                      workload's hint of how many to make), or\n"
    "  --seconds S         after S seconds; with neither, at the\n"
    "                      workload's end, or after 3 s if it has not\n"
    "                      ended by then\n"
    "  --seed S            the workload's seed (default 1)\n"
    "  --budget B          frames per turn (default 64)\n"
    "  --capacity C        edge capacity in frames, a power of two (64)\n"
    "  --input NAME=FILE   feed the graph's input NAME from a CSV file\n"
    "                      ('-' standard input, read as it arrives)\n"
    "                      instead of the workload's own submissions; the\n"
    "                      run lasts until every input ends (repeatable)\n"
    "  --output NAME=FILE  write each step's change of output NAME as CSV\n"
    "                      ('-' standard output), flushed as it happens\n"
    "  --integral          --output writes the final rows instead\n"
    "  --batch-rows N      rows per submission from an input (default\n"
    "                      1024)\n"
    "  --linger-ms MS      submit fewer once the first row waited MS ms\n"
    "                      (default 10)\n"
    "  --check             compare every output's integral with the\n"
    "                      single circuit fed the same submissions, and\n"
    "                      with the workload's own reference if it has\n"
    "                      one (exit 1 on a difference)\n"
    "  --quiet             no progress lines\n"
    "  --json FILE         the report (tools/report.schema.json); '-' is\n"
    "                      stdout, and the text goes to stderr\n"
    "  --version           the version and commit\n"
    "\n"
    "  SIGINT, SIGTERM or SIGHUP ends the run early: what was submitted\n"
    "  settles, the summary and the report say so (exit codes as for\n"
    "  the grid run).\n";

struct wr_cfg {
	const char *spec;
	struct cli_workload_args wargs;
	uint32_t workers;
	char placement[WR_PLACEMENT_SIZE]; /* "" = the workload's or chains */
	uint64_t events;		   /* 0: no limit */
	double seconds;			   /* 0: no limit */
	bool default_seconds;		   /* seconds is the 3 s default */
	uint64_t seed;
	uint32_t budget, capacity;
	bool check, quiet;
	const char *json;
	struct cli_io_opts io;
};

/*
 * Where submissions come from. next: 0 and *out (a batch the caller then
 * owns, or a tick boundary of a tick workload), SC_EEMPTY at the end,
 * SC_EAGAIN when nothing is ready yet (ask again), another SC_E* to stop
 * the run (its message in sc_errmsg).
 */
struct wr_source {
	int (*next)(void *ctx, struct sc_settle_step *out);
	void *ctx;
};

struct wr_run {
	const struct wr_cfg *cfg;
	struct sc_workload *w;
	struct sc_graph *g;
	bool ticks; /* a tick workload: the runtime in tick mode */
	struct wr_source src;
	char placement[WR_PLACEMENT_SIZE];
	struct sc_placement *p;
	struct sc_runtime *rt;
	struct sc_circuit *ref; /* --check: the single circuit */
	struct cli_io *io;	/* --input, --output: NULL without */
	bool tick_each;		/* a tick closed after each submission */
	bool bad_input;		/* the source stopped at a bad row */
	/* what the run measured */
	uint64_t events, submissions, ticks_closed, efull;
	uint64_t refused, refused_rows; /* submissions refused with SC_ELATE */
	uint64_t open;			/* submissions since the last tick */
	bool ended;			/* the source said SC_EEMPTY */
	bool dropped;			/* a batch in hand when a signal came */
	int interrupted;
	uint64_t t0, t_end, last_ns, last_events, alive_ns;
	double cpu0, cpu_end;
	struct sc_runtime_stats st;
	/* the check */
	const char *check; /* "ok", "failed", "skipped" */
	size_t compared;   /* outputs compared */
	char why[768];
};

/* --- options ---------------------------------------------------------------
 */

bool
cli_run_is_workload(int argc, char **argv)
{
	const char *v = NULL;

	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "--workload=", 11))
			v = argv[i] + 11;
		else if (!strcmp(argv[i], "--workload") && i + 1 < argc)
			v = argv[++i];
	}
	return v && strcmp(v, "grid") != 0 && strcmp(v, "nexmark") != 0;
}

static void
wr_defaults(struct wr_cfg *c)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	memset(c, 0, sizeof(*c));
	c->workers = n > 0 ? (uint32_t)n : 1;
	c->seed = 1;
	c->budget = 64;
	c->capacity = 64;
	cli_io_opts_init(&c->io);
}

/* One option of the numbers kind; false when argv[i] is not one. */
static bool
wr_number_opt(struct cli_args *a, struct wr_cfg *c)
{
	const char *v;

	if (cli_args_opt(a, "--workers", &v))
		c->workers =
		    (uint32_t)cli_parse_u64(a->cmd, "--workers", v, 1, 1024);
	else if (cli_args_opt(a, "--events", &v))
		c->events =
		    cli_parse_u64(a->cmd, "--events", v, 1, UINT64_MAX / 2);
	else if (cli_args_opt(a, "--seconds", &v))
		c->seconds =
		    cli_parse_double(a->cmd, "--seconds", v, 0.001, 1e6);
	else if (cli_args_opt(a, "--seed", &v))
		c->seed = cli_parse_u64(a->cmd, "--seed", v, 0, UINT64_MAX);
	else if (cli_args_opt(a, "--budget", &v))
		c->budget =
		    (uint32_t)cli_parse_u64(a->cmd, "--budget", v, 1, 1 << 20);
	else if (cli_args_opt(a, "--capacity", &v))
		c->capacity = cli_parse_capacity(a->cmd, "--capacity", v);
	else
		return false;
	return true;
}

/* Parse argv; exits 2 on a bad argument, returns false after --help or
 * --version. */
static bool
wr_parse(int argc, char **argv, struct wr_cfg *c)
{
	struct cli_args a = {.cmd = "run", .argc = argc, .argv = argv, .i = 0};
	const char *v;

	wr_defaults(c);
	while (a.i < argc) {
		if (cli_args_opt(&a, "--help", NULL) ||
		    cli_args_opt(&a, "-h", NULL)) {
			(void)fputs(usage_run_workload, stdout);
			return false;
		} else if (cli_args_opt(&a, "--version", NULL)) {
			cli_version_print();
			return false;
		} else if (cli_args_opt(&a, "--workload", &v)) {
			c->spec = v;
		} else if (cli_args_opt(&a, "--workload-arg", &v)) {
			cli_workload_arg_add("run", &c->wargs, v);
		} else if (cli_args_opt(&a, "--placement", &v)) {
			if (strlen(v) >= sizeof(c->placement))
				cli_die_usage("run",
					      "--placement: '%s' too long", v);
			strcpy(c->placement, v);
		} else if (cli_args_opt(&a, "--check", NULL)) {
			c->check = true;
		} else if (cli_args_opt(&a, "--quiet", NULL)) {
			c->quiet = true;
		} else if (cli_args_opt(&a, "--json", &v)) {
			c->json = v;
		} else if (!wr_number_opt(&a, c) &&
			   !cli_io_parse_opt(&a, &c->io)) {
			cli_die_usage("run",
				      "unknown argument '%s' (see "
				      "--workload %s --help)",
				      argv[a.i], c->spec ? c->spec : "SPEC");
		}
	}
	if (c->events && c->seconds > 0)
		cli_die_usage("run",
			      "--events and --seconds: give one, not both");
	if (!c->events && c->seconds <= 0 && !c->io.nin) {
		c->seconds = WR_DEFAULT_SECS;
		c->default_seconds = true;
	}
	return true;
}

/* --- the source ------------------------------------------------------------
 */

/* The workload's own submissions, in order. */
static int
wr_workload_next(void *ctx, struct sc_settle_step *out)
{
	return sc_workload_next(ctx, out);
}

/* The CSV inputs' steps; SC_ETIMEDOUT (nothing ready within about
 * 100 ms) is SC_EAGAIN to the loop. */
static int
wr_io_next(void *ctx, struct sc_settle_step *out)
{
	int rc = cli_io_next(ctx, out);

	return rc == SC_ETIMEDOUT ? SC_EAGAIN : rc;
}

/* --- setup -----------------------------------------------------------------
 */

static double
wr_cpu_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* The placement: --placement, else the workload's suggestion, else
 * chains; checked on the graph (exit 2 naming --placement). */
static int
wr_place(struct wr_run *x)
{
	const struct wr_cfg *c = x->cfg;
	const char *s = c->placement[0]
			    ? c->placement
			    : sc_workload_placement(x->w, c->workers);
	int rc;

	(void)snprintf(x->placement, sizeof(x->placement), "%s",
		       s ? s : "chains");
	cli_check_placement_of("run", "--placement", x->g, x->placement,
			       c->seed);
	if ((rc = sc_placement_parse(x->g, x->placement, c->seed, &x->p)) != 0)
		return cli_lib_error("sc_placement_parse", rc);
	return 0;
}

static int
wr_setup(struct wr_run *x, const struct wr_cfg *c)
{
	/* --check and --integral read integrals: no STREAM promise then. */
	uint32_t promise =
	    SC_WORKLOAD_ENV_IN_ORDER |
	    (c->check || c->io.integral ? 0 : SC_WORKLOAD_ENV_STREAM);
	int rc;

	x->cfg = c;
	x->check = "skipped";
	if ((rc = cli_workload_open("run", c->spec, &c->wargs, c->seed,
				    c->events, promise, &x->w)) != 0)
		return rc;
	x->g = sc_workload_graph(x->w);
	x->ticks = (sc_workload_def(x->w)->flags & SC_WORKLOAD_TICKS) != 0;
	x->src = (struct wr_source){.next = wr_workload_next, .ctx = x->w};
	if ((c->io.nin || c->io.nout) &&
	    (rc = cli_io_open("run", &c->io, x->g, &x->io)) != 0)
		return rc;
	if (cli_io_has_input(x->io)) {
		x->src = (struct wr_source){.next = wr_io_next, .ctx = x->io};
		x->tick_each = x->ticks;
	}
	if ((rc = wr_place(x)) != 0)
		return rc;
	if (c->check) {
		if ((rc = sc_circuit_create(x->g, &x->ref)) != 0)
			return cli_lib_error("sc_circuit_create", rc);
		/* As the settle check's reference: every state kept, so
		 * that a run with lateness cleanup is held to the integral
		 * kept whole (operators/waterline.h, "Why exact"). */
		(void)sc_circuit_set_cleanup(x->ref, false);
	}
	struct sc_runtime_opts ro = {.workers = c->workers,
				     .budget = c->budget,
				     .edge_capacity = c->capacity,
				     .ticks = x->ticks};
	if ((rc = sc_runtime_create(x->g, x->p, &ro, &x->rt)) != 0)
		return cli_lib_error("sc_runtime_create", rc);
	return x->io ? cli_io_attach(x->io, x->rt) : 0;
}

static void
wr_teardown(struct wr_run *x)
{
	if (x->rt) {
		(void)sc_runtime_shutdown(x->rt, NULL);
		sc_runtime_destroy(x->rt);
	}
	cli_io_destroy(x->io);
	sc_circuit_destroy(x->ref);
	sc_placement_destroy(x->p);
	sc_workload_destroy(x->w);
}

/* --- the run ---------------------------------------------------------------
 */

/* The single circuit takes a fed batch: one step per submission (and
 * those a carried delta asks for, circuit.h), or, for a tick workload,
 * held until the tick's boundary. */
static int
wr_ref_feed(struct wr_run *x, int input, struct sc_batch *b)
{
	int rc;

	if (!x->ref)
		return 0;
	if ((rc = sc_circuit_feed(x->ref, input, b)) != 0)
		return cli_lib_error("the check's sc_circuit_feed", rc);
	return x->ticks ? 0 : 1; /* 1: step now */
}

static int
wr_ref_step(struct wr_run *x)
{
	int rc = sc_circuit_step(x->ref);

	while (!rc && !x->ticks && sc_circuit_carried(x->ref))
		rc = sc_circuit_step(x->ref);
	return rc ? cli_lib_error("the check's sc_circuit_step", rc) : 0;
}

/* Submit b to input, waiting out a full edge a little at a time (so a
 * signal is seen meanwhile, and then the batch is dropped: the run ends
 * with what was submitted). 0, or an exit code. */
static int
wr_submit(struct wr_run *x, int input, struct sc_batch *b)
{
	uint64_t waited = 0;
	int rc = sc_runtime_submit(x->rt, input, b);

	if (rc == SC_EFULL)
		x->efull++;
	while (rc == SC_EFULL || rc == SC_ETIMEDOUT) {
		if (cli_signal_caught()) {
			x->dropped = true;
			return 0;
		}
		if (waited >= WR_STUCK_NS)
			return cli_lib_error("sc_runtime_submit_wait", rc);
		if ((rc = cli_runtime_check_alive(x->rt)) != 0)
			return rc;
		rc = sc_runtime_submit_wait(x->rt, input, b, WR_RETRY_NS);
		waited += WR_RETRY_NS;
	}
	if (rc == SC_ELATE) {
		/* Refused whole, nothing applied: counted, said once, and
		 * the single circuit is not fed it either. */
		x->refused_rows += sc_batch_count(b);
		if (!x->refused++ && !x->cfg->quiet)
			(void)fprintf(cli_report_text(), "  late: %s\n",
				      sc_errdetail());
		return 0;
	}
	if (rc && cli_runtime_check_alive(x->rt) == 0)
		return cli_lib_error("sc_runtime_submit", rc);
	if (rc)
		return CLI_EXIT_LIBRARY;
	x->events += sc_batch_count(b);
	x->open++;
	if ((rc = wr_ref_feed(x, input, b)) == 1)
		rc = wr_ref_step(x);
	return rc;
}

/* Close the open host tick (tick workloads): the runtime's and the single
 * circuit's. */
static int
wr_tick(struct wr_run *x)
{
	int rc = sc_runtime_tick(x->rt, WR_STUCK_NS, NULL);

	if (rc)
		return cli_lib_error("sc_runtime_tick", rc);
	x->ticks_closed++;
	x->open = 0;
	return x->ref ? wr_ref_step(x) : 0;
}

/* One submission in hand: fed to the runtime (and the check's circuit),
 * its batch released. */
static int
wr_feed(struct wr_run *x, struct sc_settle_step *st)
{
	int rc;

	/* sc_workload_next refuses these; another source might not. */
	if (!st->batch && (st->input != SC_SETTLE_TICK || !x->ticks)) {
		(void)fprintf(stderr,
			      "subcirc run: --workload %s: submission %" PRIu64
			      ": no batch, and not a tick workload's "
			      "boundary\n",
			      x->cfg->spec, x->submissions);
		return CLI_EXIT_USAGE;
	}
	if (!st->batch)
		rc = wr_tick(x);
	else
		rc = wr_submit(x, st->input, st->batch);
	if (!rc && st->batch && x->tick_each && !x->dropped)
		rc = wr_tick(x);
	sc_batch_release(st->batch);
	if (!rc && !x->dropped)
		x->submissions++;
	return rc;
}

static double
wr_share(const struct wr_run *x, double t)
{
	if (x->cfg->events)
		return (double)x->events / (double)x->cfg->events;
	if (x->cfg->seconds > 0 && !x->cfg->default_seconds)
		return t / x->cfg->seconds;
	return -1;
}

static void
wr_progress(struct wr_run *x, uint64_t now)
{
	double dt = (double)(now - x->last_ns) / 1e9;
	double t = (double)(now - x->t0) / 1e9;

	cli_progress_line(t, wr_share(x, t),
			  "%10.0f ev/s  events %12" PRIu64
			  "  submissions %10" PRIu64,
			  (double)(x->events - x->last_events) / dt, x->events,
			  x->submissions);
	x->last_ns = now;
	x->last_events = x->events;
}

static bool
wr_done(const struct wr_run *x, uint64_t end)
{
	return (x->cfg->events && x->events >= x->cfg->events) ||
	       sc_bench_now_ns() >= end || cli_signal_caught() ||
	       cli_io_broken(x->io);
}

static void
wr_nap(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000ull),
			      (long)(ns % 1000000000ull)};

	(void)nanosleep(&ts, NULL);
}

/* What the source said that is neither a submission nor SC_EAGAIN: an
 * error that stops the run (exit 2 for a workload's SC_EINVAL: a bad step
 * or argument, else 3). */
static int
wr_source_error(struct wr_run *x, int rc)
{
	if (cli_io_has_input(x->io)) {
		/* The message names file, line and column; every row
		 * before it was submitted and settles. */
		(void)fprintf(stderr, "subcirc run: --input: %s\n",
			      sc_errmsg());
		x->bad_input = rc == SC_EINVAL;
		return rc == SC_EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_LIBRARY;
	}
	(void)fprintf(
	    stderr, "subcirc run: --workload %s: submission %" PRIu64 ": %s\n",
	    x->cfg->spec, x->submissions, sc_errmsg());
	return rc == SC_EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_LIBRARY;
}

/* Submit until the run's end, the source's, or a signal. */
static int
wr_loop(struct wr_run *x)
{
	const struct wr_cfg *c = x->cfg;
	uint64_t end =
	    c->seconds > 0 ? x->t0 + (uint64_t)(c->seconds * 1e9) : UINT64_MAX;
	uint64_t now;
	int rc;

	while (!wr_done(x, end)) {
		struct sc_settle_step st = {.input = -1, .batch = NULL};

		now = sc_bench_now_ns();
		if (now - x->last_ns >= 1000000000ull)
			wr_progress(x, now);
		if (now - x->alive_ns >= WR_ALIVE_NS) {
			x->alive_ns = now;
			if ((rc = cli_runtime_check_alive(x->rt)) != 0)
				return rc;
		}
		rc = x->src.next(x->src.ctx, &st);
		if (rc == SC_EEMPTY) {
			x->ended = true;
			return 0;
		}
		if (rc == SC_EAGAIN) { /* nothing yet: wr_done sees a signal */
			wr_nap(WR_AGAIN_NS);
			continue;
		}
		if (rc)
			return wr_source_error(x, rc);
		if ((rc = wr_feed(x, &st)) != 0 || x->dropped)
			return rc;
	}
	return 0;
}

/* The loop, then the open tick closed (so what was submitted settles). */
static int
wr_drive(struct wr_run *x)
{
	int rc = wr_loop(x);

	if (!rc && x->ticks && x->open)
		rc = wr_tick(x);
	return rc;
}

/* --- the check -------------------------------------------------------------
 */

/* The first row where got and want differ, described into x->why. */
static void
wr_describe(struct wr_run *x, const char *name, const struct sc_schema *s,
	    const struct sc_batch *got, const struct sc_batch *want)
{
	size_t i = 0, ng = sc_batch_count(got), nw = sc_batch_count(want);
	size_t n = ng < nw ? ng : nw;
	const struct sc_batch *at = NULL;
	char row[256] = "";

	while (
	    i < n &&
	    sc_row_eq(sc_batch_row(got, i), sc_batch_row(want, i), s->ncols) &&
	    sc_batch_weight(got, i) == sc_batch_weight(want, i))
		i++;
	at = i < nw ? want : i < ng ? got : NULL;
	if (at)
		(void)sc_schema_format_row(s, sc_batch_row(at, i), row,
					   sizeof(row));
	(void)snprintf(x->why, sizeof(x->why),
		       "output %s: %zu rows, the single circuit %zu; first "
		       "difference at row %zu: %s %s (weight %" PRId64 ")",
		       name, ng, nw, i,
		       at == want ? "the single circuit has" : "the run has",
		       row, at ? sc_batch_weight(at, i) : 0);
}

/* Output node id: its integral against the single circuit's and the
 * workload's reference. 0 (x->check "failed" with x->why on a
 * difference), or an exit code. */
static int
wr_check_output(struct wr_run *x, int id, const struct sc_node_info *ni)
{
	struct sc_batch *got = NULL, *want = NULL;
	int rc;

	x->compared++;
	if ((rc = sc_runtime_integral(x->rt, id, &got)) != 0)
		return cli_lib_error("sc_runtime_integral", rc);
	if ((rc = sc_circuit_integral(x->ref, id, &want)) != 0) {
		sc_batch_release(got);
		return cli_lib_error("the check's sc_circuit_integral", rc);
	}
	if (!sc_batch_equal(got, want)) {
		x->check = "failed";
		wr_describe(x, ni->name, ni->schema, got, want);
	} else if (sc_workload_def(x->w)->verify && !x->refused &&
		   !cli_io_has_input(x->io) &&
		   (rc = sc_workload_verify(x->w, id, x->submissions, got)) !=
		       0) {
		if (rc != SC_ECALLBACK) {
			sc_batch_release(got);
			sc_batch_release(want);
			return cli_lib_error("the workload's verify", rc);
		}
		x->check = "failed";
		(void)snprintf(x->why, sizeof(x->why),
			       "output %s: the workload's reference: %s",
			       ni->name, sc_errdetail());
	}
	sc_batch_release(got);
	sc_batch_release(want);
	return 0;
}

/* Every materialized output checked, the first difference kept. */
static int
wr_check(struct wr_run *x)
{
	size_t n = sc_graph_node_count(x->g);

	if (!x->ref)
		return 0;
	x->check = "ok";
	for (size_t i = 0; i < n && !strcmp(x->check, "ok"); i++) {
		struct sc_node_info ni;
		int rc;

		if (sc_graph_node_info(x->g, (int)i, &ni) != 0 ||
		    ni.kind != SC_NODE_OUTPUT || ni.stream)
			continue;
		if ((rc = wr_check_output(x, (int)i, &ni)) != 0)
			return rc;
	}
	if (!x->compared) /* every output a stream: nothing to compare */
		x->check = "skipped";
	return 0;
}

/* --- after the run ---------------------------------------------------------
 */

struct wr_figs {
	double seconds, cpu_s, eps, epc; /* events per s, per CPU-s */
};

static void
wr_take_figs(const struct wr_run *x, struct wr_figs *f)
{
	f->seconds = (double)(x->t_end - x->t0) / 1e9;
	f->cpu_s = x->cpu_end - x->cpu0;
	f->eps = f->seconds > 0 ? (double)x->events / f->seconds : 0;
	f->epc = f->cpu_s > 0 ? (double)x->events / f->cpu_s : 0;
}

/* Why the feeding stopped, in words. */
static const char *
wr_stop_reason(const struct wr_run *x)
{
	if (x->interrupted)
		return "interrupted";
	if (x->bad_input)
		return "a bad input row";
	if (cli_io_broken(x->io))
		return "an output's failed write";
	if (x->ended)
		return cli_io_has_input(x->io) ? "the inputs' end"
					       : "the workload's end";
	if (x->cfg->events && x->events >= x->cfg->events)
		return "--events";
	return x->cfg->default_seconds ? "the default 3 s" : "--seconds";
}

static void
wr_summary(const struct wr_run *x, const struct wr_figs *f)
{
	FILE *o = cli_report_text();

	(void)fprintf(o,
		      "subcirc run: %s, placement %s (%u units, %u edges), "
		      "%u workers%s\n",
		      sc_workload_name(x->w), x->placement, x->st.units,
		      x->st.edges, x->cfg->workers,
		      x->ticks ? ", tick mode" : "");
	if (x->interrupted)
		(void)fprintf(o,
			      "  interrupted by %s: the figures are for what "
			      "ran\n",
			      cli_signal_name(x->interrupted));
	(void)fprintf(o,
		      "  events %" PRIu64 " in %" PRIu64
		      " submissions (%s), %.3f s: %.0f events/s, %.0f events "
		      "per CPU-second (%.2f CPU-s)\n",
		      x->events, x->submissions, wr_stop_reason(x), f->seconds,
		      f->eps, f->epc, f->cpu_s);
	if (x->ticks)
		(void)fprintf(o, "  ticks %" PRIu64 "\n", x->ticks_closed);
	(void)fprintf(o,
		      "  turns %" PRIu64 ", submits that met a full edge "
		      "%" PRIu64 "\n",
		      x->st.turns, x->efull);
	if (x->refused)
		(void)fprintf(o,
			      "  late: %" PRIu64 " submissions refused whole "
			      "(%" PRIu64 " rows)\n",
			      x->refused, x->refused_rows);
	if (!strcmp(x->check, "ok"))
		(void)fprintf(o, "  every output equals the single circuit%s\n",
			      sc_workload_def(x->w)->verify && !x->refused &&
				      !cli_io_has_input(x->io)
				  ? " and the workload's reference"
				  : "");
	else if (!strcmp(x->check, "failed"))
		(void)fprintf(o, "  check FAILED: %s\n", x->why);
	else if (x->cfg->check)
		(void)fprintf(o, "  check skipped: every output is a stream "
				 "(keeps no integral)\n");
}

static void
wr_json_config(const struct wr_cfg *c, const struct wr_run *x,
	       struct cli_json *j)
{
	cli_json_text(j, "workload", c->spec);
	cli_json_open(j, "workload_args", '{', true);
	for (size_t i = 0; i < c->wargs.n; i++)
		cli_json_text(j, c->wargs.args[i].key, c->wargs.args[i].value);
	cli_json_close(j);
	cli_json_uint(j, "workers", c->workers);
	cli_json_text(j, "placement", x->placement);
	if (c->events)
		cli_json_uint(j, "events", c->events);
	else
		cli_json_null(j, "events");
	cli_json_real(j, "seconds", c->seconds);
	cli_json_uint(j, "seed", c->seed);
	cli_json_uint(j, "budget", c->budget);
	cli_json_uint(j, "capacity", c->capacity);
	cli_json_open(j, "inputs", '{', true);
	for (size_t i = 0; i < c->io.nin; i++)
		cli_json_text(j, c->io.in[i].node, c->io.in[i].path);
	cli_json_close(j);
	cli_json_open(j, "outputs", '{', true);
	for (size_t i = 0; i < c->io.nout; i++)
		cli_json_text(j, c->io.out[i].node, c->io.out[i].path);
	cli_json_close(j);
	cli_json_bool(j, "integral", c->io.integral);
	cli_json_bool(j, "check", c->check);
	cli_json_bool(j, "quiet", c->quiet);
	cli_json_text(j, "json", c->json);
}

static void
wr_json(struct cli_report *rep, const struct wr_run *x, const struct wr_figs *f,
	FILE *out)
{
	struct cli_json *j = &rep->j;

	(void)snprintf(rep->workload, sizeof(rep->workload), "%s",
		       sc_workload_name(x->w));
	cli_report_open(rep, out, x->interrupted);
	wr_json_config(x->cfg, x, j);
	cli_report_results(rep);
	cli_json_uint(j, "events", x->events);
	cli_json_uint(j, "submissions", x->submissions);
	cli_json_uint(j, "ticks", x->ticks_closed);
	cli_json_real(j, "seconds", f->seconds);
	cli_json_real(j, "cpu_seconds", f->cpu_s);
	cli_json_real(j, "events_per_s", f->eps);
	cli_json_real(j, "events_per_cpu_s", f->epc);
	cli_json_uint(j, "workers", x->cfg->workers);
	cli_json_text(j, "placement", x->placement);
	cli_json_uint(j, "units", x->st.units);
	cli_json_uint(j, "edges", x->st.edges);
	cli_json_uint(j, "turns", x->st.turns);
	cli_json_uint(j, "efull", x->efull);
	cli_json_uint(j, "refused_submissions", x->refused);
	cli_json_text(j, "stopped_by", wr_stop_reason(x));
	cli_json_text(j, "check", x->check);
	cli_json_text(j, "why", strcmp(x->check, "failed") ? NULL : x->why);
	cli_json_bool(j, "interrupted", x->interrupted != 0);
	cli_report_close(rep);
}

/* Drain, check and sum up a run that fed without error. */
static int
wr_settle(struct wr_run *x, struct wr_figs *f)
{
	struct sc_panic_record pr;
	int rc = sc_runtime_wait_idle(x->rt, WR_IDLE_NS, &pr);

	if (rc == SC_EPANIC)
		(void)fprintf(stderr, "subcirc run: unit %s panicked: %s\n",
			      pr.name, pr.message);
	if (rc)
		return cli_lib_error("sc_runtime_wait_idle", rc);
	x->t_end = sc_bench_now_ns();
	x->cpu_end = wr_cpu_s();
	sc_runtime_stats(x->rt, &x->st);
	wr_take_figs(x, f);
	return wr_check(x);
}

int
cli_cmd_run_workload(int argc, char **argv)
{
	struct wr_cfg c;
	struct wr_run x;
	struct wr_figs f = {0};
	struct cli_report rep;
	FILE *json;
	bool printed = false;
	int rc, wrc;

	cli_report_start(&rep, "run", "workload");
	if (!wr_parse(argc, argv, &c))
		return 0;
	if (cli_ranks_launched() > 1)
		cli_die_usage("run",
			      "--workload %s: not under mpirun (%u ranks): "
			      "this run is one process",
			      c.spec, cli_ranks_launched());
	memset(&x, 0, sizeof(x));
	json = cli_open_out("run", "--json", c.json);
	cli_signal_catch();
	if ((rc = wr_setup(&x, &c)) != 0)
		goto out;
	cli_progress_begin(cli_report_text(), c.quiet);
	x.t0 = x.last_ns = sc_bench_now_ns();
	x.cpu0 = wr_cpu_s();
	rc = wr_drive(&x);
	cli_progress_end();
	x.interrupted = cli_signal_caught();
	/* After a bad input row what came before it settles and is
	 * written, then the run exits with the row's error. */
	int feed_rc = x.bad_input ? rc : 0;
	if (!rc || x.bad_input)
		rc = wr_settle(&x, &f);
	if (!rc && x.io)
		rc = cli_io_finish(x.io, x.rt);
	if (!rc && feed_rc) {
		wr_summary(&x, &f);
		rc = feed_rc;
	}
	if (!rc) {
		wr_summary(&x, &f);
		printed = true;
		if (json)
			wr_json(&rep, &x, &f, json);
	}
out:
	wr_teardown(&x);
	wrc = cli_close_out("run", c.json, json);
	if (rc || wrc)
		return rc ? rc : wrc;
	return !printed			    ? CLI_EXIT_LIBRARY
	       : !strcmp(x.check, "failed") ? CLI_EXIT_CHECK
	       : x.refused		    ? CLI_EXIT_REFUSED
					    : 0;
}
