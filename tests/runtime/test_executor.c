/*
 * test_executor.c - the executor's rules (runtime/executor.h), one test
 * each, driven by hand on one thread with toy units.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <stdint.h>
#include <string.h>
#include <stdio.h>

#include "operators/error.h"
#include "runtime/executor.h"
#include "runtime/panic.h"
#include "tests/support/rt_toys.h"

static struct sc_exec *
new_exec(void)
{
	struct sc_exec *ex = NULL;

	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	return ex;
}

/* Claim, run and finish the front unit; returns its id, or -1 if none. */
static int64_t
step(struct sc_exec *ex, uint32_t budget)
{
	struct sc_claim c;
	int64_t id;

	sc_claim_init(&c);
	if (sc_exec_claim(ex, 0, &c) != 0)
		return -1;
	id = c.id;
	if (sc_exec_run(ex, &c, budget) == 0)
		cr_assert_eq(sc_exec_finish(ex, &c), 0);
	sc_claim_fini(&c);
	return id;
}

/* Step until the queue is empty; returns the turns, at most `limit`. */
static uint64_t
drain(struct sc_exec *ex, uint32_t budget, uint64_t limit)
{
	uint64_t turns = 0;

	while (turns < limit && step(ex, budget) >= 0)
		turns++;
	return turns;
}

static uint32_t
queue_len(struct sc_exec *ex)
{
	struct sc_exec_info info;

	sc_exec_info(ex, &info);
	return info.queue_len;
}

/* --- a unit whose has_pending blocks while the snapshot holds the lock -- */

struct holder {
	struct sc_unit unit;
	atomic_bool inside;  /* has_pending entered (the lock is held) */
	atomic_bool release; /* let has_pending return */
};

static struct sc_turn
holder_turn(struct sc_unit *u, uint32_t b)
{
	return (struct sc_turn){0, false};
}

static size_t
holder_nbrs(struct sc_unit *u, uint32_t *o, size_t m)
{
	return 0;
}

static bool
holder_pending(const struct sc_unit *u)
{
	struct holder *h = (struct holder *)u;
	struct timespec ts = {0, 1000000};

	atomic_store(&h->inside, true);
	/* At most 2 s, so that a kick that waits for the lock returns
	 * (late) instead of hanging the test. */
	for (int i = 0; i < 2000 && !atomic_load(&h->release); i++)
		nanosleep(&ts, NULL);
	atomic_store(&h->inside, false);
	return false;
}

static const char *
holder_name(const struct sc_unit *u)
{
	return "holder";
}

static void
holder_destroy(struct sc_unit *u)
{
}

static const struct sc_unit_ops holder_ops = {
    holder_turn, holder_nbrs, holder_pending, holder_name, holder_destroy, NULL,
};

static void *
snapshot_thread(void *arg)
{
	struct sc_exec_unit_info info[4];

	sc_exec_snapshot(arg, info, 4);
	return NULL;
}

Test(executor, kick_of_unknown_unit_is_refused_before_locking, .timeout = 20)
{
	static struct holder h = {.unit = {&holder_ops}};
	struct sc_exec *ex = new_exec();
	struct timespec ts = {0, 100000};
	pthread_t t;
	uint32_t id;
	int rc;

	cr_assert_eq(sc_exec_add(ex, &h.unit, &id), 0);
	/* Another thread takes the executor's lock (snapshot) and keeps it
	 * while has_pending blocks. */
	cr_assert_eq(pthread_create(&t, NULL, snapshot_thread, ex), 0);
	while (!atomic_load(&h.inside))
		nanosleep(&ts, NULL);
	rc = sc_exec_kick(ex, 7);
	/* Still inside: the refusal did not wait for the lock. */
	cr_expect(atomic_load(&h.inside) && !atomic_load(&h.release));
	atomic_store(&h.release, true);
	pthread_join(t, NULL);
	cr_expect_eq(rc, SC_ENOENT, "kick of unit 7: %s", sc_errname(rc));
	cr_expect_eq(sc_exec_kick(ex, 7), SC_ENOENT);
	/* And the executor is unharmed. */
	cr_expect_eq(sc_exec_kick(ex, id), 0);
	cr_expect_eq(queue_len(ex), 1);
	cr_expect_eq(step(ex, 1), id);
	sc_exec_destroy(ex);
}

Test(executor, kicks_coalesce, .timeout = 20)
{
	struct sc_exec *ex = new_exec();
	struct rt_probe *p;
	uint32_t id;

	p = rt_probe_add(ex, &id);
	cr_assert(p);
	for (int i = 0; i < 5; i++)
		cr_assert_eq(sc_exec_kick(ex, id), 0);
	cr_expect_eq(sc_exec_unit_state(ex, id), SC_UNIT_QUEUED);
	cr_expect_eq(queue_len(ex), 1, "five kicks, one queue entry");
	cr_expect_eq(drain(ex, 1, 10), 1, "one turn");
	cr_expect_eq(atomic_load(&p->turns), 1);
	sc_exec_destroy(ex);
}

