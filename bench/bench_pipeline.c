/*
 * bench_pipeline.c - frames through edges: subcirc's edges and units
 * against peers that run as many threads as subcirc runs workers, in one
 * run, so that no side is oversubscribed on a machine of 2 cores.
 *
 * Items are rows; a frame is one batch of 1 or 256 rows (one u64 column,
 * weight 1). The source sends batches from a pool built in advance (one
 * more reference each), the sink reads every row's weight and releases
 * the frame, in subject and peers alike: all do the same per-frame work
 * and differ only in how frames travel and who runs what.
 *
 *  edge R-row        two threads: producer -> sc_edge -> consumer
 *                    vs the same two threads over a raw ck_ring (spsc).
 *  pipeline R-row    source -> stage -> stage -> sink, each stage moving
 *                    at most B frames a turn (B = 1, 64, 256), on 2
 *                    threads in every case:
 *                      subcirc    four toy units over sc_edges on the
 *                                 executor and a pool of 2 workers;
 *                      condvar    the same four stages over spsc
 *                                 ck_rings, run by 2 threads that take
 *                                 ready stages from one mutex+condvar
 *                                 queue (a stage that moved frames
 *                                 readies its neighbours): the plain
 *                                 way to write a scheduler;
 *                      raw2       2 threads, each running two fused
 *                                 stages in turn (source+stage,
 *                                 stage+sink), one raw ck_ring between
 *                                 them: no scheduler at all.
 *
 * Waiting threads spin a little and then sched_yield (the raw ones) or
 * block on the condvar (the condvar pool) or park the executor's way.
 * Every figure is the median of REPS repetitions, in items/s by the wall
 * clock (higher is better) and in CPU ns per item, all threads of the
 * process summed (lower is better: on a shared machine it leaves out the
 * time others took, and it charges spinning to whoever spins). ratio =
 * subcirc / peer. --quick shrinks the sizes for a smoke run; --budget N
 * runs only that budget; any other argument runs only the cases whose
 * name contains it (e.g. "pipeline").
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

/* ---- raw ck_ring ------------------------------------------------------- */

