/*
 * edge_duo.h - the two-thread edge scenario: one producer thread, one
 * consumer thread, one sc_edge between them.
 *
 * The producer sends random frames (rows (key, 0) with keys from a small
 * domain and weights in [-3, 3], consolidated by the batch) until it has
 * sent `frames` or its time is up; whenever the edge says full it flushes
 * (yielding the CPU between tries, as a unit would give its worker back),
 * and before it stops it flushes until the outbox is empty. The consumer
 * polls until the producer is done and the ring is empty. Each side sums
 * what it saw per key; the Z-set sent equals the Z-set received iff the
 * two arrays are equal, which is an exact check (sums of int64 weights of
 * a small domain, no wraparound at these sizes).
 *
 * Also here: the close race (edge_close_duo_run), where the consumer
 * closes the edge after some frames while the producer goes on sending.
 *
 * Header-only (static functions), shared by tests/units/test_edge.c (a
 * Criterion test with a timeout) and tests/units/tsan_edge.c (the plain
 * driver the ThreadSanitizer pass runs).
 */
#ifndef SC_TEST_EDGE_DUO_H
#define SC_TEST_EDGE_DUO_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "operators/base.h"
#include "operators/batch.h"
#include "tests/support/prop.h"
#include "units/edge.h"

#define EDGE_DUO_KEYS 64

struct edge_duo {
	/* inputs */
	uint64_t seed;		 /* the producer's random frames */
	uint64_t frames;	 /* frames to send at most */
	uint64_t max_ns;	 /* or stop sending after this long */
	uint32_t capacity;	 /* the edge's capacity */
	size_t outbox_bound;	 /* the edge's outbox bound */
	uint32_t rows_per_frame; /* records drawn per frame (before
				    consolidation) */
	/* results */
	int64_t sent[EDGE_DUO_KEYS]; /* weight per key, producer's view */
	int64_t got[EDGE_DUO_KEYS];  /* weight per key, consumer's view */
	uint64_t frames_sent;	     /* sends made */
	uint64_t frames_got;	     /* frames polled */
	uint64_t coalesced;	     /* sends that went into the outbox */
	int error;		     /* first unexpected error code, or 0 */
	/* shared */
	struct sc_edge *edge;
	atomic_bool producer_done;
};

static void
edge_duo_sum(int64_t *acc, const struct sc_batch *b)
{
	for (size_t i = 0; i < sc_batch_count(b); i++)
		acc[sc_batch_row(b, i)[0] % EDGE_DUO_KEYS] +=
		    sc_batch_weight(b, i);
}

static struct sc_batch *
edge_duo_frame(struct edge_duo *d, struct sc_rng *r)
{
	uint64_t rows[2 * 64];
	int64_t w[64];
	uint32_t n = d->rows_per_frame > 64 ? 64 : d->rows_per_frame;
	struct sc_batch *b = NULL;

	for (size_t i = 0; i < n; i++) {
		rows[2 * i] = sc_rng_below(r, EDGE_DUO_KEYS);
		rows[2 * i + 1] = 0;
		w[i] = sc_rng_range(r, -3, 3);
	}
	if (sc_batch_from_records(2, rows, w, n, &b) != 0)
		return NULL;
	return b;
}

/* Flush until the outbox is gone (or the edge is dead). */
static int
edge_duo_drain_outbox(struct edge_duo *d)
{
	int rc;

	while ((rc = sc_edge_flush(d->edge)) == SC_EFULL)
		sched_yield();
	return rc;
}

