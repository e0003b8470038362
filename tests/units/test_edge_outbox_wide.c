/*
 * test_edge_outbox_wide.c - a full edge whose outbox sum would pass int64
 * keeps every send: the frame that would overflow waits as a frame of its
 * own (units/edge.c, outbox_add), so what arrives sums to the sends, the
 * ring's bound on frames in flight holds, and a close counts each send.
 */
#include <criterion/criterion.h>
#include <stdint.h>

#include "operators/batch.h"
#include "units/edge.h"

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

static struct sc_edge *
mk_edge(uint32_t capacity)
{
	struct sc_edge_opts o = {
	    .ncols = 2, .capacity = capacity, .outbox_bound = 100};
	struct sc_edge *e = NULL;

	cr_assert_eq(sc_edge_create(&o, &e), 0, "%s", sc_errmsg());
	return e;
}

/* Sends whose running sum on row 7 passes INT64_MAX twice, settling at
 * INT64_MAX - 5; row 1 settles at 5. Returns the sends made. */
static int
send_past_int64(struct sc_edge *e)
{
	cr_assert_eq(sc_edge_send(e, one_row(1, 5)), 0, "into the ring");
	cr_assert_eq(sc_edge_send(e, one_row(7, INT64_MAX)), SC_EFULL);
	cr_assert_eq(sc_edge_send(e, one_row(7, INT64_MAX)), SC_EFULL,
		     "a sum past int64 is queued, not refused: %s",
		     sc_errmsg());
	cr_assert_eq(sc_edge_send(e, one_row(7, INT64_MAX)), SC_EFULL, "%s",
		     sc_errmsg());
	cr_assert_eq(sc_edge_send(e, one_row(7, -INT64_MAX)), SC_EFULL, "%s",
		     sc_errmsg());
	cr_assert_eq(sc_edge_send(e, one_row(7, -INT64_MAX)), SC_EFULL, "%s",
		     sc_errmsg());
	cr_assert_eq(sc_edge_send(e, one_row(7, -5)), SC_EFULL, "%s",
		     sc_errmsg());
	return 7;
}

Test(edge_outbox_wide, a_sum_past_int64_waits_as_its_own_frame_and_settles)
{
	struct sc_edge *e = mk_edge(1);
	struct sc_batch *got[16], *sum = NULL;
	struct sc_edge_traffic t;
	size_t k = 0;

	send_past_int64(e);
	cr_assert(sc_edge_has_outbox(e));
	cr_assert_eq(sc_edge_outbox_rows(e), 3,
		     "three frames wait, one row each");
	for (int guard = 0; guard < 16; guard++) {
		struct sc_batch *out[2];
		size_t n = 0;

		cr_assert_eq(sc_edge_poll(e, 2, out, &n), 0);
		cr_assert_leq(n, 1, "capacity 1: one frame in flight at most");
		for (size_t i = 0; i < n; i++)
			got[k++] = out[i];
		if (!sc_edge_has_outbox(e) && n == 0)
			break;
		sc_edge_flush(e);
	}
	cr_assert_eq(k, 4, "the ring's frame and three outbox frames");
	cr_assert_eq(sc_batch_sum(got, k, &sum), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_batch_count(sum), 2);
	cr_assert_eq(sc_batch_weight(sum, 0), 5);
	cr_assert_eq(sc_batch_weight(sum, 1), INT64_MAX - 5);
	sc_edge_traffic(e, &t);
	cr_assert_eq(t.frames_pushed, 4);
	cr_assert_eq(t.frames_delivered, 4);
	cr_assert_eq(t.outbox_rows, 0);
	sc_batch_release(sum);
	for (size_t i = 0; i < k; i++)
		sc_batch_release(got[i]);
	sc_edge_destroy(e);
}

Test(edge_outbox_wide, a_close_counts_every_send_of_every_queued_frame)
{
	struct sc_edge *e = mk_edge(1);
	uint64_t frames = 0, rows = 0;
	int sends = send_past_int64(e);

	sc_edge_close(e);
	sc_edge_undeliverable(e, &frames, &rows);
	cr_assert_eq(frames, (uint64_t)sends,
		     "the ring's frame and the six sends in the outbox");
	cr_assert_eq(rows, 1 + 3);
	cr_assert_eq(sc_edge_flush(e), SC_EDEAD);
	cr_assert_not(sc_edge_has_outbox(e), "the outbox was released");
	sc_edge_undeliverable(e, &frames, &rows);
	cr_assert_eq(frames, (uint64_t)sends, "counted once");
	sc_edge_destroy(e);
}

Test(edge_outbox_wide, destroy_releases_queued_frames)
{
	struct sc_edge *e = mk_edge(1);

	/* Leaks, if any, are ASan's to report. */
	send_past_int64(e);
	sc_edge_destroy(e);
}