static void
kick_self_three_times(struct rt_probe *p, void *ctx)
{
	struct sc_exec *ex = ctx;
	uint32_t id = (uint32_t)(p->name[5] - '0');

	for (int i = 0; i < 3; i++)
		cr_assert_eq(sc_exec_kick(ex, id), 0);
	cr_assert_eq(sc_exec_unit_state(ex, id), SC_UNIT_RUNNING_KICKED);
}

Test(executor, kick_while_running_requeues_once, .timeout = 20)
{
	struct sc_exec *ex = new_exec();
	struct rt_probe *p;
	uint32_t id;

	p = rt_probe_add(ex, &id);
	p->on_turn = kick_self_three_times;
	p->ctx = ex;
	cr_assert_eq(sc_exec_kick(ex, id), 0);
	cr_assert_eq(step(ex, 1), id);
	/* Kicked three times while running, said no more: queued once. */
	cr_expect_eq(sc_exec_unit_state(ex, id), SC_UNIT_QUEUED);
	cr_expect_eq(queue_len(ex), 1);
	p->on_turn = NULL;
	cr_expect_eq(step(ex, 1), id);
	cr_expect_eq(sc_exec_unit_state(ex, id), SC_UNIT_IDLE);
	cr_expect_eq(queue_len(ex), 0);
	cr_expect_eq(atomic_load(&p->turns), 2);
	sc_exec_destroy(ex);
}

Test(executor, claimed_unit_is_out_of_its_slot, .timeout = 20)
{
	struct sc_exec *ex = new_exec();
	struct sc_claim c, d;
	uint32_t id;

	cr_assert(rt_probe_add(ex, &id));
	sc_claim_init(&c);
	sc_claim_init(&d);
	cr_assert_eq(sc_exec_kick(ex, id), 0);
	cr_assert_eq(sc_exec_claim(ex, 0, &c), 0);
	cr_assert_eq(sc_exec_kick(ex, id), 0);
	/* Kicked again while held: no second worker can reach it. */
	cr_expect_eq(sc_exec_claim(ex, 1, &d), SC_EEMPTY);
	cr_expect_null(d.unit);
	cr_assert_eq(sc_exec_run(ex, &c, 1), 0);
	cr_assert_eq(sc_exec_finish(ex, &c), 0);
	cr_expect_null(c.unit);
	cr_expect_eq(sc_exec_claim(ex, 1, &d), 0);
	cr_expect_eq(d.id, id);
	cr_assert_eq(sc_exec_run(ex, &d, 1), 0);
	cr_assert_eq(sc_exec_finish(ex, &d), 0);
	sc_claim_fini(&c);
	sc_claim_fini(&d);
	sc_exec_destroy(ex);
}

Test(executor, finish_requeues_behind_waiting_units, .timeout = 20)
{
	struct sc_exec *ex = new_exec();
	struct rt_probe *a, *b;
	uint32_t ia, ib;

	a = rt_probe_add(ex, &ia);
	b = rt_probe_add(ex, &ib);
	a->result = (struct sc_turn){1, true};
	cr_assert_eq(sc_exec_kick(ex, ia), 0);
	cr_assert_eq(sc_exec_kick(ex, ib), 0);
	cr_expect_eq(step(ex, 1), ia);
	/* a said more: behind b, not in front of it. */
	cr_expect_eq(step(ex, 1), ib);
	a->result.more = false;
	cr_expect_eq(step(ex, 1), ia);
	cr_expect_eq(step(ex, 1), -1);
	(void)b;
	sc_exec_destroy(ex);
}

Test(executor, finish_kicks_the_neighbours_a_moving_turn_names, .timeout = 20)
{
	struct sc_exec *ex = new_exec();
	struct rt_probe *a;
	uint32_t ia, ib, ic;

	a = rt_probe_add(ex, &ia);
	cr_assert(rt_probe_add(ex, &ib));
	cr_assert(rt_probe_add(ex, &ic));
	a->nbrs[0] = ib;
	a->nbrs[1] = ic;
	a->n_nbrs = 2;
	a->result = (struct sc_turn){2, false};
	cr_assert_eq(sc_exec_kick(ex, ia), 0);
	cr_expect_eq(step(ex, 1), ia);
	cr_expect_eq(sc_exec_unit_state(ex, ib), SC_UNIT_QUEUED);
	cr_expect_eq(sc_exec_unit_state(ex, ic), SC_UNIT_QUEUED);
	cr_expect_eq(sc_exec_unit_state(ex, ia), SC_UNIT_IDLE);
	sc_exec_destroy(ex);
}

