/*
 * mpi_runtime.c - the link thread that carries a runtime's cut edges over
 * MPI (see mpi_runtime.h and units/runtime_remote.h).
 */
#include "units/mpi_runtime.h"

#include <inttypes.h>
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "operators/base.h"
#include "operators/base_int.h"
#include "operators/schema.h"
#include "units/runtime_remote.h"
#include "units/wire.h"

/* One cut edge as this rank sees it. */
struct cut {
	struct sc_runtime_cut c;
	const struct sc_schema *schema; /* of its stream */
	bool send_here;			/* the producer is here: poll, send */
	bool recv_here;			/* the consumer is here: recv, push */
	struct sc_wire_rx rx;		/* recv_here: its symbols */
	/* Waterlines (units/edge.h, "Waterlines"), one publication each
	 * way: send_here, the last sent (mask 0: none yet), so a producer
	 * that publishes the same values after every turn sends them once;
	 * recv_here, one arrived and not yet published on the edge (mask
	 * 0: none), which waits while the edge's outbox holds rows. */
	struct sc_edge_waterline wl;
};

/* What the host asked the link thread to do. */
enum req { REQ_NONE, REQ_IDLE, REQ_GATHER };

struct sc_mpi_runtime {
	struct sc_runtime *rt;	  /* made by create */
	struct sc_mpi_link *link; /* the link thread's once it runs */
	struct sc_runtime_remote remote;
	struct sc_graph *g;
	int rank, size;
	struct cut *cuts; /* every cut edge, by id */
	size_t ncuts, cap;
	struct sc_wire_buf wb; /* the link thread's encode buffer */
	struct sc_wire_rx grx; /* rank 0: the gathered integrals' symbols */
	bool *dead_seen;       /* size: ranks reported dead */
	pthread_t thread;
	bool running; /* thread started and not joined */
	atomic_bool stop;
	/* the host's request, under mu */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	enum req req;
	bool done;
	int rc;
	uint64_t deadline;   /* REQ_IDLE: clock ns, UINT64_MAX none */
	const uint8_t *gbuf; /* REQ_GATHER: this rank's bytes */
	size_t glen;
	uint8_t *gparts; /* rank 0: what came back */
	size_t *glens;
	int fatal; /* a link error or a gap: every later request says it */
	/* The answer's message: errors are per thread (operators/error.h),
	 * so the link thread's words travel with its answer. */
	char msg[512];
	char fatal_msg[512];	     /* fatal's message (the link thread's) */
	struct sc_mpi_link_stats st; /* copied by the link thread, under mu */
};

/* --- the link thread ------------------------------------------------------
 */

/* Producer here: the edge's newest publication whose frames before it
 * the link has all taken (so it follows them on the wire), as a
 * waterline message, when the link has room for it and it says
 * something new. Values only rise, so skipping one is only a delay. */
static int
waterline_out(struct sc_mpi_runtime *m, struct cut *k)
{
	struct sc_edge_waterline w;
	int rc;

	if (!sc_mpi_link_room(m->link, k->c.id) ||
	    !sc_edge_waterline_due(k->c.edge, &w) || !w.mask)
		return 0;
	if (w.mask == k->wl.mask &&
	    !memcmp(w.value, k->wl.value, sizeof(w.value)))
		return 0;
	rc = sc_wire_encode_waterline(k->c.id, 1, 0, k->schema->ncols, w.mask,
				      w.value, &m->wb);
	if (!rc)
		rc = sc_mpi_link_send(m->link, k->c.id, &m->wb);
	if (rc == SC_EDEAD)
		return 0;
	if (!rc)
		k->wl = w;
	return rc;
}

/* Consumer here: publish the waterline that arrived, once the edge takes
 * it (SC_EFULL while its outbox holds rows: the next pass tries again);
 * whether it was published. */
static bool
waterline_in(struct cut *k)
{
	if (!k->wl.mask ||
	    sc_edge_set_waterline(k->c.edge, k->wl.mask, k->wl.value) != 0)
		return false;
	k->wl.mask = 0;
	return true;
}

