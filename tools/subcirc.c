/*
 * subcirc.c - the subcirc command line: run, place, stress.
 *
 *   subcirc run     a live grid workload across cores, a progress line a
 *                   second and a final summary verified against the
 *                   workload's from-scratch reference;
 *   subcirc place   every placement strategy x worker count on the grid,
 *                   side by side;
 *   subcirc stress  seed ranges x workers x placements, on the grid and on
 *                   random circuits (bench/workload_random.h), under the
 *                   seeded scheduler (or a real pool), checking that the
 *                   placed circuit settles where the single circuit does,
 *                   and, with injected faults, that a panic stays in its
 *                   unit and is reported.
 *
 * Everything here is a call of the public C API (operators/graph.h,
 * operators/circuit.h, units/placement.h, units/runtime.h,
 * runtime/executor.h, runtime/sim.h, runtime/watchdog.h) and of the
 * workloads (bench/workload_grid.h, bench/workload_random.h), so a
 * program can do the same.
 *
 * Latency. Each batch carries a stamp (workload_grid.h): the "totals"
 * output's delta callback, on the worker that ran the step, reads the
 * newest stamp that came through, and every batch up to it is done at that
 * moment. A batch's latency is from the submit call that accepted it (a
 * submit that met a full edge and then waited counts from its first try,
 * so backpressure shows in the latency) to that callback. Latencies go
 * into a log-linear histogram (16 steps per power of two, so a percentile
 * is within about 6%).
 *
 * Exit codes: 0 success, 1 a failed check (a result that is not the
 * reference, a stress case that does not settle), 2 a bad argument, 3 an
 * error of the library.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/harness.h"
#include "bench/workload_grid.h"
#include "bench/workload_random.h"
#include "operators/batch.h"
#include "operators/circuit.h"
#include "operators/error.h"
#include "operators/graph.h"
#include "runtime/executor.h"
#include "runtime/sim.h"
#include "runtime/watchdog.h"
#include "units/placement.h"
#include "units/runtime.h"

#define EXIT_CHECK   1
#define EXIT_USAGE   2
#define EXIT_LIBRARY 3

#define MAX_LIST  32	     /* entries of a comma list */
#define SENT_RING (1u << 16) /* batches in flight whose submit time we keep */

/* --- usage ---------------------------------------------------------------- */

static const char usage_main[] =
    "usage: subcirc <command> [options]\n"
    "\n"
    "commands:\n"
    "  run      a live grid workload across cores (progress, summary)\n"
    "  place    every placement strategy x worker count, side by side\n"
    "  stress   seeds x workers x placements under the seeded scheduler\n"
    "\n"
    "`subcirc <command> --help` describes a command's options.\n"
    "Exit codes: 0 ok, 1 a failed check, 2 a bad argument, 3 a library "
    "error.\n";

static const char usage_run[] =
    "usage: subcirc run [options]\n"
    "  a live grid workload (cell edits -> sums per row and column -> a\n"
    "  projection with a total per row) across worker threads; the final\n"
    "  output is checked against the workload's from-scratch reference.\n"
    "\n"
    "  --workers N       worker threads (default: all cores)\n"
    "  --placement P     single | per-node | chains | random:N | sharded:K\n"
    "                    (default chains)\n"
    "  --events N        stop after N cell edits, or\n"
    "  --seconds S       stop after S seconds (default 3 when neither)\n"
    "  --batch R         cell edits per submitted batch (default 256)\n"
    "  --rate E          offer E events/s (open loop; default: as fast as\n"
    "                    backpressure allows, so latency is queueing)\n"
    "  --rows N --cols N grid size (default 256 x 256)\n"
    "  --seed S          the edit generator's seed (default 1)\n"
    "  --capacity C      edge capacity in frames, a power of two (64)\n"
    "  --budget B        frames per turn (default 64)\n"
    "  --quiet           no progress lines\n"
    "  --json FILE       the summary and progress samples as JSON\n"
    "  --csv FILE        the progress samples and the total as CSV\n";

static const char usage_place[] =
    "usage: subcirc place [options]\n"
    "  every placement strategy x worker count on the grid workload:\n"
    "  throughput, latency p50/p99, turns, kicks, side by side.\n"
    "\n"
    "  --workers LIST    comma list of worker counts (default 1,2)\n"
    "  --placements LIST comma list of strategies (default single,\n"
    "                    per-node,chains,random:3,sharded:2,sharded:4)\n"
    "  --events N        cell edits per case (default 200000)\n"
    "  --reps N          runs per case; the median by events/s is shown\n"
    "                    (default 3, at most 15)\n"
    "  --batch R --rows N --cols N --seed S   as for run\n"
    "  --json FILE       the table as JSON\n"
    "  --csv FILE        the table as CSV\n"
    "  The table is followed by a bar plot of events/s.\n";

static const char usage_stress[] =
    "usage: subcirc stress [options]\n"
    "  seeds x workers x placements on the grid workload and on random\n"
    "  circuits (sizes, batches, edge capacities and outbox bounds drawn\n"
    "  from the seed) under the\n"
    "  seeded scheduler: every case must settle exactly where the single\n"
    "  circuit does, with every edge empty. The first failing case is\n"
    "  printed with the command that replays it.\n"
    "\n"
    "  --seeds A..B      seed range, inclusive (default 1..20; or one seed)\n"
    "  --workers LIST    units held at once by the scheduler, or threads\n"
    "                    with --pool (default 1,2,3,4)\n"
    "  --placements LIST comma list (default single,per-node,chains,\n"
    "                    random:2,random:5,sharded:2,sharded:3)\n"
    "  --workloads W     grid, random (random circuits of join, antijoin,\n"
    "                    distinct, aggregate, map, filter, plus, minus...)\n"
    "                    or grid,random (default)\n"
    "  --panic-rate X    grid: share (0..1) of projection rows whose callback\n"
    "                    fails: the unit panics, and the case must still\n"
    "                    settle, report the panic and keep its edges clean\n"
    "  --pool            real worker threads instead of the scheduler\n"
    "  --verbose         one line per case\n";

/* A bad argument: say which and exit 2. */
static void __attribute__((noreturn, format(printf, 2, 3)))
die_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	(void)fprintf(stderr, "subcirc %s: ", cmd);
	va_start(ap, fmt);
	/* The analyzer loses va_start on some inlined paths. */
	(void)vfprintf(stderr, fmt,
		       ap); // NOLINT(clang-analyzer-valist.Uninitialized)
	va_end(ap);
	(void)fprintf(stderr, "\n(see `subcirc %s --help`)\n", cmd);
	/* The CLI exits before it starts any thread. */
	exit(EXIT_USAGE); // NOLINT(concurrency-mt-unsafe)
}

/* A library call failed: name it, with the library's message. */
static int
lib_error(const char *what, int rc)
{
	(void)fprintf(stderr, "subcirc: %s: %s (%s)\n", what, sc_errname(rc),
		      sc_errmsg()[0] ? sc_errmsg() : sc_strerror(rc));
	return EXIT_LIBRARY;
}

/* A library call failed while arguments are checked: name it, exit 3. */
static void __attribute__((noreturn)) die_library(const char *what, int rc)
{
	/* The CLI exits before it starts any thread. */
	exit(lib_error(what, rc)); // NOLINT(concurrency-mt-unsafe)
}