Test(executor, unit_at_budget_with_input_left_says_more, .timeout = 20)
{
	struct sc_exec *ex = new_exec();
	struct rt_net *net;
	struct sc_claim c;
	uint32_t id;

	/* One toy (a sink) with 5 tokens waiting, budget 2. */
	cr_assert_eq(rt_chain_create(ex, 1, 8, 5, &net), 0);
	id = rt_net_id(net, 0);
	cr_assert_eq(rt_net_feed_all(net, ex), 0);
	sc_claim_init(&c);
	cr_assert_eq(sc_exec_claim(ex, 0, &c), 0);
	cr_assert_eq(sc_exec_run(ex, &c, 2), 0);
	cr_expect_eq(c.turn.progress, 2);
	cr_expect(c.turn.more, "stopped at its budget with 3 tokens left");
	cr_assert_eq(sc_exec_finish(ex, &c), 0);
	cr_expect_eq(sc_exec_unit_state(ex, id), SC_UNIT_QUEUED);
	sc_claim_fini(&c);
	sc_exec_destroy(ex);
	rt_net_destroy(net);
}

Test(executor, unit_whose_kicks_coalesced_still_drains_its_input, .timeout = 20)
{
	struct sc_exec *ex = new_exec();
	struct rt_net *net;
	char why[128];

	/* Ten tokens, each announced by its own kick; the kicks coalesce
	 * into one queue entry, and each turn takes at most 2. */
	cr_assert_eq(rt_chain_create(ex, 1, 16, 10, &net), 0);
	for (int i = 0; i < 10; i++)
		cr_assert(rt_net_host_step(net, ex, 0) == (i < 9));
	cr_expect_eq(queue_len(ex), 1);
	drain(ex, 2, 100);
	cr_expect_eq(rt_net_retired(net), 10, "retired %llu of 10",
		     (unsigned long long)rt_net_retired(net));
	cr_expect(rt_net_check(net, why, sizeof(why)), "%s", why);
	sc_exec_destroy(ex);
	rt_net_destroy(net);
}

Test(executor, full_edge_does_not_make_its_sender_spin, .timeout = 20)
{
	struct sc_exec *ex = new_exec();
	struct rt_net *net;
	struct sc_claim c, consumer;
	uint32_t sender, rounds = 0;

	/* host -> sender -> consumer, the middle edge holds 2 tokens. */
	cr_assert_eq(rt_chain_create(ex, 2, 16, 16, &net), 0);
	rt_net_set_cap(net, 1, 2);
	sender = rt_net_id(net, 0);
	cr_assert_eq(rt_net_feed_all(net, ex), 0);
	sc_claim_init(&c);
	sc_claim_init(&consumer);
	/* The consumer is claimed and never run: the sender must not keep
	 * coming back through the queue. */
	while (rounds++ < 100 && sc_exec_claim(ex, 0, &c) == 0) {
		if (c.id != sender) {
			cr_assert_null(consumer.unit);
			consumer = c;
			sc_claim_init(&c);
			continue;
		}
		cr_assert_eq(sc_exec_run(ex, &c, 4), 0);
		cr_assert_eq(sc_exec_finish(ex, &c), 0);
	}
	cr_expect_leq(rt_net_turns(net, 0), 2,
		      "sender ran %llu turns while its consumer did not run",
		      (unsigned long long)rt_net_turns(net, 0));
	cr_expect_eq(sc_exec_unit_state(ex, sender), SC_UNIT_IDLE);
	/* Once the consumer runs, its progress kicks the sender back and
	 * every token arrives. */
	cr_assert_eq(sc_exec_run(ex, &consumer, 4), 0);
	cr_assert_eq(sc_exec_finish(ex, &consumer), 0);
	drain(ex, 4, 1000);
	cr_expect_eq(rt_net_retired(net), 16);
	sc_claim_fini(&c);
	sc_claim_fini(&consumer);
	sc_exec_destroy(ex);
	rt_net_destroy(net);
}

Test(executor, progress_counts_frames_so_kicks_end, .timeout = 20)
{
	struct sc_exec *ex = new_exec();
	struct rt_probe *a, *b;
	struct rt_net *net;
	uint32_t ia, ib;
	char why[128];

	/* Two units that name each other but move nothing: one turn. */
	a = rt_probe_add(ex, &ia);
	b = rt_probe_add(ex, &ib);
	a->nbrs[0] = ib;
	a->n_nbrs = 1;
	b->nbrs[0] = ia;
	b->n_nbrs = 1;
	cr_assert_eq(sc_exec_kick(ex, ia), 0);
	cr_expect_eq(drain(ex, 1, 1000), 1);
	/* A ring of two passing 3 tokens up to 20 hops: the kicks end when
	 * the frames do. */
	cr_assert_eq(rt_ring_create(ex, 2, 2, 3, 20, 7, &net), 0);
	cr_assert_eq(rt_net_start(net, ex), 0);
	cr_expect_lt(drain(ex, 1, 100000), 200);
	cr_expect(rt_net_check(net, why, sizeof(why)), "%s", why);
	sc_exec_destroy(ex);
	rt_net_destroy(net);
}

