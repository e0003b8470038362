/*
 * cli_grid.c - one run of the live grid workload (cli_grid.h), for
 * `subcirc run` and `subcirc place`: the grid across worker threads, a
 * progress line a second, and a result verified against the workload's
 * from-scratch reference (bench/workloads/grid.h).
 *
 * Latency, per event, from its arrival. With --rate R the run is open
 * loop: event i arrives at t0 + i / R on a monotonic clock, whatever the
 * runtime does, and a batch is due when its last event has arrived. The
 * host builds the next batch ahead, sleeps until it is due and submits
 * it; an event's latency runs from its own arrival (so an event waits for
 * the rest of its batch too) to the moment its output is visible. A host
 * that falls behind (backpressure, a slow submit) does not move the
 * arrivals: its delay shows in the latencies rather than hiding in a
 * later stamp (coordinated omission, Tene), and in the achieved rate,
 * which is warned about when it falls short of R by more than 5%.
 * Without --rate the run is closed loop: a batch's events arrive when the
 * host starts to submit it.
 *
 * Each batch carries a stamp: the "totals" output's delta callback, on
 * the worker that ran the step, reads the newest stamp that came through,
 * and every batch up to it is visible at that moment. The batch's events,
 * arrived evenly over its interval, go into the log-linear histogram in
 * one call (cli_hist_add_linear, cli_hist.c).
 *
 * The floor, in the same run (open loop only, before the schedule
 * starts): a bare sleep of the run's interval, repeated, says how late
 * this machine wakes a thread (the host's own share of any latency), and
 * batches submitted one at a time to the idle runtime give one batch's
 * service time. The latency targets compare with those.
 *
 * SIGINT, SIGTERM and SIGHUP (cli_signal_catch) end the run as its end would:
 * the batch in hand is submitted, the runtime drains, and the summary and files
 * are written for what ran (a second signal kills, as usual).
 *
 * Across ranks (mpirun -np N subcirc run --placement ranks:N, see
 * tools/cli_ranks.c): every rank builds the same grid, placement and
 * runtime (sc_mpi_runtime_create); rank 0 is the host and the only one
 * that prints or writes a file, while the others go straight to the
 * collective wait for idle, with no deadline of their own (it ends when
 * rank 0 comes, or when the link finds rank 0 dead). Then every rank
 * makes the same collective calls in the same order, whatever happened
 * before (wait_idle, an integral of each output, destroy), so that no
 * rank waits for a call another skipped; the integrals gather to rank 0,
 * which compares them with the reference. The stamps are read where the
 * totals output runs: when that is not rank 0 there is no latency, and
 * the newest stamp seen is gathered with the figures for the check that
 * every batch came through. Open loop across ranks measures the floor's
 * wake-ups only (its service time would be a wait for idle per batch,
 * collective).
 */
#include <inttypes.h>
#include <math.h>
#include <signal.h>
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
#include "tools/cli.h"
#include "tools/cli_grid.h"
#include "tools/cli_ranks.h"
#include "tools/cli_units.h"
#include "units/placement.h"
#include "units/runtime.h"

#define SENT_RING (1u << 16) /* batches in flight whose arrivals we keep */
/* A batch that has not come through (or an input that stays full) this
 * long ends the run: a hang, by name, rather than for ever. */
#define RUN_STUCK_NS 30000000000ull
#define NAP_MAX_NS   10000000ull /* the longest nap between checks */
/* The floor: wake-ups over about FLOOR_NS (within FLOOR_MIN..FLOOR_MAX),
 * and SERVICE_BATCHES batches served one at a time (odd: a median). */
#define FLOOR_NS	500000000ull
#define FLOOR_MIN	50
#define FLOOR_MAX	2000
#define SERVICE_BATCHES 21

/* --- the live workload ---------------------------------------------------- */

/* When a batch's events arrived: the first and the last, evenly between
 * (the callback reads them after the batch's stamp came through, which
 * the submit's hand-off orders after the host's store). */
struct arrival {
	_Atomic uint64_t first, last; /* ns, sc_bench_now_ns */
	_Atomic uint32_t n;	      /* events in the batch */
};

