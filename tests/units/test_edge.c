/*
 * test_edge.c - bounded edges between units: order, ownership, the outbox
 * and its exact coalescing, backpressure, closing, counters, and a real
 * producer/consumer pair of threads. SC_THREADED (one test runs threads).
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdlib.h>

#include "operators/batch.h"
#include "tests/support/edge_duo.h"
#include "tests/support/prop.h"
#include "units/edge.h"

#define SUITE "edge"

/* A batch of the rows (k, 0) for k in keys[0..n), weight 1 each. */
static struct sc_batch *
keys_batch(const uint64_t *keys, size_t n)
{
	uint64_t rows[2 * 64];
	struct sc_batch *b;

	cr_assert(n <= 64);
	for (size_t i = 0; i < n; i++) {
		rows[2 * i] = keys[i];
		rows[2 * i + 1] = 0;
	}
	cr_assert_eq(sc_batch_from_records(2, rows, NULL, n, &b), 0, "%s",
		     sc_errmsg());
	return b;
}

/* A batch with the single row (k, 0), weight w. */
static struct sc_batch *
one_row(uint64_t k, int64_t w)
{
	uint64_t row[2] = {k, 0};
	struct sc_batch *b;

	cr_assert_eq(sc_batch_from_records(2, row, &w, 1, &b), 0, "%s",
		     sc_errmsg());
	return b;
}

/* A batch of `rows` distinct rows starting at key `from`. */
static struct sc_batch *
run_of_rows(uint64_t from, size_t rows)
{
	uint64_t keys[64];

	for (size_t i = 0; i < rows; i++)
		keys[i] = from + i;
	return keys_batch(keys, rows);
}

static struct sc_edge *
mk_edge(uint32_t capacity, size_t bound)
{
	struct sc_edge_opts o = {
	    .ncols = 2, .capacity = capacity, .outbox_bound = bound};
	struct sc_edge *e = NULL;

	cr_assert_eq(sc_edge_create(&o, &e), 0, "%s", sc_errmsg());
	return e;
}

Test(edge, frames_arrive_in_order_and_once)
{
	struct sc_edge *e = mk_edge(4, 0);
	uint64_t next_sent = 0, next_got = 0;

	/* 100 frames through a ring of 4, polled in uneven chunks, so the
	 * indices wrap many times. */
	while (next_got < 100) {
		while (next_sent < 100 && sc_edge_pending(e) < 4) {
			cr_assert_eq(sc_edge_send(e, one_row(next_sent, 1)), 0);
			next_sent++;
		}
		struct sc_batch *out[3];
		size_t n = 99;

		cr_assert_eq(sc_edge_poll(e, 1 + next_got % 3, out, &n), 0);
		cr_assert_gt(n, 0);
		for (size_t i = 0; i < n; i++) {
			cr_assert_eq(sc_batch_count(out[i]), 1);
			cr_assert_eq(sc_batch_row(out[i], 0)[0], next_got,
				     "frame %" PRIu64 " arrived as %" PRIu64,
				     next_got, sc_batch_row(out[i], 0)[0]);
			next_got++;
			sc_batch_release(out[i]);
		}
	}
	{
		struct sc_batch *out[1];
		size_t n = 99;

		cr_assert_eq(sc_edge_poll(e, 1, out, &n), 0);
		cr_assert_eq(n, 0, "a frame arrived twice");
	}
	sc_edge_destroy(e);
}

Test(edge, consumer_owns_a_popped_batch)
{
	struct sc_edge *e = mk_edge(2, 0);
	struct sc_batch *b = one_row(7, 1), *kept = one_row(8, 1), *out[2];
	size_t n = 0;

	cr_assert_eq(sc_edge_send(e, b), 0);
	cr_assert_eq(sc_edge_poll(e, 2, out, &n), 0);
	cr_assert_eq(n, 1);
	cr_assert_eq(out[0], b, "the consumer gets the very batch sent");
	cr_assert_eq(b->refs, 1, "the edge keeps no reference to it");
	sc_batch_release(out[0]); /* the consumer's release frees it */

	/* A frame still in the ring at destroy is the edge's to release. */
	sc_batch_retain(kept);
	cr_assert_eq(sc_edge_send(e, kept), 0);
	sc_edge_destroy(e); /* ASan: a double free or a leak shows here */
	cr_assert_eq(kept->refs, 1, "destroy released the frame in the ring");
	sc_batch_release(kept);
}