Test(executor, snapshot_names_every_unit_with_state_and_counters, .timeout = 20)
{
	struct sc_exec *ex = new_exec();
	struct sc_exec_unit_info u[3];
	struct sc_exec_info info;
	struct rt_probe *a, *b;
	struct sc_claim c;
	uint32_t ia, ib;

	a = rt_probe_add(ex, &ia);
	b = rt_probe_add(ex, &ib);
	a->result = (struct sc_turn){3, false};
	atomic_store(&b->pending, true);
	cr_assert_eq(sc_exec_kick(ex, ia), 0);
	cr_assert_eq(sc_exec_kick(ex, ia), 0);
	cr_expect_eq(step(ex, 1), ia);
	cr_assert_eq(sc_exec_kick(ex, ib), 0);
	cr_assert_eq(sc_exec_kick(ex, ia), 0);
	sc_claim_init(&c);
	cr_assert_eq(sc_exec_claim(ex, 5, &c), 0); /* b */
	cr_expect_eq(sc_exec_snapshot(ex, u, 3), 2);
	cr_expect_str_eq(u[0].name, "probe0");
	cr_expect_eq(u[0].state, SC_UNIT_QUEUED);
	cr_expect_neq(u[0].queued_since_ns, 0);
	cr_expect_eq(u[0].turns, 1);
	cr_expect_eq(u[0].kicks, 3);
	cr_expect_eq(u[0].progress, 3);
	cr_expect_eq(u[0].worker, -1);
	cr_expect_eq(u[1].state, SC_UNIT_RUNNING);
	cr_expect_eq(u[1].worker, 5);
	cr_expect_neq(u[1].running_since_ns, 0);
	cr_expect(u[1].has_pending);
	cr_expect(!u[0].has_pending);
	sc_exec_info(ex, &info);
	cr_expect_eq(info.units, 2);
	cr_expect_eq(info.running, 1);
	cr_expect_eq(info.queue_len, 1);
	cr_expect_eq(info.turns_finished, 1);
	cr_expect(!info.idle);
	cr_assert_eq(sc_exec_run(ex, &c, 1), 0);
	cr_assert_eq(sc_exec_finish(ex, &c), 0);
	drain(ex, 1, 10);
	sc_exec_info(ex, &info);
	cr_expect(info.idle);
	sc_claim_fini(&c);
	sc_exec_destroy(ex);
}

Test(executor, wait_idle_times_out_while_a_unit_is_held, .timeout = 20)
{
	struct sc_exec *ex = new_exec();
	struct sc_claim c;
	uint32_t id;

	cr_assert(rt_probe_add(ex, &id));
	cr_assert_eq(sc_exec_kick(ex, id), 0);
	sc_claim_init(&c);
	cr_assert_eq(sc_exec_claim(ex, 0, &c), 0);
	cr_expect_eq(sc_exec_wait_idle(ex, 20000000, NULL), SC_ETIMEDOUT);
	cr_expect_eq(sc_exec_destroy(ex), SC_EBUSY, "a unit is still claimed");
	cr_assert_eq(sc_exec_run(ex, &c, 1), 0);
	cr_assert_eq(sc_exec_finish(ex, &c), 0);
	cr_expect_eq(sc_exec_wait_idle(ex, 20000000, NULL), 0);
	sc_claim_fini(&c);
	cr_expect_eq(sc_exec_destroy(ex), 0);
}

Test(executor, neighbour_lists_longer_than_the_buffer_are_all_kicked,
     .timeout = 20)
{
	struct sc_exec *ex = new_exec();
	struct rt_probe *a;
	uint32_t ia, ids[8];

	a = rt_probe_add(ex, &ia);
	for (int i = 0; i < 8; i++) {
		cr_assert(rt_probe_add(ex, &ids[i]));
		a->nbrs[i] = ids[i];
	}
	a->n_nbrs = 8;
	a->result = (struct sc_turn){1, false};
	cr_assert_eq(sc_exec_kick(ex, ia), 0);
	cr_expect_eq(step(ex, 1), ia);
	cr_expect_eq(queue_len(ex), 8);
	sc_exec_destroy(ex);
}

/* --- death ---------------------------------------------------------------- */

static void
panic_now(struct rt_probe *p, void *ctx)
{
	sc_panic("%s: dies in its turn", p->name);
}

