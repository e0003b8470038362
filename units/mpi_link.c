/*
 * mpi_link.c - remote edges over MPI. See mpi_link.h for the protocol;
 * sc_mpi_link_progress runs its steps in the order of that note: receive
 * what arrived (in arrival order per source, so an edge's frames keep
 * theirs; receives are posted ahead, see SLOT),
 * complete sends, put frames on the wire within credit, return credits,
 * beat the heart and declare silent peers dead.
 */
#include "units/mpi_link.h"

#include <inttypes.h>
#include <mpi.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "operators/base.h"
#include "operators/base_int.h"

enum { TAG_DATA = 1, TAG_CREDIT = 2, TAG_HB = 3, TAG_BIG = 4, TAG_BYE = 5 };

/*
 * Receives posted ahead. NSLOTS receives of any source and tag, SLOT
 * bytes each, are kept posted on the link's communicator, so a message
 * that arrives lands in one at once and progress only tests the oldest
 * (MPI_Test of a posted receive, where polling MPI_Improbe cost 0.1 to
 * 0.15 us more a frame in bench_mpi's ping-pong: its "posted recvs"
 * baseline). A message longer than SLOT would not fit: a data frame of
 * more than SLOT bytes goes as an announcement (TAG_BIG: its length, 8
 * bytes) on the communicator and then the frame itself on a second
 * communicator (`big`), which the receiver posts a receive for from that
 * source when it meets the announcement. Both keep their order per
 * source (MPI's non-overtaking rule; receives of one source on `big` are
 * posted in announcement order), and posted receives are matched in the
 * order they were posted, which is the order the slots are tested and
 * reposted in: so every edge's frames keep theirs.
 */
#define SLOT   4096
#define NSLOTS 32

struct frame {
	uint8_t *data; /* a whole wire frame, owned */
	size_t len;    /* its bytes */
};

/* A FIFO of frames (a ring that doubles). */
struct fq {
	struct frame *v; /* cap slots */
	size_t head;	 /* index of the oldest */
	size_t n;	 /* frames held */
	size_t cap;	 /* slots, a power of 2 or 0 */
};

struct edge {
	uint32_t id;	   /* the caller's edge id */
	int producer;	   /* rank of the producer end */
	int consumer;	   /* rank of the consumer end */
	uint32_t credit;   /* producer: frames it may still put out */
	uint64_t next_seq; /* producer: the number the next frame gets */
	uint64_t expect;   /* consumer: the number the next must carry */
	uint32_t owed;	   /* consumer: taken frames not yet credited */
	bool broken;	   /* consumer: a gap was seen */
	char why[160];	   /* consumer: the gap's message */
	struct fq out;	   /* producer: frames waiting for credit */
	struct fq in;	   /* consumer: frames arrived, not taken */
};

/* A pending send: its buffer is freed when it completes. */
struct sreq {
	MPI_Request r; /* the MPI_Isend */
	uint8_t *buf;  /* owned, or NULL (the heartbeat byte) */
	int peer;      /* its destination */
};

/* A received message, or a large frame's receive on `big`, handled in
 * arrival order per source. */
struct rreq {
	MPI_Request r; /* MPI_REQUEST_NULL once it holds its bytes */
	uint8_t *buf;  /* owned until handed on */
	int len;       /* its bytes */
	int src;       /* its source */
	int tag;       /* its kind */
};

/* A receive posted ahead (see SLOT). */
struct slot {
	MPI_Request r; /* the MPI_Irecv, MPI_REQUEST_NULL when not posted */
	uint8_t *buf;  /* SLOT bytes, owned */
};

struct sc_mpi_link {
	MPI_Comm comm;		     /* a duplicate of MPI_COMM_WORLD */
	MPI_Comm big;		     /* a duplicate of comm: large frames */
	struct slot slots[NSLOTS];   /* posted in ring order from head */
	size_t slot_head;	     /* the oldest posted slot */
	bool slots_on;		     /* the slots are posted */
	bool *blocked;		     /* size: per source, for one pass */
	int rank;		     /* this rank */
	int size;		     /* ranks */
	struct sc_mpi_link_opts o;   /* as created */
	struct edge *edges;	     /* nedges declared */
	size_t nedges, ecap;	     /* declared, allocated */
	struct sreq *sends;	     /* nsends pending */
	size_t nsends, scap;	     /* pending, allocated */
	struct rreq *recvs;	     /* nrecvs pending, in matching order */
	size_t nrecvs, rcap;	     /* pending, allocated */
	uint64_t *heard;	     /* size: when each peer was last heard */
	bool *dead;		     /* size: peers declared dead */
	bool *bye;		     /* size: peers whose last message came */
	bool coll_left;		     /* a gather timed out: MPI holds it */
	bool any_dead;		     /* some peer is dead */
	uint64_t last_beat;	     /* when heartbeats last went out */
	bool started;		     /* progress ran: the edges are fixed */
	uint8_t beat;		     /* the heartbeat's byte */
	bool wave_on;		     /* a wave is in flight */
	MPI_Request wave;	     /* its MPI_Iallreduce */
	int64_t wave_in[3];	     /* sent, received, active: this rank's */
	int64_t wave_out[3];	     /* the sums */
	int64_t prev[3];	     /* the last wave's sums */
	bool have_prev;		     /* prev holds a wave */
	struct sc_mpi_link_stats st; /* counters */
};

/* --- errors and queues --------------------------------------------------- */

/* The clock of liveness (heartbeats, silence): CLOCK_MONOTONIC_COARSE,
 * a few ns where sc_clock_ns's precise clock costs tens; its tick (a few
 * ms) is far below heartbeat_ns and dead_ns. Progress reads it on every
 * pass, and in bench_mpi's ping-pong the precise clock was a tenth of
 * the receiving rank's time. */