/* What the delta callback shares with the host. */
struct latency {
	const struct sc_grid *gr;
	_Atomic uint64_t measured_from; /* the first stamp that counts */
	_Atomic uint64_t kept_from;	/* the first stamp the run's figures
					 * keep (`all`: after --warmup) */
	_Atomic uint64_t done;		/* newest stamp seen */
	_Atomic uint64_t done_ns;	/* when it was seen */
	_Atomic uint64_t events;	/* of the measured batches seen */
	struct arrival sent[SENT_RING];
	struct cli_hist all, interval;
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
	if (old >= s)
		return 0;
	atomic_store_explicit(&l->done_ns, now, memory_order_relaxed);
	/* The batches (old, s] came through at once (deltas coalesce). */
	for (uint64_t q = old + 1; q <= s; q++) {
		const struct arrival *a = &l->sent[q % SENT_RING];
		uint64_t first =
		    atomic_load_explicit(&a->first, memory_order_relaxed);
		uint64_t last =
		    atomic_load_explicit(&a->last, memory_order_relaxed);
		uint32_t n = atomic_load_explicit(&a->n, memory_order_relaxed);
		uint64_t lo = now > last ? now - last : 0;
		double step =
		    n > 1 ? (double)(last - first) / (double)(n - 1) : 0.0;

		if (q < atomic_load_explicit(&l->measured_from,
					     memory_order_relaxed))
			continue; /* the floor's own batches */
		atomic_fetch_add_explicit(&l->events, n, memory_order_relaxed);
		/* The last event waited least, the first longest. The
		 * progress lines see the warm-up's events too. */
		if (q >=
		    atomic_load_explicit(&l->kept_from, memory_order_relaxed))
			cli_hist_add_linear(&l->all, lo, step, n);
		cli_hist_add_linear(&l->interval, lo, step, n);
	}
	return 0;
}

/* Everything one run holds; torn down by run_teardown. */
struct run_ctx {
	const struct cli_run_cfg *cfg;
	struct sc_grid *gr;
	struct sc_grid_nodes nodes;
	struct sc_placement *p;
	struct sc_runtime *rt;
	void *mpi;	  /* across ranks: the sc_mpi_runtime, else NULL */
	bool stamps_here; /* the totals output runs on this rank */
	struct sc_watchdog *wd;
	struct latency *lat;
	double step_ns;	    /* open loop: between two arrivals; 0 closed */
	uint64_t linger_ns; /* open loop: the longest wait for a batch */
	uint64_t t0, last_ns, last_done;
	uint64_t checked;		 /* the last look for a dead unit */
	uint64_t trace_ns, trace_events; /* --trace: the last host sample */
};

/* Whether every replica of the unit that holds node `totals` runs on this
 * rank (always, in one process). */
static bool
run_stamps_here(const struct sc_placement *p, int totals)
{
	int u = sc_placement_unit_of(p, totals);

	if (u < 0)
		return false;
	for (uint32_t i = 0; i < sc_placement_shards(p, (uint32_t)u); i++)
		if (sc_placement_rank_of(p, (uint32_t)u, i) != cli_ranks_rank())
			return false;
	return true;
}

static void
run_teardown(struct run_ctx *x)
{
	sc_watchdog_destroy(x->wd);
	cli_ranks_runtime_destroy(x->rt, x->mpi);
	sc_placement_destroy(x->p);
	free(x->lat);
}

static int
run_setup(struct run_ctx *x, const struct cli_run_cfg *cfg)
{
	struct sc_grid_opts go = {.rows = cfg->rows,
				  .cols = cfg->cols,
				  .seed = cfg->seed,
				  .fault_rate = cfg->panic_rate,
				  .fault_seed = cfg->seed ^ 0xfa17ULL};
	struct sc_runtime_opts ro = {.workers = cfg->workers,
				     .budget = cfg->budget,
				     .edge_capacity = cfg->capacity,
				     .outbox_bound = cfg->outbox_bound,
				     .timeline = cfg->timeline};
	/* Generous thresholds: on a loaded machine a turn may wait; what
	 * the watchdog is for here is a lost kick or a hang, by name. */
	struct sc_watchdog_opts wo = {.period_ns = 50000000,
				      .stall_ns = 5000000000ull,
				      .starve_ns = 5000000000ull,
				      .no_progress_ns = 10000000000ull,
				      .rate_limit_ns = 5000000000ull,
				      .waits = sc_runtime_waits,
				      .doing = sc_runtime_doing};
	int rc;

	memset(x, 0, sizeof(*x));
	x->cfg = cfg;
	x->step_ns = cfg->rate > 0 ? 1e9 / cfg->rate : 0.0;
	x->linger_ns = (uint64_t)(cfg->linger * 1e3);
	x->lat = calloc(1, sizeof(*x->lat));
	if (!x->lat)
		return cli_lib_error("calloc", SC_ENOMEM);
	if ((rc = sc_grid_create(&go, &x->gr)) != 0)
		return cli_lib_error("sc_grid_create", rc);
	x->lat->gr = x->gr;
	sc_grid_nodes(x->gr, &x->nodes);
	rc = cfg->make_placement
		 ? cfg->make_placement(cfg->place_ctx, sc_grid_graph(x->gr),
				       &x->p)
		 : sc_placement_parse(sc_grid_graph(x->gr), cfg->placement,
				      cfg->seed, &x->p);
	if (rc != 0)
		return cli_lib_error("sc_placement_parse", rc);
	if ((rc = cli_ranks_runtime_create(sc_grid_graph(x->gr), x->p, &ro,
					   cfg->credits, &x->rt, &x->mpi)) != 0)
		return cli_lib_error(x->mpi || !cli_ranks_active()
					 ? "sc_runtime_create"
					 : "sc_mpi_runtime_create",
				     rc);
	x->stamps_here = run_stamps_here(x->p, x->nodes.out_totals);
	if ((rc = sc_runtime_on_delta(x->rt, x->nodes.out_totals, on_totals,
				      x->lat)) != 0)
		return cli_lib_error("sc_runtime_on_delta", rc);
	wo.waits_arg = x->rt; /* FRONTIER reports (tick mode only) */
	wo.doing_arg = x->rt; /* a STALL names its operator */
	if ((rc = sc_watchdog_create(sc_runtime_exec(x->rt), &wo, &x->wd)) != 0)
		return cli_lib_error("sc_watchdog_create", rc);
	return 0;
}