Test(executor, a_dying_unit_kicks_its_peers_after_its_destroy, .timeout = 20)
{
	struct sc_exec *ex = new_exec();
	_Atomic int destroyed = 0;
	struct rt_probe *a, *b, *c;
	struct sc_claim cl;
	uint32_t ia, ib, ic;

	a = rt_probe_add(ex, &ia);
	b = rt_probe_add(ex, &ib);
	c = rt_probe_add(ex, &ic);
	cr_assert(a && b && c);
	a->on_turn = panic_now;
	a->destroyed = &destroyed;
	/* Its peers, itself and an id that does not exist (both skipped). */
	a->peers[0] = ib;
	a->peers[1] = ia;
	a->peers[2] = 77;
	a->peers[3] = ic;
	a->n_peers = 4;
	cr_assert_eq(sc_exec_kick(ex, ia), 0);
	sc_claim_init(&cl);
	cr_assert_eq(sc_exec_claim(ex, 0, &cl), 0);
	cr_expect_eq(sc_exec_run(ex, &cl, 1), SC_EPANIC);
	cr_expect_eq(atomic_load(&destroyed), 1);
	cr_expect_eq(sc_exec_unit_state(ex, ia), SC_UNIT_DEAD);
	cr_expect_eq(sc_exec_unit_state(ex, ib), SC_UNIT_QUEUED,
		     "a peer of the dead was not kicked");
	cr_expect_eq(sc_exec_unit_state(ex, ic), SC_UNIT_QUEUED);
	cr_expect_eq(queue_len(ex), 2);
	cr_expect_eq(drain(ex, 1, 10), 2);
	sc_claim_fini(&cl);
	sc_exec_destroy(ex);
}

Test(executor, a_death_after_shutdown_kicks_nobody, .timeout = 20)
{
	struct sc_exec *ex = new_exec();
	struct rt_probe *a, *b;
	struct sc_claim cl;
	uint32_t ia, ib;

	a = rt_probe_add(ex, &ia);
	b = rt_probe_add(ex, &ib);
	cr_assert(a && b);
	a->on_turn = panic_now;
	a->peers[0] = ib;
	a->n_peers = 1;
	cr_assert_eq(sc_exec_kick(ex, ia), 0);
	sc_claim_init(&cl);
	cr_assert_eq(sc_exec_claim(ex, 0, &cl), 0);
	sc_exec_shutdown(ex);
	cr_expect_eq(sc_exec_run(ex, &cl, 1), SC_EPANIC);
	cr_expect_eq(sc_exec_unit_state(ex, ib), SC_UNIT_IDLE);
	sc_claim_fini(&cl);
	sc_exec_destroy(ex);
}

Test(executor, an_absurd_neighbour_count_buries_the_unit, .timeout = 20)
{
	struct sc_exec *ex = new_exec();
	struct sc_panic_record rec;
	struct rt_probe *a, *b;
	struct sc_claim c;
	uint32_t ia, ib;
	char count[32];

	a = rt_probe_add(ex, &ia);
	b = rt_probe_add(ex, &ib);
	cr_assert(a && b);
	for (int i = 0; i < 8; i++)
		a->nbrs[i] = ib;
	a->n_nbrs = 8;
	/* Its byte size wraps to 4: a buffer of one id for eight. */
	a->claim_nbrs = SIZE_MAX / sizeof(uint32_t) + 2;
	(void)snprintf(count, sizeof(count), "%zu", a->claim_nbrs);
	a->result = (struct sc_turn){1, false};
	cr_assert_eq(sc_exec_kick(ex, ia), 0);
	sc_claim_init(&c);
	cr_assert_eq(sc_exec_claim(ex, 0, &c), 0);
	cr_expect_eq(sc_exec_run(ex, &c, 1), SC_EPANIC);
	cr_expect_eq(sc_exec_unit_state(ex, ia), SC_UNIT_DEAD);
	cr_assert_eq(sc_exec_panic(ex, 0, &rec), 0);
	cr_expect(strstr(rec.message, count), "%s", rec.message);
	cr_expect(strstr(rec.message, "neighbour"), "%s", rec.message);
	cr_expect_eq(sc_exec_unit_state(ex, ib), SC_UNIT_IDLE,
		     "nothing of an absurd list is kicked");
	sc_claim_fini(&c);
	sc_exec_destroy(ex);
}

/* --- condemn ------------------------------------------------------------- */

struct condemn_req {
	struct sc_exec *ex;
	uint32_t id;
	int rc; /* what sc_exec_condemn answered inside the turn */
};

/* The condemn arrives while the turn runs (from inside it: no lock is
 * held during a turn, so the turn's own thread may take it). */
static void
condemn_own_turn(struct rt_probe *p, void *ctx)
{
	struct condemn_req *r = ctx;

	r->rc = sc_exec_condemn(r->ex, r->id, atomic_load(&p->turns) - 1,
				"condemned: past its deadline");
}

