/*
 * test_exchange.c - the producer side of an edge (units/exchange.h): the
 * all-or-nothing room check, partition by key, outboxes and closed edges.
 */
#include <criterion/criterion.h>

#include "tests/support/prop.h"
#include "units/exchange.h"

#define NE 3

struct rig {
	struct sc_edge *e[NE];
	struct sc_exchange x;
};

static void
rig_init(struct rig *r, uint32_t nedges, uint32_t cap)
{
	struct sc_edge_opts o = {.ncols = 2, .capacity = cap};

	for (uint32_t j = 0; j < nedges; j++)
		cr_assert_eq(sc_edge_create(&o, &r->e[j]), 0);
	cr_assert_eq(sc_exchange_init(&r->x, 1, nedges, r->e), 0, "%s",
		     sc_errmsg());
}

static void
rig_fini(struct rig *r, uint32_t nedges)
{
	sc_exchange_fini(&r->x);
	for (uint32_t j = 0; j < nedges; j++)
		sc_edge_destroy(r->e[j]);
}

/* Rows (k, 0) for k in [0, n), weight 1. */
static struct sc_batch *
rows(int n)
{
	uint64_t v[2 * 64];
	struct sc_batch *b = NULL;

	for (int i = 0; i < n; i++) {
		v[2 * (size_t)i] = (uint64_t)i;
		v[2 * (size_t)i + 1] = 0;
	}
	cr_assert_eq(sc_batch_from_records(2, v, NULL, (size_t)n, &b), 0);
	return b;
}

/* Poll every frame of e; the rows they held. */
static size_t
drain_rows(struct sc_edge *e, uint32_t key_shard, uint32_t n)
{
	struct sc_batch *f[8];
	size_t got = 0, k = 0;

	while (sc_edge_poll(e, 8, f, &k) == 0 && k > 0)
		for (size_t i = 0; i < k; i++) {
			for (size_t r = 0; r < sc_batch_count(f[i]); r++)
				cr_assert_eq(
				    sc_row_hash(sc_batch_row(f[i], r), 1) % n,
				    key_shard, "a row in the wrong shard");
			got += sc_batch_count(f[i]);
			sc_batch_release(f[i]);
		}
	return got;
}

Test(exchange, a_sharded_send_puts_every_key_in_one_share_and_loses_nothing)
{
	struct rig r;
	uint64_t pushed = 0;
	size_t total = 0;

	rig_init(&r, NE, 4);
	cr_assert_eq(sc_exchange_send(&r.x, rows(40), &pushed), 0);
	for (uint32_t j = 0; j < NE; j++) {
		size_t got = drain_rows(r.e[j], j, NE);

		cr_assert_eq(got > 0, (pushed >> j & 1) == 1,
			     "pushed bit %u does not say whether a frame "
			     "went in",
			     j);
		total += got;
	}
	cr_assert_eq(total, 40);
	rig_fini(&r, NE);
}

Test(exchange, room_is_all_or_nothing_and_ignores_closed_edges)
{
	struct rig r;
	struct sc_batch *f[1];
	size_t k = 0;

	rig_init(&r, 2, 1);
	cr_assert(sc_exchange_room(&r.x));
	cr_assert_eq(sc_edge_send(r.e[0], rows(1)), 0); /* e0 is full */
	cr_assert(!sc_exchange_room(&r.x), "one full edge: no room");
	cr_assert_eq(sc_edge_poll(r.e[0], 1, f, &k), 0);
	sc_batch_release(f[0]);
	cr_assert(sc_exchange_room(&r.x));
	cr_assert_eq(sc_edge_send(r.e[1], rows(1)), 0); /* e1 is full */
	sc_edge_close(r.e[1]);
	cr_assert(sc_exchange_room(&r.x),
		  "a closed edge takes anything: it must not block");
	rig_fini(&r, 2);
}