/* Producer here: poll what the link has credit for, encode, send. */
static int
pump_out(struct sc_mpi_runtime *m, struct cut *k, bool *moved)
{
	bool popped = false;
	int rc = 0;

	while (sc_mpi_link_room(m->link, k->c.id)) {
		struct sc_batch *b = NULL;
		size_t n = 0;

		if (sc_edge_poll(k->c.edge, 1, &b, &n) != 0 || n == 0)
			break; /* empty, or closed (its consumer's rank died) */
		popped = true;
		/* seq 1 stands in: the link stamps the edge's own. */
		rc = sc_wire_encode(b, k->schema, k->schema->symbols, k->c.id,
				    1, 0, &m->wb);
		sc_runtime_remote_frame_done(k->c.edge, b);
		if (!rc)
			rc = sc_mpi_link_send(m->link, k->c.id, &m->wb);
		if (rc == SC_EDEAD)
			rc = 0; /* its rank died: the proxy closes the edge */
		if (rc)
			break;
	}
	if (!rc)
		rc = waterline_out(m, k);
	if (popped) {
		*moved = true;
		sc_runtime_remote_popped(m->rt, k->c.from);
	}
	return rc;
}

/* Consumer here: take from the link only what the edge has room for (so
 * a full edge keeps frames in the link, which returns no credit). */
static int
pump_in(struct sc_mpi_runtime *m, struct cut *k, bool *moved)
{
	struct sc_wire_buf in;
	bool pushed = false;
	int rc = 0;

	sc_wire_buf_init(&in);
	pushed = waterline_in(k);
	while (!sc_edge_is_closed(k->c.edge) && sc_edge_room(k->c.edge) > 0) {
		struct sc_wire_header h;
		struct sc_batch *b = NULL;

		rc = sc_mpi_link_recv(m->link, k->c.id, &in);
		if (rc == SC_EEMPTY || rc == SC_EDEAD) {
			rc = 0;
			break;
		}
		if (!rc)
			rc = sc_wire_peek(in.data, in.len, &h);
		if (!rc && h.kind == SC_WIRE_WATERLINE) {
			/* In order: after the frames before it, which are
			 * pushed; a newer one replaces one not yet taken. */
			rc = sc_wire_decode_waterline(in.data, in.len, NULL,
						      &k->wl.mask, k->wl.value);
			if (!rc && waterline_in(k))
				pushed = true;
			if (rc)
				break;
			continue;
		}
		if (!rc)
			rc = sc_wire_decode(in.data, in.len, &k->rx, NULL, &b);
		if (rc)
			break;
		rc = sc_edge_send(k->c.edge, b);
		if (rc == SC_EDEAD) {
			rc = 0; /* its consumer died: counted undeliverable */
			continue;
		}
		if (rc) {
			sc_batch_release(b);
			break;
		}
		pushed = true;
	}
	sc_wire_buf_fini(&in);
	if (pushed) {
		*moved = true;
		sc_runtime_remote_pushed(m->rt, k->c.to);
	}
	return rc;
}

static void
find_dead(struct sc_mpi_runtime *m)
{
	for (int r = 0; r < m->size; r++)
		if (!m->dead_seen[r] && sc_mpi_link_peer_dead(m->link, r)) {
			m->dead_seen[r] = true;
			sc_runtime_remote_rank_dead(m->rt, r);
		}
}

static bool
any_dead(const struct sc_mpi_runtime *m)
{
	for (int r = 0; r < m->size; r++)
		if (m->dead_seen[r])
			return true;
	return false;
}

/* One step of a wait for idle: 1 while it goes on, else its code. A
 * dead peer ends the waves: then this rank's quiet, twice in a row. */