/* A latency in the unit that fits it: "842.1 us" or "12.3 ms". */
static void
fmt_latency(double us, char *buf, size_t n)
{
	if (us >= 1000.0)
		(void)snprintf(buf, n, "%7.1f ms", us / 1000.0);
	else
		(void)snprintf(buf, n, "%7.1f us", us);
}

/* Once a second: a progress line and a sample. */
static void
run_progress(struct run_ctx *x, struct cli_run_result *r, uint64_t now)
{
	static struct cli_hist_counts counts;
	struct sc_runtime_stats st;
	struct cli_sample s;
	uint64_t done = x->stamps_here ? atomic_load(&x->lat->events)
				       : r->events; /* submitted */
	double dt = (double)(now - x->last_ns) / 1e9;

	(void)cli_hist_take(&x->lat->interval, &counts, true);
	sc_runtime_stats(x->rt, &st);
	s.t = (double)(now - x->t0) / 1e9;
	s.events = done;
	s.eps = (double)(done - x->last_done) / dt;
	s.p50_us = cli_hist_quantile_us(&counts, 0.50);
	s.p99_us = cli_hist_quantile_us(&counts, 0.99);
	s.fill = cli_edge_fill(&st, x->cfg->capacity);
	(void)cli_sample_push(&r->s, &r->ns, &r->cap_s, &s);
	x->last_ns = now;
	x->last_done = done;
	if (!x->cfg->quiet) {
		char p50[32], p99[32];
		double share = x->cfg->seconds > 0
				   ? s.t / x->cfg->seconds
				   : (double)s.events / (double)x->cfg->events;

		fmt_latency(s.p50_us, p50, sizeof(p50));
		fmt_latency(s.p99_us, p99, sizeof(p99));
		if (!x->stamps_here) /* the totals output runs elsewhere */
			(void)snprintf(p50, sizeof(p50), "%10s", "-");
		if (!x->stamps_here)
			(void)snprintf(p99, sizeof(p99), "%10s", "-");
		cli_progress_line(
		    s.t, share,
		    "events %" PRIu64 "  %10.0f ev/s  p50 "
		    "%s  p99 %s  edge fill %5.1f%%  turns %" PRIu64,
		    s.events, s.eps, p50, p99, 100.0 * s.fill, st.turns);
	}
}

static int
run_check_alive(struct run_ctx *x)
{
	return cli_runtime_check_alive(x->rt);
}

/* Sleep until `t` (sc_bench_now_ns, i.e. CLOCK_MONOTONIC) or a signal: a
 * sleep, not a spin, as the machine may have fewer cores than workers.
 * An absolute deadline, so the time spent before the call does not
 * stretch the sleep. */
static void
run_sleep_until(uint64_t t)
{
	struct timespec ts = {(time_t)(t / 1000000000ull),
			      (long)(t % 1000000000ull)};

	(void)clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

/* Nap for a while. */
static void
run_nap(uint64_t ns)
{
	run_sleep_until(sc_bench_now_ns() + ns);
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

	/* No stamp comes back to a host whose totals output runs on
	 * another rank: the edges' backpressure bounds what is in flight. */
	while (x->stamps_here &&
	       seq - atomic_load(&x->lat->done) >= SENT_RING) {
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
			return CLI_EXIT_LIBRARY;
		}
		run_nap(50000);
	}
	return 0;
}

