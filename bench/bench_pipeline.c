/*
 * bench_pipeline.c - frames through edges: subcirc's edges and units
 * against plain threads joined by raw Concurrency Kit rings, in one run.
 *
 * Items are rows; a frame is one batch of 1 or 256 rows (one u64 column,
 * weight 1). The source sends batches from a pool built in advance (one
 * more reference each), the sink reads every row's weight and releases
 * the frame, in subject and baseline alike: both do the same per-frame
 * work and differ only in how frames travel and who runs what.
 *
 *  edge R-row        two threads: producer -> sc_edge -> consumer
 *                    vs the same two threads over a raw ck_ring (spsc).
 *  pipeline R-row    source -> stage -> stage -> sink: four subcirc units
 *                    (toy units that forward frames over sc_edges) on the
 *                    executor and a pool of 2 workers, vs four plain
 *                    threads joined by three raw ck_rings.
 *
 * Raw threads wait by spinning a little and then sched_yield (the machine
 * has 2 cores, the raw pipeline 4 threads); units wait the executor's way
 * (a turn ends, the worker claims the next unit or parks). Each figure is
 * the median of REPS repetitions in items/s; ratio = subcirc / raw.
 * --quick shrinks the sizes for a smoke run; --budget N sets the units'
 * frames per turn (default 256, the edges' capacity); any other argument runs
 * only the cases whose name contains it (e.g. "pipeline").
 */
#include <ck_ring.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/harness.h"
#include "operators/batch.h"
#include "runtime/executor.h"
#include "runtime/pool.h"
#include "units/edge.h"

#define REPS	 5
#define RING_CAP 256 /* frames per edge or raw ring */
#define STAGES	 4   /* source, stage, stage, sink */
#define SPINS	 64  /* raw threads: polls before a sched_yield */

/*
 * The frames a source sends: FRAMES_POOL batches built once per size, each
 * sent as one more reference (sc_batch_retain), so that what is measured
 * is frames travelling, not batches being built (which costs the same on
 * both sides and would hide the difference). The pool is larger than
 * every ring together, so a batch is rarely in flight twice.
 */
#define FRAMES_POOL 4096

static struct sc_batch *frames_pool[FRAMES_POOL];

static void
frames_pool_build(uint32_t rows)
{
	uint64_t keys[256];

	for (size_t f = 0; f < FRAMES_POOL; f++) {
		sc_batch_release(frames_pool[f]);
		for (uint32_t i = 0; i < rows; i++)
			keys[i] = f * 256 + i;
		if (sc_batch_from_records(1, keys, NULL, rows,
					  &frames_pool[f]) != 0)
			sc_bench_fail("sc_batch_from_records");
	}
}

static void
frames_pool_free(void)
{
	for (size_t f = 0; f < FRAMES_POOL; f++) {
		sc_batch_release(frames_pool[f]);
		frames_pool[f] = NULL;
	}
}

static struct sc_batch *
make_frame(uint64_t i)
{
	return sc_batch_retain(frames_pool[i % FRAMES_POOL]);
}

/* What a sink does with a frame: reads every row's weight (so the rows are
 * really consumed), returns their sum, and releases the frame. */
static uint64_t
sink_frame(struct sc_batch *b)
{
	int64_t w = 0;

	for (size_t i = 0; i < sc_batch_count(b); i++)
		w += sc_batch_weight(b, i);
	sc_batch_release(b);
	return (uint64_t)w;
}

/* ---- raw ck_ring threads --------------------------------------------- */

struct raw_ring {
	ck_ring_t ring;
	struct ck_ring_buffer *slots;
};

struct raw_stage {
	struct raw_ring *in, *out; /* NULL at the source / the sink */
	uint64_t frames;	   /* the source: how many to make */
	uint32_t rows;		   /* rows per frame */
	uint64_t items;		   /* the sink: rows received */
};

static void
raw_ring_init(struct raw_ring *r)
{
	/* ck keeps one slot empty: RING_CAP - 1 frames in flight, as plain
	 * as ck gets. */
	r->slots = calloc(RING_CAP, sizeof(*r->slots));
	if (!r->slots)
		sc_bench_fail("calloc");
	ck_ring_init(&r->ring, RING_CAP);
}

static void
raw_push(struct raw_ring *r, struct sc_batch *b)
{
	for (unsigned spin = 0; !ck_ring_enqueue_spsc(&r->ring, r->slots, b);
	     spin++)
		if (spin >= SPINS)
			sched_yield();
}

/* The next frame, or NULL for the end marker. */
static struct sc_batch *
raw_pop(struct raw_ring *r)
{
	struct sc_batch *b;

	for (unsigned spin = 0; !ck_ring_dequeue_spsc(&r->ring, r->slots, &b);
	     spin++)
		if (spin >= SPINS)
			sched_yield();
	return b;
}