/* --- argument parsing ----------------------------------------------------- */

struct args {
	const char *cmd; /* for messages */
	int argc;
	char **argv;
	int i; /* next argument */
};

/* Whether argv[i] is option `name`; its value (from "--name=v" or the next
 * argument) in *val when the option takes one (val non-NULL). */
static bool
args_opt(struct args *a, const char *name, const char **val)
{
	const char *s = a->argv[a->i];
	size_t n = strlen(name);

	if (strncmp(s, name, n) != 0 || (s[n] != 0 && s[n] != '='))
		return false;
	if (!val) {
		if (s[n] == '=')
			die_usage(a->cmd, "%s takes no value", name);
		a->i++;
		return true;
	}
	if (s[n] == '=') {
		*val = s + n + 1;
	} else {
		if (a->i + 1 >= a->argc)
			die_usage(a->cmd, "%s needs a value", name);
		*val = a->argv[++a->i];
	}
	a->i++;
	return true;
}

static uint64_t
parse_u64(const char *cmd, const char *name, const char *s, uint64_t lo,
	  uint64_t hi)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (!*s || *end || errno || s[0] == '-' || v < lo || v > hi)
		die_usage(cmd,
			  "%s: '%s' is not a whole number in %" PRIu64
			  "..%" PRIu64,
			  name, s, lo, hi);
	return v;
}

static double
parse_double(const char *cmd, const char *name, const char *s, double lo,
	     double hi)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (!*s || *end || errno || !(v >= lo && v <= hi))
		die_usage(cmd, "%s: '%s' is not a number in %g..%g", name, s,
			  lo, hi);
	return v;
}

/* A comma list of whole numbers. */
static size_t
parse_u32_list(const char *cmd, const char *name, const char *s, uint32_t lo,
	       uint32_t hi, uint32_t *out)
{
	char buf[256], *save = NULL, *tok;
	size_t n = 0;

	if (strlen(s) >= sizeof(buf))
		die_usage(cmd, "%s: list too long", name);
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (n == MAX_LIST)
			die_usage(cmd, "%s: more than %d entries", name,
				  MAX_LIST);
		out[n++] = (uint32_t)parse_u64(cmd, name, tok, lo, hi);
	}
	if (n == 0)
		die_usage(cmd, "%s: empty list", name);
	return n;
}

/* A comma list of placement names, checked against the grid's graph so a
 * misspelled one is refused before anything runs. */
static size_t
parse_placements(const char *cmd, const char *s, char out[][32])
{
	char buf[512], *save = NULL, *tok;
	struct sc_grid_opts go = {.rows = 1, .cols = 1};
	struct sc_grid *gr = NULL;
	size_t n = 0;

	if (strlen(s) >= sizeof(buf))
		die_usage(cmd, "--placements: list too long");
	strcpy(buf, s);
	if (sc_grid_create(&go, &gr) != 0)
		die_library("sc_grid_create", SC_ENOMEM);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		struct sc_placement *p = NULL;

		if (n == MAX_LIST || strlen(tok) >= 32)
			die_usage(cmd, "--placements: too many or too long");
		if (sc_placement_parse(sc_grid_graph(gr), tok, 1, &p) != 0)
			die_usage(cmd, "--placements: '%s': %s", tok,
				  sc_errmsg());
		sc_placement_destroy(p);
		strcpy(out[n++], tok);
	}
	sc_grid_destroy(gr);
	if (n == 0)
		die_usage(cmd, "--placements: empty list");
	return n;
}

/* --- latency histogram ------------------------------------------------------
 * Bucket of v ns: v itself below 16; else 16 steps per power of two. */

#define HIST_SUB     16
#define HIST_BUCKETS (64 * HIST_SUB)

struct hist {
	_Atomic uint64_t b[HIST_BUCKETS];
};

static unsigned
hist_bucket(uint64_t v)
{
	unsigned e;

	if (v < HIST_SUB)
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v); /* >= 4 */
	return (e - 3) * HIST_SUB + (unsigned)((v >> (e - 4)) & (HIST_SUB - 1));
}

/* The smallest value of bucket i. */
static uint64_t
hist_floor(unsigned i)
{
	unsigned e;

	if (i < 2 * HIST_SUB)
		return i < HIST_SUB ? i : HIST_SUB + (i - HIST_SUB);
	e = i / HIST_SUB + 3;
	return ((uint64_t)(HIST_SUB + i % HIST_SUB)) << (e - 4);
}

static void
hist_add(struct hist *h, uint64_t v)
{
	atomic_fetch_add_explicit(&h->b[hist_bucket(v)], 1,
				  memory_order_relaxed);
}

/* Copy h into plain counts (and zero h if `reset`); returns the total. */
static uint64_t
hist_take(struct hist *h, uint64_t *out, bool reset)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		out[i] = reset ? atomic_exchange_explicit(&h->b[i], 0,
							  memory_order_relaxed)
			       : atomic_load_explicit(&h->b[i],
						      memory_order_relaxed);
		n += out[i];
	}
	return n;
}

/* The q-quantile (0..1) in microseconds of counts c (total n); NAN-free:
 * 0 when empty. The midpoint of the bucket. */
static double
hist_quantile_us(const uint64_t *c, uint64_t n, double q)
{
	uint64_t rank = (uint64_t)(q * (double)n), seen = 0;

	if (n == 0)
		return 0.0;
	if (rank >= n)
		rank = n - 1;
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		seen += c[i];
		if (seen > rank) {
			uint64_t lo = hist_floor(i);
			uint64_t hi =
			    i + 1 < HIST_BUCKETS ? hist_floor(i + 1) : lo;

			return ((double)lo + (double)hi) / 2.0 / 1000.0;
		}
	}
	return 0.0;
}

/* --- run: the live workload ----------------------------------------------- */

struct run_cfg {
	uint32_t workers;
	char placement[32];
	uint64_t events; /* 0: by time */
	double seconds;	 /* 0: by events */
	double rate;	 /* events/s offered; 0: as fast as backpressure
			    lets the host go (closed loop) */
	uint32_t batch;	 /* edits per batch */
	int64_t rows, cols;
	uint64_t seed;
	uint32_t capacity;
	uint32_t budget;
	bool quiet;	  /* no progress lines */
	const char *json; /* files, or NULL */
	const char *csv;
};

/* One progress sample. */
struct sample {
	double t;	 /* seconds since the start */
	uint64_t events; /* edits done (their batches came through) */
	double eps;	 /* edits per second in the interval */
	double p50_us, p99_us;
	double fill; /* frames in rings / room of all edges */
};

struct run_result {
	uint64_t events;  /* edits submitted (and, at idle, done) */
	uint64_t batches; /* batches submitted */
	double seconds;	  /* first submit to idle */
	double eps;	  /* events / seconds */
	double p50_us, p99_us, max_us;
	uint64_t turns, kicks, efull;
	uint32_t units, edges;
	bool ok;	  /* output == reference, stamps all seen */
	char why[512];	  /* when not ok */
	struct sample *s; /* progress samples */
	size_t ns, cap_s;
};

