/*
 * test_runtime_misuse.c - calls that must fail instead of hanging or
 * crashing: shutdown and wait_idle from a callback, a turn that
 * never returns, a hard fault in a host-driven turn; and on_delta's
 * promise of non-empty deltas. SC_THREADED: some tests run a pool; each
 * has a Criterion timeout, so that the old hang shows as a failure.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "operators/base.h"
#include "units/placement.h"
#include "units/runtime.h"

/* --- in(k, v) -> m (map) -> out, one unit per node ------------------- */

struct graph2 {
	struct sc_graph *g;
	struct sc_schema s;
	int in, m, out;
};

static atomic_int fault_key = -1; /* m faults on this key */
/* A field of a NULL struct: a fault in the NULL page, by an address
 * UBSan's null check does not stop first. */
static volatile uintptr_t null_field = 8;

static int
copy_or_fault(void *ctx, const uint64_t *row, uint64_t *out)
{
	(void)ctx;
	if (sc_dec_i64(row[0]) == atomic_load(&fault_key))
		out[0] = *(volatile uint64_t *)null_field; /* a hard fault */
	out[0] = row[0];
	out[1] = row[1];
	return 0;
}

static void
graph2_init(struct graph2 *c)
{
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_I64};

	cr_assert_eq(sc_schema_init(&c->s, 2, t, NULL), 0);
	cr_assert_eq(sc_graph_create(&c->g), 0);
	c->in = sc_graph_input(c->g, "in", &c->s);
	c->m = sc_graph_map(c->g, c->in, &c->s, copy_or_fault, NULL);
	c->out = sc_graph_output(c->g, "out", c->m);
	cr_assert_geq(c->out, 0, "%s", sc_errmsg());
}

static struct sc_runtime *
graph2_runtime(struct graph2 *c, const struct sc_runtime_opts *o,
	       struct sc_placement **p)
{
	struct sc_runtime *rt = NULL;

	cr_assert_eq(sc_placement_parse(c->g, "per-node", 1, p), 0);
	cr_assert_eq(sc_runtime_create(c->g, *p, o, &rt), 0, "%s", sc_errmsg());
	return rt;
}

/* One row (k, k) of weight w. */
static struct sc_batch *
row_of(int64_t k, int64_t w)
{
	uint64_t r[2] = {sc_enc_i64(k), sc_enc_i64(k)};
	struct sc_batch *b = NULL;

	cr_assert_eq(sc_batch_from_records(2, r, &w, 1, &b), 0);
	return b;
}

static void
graph2_fini(struct graph2 *c, struct sc_runtime *rt, struct sc_placement *p)
{
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
	sc_graph_destroy(c->g);
}

/* --- calls from inside a callback ----------------------------------------
 */

struct from_cb {
	struct sc_runtime *rt;
	atomic_int calls;
	int shutdown_rc, wait_rc, exec_wait_rc, submit_wait_rc;
	bool in_turn;
	char shutdown_msg[256];
};

static int
call_back_in(void *ctx, int node, const struct sc_batch *delta)
{
	struct from_cb *f = ctx;
	struct sc_batch *b = row_of(7, 1);

	(void)node;
	(void)delta;
	if (atomic_fetch_add(&f->calls, 1) > 0) {
		sc_batch_release(b);
		return 0;
	}
	f->in_turn = sc_exec_in_turn(sc_runtime_exec(f->rt));
	f->shutdown_rc = sc_runtime_shutdown(f->rt, NULL);
	(void)snprintf(f->shutdown_msg, sizeof(f->shutdown_msg), "%s",
		       sc_errmsg());
	f->wait_rc = sc_runtime_wait_idle(f->rt, 0, NULL);
	f->exec_wait_rc = sc_exec_wait_idle(sc_runtime_exec(f->rt), 0, NULL);
	f->submit_wait_rc = sc_runtime_submit_wait(f->rt, 0, b, 0);
	sc_batch_release(b);
	return 0;
}

