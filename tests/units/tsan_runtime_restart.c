/*
 * tsan_runtime_restart.c - restarts on a real pool as a plain program, for
 * the ThreadSanitizer pass (Criterion cannot run under TSan).
 *
 * Two scenarios. First, the settle check (units/settle.h) with a restart
 * policy on random circuits, every strategy, a pool of 2..3 workers fed
 * by 2..3 host threads, an injected panic: every output must equal the
 * single circuit's, none skipped. Second, the rule of when a rebuild runs
 * (units/runtime.h, "Restarts": on a host thread, at idle, holding every
 * input): three host threads submit while a unit keeps dying and the main
 * thread waits for idle over and over, so rebuilds race with submits
 * (which must wait for them, or make them refuse as busy) and with the
 * workers' turns; at the end the output must hold every row submitted.
 * Exit 0 is a pass; a failure prints what differed.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/workloads/random.h"
#include "tests/support/rt_watchdog.h"
#include "units/placement.h"
#include "units/runtime.h"
#include "units/settle.h"

static const char *const strategies[] = {
    "single", "per-node", "chains", "random:2", "sharded:2",
};
#define NSTRATEGIES (sizeof(strategies) / sizeof(strategies[0]))

static int failures;
static unsigned settle_runs, settle_restarts;

static void
fail(const char *what)
{
	(void)fprintf(stderr, "tsan_runtime_restart: %s\n", what);
	failures++;
}

static void *
guard_begin(void *ctx, struct sc_exec *ex)
{
	(void)ctx;
	return sc_test_guard_begin(ex, "tsan_runtime_restart", 20000);
}

static void
guard_end(void *ctx, void *guard)
{
	(void)ctx;
	sc_test_guard_end(guard);
}

static void
settle_part(void)
{
	for (uint64_t seed = 1; seed <= 3; seed++) {
		struct sc_randc *rc = NULL;
		struct sc_settle_work *w = NULL;

		if (sc_randc_create(seed, &rc) ||
		    sc_settle_work_generate(sc_randc_graph(rc),
					    sc_randc_settle_step, rc, 12, 0,
					    &w)) {
			fail(sc_errmsg());
			return;
		}
		for (size_t si = 0; si < NSTRATEGIES; si++) {
			struct sc_placement *p = NULL;
			struct sc_settle_result res = {0};
			int rc_run;
			struct sc_settle_opts o = {
			    .mode = SC_SETTLE_POOL,
			    .seed = seed * 7 + si,
			    .units = 2 + (uint32_t)(si % 2),
			    .hosts = 2 + (uint32_t)(seed % 2),
			    .edge_capacity = 2,
			    .outbox_bound = 4,
			    .timeout_ns = 5000000000ull,
			    .guard_begin = guard_begin,
			    .guard_end = guard_end,
			    .fault = {.kind = SC_SETTLE_FAULT_PANIC,
				      .unit = -1,
				      .at = 1 + seed % 2},
			    .restart = {.kind = SC_RESTART_BOUNDED,
					.max_restarts = 3}};

			if (sc_placement_parse(sc_randc_graph(rc),
					       strategies[si], seed, &p) != 0) {
				fail(sc_errmsg());
				continue;
			}
			rc_run = sc_settle_run(w, p, &o, &res);
			settle_runs++;
			settle_restarts += res.stats.restarts;
			if (rc_run != 0 || !res.ok || res.outputs_dead ||
			    res.frames_lost) {
				(void)fprintf(stderr,
					      "seed %llu %s: %s (%u dead "
					      "outputs)\nreplay: %s\n",
					      (unsigned long long)seed,
					      strategies[si], res.why,
					      res.outputs_dead, res.replay);
				failures++;
			}
			sc_settle_result_fini(&res);
			sc_placement_destroy(p);
		}
		sc_settle_work_destroy(w);
		(void)sc_randc_destroy(rc);
	}
}

/* --- rebuilds racing with submits ----------------------------------------- */

#define HOSTS	3
#define BATCHES 150

static atomic_int fails_left;

/* Fails on k == 13 while fails_left > 0: the unit dies, again and again. */
static int
copy_or_fail(void *ctx, const uint64_t *row, uint64_t *out)
{
	(void)ctx;
	if (sc_dec_i64(row[0]) == 13 && atomic_fetch_sub(&fails_left, 1) > 0)
		return SC_ECALLBACK;
	out[0] = row[0];
	out[1] = row[1];
	return 0;
}

