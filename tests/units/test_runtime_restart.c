/*
 * test_runtime_restart.c - dead units that come back (units/runtime.h,
 * "Restarts"), one rule per test: a unit rebuilt within its bound settles
 * as if it had never died; one that dies again past the bound stays dead;
 * the bound counts restarts in its period; a submit to a dead unit that
 * will come back is applied; create refuses a policy on a unit that is
 * not integral-functional, naming the node; the frame accounting stays
 * exact. SC_THREADED: the pool test runs real threads behind the watchdog.
 */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "runtime/panic.h"
#include "tests/support/rt_watchdog.h"
#include "units/placement.h"
#include "units/runtime.h"

/* in(k, v) -> map (fails on k == 13 while fails_left > 0) -> out. The
 * budget of failures is what makes a unit die again, or not, after its
 * rebuild (whose step sees row 13 again, in its input's integral). */
static atomic_int fails_left;

static int
copy_or_fail(void *ctx, const uint64_t *row, uint64_t *out)
{
	(void)ctx;
	if (sc_dec_i64(row[0]) == 13 && atomic_load(&fails_left) > 0) {
		atomic_fetch_sub(&fails_left, 1);
		return SC_ECALLBACK;
	}
	out[0] = row[0];
	out[1] = row[1];
	return 0;
}

struct small {
	struct sc_graph *g;
	struct sc_schema s;
	int in, m, out;
};

static void
small_init(struct small *c)
{
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_I64};

	cr_assert_eq(sc_schema_init(&c->s, 2, t, NULL), 0);
	cr_assert_eq(sc_graph_create(&c->g), 0);
	c->in = sc_graph_input(c->g, "in", &c->s);
	c->m = sc_graph_map(c->g, c->in, &c->s, copy_or_fail, NULL);
	c->out = sc_graph_output(c->g, "out", c->m);
	cr_assert_geq(c->out, 0, "%s", sc_errmsg());
}

/* A batch of rows (k, k) for k in ks[0..n), weight 1. */
static struct sc_batch *
keys(const int64_t *ks, size_t n)
{
	uint64_t rows[64];
	struct sc_batch *b = NULL;

	for (size_t i = 0; i < n; i++) {
		rows[2 * i] = sc_enc_i64(ks[i]);
		rows[2 * i + 1] = sc_enc_i64(ks[i]);
	}
	cr_assert_eq(sc_batch_from_records(2, rows, NULL, n, &b), 0);
	return b;
}

static struct sc_runtime_opts
opts_of(uint32_t workers, uint32_t r, uint64_t t_ns)
{
	return (struct sc_runtime_opts){.workers = workers,
					.restart = {.kind = SC_RESTART_BOUNDED,
						    .max_restarts = r,
						    .period_ns = t_ns}};
}

static struct sc_runtime *
runtime_of(struct small *c, const char *strategy,
	   const struct sc_runtime_opts *o, struct sc_placement **p)
{
	struct sc_runtime *rt = NULL;

	cr_assert_eq(sc_placement_parse(c->g, strategy, 1, p), 0);
	cr_assert_eq(sc_runtime_create(c->g, *p, o, &rt), 0, "%s", sc_errmsg());
	return rt;
}

/* The output's integral is exactly the rows ks[0..n), weight 1 each. */
static void
assert_out_is(struct sc_runtime *rt, int out, const int64_t *ks, size_t n)
{
	struct sc_batch *got = NULL, *want = keys(ks, n);

	cr_assert_eq(sc_runtime_upstream_dead(rt, out, NULL), 0, "%s",
		     sc_errmsg());
	cr_assert_eq(sc_runtime_integral(rt, out, &got), 0, "%s", sc_errmsg());
	cr_assert(sc_batch_equal(got, want), "%zu rows, want %zu",
		  sc_batch_count(got), n);
	sc_batch_release(got);
	sc_batch_release(want);
}

/* Every frame sent was delivered or counted undeliverable; at idle no
 * live ring holds one. */
static void
assert_frames_exact(struct sc_runtime *rt)
{
	struct sc_runtime_stats st;

	sc_runtime_stats(rt, &st);
	cr_assert_eq(st.frames_sent,
		     st.frames_delivered + st.frames_undeliverable +
			 st.pending_closed,
		     "%llu sent, %llu delivered, %llu undeliverable, %llu in "
		     "dead rings",
		     (unsigned long long)st.frames_sent,
		     (unsigned long long)st.frames_delivered,
		     (unsigned long long)st.frames_undeliverable,
		     (unsigned long long)st.pending_closed);
	cr_assert_eq(st.pending, st.pending_closed);
}