Test(edge, full_edge_coalesces_into_the_outbox_exactly)
{
	uint64_t seed0 = sc_prop_seed(0xed6e), cases = sc_prop_count(50);

	for (uint64_t c = 0; c < cases; c++) {
		uint64_t seed = seed0 + c;
		struct sc_rng r;
		struct sc_edge *e = mk_edge(2, 1u << 20);
		struct sc_batch *sent = NULL, *got = NULL, *t;
		int full = 0;

		sc_rng_seed(&r, seed);
		cr_assert_eq(sc_batch_empty(2, &sent), 0);
		cr_assert_eq(sc_batch_empty(2, &got), 0);
		for (int i = 0; i < 40; i++) {
			/* Small key domain, both signs: rows cancel. */
			struct sc_batch *b =
			    one_row(sc_rng_below(&r, 6),
				    sc_rng_range(&r, 1, 3) *
					(sc_rng_below(&r, 2) ? 1 : -1));
			int rc;

			cr_assert_eq(sc_batch_add(sent, b, &t), 0);
			sc_batch_release(sent);
			sent = t;
			rc = sc_edge_send(e, b);
			SC_PROP_ASSERT(seed, SUITE,
				       "full_edge_coalesces_into_the_outbox_"
				       "exactly",
				       rc == 0 || rc == SC_EFULL, "send: %s",
				       sc_errname(rc));
			full += rc == SC_EFULL;
			/* Take a frame now and then, so the outbox both
			 * grows and gets flushed. */
			if (sc_rng_below(&r, 4) == 0) {
				struct sc_batch *out[1];
				size_t n = 0;

				cr_assert_eq(sc_edge_poll(e, 1, out, &n), 0);
				for (size_t k = 0; k < n; k++) {
					cr_assert_eq(
					    sc_batch_add(got, out[k], &t), 0);
					sc_batch_release(got);
					got = t;
					sc_batch_release(out[k]);
				}
			}
		}
		cr_assert_gt(full, 0, "the edge of 2 never filled");
		for (;;) {
			struct sc_batch *out[4];
			size_t n = 0;

			cr_assert_eq(sc_edge_poll(e, 4, out, &n), 0);
			for (size_t k = 0; k < n; k++) {
				cr_assert_eq(sc_batch_add(got, out[k], &t), 0);
				sc_batch_release(got);
				got = t;
				sc_batch_release(out[k]);
			}
			if (n == 0 && !sc_edge_has_outbox(e))
				break;
			sc_edge_flush(e);
		}
		SC_PROP_ASSERT(seed, SUITE,
			       "full_edge_coalesces_into_the_outbox_exactly",
			       sc_batch_equal(sent, got),
			       "sum received differs from sum sent");
		sc_batch_release(sent);
		sc_batch_release(got);
		sc_edge_destroy(e);
	}
}

Test(edge, outbox_past_its_bound_reports_backpressure)
{
	struct sc_edge *e = mk_edge(1, 10);
	struct sc_batch *out[1];
	size_t n = 0;

	cr_assert_eq(sc_edge_send(e, run_of_rows(0, 4)), 0);
	cr_assert_not(sc_edge_backpressured(e), "an empty outbox");
	cr_assert_eq(sc_edge_send(e, run_of_rows(100, 4)), SC_EFULL);
	cr_assert_eq(sc_edge_send(e, run_of_rows(200, 4)), SC_EFULL);
	cr_assert_eq(sc_edge_outbox_rows(e), 8);
	cr_assert_not(sc_edge_backpressured(e), "8 rows are within 10");
	cr_assert_eq(sc_edge_send(e, run_of_rows(300, 4)), SC_EFULL);
	cr_assert_eq(sc_edge_outbox_rows(e), 12);
	cr_assert(sc_edge_backpressured(e), "12 rows are past the bound 10");

	cr_assert_eq(sc_edge_poll(e, 1, out, &n), 0);
	sc_batch_release(out[0]);
	cr_assert_eq(sc_edge_flush(e), 0);
	cr_assert_not(sc_edge_backpressured(e), "flushed");
	sc_edge_destroy(e);
}