static int
idle_step(struct sc_mpi_runtime *m, int *quiet_seen)
{
	bool passive = sc_runtime_remote_passive(m->rt), idle = false;
	int rc;

	if (any_dead(m)) {
		*quiet_seen = passive ? *quiet_seen + 1 : 0;
		return *quiet_seen >= 2 ? SC_EDEAD : 1;
	}
	rc = sc_mpi_link_quiet(m->link, passive, &idle);
	if (rc == SC_EDEAD) {
		find_dead(m);
		return 1;
	}
	if (rc)
		return rc;
	if (idle)
		return 0;
	if (m->deadline != UINT64_MAX && sc_clock_ns() >= m->deadline) {
		struct sc_mpi_link_stats st;

		sc_mpi_link_stats(m->link, &st);
		return sc__fail(SC_ETIMEDOUT,
				"wait_idle: rank %d of %d: no two agreeing "
				"quiet waves in time (%" PRIu64 " waves done; "
				"this rank %s, %" PRIu64
				" frames sent, %" PRIu64 " received)",
				m->rank, m->size, st.waves,
				passive ? "passive" : "busy", st.frames_sent,
				st.frames_recv);
	}
	return 1;
}

static void
finish(struct sc_mpi_runtime *m, int rc)
{
	pthread_mutex_lock(&m->mu);
	m->rc = rc;
	(void)snprintf(m->msg, sizeof(m->msg), "%s", rc ? sc_errdetail() : "");
	m->done = true;
	m->req = REQ_NONE;
	pthread_cond_broadcast(&m->cv);
	pthread_mutex_unlock(&m->mu);
}

/* The host's request, if any (read under mu; the fields it names are the
 * link thread's until it finishes). */
static void
serve(struct sc_mpi_runtime *m, int *quiet_seen)
{
	enum req r;
	int rc;

	pthread_mutex_lock(&m->mu);
	r = m->done ? REQ_NONE : m->req;
	m->st = (struct sc_mpi_link_stats){0};
	sc_mpi_link_stats(m->link, &m->st);
	pthread_mutex_unlock(&m->mu);
	if (r == REQ_NONE) {
		*quiet_seen = 0;
		return;
	}
	if (m->fatal) {
		finish(m, sc__fail(m->fatal, "%s", m->fatal_msg));
		return;
	}
	if (r == REQ_IDLE) {
		rc = idle_step(m, quiet_seen);
		if (rc != 1)
			finish(m, rc);
		return;
	}
	rc = sc_mpi_link_gather(m->link, m->gbuf, m->glen, &m->gparts,
				&m->glens);
	if (rc == SC_EDEAD)
		find_dead(m);
	finish(m, rc);
}

/* Nothing moved: yield a while (a frame's latency), then nap, so idle
 * ranks leave the cores to the workers. */
static void
back_off(uint32_t *empty)
{
	struct timespec ts = {0, 50000};

	if (++*empty < 256) {
		(void)sched_yield();
		return;
	}
	(void)nanosleep(&ts, NULL);
}

static void *
link_main(void *arg)
{
	struct sc_mpi_runtime *m = arg;
	uint32_t empty = 0;
	int quiet_seen = 0;

	while (!atomic_load(&m->stop)) {
		bool moved = false;
		int rc = sc_mpi_link_progress(m->link);

		for (size_t i = 0; !rc && i < m->ncuts; i++) {
			struct cut *k = &m->cuts[i];

			if (k->send_here)
				rc = pump_out(m, k, &moved);
			else if (k->recv_here)
				rc = pump_in(m, k, &moved);
		}
		if (rc && !m->fatal) {
			m->fatal = rc;
			(void)snprintf(m->fatal_msg, sizeof(m->fatal_msg), "%s",
				       sc_errdetail());
		}
		find_dead(m);
		serve(m, &quiet_seen);
		if (moved)
			empty = 0;
		else
			back_off(&empty);
	}
	return NULL;
}

/* --- the transport's operations (runtime_remote.h) ------------------------
 */

static int
op_cut(void *ctx, const struct sc_runtime_cut *c)
{
	struct sc_mpi_runtime *m = ctx;
	struct cut *k;
	int rc;

	if (m->ncuts == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 16;
		struct cut *v = realloc(m->cuts, cap * sizeof(*v));

		if (!v)
			return sc__fail(SC_ENOMEM, "mpi_runtime: %zu cuts",
					cap);
		m->cuts = v;
		m->cap = cap;
	}
	if ((rc = sc_mpi_link_add_edge(m->link, c->id, c->from_rank,
				       c->to_rank)) != 0)
		return rc;
	k = &m->cuts[m->ncuts];
	memset(k, 0, sizeof(*k));
	k->c = *c;
	k->schema = sc_graph_schema(m->g, c->stream);
	k->send_here = c->from_rank == m->rank;
	k->recv_here = c->to_rank == m->rank;
	(void)sc_wire_rx_init(&k->rx, k->schema->symbols);
	m->ncuts++;
	return 0;
}