static void
small_fini(struct small *c, struct sc_runtime *rt, struct sc_placement *p)
{
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
	sc_graph_destroy(c->g);
}

/* Dies twice (the panic, then its first rebuild), rebuilt within a bound
 * of 3: every output ends where the single circuit does, and the panics
 * stay recorded beside the restarts. */
static void
within_the_bound(const char *strategy, uint32_t workers)
{
	struct small c;
	struct sc_placement *p;
	struct sc_runtime_opts o = opts_of(workers, 3, 0);
	struct sc_runtime *rt;
	struct sc_runtime_stats st;
	struct sc_panic_record first;
	int64_t k1[3] = {1, 2, 13}, k2[2] = {4, 5}, all[5] = {1, 2, 13, 4, 5};
	struct sc_batch *b1 = keys(k1, 3), *b2 = keys(k2, 2);
	struct sc_test_guard *guard = NULL;

	atomic_store(&fails_left, 2);
	small_init(&c);
	rt = runtime_of(&c, strategy, &o, &p);
	if (workers)
		guard = sc_test_guard_begin(sc_runtime_exec(rt),
					    "restart/within_the_bound", 20000);
	cr_assert_eq(sc_runtime_submit(rt, c.in, b1), 0);
	/* The panics are recorded: wait_idle says so, with the first. */
	cr_assert_eq(sc_runtime_wait_idle(rt, 0, &first), SC_EPANIC);
	cr_assert(strstr(first.message, "SC_ECALLBACK"), "%s", first.message);
	sc_runtime_stats(rt, &st);
	cr_assert_eq(st.dead, 0);
	cr_assert_eq(st.panics, 2);
	cr_assert_eq(st.restarts, 2);
	cr_assert_eq(st.given_up, 0);
	assert_out_is(rt, c.out, k1, 3);
	/* And it goes on as if it had never died. */
	cr_assert_eq(sc_runtime_submit(rt, c.in, b2), 0);
	cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), SC_EPANIC);
	assert_out_is(rt, c.out, all, 5);
	cr_assert_eq(sc_runtime_check_idle(rt), 0, "%s", sc_errmsg());
	sc_test_guard_end(guard);
	cr_assert_eq(sc_runtime_shutdown(rt, NULL), SC_EPANIC);
	assert_frames_exact(rt);
	sc_batch_release(b1);
	sc_batch_release(b2);
	small_fini(&c, rt, p);
}

Test(runtime_restart,
     a_unit_rebuilt_within_its_bound_settles_as_if_it_never_died)
{
	within_the_bound("per-node", 0);
	within_the_bound("single", 0);
	within_the_bound("chains", 0);
}

Test(runtime_restart, a_unit_rebuilt_on_a_real_pool_settles, .timeout = 60)
{
	within_the_bound("per-node", 2);
	within_the_bound("single", 3);
}

Test(runtime_restart, a_unit_that_dies_again_past_its_bound_stays_dead)
{
	struct small c;
	struct sc_placement *p;
	struct sc_runtime_opts o = opts_of(0, 2, 0);
	struct sc_runtime *rt;
	struct sc_runtime_stats st;
	uint32_t dead = 0;
	int64_t k1[3] = {1, 2, 13};
	struct sc_batch *b1 = keys(k1, 3), *got = NULL;

	atomic_store(&fails_left, 100);
	small_init(&c);
	rt = runtime_of(&c, "per-node", &o, &p);
	cr_assert_eq(sc_runtime_submit(rt, c.in, b1), 0);
	cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), SC_EPANIC);
	sc_runtime_stats(rt, &st);
	/* The panic and two rebuilds that died again: then no more. */
	cr_assert_eq(st.restarts, 2);
	cr_assert_eq(st.panics, 3);
	cr_assert_eq(st.dead, 1);
	cr_assert_eq(st.given_up, 1);
	/* Today's dead-unit semantics. */
	cr_assert_eq(sc_runtime_upstream_dead(rt, c.out, &dead), SC_EDEAD);
	cr_assert_eq(dead, (uint32_t)sc_placement_unit_of(p, c.m));
	cr_assert_eq(sc_runtime_integral(rt, c.out, &got), 0);
	cr_assert_eq(sc_batch_count(got), 0);
	sc_batch_release(got);
	/* A later wait brings nothing back. */
	cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), SC_EPANIC);
	sc_runtime_stats(rt, &st);
	cr_assert_eq(st.restarts, 2);
	cr_assert_eq(sc_runtime_check_idle(rt), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_runtime_shutdown(rt, NULL), SC_EPANIC);
	assert_frames_exact(rt);
	sc_batch_release(b1);
	small_fini(&c, rt, p);
}