static void *
raw_stage_main(void *arg)
{
	struct raw_stage *s = arg;

	if (!s->in) {
		for (uint64_t i = 0; i < s->frames; i++)
			raw_push(s->out, make_frame(i));
		raw_push(s->out, NULL);
		return NULL;
	}
	for (;;) {
		struct sc_batch *b = raw_pop(s->in);

		if (s->out) {
			raw_push(s->out, b);
		} else if (b) {
			s->items += sink_frame(b);
		}
		if (!b)
			return NULL;
	}
}

/* `n` threads joined by n - 1 raw rings; returns items/s. */
static double
run_raw(int n, uint64_t frames, uint32_t rows)
{
	struct raw_ring rings[STAGES - 1];
	struct raw_stage st[STAGES];
	pthread_t th[STAGES];
	uint64_t t0, t1;

	memset(st, 0, sizeof(st));
	for (int i = 0; i < n - 1; i++)
		raw_ring_init(&rings[i]);
	for (int i = 0; i < n; i++) {
		st[i].in = i > 0 ? &rings[i - 1] : NULL;
		st[i].out = i < n - 1 ? &rings[i] : NULL;
		st[i].frames = frames;
		st[i].rows = rows;
	}
	t0 = sc_bench_now_ns();
	for (int i = n - 1; i >= 0; i--)
		if (pthread_create(&th[i], NULL, raw_stage_main, &st[i]) != 0)
			sc_bench_fail("pthread_create");
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	t1 = sc_bench_now_ns();
	if (st[n - 1].items != frames * rows)
		sc_bench_fail("raw: items lost");
	for (int i = 0; i < n - 1; i++)
		free(rings[i].slots);
	return (double)(frames * rows) * 1e9 / (double)(t1 - t0);
}

/* ---- two threads over an sc_edge ---------------------------------------
 */

struct edge_pair {
	struct sc_edge *edge;
	uint64_t frames;
	uint32_t rows;
	uint64_t items;
	atomic_bool done;
};

static void *
edge_producer(void *arg)
{
	struct edge_pair *p = arg;

	for (uint64_t i = 0; i < p->frames; i++) {
		unsigned spin = 0;

		/* A thread without an executor waits as the raw one does:
		 * it does not send into a backpressured edge. */
		while (sc_edge_backpressured(p->edge) &&
		       sc_edge_flush(p->edge) == SC_EFULL)
			if (++spin >= SPINS)
				sched_yield();
		if (sc_edge_send(p->edge, make_frame(i)) < 0 &&
		    !sc_edge_has_outbox(p->edge))
			sc_bench_fail("sc_edge_send");
	}
	while (sc_edge_flush(p->edge) == SC_EFULL)
		sched_yield();
	atomic_store(&p->done, true);
	return NULL;
}

static void *
edge_consumer(void *arg)
{
	struct edge_pair *p = arg;
	struct sc_batch *out[64];
	unsigned spin = 0;

	for (;;) {
		bool done = atomic_load(&p->done);
		size_t n = 0;

		if (sc_edge_poll(p->edge, 64, out, &n) != 0)
			sc_bench_fail("sc_edge_poll");
		for (size_t i = 0; i < n; i++)
			p->items += sink_frame(out[i]);
		if (n) {
			spin = 0;
			continue;
		}
		if (++spin < SPINS)
			continue;
		if (done && sc_edge_pending(p->edge) == 0)
			return NULL;
		sched_yield();
	}
}

static double
run_edge_pair(uint64_t frames, uint32_t rows)
{
	struct sc_edge_opts o = {.ncols = 1, .capacity = RING_CAP};
	struct edge_pair p = {.frames = frames, .rows = rows};
	pthread_t a, b;
	uint64_t t0, t1;

	atomic_init(&p.done, false);
	if (sc_edge_create(&o, &p.edge) != 0)
		sc_bench_fail("sc_edge_create");
	t0 = sc_bench_now_ns();
	if (pthread_create(&b, NULL, edge_consumer, &p) != 0 ||
	    pthread_create(&a, NULL, edge_producer, &p) != 0)
		sc_bench_fail("pthread_create");
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	t1 = sc_bench_now_ns();
	if (p.items != frames * rows)
		sc_bench_fail("edge: items lost");
	sc_edge_destroy(p.edge);
	return (double)(frames * rows) * 1e9 / (double)(t1 - t0);
}

/* ---- four units on the executor ------------------------------------------
 */

/*
 * One toy unit: a source (no input), a stage (forwards every frame), or a
 * sink (releases every frame). It follows unit.h: at most `budget` frames a
 * turn; `more` only when it stopped at the budget with input left; a full
 * output (a non-empty outbox, the bound being 0) stops it without `more`,
 * and its consumer's progress kicks it back.
 */