static void
shutdown_from_a_callback(uint32_t workers)
{
	struct graph2 c;
	struct sc_placement *p;
	struct sc_runtime_opts o = {.workers = workers};
	struct sc_runtime *rt;
	struct from_cb f;
	struct sc_batch *b = row_of(1, 1);

	memset(&f, 0, sizeof(f));
	graph2_init(&c);
	rt = graph2_runtime(&c, &o, &p);
	f.rt = rt;
	cr_assert_eq(sc_runtime_on_delta(rt, c.m, call_back_in, &f), 0);
	cr_assert_eq(sc_runtime_submit(rt, c.in, b), 0);
	cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), 0, "%s", sc_errmsg());
	cr_assert_eq(atomic_load(&f.calls), 1);
	cr_assert(f.in_turn, "the callback is not marked as inside a turn");
	cr_assert_eq(f.shutdown_rc, SC_ESTATE);
	cr_assert(strstr(f.shutdown_msg, "inside a unit's turn"), "%s",
		  f.shutdown_msg);
	cr_assert_eq(f.wait_rc, SC_ESTATE);
	cr_assert_eq(f.exec_wait_rc, SC_ESTATE);
	cr_assert_eq(f.submit_wait_rc, SC_ESTATE);
	cr_assert(!sc_exec_in_turn(NULL), "the marker outlived the turn");
	/* Nothing was shut down by the refused call. */
	cr_assert_eq(sc_runtime_submit(rt, c.in, b), 0);
	cr_assert_eq(sc_runtime_shutdown(rt, NULL), 0, "%s", sc_errmsg());
	sc_batch_release(b);
	graph2_fini(&c, rt, p);
}

Test(runtime, shutdown_from_a_worker_callback_is_estate_not_a_hang,
     .timeout = 20)
{
	shutdown_from_a_callback(1);
}

Test(runtime, shutdown_from_a_host_driven_callback_is_estate_not_a_hang,
     .timeout = 20)
{
	shutdown_from_a_callback(0);
}

/* --- a turn that never returns ------------------------------------------- */

static atomic_bool stuck_inside, stuck_release;

static int
stick(void *ctx, int node, const struct sc_batch *delta)
{
	struct timespec ts = {0, 1000000};

	(void)ctx;
	(void)node;
	(void)delta;
	atomic_store(&stuck_inside, true);
	/* Until released, or 20 s: past the test's timeout, so a shutdown
	 * that waits for ever fails the test rather than hanging CI. */
	for (int i = 0; i < 20000 && !atomic_load(&stuck_release); i++)
		nanosleep(&ts, NULL);
	return 0;
}

Test(runtime, shutdown_gives_up_at_its_deadline_naming_the_running_unit,
     .timeout = 15)
{
	struct graph2 c;
	struct sc_placement *p;
	struct sc_runtime_opts o = {.workers = 1,
				    .shutdown_timeout_ns = 200000000ull};
	struct sc_runtime *rt;
	struct sc_batch *b = row_of(1, 1);
	struct timespec ts = {0, 1000000};
	uint64_t t0, took;
	int rc;

	graph2_init(&c);
	cr_assert_eq(sc_graph_set_name(c.g, c.m, "the_sticky_map"), 0);
	rt = graph2_runtime(&c, &o, &p);
	cr_assert_eq(sc_runtime_on_delta(rt, c.m, stick, NULL), 0);
	cr_assert_eq(sc_runtime_submit(rt, c.in, b), 0);
	while (!atomic_load(&stuck_inside))
		nanosleep(&ts, NULL);
	t0 = sc_clock_ns();
	rc = sc_runtime_shutdown(rt, NULL);
	took = sc_clock_ns() - t0;
	cr_assert_eq(rc, SC_ETIMEDOUT, "%s", sc_errmsg());
	cr_assert(strstr(sc_errmsg(), "the_sticky_map"), "%s", sc_errmsg());
	cr_assert(strstr(sc_errmsg(), "1 units still running"), "%s",
		  sc_errmsg());
	cr_assert_lt(took, 5000000000ull, "gave up after %llu ns",
		     (unsigned long long)took);
	cr_assert_eq(sc_runtime_submit(rt, c.in, b), SC_ESHUTDOWN);
	/* Once the turn returns, a second call completes. */
	atomic_store(&stuck_release, true);
	cr_assert_eq(sc_runtime_shutdown(rt, NULL), 0, "%s", sc_errmsg());
	sc_batch_release(b);
	graph2_fini(&c, rt, p);
}

static void *
drive_turns(void *arg)
{
	(void)sc_runtime_wait_idle(arg, 0, NULL); /* runs the stuck turn */
	return NULL;
}