static void *
edge_duo_producer(void *arg)
{
	struct edge_duo *d = arg;
	struct sc_rng r;
	uint64_t start = sc_clock_ns();
	int rc;

	sc_rng_seed(&r, d->seed);
	while (d->frames_sent < d->frames) {
		struct sc_batch *b;

		if ((d->frames_sent & 1023) == 0 &&
		    sc_clock_ns() - start > d->max_ns)
			break;
		while (sc_edge_backpressured(d->edge) &&
		       sc_edge_flush(d->edge) == SC_EFULL)
			sched_yield();
		b = edge_duo_frame(d, &r);
		if (!b) {
			d->error = SC_ENOMEM;
			break;
		}
		edge_duo_sum(d->sent, b);
		rc = sc_edge_send(d->edge, b);
		if (rc == SC_EFULL) {
			d->coalesced++;
		} else if (rc != 0) {
			sc_batch_release(b);
			d->error = rc;
			break;
		}
		d->frames_sent++;
	}
	rc = edge_duo_drain_outbox(d);
	if (rc && !d->error)
		d->error = rc;
	atomic_store(&d->producer_done, true);
	return NULL;
}

static void *
edge_duo_consumer(void *arg)
{
	struct edge_duo *d = arg;
	struct sc_batch *out[16];

	for (;;) {
		bool done = atomic_load(&d->producer_done);
		size_t n = 0;
		int rc = sc_edge_poll(d->edge, 16, out, &n);

		if (rc) {
			d->error = rc;
			return NULL;
		}
		for (size_t i = 0; i < n; i++) {
			edge_duo_sum(d->got, out[i]);
			sc_batch_release(out[i]);
		}
		d->frames_got += n;
		if (n == 0 && done && sc_edge_pending(d->edge) == 0)
			return NULL;
		if (n == 0)
			sched_yield();
	}
}

/*
 * edge_duo_run - run the scenario. Returns 0 when both threads ran without
 * error and the sums agree; otherwise a negative code or 1 (sums differ),
 * with a line on stderr.
 */
static int
edge_duo_run(struct edge_duo *d)
{
	struct sc_edge_opts o = {.ncols = 2,
				 .capacity = d->capacity,
				 .outbox_bound = d->outbox_bound};
	pthread_t prod, cons;
	int rc;

	memset(d->sent, 0, sizeof(d->sent));
	memset(d->got, 0, sizeof(d->got));
	d->frames_sent = d->frames_got = d->coalesced = 0;
	d->error = 0;
	atomic_init(&d->producer_done, false);
	rc = sc_edge_create(&o, &d->edge);
	if (rc)
		return rc;
	if (pthread_create(&cons, NULL, edge_duo_consumer, d) != 0) {
		sc_edge_destroy(d->edge);
		return SC_ENOMEM;
	}
	if (pthread_create(&prod, NULL, edge_duo_producer, d) != 0) {
		atomic_store(&d->producer_done, true);
		pthread_join(cons, NULL);
		sc_edge_destroy(d->edge);
		return SC_ENOMEM;
	}
	pthread_join(prod, NULL);
	pthread_join(cons, NULL);
	sc_edge_destroy(d->edge);
	d->edge = NULL;
	if (d->error) {
		(void)fprintf(stderr, "edge_duo: error %s\n",
			      sc_errname(d->error));
		return d->error;
	}
	if (memcmp(d->sent, d->got, sizeof(d->sent)) != 0) {
		(void)fprintf(
		    stderr,
		    "edge_duo: seed %llu: the Z-set received differs "
		    "from the one sent (%llu frames sent, %llu got)\n",
		    (unsigned long long)d->seed,
		    (unsigned long long)d->frames_sent,
		    (unsigned long long)d->frames_got);
		return 1;
	}
	return 0;
}

/* --- the close race: the consumer dies while the producer sends -------- */

struct edge_close_duo {
	uint64_t seed;		/* the producer's random frames */
	uint64_t close_after;	/* frames the consumer takes, then closes */
	uint32_t capacity;	/* the edge's capacity */
	uint64_t sends;		/* sends made (pushed, or refused dead) */
	uint64_t rows_sent;	/* their rows */
	uint64_t got, rows_got; /* frames and rows the consumer took */
	int error;		/* first unexpected code, or 0 */
	struct sc_edge *edge;
};