/* What the delta callback shares with the host. */
struct latency {
	const struct sc_grid *gr;
	_Atomic uint64_t done;		  /* newest stamp seen */
	_Atomic uint64_t sent[SENT_RING]; /* submit time of batch s */
	struct hist all, interval;
};

static int
on_totals(void *ctx, int node, const struct sc_batch *delta)
{
	struct latency *l = ctx;
	uint64_t s, old, now;

	(void)node;
	if (sc_grid_stamp(l->gr, delta, &s) != 0)
		return 0;
	now = sc_bench_now_ns();
	old = atomic_load(&l->done);
	while (old < s && !atomic_compare_exchange_weak(&l->done, &old, s))
		;
	/* The batches (old, s] came through at once (deltas coalesce). */
	for (uint64_t q = old + 1; q <= s; q++) {
		uint64_t t = atomic_load_explicit(&l->sent[q % SENT_RING],
						  memory_order_relaxed);
		uint64_t d = now > t ? now - t : 0;

		hist_add(&l->all, d);
		hist_add(&l->interval, d);
	}
	return 0;
}

/* Everything one run holds; torn down by run_teardown. */
struct run_ctx {
	const struct run_cfg *cfg;
	struct sc_grid *gr;
	struct sc_grid_nodes nodes;
	struct sc_placement *p;
	struct sc_runtime *rt;
	struct sc_watchdog *wd;
	struct latency *lat;
	uint64_t t0, last_ns, last_done;
};

static void
run_teardown(struct run_ctx *x)
{
	sc_watchdog_destroy(x->wd);
	sc_runtime_destroy(x->rt);
	sc_placement_destroy(x->p);
	sc_grid_destroy(x->gr);
	free(x->lat);
}

static int
run_setup(struct run_ctx *x, const struct run_cfg *cfg)
{
	struct sc_grid_opts go = {
	    .rows = cfg->rows, .cols = cfg->cols, .seed = cfg->seed};
	struct sc_runtime_opts ro = {.workers = cfg->workers,
				     .budget = cfg->budget,
				     .edge_capacity = cfg->capacity};
	/* Generous thresholds: on a loaded machine a turn may wait; what
	 * the watchdog is for here is a lost kick or a hang, by name. */
	struct sc_watchdog_opts wo = {.period_ns = 50000000,
				      .stall_ns = 5000000000ull,
				      .starve_ns = 5000000000ull,
				      .no_progress_ns = 10000000000ull,
				      .rate_limit_ns = 5000000000ull};
	int rc;

	memset(x, 0, sizeof(*x));
	x->cfg = cfg;
	x->lat = calloc(1, sizeof(*x->lat));
	if (!x->lat)
		return lib_error("calloc", SC_ENOMEM);
	if ((rc = sc_grid_create(&go, &x->gr)) != 0)
		return lib_error("sc_grid_create", rc);
	x->lat->gr = x->gr;
	sc_grid_nodes(x->gr, &x->nodes);
	if ((rc = sc_placement_parse(sc_grid_graph(x->gr), cfg->placement,
				     cfg->seed, &x->p)) != 0)
		return lib_error("sc_placement_parse", rc);
	if ((rc = sc_runtime_create(sc_grid_graph(x->gr), x->p, &ro, &x->rt)) !=
	    0)
		return lib_error("sc_runtime_create", rc);
	if ((rc = sc_runtime_on_delta(x->rt, x->nodes.out_totals, on_totals,
				      x->lat)) != 0)
		return lib_error("sc_runtime_on_delta", rc);
	if ((rc = sc_watchdog_create(sc_runtime_exec(x->rt), &wo, &x->wd)) != 0)
		return lib_error("sc_watchdog_create", rc);
	return 0;
}

static void
result_sample(struct run_result *r, const struct sample *s)
{
	if (r->ns == r->cap_s) {
		size_t cap = r->cap_s ? 2 * r->cap_s : 64;
		struct sample *n = realloc(r->s, cap * sizeof(*n));

		if (!n)
			return; /* a sample fewer; the run goes on */
		r->s = n;
		r->cap_s = cap;
	}
	r->s[r->ns++] = *s;
}

/* Once a second: a progress line and a sample. */
static void
run_progress(struct run_ctx *x, struct run_result *r, uint64_t now)
{
	static uint64_t counts[HIST_BUCKETS];
	struct sc_runtime_stats st;
	struct sample s;
	uint64_t done = atomic_load(&x->lat->done), n;
	double dt = (double)(now - x->last_ns) / 1e9;

	n = hist_take(&x->lat->interval, counts, true);
	sc_runtime_stats(x->rt, &st);
	s.t = (double)(now - x->t0) / 1e9;
	s.events = done * x->cfg->batch;
	s.eps = (double)((done - x->last_done) * x->cfg->batch) / dt;
	s.p50_us = hist_quantile_us(counts, n, 0.50);
	s.p99_us = hist_quantile_us(counts, n, 0.99);
	s.fill = st.edges ? (double)st.pending /
				((double)st.edges * (double)x->cfg->capacity)
			  : 0.0;
	result_sample(r, &s);
	x->last_ns = now;
	x->last_done = done;
	if (!x->cfg->quiet)
		(void)printf("[%6.1fs] %10.0f ev/s  p50 %9.1f us  p99 %9.1f us"
			     "  edge fill %5.1f%%  turns %" PRIu64 "\n",
			     s.t, s.eps, s.p50_us, s.p99_us, 100.0 * s.fill,
			     st.turns);
	(void)fflush(stdout);
}

/* Submit one batch, respecting backpressure: a full edge is counted and
 * waited out (the runtime wakes us when the input's unit takes frames). */
static int
run_submit(struct run_ctx *x, struct run_result *r, struct sc_batch *b)
{
	uint64_t seq = sc_grid_seq(x->gr);
	int rc;

	/* Never more batches in flight than the ring keeps times for. */
	while (seq - atomic_load(&x->lat->done) >= SENT_RING)
		sched_yield();
	atomic_store_explicit(&x->lat->sent[seq % SENT_RING], sc_bench_now_ns(),
			      memory_order_relaxed);
	rc = sc_runtime_submit(x->rt, x->nodes.cells, b);
	if (rc == SC_EFULL) {
		r->efull++;
		rc = sc_runtime_submit_wait(x->rt, x->nodes.cells, b,
					    30000000000ull);
	}
	return rc;
}

static bool
run_should_stop(const struct run_cfg *cfg, uint64_t events, uint64_t now,
		uint64_t t0)
{
	if (cfg->events && events >= cfg->events)
		return true;
	return cfg->seconds > 0 && (double)(now - t0) / 1e9 >= cfg->seconds;
}

/* The final checks: idle invariant, every stamp seen, outputs equal to
 * the reference. */