/* Submit batch b (sequence number seq, built before) of n events, which
 * arrived from `first` to `last` (closed loop: 0, 0 for now), respecting
 * backpressure: a full edge is counted and waited out (the runtime wakes
 * us when the input's unit takes frames). Returns 0 or an exit code (the
 * error said). */
static int
run_submit(struct run_ctx *x, struct cli_run_result *r, struct sc_batch *b,
	   uint64_t seq, uint32_t n, uint64_t first, uint64_t last)
{
	struct arrival *a = &x->lat->sent[seq % SENT_RING];
	struct sc_timeline *tl = x->cfg->timeline;
	uint64_t t = tl ? sc_bench_now_ns() : 0;
	bool ring_full = tl && x->stamps_here &&
			 seq - atomic_load(&x->lat->done) >= SENT_RING;
	int rc;

	if ((rc = run_wait_ring(x, seq)) != 0)
		return rc;
	if (ring_full)
		cli_trace_host(tl, CLI_TRACE_WAIT_FLIGHT, t, 0);
	if (last == 0)
		first = last = sc_bench_now_ns();
	atomic_store_explicit(&a->first, first, memory_order_relaxed);
	atomic_store_explicit(&a->last, last, memory_order_relaxed);
	atomic_store_explicit(&a->n, n, memory_order_relaxed);
	t = tl ? sc_bench_now_ns() : 0;
	rc = sc_runtime_submit(x->rt, x->nodes.cells, b);
	cli_trace_host(tl, CLI_TRACE_SUBMIT, t, n);
	if (rc == SC_EFULL) {
		if (r)
			r->efull++;
		t = tl ? sc_bench_now_ns() : 0;
		rc = sc_runtime_submit_wait(x->rt, x->nodes.cells, b,
					    RUN_STUCK_NS);
		cli_trace_host(tl, CLI_TRACE_WAIT_ROOM, t, n);
	}
	if (rc && run_check_alive(x) == 0)
		return cli_lib_error("sc_runtime_submit", rc);
	return rc ? CLI_EXIT_LIBRARY : 0;
}

/* The final checks: idle invariant, every stamp seen, outputs equal to
 * the reference. A check that fails (SC_ESTATE: a broken invariant, an
 * output that differs) leaves r->ok false with r->why, and returns 0; a
 * check that could not be made (SC_ENOMEM reading an integral or
 * building the reference) is the library's error, not a difference:
 * said as such, CLI_EXIT_LIBRARY. */