Test(edge, zero_bound_means_any_outbox_backpressures)
{
	struct sc_edge *e = mk_edge(1, 0);

	cr_assert_eq(sc_edge_send(e, one_row(1, 1)), 0);
	cr_assert_eq(sc_edge_send(e, one_row(2, 1)), SC_EFULL);
	cr_assert(sc_edge_backpressured(e));
	sc_edge_destroy(e);
}

Test(edge, flush_moves_the_outbox_when_room_appears)
{
	struct sc_edge *e = mk_edge(1, 100);
	struct sc_batch *a = one_row(1, 1), *out[2];
	size_t n = 0;

	cr_assert_eq(sc_edge_send(e, a), 0);
	cr_assert_eq(sc_edge_send(e, one_row(2, 1)), SC_EFULL);
	cr_assert_eq(sc_edge_send(e, one_row(3, 1)), SC_EFULL);
	cr_assert_eq(sc_edge_flush(e), SC_EFULL, "no room yet");
	cr_assert_eq(sc_edge_outbox_rows(e), 2);

	cr_assert_eq(sc_edge_poll(e, 2, out, &n), 0);
	cr_assert_eq(n, 1);
	cr_assert_eq(out[0], a);
	sc_batch_release(out[0]);
	cr_assert_eq(sc_edge_flush(e), 0);
	cr_assert_eq(sc_edge_outbox_rows(e), 0);
	cr_assert_not(sc_edge_has_outbox(e));
	cr_assert_eq(sc_edge_pending(e), 1);

	cr_assert_eq(sc_edge_poll(e, 2, out, &n), 0);
	cr_assert_eq(n, 1, "the outbox travels as one frame");
	cr_assert_eq(sc_batch_count(out[0]), 2);
	cr_assert_eq(sc_batch_row(out[0], 0)[0], 2);
	cr_assert_eq(sc_batch_row(out[0], 1)[0], 3);
	sc_batch_release(out[0]);
	cr_assert_eq(sc_edge_flush(e), 0, "an empty outbox flushes trivially");
	sc_edge_destroy(e);
}

Test(edge, send_flushes_the_outbox_ahead_of_a_new_frame)
{
	struct sc_edge *e = mk_edge(2, 100);
	struct sc_batch *out[4];
	size_t n = 0;

	cr_assert_eq(sc_edge_send(e, one_row(1, 1)), 0);
	cr_assert_eq(sc_edge_send(e, one_row(2, 1)), 0);
	cr_assert_eq(sc_edge_send(e, one_row(3, 1)), SC_EFULL);
	cr_assert_eq(sc_edge_poll(e, 2, out, &n), 0);
	cr_assert_eq(n, 2);
	sc_batch_release(out[0]);
	sc_batch_release(out[1]);
	cr_assert_eq(sc_edge_send(e, one_row(4, 1)), 0);
	cr_assert_eq(sc_edge_poll(e, 4, out, &n), 0);
	cr_assert_eq(n, 2);
	cr_assert_eq(sc_batch_row(out[0], 0)[0], 3, "the outbox went first");
	cr_assert_eq(sc_batch_row(out[1], 0)[0], 4);
	sc_batch_release(out[0]);
	sc_batch_release(out[1]);
	sc_edge_destroy(e);
}