/*
 * A public function's error named after it: the message made
 * "<fn>: <detail>" unless it names fn already (as sc__errwrap in
 * libsubcirc, whose internals this library does not link).
 */
static int
link_errwrap(int code, const char *fn)
{
	char inner[512];

	if (code >= 0 || strstr(sc_errmsg(), fn))
		return code;
	(void)snprintf(inner, sizeof(inner), "%s", sc_errdetail());
	return sc_errorf(code, "%s: %s", fn,
			 inner[0] ? inner : sc_strerror(code));
}

static uint64_t
live_ns(void)
{
#ifdef CLOCK_MONOTONIC_COARSE
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) == 0)
		return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
	return sc_clock_ns();
}

static int
mpi_fail(int rc, const char *what)
{
	char words[MPI_MAX_ERROR_STRING];
	int len = 0;

	if (MPI_Error_string(rc, words, &len) != MPI_SUCCESS)
		(void)snprintf(words, sizeof(words), "error %d", rc);
	return sc__fail(SC_EIO, "mpi_link: %s: %s", what, words);
}

static int
fq_push(struct fq *q, struct frame f)
{
	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 8;
		struct frame *v = malloc(cap * sizeof(*v));

		if (!v)
			return sc__fail(SC_ENOMEM, "mpi_link: a queue of %zu",
					cap);
		for (size_t i = 0; i < q->n; i++)
			v[i] = q->v[(q->head + i) & (q->cap - 1)];
		free(q->v);
		q->v = v;
		q->head = 0;
		q->cap = cap;
	}
	q->v[(q->head + q->n) & (q->cap - 1)] = f;
	q->n++;
	return 0;
}

static struct frame
fq_pop(struct fq *q)
{
	struct frame f = q->v[q->head];

	q->head = (q->head + 1) & (q->cap - 1);
	q->n--;
	return f;
}

static size_t
fq_drop(struct fq *q)
{
	size_t n = q->n;

	while (q->n)
		free(fq_pop(q).data);
	return n;
}

static int
grow(void **v, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap * 2 : 16;
	void *p;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	p = realloc(*v, c * size);
	if (!p)
		return sc__fail(SC_ENOMEM, "mpi_link: %zu requests", c);
	*v = p;
	*cap = c;
	return 0;
}

static struct edge *
edge_find(struct sc_mpi_link *l, uint32_t id)
{
	for (size_t i = 0; i < l->nedges; i++)
		if (l->edges[i].id == id)
			return &l->edges[i];
	return NULL;
}

/* --- life ------------------------------------------------------------------
 */

void
sc_mpi_link_opts_default(struct sc_mpi_link_opts *o)
{
	if (o)
		*o = (struct sc_mpi_link_opts){.credits = 32,
					       .outbox = 64,
					       .heartbeat_ns = 100000000,
					       .dead_ns = 2000000000,
					       .collective_ns = 60000000000};
}

static int
check_mpi(void)
{
	int inited = 0, level = 0, main_thread = 0;

	if (MPI_Initialized(&inited) != MPI_SUCCESS || !inited)
		return sc__fail(SC_ESTATE, "mpi_link: MPI is not initialised");
	if (MPI_Query_thread(&level) != MPI_SUCCESS ||
	    level < MPI_THREAD_FUNNELED)
		return sc__fail(SC_ESTATE,
				"mpi_link: MPI gives thread level %d, below "
				"MPI_THREAD_FUNNELED",
				level);
	if (MPI_Is_thread_main(&main_thread) != MPI_SUCCESS || !main_thread)
		return sc__fail(SC_ESTATE,
				"mpi_link: not the thread that initialised "
				"MPI (FUNNELED)");
	return 0;
}

/* The duplicate by MPI_Comm_idup, tested (and yielding) to a deadline:
 * under a loaded host, MPI_Comm_dup of a second link (after the first was
 * freed) hung on every rank in ompi_comm_nextcid's blocking wait (seen in
 * tests/mpi's runtime tests, two jobs at once on 2 cores); polling the
 * request drives MPI's progress from this thread instead, and a rank that
 * never joins is an error that says so. */
static int
dup_comm(struct sc_mpi_link *l, MPI_Comm from, MPI_Comm *to)
{
	uint64_t deadline =
	    l->o.collective_ns
		? sc__deadline_add(sc_clock_ns(), l->o.collective_ns)
		: UINT64_MAX;
	MPI_Request r;
	int done = 0, rc = MPI_Comm_idup(from, to, &r);

	if (rc != MPI_SUCCESS)
		return mpi_fail(rc, "MPI_Comm_idup");
	for (;;) {
		rc = MPI_Test(&r, &done, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS)
			return mpi_fail(rc, "MPI_Test (MPI_Comm_idup)");
		if (done)
			return 0;
		if (sc_clock_ns() >= deadline)
			return sc__fail(SC_ETIMEDOUT,
					"mpi_link: MPI_Comm_idup: not every "
					"rank joined within %" PRIu64 " ms",
					l->o.collective_ns / 1000000);
		(void)sched_yield();
	}
}