struct raw_ring {
	ck_ring_t ring;
	struct ck_ring_buffer *slots;
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

/* Frames ring r holds now (either end may call it: an estimate). */
static uint32_t
raw_size(struct raw_ring *r)
{
	return ck_ring_size(&r->ring);
}

/* Frames it takes now without waiting. */
static uint32_t
raw_room(struct raw_ring *r)
{
	return RING_CAP - 1 - raw_size(r);
}

/* ---- two raw threads: the edge's peer ------------------------------------ */

struct raw_pair {
	struct raw_ring ring;
	uint64_t frames;
	uint64_t items; /* the consumer: rows received */
};

static void *
raw_producer(void *arg)
{
	struct raw_pair *p = arg;

	for (uint64_t i = 0; i < p->frames; i++)
		raw_push(&p->ring, make_frame(i));
	raw_push(&p->ring, NULL);
	return NULL;
}

static void *
raw_consumer(void *arg)
{
	struct raw_pair *p = arg;
	struct sc_batch *b;

	while ((b = raw_pop(&p->ring)) != NULL)
		p->items += sink_frame(b);
	return NULL;
}

/* Wall and all threads' CPU time of one case. */
struct took {
	uint64_t wall, cpu; /* ns */
};

static struct took
took_now(void)
{
	struct took t = {sc_bench_now_ns(), sc_bench_process_cpu_ns()};

	return t;
}

static struct took
took_since(struct took t0)
{
	struct took t1 = took_now();

	t1.wall -= t0.wall;
	t1.cpu -= t0.cpu;
	return t1;
}

static struct took
run_raw_pair(uint64_t frames, uint32_t rows)
{
	struct raw_pair p = {.frames = frames};
	pthread_t a, b;
	struct took t0 = took_now(), t;

	raw_ring_init(&p.ring);
	if (pthread_create(&b, NULL, raw_consumer, &p) != 0 ||
	    pthread_create(&a, NULL, raw_producer, &p) != 0)
		sc_bench_fail("pthread_create");
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	t = took_since(t0);
	if (p.items != frames * rows)
		sc_bench_fail("raw pair: items lost");
	free(p.ring.slots);
	return t;
}

/* ---- raw2: two threads, two fused stages each ---------------------------- */

/*
 * Thread A runs the source and the first stage in turn: the source puts
 * up to `budget` frames on A's own queue (a plain array, A alone uses
 * it), the stage moves up to `budget` of them onto the ring to B. Thread
 * B runs the second stage (ring -> B's own queue) and the sink in turn.
 * Four stages and three hops, as in the other pipelines, on 2 threads.
 */
struct local_q {
	struct sc_batch *f[RING_CAP];
	uint32_t head, n;
};

static void
local_put(struct local_q *q, struct sc_batch *b)
{
	q->f[(q->head + q->n++) % RING_CAP] = b;
}

static struct sc_batch *
local_take(struct local_q *q)
{
	struct sc_batch *b = q->f[q->head];

	q->head = (q->head + 1) % RING_CAP;
	q->n--;
	return b;
}

struct raw2 {
	struct raw_ring mid;
	uint64_t frames;
	uint32_t budget;
	uint64_t items;
	_Atomic bool sent_all; /* A has put every frame on the ring */
};

static void *
raw2_front(void *arg)
{
	struct raw2 *p = arg;
	struct local_q q = {.n = 0};
	uint64_t next = 0;
	unsigned idle = 0;

	while (next < p->frames || q.n) {
		uint32_t moved = 0;

		for (uint32_t k = 0;
		     k < p->budget && q.n < RING_CAP && next < p->frames;
		     k++, moved++)
			local_put(&q, make_frame(next++));
		for (uint32_t k = 0, room = raw_room(&p->mid);
		     k < p->budget && q.n && k < room; k++, moved++)
			if (!ck_ring_enqueue_spsc(&p->mid.ring, p->mid.slots,
						  local_take(&q)))
				sc_bench_fail("raw2: ring room miscounted");
		idle = moved ? 0 : idle + 1;
		if (idle >= SPINS)
			sched_yield();
	}
	atomic_store(&p->sent_all, true);
	return NULL;
}

static void *
raw2_back(void *arg)
{
	struct raw2 *p = arg;
	struct local_q q = {.n = 0};
	unsigned idle = 0;

	for (;;) {
		bool last = atomic_load(&p->sent_all);
		uint32_t moved = 0;
		struct sc_batch *b;

		for (uint32_t k = 0;
		     k < p->budget && q.n < RING_CAP &&
		     ck_ring_dequeue_spsc(&p->mid.ring, p->mid.slots, &b);
		     k++, moved++)
			local_put(&q, b);
		for (uint32_t k = 0; k < p->budget && q.n; k++, moved++)
			p->items += sink_frame(local_take(&q));
		if (!moved && last && raw_size(&p->mid) == 0 && !q.n)
			return NULL;
		idle = moved ? 0 : idle + 1;
		if (idle >= SPINS)
			sched_yield();
	}
}

static struct took
run_raw2(uint64_t frames, uint32_t rows, uint32_t budget)
{
	struct raw2 p = {.frames = frames, .budget = budget};
	pthread_t a, b;
	struct took t0, t;

	atomic_init(&p.sent_all, false);
	raw_ring_init(&p.mid);
	t0 = took_now();
	if (pthread_create(&b, NULL, raw2_back, &p) != 0 ||
	    pthread_create(&a, NULL, raw2_front, &p) != 0)
		sc_bench_fail("pthread_create");
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	t = took_since(t0);
	if (p.items != frames * rows)
		sc_bench_fail("raw2: items lost");
	free(p.mid.slots);
	return t;
}

/* ---- condvar: 2 threads, a mutex+condvar queue of ready stages --------- */

/*
 * The executor's protocol written the plain way: a stage is queued at
 * most once (`queued`), runs on one thread at a time (`running`), and a
 * kick while it runs (`again`) queues it once more when its turn ends. A
 * turn moves at most `budget` frames, as many as the output has room
 * for; a turn that moved frames kicks both neighbours (the consumer has
 * input, the producer room); one that stopped at the budget with input
 * left queues itself again. The rings between stages are spsc ck_rings,
 * so a turn takes no lock; the lock guards only the queue and the flags.
 */
struct cv_stage {
	struct raw_ring *in, *out; /* NULL at the source / the sink */
	uint64_t next;		   /* the source: frames made */
	bool queued, running, again;
};

struct cv_pool {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct cv_stage st[STAGES];
	uint32_t ready[STAGES]; /* a FIFO of stage indexes */
	uint32_t head, n;
	uint64_t frames;
	uint32_t budget;
	uint64_t items, want; /* the sink's rows; all of them */
	bool done;
};

/* Queue stage i unless it is queued; if it runs, once more after. Under
 * the lock. */
static void
cv_kick(struct cv_pool *p, uint32_t i)
{
	struct cv_stage *s = &p->st[i];

	if (s->running) {
		s->again = true;
		return;
	}
	if (s->queued)
		return;
	s->queued = true;
	p->ready[(p->head + p->n++) % STAGES] = i;
	(void)pthread_cond_signal(&p->cv);
}

/* One turn of stage i; returns frames moved, *more if it stopped at the
 * budget with work left. */
static uint32_t
cv_turn(struct cv_pool *p, uint32_t i, bool *more)
{
	struct cv_stage *s = &p->st[i];
	uint32_t room = s->out ? raw_room(s->out) : UINT32_MAX, n = 0;
	struct sc_batch *b;

	*more = false;
	if (!s->in) {
		if (!s->out)
			sc_bench_fail("condvar: a stage with neither end");
		for (; n < p->budget && n < room && s->next < p->frames; n++)
			if (!ck_ring_enqueue_spsc(&s->out->ring, s->out->slots,
						  make_frame(s->next++)))
				sc_bench_fail("condvar: room miscounted");
		*more = n == p->budget && s->next < p->frames;
		return n;
	}
	for (; n < p->budget && n < room &&
	       ck_ring_dequeue_spsc(&s->in->ring, s->in->slots, &b);
	     n++) {
		if (!s->out) {
			p->items += sink_frame(b); /* one sink: no race */
		} else if (!ck_ring_enqueue_spsc(&s->out->ring, s->out->slots,
						 b)) {
			sc_bench_fail("condvar: room miscounted");
		}
	}
	*more = n == p->budget && raw_size(s->in) > 0;
	return n;
}

static void *
cv_worker(void *arg)
{
	struct cv_pool *p = arg;

	(void)pthread_mutex_lock(&p->mu);
	for (;;) {
		uint32_t i, moved;
		bool more;

		while (!p->n && !p->done)
			(void)pthread_cond_wait(&p->cv, &p->mu);
		if (p->done)
			break;
		i = p->ready[p->head];
		p->head = (p->head + 1) % STAGES;
		p->n--;
		p->st[i].queued = false;
		p->st[i].running = true;
		(void)pthread_mutex_unlock(&p->mu);
		moved = cv_turn(p, i, &more);
		(void)pthread_mutex_lock(&p->mu);
		p->st[i].running = false;
		if (p->st[i].again || more) {
			p->st[i].again = false;
			cv_kick(p, i);
		}
		if (moved && i > 0)
			cv_kick(p, i - 1);
		if (moved && i < STAGES - 1)
			cv_kick(p, i + 1);
		if (i == STAGES - 1 && p->items == p->want) {
			p->done = true;
			(void)pthread_cond_broadcast(&p->cv);
		}
	}
	(void)pthread_mutex_unlock(&p->mu);
	return NULL;
}

static struct took
run_condvar(uint64_t frames, uint32_t rows, uint32_t budget)
{
	static struct cv_pool p;
	struct raw_ring rings[STAGES - 1];
	pthread_t th[2];
	struct took t0, t;

	memset(&p, 0, sizeof(p));
	if (pthread_mutex_init(&p.mu, NULL) != 0 ||
	    pthread_cond_init(&p.cv, NULL) != 0)
		sc_bench_fail("pthread init");
	p.frames = frames;
	p.budget = budget;
	p.want = frames * rows;
	for (int i = 0; i < STAGES - 1; i++)
		raw_ring_init(&rings[i]);
	for (int i = 0; i < STAGES; i++) {
		p.st[i].in = i > 0 ? &rings[i - 1] : NULL;
		p.st[i].out = i < STAGES - 1 ? &rings[i] : NULL;
	}
	t0 = took_now();
	cv_kick(&p, 0);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, cv_worker, &p) != 0)
			sc_bench_fail("pthread_create");
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	t = took_since(t0);
	if (p.items != p.want)
		sc_bench_fail("condvar: items lost");
	for (int i = 0; i < STAGES - 1; i++)
		free(rings[i].slots);
	(void)pthread_cond_destroy(&p.cv);
	(void)pthread_mutex_destroy(&p.mu);
	return t;
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