static int
op_start(void *ctx, struct sc_runtime *rt)
{
	struct sc_mpi_runtime *m = ctx;

	m->rt = rt;
	if (pthread_create(&m->thread, NULL, link_main, m) != 0)
		return sc__fail(SC_ENOMEM, "mpi_runtime: the link thread");
	m->running = true;
	return 0;
}

/* Hand request r to the link thread and wait for its answer. */
static int
ask(struct sc_mpi_runtime *m, enum req r)
{
	int rc;

	pthread_mutex_lock(&m->mu);
	m->req = r;
	m->done = false;
	while (!m->done)
		pthread_cond_wait(&m->cv, &m->mu);
	rc = m->rc;
	if (rc)
		rc = sc__fail(rc, "%s", m->msg);
	pthread_mutex_unlock(&m->mu);
	return rc;
}

static int
op_wait_idle(void *ctx, uint64_t timeout_ns)
{
	struct sc_mpi_runtime *m = ctx;

	m->deadline = timeout_ns ? sc__deadline_add(sc_clock_ns(), timeout_ns)
				 : UINT64_MAX;
	return ask(m, REQ_IDLE);
}

/* Rank 0: decode every rank's part and sum them. */
static int
sum_parts(struct sc_mpi_runtime *m, const struct sc_batch *local,
	  struct sc_batch **out)
{
	struct sc_batch *sum = sc_batch_retain((struct sc_batch *)local);
	size_t off = 0;
	int rc = 0;

	for (int r = 0; r < m->size && !rc; r++) {
		struct sc_batch *b = NULL, *t = NULL;

		if (r != 0)
			rc = sc_wire_decode(m->gparts + off, m->glens[r],
					    &m->grx, NULL, &b);
		off += m->glens[r];
		if (r == 0 || rc)
			continue;
		rc = sc_batch_add(sum, b, &t);
		sc_batch_release(b);
		if (!rc) {
			sc_batch_release(sum);
			sum = t;
		}
	}
	if (rc) {
		sc_batch_release(sum);
		return rc;
	}
	*out = sum;
	return 0;
}

static int
op_gather(void *ctx, int output, const struct sc_batch *local,
	  struct sc_batch **out)
{
	struct sc_mpi_runtime *m = ctx;
	const struct sc_schema *s = sc_graph_schema(m->g, output);
	struct sc_wire_buf b;
	int rc;

	/* The gathered rows' ids are interned on rank 0 into the output's
	 * table and held until destroy (they outlive the batch returned). */
	if (!m->grx.syms)
		m->grx.syms = s->symbols;
	else if (s->symbols && s->symbols != m->grx.syms)
		return sc__fail(SC_EINVAL, "mpi_runtime: outputs of two "
					   "symbol tables");
	sc_wire_buf_init(&b);
	rc = sc_wire_encode(local, s, s->symbols, 0, 1, 0, &b);
	if (rc) {
		sc_wire_buf_fini(&b);
		return rc;
	}
	m->gbuf = b.data;
	m->glen = b.len;
	m->gparts = NULL;
	m->glens = NULL;
	rc = ask(m, REQ_GATHER);
	sc_wire_buf_fini(&b);
	if (!rc && m->rank == 0)
		rc = sum_parts(m, local, out);
	else if (!rc)
		*out = sc_batch_retain((struct sc_batch *)local);
	free(m->gparts);
	free(m->glens);
	return rc;
}

static void
op_stop(void *ctx)
{
	struct sc_mpi_runtime *m = ctx;

	if (!m->running)
		return;
	atomic_store(&m->stop, true);
	(void)pthread_join(m->thread, NULL);
	m->running = false;
}

static const struct sc_runtime_remote_ops mpi_ops = {
    .cut = op_cut,
    .start = op_start,
    .wait_idle = op_wait_idle,
    .gather = op_gather,
    .stop = op_stop,
};