Test(edge, closed_edge_counts_undeliverable_frames)
{
	struct sc_edge *e = mk_edge(4, 100);
	struct sc_batch *late = run_of_rows(50, 5), *out[1];
	uint64_t frames = 99, rows = 99;
	size_t n = 0;

	cr_assert_eq(sc_edge_send(e, run_of_rows(0, 3)), 0);
	cr_assert_eq(sc_edge_send(e, run_of_rows(10, 3)), 0);
	sc_edge_undeliverable(e, &frames, &rows);
	cr_assert_eq(frames, 0, "nothing is undeliverable while open");
	sc_edge_close(e);
	cr_assert(sc_edge_is_closed(e));
	cr_assert_eq(sc_edge_pending(e), 0, "close released the ring");
	sc_edge_undeliverable(e, &frames, &rows);
	cr_assert_eq(frames, 2);
	cr_assert_eq(rows, 6);

	sc_batch_retain(late);
	cr_assert_eq(sc_edge_send(e, late), SC_EDEAD);
	cr_assert_eq(late->refs, 1, "the edge released the late frame");
	sc_batch_release(late);
	sc_edge_undeliverable(e, &frames, &rows);
	cr_assert_eq(frames, 3);
	cr_assert_eq(rows, 11);
	cr_assert_eq(sc_edge_poll(e, 1, out, &n), SC_EDEAD);
	sc_edge_close(e); /* idempotent */
	sc_edge_undeliverable(e, &frames, &rows);
	cr_assert_eq(frames, 3);
	sc_edge_destroy(e);
}

Test(edge, closed_edge_counts_its_outbox_as_undeliverable)
{
	struct sc_edge *e = mk_edge(1, 100);
	uint64_t frames = 0, rows = 0;

	cr_assert_eq(sc_edge_send(e, run_of_rows(0, 2)), 0);
	cr_assert_eq(sc_edge_send(e, run_of_rows(10, 2)), SC_EFULL);
	cr_assert_eq(sc_edge_send(e, run_of_rows(20, 2)), SC_EFULL);
	sc_edge_close(e);
	sc_edge_undeliverable(e, &frames, &rows);
	cr_assert_eq(frames, 3, "the ring's frame and two sends in the outbox");
	cr_assert_eq(rows, 6);
	cr_assert_eq(sc_edge_flush(e), SC_EDEAD);
	cr_assert_not(sc_edge_has_outbox(e), "the outbox was released");
	sc_edge_undeliverable(e, &frames, &rows);
	cr_assert_eq(frames, 3, "counted once");
	cr_assert_eq(rows, 6);
	sc_edge_destroy(e);
}

/* Every frame sent is in exactly one place (struct sc_edge_traffic). */
static void
assert_identity(const struct sc_edge_traffic *t)
{
	cr_assert_eq(t->frames_sent, t->frames_pushed + t->frames_refused);
	cr_assert_eq(t->frames_sent,
		     t->frames_delivered + t->frames_drained +
			 t->frames_refused + t->frames_in_ring,
		     "%llu sent, %llu delivered, %llu drained, %llu refused, "
		     "%llu in the ring",
		     (unsigned long long)t->frames_sent,
		     (unsigned long long)t->frames_delivered,
		     (unsigned long long)t->frames_drained,
		     (unsigned long long)t->frames_refused,
		     (unsigned long long)t->frames_in_ring);
}

Test(edge, polls_count_delivered_and_a_close_counts_drained)
{
	struct sc_edge *e = mk_edge(4, 100);
	struct sc_edge_traffic t;
	struct sc_batch *out[4];
	size_t n = 0;

	for (uint64_t i = 0; i < 3; i++)
		cr_assert_eq(sc_edge_send(e, run_of_rows(10 * i, 2)), 0);
	cr_assert_eq(sc_edge_poll(e, 1, out, &n), 0);
	cr_assert_eq(n, 1);
	sc_batch_release(out[0]);
	sc_edge_traffic(e, &t);
	cr_assert_eq(t.frames_delivered, 1);
	cr_assert_eq(t.frames_drained, 0);
	cr_assert_eq(t.frames_in_ring, 2);
	assert_identity(&t);

	sc_edge_close(e);
	sc_edge_traffic(e, &t);
	cr_assert_eq(t.frames_delivered, 1, "a drain is no delivery");
	cr_assert_eq(t.frames_drained, 2, "the close took the ring's two");
	cr_assert_eq(t.frames_refused, 0);
	cr_assert_eq(t.frames_in_ring, 0);
	assert_identity(&t);

	cr_assert_eq(sc_edge_send(e, one_row(99, 1)), SC_EDEAD);
	sc_edge_traffic(e, &t);
	cr_assert_eq(t.frames_sent, 4);
	cr_assert_eq(t.frames_pushed, 3, "a refused frame never entered");
	cr_assert_eq(t.frames_refused, 1);
	cr_assert_eq(t.frames_drained, 2);
	assert_identity(&t);
	cr_assert_eq(t.undeliverable_frames,
		     t.frames_drained + t.frames_refused);
	sc_edge_destroy(e);
}