// NOLINTBEGIN(clang-analyzer-optin.mpi.MPI-Checker)
static int
link_comm(struct sc_mpi_link *l)
{
	int rc = dup_comm(l, MPI_COMM_WORLD, &l->comm);

	if (rc)
		return rc;
	if ((rc = dup_comm(l, l->comm, &l->big)) != 0) {
		(void)MPI_Comm_free(&l->comm);
		return rc;
	}
	rc = MPI_Comm_set_errhandler(l->comm, MPI_ERRORS_RETURN);
	if (rc == MPI_SUCCESS)
		rc = MPI_Comm_set_errhandler(l->big, MPI_ERRORS_RETURN);
	if (rc == MPI_SUCCESS)
		rc = MPI_Comm_rank(l->comm, &l->rank);
	if (rc == MPI_SUCCESS)
		rc = MPI_Comm_size(l->comm, &l->size);
	if (rc != MPI_SUCCESS) {
		(void)MPI_Comm_free(&l->big);
		(void)MPI_Comm_free(&l->comm);
		return mpi_fail(rc, "setting up the communicator");
	}
	return 0;
}
// NOLINTEND(clang-analyzer-optin.mpi.MPI-Checker)

static int
mpi_link_create_body(const struct sc_mpi_link_opts *o, struct sc_mpi_link **out)
{
	struct sc_mpi_link *l;
	bool slots_ok = true;
	uint64_t now;
	int rc;

	if (!o || !out || !o->credits || !o->outbox ||
	    o->dead_ns <= o->heartbeat_ns)
		return sc__fail(SC_EINVAL,
				"mpi_link: NULL, no credit or outbox, or "
				"dead_ns not above heartbeat_ns");
	rc = check_mpi();
	if (rc)
		return rc;
	l = calloc(1, sizeof(*l));
	if (!l)
		return sc__fail(SC_ENOMEM, "mpi_link: the link");
	l->o = *o;
	rc = link_comm(l);
	if (rc)
		goto free_link;
	l->heard = calloc((size_t)l->size, sizeof(*l->heard));
	l->dead = calloc((size_t)l->size, sizeof(*l->dead));
	l->blocked = calloc((size_t)l->size, sizeof(*l->blocked));
	l->bye = calloc((size_t)l->size, sizeof(*l->bye));
	for (int i = 0; i < NSLOTS; i++) {
		l->slots[i].r = MPI_REQUEST_NULL;
		l->slots[i].buf = malloc(SLOT);
		slots_ok = slots_ok && l->slots[i].buf;
	}
	if (!l->heard || !l->dead || !l->blocked || !l->bye || !slots_ok) {
		rc = sc__fail(SC_ENOMEM, "mpi_link: %d peers", l->size);
		goto free_comm;
	}
	now = live_ns();
	for (int i = 0; i < l->size; i++)
		l->heard[i] = now;
	l->last_beat = 0;
	*out = l;
	return 0;
free_comm:
	for (int i = 0; i < NSLOTS; i++)
		free(l->slots[i].buf);
	free(l->blocked);
	(void)MPI_Comm_free(&l->big);
	(void)MPI_Comm_free(&l->comm);
free_link:
	free(l->heard);
	free(l->dead);
	free(l->bye);
	free(l);
	return rc;
}

/* Give pending requests a bounded moment to finish, then let go: a send
 * to a dead peer may never complete, so its buffer is leaked on purpose
 * (MPI may still read it). */
static void
drain_requests(struct sc_mpi_link *l)
{
	uint64_t until = sc_clock_ns() + 200000000;
	size_t nslots = 0;

	for (int i = 0; i < NSLOTS; i++)
		if (l->slots[i].r != MPI_REQUEST_NULL) {
			(void)MPI_Cancel(&l->slots[i].r);
			nslots++;
		}
	while ((l->nsends || l->nrecvs || nslots) && sc_clock_ns() < until) {
		nslots = 0;
		for (int i = 0; i < NSLOTS; i++) {
			int done = 0;

			if (l->slots[i].r == MPI_REQUEST_NULL)
				continue;
			if (MPI_Test(&l->slots[i].r, &done,
				     MPI_STATUS_IGNORE) != MPI_SUCCESS ||
			    !done)
				nslots++;
		}
		size_t k = 0;

		for (size_t i = 0; i < l->nsends; i++) {
			int done = 0;

			if (MPI_Test(&l->sends[i].r, &done,
				     MPI_STATUS_IGNORE) == MPI_SUCCESS &&
			    done)
				free(l->sends[i].buf);
			else
				l->sends[k++] = l->sends[i];
		}
		l->nsends = k;
		k = 0;
		for (size_t i = 0; i < l->nrecvs; i++) {
			int done = 0;

			if (MPI_Test(&l->recvs[i].r, &done,
				     MPI_STATUS_IGNORE) == MPI_SUCCESS &&
			    done)
				free(l->recvs[i].buf);
			else
				l->recvs[k++] = l->recvs[i];
		}
		l->nrecvs = k;
	}
	for (size_t i = 0; i < l->nsends; i++)
		(void)MPI_Request_free(&l->sends[i].r);
	for (size_t i = 0; i < l->nrecvs; i++)
		(void)MPI_Request_free(&l->recvs[i].r);
	/* A slot MPI still holds keeps its buffer (leaked, as a send's). */
	for (int i = 0; i < NSLOTS; i++)
		if (l->slots[i].r != MPI_REQUEST_NULL) {
			(void)MPI_Request_free(&l->slots[i].r);
			l->slots[i].buf = NULL;
		}
}

static int match_arrivals(struct sc_mpi_link *l);
static int complete_receives(struct sc_mpi_link *l);
static int complete_sends(struct sc_mpi_link *l);
static int isend(struct sc_mpi_link *l, uint8_t *buf, size_t len, int peer,
		 int tag);
static void declare_dead(struct sc_mpi_link *l, int peer);

/* Requests still pending with a live peer: its receives and our sends. */
static bool
live_requests(const struct sc_mpi_link *l)
{
	for (size_t i = 0; i < l->nrecvs; i++)
		if (!l->dead[l->recvs[i].src])
			return true;
	for (size_t i = 0; i < l->nsends; i++)
		if (!l->dead[l->sends[i].peer])
			return true;
	return false;
}