static void
run_verify(struct run_ctx *x, struct run_result *r)
{
	const int outs[2] = {x->nodes.out_grid, x->nodes.out_totals};
	int rc;

	r->ok = false;
	if (sc_runtime_check_idle(x->rt) != 0) {
		(void)snprintf(r->why, sizeof(r->why), "idle check: %s",
			       sc_errmsg());
		return;
	}
	if (atomic_load(&x->lat->done) != sc_grid_seq(x->gr)) {
		(void)snprintf(r->why, sizeof(r->why),
			       "last stamp seen %" PRIu64
			       ", submitted %" PRIu64,
			       atomic_load(&x->lat->done), sc_grid_seq(x->gr));
		return;
	}
	for (int i = 0; i < 2; i++) {
		struct sc_batch *got = NULL;

		rc = sc_runtime_integral(x->rt, outs[i], &got);
		if (!rc)
			rc = sc_grid_verify(x->gr, outs[i], got);
		sc_batch_release(got);
		if (rc) {
			(void)snprintf(r->why, sizeof(r->why), "%s",
				       sc_errmsg());
			return;
		}
	}
	r->ok = true;
}

/* Sum the kicks every unit received. */
static uint64_t
run_kicks(struct sc_exec *ex)
{
	size_t n = sc_exec_snapshot(ex, NULL, 0);
	struct sc_exec_unit_info *u = calloc(n ? n : 1, sizeof(*u));
	uint64_t k = 0;

	if (!u)
		return 0;
	n = sc_exec_snapshot(ex, u, n);
	for (size_t i = 0; i < n; i++)
		k += u[i].kicks;
	free(u);
	return k;
}

static int
run_finish(struct run_ctx *x, struct run_result *r, uint64_t t_end)
{
	static uint64_t counts[HIST_BUCKETS];
	struct sc_runtime_stats st;
	uint64_t n = hist_take(&x->lat->all, counts, false);

	r->seconds = (double)(t_end - x->t0) / 1e9;
	r->eps = r->seconds > 0 ? (double)r->events / r->seconds : 0.0;
	r->p50_us = hist_quantile_us(counts, n, 0.50);
	r->p99_us = hist_quantile_us(counts, n, 0.99);
	r->max_us = hist_quantile_us(counts, n, 1.0);
	sc_runtime_stats(x->rt, &st);
	r->turns = st.turns;
	r->units = st.units;
	r->edges = st.edges;
	r->kicks = run_kicks(sc_runtime_exec(x->rt));
	run_verify(x, r);
	return 0;
}

/* Open loop: wait until the next batch is due at the offered rate. */
static void
run_pace(const struct run_cfg *cfg, uint64_t events, uint64_t t0)
{
	uint64_t due, now;

	if (cfg->rate <= 0)
		return;
	due = t0 + (uint64_t)((double)events / cfg->rate * 1e9);
	while ((now = sc_bench_now_ns()) < due) {
		struct timespec ts = {0, (long)(due - now)};

		if (due - now >= 1000000000ull)
			ts = (struct timespec){1, 0};
		(void)nanosleep(&ts, NULL);
	}
}

/* One run of the workload as cfg says; 0 or an exit code. */
static int
run_once(const struct run_cfg *cfg, struct run_result *r)
{
	struct run_ctx x;
	struct sc_panic_record pr;
	uint64_t now;
	int rc = run_setup(&x, cfg);

	memset(r, 0, sizeof(*r));
	if (rc)
		goto cleanup;
	x.t0 = x.last_ns = sc_bench_now_ns();
	for (now = x.t0; !run_should_stop(cfg, r->events, now, x.t0);) {
		struct sc_batch *b = NULL;

		run_pace(cfg, r->events, x.t0);
		if ((rc = sc_grid_next(x.gr, cfg->batch, &b)) != 0) {
			rc = lib_error("sc_grid_next", rc);
			goto cleanup;
		}
		rc = run_submit(&x, r, b);
		sc_batch_release(b);
		if (rc) {
			rc = lib_error("sc_runtime_submit", rc);
			goto cleanup;
		}
		r->events += cfg->batch;
		r->batches++;
		now = sc_bench_now_ns();
		if (now - x.last_ns >= 1000000000ull)
			run_progress(&x, r, now);
	}
	if ((rc = sc_runtime_wait_idle(x.rt, 60000000000ull, &pr)) != 0) {
		if (rc == SC_EPANIC)
			(void)fprintf(stderr, "subcirc: unit %s panicked: %s\n",
				      pr.name, pr.message);
		rc = lib_error("sc_runtime_wait_idle", rc);
		goto cleanup;
	}
	rc = run_finish(&x, r, sc_bench_now_ns());
cleanup:
	run_teardown(&x);
	return rc;
}

/* --- output files --------------------------------------------------------- */

static FILE *
open_out(const char *cmd, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		char msg[128] = "";

		(void)strerror_r(errno, msg, sizeof(msg));
		(void)fprintf(stderr, "subcirc %s: cannot write '%s': %s\n",
			      cmd, path, msg);
		/* The CLI exits before it starts any thread. */
		exit(EXIT_LIBRARY); // NOLINT(concurrency-mt-unsafe)
	}
	return f;
}

static void
run_write_json(const struct run_cfg *c, const struct run_result *r)
{
	FILE *f = open_out("run", c->json);

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
	(void)fclose(f);
}

static void
run_write_csv(const struct run_cfg *c, const struct run_result *r)
{
	FILE *f = open_out("run", c->csv);

	(void)fprintf(f, "kind,t_s,events,events_per_s,p50_us,p99_us,"
			 "edge_fill\n");
	for (size_t i = 0; i < r->ns; i++)
		(void)fprintf(f,
			      "interval,%.3f,%" PRIu64 ",%.1f,%.2f,%.2f,%.4f\n",
			      r->s[i].t, r->s[i].events, r->s[i].eps,
			      r->s[i].p50_us, r->s[i].p99_us, r->s[i].fill);
	(void)fprintf(f, "total,%.3f,%" PRIu64 ",%.1f,%.2f,%.2f,\n", r->seconds,
		      r->events, r->eps, r->p50_us, r->p99_us);
	(void)fclose(f);
}

/* --- run: the command -------------------------------------------------- */

static uint32_t
cores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (uint32_t)n : 1;
}

/* Options shared by run and place; true if argv[i] was one. */
static bool
parse_workload_opt(struct args *a, struct run_cfg *c)
{
	const char *v;

	if (args_opt(a, "--batch", &v))
		c->batch =
		    (uint32_t)parse_u64(a->cmd, "--batch", v, 1, 1 << 20);
	else if (args_opt(a, "--rows", &v))
		c->rows = (int64_t)parse_u64(a->cmd, "--rows", v, 1, 1 << 24);
	else if (args_opt(a, "--cols", &v))
		c->cols = (int64_t)parse_u64(a->cmd, "--cols", v, 1, 1 << 24);
	else if (args_opt(a, "--seed", &v))
		c->seed = parse_u64(a->cmd, "--seed", v, 0, UINT64_MAX);
	else if (args_opt(a, "--capacity", &v)) {
		c->capacity =
		    (uint32_t)parse_u64(a->cmd, "--capacity", v, 1, 1 << 20);
		if (c->capacity & (c->capacity - 1))
			die_usage(a->cmd,
				  "--capacity: %u is not a power of two",
				  c->capacity);
	} else if (args_opt(a, "--budget", &v))
		c->budget =
		    (uint32_t)parse_u64(a->cmd, "--budget", v, 1, 1 << 20);
	else
		return false;
	return true;
}