Test(edge, an_outbox_is_one_frame_when_flushed_and_its_sends_when_refused)
{
	struct sc_edge *e = mk_edge(1, 100), *f = mk_edge(1, 100);
	struct sc_edge_traffic t;
	struct sc_batch *out[1];
	size_t n = 0;

	/* Flushed: three sends, two coalesced into one frame. */
	cr_assert_eq(sc_edge_send(e, run_of_rows(0, 2)), 0);
	cr_assert_eq(sc_edge_send(e, run_of_rows(10, 2)), SC_EFULL);
	cr_assert_eq(sc_edge_send(e, run_of_rows(20, 2)), SC_EFULL);
	sc_edge_traffic(e, &t);
	cr_assert_eq(t.frames_sent, 1, "the outbox holds rows, not frames");
	assert_identity(&t);
	cr_assert_eq(sc_edge_poll(e, 1, out, &n), 0);
	sc_batch_release(out[0]);
	cr_assert_eq(sc_edge_flush(e), 0);
	cr_assert_eq(sc_edge_poll(e, 1, out, &n), 0);
	cr_assert_eq(sc_batch_count(out[0]), 4);
	sc_batch_release(out[0]);
	sc_edge_traffic(e, &t);
	cr_assert_eq(t.frames_sent, 2, "a flush sends one frame");
	cr_assert_eq(t.frames_delivered, 2);
	assert_identity(&t);

	/* Released by a close: each coalesced send is a frame refused. */
	cr_assert_eq(sc_edge_send(f, run_of_rows(0, 2)), 0);
	cr_assert_eq(sc_edge_send(f, run_of_rows(10, 2)), SC_EFULL);
	cr_assert_eq(sc_edge_send(f, run_of_rows(20, 2)), SC_EFULL);
	sc_edge_close(f);
	cr_assert_eq(sc_edge_flush(f), SC_EDEAD);
	sc_edge_traffic(f, &t);
	cr_assert_eq(t.frames_drained, 1);
	cr_assert_eq(t.frames_refused, 2);
	cr_assert_eq(t.frames_sent, 3);
	cr_assert_eq(t.frames_delivered, 0);
	assert_identity(&t);
	cr_assert_eq(t.undeliverable_frames, 3, "as sc_edge_undeliverable");
	sc_edge_destroy(e);
	sc_edge_destroy(f);
}

Test(edge, capacity_must_be_a_power_of_two)
{
	static const uint32_t bad[] = {0, 3, 6, 100, (1u << 30) + 1, 1u << 31};
	static const uint32_t good[] = {1, 2, 64, 1024};
	struct sc_edge *e = (struct sc_edge *)0x1;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sc_edge_opts o = {.ncols = 2, .capacity = bad[i]};

		cr_assert_eq(sc_edge_create(&o, &e), SC_EINVAL,
			     "capacity %u accepted", bad[i]);
		cr_assert_eq(e, (struct sc_edge *)0x1, "out written on error");
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct sc_edge_opts o = {.ncols = 2, .capacity = good[i]};

		cr_assert_eq(sc_edge_create(&o, &e), 0, "capacity %u: %s",
			     good[i], sc_errmsg());
		cr_assert_eq(sc_edge_capacity(e), good[i]);
		sc_edge_destroy(e);
	}
	{
		struct sc_edge_opts o = {.ncols = 0, .capacity = 4};

		cr_assert_eq(sc_edge_create(&o, &e), SC_ESCHEMA);
	}
}