static struct took
run_edge_pair(uint64_t frames, uint32_t rows)
{
	struct sc_edge_opts o = {.ncols = 1, .capacity = RING_CAP};
	struct edge_pair p = {.frames = frames, .rows = rows};
	pthread_t a, b;
	struct took t0, t;

	atomic_init(&p.done, false);
	if (sc_edge_create(&o, &p.edge) != 0)
		sc_bench_fail("sc_edge_create");
	t0 = took_now();
	if (pthread_create(&b, NULL, edge_consumer, &p) != 0 ||
	    pthread_create(&a, NULL, edge_producer, &p) != 0)
		sc_bench_fail("pthread_create");
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	t = took_since(t0);
	if (p.items != frames * rows)
		sc_bench_fail("edge: items lost");
	sc_edge_destroy(p.edge);
	return t;
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

/* The unit pipeline on `workers` workers. */
static struct took
run_units(uint64_t frames, uint32_t rows, uint32_t workers, uint32_t budget)
{
	struct sc_edge_opts o = {.ncols = 1, .capacity = RING_CAP};
	struct sc_pool_opts po = {.workers = workers, .budget = budget};
	static struct toy toys[STAGES];
	struct sc_exec *ex;
	struct sc_pool *pool;
	uint32_t ids[STAGES];
	struct took t0, t;

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
	t0 = took_now();
	if (sc_exec_kick(ex, ids[0]) != 0)
		sc_bench_fail("sc_exec_kick");
	if (sc_exec_wait_idle(ex, 60ull * 1000000000ull, NULL) != 0)
		sc_bench_fail("sc_exec_wait_idle");
	t = took_since(t0);
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
	return t;
}

/* ---- driver ---------------------------------------------------------------
 */

/* Cases whose name contains this (the first argument that is not a flag)
 * run; NULL runs all. */
static const char *case_filter;

/* --budget N: only that budget (0: 1, 64 and 256). */
static uint32_t only_budget;

/* Emit one subject figure against one peer, by wall clock (items/s) and
 * by CPU (ns per item, all threads). */
static void
emit_vs(const char *name, struct took *ours, struct took *peer,
	const char *peer_name, int reps, double items)
{
	double ow[REPS], oc[REPS], pw[REPS], pc[REPS];
	char k[160];

	for (int r = 0; r < reps; r++) {
		ow[r] = items * 1e9 / (double)ours[r].wall;
		pw[r] = items * 1e9 / (double)peer[r].wall;
		oc[r] = (double)ours[r].cpu / items;
		pc[r] = (double)peer[r].cpu / items;
	}
	(void)snprintf(k, sizeof(k), "%s [wall]", name);
	sc_bench_emit("pipeline", k, "items/s",
		      sc_bench_median(ow, (size_t)reps), peer_name,
		      sc_bench_median(pw, (size_t)reps));
	(void)snprintf(k, sizeof(k), "%s [cpu]", name);
	sc_bench_emit("pipeline", k, "ns/item (CPU, all threads)",
		      sc_bench_median(oc, (size_t)reps), peer_name,
		      sc_bench_median(pc, (size_t)reps));
}

/* One edge: sc_edge between two threads against a raw ck_ring. */
static void
measure_edge(const char *kase, uint64_t frames, uint32_t rows)
{
	struct took ours[REPS], raw[REPS];
	int reps = sc_bench_quick() ? 3 : REPS;

	if (case_filter && !strstr(kase, case_filter))
		return;
	frames_pool_build(rows);
	/* Interleaved, so a noisy moment hurts both sides alike. */
	for (int r = 0; r < reps; r++) {
		raw[r] = run_raw_pair(frames, rows);
		ours[r] = run_edge_pair(frames, rows);
	}
	emit_vs(kase, ours, raw, "raw ck_ring, 2 threads", reps,
		(double)(frames * rows));
}

/* The 4-stage pipeline at one budget: the units on 2 workers against the
 * condvar pool of 2 threads and raw2, interleaved. */
static void
measure_pipeline(const char *kase, uint64_t frames, uint32_t rows,
		 uint32_t budget)
{
	struct took ours[REPS], cv[REPS], raw[REPS];
	int reps = sc_bench_quick() ? 3 : REPS;
	char name[128];

	if (case_filter && !strstr(kase, case_filter))
		return;
	if (only_budget && budget != only_budget)
		return;
	frames_pool_build(rows);
	for (int r = 0; r < reps; r++) {
		ours[r] = run_units(frames, rows, 2, budget);
		cv[r] = run_condvar(frames, rows, budget);
		raw[r] = run_raw2(frames, rows, budget);
	}
	(void)snprintf(name, sizeof(name), "%s, 2 threads, budget %u", kase,
		       budget);
	emit_vs(name, ours, cv, "mutex+condvar queue of stages, 2 threads",
		reps, (double)(frames * rows));
	emit_vs(name, ours, raw, "raw2: 2 threads x 2 fused stages, ck_ring",
		reps, (double)(frames * rows));
}

int
main(int argc, char **argv)
{
	static const uint32_t budgets[] = {1, 64, 256};
	bool quick = sc_bench_init(argc, argv);
	uint64_t small = quick ? 100000 : 2000000;
	uint64_t big = quick ? 2000 : 100000;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--budget") == 0 && i + 1 < argc)
			only_budget = (uint32_t)strtoul(argv[++i], NULL, 10);
		else if (argv[i][0] != '-')
			case_filter = argv[i];
	}
	measure_edge("edge 1-row", small, 1);
	measure_edge("edge 256-row", big, 256);
	for (size_t b = 0; b < sizeof(budgets) / sizeof(budgets[0]); b++) {
		measure_pipeline("pipeline 1-row", small, 1, budgets[b]);
		measure_pipeline("pipeline 256-row", big, 256, budgets[b]);
	}
	frames_pool_free();
	return 0;
}