/* With workers = 0 another host thread runs the turn that does not
 * return: shutdown's own wait gives up at the deadline all the same. */
Test(runtime, shutdown_with_no_workers_gives_up_at_its_deadline, .timeout = 15)
{
	struct graph2 c;
	struct sc_placement *p;
	struct sc_runtime_opts o = {.workers = 0,
				    .shutdown_timeout_ns = 200000000ull};
	struct sc_runtime *rt;
	struct sc_batch *b = row_of(1, 1);
	struct timespec ts = {0, 1000000};
	pthread_t t;

	graph2_init(&c);
	cr_assert_eq(sc_graph_set_name(c.g, c.m, "the_sticky_map"), 0);
	rt = graph2_runtime(&c, &o, &p);
	cr_assert_eq(sc_runtime_on_delta(rt, c.m, stick, NULL), 0);
	cr_assert_eq(sc_runtime_submit(rt, c.in, b), 0);
	cr_assert_eq(pthread_create(&t, NULL, drive_turns, rt), 0);
	while (!atomic_load(&stuck_inside))
		nanosleep(&ts, NULL);
	cr_assert_eq(sc_runtime_shutdown(rt, NULL), SC_ETIMEDOUT, "%s",
		     sc_errmsg());
	cr_assert(strstr(sc_errmsg(), "the_sticky_map"), "%s", sc_errmsg());
	atomic_store(&stuck_release, true);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(sc_runtime_shutdown(rt, NULL), 0, "%s", sc_errmsg());
	sc_batch_release(b);
	graph2_fini(&c, rt, p);
}

static void *
release_later(void *arg)
{
	struct timespec ts = {0, 100000000};

	(void)arg;
	nanosleep(&ts, NULL);
	atomic_store(&stuck_release, true);
	return NULL;
}

/* UINT64_MAX ns from now is past 2^64: the deadline saturates, so a
 * submit_wait for a full input waits for room instead of timing out at
 * once. */
Test(runtime, submit_wait_with_a_huge_timeout_waits_for_room, .timeout = 15)
{
	struct graph2 c;
	struct sc_placement *p;
	struct sc_runtime_opts o = {.workers = 1, .edge_capacity = 1};
	struct sc_runtime *rt;
	struct sc_batch *b = row_of(1, 1);
	struct timespec ts = {0, 1000000};
	pthread_t t;
	int rc;

	graph2_init(&c);
	rt = graph2_runtime(&c, &o, &p);
	cr_assert_eq(sc_runtime_on_delta(rt, c.in, stick, NULL), 0);
	cr_assert_eq(sc_runtime_submit(rt, c.in, b), 0);
	while (!atomic_load(&stuck_inside))
		nanosleep(&ts, NULL);
	/* The input's unit is stuck in its turn: one more frame fills its
	 * edge (capacity 1), and the next one is refused. */
	cr_assert_eq(sc_runtime_submit(rt, c.in, b), 0);
	cr_assert_eq(sc_runtime_submit(rt, c.in, b), SC_EFULL);
	cr_assert_eq(pthread_create(&t, NULL, release_later, NULL), 0);
	rc = sc_runtime_submit_wait(rt, c.in, b, UINT64_MAX);
	cr_assert_eq(rc, 0, "%s", sc_errmsg());
	cr_assert(atomic_load(&stuck_release), "room before the release");
	cr_assert_eq(sc_runtime_wait_idle(rt, UINT64_MAX, NULL), 0, "%s",
		     sc_errmsg());
	cr_assert_eq(pthread_join(t, NULL), 0);
	sc_batch_release(b);
	graph2_fini(&c, rt, p);
}

/* --- on_delta and empty deltas ------------------------------------------- */

struct deltas {
	int calls, empty;
};

static int
count_deltas(void *ctx, int node, const struct sc_batch *delta)
{
	struct deltas *d = ctx;

	(void)node;
	d->calls++;
	d->empty += sc_batch_count(delta) == 0;
	return 0;
}