Test(edge, capacity_is_exactly_the_frames_in_flight)
{
	struct sc_edge *e = mk_edge(8, 100);

	for (uint64_t i = 0; i < 8; i++)
		cr_assert_eq(sc_edge_send(e, one_row(i, 1)), 0, "frame %d",
			     (int)i);
	cr_assert_eq(sc_edge_send(e, one_row(8, 1)), SC_EFULL);
	cr_assert_eq(sc_edge_pending(e), 8);
	sc_edge_destroy(e);
}

Test(edge, bad_input_changes_nothing)
{
	struct sc_edge *e = mk_edge(2, 0);
	uint64_t row[3] = {1, 2, 3};
	struct sc_batch *wide, *out[1];
	size_t n = 42;

	cr_assert_eq(sc_batch_from_records(3, row, NULL, 1, &wide), 0);
	cr_assert_eq(sc_edge_send(e, wide), SC_ESCHEMA);
	cr_assert_eq(wide->refs, 1, "the caller keeps a refused batch");
	sc_batch_release(wide);
	cr_assert_eq(sc_edge_send(e, NULL), SC_EINVAL);
	cr_assert_eq(sc_edge_send(NULL, NULL), SC_EINVAL);
	cr_assert_eq(sc_edge_poll(e, 0, out, &n), SC_EINVAL);
	cr_assert_eq(n, 42, "n written on error");
	cr_assert_eq(sc_edge_pending(e), 0);
	cr_assert_eq(sc_edge_flush(NULL), SC_EINVAL);
	sc_edge_destroy(e);
	sc_edge_destroy(NULL);
	sc_edge_close(NULL);
}

Test(edge, traffic_counters_give_progress)
{
	struct sc_edge *e = mk_edge(4, 100);
	struct sc_edge_traffic t;
	struct sc_batch *out[4];
	uint64_t pmark = 0, cmark = 0;
	size_t n = 0;

	for (uint64_t i = 0; i < 3; i++)
		cr_assert_eq(sc_edge_send(e, run_of_rows(10 * i, 2)), 0);
	cr_assert_eq(sc_edge_moved(e, SC_EDGE_PRODUCER, &pmark), 3);
	cr_assert_eq(sc_edge_moved(e, SC_EDGE_PRODUCER, &pmark), 0,
		     "a second look sees nothing new");
	cr_assert_eq(sc_edge_moved(e, SC_EDGE_CONSUMER, &cmark), 0);

	cr_assert_eq(sc_edge_poll(e, 2, out, &n), 0);
	sc_batch_release(out[0]);
	sc_batch_release(out[1]);
	cr_assert_eq(sc_edge_moved(e, SC_EDGE_CONSUMER, &cmark), 2);
	cr_assert_eq(sc_edge_pending(e), 1);

	/* Fill the ring; a send into the outbox moves no frame. */
	for (uint64_t i = 0; i < 3; i++)
		cr_assert_eq(sc_edge_send(e, one_row(100 + i, 1)), 0);
	cr_assert_eq(sc_edge_send(e, one_row(200, 1)), SC_EFULL);
	cr_assert_eq(sc_edge_moved(e, SC_EDGE_PRODUCER, &pmark), 3);

	sc_edge_traffic(e, &t);
	cr_assert_eq(t.frames_pushed, 6);
	cr_assert_eq(t.frames_delivered, 2);
	cr_assert_eq(t.rows_pushed, 9);
	cr_assert_eq(t.rows_popped, 4);
	cr_assert_eq(t.outbox_rows, 1);
	cr_assert_not(t.closed);
	sc_edge_destroy(e);
}

Test(edge, two_threads_deliver_the_zset_sum_sent, .timeout = 30)
{
	/* SC_THREADED: a real producer and consumer; 1M frames, or as many
	 * as 3 s allow (sanitizer builds are slower). */
	static struct edge_duo d[3] = {
	    {.capacity = 64, .outbox_bound = 256, .rows_per_frame = 1},
	    {.capacity = 2, .outbox_bound = 64, .rows_per_frame = 8},
	    {.capacity = 1, .outbox_bound = 0, .rows_per_frame = 3},
	};
	uint64_t seed = sc_prop_seed(0xd00);

	for (int i = 0; i < 3; i++) {
		d[i].seed = seed + (uint64_t)i;
		d[i].frames = i == 0 ? 1000000 : 200000;
		d[i].max_ns = i == 0 ? 3000000000ull : 1000000000ull;
		SC_PROP_ASSERT(d[i].seed, SUITE,
			       "two_threads_deliver_the_zset_sum_sent",
			       edge_duo_run(&d[i]) == 0, "case %d: capacity %u",
			       i, d[i].capacity);
		cr_log_info("case %d: %" PRIu64 " frames sent, %" PRIu64
			    " got, %" PRIu64 " coalesced",
			    i, d[i].frames_sent, d[i].frames_got,
			    d[i].coalesced);
		cr_assert_gt(d[i].frames_sent, 1000);
	}
}