static void *
edge_close_producer(void *arg)
{
	struct edge_close_duo *d = arg;
	struct edge_duo shape = {.rows_per_frame = 4};
	struct sc_rng r;
	uint64_t start = sc_clock_ns();

	sc_rng_seed(&r, d->seed);
	for (;;) {
		struct sc_batch *b;
		uint64_t rows;
		int rc;

		/* Never into the outbox: each send is then one ring frame or
		 * one refused frame, and the books balance by frames. */
		if (sc_edge_room(d->edge) == 0) {
			if (sc_clock_ns() - start > 20000000000ull) {
				d->error = SC_ETIMEDOUT;
				return NULL;
			}
			sched_yield();
			continue;
		}
		b = edge_duo_frame(&shape, &r);
		if (!b) {
			d->error = SC_ENOMEM;
			return NULL;
		}
		rows = sc_batch_count(b);
		rc = sc_edge_send(d->edge, b);
		if (rc != 0 && rc != SC_EDEAD) {
			d->error = rc;
			sc_batch_release(b);
			return NULL;
		}
		d->sends++;
		d->rows_sent += rows;
		if (rc == SC_EDEAD)
			return NULL;
	}
}

static void *
edge_close_consumer(void *arg)
{
	struct edge_close_duo *d = arg;
	struct sc_batch *out[8];

	while (d->got < d->close_after) {
		size_t n = 0, want = d->close_after - d->got;
		int rc = sc_edge_poll(d->edge, want < 8 ? want : 8, out, &n);

		if (rc) {
			d->error = rc;
			return NULL;
		}
		for (size_t i = 0; i < n; i++) {
			d->rows_got += sc_batch_count(out[i]);
			sc_batch_release(out[i]);
		}
		d->got += n;
		if (n == 0)
			sched_yield();
	}
	sc_edge_close(d->edge); /* the consumer dies here */
	return NULL;
}

/*
 * edge_close_duo_run - run the close race. Returns 0 when the producer was
 * refused (SC_EDEAD) and every frame it sent was either taken by the
 * consumer or counted undeliverable, in frames and in rows; otherwise an
 * error code or 1, with a line on stderr.
 */
static int
edge_close_duo_run(struct edge_close_duo *d)
{
	struct sc_edge_opts o = {.ncols = 2, .capacity = d->capacity};
	uint64_t uf = 0, ur = 0;
	pthread_t prod, cons;
	int rc;

	d->sends = d->rows_sent = d->got = d->rows_got = 0;
	d->error = 0;
	rc = sc_edge_create(&o, &d->edge);
	if (rc)
		return rc;
	if (pthread_create(&cons, NULL, edge_close_consumer, d) != 0) {
		sc_edge_destroy(d->edge);
		return SC_ENOMEM;
	}
	if (pthread_create(&prod, NULL, edge_close_producer, d) != 0) {
		pthread_join(cons, NULL);
		sc_edge_destroy(d->edge);
		return SC_ENOMEM;
	}
	pthread_join(prod, NULL);
	pthread_join(cons, NULL);
	sc_edge_undeliverable(d->edge, &uf, &ur);
	sc_edge_destroy(d->edge);
	d->edge = NULL;
	if (d->error) {
		(void)fprintf(stderr, "edge_close_duo: error %s\n",
			      sc_errname(d->error));
		return d->error;
	}
	if (d->got + uf != d->sends || d->rows_got + ur != d->rows_sent) {
		(void)fprintf(
		    stderr,
		    "edge_close_duo: seed %llu: %llu frames sent, %llu "
		    "taken, %llu undeliverable (rows %llu, %llu, %llu)\n",
		    (unsigned long long)d->seed, (unsigned long long)d->sends,
		    (unsigned long long)d->got, (unsigned long long)uf,
		    (unsigned long long)d->rows_sent,
		    (unsigned long long)d->rows_got, (unsigned long long)ur);
		return 1;
	}
	return 0;
}

#endif /* SC_TEST_EDGE_DUO_H */
