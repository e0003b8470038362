/*
 * nexmark_par.c - the Nexmark generator over several threads (see
 * nexmark_par.h for the design).
 *
 * Chunk i lives in slot (i / threads) % AHEAD of thread i % threads. A
 * slot is FREE (its thread may make a chunk into it), READY (made, not yet
 * handed out) or OUT (the caller has it). One mutex guards every slot's
 * state and two condition variables wake the caller (a chunk made) and the
 * threads (a slot freed, or stop); a chunk is a thousand events or so, so
 * the lock is taken a few times per chunk, never per event. A slot's
 * contents belong to its thread while FREE and to the caller while READY
 * or OUT, so only the states need the lock.
 */
#include "bench/workloads/nexmark_par.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/harness.h"
#include "operators/batch.h"
#include "operators/error.h"

#define AHEAD	    2
#define MAX_THREADS 256

enum slot_state { SLOT_FREE, SLOT_READY, SLOT_OUT };

struct slot {
	enum slot_state state; /* under the lock */
	struct sc_nexmark_chunk c;
	uint64_t *texts; /* the fresh texts' references the chunk holds */
	size_t ntexts;
	int rc; /* making it failed: the error, and why */
	char why[256];
};

struct worker {
	struct sc_nexmark_par *p;
	unsigned index;
	bool started;
	pthread_t tid;
	struct sc_nexmark *gen;
	struct sc_batch_builder b[SC_NEXMARK_KINDS];
	struct slot slot[AHEAD];
};

struct sc_nexmark_par {
	struct sc_symtab *symbols; /* borrowed */
	uint64_t chunk, total;
	uint32_t kinds;
	unsigned nthreads;
	pthread_mutex_t lock;
	pthread_cond_t made;  /* a slot became READY */
	pthread_cond_t freed; /* a slot became FREE, or stop */
	bool stop;	      /* under the lock */
	uint64_t cpu_ns;      /* under the lock */
	uint64_t next;	      /* the caller's: the next chunk's index */
	struct slot *out;     /* the caller's: the chunk handed out */
	struct worker w[];
};

/* Drop what a slot holds (its batches and texts); the slot is then empty. */
static void
slot_clear(struct sc_nexmark_par *p, struct slot *s)
{
	for (int k = 0; k < SC_NEXMARK_KINDS; k++) {
		sc_batch_release(s->c.b[k]);
		s->c.b[k] = NULL;
	}
	if (s->ntexts)
		(void)sc_symtab_release_ids(p->symbols, s->texts, s->ntexts);
	free(s->texts);
	s->texts = NULL;
	s->ntexts = 0;
}

/* Make events first .. first + n - 1 into s (FREE, so the thread's). */
static void
make_chunk(struct worker *w, struct slot *s, uint64_t first, uint64_t n)
{
	struct sc_nexmark_par *p = w->p;
	struct sc_nexmark_event ev;
	uint64_t t0 = sc_bench_cpu_ns();
	int rc = sc_nexmark_seek(w->gen, first);

	s->c.first = first;
	s->c.events = n;
	for (int k = 0; k < SC_NEXMARK_KINDS; k++)
		sc_batch_builder_clear(&w->b[k]);
	for (uint64_t e = 0; e < n && !rc; e++) {
		rc = sc_nexmark_next(w->gen, &ev);
		if (!rc && (p->kinds >> ev.kind & 1))
			rc =
			    sc_batch_builder_push(&w->b[ev.kind], ev.row,
						  sc_nexmark_ncols(ev.kind), 1);
	}
	for (int k = 0; k < SC_NEXMARK_KINDS && !rc; k++)
		if (sc_batch_builder_count(&w->b[k]))
			rc = sc_batch_builder_finish(&w->b[k], &s->c.b[k]);
	if (!rc)
		rc = sc_nexmark_take_texts(w->gen, &s->texts, &s->ntexts);
	if (rc) {
		(void)snprintf(
		    s->why, sizeof(s->why), "making events %llu .. %llu: %s",
		    (unsigned long long)first,
		    (unsigned long long)(first + n - 1), sc_errdetail());
		slot_clear(p, s);
		sc_nexmark_release_texts(w->gen);
	}
	s->rc = rc;
	s->c.cpu_ns = sc_bench_cpu_ns() - t0;
}

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	struct sc_nexmark_par *p = w->p;

	for (uint64_t j = 0;; j++) {
		uint64_t i = w->index + j * p->nthreads, first = i * p->chunk;
		struct slot *s = &w->slot[j % AHEAD];
		bool stop, failed;

		if (p->total && first >= p->total)
			break;
		pthread_mutex_lock(&p->lock);
		while (s->state != SLOT_FREE && !p->stop)
			pthread_cond_wait(&p->freed, &p->lock);
		stop = p->stop;
		pthread_mutex_unlock(&p->lock);
		if (stop)
			break;
		make_chunk(w, s, first,
			   p->total && p->total - first < p->chunk
			       ? p->total - first
			       : p->chunk);
		failed = s->rc != 0; /* READY, the slot is the caller's */
		pthread_mutex_lock(&p->lock);
		s->state = SLOT_READY;
		p->cpu_ns += s->c.cpu_ns;
		pthread_cond_broadcast(&p->made);
		pthread_mutex_unlock(&p->lock);
		if (failed)
			break; /* the stream cannot go on past a failure */
	}
	return NULL;
}