static void
run_defaults(struct run_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->workers = cores();
	strcpy(c->placement, "chains");
	c->batch = 256;
	c->rows = c->cols = 256;
	c->seed = 1;
	c->capacity = 64;
	c->budget = 64;
}

static void
run_check_cfg(struct run_cfg *c)
{
	struct sc_grid_opts go = {.rows = c->rows, .cols = c->cols};
	struct sc_grid *gr = NULL;
	struct sc_placement *p = NULL;

	if (c->rows * c->cols > (1LL << 28))
		die_usage("run",
			  "--rows x --cols: %" PRId64 " cells, more than "
			  "2^28",
			  c->rows * c->cols);
	if (sc_grid_create(&go, &gr) != 0)
		die_library("sc_grid_create", SC_ENOMEM);
	if (sc_placement_parse(sc_grid_graph(gr), c->placement, c->seed, &p))
		die_usage("run", "--placement: '%s': %s", c->placement,
			  sc_errmsg());
	sc_placement_destroy(p);
	sc_grid_destroy(gr);
}

static void
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

static int
cmd_run(int argc, char **argv)
{
	struct args a = {.cmd = "run", .argc = argc, .argv = argv, .i = 0};
	struct run_cfg c;
	struct run_result r;
	const char *v;
	int rc;

	run_defaults(&c);
	while (a.i < argc) {
		if (args_opt(&a, "--help", NULL) || args_opt(&a, "-h", NULL)) {
			(void)fputs(usage_run, stdout);
			return 0;
		} else if (args_opt(&a, "--workers", &v)) {
			c.workers =
			    (uint32_t)parse_u64("run", "--workers", v, 1, 1024);
		} else if (args_opt(&a, "--placement", &v)) {
			if (strlen(v) >= sizeof(c.placement))
				die_usage("run", "--placement: '%s' too long",
					  v);
			strcpy(c.placement, v);
		} else if (args_opt(&a, "--events", &v)) {
			c.events =
			    parse_u64("run", "--events", v, 1, UINT64_MAX / 2);
		} else if (args_opt(&a, "--seconds", &v)) {
			c.seconds =
			    parse_double("run", "--seconds", v, 0.001, 1e6);
		} else if (args_opt(&a, "--rate", &v)) {
			c.rate = parse_double("run", "--rate", v, 1.0, 1e12);
		} else if (args_opt(&a, "--quiet", NULL)) {
			c.quiet = true;
		} else if (args_opt(&a, "--json", &v)) {
			c.json = v;
		} else if (args_opt(&a, "--csv", &v)) {
			c.csv = v;
		} else if (!parse_workload_opt(&a, &c)) {
			die_usage("run", "unknown argument '%s'", argv[a.i]);
		}
	}
	if (c.events && c.seconds > 0)
		die_usage("run", "--events and --seconds: give one, not both");
	if (!c.events && c.seconds <= 0)
		c.seconds = 3.0;
	run_check_cfg(&c);
	if ((rc = run_once(&c, &r)) != 0)
		return rc;
	run_print_summary(&c, &r);
	if (c.json)
		run_write_json(&c, &r);
	if (c.csv)
		run_write_csv(&c, &r);
	free(r.s);
	return r.ok ? 0 : EXIT_CHECK;
}

/* --- place ------------------------------------------------------------------
 */

#define PLACE_MAX_REPS 15

static const char *const place_default[] = {
    "single", "per-node", "chains", "random:3", "sharded:2", "sharded:4"};

struct place_row {
	char placement[32];
	uint32_t workers;
	struct run_result r;
};

static void
place_write(const char *json, const char *csv, const struct place_row *rows,
	    size_t n)
{
	FILE *f;

	if (csv) {
		f = open_out("place", csv);
		(void)fprintf(f, "placement,workers,units,edges,events,seconds,"
				 "events_per_s,p50_us,p99_us,turns,kicks,"
				 "efull,ok\n");
		for (size_t i = 0; i < n; i++) {
			const struct run_result *r = &rows[i].r;

			(void)fprintf(f,
				      "%s,%u,%u,%u,%" PRIu64 ",%.6f,%.1f,%.2f,"
				      "%.2f,%" PRIu64 ",%" PRIu64 ",%" PRIu64
				      ",%s\n",
				      rows[i].placement, rows[i].workers,
				      r->units, r->edges, r->events, r->seconds,
				      r->eps, r->p50_us, r->p99_us, r->turns,
				      r->kicks, r->efull, r->ok ? "1" : "0");
		}
		(void)fclose(f);
	}
	if (json) {
		f = open_out("place", json);
		(void)fprintf(f, "[");
		for (size_t i = 0; i < n; i++) {
			const struct run_result *r = &rows[i].r;

			(void)fprintf(
			    f,
			    "%s\n {\"placement\": \"%s\", \"workers\": %u, "
			    "\"units\": %u, \"edges\": %u, \"events\": %" PRIu64
			    ", \"seconds\": %.6f, \"events_per_s\": %.1f, "
			    "\"p50_us\": %.2f, \"p99_us\": %.2f, \"turns\": "
			    "%" PRIu64 ", \"kicks\": %" PRIu64
			    ", \"efull\": %" PRIu64 ", \"ok\": %s}",
			    i ? "," : "", rows[i].placement, rows[i].workers,
			    r->units, r->edges, r->events, r->seconds, r->eps,
			    r->p50_us, r->p99_us, r->turns, r->kicks, r->efull,
			    r->ok ? "true" : "false");
		}
		(void)fprintf(f, "\n]\n");
		(void)fclose(f);
	}
}

/* Throughput as bars, scaled to the best case: the plot of the table. */
static void
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

/* Run a case `reps` times; *out is the run of median throughput. Every
 * run must match the reference (*all_ok goes false otherwise). */
static int
place_case(const struct run_cfg *c, uint32_t reps, struct run_result *out,
	   bool *all_ok)
{
	struct run_result r[PLACE_MAX_REPS];
	uint32_t n = 0;
	int rc = 0;

	for (; n < reps && !rc; n++) {
		rc = run_once(c, &r[n]);
		free(r[n].s);
		r[n].s = NULL;
		*all_ok = *all_ok && (rc || r[n].ok);
	}
	if (rc)
		return rc;
	/* Insertion sort by events/s; n is small. */
	for (uint32_t i = 1; i < n; i++)
		for (uint32_t j = i; j > 0 && r[j].eps < r[j - 1].eps; j--) {
			struct run_result t = r[j];

			r[j] = r[j - 1];
			r[j - 1] = t;
		}
	*out = r[n / 2];
	return 0;
}