/*
 * Leaving (mpi_link.h, sc_mpi_link_destroy): a last message (TAG_BYE) to
 * every live peer, then receive until every live peer's last message has
 * come and our sends and its large frames are done. Whether that
 * happened with every peer alive and no collective left to MPI: only
 * then may the communicators be freed. Open MPI 4 gives the next
 * communicator the id of a freed one, and a message that reaches a rank
 * after it freed the communicator it was sent on is put in that next
 * one at its old sequence number, where it takes the place of the new
 * communicator's message of that number, which is lost (tests/mpi,
 * relink: a heartbeat sent to a rank that had left cost the next link
 * frames; in the runtime, a wave's or MPI_Comm_idup's message, which
 * then never completed on every rank).
 */
static bool
leave(struct sc_mpi_link *l)
{
	uint64_t deadline =
	    l->o.collective_ns
		? sc__deadline_add(sc_clock_ns(), l->o.collective_ns)
		: UINT64_MAX;

	for (int p = 0; p < l->size; p++)
		if (p != l->rank && !l->dead[p] &&
		    isend(l, NULL, 1, p, TAG_BYE) != 0)
			return false;
	for (;;) {
		uint64_t now;
		bool all = true;

		if (match_arrivals(l) || complete_receives(l) ||
		    complete_sends(l))
			return false;
		now = live_ns();
		for (int p = 0; p < l->size; p++) {
			if (p == l->rank || l->dead[p] || l->bye[p])
				continue;
			/* A peer that has not left beats until it does. */
			if (now - l->heard[p] > l->o.dead_ns)
				declare_dead(l, p);
			else
				all = false;
		}
		if (all && !live_requests(l))
			return !l->any_dead && !l->wave_on && !l->coll_left;
		if (sc_clock_ns() >= deadline)
			return false;
		(void)sched_yield();
	}
}

void
sc_mpi_link_destroy(struct sc_mpi_link *l)
{
	bool clean;

	if (!l)
		return;
	clean = leave(l);
	drain_requests(l);
	for (size_t i = 0; i < l->nedges; i++) {
		(void)fq_drop(&l->edges[i].out);
		(void)fq_drop(&l->edges[i].in);
		free(l->edges[i].out.v);
		free(l->edges[i].in.v);
	}
	for (int i = 0; i < NSLOTS; i++)
		free(l->slots[i].buf);
	free(l->blocked);
	/* Not clean (a dead peer, the deadline, a collective left to MPI):
	 * a message may still come on them, so they are kept for good,
	 * their ids never reused (leave). */
	if (clean) {
		(void)MPI_Comm_free(&l->big);
		(void)MPI_Comm_free(&l->comm);
	}
	free(l->edges);
	free(l->sends);
	free(l->recvs);
	free(l->heard);
	free(l->dead);
	free(l->bye);
	free(l);
}

int
sc_mpi_link_rank(const struct sc_mpi_link *l)
{
	return l ? l->rank : -1;
}

int
sc_mpi_link_size(const struct sc_mpi_link *l)
{
	return l ? l->size : 0;
}

static int
mpi_link_add_edge_body(struct sc_mpi_link *l, uint32_t edge, int producer,
		       int consumer)
{
	struct edge *e;
	int rc;

	if (!l || producer < 0 || consumer < 0 || producer >= l->size ||
	    consumer >= l->size || producer == consumer)
		return sc__fail(SC_EINVAL,
				"mpi_link: edge %u: ranks %d -> %d (of %d)",
				edge, producer, consumer, l ? l->size : 0);
	if (l->started)
		return sc__fail(SC_ESTATE,
				"mpi_link: edge %u declared after progress",
				edge);
	if (edge_find(l, edge))
		return sc__fail(SC_EINVAL, "mpi_link: edge %u declared twice",
				edge);
	rc = grow((void **)&l->edges, &l->ecap, l->nedges + 1,
		  sizeof(*l->edges));
	if (rc)
		return rc;
	e = &l->edges[l->nedges++];
	*e = (struct edge){.id = edge,
			   .producer = producer,
			   .consumer = consumer,
			   .credit = l->o.credits,
			   .next_seq = 1,
			   .expect = 1};
	return 0;
}

/* --- sending ----------------------------------------------------------------
 */

/* The analyzer's MPI checker wants an MPI_Wait for every request; this
 * module completes them with MPI_Test from progress on purpose (a wait
 * would block the link's owner), so it is off for the functions that
 * start requests. */
// NOLINTBEGIN(clang-analyzer-optin.mpi.MPI-Checker)
static int
isend_on(struct sc_mpi_link *l, MPI_Comm comm, uint8_t *buf, size_t len,
	 int peer, int tag)
{
	const void *p = buf ? (const void *)buf : (const void *)&l->beat;
	int rc = grow((void **)&l->sends, &l->scap, l->nsends + 1,
		      sizeof(*l->sends));
	struct sreq *s;

	if (rc)
		return rc;
	s = &l->sends[l->nsends];
	rc = MPI_Isend(p, (int)len, MPI_BYTE, peer, tag, comm, &s->r);
	if (rc != MPI_SUCCESS)
		return mpi_fail(rc, "MPI_Isend");
	s->buf = buf;
	s->peer = peer;
	l->nsends++;
	return 0;
}

/* A message to `peer`: on the communicator when it fits a slot (SLOT),
 * else announced there and sent on `big` (see SLOT). */