/* Stop and join the threads started; free everything. */
static void
par_free(struct sc_nexmark_par *p)
{
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->freed);
	pthread_mutex_unlock(&p->lock);
	for (unsigned t = 0; t < p->nthreads; t++)
		if (p->w[t].started)
			pthread_join(p->w[t].tid, NULL);
	for (unsigned t = 0; t < p->nthreads; t++) {
		struct worker *w = &p->w[t];

		for (int a = 0; a < AHEAD; a++)
			slot_clear(p, &w->slot[a]);
		sc_nexmark_destroy(w->gen);
		for (int k = 0; k < SC_NEXMARK_KINDS; k++)
			sc_batch_builder_fini(&w->b[k]);
	}
	pthread_cond_destroy(&p->freed);
	pthread_cond_destroy(&p->made);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

int
sc_nexmark_par_create(const struct sc_nexmark_opts *o,
		      struct sc_symtab *symbols, unsigned threads,
		      uint64_t chunk, uint64_t total, uint32_t kinds,
		      struct sc_nexmark_par **out)
{
	struct sc_nexmark_par *p;
	int rc;

	if (!o || !symbols || !out)
		return sc_errorf(SC_EINVAL,
				 "sc_nexmark_par_create: NULL argument");
	if (threads == 0 || threads > MAX_THREADS)
		return sc_errorf(SC_EINVAL,
				 "sc_nexmark_par_create: %u threads (1 .. %u)",
				 threads, MAX_THREADS);
	if (chunk == 0)
		return sc_errorf(SC_EINVAL,
				 "sc_nexmark_par_create: chunks of 0 events");
	if (kinds == 0 || kinds >= 1u << SC_NEXMARK_KINDS)
		return sc_errorf(SC_EINVAL,
				 "sc_nexmark_par_create: kinds %u (1 .. 7)",
				 kinds);
	p = calloc(1, sizeof(*p) + threads * sizeof(p->w[0]));
	if (!p)
		return sc_errorf(SC_ENOMEM,
				 "sc_nexmark_par_create: out of memory");
	p->symbols = symbols;
	p->chunk = chunk;
	p->total = total;
	p->kinds = kinds;
	p->nthreads = threads;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->made, NULL);
	pthread_cond_init(&p->freed, NULL);
	for (unsigned t = 0; t < threads; t++) {
		struct worker *w = &p->w[t];

		w->p = p;
		w->index = t;
		for (int k = 0; k < SC_NEXMARK_KINDS; k++)
			(void)sc_batch_builder_init(&w->b[k],
						    sc_nexmark_ncols(k));
		if ((rc = sc_nexmark_create(o, symbols, &w->gen)) != 0) {
			char why[256];

			/* A copy: the detail lives where sc_errorf writes. */
			(void)snprintf(why, sizeof(why), "%s", sc_errdetail());
			(void)sc_errorf(rc, "sc_nexmark_par_create: %s", why);
			par_free(p);
			return rc;
		}
	}
	for (unsigned t = 0; t < threads; t++) {
		struct worker *w = &p->w[t];

		if (pthread_create(&w->tid, NULL, worker_main, w) != 0) {
			par_free(p);
			return sc_errorf(SC_ENOMEM,
					 "sc_nexmark_par_create: thread %u of "
					 "%u could not be started",
					 t + 1, threads);
		}
		w->started = true;
	}
	*out = p;
	return 0;
}

int
sc_nexmark_par_next(struct sc_nexmark_par *p, struct sc_nexmark_chunk **out)
{
	struct slot *s;

	if (!p || !out)
		return sc_errorf(SC_EINVAL,
				 "sc_nexmark_par_next: NULL argument");
	*out = NULL;
	if (p->out)
		return sc_errorf(SC_EINVAL,
				 "sc_nexmark_par_next: chunk %llu was not "
				 "given back",
				 (unsigned long long)(p->next - 1));
	if (p->total && p->next * p->chunk >= p->total)
		return 1;
	s = &p->w[p->next % p->nthreads].slot[(p->next / p->nthreads) % AHEAD];
	pthread_mutex_lock(&p->lock);
	while (s->state != SLOT_READY)
		pthread_cond_wait(&p->made, &p->lock);
	if (!s->rc) /* a failed chunk stays READY: the same error again */
		s->state = SLOT_OUT;
	pthread_mutex_unlock(&p->lock);
	if (s->rc)
		return sc_errorf(s->rc, "sc_nexmark_par_next: %s", s->why);
	p->out = s;
	p->next++;
	*out = &s->c;
	return 0;
}

void
sc_nexmark_par_done(struct sc_nexmark_par *p, struct sc_nexmark_chunk *c)
{
	struct slot *s;

	if (!p || !c || !p->out || &p->out->c != c)
		return;
	s = p->out;
	slot_clear(p, s);
	p->out = NULL;
	pthread_mutex_lock(&p->lock);
	s->state = SLOT_FREE;
	pthread_cond_broadcast(&p->freed);
	pthread_mutex_unlock(&p->lock);
}

uint64_t
sc_nexmark_par_cpu_ns(struct sc_nexmark_par *p)
{
	uint64_t ns;

	if (!p)
		return 0;
	pthread_mutex_lock(&p->lock);
	ns = p->cpu_ns;
	pthread_mutex_unlock(&p->lock);
	return ns;
}

void
sc_nexmark_par_destroy(struct sc_nexmark_par *p)
{
	if (p)
		par_free(p);
}
