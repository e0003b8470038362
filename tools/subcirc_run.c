/*
 * subcirc_run.c - `subcirc run`: a live grid workload across worker
 * threads, a progress line a second and a final summary verified against
 * the workload's from-scratch reference (bench/workloads/grid.h).
 *
 * Latency. Each batch carries a stamp (bench/workloads/grid.h): the
 * "totals" output's delta callback, on the worker that ran the step, reads
 * the newest stamp that came through, and every batch up to it is done at
 * that moment. A batch's latency is from the submit call that accepted it
 * (a submit that met a full edge and then waited counts from its first
 * try, so backpressure shows in the latency) to that callback. Latencies
 * go into the log-linear histogram (subcirc_hist.c).
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/harness.h"
#include "bench/workloads/grid.h"
#include "operators/batch.h"
#include "operators/error.h"
#include "runtime/executor.h"
#include "runtime/watchdog.h"
#include "tools/subcirc.h"
#include "units/placement.h"
#include "units/runtime.h"

#define SENT_RING (1u << 16) /* batches in flight whose submit time we keep */
/* A batch that has not come through (or an input that stays full) this
 * long ends the run: a hang, by name, rather than for ever. */
#define RUN_STUCK_NS 30000000000ull

/* --- the live workload ---------------------------------------------------- */

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
	struct sc_grid_opts go = {.rows = cfg->rows,
				  .cols = cfg->cols,
				  .seed = cfg->seed,
				  .fault_rate = cfg->panic_rate,
				  .fault_seed = cfg->seed ^ 0xfa17ULL};
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

/* A dead unit ends the run: its name and message, and exit 3. The
 * executor's lock is taken, so the callers ask at most every millisecond
 * (or between naps). */
static int
run_check_alive(struct run_ctx *x)
{
	struct sc_exec *ex = sc_runtime_exec(x->rt);
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
	return EXIT_LIBRARY;
}

/* Nap for a while (a short sleep, not a spin: the machine may have fewer
 * cores than workers). */
static void
run_nap(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000ull),
			      (long)(ns % 1000000000ull)};

	(void)nanosleep(&ts, NULL);
}

/* Never more batches in flight than the ring keeps times for: wait for
 * the oldest to come through. A unit that dies on the way stops the
 * stamps for good, so every nap checks for a panic, and a batch that has
 * not come through within RUN_STUCK_NS ends the run too. */
static int
run_wait_ring(struct run_ctx *x, uint64_t seq)
{
	uint64_t deadline = sc_bench_now_ns() + RUN_STUCK_NS;
	int rc;

	while (seq - atomic_load(&x->lat->done) >= SENT_RING) {
		if ((rc = run_check_alive(x)) != 0)
			return rc;
		if (sc_bench_now_ns() >= deadline) {
			(void)fprintf(stderr,
				      "subcirc run: batch %" PRIu64
				      " has not come through in %llu s (the "
				      "newest seen is %" PRIu64 ")\n",
				      seq - SENT_RING + 1,
				      RUN_STUCK_NS / 1000000000ull,
				      atomic_load(&x->lat->done));
			return EXIT_LIBRARY;
		}
		run_nap(50000);
	}
	return 0;
}

/* Submit one batch, respecting backpressure: a full edge is counted and
 * waited out (the runtime wakes us when the input's unit takes frames).
 * Returns 0 or an exit code (the error said). */
static int
run_submit(struct run_ctx *x, struct run_result *r, struct sc_batch *b)
{
	uint64_t seq = sc_grid_seq(x->gr);
	int rc;

	if ((rc = run_wait_ring(x, seq)) != 0)
		return rc;
	atomic_store_explicit(&x->lat->sent[seq % SENT_RING], sc_bench_now_ns(),
			      memory_order_relaxed);
	rc = sc_runtime_submit(x->rt, x->nodes.cells, b);
	if (rc == SC_EFULL) {
		r->efull++;
		rc = sc_runtime_submit_wait(x->rt, x->nodes.cells, b,
					    RUN_STUCK_NS);
	}
	if (rc && run_check_alive(x) == 0)
		return lib_error("sc_runtime_submit", rc);
	return rc ? EXIT_LIBRARY : 0;
}