static int
cmd_place(int argc, char **argv)
{
	struct args a = {.cmd = "place", .argc = argc, .argv = argv, .i = 0};
	uint32_t workers[MAX_LIST] = {1, 2};
	char places[MAX_LIST][32];
	size_t nw = 2, np = 0, n = 0;
	const char *v, *json = NULL, *csv = NULL;
	struct place_row *rows;
	struct run_cfg c;
	bool all_ok = true;
	uint32_t reps = 3;
	int rc = 0;

	run_defaults(&c);
	c.events = 200000;
	c.quiet = true;
	while (a.i < argc) {
		if (args_opt(&a, "--help", NULL) || args_opt(&a, "-h", NULL)) {
			(void)fputs(usage_place, stdout);
			return 0;
		} else if (args_opt(&a, "--workers", &v)) {
			nw = parse_u32_list("place", "--workers", v, 1, 1024,
					    workers);
		} else if (args_opt(&a, "--placements", &v)) {
			np = parse_placements("place", v, places);
		} else if (args_opt(&a, "--events", &v)) {
			c.events = parse_u64("place", "--events", v, 1,
					     UINT64_MAX / 2);
		} else if (args_opt(&a, "--reps", &v)) {
			reps = (uint32_t)parse_u64("place", "--reps", v, 1,
						   PLACE_MAX_REPS);
		} else if (args_opt(&a, "--json", &v)) {
			json = v;
		} else if (args_opt(&a, "--csv", &v)) {
			csv = v;
		} else if (!parse_workload_opt(&a, &c)) {
			die_usage("place", "unknown argument '%s'", argv[a.i]);
		}
	}
	if (np == 0)
		for (; np < sizeof(place_default) / sizeof(place_default[0]);
		     np++)
			strcpy(places[np], place_default[np]);
	rows = calloc(np * nw, sizeof(*rows));
	if (!rows)
		return lib_error("calloc", SC_ENOMEM);
	(void)printf("%-12s %7s %5s %5s %12s %10s %10s %10s %10s %4s\n",
		     "placement", "workers", "units", "edges", "events/s",
		     "p50 us", "p99 us", "turns", "kicks", "ok");
	for (size_t i = 0; i < np && !rc; i++) {
		for (size_t j = 0; j < nw && !rc; j++, n++) {
			struct place_row *pr = &rows[n];

			strcpy(c.placement, places[i]);
			c.workers = workers[j];
			strcpy(pr->placement, places[i]);
			pr->workers = workers[j];
			if ((rc = place_case(&c, reps, &pr->r, &all_ok)) != 0)
				break;
			(void)printf("%-12s %7u %5u %5u %12.0f %10.1f %10.1f "
				     "%10" PRIu64 " %10" PRIu64 " %4s\n",
				     places[i], workers[j], pr->r.units,
				     pr->r.edges, pr->r.eps, pr->r.p50_us,
				     pr->r.p99_us, pr->r.turns, pr->r.kicks,
				     pr->r.ok ? "yes" : "NO");
			(void)fflush(stdout);
		}
	}
	place_plot(rows, n);
	place_write(json, csv, rows, n);
	free(rows);
	if (rc)
		return rc;
	return all_ok ? 0 : EXIT_CHECK;
}

/* --- stress ---------------------------------------------------------------
 */

static const char *const stress_default[] = {
    "single",	"per-node",  "chains",	 "random:2",
    "random:5", "sharded:2", "sharded:3"};

struct stress_cfg {
	uint64_t seed_lo, seed_hi;
	uint32_t workers[MAX_LIST];
	size_t nw;
	char places[MAX_LIST][32];
	size_t np;
	double panic_rate;
	bool pool;
	bool verbose;
	bool grid, random; /* the workloads */
};

/* One case: the workload a seed draws, its batches and what the single
 * circuit makes of them. */
struct stress_case {
	uint64_t seed;
	uint32_t workers;
	const char *placement;
	bool random;	   /* a random circuit, else the grid */
	double panic_rate; /* grid only */
	bool pool;
	struct sc_grid *gr;   /* the grid, or NULL */
	struct sc_randc *rnd; /* the random circuit, or NULL */
	struct sc_graph *g;   /* the one of them in use */
	struct sc_batch **batches;
	int *input; /* the input node of each batch */
	size_t nbatches;
	int outs[SC_RANDC_MAX_IO];
	size_t nouts;
	struct sc_batch *expect[SC_RANDC_MAX_IO]; /* the single circuit's */
	bool single_failed; /* the single circuit hit a fault */
	uint32_t capacity;
	size_t outbox_bound;
	bool panicked; /* the placed run saw a panic */
	bool skipped;  /* the placement does not apply to this graph */
	char why[640];
};

/* The single circuit of the whole graph, one step per batch. */
static int
stress_expect(struct stress_case *k)
{
	struct sc_circuit *c = NULL;
	int rc = sc_circuit_create(k->g, &c);

	for (size_t i = 0; i < k->nbatches && !rc; i++) {
		rc = sc_circuit_feed(c, k->input[i], k->batches[i]);
		if (!rc)
			rc = sc_circuit_step(c);
	}
	if (rc == SC_ECALLBACK && k->panic_rate > 0) {
		k->single_failed = true; /* an injected fault */
		rc = 0;
	}
	for (size_t i = 0; i < k->nouts && !rc && !k->single_failed; i++)
		rc = sc_circuit_integral(c, k->outs[i], &k->expect[i]);
	sc_circuit_destroy(c);
	return rc;
}

/* The grid of the case's seed: sizes and edits drawn from it. */
static int
stress_grid(struct stress_case *k)
{
	uint64_t s = k->seed;
	struct sc_grid_opts go = {.rows = 1 + (int64_t)(s % 7),
				  .cols = 1 + (int64_t)((s / 7) % 7),
				  .seed = s,
				  .fault_rate = k->panic_rate,
				  .fault_seed = s ^ 0xfa17ULL};
	size_t edits = 1 + (size_t)((s / 3) % 7);
	struct sc_grid_nodes nd;
	int rc;

	if ((rc = sc_grid_create(&go, &k->gr)) != 0)
		return rc;
	k->g = sc_grid_graph(k->gr);
	sc_grid_nodes(k->gr, &nd);
	k->outs[0] = nd.out_grid;
	k->outs[1] = nd.out_totals;
	k->nouts = 2;
	for (size_t i = 0; i < k->nbatches; i++) {
		k->input[i] = nd.cells;
		if ((rc = sc_grid_next(k->gr, edits, &k->batches[i])) != 0)
			return rc;
	}
	return 0;
}

/* The random circuit of the case's seed, and its deltas. */
static int
stress_random(struct stress_case *k)
{
	int rc;

	if ((rc = sc_randc_create(k->seed, &k->rnd)) != 0)
		return rc;
	k->g = sc_randc_graph(k->rnd);
	k->nouts = sc_randc_outputs(k->rnd, k->outs, SC_RANDC_MAX_IO);
	for (size_t i = 0; i < k->nbatches; i++)
		if ((rc = sc_randc_next(k->rnd, &k->input[i],
					&k->batches[i])) != 0)
			return rc;
	return 0;
}

/* Draw the case's sizes and batches from its seed. */
static int
stress_prepare(struct stress_case *k)
{
	static const uint32_t caps[] = {1, 2, 4, 64};
	static const size_t bounds[] = {1, 4, 64, 4096};
	uint64_t s = k->seed;
	int rc;

	k->capacity = caps[s % 4];
	k->outbox_bound = bounds[(s / 4) % 4];
	k->nbatches = 4 + (size_t)(s % 29);
	k->batches = calloc(k->nbatches, sizeof(struct sc_batch *));
	k->input = calloc(k->nbatches, sizeof(int));
	if (!k->batches || !k->input)
		return SC_ENOMEM;
	rc = k->random ? stress_random(k) : stress_grid(k);
	return rc ? rc : stress_expect(k);
}