static int
isend(struct sc_mpi_link *l, uint8_t *buf, size_t len, int peer, int tag)
{
	uint8_t *a;
	int rc;

	if (len <= SLOT)
		return isend_on(l, l->comm, buf, len, peer, tag);
	/* Room for both requests first: an announcement must not go out
	 * without its frame. */
	if ((rc = grow((void **)&l->sends, &l->scap, l->nsends + 2,
		       sizeof(*l->sends))) != 0)
		return rc;
	if (!(a = malloc(8)))
		return sc__fail(SC_ENOMEM, "mpi_link: an announcement");
	for (int i = 0; i < 8; i++)
		a[i] = (uint8_t)((uint64_t)len >> (8 * i));
	if ((rc = isend_on(l, l->comm, a, 8, peer, TAG_BIG)) != 0) {
		free(a);
		return rc;
	}
	return isend_on(l, l->big, buf, len, peer, tag);
}

// NOLINTEND(clang-analyzer-optin.mpi.MPI-Checker)

/* Frames of e within credit onto the wire, each stamped with its
 * number (bytes 24..31 of the header, little-endian). */
static int
edge_flush(struct sc_mpi_link *l, struct edge *e)
{
	while (e->credit && e->out.n) {
		struct frame f = fq_pop(&e->out);
		int rc;

		for (int i = 0; i < 8; i++)
			f.data[24 + i] = (uint8_t)(e->next_seq >> (8 * i));
		rc = isend(l, f.data, f.len, e->consumer, TAG_DATA);
		if (rc) {
			free(f.data);
			return rc;
		}
		e->next_seq++;
		e->credit--;
		l->st.frames_sent++;
		l->st.bytes_sent += f.len;
	}
	if (e->out.n)
		l->st.credit_waits++;
	return 0;
}

bool
sc_mpi_link_room(const struct sc_mpi_link *l, uint32_t edge)
{
	const struct edge *e =
	    l ? edge_find((struct sc_mpi_link *)l, edge) : NULL;

	return e && e->producer == l->rank && !l->dead[e->consumer] &&
	       (e->credit > 0 || e->out.n < l->o.outbox);
}

static int
mpi_link_send_body(struct sc_mpi_link *l, uint32_t edge,
		   struct sc_wire_buf *frame)
{
	struct sc_wire_header h;
	struct edge *e;
	int rc;

	if (!l || !frame || !(e = edge_find(l, edge)) || e->producer != l->rank)
		return sc__fail(SC_EINVAL,
				"mpi_link: send on edge %u: no such edge here",
				edge);
	if (l->dead[e->consumer])
		return sc__fail(SC_EDEAD, "mpi_link: edge %u: rank %d is dead",
				edge, e->consumer);
	rc = sc_wire_peek(frame->data, frame->len, &h);
	if (rc)
		return rc;
	if (h.edge != edge)
		return sc__fail(SC_EINVAL,
				"mpi_link: a frame of edge %u sent on %u",
				h.edge, edge);
	if (e->credit == 0 && e->out.n >= l->o.outbox)
		return sc__fail(SC_EFULL,
				"mpi_link: edge %u: no credit and "
				"a full outbox",
				edge);
	rc = fq_push(&e->out, (struct frame){frame->data, frame->len});
	if (rc)
		return rc;
	sc_wire_buf_init(frame);
	return edge_flush(l, e);
}

/* --- receiving ----------------------------------------------------------- */

static int
credit_return(struct sc_mpi_link *l, struct edge *e)
{
	uint32_t half = (l->o.credits + 1) / 2;
	uint8_t *m;
	int rc;

	if (!e->owed || (e->owed < half && e->in.n) || l->dead[e->producer])
		return 0;
	m = malloc(8);
	if (!m)
		return sc__fail(SC_ENOMEM, "mpi_link: a credit message");
	for (int i = 0; i < 4; i++) {
		m[i] = (uint8_t)(e->id >> (8 * i));
		m[4 + i] = (uint8_t)(e->owed >> (8 * i));
	}
	rc = isend(l, m, 8, e->producer, TAG_CREDIT);
	if (rc) {
		free(m);
		return rc;
	}
	e->owed = 0;
	l->st.credit_msgs++;
	return 0;
}

static int
mpi_link_recv_body(struct sc_mpi_link *l, uint32_t edge,
		   struct sc_wire_buf *out)
{
	struct edge *e;
	struct frame f;

	if (!l || !out || !(e = edge_find(l, edge)) || e->consumer != l->rank)
		return sc__fail(SC_EINVAL,
				"mpi_link: recv on edge %u: no such edge here",
				edge);
	if (!e->in.n) {
		if (e->broken)
			return sc__fail(SC_ESTATE, "%s", e->why);
		if (l->dead[e->producer])
			return sc__fail(SC_EDEAD,
					"mpi_link: edge %u: rank %d is dead",
					edge, e->producer);
		return SC_EEMPTY;
	}
	f = fq_pop(&e->in);
	free(out->data);
	out->data = f.data;
	out->len = f.len;
	out->cap = f.len;
	e->owed++;
	return credit_return(l, e);
}

/* An arrived data frame: to its edge's inbox, in order, or refused. */
static int
on_data(struct sc_mpi_link *l, struct rreq *r)
{
	struct sc_wire_header h;
	struct edge *e;
	int rc;

	l->st.frames_recv++;
	l->st.bytes_recv += (uint64_t)r->len;
	if (sc_wire_peek(r->buf, (size_t)r->len, &h) != 0 ||
	    !(e = edge_find(l, h.edge)) || e->consumer != l->rank ||
	    e->producer != r->src) {
		free(r->buf); /* not a frame of ours: nothing to keep */
		return 0;
	}
	if (sc_wire_seq_check(&e->expect, h.seq, h.edge) != 0) {
		if (!e->broken)
			(void)snprintf(e->why, sizeof(e->why), "%s",
				       sc_errdetail());
		e->broken = true;
		free(r->buf);
		return 0;
	}
	rc = fq_push(&e->in, (struct frame){r->buf, (size_t)r->len});
	if (rc)
		free(r->buf);
	return rc;
}