/* Whether the run is over: `events` done, or its end (run_end) reached. */
static bool
run_should_stop(const struct run_cfg *cfg, uint64_t events, uint64_t now,
		uint64_t end)
{
	return (cfg->events && events >= cfg->events) || now >= end;
}

/* The final checks: idle invariant, every stamp seen, outputs equal to
 * the reference. A check that fails (SC_ESTATE: a broken invariant, an
 * output that differs) leaves r->ok false with r->why, and returns 0; a
 * check that could not be made (SC_ENOMEM reading an integral or
 * building the reference) is the library's error, not a difference:
 * said as such, EXIT_LIBRARY. */
static int
run_verify(struct run_ctx *x, struct run_result *r)
{
	const int outs[2] = {x->nodes.out_grid, x->nodes.out_totals};
	int rc;

	r->ok = false;
	if ((rc = sc_runtime_check_idle(x->rt)) != 0) {
		if (rc != SC_ESTATE)
			return lib_error("sc_runtime_check_idle", rc);
		(void)snprintf(r->why, sizeof(r->why), "idle check: %s",
			       sc_errmsg());
		return 0;
	}
	if (atomic_load(&x->lat->done) != sc_grid_seq(x->gr)) {
		(void)snprintf(r->why, sizeof(r->why),
			       "last stamp seen %" PRIu64
			       ", submitted %" PRIu64,
			       atomic_load(&x->lat->done), sc_grid_seq(x->gr));
		return 0;
	}
	for (int i = 0; i < 2; i++) {
		struct sc_batch *got = NULL;

		if ((rc = sc_runtime_integral(x->rt, outs[i], &got)) != 0)
			return lib_error("sc_runtime_integral", rc);
		rc = sc_grid_verify(x->gr, outs[i], got);
		sc_batch_release(got);
		if (rc && rc != SC_ESTATE)
			return lib_error("sc_grid_verify", rc);
		if (rc) {
			(void)snprintf(r->why, sizeof(r->why), "%s",
				       sc_errmsg());
			return 0;
		}
	}
	r->ok = true;
	return 0;
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
	return run_verify(x, r);
}

/* Open loop: wait until the next batch is due at the offered rate, or
 * until the run's end (`end`) if that comes first, so --seconds holds at
 * any rate. Naps of at most 10 ms, each followed by a check for a dead
 * unit. Returns 0 or an exit code. */
static int
run_pace(struct run_ctx *x, uint64_t events, uint64_t end)
{
	const struct run_cfg *cfg = x->cfg;
	uint64_t due, now;
	int rc;

	if (cfg->rate <= 0)
		return 0;
	due = x->t0 + (uint64_t)((double)events / cfg->rate * 1e9);
	due = due < end ? due : end;
	while ((now = sc_bench_now_ns()) < due) {
		run_nap(due - now < 10000000ull ? due - now : 10000000ull);
		if ((rc = run_check_alive(x)) != 0)
			return rc;
	}
	return 0;
}

/* The end of a run by time, in sc_bench_now_ns; UINT64_MAX by events. */
static uint64_t
run_end(const struct run_cfg *cfg, uint64_t t0)
{
	return cfg->seconds > 0 ? t0 + (uint64_t)(cfg->seconds * 1e9)
				: UINT64_MAX;
}

/* Submit batches until the run's end; 0 or an exit code. A dead unit is
 * looked for every millisecond, so the run ends soon after one dies
 * rather than at its end (or never, once the stamps stop). */