Test(executor, condemned_turn_kills_its_unit_when_it_returns, .timeout = 20)
{
	struct sc_exec *ex = new_exec();
	struct condemn_req req = {.ex = ex, .rc = 1};
	struct sc_panic_record rec;
	struct sc_exec_info info;
	_Atomic int destroyed = 0;
	struct rt_probe *a, *b;
	struct sc_claim c;
	uint32_t ia, ib;

	a = rt_probe_add(ex, &ia);
	b = rt_probe_add(ex, &ib);
	cr_assert(a && b);
	req.id = ia;
	a->on_turn = condemn_own_turn;
	a->ctx = &req;
	a->destroyed = &destroyed;
	a->result = (struct sc_turn){1, false}; /* it moved a frame to b */
	a->nbrs[0] = ib;
	a->n_nbrs = 1;
	cr_assert_eq(sc_exec_kick(ex, ia), 0);
	sc_claim_init(&c);
	cr_assert_eq(sc_exec_claim(ex, 3, &c), 0);
	cr_expect_eq(sc_exec_run(ex, &c, 4), SC_EPANIC,
		     "the condemned turn is not handed back");
	cr_expect_eq(req.rc, 0, "condemn of the running turn: %s",
		     sc_errname(req.rc));
	cr_expect_null(c.unit, "nothing held after the abandon");
	cr_expect_eq(sc_exec_unit_state(ex, ia), SC_UNIT_DEAD);
	cr_expect_eq(atomic_load(&destroyed), 1, "its destroy ran");
	cr_assert_eq(sc_exec_panic(ex, 0, &rec), 0);
	cr_expect_eq(rec.unit, ia);
	cr_expect_str_eq(rec.name, "probe0");
	cr_expect_str_eq(rec.message, "condemned: past its deadline");
	cr_expect_eq(rec.worker, 3);
	cr_expect_eq(rec.signo, 0);
	cr_expect(!rec.in_destroy);
	/* Its neighbour was kicked for the frame it got, and goes on. */
	cr_expect_eq(sc_exec_unit_state(ex, ib), SC_UNIT_QUEUED);
	cr_expect_eq(step(ex, 1), ib);
	cr_expect_eq(sc_exec_unit_state(ex, ib), SC_UNIT_IDLE);
	cr_expect_eq(sc_exec_kick(ex, ia), 0, "a kick of the dead is ignored");
	cr_expect_eq(queue_len(ex), 0);
	sc_exec_info(ex, &info);
	cr_expect_eq(info.panics, 1);
	cr_expect(info.idle);
	sc_claim_fini(&c);
	sc_exec_destroy(ex);
}

Test(executor, condemn_of_a_finished_turn_is_refused, .timeout = 20)
{
	struct sc_exec *ex = new_exec();
	struct sc_exec_info info;
	struct sc_claim c;
	uint32_t id;

	cr_assert(rt_probe_add(ex, &id));
	cr_assert_eq(sc_exec_kick(ex, id), 0);
	sc_claim_init(&c);
	cr_assert_eq(sc_exec_claim(ex, 0, &c), 0);
	cr_assert_eq(sc_exec_run(ex, &c, 1), 0);
	/* Returned but not yet handed back (as the sim holds units): the
	 * turn is over, too late to condemn it. */
	cr_expect_eq(sc_exec_condemn(ex, id, 0, "late"), SC_ESTATE);
	cr_assert_eq(sc_exec_finish(ex, &c), 0);
	cr_expect_eq(sc_exec_condemn(ex, id, 0, "late"), SC_ESTATE,
		     "an idle unit runs no turn");
	/* The next turn is running: a late report about the first one must
	 * not kill it. */
	cr_assert_eq(sc_exec_kick(ex, id), 0);
	cr_expect_eq(sc_exec_condemn(ex, id, 0, "late"), SC_ESTATE,
		     "a queued unit runs no turn");
	cr_assert_eq(sc_exec_claim(ex, 0, &c), 0);
	cr_expect_eq(sc_exec_condemn(ex, id, 0, "late"), SC_ESTATE);
	cr_expect_eq(sc_exec_condemn(ex, id, 2, "early"), SC_ESTATE);
	cr_expect_eq(sc_exec_run(ex, &c, 1), 0, "the second turn survives");
	cr_expect_eq(sc_exec_finish(ex, &c), 0);
	cr_expect_eq(sc_exec_unit_state(ex, id), SC_UNIT_IDLE);
	sc_exec_info(ex, &info);
	cr_expect_eq(info.panics, 0);
	cr_expect_eq(info.turns_finished, 2);
	sc_claim_fini(&c);
	sc_exec_destroy(ex);
}