static void
stress_release(struct stress_case *k)
{
	for (size_t i = 0; k->batches && i < k->nbatches; i++)
		sc_batch_release(k->batches[i]);
	free(k->batches);
	free(k->input);
	for (size_t i = 0; i < k->nouts; i++)
		sc_batch_release(k->expect[i]);
	sc_grid_destroy(k->gr);
	sc_randc_destroy(k->rnd);
}

/* The sim's host: the next batch or two; a full edge means later. */
struct stress_host {
	struct sc_runtime *rt;
	struct stress_case *k;
	size_t next;
	int error;
};

static bool
stress_host_step(void *ctx, struct sc_exec *ex, uint64_t rnd)
{
	struct stress_host *h = ctx;
	uint64_t n = 1 + rnd % 2;

	(void)ex;
	while (n-- && h->next < h->k->nbatches) {
		int rc = sc_runtime_submit(h->rt, h->k->input[h->next],
					   h->k->batches[h->next]);

		if (rc == SC_EFULL)
			break;
		/* A dead input unit (an injected panic) refuses; go on. */
		if (rc && !(rc == SC_EDEAD && h->k->panic_rate > 0) &&
		    !h->error)
			h->error = rc;
		h->next++;
	}
	return h->next < h->k->nbatches;
}

static int
stress_drive_sim(struct sc_runtime *rt, struct stress_case *k)
{
	struct stress_host h = {.rt = rt, .k = k};
	struct sc_sim_opts so = {.seed = k->seed,
				 .held_max = k->workers,
				 .budget = 0,
				 .max_steps = 2000000,
				 .host = stress_host_step,
				 .host_ctx = &h};
	struct sc_sim_result res;
	int rc = sc_sim_run(sc_runtime_exec(rt), &so, &res);

	if (rc == SC_EPANIC && k->panic_rate > 0) {
		k->panicked = true;
		rc = 0;
	}
	if (rc || h.error) {
		(void)snprintf(k->why, sizeof(k->why), "sim: %s; host: %s",
			       rc ? res.why : "settled",
			       h.error ? sc_errname(h.error) : "ok");
		return rc ? rc : h.error;
	}
	return 0;
}

static int
stress_drive_pool(struct sc_runtime *rt, struct stress_case *k)
{
	struct sc_panic_record pr;
	int rc;

	for (size_t i = 0; i < k->nbatches; i++) {
		rc = sc_runtime_submit_wait(rt, k->input[i], k->batches[i],
					    10000000000ull);
		if (rc == SC_EDEAD && k->panic_rate > 0)
			continue;
		if (rc) {
			(void)snprintf(k->why, sizeof(k->why), "submit %zu: %s",
				       i, sc_errmsg());
			return rc;
		}
	}
	rc = sc_runtime_wait_idle(rt, 20000000000ull, &pr);
	if (rc == SC_EPANIC && k->panic_rate > 0) {
		k->panicked = true;
		return 0;
	}
	if (rc)
		(void)snprintf(k->why, sizeof(k->why), "wait_idle: %s",
			       sc_errmsg());
	return rc;
}

/* At idle: the edges are clean, and (when nothing panicked) the outputs
 * equal the single circuit's and the from-scratch reference. */
static bool
stress_check(struct sc_runtime *rt, struct stress_case *k)
{
	if (sc_runtime_check_idle(rt) != 0) {
		(void)snprintf(k->why, sizeof(k->why), "idle check: %s",
			       sc_errmsg());
		return false;
	}
	if (k->panicked)
		return true; /* the settled part cannot be compared */
	for (size_t i = 0; i < k->nouts; i++) {
		struct sc_batch *got = NULL;
		int rc = sc_runtime_integral(rt, k->outs[i], &got);

		/* A fault the single circuit hit need not recur here (steps
		 * group deltas differently), so then only the reference
		 * stands. */
		if (!rc && !k->single_failed &&
		    !sc_batch_equal(got, k->expect[i]))
			rc = sc_errorf(SC_ESTATE,
				       "output %d differs from the single "
				       "circuit's (%zu rows, expected %zu)",
				       k->outs[i], sc_batch_count(got),
				       sc_batch_count(k->expect[i]));
		if (!rc && k->gr)
			rc = sc_grid_verify(k->gr, k->outs[i], got);
		sc_batch_release(got);
		if (rc) {
			(void)snprintf(k->why, sizeof(k->why), "%s",
				       sc_errmsg());
			return false;
		}
	}
	return true;
}

/* A panic must be reported once the rest is quiet, exactly when one
 * happened. */
static bool
stress_shutdown(struct sc_runtime *rt, struct stress_case *k)
{
	struct sc_panic_record pr;
	int rc = sc_runtime_shutdown(rt, &pr);

	if (k->panicked && rc != SC_EPANIC) {
		(void)snprintf(k->why, sizeof(k->why),
			       "a unit panicked but shutdown returned %s",
			       sc_errname(rc));
		return false;
	}
	if (!k->panicked && rc != 0) {
		(void)snprintf(k->why, sizeof(k->why), "shutdown: %s",
			       sc_errmsg());
		return false;
	}
	return true;
}

/* Run one case; true when it passed (else k->why). */
static bool
stress_run(struct stress_case *k)
{
	struct sc_runtime_opts o = {.workers = k->pool ? k->workers : 0,
				    .budget = k->pool ? 1 + k->seed % 4 : 0,
				    .edge_capacity = k->capacity,
				    .outbox_bound = k->outbox_bound};
	struct sc_placement *p = NULL;
	struct sc_runtime *rt = NULL;
	bool ok = false;
	int rc = stress_prepare(k);

	if (!rc) {
		rc = sc_placement_parse(k->g, k->placement, k->seed, &p);
		if (rc == SC_EINVAL && k->random) {
			/* A strategy may not apply to a random graph (a
			 * sharded unit needs its keyed node to read its
			 * inputs alone). */
			k->skipped = true;
			stress_release(k);
			return true;
		}
	}
	if (!rc)
		rc = sc_runtime_create(k->g, p, &o, &rt);
	if (rc) {
		(void)snprintf(k->why, sizeof(k->why), "setup: %s",
			       sc_errmsg());
		goto cleanup;
	}
	rc = k->pool ? stress_drive_pool(rt, k) : stress_drive_sim(rt, k);
	ok = !rc && stress_check(rt, k);
	ok = stress_shutdown(rt, k) && ok;
cleanup:
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
	stress_release(k);
	return ok;
}

static void
stress_parse_seeds(const char *v, struct stress_cfg *s)
{
	const char *dots = strstr(v, "..");
	char lo[32];

	if (!dots) {
		s->seed_lo = s->seed_hi =
		    parse_u64("stress", "--seeds", v, 0, UINT64_MAX);
		return;
	}
	if ((size_t)(dots - v) >= sizeof(lo))
		die_usage("stress", "--seeds: '%s' is not A..B", v);
	memcpy(lo, v, (size_t)(dots - v));
	lo[dots - v] = 0;
	s->seed_lo = parse_u64("stress", "--seeds (from)", lo, 0, UINT64_MAX);
	s->seed_hi =
	    parse_u64("stress", "--seeds (to)", dots + 2, 0, UINT64_MAX);
	if (s->seed_hi < s->seed_lo)
		die_usage("stress",
			  "--seeds: %" PRIu64 "..%" PRIu64 " is an empty range",
			  s->seed_lo, s->seed_hi);
}