Test(runtime_restart, a_submit_to_a_unit_given_up_is_edead)
{
	struct small c;
	struct sc_placement *p;
	struct sc_runtime_opts o = opts_of(0, 1, 0);
	struct sc_runtime *rt;
	int64_t k1[1] = {13}, k2[2] = {1, 2};
	struct sc_batch *b1 = keys(k1, 1), *b2 = keys(k2, 2);

	atomic_store(&fails_left, 100);
	small_init(&c);
	rt = runtime_of(&c, "single", &o, &p);
	cr_assert_eq(sc_runtime_submit(rt, c.in, b1), 0);
	cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), SC_EPANIC);
	cr_assert_eq(sc_runtime_submit(rt, c.in, b2), SC_EDEAD);
	sc_batch_release(b1);
	sc_batch_release(b2);
	small_fini(&c, rt, p);
}

static void
sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0)
		;
}

/* One restart allowed per 300 ms: a death after the period is rebuilt,
 * one right after a restart is not. */
Test(runtime_restart, the_bound_counts_restarts_in_its_period)
{
	struct small c;
	struct sc_placement *p;
	struct sc_runtime_opts o = opts_of(0, 1, 300000000ull);
	struct sc_runtime *rt;
	struct sc_runtime_stats st;
	int64_t k[1] = {13};
	struct sc_batch *b = keys(k, 1);

	small_init(&c);
	rt = runtime_of(&c, "per-node", &o, &p);
	atomic_store(&fails_left, 1);
	cr_assert_eq(sc_runtime_submit(rt, c.in, b), 0);
	cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), SC_EPANIC);
	sc_runtime_stats(rt, &st);
	cr_assert_eq(st.restarts, 1);
	cr_assert_eq(st.dead, 0);
	/* After the period: a second death is rebuilt. */
	sleep_ms(350);
	atomic_store(&fails_left, 1);
	cr_assert_eq(sc_runtime_submit(rt, c.in, b), 0);
	cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), SC_EPANIC);
	sc_runtime_stats(rt, &st);
	cr_assert_eq(st.restarts, 2);
	cr_assert_eq(st.dead, 0);
	/* Within it: the third death stays. */
	atomic_store(&fails_left, 1);
	cr_assert_eq(sc_runtime_submit(rt, c.in, b), 0);
	cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), SC_EPANIC);
	sc_runtime_stats(rt, &st);
	cr_assert_eq(st.restarts, 2);
	cr_assert_eq(st.dead, 1);
	cr_assert_eq(st.given_up, 1);
	sc_batch_release(b);
	small_fini(&c, rt, p);
}

/* Drive one queued turn by hand (workers = 0). */
static int
one_turn(struct sc_runtime *rt)
{
	struct sc_exec *ex = sc_runtime_exec(rt);
	struct sc_claim cl;
	int rc;

	sc_claim_init(&cl);
	cr_assert_eq(sc_exec_claim(ex, -1, &cl), 0);
	rc = sc_exec_run(ex, &cl, 64);
	if (rc == 0)
		cr_assert_eq(sc_exec_finish(ex, &cl), 0);
	sc_claim_fini(&cl);
	return rc;
}

/* While dead, a submit to a unit that will come back is applied: its rows
 * wait in the trace of the host edge, and the rebuild takes them; what
 * waited in the dead unit's ring is discarded and counted. */