static int
run_loop(struct run_ctx *x, struct run_result *r)
{
	const struct run_cfg *cfg = x->cfg;
	uint64_t end = run_end(cfg, x->t0), checked = x->t0, now;
	int rc;

	for (;;) {
		struct sc_batch *b = NULL;

		/* Done, else wait for the batch's time (not past the end). */
		if (run_should_stop(cfg, r->events, sc_bench_now_ns(), end))
			return 0;
		if ((rc = run_pace(x, r->events, end)) != 0)
			return rc;
		now = sc_bench_now_ns();
		if (run_should_stop(cfg, r->events, now, end))
			return 0;
		if (now - checked >= 1000000ull) {
			checked = now;
			if ((rc = run_check_alive(x)) != 0)
				return rc;
		}
		if ((rc = sc_grid_next(x->gr, cfg->batch, &b)) != 0)
			return lib_error("sc_grid_next", rc);
		rc = run_submit(x, r, b);
		sc_batch_release(b);
		if (rc)
			return rc;
		r->events += cfg->batch;
		r->batches++;
		now = sc_bench_now_ns();
		if (now - x->last_ns >= 1000000000ull)
			run_progress(x, r, now);
	}
}

/* One run of the workload as cfg says; 0 or an exit code. */
int
run_once(const struct run_cfg *cfg, struct run_result *r)
{
	struct run_ctx x;
	struct sc_panic_record pr;
	int rc = run_setup(&x, cfg);

	memset(r, 0, sizeof(*r));
	if (rc)
		goto cleanup;
	x.t0 = x.last_ns = sc_bench_now_ns();
	if ((rc = run_loop(&x, r)) != 0)
		goto cleanup;
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

/* --- the command ---------------------------------------------------------- */

static uint32_t
cores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (uint32_t)n : 1;
}

void
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
	int rc;

	if (c->rows * c->cols > (1LL << 28))
		die_usage("run",
			  "--rows x --cols: %" PRId64 " cells, more than "
			  "2^28",
			  c->rows * c->cols);
	if ((rc = sc_grid_create(&go, &gr)) != 0)
		die_library("sc_grid_create", rc);
	check_placement_of("run", "--placement", sc_grid_graph(gr),
			   c->placement, c->seed);
	(void)sc_grid_destroy(gr);
}

int
cmd_run(int argc, char **argv)
{
	struct args a = {.cmd = "run", .argc = argc, .argv = argv, .i = 0};
	struct run_cfg c;
	struct run_result r;
	FILE *json, *csv;
	const char *v;
	int rc, wrc;

	if (run_is_nexmark(argc, argv)) /* tools/subcirc_nexmark.c */
		return cmd_run_nexmark(argc, argv);
	run_defaults(&c);
	while (a.i < argc) {
		if (args_opt(&a, "--help", NULL) || args_opt(&a, "-h", NULL)) {
			(void)fputs(usage_run, stdout);
			return 0;
		} else if (args_opt(&a, "--workload", &v)) {
			if (strcmp(v, "grid") != 0)
				die_usage("run",
					  "--workload: '%s' is not grid "
					  "or nexmark",
					  v);
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
		} else if (args_opt(&a, "--panic-rate", &v)) {
			c.panic_rate =
			    parse_double("run", "--panic-rate", v, 0.0, 1.0);
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
	json = open_out("run", "--json", c.json);
	csv = open_out("run", "--csv", c.csv);
	rc = run_once(&c, &r);
	if (!rc) {
		run_print_summary(&c, &r);
		if (json)
			run_write_json(&c, &r, json);
		if (csv)
			run_write_csv(&r, csv);
	}
	/* Closed even after a failed run (the files stay empty); a write
	 * error is the first failure only when the run succeeded. */
	wrc = close_out("run", c.json, json);
	wrc = close_out("run", c.csv, csv) ? EXIT_LIBRARY : wrc;
	free(r.s); /* the samples, also those taken before a failure */
	if (rc || wrc)
		return rc ? rc : wrc;
	return r.ok ? 0 : EXIT_CHECK;
}