static int
run_verify(struct run_ctx *x, struct cli_run_result *r)
{
	const int outs[2] = {x->nodes.out_grid, x->nodes.out_totals};
	/* Across ranks every rank takes both integrals whatever it found
	 * before (they are collective); only rank 0 compares them, and the
	 * stamps are checked once gathered (run_ranks_check). */
	const bool across = cli_ranks_active(), host = cli_ranks_rank() == 0;
	bool ok = true;
	int rc;

	r->ok = false;
	if ((rc = sc_runtime_check_idle(x->rt)) != 0) {
		if (rc != SC_ESTATE)
			return cli_lib_error("sc_runtime_check_idle", rc);
		(void)snprintf(r->why, sizeof(r->why), "idle check: %s",
			       sc_errmsg());
		if (across)
			(void)fprintf(stderr, "subcirc run: rank %d: %s\n",
				      cli_ranks_rank(), r->why);
		ok = false;
	}
	if (ok && !across && atomic_load(&x->lat->done) != sc_grid_seq(x->gr)) {
		(void)snprintf(r->why, sizeof(r->why),
			       "last stamp seen %" PRIu64
			       ", submitted %" PRIu64,
			       atomic_load(&x->lat->done), sc_grid_seq(x->gr));
		ok = false;
	}
	for (int i = 0; i < 2 && (ok || across); i++) {
		struct sc_batch *got = NULL;

		if ((rc = sc_runtime_integral(x->rt, outs[i], &got)) != 0)
			return cli_lib_error("sc_runtime_integral", rc);
		rc = ok && host ? sc_grid_verify(x->gr, outs[i], got) : 0;
		sc_batch_release(got);
		if (rc && rc != SC_ESTATE)
			return cli_lib_error("sc_grid_verify", rc);
		if (rc) {
			(void)snprintf(r->why, sizeof(r->why), "%s",
				       sc_errmsg());
			ok = false;
		}
	}
	r->ok = ok;
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
run_finish(struct run_ctx *x, struct cli_run_result *r, uint64_t t_end)
{
	static struct cli_hist_counts counts;
	struct sc_runtime_stats st;

	(void)cli_hist_take(&x->lat->all, &counts, false);
	if (x->cfg->hist_out)
		*x->cfg->hist_out = counts;
	r->latency_measured = x->stamps_here;
	r->latency_events = counts.n;
	r->seconds = (double)(t_end - x->t0) / 1e9;
	r->eps = r->seconds > 0 ? (double)r->events / r->seconds : 0.0;
	r->p50_us = cli_hist_quantile_us(&counts, 0.50);
	r->p90_us = cli_hist_quantile_us(&counts, 0.90);
	r->p99_us = cli_hist_quantile_us(&counts, 0.99);
	r->p999_us = cli_hist_quantile_us(&counts, 0.999);
	r->max_us = cli_hist_quantile_us(&counts, 1.0);
	sc_runtime_stats(x->rt, &st);
	r->turns = st.turns;
	r->frames = st.frames_delivered;
	if (cli_ranks_rank() == 0)
		cli_units_print(x->cfg->units, x->cfg->units_every, x->rt,
				r->seconds);
	cli_units_longest(x->rt, &r->longest, &r->nlongest);
	r->units = st.units;
	r->edges = st.edges;
	r->kicks = run_kicks(sc_runtime_exec(x->rt));
	return run_verify(x, r);
}

/* The end of a run by time, in sc_bench_now_ns; UINT64_MAX by events. */
static uint64_t
run_end(const struct cli_run_cfg *cfg, uint64_t t0)
{
	return cfg->seconds > 0 ? t0 + (uint64_t)(cfg->seconds * 1e9)
				: UINT64_MAX;
}

/* Open loop: the arrival of event i on the schedule. */
static uint64_t
run_arrival(const struct run_ctx *x, uint64_t i)
{
	return x->t0 + (uint64_t)((double)i * x->step_ns);
}

/* Wait until `due` (open loop; not past `end`), in naps of at most
 * NAP_MAX_NS with a look for a dead unit between them, so that a long
 * interval still ends soon after a unit dies. The last nap goes straight
 * to the due time: nothing runs between the wake-up and the submit. A
 * signal ends the wait. Returns 0 or an exit code. */
static int
run_wait_due(struct run_ctx *x, uint64_t due, uint64_t end)
{
	uint64_t now;
	int rc;

	due = due < end ? due : end;
	while (!cli_signal_caught() && (now = sc_bench_now_ns()) < due) {
		if (due - now <= NAP_MAX_NS) {
			run_sleep_until(due);
			continue;
		}
		run_nap(NAP_MAX_NS);
		if ((rc = run_check_alive(x)) != 0)
			return rc;
	}
	return 0;
}

/* After a submit: a look for a dead unit every millisecond (so the run
 * ends soon after one dies rather than at its end, or never once the
 * stamps stop) and a progress line every second. Here, not between the
 * wake-up and the submit, where it would add to every latency. */

/* Every millisecond with --trace: each edge's fill, and the events whose
 * output came through per second since the last sample. */
static void
trace_tick(struct run_ctx *x, uint64_t now)
{
	cli_trace_sample(x->cfg->timeline, x->rt, now, &x->trace_ns,
			 &x->trace_events, atomic_load(&x->lat->events));
}

static int
run_between(struct run_ctx *x, struct cli_run_result *r)
{
	uint64_t now = sc_bench_now_ns();
	int rc;

	if (now - x->checked >= 1000000ull) {
		x->checked = now;
		if ((rc = run_check_alive(x)) != 0)
			return rc;
	}
	if (now - x->last_ns >= 1000000000ull)
		run_progress(x, r, now);
	cli_units_tick(x->cfg->units_every, x->rt, x->t0, now);
	if (x->cfg->timeline)
		trace_tick(x, now);
	return 0;
}

/* Open loop: the batch that starts at event i0. It holds --batch events
 * and is due when the last arrives, or, with --linger L, fewer when L
 * passes first: it is then due L after its first event's arrival, with
 * the events arrived by then (at least one). */
struct plan {
	uint32_t n;		   /* events */
	uint64_t first, last, due; /* arrivals of the first and the last */
};

static void
run_plan(const struct run_ctx *x, uint64_t i0, struct plan *p)
{
	uint64_t b = x->cfg->batch, deadline, i;

	p->first = run_arrival(x, i0);
	p->last = p->due = run_arrival(x, i0 + b - 1);
	p->n = (uint32_t)b;
	if (!x->linger_ns || p->last <= p->first + x->linger_ns)
		return;
	deadline = p->first + x->linger_ns;
	i = i0 + (uint64_t)((double)x->linger_ns / x->step_ns);
	/* The division's rounding, made exact against run_arrival. */
	while (i > i0 && run_arrival(x, i) > deadline)
		i--;
	while (i + 1 < i0 + b && run_arrival(x, i + 1) <= deadline)
		i++;
	p->n = (uint32_t)(i - i0 + 1);
	p->last = run_arrival(x, i);
	p->due = deadline;
}

/* How much of the offered rate the host kept up to time t (open loop):
 * the events it submitted against those arrived by t, less one batch in
 * formation; the offered rate when too few arrived to judge, and never
 * more (a batch cut short by a signal went early). */
static double
run_achieved(const struct run_ctx *x, uint64_t events, uint64_t t)
{
	const struct cli_run_cfg *c = x->cfg;
	double arrived =
	    t > x->t0 ? floor((double)(t - x->t0) / x->step_ns) + 1 : 0;
	double forming = c->batch;

	if (x->linger_ns && (double)x->linger_ns / x->step_ns + 1 < forming)
		forming = (double)x->linger_ns / x->step_ns + 1;
	if (arrived <= forming || (double)events >= arrived - forming)
		return c->rate;
	return c->rate * (double)events / (arrived - forming);
}

/* Submit batches until the run's end (its events, its seconds, or a
 * signal); 0 or an exit code. Open loop: each batch as run_plan says,
 * built before the wait, as a live source's events would be in hand by
 * then. Closed loop: full batches, as fast as backpressure lets. */
static int
run_loop(struct run_ctx *x, struct cli_run_result *r)
{
	const struct cli_run_cfg *cfg = x->cfg;
	const bool open = x->step_ns > 0;
	uint64_t end = run_end(cfg, x->t0), t_stop;
	uint64_t warm_end = x->t0 + (uint64_t)(cfg->warmup * 1e9);
	bool warm = cfg->warmup <= 0;
	int rc;

	for (;;) {
		struct plan p = {.n = cfg->batch};
		struct sc_batch *b = NULL;

		if (cli_signal_caught() ||
		    (cfg->events && r->events >= cfg->events) ||
		    sc_bench_now_ns() >= end)
			break;
		if (open) {
			run_plan(x, r->events, &p);
			if (p.due > end) {
				/* --seconds holds at any rate: the run
				 * lasts until its end, not its last batch. */
				if ((rc = run_wait_due(x, end, end)) != 0)
					return rc;
				break;
			}
		}
		if ((rc = sc_grid_next(x->gr, p.n, &b)) != 0)
			return cli_lib_error("sc_grid_next", rc);
		if (open && (rc = run_wait_due(x, p.due, end)) != 0) {
			sc_batch_release(b);
			return rc;
		}
		/* Built, so submitted even when a signal cut the wait short
		 * (the reference has it): its events as arrived now. */
		if (cli_signal_caught())
			p.first = p.last = 0;
		/* The first batch submitted once the warm-up is over is the
		 * first the run's latency keeps (set before its output can
		 * come through). */
		if (!warm && sc_bench_now_ns() >= warm_end) {
			atomic_store(&x->lat->kept_from, sc_grid_seq(x->gr));
			warm = true;
		}
		rc = run_submit(x, r, b, sc_grid_seq(x->gr), p.n, p.first,
				p.last);
		sc_batch_release(b);
		if (rc)
			return rc;
		r->events += p.n;
		r->batches++;
		if ((rc = run_between(x, r)) != 0)
			return rc;
	}
	t_stop = sc_bench_now_ns();
	if (open) {
		r->achieved_eps =
		    run_achieved(x, r->events, t_stop < end ? t_stop : end);
		r->rate_short = r->achieved_eps < 0.95 * cfg->rate;
	}
	return 0;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The floor's wake-ups: a bare sleep to a due time every `interval` (the
 * run's batch interval, at most NAP_MAX_NS: the loop's longest nap), the
 * same call the loop makes, each one's lateness recorded. */
static void
run_floor_wake(struct cli_run_floor *f, uint64_t interval)
{
	static struct cli_hist h;
	static struct cli_hist_counts c;
	uint64_t n = FLOOR_NS / interval, start;

	n = n < FLOOR_MIN ? FLOOR_MIN : n > FLOOR_MAX ? FLOOR_MAX : n;
	memset(&h, 0, sizeof(h));
	start = sc_bench_now_ns();
	for (uint64_t i = 1; i <= n && !cli_signal_caught(); i++) {
		uint64_t due = start + i * interval, now;

		run_sleep_until(due);
		now = sc_bench_now_ns();
		cli_hist_add(&h, now > due ? now - due : 0);
	}
	f->sleeps = (uint32_t)cli_hist_take(&h, &c, false);
	f->sleep_us = (double)interval / 1e3;
	f->wake_p50_us = cli_hist_quantile_us(&c, 0.50);
	f->wake_p99_us = cli_hist_quantile_us(&c, 0.99);
}

/* The floor's service time: SERVICE_BATCHES batches, each submitted to
 * the idle runtime and waited for (submit -> its output, the callback's
 * clock); their median. Their latencies stay out of the run's. */
static int
run_floor_service(struct run_ctx *x, struct cli_run_floor *f)
{
	uint64_t t[SERVICE_BATCHES];
	struct sc_panic_record pr;
	uint32_t n = 0;
	int rc = 0;

	for (; n < SERVICE_BATCHES && !cli_signal_caught(); n++) {
		struct sc_batch *b = NULL;
		uint64_t t_submit;

		if ((rc = sc_grid_next(x->gr, x->cfg->batch, &b)) != 0)
			return cli_lib_error("sc_grid_next", rc);
		t_submit = sc_bench_now_ns();
		rc = run_submit(x, NULL, b, sc_grid_seq(x->gr), x->cfg->batch,
				0, 0);
		sc_batch_release(b);
		if (rc)
			return rc;
		rc = sc_runtime_wait_idle(x->rt, RUN_STUCK_NS, &pr);
		if (rc || atomic_load(&x->lat->done) != sc_grid_seq(x->gr))
			return run_check_alive(x)
				   ? CLI_EXIT_LIBRARY
				   : cli_lib_error("sc_runtime_wait_idle",
						   rc ? rc : SC_ESTATE);
		t[n] = atomic_load(&x->lat->done_ns) - t_submit;
	}
	qsort(t, n, sizeof(t[0]), cmp_u64);
	f->services = n;
	if (n) {
		uint64_t mid = t[n / 2];

		f->service_p50_us = (double)mid / 1e3;
	}
	return 0;
}

/* The machine's floor for an open-loop run (see the top). */
static int
run_floor(struct run_ctx *x, struct cli_run_floor *f)
{
	double interval = x->step_ns * x->cfg->batch;

	if (x->linger_ns && (double)x->linger_ns < interval)
		interval = (double)x->linger_ns;

	memset(f, 0, sizeof(*f));
	run_floor_wake(f, interval < (double)NAP_MAX_NS ? (uint64_t)interval
							: NAP_MAX_NS);
	f->measured = true;
	if (cli_ranks_active())
		return 0; /* its service time: a collective wait per batch */
	atomic_store(&x->lat->measured_from,
		     sc_grid_seq(x->gr) + SERVICE_BATCHES + 1);
	return run_floor_service(x, f);
}

/* This rank's figures after the run (before its runtime goes). */
static void
run_rank_figs(struct run_ctx *x, const struct cli_run_result *r, int rc,
	      struct cli_rank_figs *f)
{
	cli_ranks_figs_of(x->rt, x->mpi, x->p, f);
	f->stamp = x->lat ? atomic_load(&x->lat->done) : 0;
	f->failed = rc != 0 || !r->ok;
}

/* Rank 0, with every rank's figures: the stamps and the other ranks'
 * checks (the totals output may run elsewhere), and the sums. */
static void
run_ranks_check(const struct run_ctx *x, struct cli_run_result *r,
		struct cli_rank_figs *all, int n)
{
	struct cli_rank_figs sum;

	cli_ranks_figs_total(all, n, &sum);
	r->nranks = n;
	r->ranks = all;
	r->turns = sum.turns;
	r->frames = sum.frames_delivered;
	for (int k = 1; k < n && r->ok; k++)
		if (all[k].failed) {
			(void)snprintf(r->why, sizeof(r->why),
				       "rank %d: its checks failed (its "
				       "messages say why)",
				       k);
			r->ok = false;
		}
	if (r->ok && sum.stamp != sc_grid_seq(x->gr)) {
		(void)snprintf(r->why, sizeof(r->why),
			       "last stamp seen %" PRIu64
			       " (on any rank), submitted %" PRIu64,
			       sum.stamp, sc_grid_seq(x->gr));
		r->ok = false;
	}
}

/* One run of the workload as cfg says; 0 or an exit code. */
int
cli_grid_run(const struct cli_run_cfg *cfg, struct cli_run_result *r)
{
	struct run_ctx x;
	struct sc_panic_record pr;
	const bool host = cli_ranks_rank() == 0, across = cli_ranks_active();
	/* The figures gathered: the process's last run (not freed). */
	static struct cli_rank_figs all[SC_PLACEMENT_MAX_RANKS];
	struct cli_rank_figs mine;
	uint64_t t_idle;
	int rc = run_setup(&x, cfg), rc2;

	memset(r, 0, sizeof(*r));
	r->nranks = 1;
	if (rc)
		goto cleanup;
	if (host && x.step_ns > 0 && (rc = run_floor(&x, &r->floor)) != 0 &&
	    !across)
		goto cleanup;
	atomic_store(&x.lat->measured_from, sc_grid_seq(x.gr) + 1);
	atomic_store(&x.lat->kept_from, cfg->warmup > 0 ? UINT64_MAX : 0);
	x.t0 = x.last_ns = x.checked = sc_bench_now_ns();
	x.last_done = 0; /* events of measured batches seen */
	/* Across ranks a failure of the host's loop still goes through
	 * every collective call below (the other ranks make them). */
	if (!rc && host && (rc = run_loop(&x, r)) != 0 && !across)
		goto cleanup;
	r->interrupted =
	    cli_signal_caught(); /* what ended the loop, not the drain */
	t_idle = sc_bench_now_ns();
	rc2 = sc_runtime_wait_idle(x.rt, host ? 60000000000ull : 0, &pr);
	cli_trace_host(cfg->timeline, CLI_TRACE_WAIT_IDLE, t_idle, 0);
	if (rc2 != 0) {
		if (rc2 == SC_EPANIC)
			(void)fprintf(stderr, "subcirc: unit %s panicked: %s\n",
				      pr.name, pr.message);
		rc2 = cli_lib_error("sc_runtime_wait_idle", rc2);
		rc = rc ? rc : rc2;
		if (!across)
			goto cleanup;
	}
	rc2 = run_finish(&x, r, sc_bench_now_ns());
	rc = rc ? rc : rc2;
cleanup:
	if (across)
		run_rank_figs(&x, r, rc, &mine);
	run_teardown(&x);
	if (across) {
		rc2 = cli_ranks_gather(&mine, all);
		if (host && !rc2 && !rc)
			run_ranks_check(&x, r, all, cli_ranks_size());
		rc = rc ? rc : rc2;
	}
	sc_grid_destroy(x.gr);
	return rc;
}

/* --- what the commands set up ----------------------------------------------
 */

static uint32_t
cores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (uint32_t)n : 1;
}