struct toy {
	struct sc_unit unit;	/* first: the executor's handle */
	struct sc_edge *in;	/* NULL at the source */
	struct sc_edge *out;	/* NULL at the sink */
	uint32_t in_peer;	/* the producer of `in` */
	uint32_t out_peer;	/* the consumer of `out` */
	uint64_t in_mark;	/* sc_edge_moved marks */
	uint64_t out_mark;	/* ... */
	bool in_moved;		/* this turn's traffic, for neighbours */
	bool out_moved;		/* ... */
	uint64_t next;		/* the source: frames made so far */
	uint64_t frames;	/* the source: frames to make */
	uint32_t rows;		/* rows per frame */
	_Atomic uint64_t items; /* the sink: rows received */
};

/* Frames `out` takes now without an outbox; no limit at the sink. */
static uint32_t
toy_room(const struct toy *t)
{
	return t->out ? sc_edge_room(t->out) : UINT32_MAX;
}

static void
toy_send(struct toy *t, struct sc_batch *b)
{
	if (sc_edge_send(t->out, b) != 0)
		sc_bench_fail("toy: sc_edge_send (the room was counted)");
}

static void
toy_source_turn(struct toy *t, uint32_t budget, bool *more)
{
	uint32_t room = toy_room(t);
	uint32_t n = 0;

	while (n < budget && n < room && t->next < t->frames) {
		toy_send(t, make_frame(t->next++));
		n++;
	}
	/* Stopped by the room: not more (the consumer kicks back). */
	*more = n == budget && t->next < t->frames;
}

/* A stage or the sink: take only as many frames as the output has room
 * for, so a stage never holds a frame it cannot pass on (its outbox stays
 * empty and nothing needs coalescing). */
static void
toy_pass_turn(struct toy *t, uint32_t budget, bool *more)
{
	struct sc_batch *got[64];
	uint32_t done = 0;

	while (done < budget) {
		uint32_t room = toy_room(t);
		size_t n = 0, want = budget - done;

		want = want < 64 ? want : 64;
		want = want < room ? want : room;
		if (want == 0)
			return; /* a full output is not `more` */
		if (sc_edge_poll(t->in, want, got, &n) != 0)
			sc_bench_fail("toy: sc_edge_poll");
		for (size_t i = 0; i < n; i++) {
			if (t->out) {
				toy_send(t, got[i]);
				continue;
			}
			atomic_fetch_add_explicit(&t->items, sink_frame(got[i]),
						  memory_order_relaxed);
		}
		done += (uint32_t)n;
		if (n < want)
			return; /* input drained */
	}
	*more = true;
}

static struct sc_turn
toy_turn(struct sc_unit *self, uint32_t budget)
{
	struct toy *t = (struct toy *)self;
	struct sc_turn r = {0, false};
	uint64_t moved = 0, d;

	if (t->in)
		toy_pass_turn(t, budget, &r.more);
	else
		toy_source_turn(t, budget, &r.more);
	t->in_moved = t->out_moved = false;
	if (t->in) {
		d = sc_edge_moved(t->in, SC_EDGE_CONSUMER, &t->in_mark);
		t->in_moved = d > 0;
		moved += d;
	}
	if (t->out) {
		d = sc_edge_moved(t->out, SC_EDGE_PRODUCER, &t->out_mark);
		t->out_moved = d > 0;
		moved += d;
	}
	r.progress = moved > UINT32_MAX ? UINT32_MAX : (uint32_t)moved;
	return r;
}

static size_t
toy_neighbours(struct sc_unit *self, uint32_t *out, size_t max)
{
	struct toy *t = (struct toy *)self;
	size_t n = 0;

	if (t->in_moved) {
		if (n < max)
			out[n] = t->in_peer;
		n++;
	}
	if (t->out_moved) {
		if (n < max)
			out[n] = t->out_peer;
		n++;
	}
	return n;
}

/* Input it could act on now: frames waiting, and room to pass them on. */
static bool
toy_has_pending(const struct sc_unit *self)
{
	const struct toy *t = (const struct toy *)self;

	return t->in && sc_edge_pending(t->in) > 0 &&
	       (!t->out || sc_edge_pending(t->out) < RING_CAP);
}

static const char *
toy_name(const struct sc_unit *self)
{
	const struct toy *t = (const struct toy *)self;

	return !t->in ? "source" : !t->out ? "sink" : "stage";
}

static void
toy_destroy(struct sc_unit *self)
{
	(void)self; /* the bench owns the toys */
}

static const struct sc_unit_ops toy_ops = {
    .turn = toy_turn,
    .neighbours = toy_neighbours,
    .has_pending = toy_has_pending,
    .name = toy_name,
    .destroy = toy_destroy,
};