Test(runtime_restart, a_submit_to_a_dead_unit_that_will_come_back_is_applied)
{
	struct small c;
	struct sc_placement *p;
	struct sc_runtime_opts o = opts_of(0, 1, 0);
	struct sc_runtime *rt;
	struct sc_runtime_stats st;
	uint32_t n = 9;
	int64_t k1[2] = {13, 7}, k2[2] = {1, 2}, all[4] = {13, 7, 1, 2};
	struct sc_batch *b1 = keys(k1, 2), *b2 = keys(k2, 2);

	atomic_store(&fails_left, 1);
	small_init(&c);
	rt = runtime_of(&c, "single", &o, &p);
	cr_assert_eq(sc_runtime_submit(rt, c.in, b1), 0);
	cr_assert_eq(one_turn(rt), SC_EPANIC);
	cr_assert_eq(sc_runtime_submit(rt, c.in, b2), 0, "%s", sc_errmsg());
	sc_runtime_stats(rt, &st);
	cr_assert_eq(st.dead, 1);
	cr_assert_eq(st.undeliverable_frames, 1);
	/* By hand: the caller that drives the executor rebuilds. */
	cr_assert_eq(sc_runtime_restart(rt, &n), 0, "%s", sc_errmsg());
	cr_assert_eq(n, 1);
	cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), SC_EPANIC);
	assert_out_is(rt, c.out, all, 4);
	assert_frames_exact(rt);
	sc_batch_release(b1);
	sc_batch_release(b2);
	small_fini(&c, rt, p);
}

Test(runtime_restart, restart_while_a_turn_is_queued_is_ebusy)
{
	struct small c;
	struct sc_placement *p;
	struct sc_runtime_opts o = opts_of(0, 1, 0);
	struct sc_runtime *rt;
	uint32_t n = 9;
	int64_t k1[1] = {1};
	struct sc_batch *b1 = keys(k1, 1);

	atomic_store(&fails_left, 0);
	small_init(&c);
	rt = runtime_of(&c, "single", &o, &p);
	cr_assert_eq(sc_runtime_submit(rt, c.in, b1), 0);
	cr_assert_eq(sc_runtime_restart(rt, &n), SC_EBUSY);
	cr_assert_eq(n, 9); /* not written */
	cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), 0);
	cr_assert_eq(sc_runtime_restart(rt, &n), 0);
	cr_assert_eq(n, 0);
	cr_assert_eq(sc_runtime_restart(NULL, &n), SC_EINVAL);
	sc_batch_release(b1);
	small_fini(&c, rt, p);
}

/* in -> integrate -> out: the integrate's unit cannot be rebuilt from
 * its input's integral. */
Test(runtime_restart,
     create_refuses_restarts_of_a_unit_that_is_not_integral_functional)
{
	enum sc_type t[1] = {SC_TYPE_I64};
	struct sc_placement *p = NULL;
	struct sc_runtime *rt = NULL;
	struct sc_graph *g = NULL;
	struct sc_schema s;
	struct sc_runtime_opts o = opts_of(0, 1, 0);
	struct sc_restart_policy per[3];
	int in, sum, out;

	cr_assert_eq(sc_schema_init(&s, 1, t, NULL), 0);
	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &s);
	sum = sc_graph_integrate(g, in);
	out = sc_graph_output(g, "total", sum);
	cr_assert_geq(out, 0);
	cr_assert_eq(sc_placement_per_node(g, &p), 0);
	cr_assert_eq(sc_runtime_create(g, p, &o, &rt), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "integrate"), "%s", sc_errmsg());
	cr_assert(strstr(sc_errmsg(), "cannot be restarted"), "%s",
		  sc_errmsg());
	cr_assert_null(rt);
	/* Per unit: the integrate's unit without, the others with: the
	 * restart check passes; what refuses the graph now is the mode (an
	 * integrate is per tick: runtime.h, Modes), not the policy. */
	for (int u = 0; u < 3; u++)
		per[u] = o.restart;
	per[sc_placement_unit_of(p, sum)].kind = SC_RESTART_NONE;
	o.unit_restart = per;
	cr_assert_eq(sc_runtime_create(g, p, &o, &rt), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "(integrate) is per tick"), "%s",
		  sc_errmsg());
	cr_assert_null(strstr(sc_errmsg(), "cannot be restarted"), "%s",
		       sc_errmsg());
	cr_assert_null(rt);
	/* Bad policies. */
	o.unit_restart = NULL;
	o.restart.kind = (enum sc_restart_kind)7;
	cr_assert_eq(sc_runtime_create(g, p, &o, &rt), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "restart kind"), "%s", sc_errmsg());
	o.restart.kind = SC_RESTART_BOUNDED;
	o.restart.max_restarts = SC_RESTART_MAX + 1;
	cr_assert_eq(sc_runtime_create(g, p, &o, &rt), SC_EINVAL);
	cr_assert_null(rt);
	sc_placement_destroy(p);
	sc_graph_destroy(g);
}