Test(exchange, a_full_edge_keeps_its_share_in_the_outbox)
{
	struct rig r;
	uint64_t pushed = 7;

	rig_init(&r, 1, 1);
	cr_assert_eq(sc_exchange_send(&r.x, rows(1), &pushed), 0);
	cr_assert_eq(pushed, 1);
	cr_assert_eq(sc_exchange_send(&r.x, rows(3), &pushed), 0,
		     "a full edge is not a failure");
	cr_assert_eq(pushed, 0, "nothing entered the ring");
	cr_assert(sc_edge_has_outbox(r.e[0]));
	cr_assert_eq(sc_edge_outbox_rows(r.e[0]), 3);
	cr_assert(sc_exchange_backpressured(&r.x), "bound 0: any outbox");
	sc_exchange_flush(&r.x); /* still full: the outbox stays */
	cr_assert(sc_edge_has_outbox(r.e[0]));
	cr_assert_eq(drain_rows(r.e[0], 0, 1), 1);
	sc_exchange_flush(&r.x);
	cr_assert(!sc_edge_has_outbox(r.e[0]));
	cr_assert(!sc_exchange_backpressured(&r.x));
	cr_assert_eq(drain_rows(r.e[0], 0, 1), 3);
	rig_fini(&r, 1);
}

Test(exchange, a_share_for_a_closed_edge_is_edead_and_the_rest_arrive)
{
	struct rig r;
	uint64_t frames = 0, rows_lost = 0, pushed = 0;
	size_t alive = 0;

	rig_init(&r, 2, 4);
	sc_edge_close(r.e[1]);
	cr_assert_eq(sc_exchange_send(&r.x, rows(30), &pushed), SC_EDEAD);
	cr_assert_eq(pushed, 1, "only the open edge got its frame");
	alive = drain_rows(r.e[0], 0, 2);
	sc_edge_undeliverable(r.e[1], &frames, &rows_lost);
	cr_assert_eq(frames, 1);
	cr_assert_eq(alive + rows_lost, 30, "%zu + %llu rows", alive,
		     (unsigned long long)rows_lost);
	rig_fini(&r, 2);
}

Test(exchange, init_refuses_bad_arguments)
{
	struct sc_edge_opts o = {.ncols = 2, .capacity = 1};
	struct sc_edge *e[2] = {NULL, NULL};
	struct sc_exchange x;

	cr_assert_eq(sc_exchange_init(&x, 1, 0, e), SC_EINVAL);
	cr_assert_eq(sc_exchange_init(&x, 1, 1, e), SC_EINVAL, "NULL edge");
	cr_assert_eq(sc_edge_create(&o, &e[0]), 0);
	cr_assert_eq(sc_edge_create(&o, &e[1]), 0);
	cr_assert_eq(sc_exchange_init(&x, 0, 2, e), SC_EINVAL, "no key");
	cr_assert_eq(sc_exchange_init(&x, 1, SC_EXCHANGE_MAX + 1, e),
		     SC_EINVAL);
	cr_assert_eq(sc_exchange_init(&x, 0, 1, e), 0, "one edge: no key");
	sc_exchange_fini(&x);
	sc_exchange_fini(&x); /* twice is harmless */
	sc_edge_destroy(e[0]);
	sc_edge_destroy(e[1]);
}

/* --- traces (exchange.h, Traces) ---------------------------------------- */

struct traced {
	struct rig r;
	struct sc_exchange_trace t[NE];
	struct sc_exchange_trace *tp[NE];
};

static void
traced_init(struct traced *tr, uint32_t cap)
{
	rig_init(&tr->r, NE, cap);
	for (uint32_t j = 0; j < NE; j++) {
		sc_exchange_trace_init(&tr->t[j], 2);
		tr->tp[j] = &tr->t[j];
	}
	cr_assert_eq(sc_exchange_set_traces(&tr->r.x, tr->tp), 0);
}

static void
traced_fini(struct traced *tr)
{
	rig_fini(&tr->r, NE);
	for (uint32_t j = 0; j < NE; j++)
		sc_exchange_trace_fini(&tr->t[j]);
}

/* The sum of the traces' integrals. */
static struct sc_batch *
traces_sum(struct traced *tr)
{
	struct sc_batch *i[NE], *sum = NULL;

	for (uint32_t j = 0; j < NE; j++)
		cr_assert_eq(sc_exchange_trace_integral(&tr->t[j], &i[j]), 0);
	cr_assert_eq(sc_batch_sum(i, NE, &sum), 0);
	for (uint32_t j = 0; j < NE; j++)
		sc_batch_release(i[j]);
	return sum;
}