/* The unit pipeline on `workers` workers; returns items/s. */
static double
run_units(uint64_t frames, uint32_t rows, uint32_t workers, uint32_t budget)
{
	struct sc_edge_opts o = {.ncols = 1, .capacity = RING_CAP};
	struct sc_pool_opts po = {.workers = workers, .budget = budget};
	static struct toy toys[STAGES];
	struct sc_exec *ex;
	struct sc_pool *pool;
	uint32_t ids[STAGES];
	uint64_t t0, t1;

	memset(toys, 0, sizeof(toys));
	if (sc_exec_create(NULL, &ex) != 0)
		sc_bench_fail("sc_exec_create");
	for (int i = 0; i < STAGES; i++) {
		toys[i].unit.ops = &toy_ops;
		toys[i].frames = frames;
		toys[i].rows = rows;
		if (i < STAGES - 1 && sc_edge_create(&o, &toys[i].out) != 0)
			sc_bench_fail("sc_edge_create");
		if (i > 0)
			toys[i].in = toys[i - 1].out;
		if (sc_exec_add(ex, &toys[i].unit, &ids[i]) != 0)
			sc_bench_fail("sc_exec_add");
	}
	for (int i = 0; i < STAGES; i++) {
		toys[i].in_peer = i > 0 ? ids[i - 1] : 0;
		toys[i].out_peer = i < STAGES - 1 ? ids[i + 1] : 0;
	}
	if (sc_pool_create(ex, &po, &pool) != 0)
		sc_bench_fail("sc_pool_create");
	t0 = sc_bench_now_ns();
	if (sc_exec_kick(ex, ids[0]) != 0)
		sc_bench_fail("sc_exec_kick");
	if (sc_exec_wait_idle(ex, 60ull * 1000000000ull, NULL) != 0)
		sc_bench_fail("sc_exec_wait_idle");
	t1 = sc_bench_now_ns();
	if (sc_pool_finish(pool, NULL) != 0)
		sc_bench_fail("sc_pool_finish");
	if (atomic_load(&toys[STAGES - 1].items) != frames * rows) {
		(void)fprintf(
		    stderr, "units: %llu of %llu items arrived\n",
		    (unsigned long long)atomic_load(&toys[STAGES - 1].items),
		    (unsigned long long)frames * rows);
		sc_bench_fail("units: items lost");
	}
	for (int i = 0; i < STAGES - 1; i++)
		sc_edge_destroy(toys[i].out);
	if (sc_exec_destroy(ex) != 0)
		sc_bench_fail("sc_exec_destroy");
	return (double)(frames * rows) * 1e9 / (double)(t1 - t0);
}

/* ---- driver ---------------------------------------------------------------
 */

/* Cases whose name contains this (the first argument that is not a flag)
 * run; NULL runs all. */
static const char *case_filter;

/* Frames per turn for the units (--budget N). The default is the edges'
 * capacity, so one turn can fill or drain an edge: on this machine it
 * measured ~1.3x the throughput of a budget of 64 (fewer turns, fewer
 * hand-offs through the executor per frame). */
static uint32_t unit_budget = RING_CAP;

static void
measure(const char *kase, uint64_t frames, uint32_t rows, bool pipeline)
{
	double ours[REPS], raw[REPS];
	char name[96];
	int reps = sc_bench_quick() ? 3 : REPS;

	if (case_filter && !strstr(kase, case_filter))
		return;
	frames_pool_build(rows);
	/* Interleaved, so a noisy moment hurts both sides alike. */
	for (int r = 0; r < reps; r++) {
		raw[r] = pipeline ? run_raw(STAGES, frames, rows)
				  : run_raw(2, frames, rows);
		ours[r] = pipeline ? run_units(frames, rows, 2, unit_budget)
				   : run_edge_pair(frames, rows);
	}
	if (pipeline)
		(void)snprintf(name, sizeof(name), "%s (2 workers, budget %u)",
			       kase, unit_budget);
	else
		(void)snprintf(name, sizeof(name), "%s", kase);
	sc_bench_emit("pipeline", name, "items/s",
		      sc_bench_median(ours, (size_t)reps),
		      pipeline ? "4 threads + raw ck_ring" : "raw ck_ring",
		      sc_bench_median(raw, (size_t)reps));
}

int
main(int argc, char **argv)
{
	bool quick = sc_bench_init(argc, argv);
	uint64_t small = quick ? 100000 : 5000000;
	uint64_t big = quick ? 2000 : 200000;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--budget") == 0 && i + 1 < argc)
			unit_budget = (uint32_t)strtoul(argv[++i], NULL, 10);
		else if (argv[i][0] != '-')
			case_filter = argv[i];
	}
	if (unit_budget == 0)
		unit_budget = RING_CAP;
	measure("edge 1-row", small, 1, false);
	measure("edge 256-row", big, 256, false);
	measure("pipeline 1-row", small, 1, true);
	measure("pipeline 256-row", big, 256, true);
	frames_pool_free();
	return 0;
}