Test(edge, close_racing_the_producer_loses_no_frame_silently, .timeout = 30)
{
	/* SC_THREADED: the consumer closes after k frames while the producer
	 * sends; every frame is then taken or counted undeliverable. */
	uint64_t seed = sc_prop_seed(0xc105e), cases = sc_prop_count(20);

	for (uint64_t c = 0; c < cases; c++) {
		struct edge_close_duo d = {
		    .seed = seed + c,
		    .close_after = 1 + (seed + c) % 200,
		    .capacity = c % 2 ? 4 : 64,
		};

		SC_PROP_ASSERT(d.seed, SUITE,
			       "close_racing_the_producer_loses_no_frame_"
			       "silently",
			       edge_close_duo_run(&d) == 0,
			       "close after %" PRIu64 " frames", d.close_after);
	}
}

/* A rebuilt consumer reopens its edge: what waited (ring and outbox) is
 * released and counted as a close counts it, so sent = delivered +
 * drained + refused + in ring still holds; the edge then carries frames
 * again, and the counts of what was released stay. */
Test(edge, reopen_discards_what_waited_counts_it_and_carries_again)
{
	struct sc_edge_traffic t;
	struct sc_edge *e = mk_edge(2, 0);
	struct sc_batch *f[4];
	uint64_t frames = 0;
	size_t n = 0;

	cr_assert_eq(sc_edge_reopen(e), SC_ESTATE); /* open: nothing done */
	for (int i = 0; i < 4; i++) { /* 2 in the ring, 2 coalesced */
		int rc = sc_edge_send(e, one_row((uint64_t)i, 1));

		cr_assert(rc == (i < 2 ? 0 : SC_EFULL), "send %d: %d", i, rc);
	}
	cr_assert(sc_edge_has_outbox(e));
	sc_edge_close(e); /* drains the ring; the outbox waits */
	cr_assert_eq(sc_edge_reopen(e), 0);
	cr_assert(!sc_edge_is_closed(e));
	cr_assert(!sc_edge_has_outbox(e));
	cr_assert_eq(sc_edge_pending(e), 0);
	sc_edge_traffic(e, &t);
	cr_assert_eq(t.frames_sent, t.frames_delivered + t.frames_drained +
					t.frames_refused + t.frames_in_ring);
	cr_assert_eq(t.frames_drained + t.frames_refused, 4);
	sc_edge_undeliverable(e, &frames, NULL);
	cr_assert_eq(frames, 4); /* kept after the reopen */
	cr_assert_eq(sc_edge_send(e, one_row(9, 1)), 0);
	cr_assert_eq(sc_edge_poll(e, 4, f, &n), 0);
	cr_assert_eq(n, 1);
	sc_batch_release(f[0]);
	sc_edge_destroy(e);
	cr_assert_eq(sc_edge_reopen(NULL), SC_EINVAL);
}

/* --- tick edges ---------------------------------------------------------- */

static struct sc_edge *
mk_tick_edge(uint32_t capacity)
{
	struct sc_edge_opts o = {
	    .ncols = 2, .capacity = capacity, .outbox_bound = 0, .ticks = true};
	struct sc_edge *e = NULL;

	cr_assert_eq(sc_edge_create(&o, &e), 0, "%s", sc_errmsg());
	cr_assert(sc_edge_is_ticked(e));
	return e;
}