static void
on_credit(struct sc_mpi_link *l, const struct rreq *r)
{
	uint32_t id = 0, n = 0;
	struct edge *e;

	if (r->len != 8)
		return;
	for (int i = 0; i < 4; i++) {
		id |= (uint32_t)r->buf[i] << (8 * i);
		n |= (uint32_t)r->buf[4 + i] << (8 * i);
	}
	e = edge_find(l, id);
	if (e && e->producer == l->rank && e->consumer == r->src)
		e->credit += n;
}

static int
post_slot(struct sc_mpi_link *l, struct slot *s)
{
	int rc = MPI_Irecv(s->buf, SLOT, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
			   l->comm, &s->r);

	return rc == MPI_SUCCESS ? 0 : mpi_fail(rc, "MPI_Irecv (a slot)");
}

/* The message slot s holds (status st) into r: its bytes copied, or for
 * an announcement the receive of the large frame it announces, posted
 * on `big` from the same source. *keep: r holds something. */
static int
take_slot(struct sc_mpi_link *l, const struct slot *s, const MPI_Status *st,
	  struct rreq *r, bool *keep)
{
	int count = 0, rc = MPI_Get_count(st, MPI_BYTE, &count);
	uint64_t len = 0;

	*keep = false;
	if (rc != MPI_SUCCESS)
		return mpi_fail(rc, "MPI_Get_count");
	r->src = st->MPI_SOURCE;
	r->tag = st->MPI_TAG;
	r->r = MPI_REQUEST_NULL;
	if (r->tag != TAG_BIG) {
		if (!(r->buf = malloc(count > 0 ? (size_t)count : 1)))
			return sc__fail(SC_ENOMEM, "mpi_link: %d bytes", count);
		memcpy(r->buf, s->buf, (size_t)count);
		r->len = count;
		*keep = true;
		return 0;
	}
	for (int i = 0; count == 8 && i < 8; i++)
		len |= (uint64_t)s->buf[i] << (8 * i);
	if (count != 8 || len <= SLOT || len > INT32_MAX)
		return 0; /* not an announcement of ours: nothing to keep */
	if (!(r->buf = malloc((size_t)len)))
		return sc__fail(SC_ENOMEM, "mpi_link: %" PRIu64 " bytes", len);
	r->len = (int)len;
	r->tag = TAG_DATA;
	rc = MPI_Irecv(r->buf, (int)len, MPI_BYTE, r->src, TAG_DATA, l->big,
		       &r->r);
	if (rc != MPI_SUCCESS) {
		free(r->buf);
		return mpi_fail(rc, "MPI_Irecv (a large frame)");
	}
	*keep = true;
	return 0;
}

/* Take what the slots received, oldest first, into recvs, posting each
 * slot again (the newest then): see SLOT. */
static int
match_arrivals(struct sc_mpi_link *l)
{
	if (!l->slots_on) {
		for (int i = 0; i < NSLOTS; i++) {
			int rc = post_slot(l, &l->slots[i]);

			if (rc)
				return rc;
		}
		l->slots_on = true;
	}
	for (;;) {
		struct slot *s = &l->slots[l->slot_head];
		MPI_Status st;
		bool keep = false;
		int done = 0, rc, again;

		rc = grow((void **)&l->recvs, &l->rcap, l->nrecvs + 1,
			  sizeof(*l->recvs));
		if (rc)
			return rc;
		rc = MPI_Test(&s->r, &done, &st);
		if (rc != MPI_SUCCESS)
			return mpi_fail(rc, "MPI_Test (a slot)");
		if (!done)
			return 0;
		rc = take_slot(l, s, &st, &l->recvs[l->nrecvs], &keep);
		if (keep)
			l->nrecvs++;
		/* Post it again whatever came of it: the ring stays whole. */
		again = post_slot(l, s);
		l->slot_head = (l->slot_head + 1) % NSLOTS;
		if (rc || again)
			return rc ? rc : again;
	}
}

/* Handle what has arrived, in arrival order per source (the order every
 * edge needs: an edge has one producer); a large frame still on its way
 * holds back only its own source's later messages, so a peer that dies
 * mid-frame does not silence the others' heartbeats. */
static int
complete_receives(struct sc_mpi_link *l)
{
	size_t k = 0;
	int rc = 0;

	memset(l->blocked, 0, (size_t)l->size * sizeof(*l->blocked));
	for (size_t i = 0; i < l->nrecvs; i++) {
		struct rreq *r = &l->recvs[i];
		int done = 1;

		if (rc || l->blocked[r->src]) {
			l->recvs[k++] = *r;
			continue;
		}
		if (r->r != MPI_REQUEST_NULL) {
			int t = MPI_Test(&r->r, &done, MPI_STATUS_IGNORE);

			if (t != MPI_SUCCESS) {
				rc = mpi_fail(t, "MPI_Test (receive)");
				l->recvs[k++] = *r;
				continue;
			}
		}
		if (!done) {
			l->blocked[r->src] = true;
			l->recvs[k++] = *r;
			continue;
		}
		l->heard[r->src] = live_ns();
		if (r->tag == TAG_DATA) {
			rc = on_data(l, r);
			continue;
		}
		if (r->tag == TAG_CREDIT)
			on_credit(l, r);
		if (r->tag == TAG_BYE)
			l->bye[r->src] = true; /* it left: no more beats */
		free(r->buf);
	}
	l->nrecvs = k;
	return rc;
}

