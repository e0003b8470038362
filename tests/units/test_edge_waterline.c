/*
 * test_edge_waterline.c - waterlines on an edge (units/edge.h,
 * "Waterlines"): a publication is due only once every frame pushed before
 * it was popped, waits while the outbox holds rows, a newer one replaces
 * a pending one, and a reopen makes the newest one due at once.
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "operators/batch.h"
#include "units/edge.h"

static struct sc_edge *
edge_of(uint32_t capacity)
{
	struct sc_edge_opts o = {.ncols = 1, .capacity = capacity};
	struct sc_edge *e = NULL;

	cr_assert_eq(sc_edge_create(&o, &e), 0, "%s", sc_errmsg());
	return e;
}

static struct sc_batch *
row(int64_t v)
{
	uint64_t r = sc_enc_i64(v);
	struct sc_batch *b = NULL;

	cr_assert_eq(sc_batch_from_records(1, &r, NULL, 1, &b), 0);
	return b;
}

static void
publish(struct sc_edge *e, int64_t v, int want)
{
	int64_t vals[SC_EDGE_WL_COLS] = {0};

	vals[0] = v;
	cr_assert_eq(sc_edge_set_waterline(e, 1u, vals), want);
}

static void
pop_one(struct sc_edge *e)
{
	struct sc_batch *b = NULL;
	size_t n = 0;

	cr_assert_eq(sc_edge_poll(e, 1, &b, &n), 0);
	cr_assert_eq(n, 1);
	sc_batch_release(b);
}

Test(edge_waterline, a_publication_is_due_only_after_the_frames_before_it)
{
	struct sc_edge *e = edge_of(8);
	struct sc_edge_waterline w;

	cr_assert_not(sc_edge_waterline_due(e, &w), "none was published");
	cr_assert_eq(sc_edge_send(e, row(1)), 0);
	cr_assert_eq(sc_edge_send(e, row(2)), 0);
	publish(e, 50, 0);
	cr_assert_not(sc_edge_waterline_due(e, &w), "2 frames before it");
	pop_one(e);
	cr_assert_not(sc_edge_waterline_due(e, &w), "1 frame before it");
	pop_one(e);
	cr_assert(sc_edge_waterline_due(e, &w));
	cr_assert_eq(w.mask, 1u);
	cr_assert_eq(w.value[0], 50);
	cr_assert_eq(w.after, 2);
	cr_assert_not(sc_edge_waterline_due(e, &w), "due once, not twice");
	sc_edge_destroy(e);
}

Test(edge_waterline, a_publication_waits_while_the_outbox_holds_rows)
{
	struct sc_edge *e = edge_of(1);
	struct sc_edge_waterline w;

	cr_assert_eq(sc_edge_send(e, row(1)), 0);
	cr_assert_eq(sc_edge_send(e, row(2)), SC_EFULL); /* into the outbox */
	cr_assert(sc_edge_has_outbox(e));
	publish(e, 9, SC_EFULL);
	pop_one(e);
	cr_assert_not(sc_edge_waterline_due(e, &w));
	cr_assert_eq(sc_edge_flush(e), 0);
	publish(e, 9, 0);
	cr_assert_not(sc_edge_waterline_due(e, &w), "the flushed frame");
	pop_one(e);
	cr_assert(sc_edge_waterline_due(e, &w));
	cr_assert_eq(w.value[0], 9);
	sc_edge_destroy(e);
}

Test(edge_waterline, a_newer_publication_replaces_the_pending_one)
{
	struct sc_edge *e = edge_of(8);
	struct sc_edge_waterline w;

	cr_assert_eq(sc_edge_send(e, row(1)), 0);
	publish(e, 10, 0);
	cr_assert_not(sc_edge_waterline_due(e, &w)); /* 10 pending */
	cr_assert_eq(sc_edge_send(e, row(2)), 0);
	publish(e, 20, 0);
	pop_one(e);
	/* 10 is due now, 20 read and pending (a frame before it) */
	cr_assert(sc_edge_waterline_due(e, &w));
	cr_assert_eq(w.value[0], 10);
	pop_one(e);
	cr_assert(sc_edge_waterline_due(e, &w));
	cr_assert_eq(w.value[0], 20);
	sc_edge_destroy(e);
}

/* A reopen is for a rebuilt consumer, fed the integral of every frame
 * sent: the newest publication is due to it at once, not forgotten. */
Test(edge_waterline, a_reopen_makes_the_newest_publication_due)
{
	struct sc_edge *e = edge_of(8);
	struct sc_edge_waterline w;

	cr_assert_eq(sc_edge_send(e, row(1)), 0);
	publish(e, 10, 0);
	cr_assert_not(sc_edge_waterline_due(e, &w)); /* pending */
	sc_edge_close(e);
	cr_assert_eq(sc_edge_reopen(e), 0);
	cr_assert(sc_edge_waterline_due(e, &w), "due after the reopen");
	cr_assert_eq(w.value[0], 10);
	cr_assert_not(sc_edge_waterline_due(e, &w), "due once");
	publish(e, 30, 0);
	cr_assert(sc_edge_waterline_due(e, &w), "nothing before it");
	cr_assert_eq(w.value[0], 30);
	sc_edge_destroy(e);
}