/* Poll one frame: *stamp and whether it is a marker (its batch released). */
static bool
poll_one(struct sc_edge *e, uint64_t *stamp, size_t *rows)
{
	struct sc_batch *b = NULL;
	size_t n = 0;

	cr_assert_eq(sc_edge_poll_stamped(e, 1, &b, stamp, &n), 0);
	cr_assert_eq(n, 1, "a frame was expected");
	*rows = b ? sc_batch_count(b) : 0;
	sc_batch_release(b);
	return b == NULL;
}

Test(edge, tick_frames_carry_their_tick_and_markers_the_frontier)
{
	struct sc_edge *e = mk_tick_edge(8);
	uint64_t st = 99;
	size_t rows = 0;

	cr_assert_eq(sc_edge_send(e, one_row(1, 1)), 0); /* tick 0 */
	cr_assert_eq(sc_edge_advance(e, 1), 0);
	cr_assert_eq(sc_edge_advance(e, 4), 0); /* ticks 1..3 empty */
	cr_assert_eq(sc_edge_advance(e, 4), 0, "not beyond: nothing");
	cr_assert_eq(sc_edge_send(e, one_row(2, 1)), 0); /* tick 4 */
	cr_assert_eq(sc_edge_frontier(e), 4);
	cr_assert_eq(sc_edge_pending(e), 4, "two frames, two markers");
	cr_assert(!poll_one(e, &st, &rows));
	cr_assert_eq(st, 0);
	cr_assert_eq(rows, 1);
	cr_assert(poll_one(e, &st, &rows));
	cr_assert_eq(st, 1);
	cr_assert(poll_one(e, &st, &rows), "a range is one marker");
	cr_assert_eq(st, 4);
	cr_assert(!poll_one(e, &st, &rows));
	cr_assert_eq(st, 4);
	sc_edge_destroy(e);
}

Test(edge, an_advance_waits_for_the_outbox_so_ticks_never_coalesce)
{
	struct sc_edge *e = mk_tick_edge(1);
	uint64_t st = 0;
	size_t rows = 0;

	cr_assert_eq(sc_edge_send(e, one_row(1, 1)), 0);
	cr_assert_eq(sc_edge_send(e, one_row(2, 1)), SC_EFULL); /* outbox */
	cr_assert_eq(sc_edge_advance(e, 1), SC_EFULL);
	cr_assert_eq(sc_edge_frontier(e), 0, "nothing changed");
	cr_assert(!poll_one(e, &st, &rows));
	cr_assert_eq(st, 0);
	/* Room for one: the outbox (tick 0) goes, the marker still waits. */
	cr_assert_eq(sc_edge_advance(e, 1), SC_EFULL);
	cr_assert(!sc_edge_has_outbox(e));
	cr_assert(!poll_one(e, &st, &rows));
	cr_assert_eq(st, 0, "the outbox held tick 0 only");
	cr_assert_eq(sc_edge_advance(e, 1), 0);
	cr_assert_eq(sc_edge_send(e, one_row(3, 1)), SC_EFULL);
	cr_assert(poll_one(e, &st, &rows));
	cr_assert_eq(st, 1);
	cr_assert_eq(sc_edge_flush(e), 0);
	cr_assert(!poll_one(e, &st, &rows));
	cr_assert_eq(st, 1, "sent after the advance: tick 1");
	sc_edge_destroy(e);
}

Test(edge, tick_calls_on_a_plain_edge_are_einval_and_closed_is_edead)
{
	struct sc_edge *e = mk_edge(4, 0), *t = mk_tick_edge(4);
	struct sc_batch *b = NULL;
	uint64_t st;
	size_t n;

	cr_assert(!sc_edge_is_ticked(e));
	cr_assert_eq(sc_edge_advance(e, 1), SC_EINVAL);
	cr_assert_eq(sc_edge_poll_stamped(e, 1, &b, &st, &n), SC_EINVAL);
	cr_assert_eq(sc_edge_advance(NULL, 1), SC_EINVAL);
	cr_assert_eq(sc_edge_advance(t, 1), 0);
	sc_edge_close(t);
	cr_assert_eq(sc_edge_advance(t, 2), SC_EDEAD);
	sc_edge_destroy(e);
	sc_edge_destroy(t);
}