static int
complete_sends(struct sc_mpi_link *l)
{
	size_t k = 0;
	int rc = 0;

	for (size_t i = 0; i < l->nsends; i++) {
		int done = 0;

		if (rc == 0 &&
		    (rc = MPI_Test(&l->sends[i].r, &done, MPI_STATUS_IGNORE)) !=
			MPI_SUCCESS)
			rc = mpi_fail(rc, "MPI_Test (send)");
		if (done)
			free(l->sends[i].buf);
		else
			l->sends[k++] = l->sends[i];
	}
	l->nsends = k;
	return rc;
}

/* --- liveness ------------------------------------------------------------- */

static void
declare_dead(struct sc_mpi_link *l, int peer)
{
	l->dead[peer] = true;
	l->any_dead = true;
	for (size_t i = 0; i < l->nedges; i++) {
		struct edge *e = &l->edges[i];

		if (e->producer == l->rank && e->consumer == peer)
			l->st.undeliverable += fq_drop(&e->out);
	}
}

static int
heartbeat(struct sc_mpi_link *l, uint64_t now)
{
	int rc = 0;

	if (now - l->last_beat >= l->o.heartbeat_ns) {
		l->last_beat = now;
		for (int p = 0; p < l->size && rc == 0; p++)
			if (p != l->rank && !l->dead[p])
				rc = isend(l, NULL, 1, p, TAG_HB);
	}
	for (int p = 0; p < l->size; p++)
		if (p != l->rank && !l->dead[p] && !l->bye[p] &&
		    now - l->heard[p] > l->o.dead_ns)
			declare_dead(l, p);
	return rc;
}

static int
mpi_link_progress_body(struct sc_mpi_link *l)
{
	int rc;

	if (!l)
		return sc__fail(SC_EINVAL, "mpi_link: NULL");
	l->started = true;
	rc = match_arrivals(l);
	if (rc == 0)
		rc = complete_receives(l);
	if (rc == 0)
		rc = complete_sends(l);
	for (size_t i = 0; rc == 0 && i < l->nedges; i++) {
		struct edge *e = &l->edges[i];

		if (e->producer == l->rank && !l->dead[e->consumer])
			rc = edge_flush(l, e);
		else if (e->consumer == l->rank)
			rc = credit_return(l, e);
	}
	if (rc == 0)
		rc = heartbeat(l, live_ns());
	return rc;
}

/* --- idle ------------------------------------------------------------------
 */

static bool
link_holds_frames(const struct sc_mpi_link *l)
{
	for (size_t i = 0; i < l->nedges; i++)
		if (l->edges[i].out.n || l->edges[i].in.n)
			return true;
	return false;
}

/* As isend: the wave's request is completed by MPI_Test. */
// NOLINTBEGIN(clang-analyzer-optin.mpi.MPI-Checker)
static int
mpi_link_quiet_body(struct sc_mpi_link *l, bool passive, bool *idle)
{
	int done = 0, rc;

	if (!l || !idle)
		return sc__fail(SC_EINVAL, "mpi_link: NULL");
	rc = sc_mpi_link_progress(l);
	if (rc)
		return rc;
	if (l->any_dead)
		return sc__fail(SC_EDEAD, "mpi_link: a peer is dead");
	*idle = false;
	if (!l->wave_on) {
		l->wave_in[0] = (int64_t)l->st.frames_sent;
		l->wave_in[1] = (int64_t)l->st.frames_recv;
		l->wave_in[2] = !passive || link_holds_frames(l);
		rc = MPI_Iallreduce(l->wave_in, l->wave_out, 3, MPI_INT64_T,
				    MPI_SUM, l->comm, &l->wave);
		if (rc != MPI_SUCCESS)
			return mpi_fail(rc, "MPI_Iallreduce");
		l->wave_on = true;
	}
	rc = MPI_Test(&l->wave, &done, MPI_STATUS_IGNORE);
	if (rc != MPI_SUCCESS)
		return mpi_fail(rc, "MPI_Test (wave)");
	if (!done)
		return 0;
	l->wave_on = false;
	l->st.waves++;
	*idle = l->have_prev && l->wave_out[2] == 0 &&
		l->wave_out[0] == l->wave_out[1] &&
		!memcmp(l->prev, l->wave_out, sizeof(l->prev));
	memcpy(l->prev, l->wave_out, sizeof(l->prev));
	/* After idle, the next wait starts afresh. */
	l->have_prev = !*idle;
	return 0;
}

// NOLINTEND(clang-analyzer-optin.mpi.MPI-Checker)

bool
sc_mpi_link_peer_dead(const struct sc_mpi_link *l, int rank)
{
	return l && rank >= 0 && rank < l->size && l->dead[rank];
}

void
sc_mpi_link_stats(const struct sc_mpi_link *l, struct sc_mpi_link_stats *out)
{
	if (l && out)
		*out = l->st;
}

/* --- gather ----------------------------------------------------------------
 */

/* Wait for request r while the link keeps moving (heartbeats, frames),
 * so a peer that dies meanwhile is found instead of waited for, and a
 * live peer that never joins is an error at `deadline`, not a hang. It
 * yields between tests: a spinning rank on an oversubscribed host takes
 * the core from the very peer it waits for. */