struct host {
	pthread_t th;
	struct sc_runtime *rt;
	int in, t, rc;
};

/* Rows (100 + 1000 t + i, i), and every 10th batch a row (13, 1000 t + i)
 * that kills the map's unit while fails_left lasts. */
static void *
host_main(void *arg)
{
	struct host *h = arg;

	for (int i = 0; i < BATCHES && !h->rc; i++) {
		uint64_t rows[4] = {sc_enc_i64(100 + 1000 * h->t + i),
				    sc_enc_i64(i), sc_enc_i64(13),
				    sc_enc_i64(1000 * h->t + i)};
		struct sc_batch *b = NULL;

		h->rc =
		    sc_batch_from_records(2, rows, NULL, i % 10 ? 1 : 2, &b);
		if (!h->rc)
			h->rc = sc_runtime_submit_wait(h->rt, h->in, b,
						       5000000000ull);
		sc_batch_release(b);
	}
	return NULL;
}

static void
race_part(void)
{
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_runtime_opts o = {
	    .workers = 3,
	    .edge_capacity = 2,
	    .restart = {.kind = SC_RESTART_BOUNDED, .max_restarts = 1000}};
	struct host h[HOSTS];
	struct sc_test_guard *guard;
	struct sc_runtime_stats st;
	struct sc_placement *p = NULL;
	struct sc_runtime *rt = NULL;
	struct sc_graph *g = NULL;
	struct sc_batch *got = NULL;
	struct sc_schema s;
	int in, out;
	size_t want = 0;

	atomic_store(&fails_left, 12);
	if (sc_schema_init(&s, 2, t, NULL) || sc_graph_create(&g)) {
		fail(sc_errmsg());
		return;
	}
	in = sc_graph_input(g, "in", &s);
	out = sc_graph_output(g, "out",
			      sc_graph_map(g, in, &s, copy_or_fail, NULL));
	if (out < 0 || sc_placement_per_node(g, &p) ||
	    sc_runtime_create(g, p, &o, &rt)) {
		fail(sc_errmsg());
		goto out;
	}
	guard = sc_test_guard_begin(sc_runtime_exec(rt), "restart race", 30000);
	for (int k = 0; k < HOSTS; k++) {
		h[k] = (struct host){.rt = rt, .in = in, .t = k};
		if (pthread_create(&h[k].th, NULL, host_main, &h[k]) != 0)
			abort();
	}
	/* Waits (and so rebuilds) while the hosts submit. */
	for (int i = 0; i < 200; i++)
		(void)sc_runtime_wait_idle(rt, 5000000000ull, NULL);
	for (int k = 0; k < HOSTS; k++) {
		(void)pthread_join(h[k].th, NULL);
		if (h[k].rc)
			fail(sc_strerror(h[k].rc));
		want += BATCHES + (BATCHES + 9) / 10;
	}
	(void)sc_runtime_wait_idle(rt, 5000000000ull, NULL);
	sc_test_guard_end(guard);
	sc_runtime_stats(rt, &st);
	if (st.restarts == 0 || st.dead != 0)
		fail("no restart, or a unit still dead");
	if (sc_runtime_integral(rt, out, &got) != 0 ||
	    sc_batch_count(got) != want) {
		(void)fprintf(stderr, "out: %zu rows, want %zu (%u restarts)\n",
			      got ? sc_batch_count(got) : 0, want, st.restarts);
		failures++;
	}
	(void)printf("tsan_runtime_restart: race: %u restarts, %u panics, "
		     "%zu rows\n",
		     st.restarts, st.panics, got ? sc_batch_count(got) : 0);
	if (st.frames_sent !=
	    st.frames_delivered + st.frames_undeliverable + st.pending_closed)
		fail("frames unaccounted for");
	sc_batch_release(got);
out:
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
	sc_graph_destroy(g);
}

int
main(void)
{
	settle_part();
	(void)printf("tsan_runtime_restart: settle: %u runs, %u restarts\n",
		     settle_runs, settle_restarts);
	race_part();
	if (failures)
		(void)fprintf(stderr, "tsan_runtime_restart: %d failures\n",
			      failures);
	return failures ? 1 : 0;
}