Test(executor, condemn_of_unknown_unit_is_refused, .timeout = 20)
{
	static struct holder h = {.unit = {&holder_ops}};
	struct sc_exec *ex = new_exec();
	struct timespec ts = {0, 100000};
	pthread_t t;
	uint32_t id;
	int rc;

	cr_assert_eq(sc_exec_add(ex, &h.unit, &id), 0);
	/* Another thread holds the executor's lock (as in the kick test). */
	cr_assert_eq(pthread_create(&t, NULL, snapshot_thread, ex), 0);
	while (!atomic_load(&h.inside))
		nanosleep(&ts, NULL);
	rc = sc_exec_condemn(ex, 7, 0, "who?");
	cr_expect(atomic_load(&h.inside) && !atomic_load(&h.release),
		  "the refusal did not wait for the lock");
	atomic_store(&h.release, true);
	pthread_join(t, NULL);
	cr_expect_eq(rc, SC_ENOENT, "condemn of unit 7: %s", sc_errname(rc));
	cr_expect_eq(sc_exec_condemn(NULL, id, 0, "x"), SC_EINVAL);
	cr_expect_eq(sc_exec_condemn(ex, id, 0, NULL), SC_EINVAL);
	cr_expect_eq(sc_exec_unit_state(ex, id), SC_UNIT_IDLE, "unharmed");
	cr_expect_eq(step(ex, 1), -1);
	sc_exec_destroy(ex);
}

/* --- waits that cannot end, refused or saturated ------------------------ */

struct idle_wait {
	struct sc_exec *ex;
	uint64_t timeout_ns;
	atomic_bool done;
	int rc;
};

static void *
idle_wait_thread(void *arg)
{
	struct idle_wait *w = arg;

	w->rc = sc_exec_wait_idle(w->ex, w->timeout_ns, NULL);
	atomic_store(&w->done, true);
	return NULL;
}

/* UINT64_MAX ns from now is past 2^64: the deadline saturates, so the
 * wait lasts until idle, never times out at once. */