Test(runtime, on_delta_of_an_input_never_sees_an_empty_delta)
{
	struct graph2 c;
	struct sc_placement *p;
	struct sc_runtime *rt;
	struct sc_batch *plus = row_of(3, 1), *minus = row_of(3, -1);
	struct sc_batch *got = NULL;
	struct deltas in = {0, 0}, out = {0, 0};

	graph2_init(&c);
	rt = graph2_runtime(&c, NULL, &p);
	cr_assert_eq(sc_runtime_on_delta(rt, c.in, count_deltas, &in), 0);
	cr_assert_eq(sc_runtime_on_delta(rt, c.out, count_deltas, &out), 0);
	/* Both frames wait in the input's edge (no worker): one turn feeds
	 * them together, and they cancel. */
	cr_assert_eq(sc_runtime_submit(rt, c.in, plus), 0);
	cr_assert_eq(sc_runtime_submit(rt, c.in, minus), 0);
	cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), 0, "%s", sc_errmsg());
	cr_assert_eq(in.empty, 0, "%d of %d input deltas were empty", in.empty,
		     in.calls);
	cr_assert_eq(out.empty, 0, "%d of %d output deltas were empty",
		     out.empty, out.calls);
	cr_assert_eq(sc_runtime_integral(rt, c.out, &got), 0);
	cr_assert_eq(sc_batch_count(got), 0);
	/* A delta that does not cancel is reported, once. */
	cr_assert_eq(sc_runtime_submit(rt, c.in, plus), 0);
	cr_assert_eq(sc_runtime_wait_idle(rt, 0, NULL), 0, "%s", sc_errmsg());
	cr_assert_eq(in.calls, 1);
	cr_assert_eq(in.empty, 0);
	sc_batch_release(got);
	sc_batch_release(plus);
	sc_batch_release(minus);
	graph2_fini(&c, rt, p);
}

/* --- hard faults in host-driven turns ------------------------------------ */

Test(runtime, catch_faults_with_no_workers_kills_only_the_faulting_unit,
     .timeout = 20)
{
	struct graph2 c;
	struct sc_placement *p;
	struct sc_runtime_opts o = {.workers = 0, .catch_faults = true};
	struct sc_runtime *rt;
	struct sc_runtime_stats st;
	struct sc_panic_record rec;
	struct sc_batch *b = row_of(13, 1), *got = NULL;
	uint32_t dead = 0;

	atomic_store(&fault_key, 13);
	graph2_init(&c);
	rt = graph2_runtime(&c, &o, &p);
	cr_assert_eq(sc_runtime_submit(rt, c.in, b), 0);
	memset(&rec, 0, sizeof(rec));
	cr_assert_eq(sc_runtime_wait_idle(rt, 0, &rec), SC_EPANIC, "%s",
		     sc_errmsg());
	cr_assert_eq(rec.signo, SIGSEGV, "signal %d: %s", rec.signo,
		     rec.message);
	sc_runtime_stats(rt, &st);
	cr_assert_eq(st.dead, 1, "%u units dead", st.dead);
	cr_assert_eq(sc_exec_unit_state(sc_runtime_exec(rt), rec.unit),
		     SC_UNIT_DEAD);
	/* The output's own unit lives; its integral is partial, and says
	 * where to look. */
	cr_assert_eq(sc_runtime_integral(rt, c.out, &got), 0);
	cr_assert_eq(sc_runtime_upstream_dead(rt, c.out, &dead), SC_EDEAD);
	cr_assert_eq(dead, rec.unit);
	cr_assert_eq(sc_runtime_shutdown(rt, NULL), SC_EPANIC);
	atomic_store(&fault_key, -1);
	sc_batch_release(got);
	sc_batch_release(b);
	graph2_fini(&c, rt, p);
}

Test(runtime, submit_wait_with_null_arguments_is_einval_naming_itself)
{
	struct graph2 c;
	struct sc_placement *p = NULL;
	struct sc_runtime *rt;
	struct sc_batch *b = row_of(1, 1);

	graph2_init(&c);
	rt = graph2_runtime(&c, NULL, &p);
	cr_assert_eq(sc_runtime_submit_wait(NULL, c.in, b, 0), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "sc_runtime_submit_wait"), "%s",
		  sc_errmsg());
	sc_error_clear();
	cr_assert_eq(sc_runtime_submit_wait(rt, c.in, NULL, 0), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "sc_runtime_submit_wait"), "%s",
		  sc_errmsg());
	sc_batch_release(b);
	graph2_fini(&c, rt, p);
}
