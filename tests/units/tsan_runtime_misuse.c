/*
 * tsan_runtime_misuse.c - the threaded misuse scenarios of
 * test_runtime_misuse.c as a plain program, for the ThreadSanitizer pass
 * (Criterion cannot run under TSan): on a real pool, a callback that calls
 * shutdown and wait_idle gets SC_ESTATE, and a shutdown whose turn does not
 * return gives up at its deadline naming the unit, then completes once the
 * turn returns. Exit 0 is a pass; a failure says which check failed. An
 * alarm turns a hang into a failure (SIGALRM kills the program).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "units/placement.h"
#include "units/runtime.h"

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			(void)fprintf(stderr,                                  \
				      "tsan_runtime_misuse:%d: %s failed "     \
				      "(%s)\n",                                \
				      __LINE__, #cond, sc_errmsg());           \
			return 1;                                              \
		}                                                              \
	} while (0)

static int
copy2(void *ctx, const uint64_t *row, uint64_t *out)
{
	(void)ctx;
	out[0] = row[0];
	out[1] = row[1];
	return 0;
}

struct world {
	struct sc_graph *g;
	struct sc_schema s;
	struct sc_placement *p;
	struct sc_runtime *rt;
	int in, m, out;
};

static int
world_init(struct world *w, const struct sc_runtime_opts *o)
{
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_I64};

	memset(w, 0, sizeof(*w));
	CHECK(sc_schema_init(&w->s, 2, t, NULL) == 0);
	CHECK(sc_graph_create(&w->g) == 0);
	w->in = sc_graph_input(w->g, "in", &w->s);
	w->m = sc_graph_map(w->g, w->in, &w->s, copy2, NULL);
	CHECK(sc_graph_set_name(w->g, w->m, "the_map") == 0);
	w->out = sc_graph_output(w->g, "out", w->m);
	CHECK(w->out >= 0);
	CHECK(sc_placement_parse(w->g, "per-node", 1, &w->p) == 0);
	CHECK(sc_runtime_create(w->g, w->p, o, &w->rt) == 0);
	return 0;
}

static void
world_fini(struct world *w)
{
	sc_runtime_destroy(w->rt);
	sc_placement_destroy(w->p);
	sc_graph_destroy(w->g);
}

static struct sc_batch *
row_of(int64_t k)
{
	uint64_t r[2] = {sc_enc_i64(k), sc_enc_i64(k)};
	struct sc_batch *b = NULL;

	if (sc_batch_from_records(2, r, NULL, 1, &b) != 0)
		return NULL;
	return b;
}

/* --- shutdown from a worker's callback ------------------------------------ */

static struct sc_runtime *cb_rt;
static atomic_int cb_shutdown_rc = 1, cb_wait_rc = 1;

static int
call_back_in(void *ctx, int node, const struct sc_batch *delta)
{
	(void)ctx;
	(void)node;
	(void)delta;
	atomic_store(&cb_shutdown_rc, sc_runtime_shutdown(cb_rt, NULL));
	atomic_store(&cb_wait_rc, sc_runtime_wait_idle(cb_rt, 0, NULL));
	return 0;
}

static int
from_a_callback(void)
{
	struct sc_runtime_opts o = {.workers = 2};
	struct world w;
	struct sc_batch *b = row_of(1);

	CHECK(b && world_init(&w, &o) == 0);
	cb_rt = w.rt;
	CHECK(sc_runtime_on_delta(w.rt, w.m, call_back_in, NULL) == 0);
	CHECK(sc_runtime_submit(w.rt, w.in, b) == 0);
	CHECK(sc_runtime_wait_idle(w.rt, 0, NULL) == 0);
	CHECK(atomic_load(&cb_shutdown_rc) == SC_ESTATE);
	CHECK(atomic_load(&cb_wait_rc) == SC_ESTATE);
	CHECK(sc_runtime_shutdown(w.rt, NULL) == 0);
	sc_batch_release(b);
	world_fini(&w);
	return 0;
}

/* --- a turn that does not return until released --------------------------- */

static atomic_bool stuck_inside, stuck_release;

static int
stick(void *ctx, int node, const struct sc_batch *delta)
{
	struct timespec ts = {0, 1000000};

	(void)ctx;
	(void)node;
	(void)delta;
	atomic_store(&stuck_inside, true);
	while (!atomic_load(&stuck_release))
		nanosleep(&ts, NULL);
	return 0;
}

static int
shutdown_deadline(void)
{
	struct sc_runtime_opts o = {.workers = 2,
				    .shutdown_timeout_ns = 200000000ull};
	struct timespec ts = {0, 1000000};
	struct world w;
	struct sc_batch *b = row_of(1);

	CHECK(b && world_init(&w, &o) == 0);
	CHECK(sc_runtime_on_delta(w.rt, w.m, stick, NULL) == 0);
	CHECK(sc_runtime_submit(w.rt, w.in, b) == 0);
	while (!atomic_load(&stuck_inside))
		nanosleep(&ts, NULL);
	CHECK(sc_runtime_shutdown(w.rt, NULL) == SC_ETIMEDOUT);
	CHECK(strstr(sc_errmsg(), "the_map") != NULL);
	atomic_store(&stuck_release, true);
	CHECK(sc_runtime_shutdown(w.rt, NULL) == 0);
	sc_batch_release(b);
	world_fini(&w);
	return 0;
}

int
main(void)
{
	(void)alarm(60); /* a hang is a failure */
	if (from_a_callback() != 0 || shutdown_deadline() != 0)
		return 1;
	(void)printf("tsan_runtime_misuse: ok\n");
	return 0;
}