static void
stress_parse_workloads(const char *v, struct stress_cfg *s)
{
	s->grid = !strcmp(v, "grid") || !strcmp(v, "grid,random") ||
		  !strcmp(v, "random,grid");
	s->random = !strcmp(v, "random") || !strcmp(v, "grid,random") ||
		    !strcmp(v, "random,grid");
	if (!s->grid && !s->random)
		die_usage(
		    "stress",
		    "--workloads: '%s' is not grid, random or grid,random", v);
}

static void
stress_parse(int argc, char **argv, struct stress_cfg *s)
{
	struct args a = {.cmd = "stress", .argc = argc, .argv = argv, .i = 0};
	const char *v;

	memset(s, 0, sizeof(*s));
	s->seed_lo = 1;
	s->seed_hi = 20;
	s->grid = s->random = true;
	for (s->nw = 0; s->nw < 4; s->nw++)
		s->workers[s->nw] = (uint32_t)s->nw + 1;
	while (a.i < argc) {
		if (args_opt(&a, "--help", NULL) || args_opt(&a, "-h", NULL)) {
			(void)fputs(usage_stress, stdout);
			/* The CLI exits before it starts any thread. */
			exit(0); // NOLINT(concurrency-mt-unsafe)
		} else if (args_opt(&a, "--seeds", &v)) {
			stress_parse_seeds(v, s);
		} else if (args_opt(&a, "--workers", &v)) {
			s->nw = parse_u32_list("stress", "--workers", v, 1, 64,
					       s->workers);
		} else if (args_opt(&a, "--placements", &v)) {
			s->np = parse_placements("stress", v, s->places);
		} else if (args_opt(&a, "--panic-rate", &v)) {
			s->panic_rate =
			    parse_double("stress", "--panic-rate", v, 0.0, 1.0);
		} else if (args_opt(&a, "--workloads", &v)) {
			stress_parse_workloads(v, s);
		} else if (args_opt(&a, "--pool", NULL)) {
			s->pool = true;
		} else if (args_opt(&a, "--verbose", NULL)) {
			s->verbose = true;
		} else {
			die_usage("stress", "unknown argument '%s'", argv[a.i]);
		}
	}
	if (s->np == 0)
		for (;
		     s->np < sizeof(stress_default) / sizeof(stress_default[0]);
		     s->np++)
			strcpy(s->places[s->np], stress_default[s->np]);
}

/* The shortest decimal that reads back as x (for a replay line). */
static const char *
shortest(double x, char buf[32])
{
	for (int prec = 1; prec <= 17; prec++) {
		(void)snprintf(buf, 32, "%.*g", prec, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	return buf;
}

static void
stress_print_failure(const char *exe, const struct stress_case *k)
{
	char buf[32];

	(void)printf("FAIL seed %" PRIu64 ", %s, placement %s, %u %s: %s\n",
		     k->seed, k->random ? "random circuit" : "grid",
		     k->placement, k->workers, k->pool ? "workers" : "held",
		     k->why);
	(void)printf("replay: %s stress --seeds %" PRIu64 " --workers %u "
		     "--placements %s --workloads %s",
		     exe, k->seed, k->workers, k->placement,
		     k->random ? "random" : "grid");
	if (k->panic_rate > 0)
		(void)printf(" --panic-rate %s", shortest(k->panic_rate, buf));
	(void)printf("%s\n", k->pool ? " --pool" : "");
}

/* Counts over the cases run. */
struct stress_tally {
	uint64_t cases, panicked, skipped;
};

/* One case; false (after printing the failure) if it failed. */
static bool
stress_one(const struct stress_cfg *s, struct stress_case *k, const char *exe,
	   struct stress_tally *t)
{
	bool ok = stress_run(k);

	t->cases++;
	t->panicked += k->panicked;
	t->skipped += k->skipped;
	if (s->verbose)
		(void)printf("seed %" PRIu64 " %s %s x%u: %s%s\n", k->seed,
			     k->random ? "random" : "grid", k->placement,
			     k->workers,
			     k->skipped ? "skipped"
			     : ok	? "ok"
					: "FAIL",
			     k->panicked ? " (panicked)" : "");
	if (!ok)
		stress_print_failure(exe, k);
	return ok;
}

static int
cmd_stress(int argc, char **argv, const char *exe)
{
	struct stress_cfg s;
	struct stress_tally t = {0};

	stress_parse(argc, argv, &s);
	for (uint64_t seed = s.seed_lo;; seed++) {
		for (int w = 0; w < 2; w++) {
			if (!(w ? s.random : s.grid))
				continue;
			for (size_t j = 0; j < s.nw; j++) {
				for (size_t i = 0; i < s.np; i++) {
					struct stress_case k = {
					    .seed = seed,
					    .workers = s.workers[j],
					    .placement = s.places[i],
					    .random = w == 1,
					    .panic_rate = w ? 0 : s.panic_rate,
					    .pool = s.pool};

					if (!stress_one(&s, &k, exe, &t))
						return EXIT_CHECK;
				}
			}
		}
		if (seed == s.seed_hi)
			break;
	}
	(void)printf("subcirc stress: %" PRIu64 " cases passed (seeds %" PRIu64
		     "..%" PRIu64 ", %s, %zu worker counts, %zu placements, "
		     "%s); %" PRIu64 " skipped (placement does not apply)",
		     t.cases - t.skipped, s.seed_lo, s.seed_hi,
		     s.grid && s.random ? "grid and random circuits"
		     : s.grid		? "grid"
					: "random circuits",
		     s.nw, s.np, s.pool ? "real pool" : "seeded scheduler",
		     t.skipped);
	if (s.panic_rate > 0)
		(void)printf("; %" PRIu64 " with an injected panic",
			     t.panicked);
	(void)printf("\n");
	return 0;
}

/* --- main ------------------------------------------------------------------
 */

int
main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	if (!cmd) {
		(void)fputs(usage_main, stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") ||
	    !strcmp(cmd, "help")) {
		if (argc > 2 && !strcmp(argv[2], "run"))
			(void)fputs(usage_run, stdout);
		else if (argc > 2 && !strcmp(argv[2], "place"))
			(void)fputs(usage_place, stdout);
		else if (argc > 2 && !strcmp(argv[2], "stress"))
			(void)fputs(usage_stress, stdout);
		else
			(void)fputs(usage_main, stdout);
		return 0;
	}
	if (!strcmp(cmd, "run"))
		return cmd_run(argc - 2, argv + 2);
	if (!strcmp(cmd, "place"))
		return cmd_place(argc - 2, argv + 2);
	if (!strcmp(cmd, "stress"))
		return cmd_stress(argc - 2, argv + 2, argv[0]);
	(void)fprintf(stderr, "subcirc: unknown command '%s'\n\n%s", cmd,
		      usage_main);
	return EXIT_USAGE;
}
