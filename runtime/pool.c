/*
 * pool.c - the worker threads (see pool.h).
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include "runtime/pool.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/base.h"

struct sc_worker {
	struct sc_pool *pool; /* owner */
	pthread_t thread;     /* the thread */
	int32_t index;	      /* 0..workers-1, reported as the claim's worker */
	int setup_rc;	      /* fault catching set-up result */
};

struct sc_pool {
	struct sc_exec *ex;	   /* what the workers drive */
	struct sc_pool_opts opts;  /* as given, defaults filled */
	struct sc_worker *workers; /* opts.workers of them */
	uint32_t started;	   /* threads started (to join) */
	pthread_mutex_t setup_mu;  /* start-up hand-shake */
	pthread_cond_t setup_cv;   /* signalled when a worker is set up */
	uint32_t set_up;	   /* workers past their set-up */
};

static void
worker_setup_done(struct sc_worker *w, int rc)
{
	struct sc_pool *p = w->pool;

	pthread_mutex_lock(&p->setup_mu);
	w->setup_rc = rc;
	p->set_up++;
	pthread_cond_broadcast(&p->setup_cv);
	pthread_mutex_unlock(&p->setup_mu);
}

static void *
worker_main(void *arg)
{
	struct sc_worker *w = arg;
	struct sc_pool *p = w->pool;
	int rc = 0;

	SC_ASSERT(w->index >= 0 && (uint32_t)w->index < p->opts.workers);
	{
		/* Named for top, gdb and traces (timeline.h names a track
		 * after its thread); a name that does not fit (15 bytes) is
		 * cut, and a failure only leaves the default. */
		char name[32];

		(void)snprintf(name, sizeof(name), "sc-worker-%d", w->index);
		name[15] = '\0'; /* the kernel's limit: 15 bytes and a NUL */
		(void)pthread_setname_np(pthread_self(), name);
	}
	if (p->opts.catch_faults)
		rc = sc_panic_catch_faults(true);
	if (rc == 0)
		sc_exec_worker_enter(p->ex);
	worker_setup_done(w, rc);
	if (rc != 0)
		return NULL;
	/* A panic is handled inside (the unit is abandoned); the loop
	 * returns only once the executor is shut down. */
	(void)sc_exec_work(p->ex, w->index, p->opts.budget);
	sc_exec_worker_leave(p->ex);
	if (p->opts.catch_faults)
		(void)sc_panic_catch_faults(false);
	return NULL;
}

static void
join_all(struct sc_pool *p)
{
	/* A worker leaves its loop only once the executor is shut down:
	 * joining before that would wait for ever. */
	SC_ASSERT(p->started == 0 || sc_exec_is_shutdown(p->ex));
	for (uint32_t i = 0; i < p->started; i++)
		pthread_join(p->workers[i].thread, NULL);
	p->started = 0;
}

static void
pool_free(struct sc_pool *p)
{
	pthread_cond_destroy(&p->setup_cv);
	pthread_mutex_destroy(&p->setup_mu);
	free(p->workers);
	free(p);
}

/* Wait until every started worker is set up; the first failure, or 0. */
static int
wait_setup(struct sc_pool *p)
{
	int rc = 0;

	pthread_mutex_lock(&p->setup_mu);
	while (p->set_up < p->started)
		pthread_cond_wait(&p->setup_cv, &p->setup_mu);
	SC_ASSERT(p->set_up == p->started);
	for (uint32_t i = 0; i < p->started && rc == 0; i++)
		rc = p->workers[i].setup_rc;
	pthread_mutex_unlock(&p->setup_mu);
	return rc;
}

static int
pool_alloc(struct sc_exec *ex, const struct sc_pool_opts *o,
	   struct sc_pool **out)
{
	struct sc_pool *p = calloc(1, sizeof(*p));

	if (!p)
		goto fail;
	p->workers = calloc(o->workers, sizeof(*p->workers));
	if (!p->workers)
		goto undo_pool;
	if (pthread_mutex_init(&p->setup_mu, NULL) != 0)
		goto undo_workers;
	if (pthread_cond_init(&p->setup_cv, NULL) != 0)
		goto undo_mu;
	p->ex = ex;
	p->opts = *o;
	*out = p;
	return 0;
undo_mu:
	pthread_mutex_destroy(&p->setup_mu);
undo_workers:
	free(p->workers);
undo_pool:
	free(p);
fail:
	return sc__fail(SC_ENOMEM, "sc_pool_create: no memory for %u workers",
			o->workers);
}

int
sc_pool_create(struct sc_exec *ex, const struct sc_pool_opts *opts,
	       struct sc_pool **out)
{
	struct sc_pool_opts o = {0};
	struct sc_pool *p = NULL;
	int rc;

	if (!ex || !out)
		return sc__fail(SC_EINVAL, "sc_pool_create: NULL argument");
	if (opts)
		o = *opts;
	o.workers = o.workers ? o.workers : 1;
	o.budget = sc_unit_budget(o.budget);
	if (sc_exec_is_shutdown(ex))
		return sc__fail(SC_ESHUTDOWN, "sc_pool_create: executor is "
					      "shut down");
	rc = pool_alloc(ex, &o, &p);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < o.workers; i++) {
		struct sc_worker *w = &p->workers[i];

		w->pool = p;
		w->index = (int32_t)i;
		if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
			rc = sc__fail(SC_ENOMEM,
				      "sc_pool_create: thread %u "
				      "not started",
				      i);
			break;
		}
		p->started++;
	}
	if (rc == 0)
		rc = wait_setup(p);
	if (rc != 0)
		goto undo_threads;
	*out = p;
	return 0;
undo_threads:
	sc_exec_shutdown(ex);
	join_all(p);
	pool_free(p);
	return rc;
}

static int
stop(struct sc_pool *p, struct sc_panic_record *first)
{
	struct sc_panic_record rec;
	struct sc_exec *ex = p->ex;

	sc_exec_shutdown(ex);
	join_all(p);
	pool_free(p);
	if (sc_exec_panic(ex, 0, &rec) == 0) {
		if (first)
			*first = rec;
		return sc__fail(SC_EPANIC, "unit %u (%s) panicked: %s",
				rec.unit, rec.name, rec.message);
	}
	sc_error_clear();
	return 0;
}

int
sc_pool_finish(struct sc_pool *pool, struct sc_panic_record *first)
{
	if (!pool)
		return sc__fail(SC_EINVAL, "sc_pool_finish: NULL");
	if (sc_exec_in_turn(pool->ex))
		return sc__fail(SC_ESTATE, "sc_pool_finish: called from inside "
					   "a unit's turn, which would wait "
					   "for itself");
	(void)sc_exec_wait_idle(pool->ex, 0, NULL);
	return stop(pool, first);
}

int
sc_pool_destroy(struct sc_pool *pool, struct sc_panic_record *first)
{
	if (!pool)
		return 0;
	/* Joining the workers from one of them would wait for ever. */
	if (sc_exec_in_turn(pool->ex))
		return sc__fail(SC_ESTATE, "sc_pool_destroy: called from "
					   "inside a unit's turn; nothing "
					   "done");
	return stop(pool, first);
}

uint32_t
sc_pool_workers(const struct sc_pool *pool)
{
	return pool ? pool->opts.workers : 0;
}