void
cli_grid_defaults(struct cli_run_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->workers = cores();
	strcpy(c->placement, "chains");
	c->batch = 256;
	c->rows = c->cols = 256;
	c->seed = 1;
	c->capacity = 64;
	c->budget = 64;
	c->outbox_bound = 4096; /* the runtime's default, said */
}

bool
cli_grid_parse_opt(struct cli_args *a, struct cli_run_cfg *c)
{
	const char *v;

	if (cli_args_opt(a, "--batch", &v))
		c->batch =
		    (uint32_t)cli_parse_u64(a->cmd, "--batch", v, 1, 1 << 20);
	else if (cli_args_opt(a, "--rows", &v))
		c->rows =
		    (int64_t)cli_parse_u64(a->cmd, "--rows", v, 1, 1 << 24);
	else if (cli_args_opt(a, "--cols", &v))
		c->cols =
		    (int64_t)cli_parse_u64(a->cmd, "--cols", v, 1, 1 << 24);
	else if (cli_args_opt(a, "--seed", &v))
		c->seed = cli_parse_u64(a->cmd, "--seed", v, 0, UINT64_MAX);
	else if (cli_args_opt(a, "--capacity", &v))
		c->capacity = cli_parse_capacity(a->cmd, "--capacity", v);
	/* The same option under the runtime's name for it
	 * (sc_runtime_opts.edge_capacity). */
	else if (cli_args_opt(a, "--edge-capacity", &v))
		c->capacity = cli_parse_capacity(a->cmd, "--edge-capacity", v);
	else if (cli_args_opt(a, "--budget", &v))
		c->budget =
		    (uint32_t)cli_parse_u64(a->cmd, "--budget", v, 1, 1 << 20);
	else
		return false;
	return true;
}