Test(exchange, a_trace_holds_every_share_accepted_ring_outbox_or_closed)
{
	struct traced tr;
	struct sc_batch *want = NULL, *got, *b;

	/* Capacity 1: later sends go to outboxes; edge 2 is closed. */
	traced_init(&tr, 1);
	sc_edge_close(tr.r.e[2]);
	cr_assert_eq(sc_batch_empty(2, &want), 0);
	for (int n = 1; n <= 20; n++) {
		struct sc_batch *sum = NULL;

		b = rows(n);
		cr_assert_eq(sc_batch_add(want, b, &sum), 0);
		sc_batch_release(want);
		want = sum;
		(void)sc_exchange_send(&tr.r.x, b, NULL);
	}
	got = traces_sum(&tr);
	cr_assert(sc_batch_equal(got, want), "%zu rows traced, %zu sent",
		  sc_batch_count(got), sc_batch_count(want));
	/* Merged as it went: a few runs, not one per send. */
	for (uint32_t j = 0; j < NE; j++)
		cr_assert_leq(tr.t[j].nruns, 6, "edge %u: %zu runs", j,
			      tr.t[j].nruns);
	sc_batch_release(got);
	sc_batch_release(want);
	traced_fini(&tr);
}

Test(exchange, a_refused_send_leaves_the_trace_as_it_was)
{
	struct traced tr;
	struct sc_batch *wide = NULL, *got;
	uint64_t v[3] = {1, 2, 3};

	traced_init(&tr, 4);
	cr_assert_eq(sc_exchange_send(&tr.r.x, rows(5), NULL), 0);
	/* A batch of the wrong width: refused by every edge. */
	cr_assert_eq(sc_batch_from_records(3, v, NULL, 1, &wide), 0);
	cr_assert_neq(sc_exchange_send(&tr.r.x, wide, NULL), 0);
	got = traces_sum(&tr);
	cr_assert_eq(sc_batch_count(got), 5);
	sc_batch_release(got);
	traced_fini(&tr);
}

Test(exchange, a_correction_makes_each_edge_hold_its_share_of_the_target)
{
	struct traced tr;
	struct sc_batch *target = rows(30), *got;

	traced_init(&tr, 64);
	cr_assert_eq(sc_exchange_send(&tr.r.x, rows(12), NULL), 0);
	cr_assert_eq(sc_exchange_send(&tr.r.x, rows(40), NULL), 0);
	cr_assert_eq(sc_exchange_correct(&tr.r.x, target), 0, "%s",
		     sc_errmsg());
	/* What the edges carried, all told, is the target now. */
	got = traces_sum(&tr);
	cr_assert(sc_batch_equal(got, target));
	sc_batch_release(got);
	{
		size_t total = 0;

		for (uint32_t j = 0; j < NE; j++) {
			struct sc_batch *f[8];
			size_t k = 0;
			struct sc_batch *acc = NULL;

			cr_assert_eq(sc_batch_empty(2, &acc), 0);
			while (sc_edge_poll(tr.r.e[j], 8, f, &k) == 0 && k)
				for (size_t i = 0; i < k; i++) {
					struct sc_batch *s = NULL;

					cr_assert_eq(
					    sc_batch_add(acc, f[i], &s), 0);
					sc_batch_release(acc);
					sc_batch_release(f[i]);
					acc = s;
				}
			/* Every row of edge j's integral is in its shard. */
			for (size_t r = 0; r < sc_batch_count(acc); r++)
				cr_assert_eq(
				    sc_row_hash(sc_batch_row(acc, r), 1) % NE,
				    j);
			total += sc_batch_count(acc);
			sc_batch_release(acc);
		}
		cr_assert_eq(total, 30);
	}
	/* Correcting to what is held sends nothing more. */
	cr_assert_eq(sc_exchange_correct(&tr.r.x, target), 0);
	for (uint32_t j = 0; j < NE; j++)
		cr_assert_eq(sc_edge_pending(tr.r.e[j]), 0);
	sc_batch_release(target);
	traced_fini(&tr);
}