static int
wait_progressing(struct sc_mpi_link *l, MPI_Request *r, const char *what,
		 uint64_t deadline)
{
	int done = 0, rc;

	for (;;) {
		rc = MPI_Test(r, &done, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS)
			return mpi_fail(rc, what);
		if (done)
			return 0;
		if ((rc = sc_mpi_link_progress(l)) != 0)
			return rc;
		if (l->any_dead)
			return sc__fail(SC_EDEAD,
					"mpi_link: %s: a peer is dead", what);
		if (sc_clock_ns() >= deadline)
			return sc__fail(SC_ETIMEDOUT,
					"mpi_link: %s: rank %d of %d waited "
					"%" PRIu64 " ms and not every rank "
					"joined it",
					what, l->rank, l->size,
					l->o.collective_ns / 1000000);
		(void)sched_yield();
	}
}

// NOLINTBEGIN(clang-analyzer-optin.mpi.MPI-Checker)
static int
mpi_link_gather_body(struct sc_mpi_link *l, const void *buf, size_t len,
		     uint8_t **parts, size_t **lens)
{
	int *counts = NULL, *displs = NULL, mine = (int)len, rc;
	MPI_Request r;
	uint8_t *all = NULL;
	size_t *ls = NULL, total = 0;
	uint64_t deadline;
	bool root;

	if (!l || (!buf && len) || !parts || !lens || len > INT32_MAX)
		return sc__fail(SC_EINVAL,
				"mpi_link: gather: NULL or %zu "
				"bytes",
				len);
	deadline = l->o.collective_ns
		       ? sc__deadline_add(sc_clock_ns(), l->o.collective_ns)
		       : UINT64_MAX;
	root = l->rank == 0;
	if (root) {
		counts = calloc((size_t)l->size, sizeof(*counts));
		displs = calloc((size_t)l->size, sizeof(*displs));
		ls = calloc((size_t)l->size, sizeof(*ls));
		if (!counts || !displs || !ls) {
			rc = sc__fail(SC_ENOMEM, "mpi_link: gather");
			goto undo_counts;
		}
	}
	rc = MPI_Igather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, l->comm, &r);
	if (rc != MPI_SUCCESS) {
		rc = mpi_fail(rc, "MPI_Igather");
		goto undo_counts;
	}
	if ((rc = wait_progressing(l, &r, "gather (sizes)", deadline)) != 0) {
		l->coll_left = true; /* its request is MPI's: see leave */
		goto undo_counts;
	}
	for (int i = 0; root && counts && displs && ls && i < l->size; i++) {
		displs[i] = (int)total;
		ls[i] = (size_t)counts[i];
		total += (size_t)counts[i];
	}
	if (root && total > INT32_MAX) {
		rc =
		    sc__fail(SC_EINVAL, "mpi_link: gather of %zu bytes", total);
		goto undo_counts;
	}
	if (root && !(all = malloc(total ? total : 1))) {
		rc =
		    sc__fail(SC_ENOMEM, "mpi_link: gather of %zu bytes", total);
		goto undo_counts;
	}
	rc = MPI_Igatherv(buf, mine, MPI_BYTE, all, counts, displs, MPI_BYTE, 0,
			  l->comm, &r);
	if (rc != MPI_SUCCESS) {
		rc = mpi_fail(rc, "MPI_Igatherv");
		goto undo_all;
	}
	if ((rc = wait_progressing(l, &r, "gather", deadline)) != 0) {
		l->coll_left = true;
		goto undo_all;
	}
	*parts = all;
	*lens = ls;
	free(counts);
	free(displs);
	return 0;
undo_all:
	if (rc == SC_ETIMEDOUT)
		return rc; /* MPI may still write them: left to it */
	free(all);
undo_counts:
	if (rc == SC_ETIMEDOUT)
		return rc; /* as above */
	free(counts);
	free(displs);
	free(ls);
	return rc;
}
// NOLINTEND(clang-analyzer-optin.mpi.MPI-Checker)

/* The public functions: each its body's result, named after it (the
 * MPI checker cannot follow a request into the body and out). */
// NOLINTBEGIN(clang-analyzer-optin.mpi.MPI-Checker)
int
sc_mpi_link_create(const struct sc_mpi_link_opts *o, struct sc_mpi_link **out)
{
	return link_errwrap(mpi_link_create_body(o, out), "sc_mpi_link_create");
}

int
sc_mpi_link_add_edge(struct sc_mpi_link *l, uint32_t edge, int producer,
		     int consumer)
{
	return link_errwrap(mpi_link_add_edge_body(l, edge, producer, consumer),
			    "sc_mpi_link_add_edge");
}

int
sc_mpi_link_send(struct sc_mpi_link *l, uint32_t edge,
		 struct sc_wire_buf *frame)
{
	return link_errwrap(mpi_link_send_body(l, edge, frame),
			    "sc_mpi_link_send");
}

int
sc_mpi_link_recv(struct sc_mpi_link *l, uint32_t edge, struct sc_wire_buf *out)
{
	return link_errwrap(mpi_link_recv_body(l, edge, out),
			    "sc_mpi_link_recv");
}

int
sc_mpi_link_progress(struct sc_mpi_link *l)
{
	return link_errwrap(mpi_link_progress_body(l), "sc_mpi_link_progress");
}

int
sc_mpi_link_quiet(struct sc_mpi_link *l, bool passive, bool *idle)
{
	return link_errwrap(mpi_link_quiet_body(l, passive, idle),
			    "sc_mpi_link_quiet");
}

int
sc_mpi_link_gather(struct sc_mpi_link *l, const void *buf, size_t len,
		   uint8_t **parts, size_t **lens)
{
	return link_errwrap(mpi_link_gather_body(l, buf, len, parts, lens),
			    "sc_mpi_link_gather");
}
// NOLINTEND(clang-analyzer-optin.mpi.MPI-Checker)