/* --- create and destroy ---------------------------------------------------
 */

static int
check_level(void)
{
	int inited = 0, level = 0;

	if (MPI_Initialized(&inited) != MPI_SUCCESS || !inited)
		return sc__fail(SC_ESTATE, "mpi_runtime: MPI is not "
					   "initialised");
	if (MPI_Query_thread(&level) != MPI_SUCCESS ||
	    level < MPI_THREAD_SERIALIZED)
		return sc__fail(SC_ESTATE,
				"mpi_runtime: MPI gives thread level %d, below "
				"MPI_THREAD_SERIALIZED (the link thread is not "
				"the one that initialised MPI)",
				level);
	return 0;
}

static void
free_parts(struct sc_mpi_runtime *m)
{
	for (size_t i = 0; i < m->ncuts; i++)
		sc_wire_rx_fini(&m->cuts[i].rx);
	free(m->cuts);
	sc_wire_rx_fini(&m->grx);
	sc_wire_buf_fini(&m->wb);
	free(m->dead_seen);
	sc_mpi_link_destroy(m->link);
	pthread_cond_destroy(&m->cv);
	pthread_mutex_destroy(&m->mu);
	free(m);
}

int
sc_mpi_runtime_create(struct sc_graph *g, const struct sc_placement *p,
		      const struct sc_runtime_opts *opts,
		      const struct sc_mpi_link_opts *lo,
		      struct sc_mpi_runtime **out)
{
	struct sc_mpi_link_opts dlo;
	struct sc_runtime_opts o = {0};
	struct sc_mpi_runtime *m;
	int rc;

	if (!g || !p || !out)
		return sc__fail(SC_EINVAL, "sc_mpi_runtime_create: NULL");
	if ((rc = check_level()) != 0)
		return rc;
	if (!lo) {
		sc_mpi_link_opts_default(&dlo);
		lo = &dlo;
	}
	if (!(m = calloc(1, sizeof(*m))))
		return sc__fail(SC_ENOMEM, "sc_mpi_runtime_create");
	pthread_mutex_init(&m->mu, NULL);
	pthread_cond_init(&m->cv, NULL);
	atomic_init(&m->stop, false);
	m->g = g;
	(void)sc_wire_rx_init(&m->grx, NULL); /* its table: op_gather's */
	sc_wire_buf_init(&m->wb);
	if ((rc = sc_mpi_link_create(lo, &m->link)) != 0) {
		free_parts(m);
		return rc;
	}
	m->rank = sc_mpi_link_rank(m->link);
	m->size = sc_mpi_link_size(m->link);
	if (!(m->dead_seen = calloc((size_t)m->size, sizeof(bool)))) {
		free_parts(m);
		return sc__fail(SC_ENOMEM, "sc_mpi_runtime_create");
	}
	m->remote = (struct sc_runtime_remote){
	    .rank = m->rank, .nranks = m->size, .ops = &mpi_ops, .ctx = m};
	if (opts)
		o = *opts;
	o.remote = &m->remote;
	if ((rc = sc_runtime_create(g, p, &o, &m->rt)) != 0) {
		op_stop(m);
		free_parts(m);
		return rc;
	}
	*out = m;
	return 0;
}

void
sc_mpi_runtime_destroy(struct sc_mpi_runtime *m)
{
	if (!m)
		return;
	sc_runtime_destroy(m->rt); /* stops the link thread at teardown */
	op_stop(m);
	free_parts(m);
}

struct sc_runtime *
sc_mpi_runtime_rt(struct sc_mpi_runtime *m)
{
	return m ? m->rt : NULL;
}

int
sc_mpi_runtime_rank(const struct sc_mpi_runtime *m)
{
	return m ? m->rank : -1;
}

int
sc_mpi_runtime_size(const struct sc_mpi_runtime *m)
{
	return m ? m->size : 0;
}

void
sc_mpi_runtime_stats(struct sc_mpi_runtime *m, struct sc_mpi_link_stats *out)
{
	if (!m || !out)
		return;
	pthread_mutex_lock(&m->mu);
	*out = m->st;
	pthread_mutex_unlock(&m->mu);
}