Test(executor, wait_idle_with_a_huge_timeout_waits_for_idle, .timeout = 20)
{
	struct sc_exec *ex = new_exec();
	struct holder h = {.unit = {.ops = &holder_ops}};
	struct idle_wait w = {.timeout_ns = UINT64_MAX};
	struct timespec ts = {0, 100000000};
	struct sc_claim c;
	pthread_t t;
	uint32_t id;

	atomic_store(&h.release, true);
	cr_assert_eq(sc_exec_add(ex, &h.unit, &id), 0);
	cr_assert_eq(sc_exec_kick(ex, id), 0);
	sc_claim_init(&c);
	cr_assert_eq(sc_exec_claim(ex, 0, &c), 0); /* busy: one running */
	w.ex = ex;
	atomic_init(&w.done, false);
	cr_assert_eq(pthread_create(&t, NULL, idle_wait_thread, &w), 0);
	nanosleep(&ts, NULL);
	cr_assert(!atomic_load(&w.done), "wait_idle returned %d at once: %s",
		  w.rc, sc_errmsg());
	cr_assert_eq(sc_exec_run(ex, &c, 1), 0);
	cr_assert_eq(sc_exec_finish(ex, &c), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(w.rc, 0);
	sc_claim_fini(&c);
	cr_assert_eq(sc_exec_destroy(ex), 0);
}

/* A unit whose turn waits for idle: the turn it would wait for is its
 * own, so the wait must refuse, not block. */
struct self_waiter {
	struct sc_unit unit;
	struct sc_exec *ex;
	int rc;
	bool in_turn;
};

static struct sc_turn
self_wait_turn(struct sc_unit *u, uint32_t b)
{
	struct self_waiter *s = (struct self_waiter *)u;

	s->in_turn = sc_exec_in_turn(s->ex) && sc_exec_in_turn(NULL);
	s->rc = sc_exec_wait_idle(s->ex, 0, NULL);
	return (struct sc_turn){0, false};
}

static const struct sc_unit_ops self_wait_ops = {
    self_wait_turn, holder_nbrs, NULL, holder_name, holder_destroy, NULL,
};

Test(executor, wait_idle_from_inside_a_turn_is_estate, .timeout = 20)
{
	struct sc_exec *ex = new_exec();
	struct self_waiter s = {.unit = {.ops = &self_wait_ops}, .rc = 1};
	uint32_t id;

	s.ex = ex;
	cr_assert_eq(sc_exec_add(ex, &s.unit, &id), 0);
	cr_assert_eq(sc_exec_kick(ex, id), 0);
	cr_assert(!sc_exec_in_turn(NULL));
	cr_assert_eq(step(ex, 1), (int64_t)id);
	cr_assert(s.in_turn, "the turn was not marked");
	cr_assert_eq(s.rc, SC_ESTATE, "%d", s.rc);
	cr_assert(!sc_exec_in_turn(NULL), "the marker outlived the turn");
	cr_assert_eq(sc_exec_wait_idle(ex, 0, NULL), 0);
	cr_assert_eq(sc_exec_destroy(ex), 0);
}

/* --- revival (sc_exec_revive) -------------------------------------------- */

/* A unit that counts its turns, for a revived slot (static storage: the
 * executor never frees it; destroy only counts). */
struct counted {
	struct sc_unit unit;
	_Atomic int turns, destroyed;
};

static struct sc_turn
counted_turn(struct sc_unit *u, uint32_t b)
{
	atomic_fetch_add(&((struct counted *)u)->turns, 1);
	return (struct sc_turn){0, false};
}

static const char *
counted_name(const struct sc_unit *u)
{
	return "revived";
}

static void
counted_destroy(struct sc_unit *u)
{
	atomic_fetch_add(&((struct counted *)u)->destroyed, 1);
}

static const struct sc_unit_ops counted_ops = {
    counted_turn, holder_nbrs, NULL, counted_name, counted_destroy, NULL,
};

Test(executor, a_dead_unit_revived_is_idle_runs_again_and_keeps_its_panic,
     .timeout = 20)
{
	struct sc_exec *ex = new_exec();
	struct counted fresh = {.unit.ops = &counted_ops};
	struct sc_exec_unit_info ui;
	struct sc_exec_info info;
	struct sc_claim cl;
	struct rt_probe *a;
	uint32_t ia;

	a = rt_probe_add(ex, &ia);
	cr_assert(a);
	a->on_turn = panic_now;
	/* Not dead yet: refused, nothing changed. */
	cr_expect_eq(sc_exec_revive(ex, ia, &fresh.unit), SC_ESTATE);
	cr_assert_eq(sc_exec_kick(ex, ia), 0);
	sc_claim_init(&cl);
	cr_assert_eq(sc_exec_claim(ex, 0, &cl), 0);
	/* While a turn is in flight (a dying unit's abandon may not be
	 * over): refused. */
	cr_expect_eq(sc_exec_revive(ex, ia, &fresh.unit), SC_ESTATE);
	cr_expect_eq(sc_exec_run(ex, &cl, 1), SC_EPANIC);
	cr_assert_eq(sc_exec_unit_state(ex, ia), SC_UNIT_DEAD);
	cr_expect_eq(sc_exec_revive(ex, ia + 1, &fresh.unit), SC_ENOENT);
	cr_expect_eq(sc_exec_revive(ex, ia, NULL), SC_EINVAL);
	cr_assert_eq(sc_exec_revive(ex, ia, &fresh.unit), 0, "%s", sc_errmsg());
	cr_expect_eq(sc_exec_unit_state(ex, ia), SC_UNIT_IDLE);
	cr_expect_eq(queue_len(ex), 0); /* not kicked by the revival */
	cr_expect_eq(sc_exec_revive(ex, ia, &fresh.unit), SC_ESTATE);
	/* It runs again, under the new unit's name; the panic stays. */
	cr_assert_eq(sc_exec_kick(ex, ia), 0);
	cr_expect_eq(drain(ex, 1, 10), 1);
	cr_expect_eq(atomic_load(&fresh.turns), 1);
	cr_assert_eq(sc_exec_snapshot(ex, &ui, 1), 1);
	cr_expect_str_eq(ui.name, "revived");
	sc_exec_info(ex, &info);
	cr_expect_eq(info.panics, 1);
	cr_expect_eq(sc_exec_wait_idle(ex, 0, NULL), SC_EPANIC);
	/* The executor owns it now: its destroy runs at the end. */
	sc_claim_fini(&cl);
	cr_assert_eq(sc_exec_destroy(ex), 0);
	cr_expect_eq(atomic_load(&fresh.destroyed), 1);
}

Test(executor, revive_while_another_turn_runs_is_ebusy, .timeout = 20)
{
	struct sc_exec *ex = new_exec();
	struct counted fresh = {.unit.ops = &counted_ops};
	struct sc_claim ca, cb;
	struct rt_probe *a, *b;
	uint32_t ia, ib;

	a = rt_probe_add(ex, &ia);
	b = rt_probe_add(ex, &ib);
	cr_assert(a && b);
	a->on_turn = panic_now;
	cr_assert_eq(sc_exec_kick(ex, ia), 0);
	cr_assert_eq(sc_exec_kick(ex, ib), 0);
	sc_claim_init(&ca);
	sc_claim_init(&cb);
	cr_assert_eq(sc_exec_claim(ex, 0, &ca), 0);
	cr_assert_eq(sc_exec_run(ex, &ca, 1), SC_EPANIC);
	cr_assert_eq(sc_exec_claim(ex, 1, &cb), 0); /* b holds a turn */
	cr_expect_eq(sc_exec_revive(ex, ia, &fresh.unit), SC_EBUSY);
	cr_assert_eq(sc_exec_run(ex, &cb, 1), 0);
	cr_assert_eq(sc_exec_finish(ex, &cb), 0);
	cr_expect_eq(sc_exec_revive(ex, ia, &fresh.unit), 0);
	sc_exec_shutdown(ex);
	sc_claim_fini(&ca);
	sc_claim_fini(&cb);
	cr_assert_eq(sc_exec_destroy(ex), 0);
}
