/*
 * test_alloc.c - every allocation of a small run fails, one at a time, and
 * the run still ends well: SQLite's fault tests (test/malloc*.test) done
 * for subcirc's runtime. SC_THREADED: some runs start two workers.
 *
 * How. The library calls malloc, calloc, realloc and aligned_alloc itself
 * (stress.alloc_wrap_covers_the_library fails if it starts calling another
 * allocator). This program is linked with `ld --wrap` for each of those
 * and a few more (tests/CMakeLists.txt), so every call the library's
 * objects make lands in the __wrap_* functions of bench/faults/failalloc.c,
 * which count the calls and fail the Nth while a sweep point is armed
 * (sc_failalloc_arm), then pass on to the
 * real allocator (jemalloc in the normal build, ASan's under ASan).
 * Criterion and libc live in shared objects, which --wrap does not touch,
 * so their allocations are never counted. The counter is atomic: worker
 * threads allocate too.
 *
 * A sweep runs one scenario for N = 1, 2, 3, ... with the Nth allocation
 * failing, until a run completes without reaching its Nth allocation and N
 * is past the most any run of it made (with workers, or after a failure,
 * runs differ). Each point must end in
 *   - success, and then the output equals the single circuit's exactly;
 *   - or a clear error: SC_ENOMEM, with an sc_errmsg raised for it by
 *     that call, out-parameters untouched and nothing left (a failed
 *     create leaves the graph editable; a failed submit applied nothing,
 *     so redoing it must give the reference);
 *   - or a unit panic (SC_EPANIC with a named record), after which the
 *     runtime is idle and consistent (sc_runtime_check_idle) and every
 *     output whose upstream is alive still equals the reference;
 * never a crash, a hang (every wait has a deadline, and an alarm fails a
 * point that runs too long, naming it) or a leak (the ASan pass runs with
 * detect_leaks=1, at the exit of each test's process).
 *
 * Two modes, as SQLite's: "once" fails the Nth allocation only; "persist"
 * fails the Nth and every one after it while armed (the clean-up after an
 * error then meets failures too).
 *
 * Scenarios (one Test each): sc_runtime_create; submit + wait_idle;
 * submit_wait into full one-frame edges; the turns on the host
 * (workers = 0, run by wait_idle); the turns on two workers; the turns
 * under the seeded scheduler (runtime/sim.h); sc_settle_run (what
 * `subcirc stress` runs), sim and pool; integral; shutdown + destroy;
 * sc_placement_parse for every strategy.
 * Each over a per-node and a sharded placement, and most over a manual
 * one whose sharded unit holds an input (routed on the host).
 *
 * Environment:
 *   SC_ALLOC_SWEEP_MAX    the largest N tried per sweep (default 100000;
 *                         a sweep cut short by it says so);
 *   SC_ALLOC_SWEEP_ONLY   run only that N (to replay a failing point);
 *   SC_ALLOC_SWEEP_ROUNDS how many times a sweep with workers or the
 *                         seeded scheduler is run (default 10; each run
 *                         interleaves differently, the sim with the next
 *                         seed);
 *   SC_ALLOC_POINT_SECS   the alarm per point (default 60);
 *   SC_SEED               the rows' seed, and the first schedule's
 *                         (default 14; tests/support/prop.h).
 * Each sweep prints "alloc sweep: <name>: <points> points" to stderr, and
 * each scenario its points in all.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/faults/failalloc.h"
#include "operators/aggregate.h"
#include "operators/batch.h"
#include "operators/circuit.h"
#include "operators/error.h"
#include "operators/graph.h"
#include "tests/support/prop.h"
#include "runtime/sim.h"
#include "units/placement.h"
#include "units/runtime.h"
#include "units/settle.h"

/* --- one sweep point: its name, and an alarm that names it ---------------
 */

struct point {
	const char *sweep; /* "runtime_create sharded:2 workers=2 once ..." */
	uint64_t n;	   /* the allocation that fails */
	bool persist;	   /* and every later one */
	uint64_t seed;	   /* the seeded scheduler's, where one runs */
};

/* What the alarm writes; formatted before the point starts, because a
 * signal handler may only write(2). */
static char alarm_text[256];
static size_t alarm_len;

static void
on_alarm(int sig)
{
	(void)sig;
	(void)!write(2, alarm_text, alarm_len);
	abort();
}

static uint64_t
env_u64(const char *name, uint64_t dflt)
{
	const char *s = getenv(name);
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return dflt;
	errno = 0;
	v = strtoull(s, &end, 10);
	cr_assert(errno == 0 && *end == '\0', "%s=%s is not a number", name, s);
	return (uint64_t)v;
}

static void
point_begin(const struct point *pt)
{
	int len = snprintf(alarm_text, sizeof(alarm_text),
			   "alloc sweep: %s: point %llu ran past its alarm "
			   "(a hang); replay with SC_ALLOC_SWEEP_ONLY=%llu\n",
			   pt->sweep, (unsigned long long)pt->n,
			   (unsigned long long)pt->n);

	alarm_len = len < 0 ? 0 : (size_t)len;
	if (alarm_len >= sizeof(alarm_text))
		alarm_len = sizeof(alarm_text) - 1;
	cr_assert_neq(signal(SIGALRM, on_alarm), SIG_ERR);
	alarm((unsigned)env_u64("SC_ALLOC_POINT_SECS", 60));
}

static void
point_end(void)
{
	alarm(0);
}

#define PT_FMT                                                                 \
	"%s, allocation %llu failing (SC_ALLOC_SWEEP_ONLY=%llu replays it): "
#define PT(pt)                                                                 \
	(pt)->sweep, (unsigned long long)(pt)->n, (unsigned long long)(pt)->n
#define WAIT_NS ((uint64_t)20 * 1000 * 1000 * 1000) /* every wait's limit */

/* --- the graph: an aggregate and a join --------------------------------- */

/*
 *   a(k, v) -> sum v by k -> agg(k, s) --\
 *                                         join on k -> out(k, s, w)
 *   b(k, w) -----------------------------/
 *
 * The host submits NBATCH batches of seeded rows, alternately to a and b;
 * from the fifth on, each also retracts rows of the one four before it.
 */
#define NBATCH 8
#define NROWS  12 /* new rows per batch */
#define NBACK  3  /* rows retracted per batch, from the fifth on */

struct fix {
	struct sc_graph *g;
	struct sc_schema s;
	int a, b, agg, join, out;
	struct sc_batch *in[NBATCH]; /* what the host submits, in order */
	int to[NBATCH];		     /* to which input */
	struct sc_batch *want;	     /* the single circuit's output */
	uint64_t seed;		     /* of the rows */
};

/* Batch i: NROWS seeded rows (k in 0..9, a value in 0..99), and from
 * i = 4 on the first NBACK of batch i - 4's rows with weight -1. */
static struct sc_batch *
batch_of(uint64_t (*rows)[NROWS][2], int i, struct sc_rng *r)
{
	uint64_t flat[2 * (NROWS + NBACK)];
	int64_t w[NROWS + NBACK];
	struct sc_batch *b = NULL;
	size_t n = 0;

	for (int j = 0; j < NROWS; j++, n++) {
		rows[i][j][0] = sc_enc_i64((int64_t)sc_rng_below(r, 10));
		rows[i][j][1] = sc_enc_i64((int64_t)sc_rng_below(r, 100));
		flat[2 * n] = rows[i][j][0];
		flat[2 * n + 1] = rows[i][j][1];
		w[n] = 1;
	}
	for (int j = 0; i >= 4 && j < NBACK; j++, n++) {
		flat[2 * n] = rows[i - 4][j][0];
		flat[2 * n + 1] = rows[i - 4][j][1];
		w[n] = -1;
	}
	cr_assert_eq(sc_batch_from_records(2, flat, w, n, &b), 0);
	return b;
}

/* The reference: the whole graph as one circuit, every batch in one step
 * (the settle property: the placed runtime must end where this does). */
static struct sc_batch *
reference(struct fix *f)
{
	struct sc_circuit *c = NULL;
	struct sc_batch *got = NULL;

	cr_assert_eq(sc_circuit_create(f->g, &c), 0, "%s", sc_errmsg());
	for (int i = 0; i < NBATCH; i++)
		cr_assert_eq(sc_circuit_feed(c, f->to[i], f->in[i]), 0);
	cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_integral(c, f->out, &got), 0);
	sc_circuit_destroy(c);
	cr_assert_geq(sc_batch_count(got), 8, "a reference too small to tell");
	return got;
}

static void
fix_init(struct fix *f)
{
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_aggregate_spec sum = {.ncols = 2,
					.k = 1,
					.kind = SC_AGG_SUM,
					.col = 1,
					.col_type = SC_TYPE_I64};
	uint64_t rows[NBATCH][NROWS][2];
	struct sc_rng r;

	memset(f, 0, sizeof(*f));
	f->seed = sc_prop_seed(14);
	sc_rng_seed(&r, f->seed);
	cr_assert_eq(sc_schema_init(&f->s, 2, t, NULL), 0);
	cr_assert_eq(sc_graph_create(&f->g), 0);
	f->a = sc_graph_input(f->g, "a", &f->s);
	f->b = sc_graph_input(f->g, "b", &f->s);
	f->agg = sc_graph_aggregate(f->g, f->a, &sum);
	f->join = sc_graph_join(f->g, f->agg, f->b, 1);
	f->out = sc_graph_output(f->g, "out", f->join);
	cr_assert_geq(f->out, 0, "%s", sc_errmsg());
	for (int i = 0; i < NBATCH; i++) {
		f->in[i] = batch_of(rows, i, &r);
		f->to[i] = i % 2 ? f->b : f->a;
	}
	f->want = reference(f);
}

static void
fix_fini(struct fix *f)
{
	for (int i = 0; i < NBATCH; i++)
		sc_batch_release(f->in[i]);
	sc_batch_release(f->want);
	sc_graph_destroy(f->g);
}

/* --- what each point must end in ---------------------------------------- */

/* Whether this thread's last message is about code rc (sc_errorf
 * prefixes its name); the message is cleared before each armed call, so
 * it cannot be an older one. */
static bool
msg_names(int rc)
{
	const char *name = sc_errname(rc);

	return strncmp(sc_errmsg(), name, strlen(name)) == 0 &&
	       strlen(sc_errmsg()) > strlen(name) + 2;
}

/* rc from `call` is 0, or SC_ENOMEM with words (had_msg: msg_names, right
 * after the call). */
static void
expect_ok_or_enomem(const struct point *pt, const char *call, int rc,
		    bool had_msg)
{
	cr_assert(rc == 0 || rc == SC_ENOMEM,
		  PT_FMT "%s returned %s (%s), not 0 or SC_ENOMEM", PT(pt),
		  call, sc_errname(rc), sc_errmsg());
	cr_assert(rc == 0 || had_msg, PT_FMT "%s failed without a message",
		  PT(pt), call);
}

/* rc from a wait is 0, or SC_EPANIC with a record that names the unit
 * and says what happened. */
static void
expect_ok_or_panic(const struct point *pt, const char *call, int rc,
		   const struct sc_panic_record *rec)
{
	cr_assert(rc == 0 || rc == SC_EPANIC,
		  PT_FMT "%s returned %s (%s), not 0 or SC_EPANIC", PT(pt),
		  call, sc_errname(rc), sc_errmsg());
	if (rc == SC_EPANIC)
		cr_assert(rec->name[0] && rec->message[0],
			  PT_FMT "%s: a panic without a name or message",
			  PT(pt), call);
}

/* A placement by name: a strategy sc_placement_parse knows, or MANUAL:
 * a and the aggregate in unit 0, b in unit 1, the join and the output in
 * unit 2, units 0 and 2 sharded two ways (so a submit to a is routed by
 * key on the host). */
#define MANUAL "manual(a+agg x2, b, join+out x2)"

static struct sc_placement *
placement(struct fix *f, const char *spec)
{
	struct sc_placement *p = NULL;

	if (strcmp(spec, MANUAL) == 0) {
		int32_t map[5];

		map[f->a] = 0;
		map[f->agg] = 0;
		map[f->b] = 1;
		map[f->join] = 2;
		map[f->out] = 2;
		cr_assert_eq(sc_placement_manual(f->g, map, 5, 3, &p), 0, "%s",
			     sc_errmsg());
		cr_assert_eq(sc_placement_set_shards(p, 0, 2), 0, "%s",
			     sc_errmsg());
		cr_assert_eq(sc_placement_set_shards(p, 2, 2), 0, "%s",
			     sc_errmsg());
		return p;
	}
	cr_assert_eq(sc_placement_parse(f->g, spec, 7, &p), 0, "%s: %s", spec,
		     sc_errmsg());
	return p;
}

static struct sc_runtime *
runtime(struct fix *f, const struct sc_placement *p, uint32_t workers,
	uint32_t capacity)
{
	/* budget 1: a turn takes one frame, so a run has many turns */
	struct sc_runtime_opts o = {
	    .workers = workers, .budget = 1, .edge_capacity = capacity};
	struct sc_runtime *rt = NULL;

	cr_assert_eq(sc_runtime_create(f->g, p, &o, &rt), 0, "%s", sc_errmsg());
	return rt;
}

/*
 * After a point, disarmed: wait until idle (a panic is allowed: it was
 * reported where it happened), check the idle invariant, and read the
 * output. If no unit upstream of it died, it must be exactly the
 * reference: a run that reported success, or whose failed calls were
 * redone, may not be silently wrong.
 */
static void
verify(struct fix *f, struct sc_runtime *rt, const struct point *pt, bool shut)
{
	struct sc_batch *got = NULL;
	int rc;

	if (!shut) {
		rc = sc_runtime_wait_idle(rt, WAIT_NS, NULL);
		cr_assert(rc == 0 || rc == SC_EPANIC,
			  PT_FMT "wait_idle after the point: %s (%s)", PT(pt),
			  sc_errname(rc), sc_errmsg());
	}
	rc = sc_runtime_check_idle(rt);
	cr_assert_eq(rc, 0, PT_FMT "not idle after wait_idle: %s", PT(pt),
		     sc_errmsg());
	rc = sc_runtime_integral(rt, f->out, &got);
	if (sc_runtime_upstream_dead(rt, f->out, NULL) == SC_EDEAD) {
		cr_assert(rc == 0 || rc == SC_EDEAD,
			  PT_FMT "integral of a dead output: %s (%s)", PT(pt),
			  sc_errname(rc), sc_errmsg());
	} else {
		cr_assert_eq(rc, 0, PT_FMT "integral: %s (%s)", PT(pt),
			     sc_errname(rc), sc_errmsg());
		cr_assert(sc_batch_equal(got, f->want),
			  PT_FMT "every unit alive, yet the output differs "
				 "from the single circuit's",
			  PT(pt));
	}
	sc_batch_release(got);
}

/* Submit every batch, disarmed: the reference run, or the redo of those
 * that failed (rcs[i] != 0; NULL: all). A redo may meet a dead unit. */
static void
submit_rest(struct fix *f, struct sc_runtime *rt, const int *rcs,
	    const struct point *pt)
{
	for (int i = 0; i < NBATCH; i++) {
		int rc;

		if (rcs && rcs[i] == 0)
			continue;
		rc = sc_runtime_submit_wait(rt, f->to[i], f->in[i], WAIT_NS);
		cr_assert(rc == 0 || rc == SC_EDEAD,
			  PT_FMT "submit %d (redone): %s (%s)", PT(pt), i,
			  sc_errname(rc), sc_errmsg());
	}
}

/* --- the scenarios: each runs one point --------------------------------- */

struct cfg {
	const char *spec; /* placement strategy */
	uint32_t workers; /* threads; with sim, the units the sim holds */
	bool sim;	  /* turns run by the seeded scheduler */
};

typedef void (*scenario_fn)(struct fix *f, const struct cfg *cfg,
			    const struct point *pt);

/* sc_runtime_create, then (disarmed) a whole run on what it built. */
static void
run_create(struct fix *f, const struct cfg *cfg, const struct point *pt)
{
	struct sc_runtime_opts o = {.workers = cfg->workers, .budget = 1};
	struct sc_placement *p = placement(f, cfg->spec);
	struct sc_runtime *rt = NULL;
	bool had_msg;
	int rc;

	sc_error_clear();
	sc_failalloc_arm(pt->n, pt->persist);
	rc = sc_runtime_create(f->g, p, &o, &rt);
	had_msg = msg_names(rc);
	sc_failalloc_disarm();
	expect_ok_or_enomem(pt, "sc_runtime_create", rc, had_msg);
	if (rc) {
		cr_assert_null(rt, PT_FMT "create failed, yet wrote *out",
			       PT(pt));
		/* Nothing is left on failure: the graph is not frozen. */
		cr_assert_eq(sc_graph_set_name(f->g, f->a, "a"), 0,
			     PT_FMT "create failed and left the graph frozen",
			     PT(pt));
	} else {
		submit_rest(f, rt, NULL, pt);
		verify(f, rt, pt, false);
		cr_assert_eq(sc_runtime_shutdown(rt, NULL), 0);
	}
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
}

/* Every submit and the wait for idle armed: with workers = 0 the submits
 * only queue (the turns run in wait_idle); with workers the turns run
 * meanwhile on the pool. A submit that failed with SC_ENOMEM applied
 * nothing, so redoing it must give the reference. */
static void
run_submit(struct fix *f, const struct cfg *cfg, const struct point *pt)
{
	struct sc_placement *p = placement(f, cfg->spec);
	struct sc_runtime *rt = runtime(f, p, cfg->workers, 0);
	struct sc_panic_record rec;
	bool had_msg[NBATCH];
	int rcs[NBATCH], rc;

	memset(&rec, 0, sizeof(rec));
	sc_failalloc_arm(pt->n, pt->persist);
	for (int i = 0; i < NBATCH; i++) {
		sc_error_clear();
		rcs[i] = sc_runtime_submit(rt, f->to[i], f->in[i]);
		had_msg[i] = msg_names(rcs[i]);
	}
	rc = sc_runtime_wait_idle(rt, WAIT_NS, &rec);
	sc_failalloc_disarm();
	for (int i = 0; i < NBATCH; i++) {
		/* With workers, a turn may already have died of an
		 * injected failure: the next submit to it is SC_EDEAD. */
		if (cfg->workers && rcs[i] == SC_EDEAD)
			continue;
		expect_ok_or_enomem(pt, "sc_runtime_submit", rcs[i],
				    had_msg[i]);
	}
	expect_ok_or_panic(pt, "sc_runtime_wait_idle", rc, &rec);
	submit_rest(f, rt, rcs, pt);
	verify(f, rt, pt, false);
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
}

/* Every submit_wait armed, into edges of one frame: they fill, and then
 * submit_wait runs the turns on the host (workers = 0) or waits for the
 * pool's. A failed one applied nothing and is redone. */
static void
run_submit_wait(struct fix *f, const struct cfg *cfg, const struct point *pt)
{
	struct sc_placement *p = placement(f, cfg->spec);
	struct sc_runtime *rt = runtime(f, p, cfg->workers, 1);
	bool had_msg[NBATCH];
	int rcs[NBATCH];

	sc_failalloc_arm(pt->n, pt->persist);
	for (int i = 0; i < NBATCH; i++) {
		sc_error_clear();
		rcs[i] =
		    sc_runtime_submit_wait(rt, f->to[i], f->in[i], WAIT_NS);
		had_msg[i] = msg_names(rcs[i]);
	}
	sc_failalloc_disarm();
	for (int i = 0; i < NBATCH; i++) {
		/* A turn it ran (or the pool ran) may have died of an
		 * injected failure: a later submit to it is SC_EDEAD. */
		if (rcs[i] == SC_EDEAD)
			continue;
		expect_ok_or_enomem(pt, "sc_runtime_submit_wait", rcs[i],
				    had_msg[i]);
	}
	submit_rest(f, rt, rcs, pt);
	verify(f, rt, pt, false);
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
}

/* The host's part under the seeded scheduler: the batches in order, each
 * tried until its edge takes it (SC_EFULL: later), one or two per event.
 * A batch refused otherwise is left for the redo (its code in rcs). */
struct sim_host {
	struct fix *f;
	struct sc_runtime *rt;
	int next;	      /* the next batch */
	int rcs[NBATCH];      /* each batch's submit */
	bool had_msg[NBATCH]; /* msg_names(rcs[i]) */
};

static bool
sim_host(void *ctx, struct sc_exec *ex, uint64_t rnd)
{
	struct sim_host *h = ctx;

	(void)ex;
	for (uint64_t k = 1 + rnd % 2; k > 0 && h->next < NBATCH; k--) {
		int i = h->next, rc;

		sc_error_clear();
		rc = sc_runtime_submit(h->rt, h->f->to[i], h->f->in[i]);
		if (rc == SC_EFULL)
			break;
		h->rcs[i] = rc;
		h->had_msg[i] = msg_names(rc);
		h->next++;
	}
	return h->next < NBATCH;
}

/* The submits and every turn armed, in an order the seeded scheduler
 * chooses (pt->seed), holding up to cfg->workers units at once, over
 * edges of one frame: producers run ahead of consumers, edges fill and
 * outboxes merge. */
static void
run_sim(struct fix *f, const struct cfg *cfg, const struct point *pt)
{
	struct sc_placement *p = placement(f, cfg->spec);
	struct sc_runtime *rt = runtime(f, p, 0, 1);
	struct sim_host h = {.f = f, .rt = rt};
	struct sc_sim_opts so = {.seed = pt->seed,
				 .held_max = cfg->workers,
				 .host = sim_host,
				 .host_ctx = &h};
	struct sc_sim_result res;
	bool had_msg;
	int rc;

	sc_error_clear();
	sc_failalloc_arm(pt->n, pt->persist);
	rc = sc_sim_run(sc_runtime_exec(rt), &so, &res);
	had_msg = msg_names(rc);
	sc_failalloc_disarm();
	/* The sim's own state is one allocation: SC_ENOMEM before any
	 * event; a unit's panic is SC_EPANIC once settled. */
	cr_assert(rc == 0 || rc == SC_EPANIC || (rc == SC_ENOMEM && had_msg),
		  PT_FMT "sc_sim_run: %s (%s)", PT(pt), sc_errname(rc),
		  rc == SC_ETIMEDOUT ? res.why : sc_errmsg());
	for (int i = 0; i < h.next; i++)
		if (h.rcs[i] != SC_EDEAD)
			expect_ok_or_enomem(pt, "sc_runtime_submit", h.rcs[i],
					    h.had_msg[i]);
	for (int i = h.next; i < NBATCH; i++)
		h.rcs[i] = SC_EFULL; /* never taken: redo */
	submit_rest(f, rt, h.rcs, pt);
	verify(f, rt, pt, false);
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
}

/* The settle API's check of the placed output, independent of its own:
 * the reference computed here. */
struct settle_check {
	struct fix *f;
	int calls;  /* outputs it was asked about */
	bool equal; /* all of them equal to the reference */
};

static int
settle_verify(void *ctx, int output, const struct sc_batch *got)
{
	struct settle_check *c = ctx;

	c->calls++;
	c->equal =
	    c->equal && output == c->f->out && sc_batch_equal(got, c->f->want);
	return c->equal ? 0
			: sc_errorf(SC_ESTATE, "the output differs from the "
					       "test's reference");
}

/*
 * sc_settle_run armed (the API `subcirc stress` runs), under the seeded
 * scheduler (cfg->sim, seed pt->seed) or a pool of cfg->workers threads,
 * over edges of one frame. A run may fail (res.ok false, with a code and
 * words: a unit died of a failed allocation, or SC_ENOMEM), but one it
 * calls good must have shown every output, equal to the reference, to
 * the verify callback: never "ok" on a comparison it could not make.
 */
static void
run_settle(struct fix *f, const struct cfg *cfg, const struct point *pt)
{
	struct sc_settle_step steps[NBATCH];
	struct sc_placement *p = placement(f, cfg->spec);
	struct sc_settle_work *w = NULL;
	struct settle_check chk = {.f = f, .equal = true};
	struct sc_settle_opts o = {.mode = cfg->sim ? SC_SETTLE_SIM
						    : SC_SETTLE_POOL,
				   .seed = pt->seed,
				   .units = cfg->workers,
				   .edge_capacity = 1,
				   .verify = settle_verify,
				   .verify_ctx = &chk};
	struct sc_settle_result res;
	int rc;

	for (int i = 0; i < NBATCH; i++)
		steps[i] = (struct sc_settle_step){f->to[i], f->in[i]};
	cr_assert_eq(sc_settle_work_create(f->g, steps, NBATCH, 0, &w), 0, "%s",
		     sc_errmsg());
	sc_failalloc_arm(pt->n, pt->persist);
	rc = sc_settle_run(w, p, &o, &res);
	sc_failalloc_disarm();
	cr_assert(rc == 0 || rc == SC_ENOMEM,
		  PT_FMT "sc_settle_run returned %s (%s)", PT(pt),
		  sc_errname(rc), res.why);
	cr_assert(res.ok || pt->n != UINT64_MAX,
		  "%s: a clean settle run failed: %s", pt->sweep, res.why);
	if (rc == 0 && res.ok)
		cr_assert(chk.calls == 1 && chk.equal,
			  PT_FMT "settle said ok, yet verified %d outputs%s",
			  PT(pt), chk.calls, chk.equal ? "" : ", one differs");
	else
		cr_assert(res.error < 0 && res.why[0],
			  PT_FMT "a failed settle run without a code (%d) or "
				 "words",
			  PT(pt), res.error);
	sc_settle_result_fini(&res);
	sc_settle_work_destroy(w);
	sc_placement_destroy(p);
}

/* The turns alone, on the host (workers = 0): submitted disarmed, run by
 * an armed wait_idle. */
static void
run_turns_on_host(struct fix *f, const struct cfg *cfg, const struct point *pt)
{
	struct sc_placement *p = placement(f, cfg->spec);
	struct sc_runtime *rt = runtime(f, p, 0, 0);
	struct sc_panic_record rec;
	int rc;

	memset(&rec, 0, sizeof(rec));
	submit_rest(f, rt, NULL, pt);
	sc_failalloc_arm(pt->n, pt->persist);
	rc = sc_runtime_wait_idle(rt, WAIT_NS, &rec);
	sc_failalloc_disarm();
	expect_ok_or_panic(pt, "sc_runtime_wait_idle", rc, &rec);
	verify(f, rt, pt, false);
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
}

/* sc_runtime_integral alone, at idle. */
static void
run_integral(struct fix *f, const struct cfg *cfg, const struct point *pt)
{
	struct sc_placement *p = placement(f, cfg->spec);
	struct sc_runtime *rt = runtime(f, p, cfg->workers, 0);
	struct sc_batch *got = NULL;
	bool had_msg;
	int rc;

	submit_rest(f, rt, NULL, pt);
	cr_assert_eq(sc_runtime_wait_idle(rt, WAIT_NS, NULL), 0);
	sc_error_clear();
	sc_failalloc_arm(pt->n, pt->persist);
	rc = sc_runtime_integral(rt, f->out, &got);
	had_msg = msg_names(rc);
	sc_failalloc_disarm();
	expect_ok_or_enomem(pt, "sc_runtime_integral", rc, had_msg);
	if (rc)
		cr_assert_null(got, PT_FMT "integral failed, yet wrote *out",
			       PT(pt));
	else
		cr_assert(sc_batch_equal(got, f->want),
			  PT_FMT "integral differs from the single circuit's",
			  PT(pt));
	sc_batch_release(got);
	verify(f, rt, pt, false);
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
}

/* Shutdown with the turns still queued (it waits for idle, so they run
 * inside it), then destroy, each armed. */
static void
run_shutdown(struct fix *f, const struct cfg *cfg, const struct point *pt)
{
	struct sc_placement *p = placement(f, cfg->spec);
	struct sc_runtime *rt = runtime(f, p, cfg->workers, 0);
	struct sc_panic_record rec;
	int rc;

	memset(&rec, 0, sizeof(rec));
	submit_rest(f, rt, NULL, pt);
	sc_failalloc_arm(pt->n, pt->persist);
	rc = sc_runtime_shutdown(rt, &rec);
	sc_failalloc_disarm();
	expect_ok_or_panic(pt, "sc_runtime_shutdown", rc, &rec);
	verify(f, rt, pt, true);
	sc_failalloc_resume();
	sc_runtime_destroy(rt);
	sc_failalloc_disarm();
	sc_placement_destroy(p);
}

/* Two placements are the same: units, shards, every node's unit. */
static bool
same_placement(const struct sc_placement *x, const struct sc_placement *y)
{
	uint32_t units = sc_placement_units(x);

	if (units != sc_placement_units(y) ||
	    sc_placement_nodes(x) != sc_placement_nodes(y))
		return false;
	for (uint32_t u = 0; u < units; u++)
		if (sc_placement_shards(x, u) != sc_placement_shards(y, u))
			return false;
	for (size_t i = 0; i < sc_placement_nodes(x); i++)
		if (sc_placement_unit_of(x, (int)i) !=
		    sc_placement_unit_of(y, (int)i))
			return false;
	return true;
}

/* sc_placement_parse alone; what it makes must equal an unarmed parse. */
static void
run_parse(struct fix *f, const struct cfg *cfg, const struct point *pt)
{
	struct sc_placement *want = placement(f, cfg->spec), *p = NULL;
	bool had_msg;
	int rc;

	sc_error_clear();
	sc_failalloc_arm(pt->n, pt->persist);
	rc = sc_placement_parse(f->g, cfg->spec, 7, &p);
	had_msg = msg_names(rc);
	sc_failalloc_disarm();
	expect_ok_or_enomem(pt, "sc_placement_parse", rc, had_msg);
	if (rc)
		cr_assert_null(p, PT_FMT "parse failed, yet wrote *out",
			       PT(pt));
	else
		cr_assert(same_placement(p, want),
			  PT_FMT "the placement differs from an unfailed "
				 "parse's",
			  PT(pt));
	sc_placement_destroy(p);
	sc_placement_destroy(want);
}

/* --- the sweep ------------------------------------------------------------
 */

/* Run one point; returns how many allocations it saw, and in *hit
 * whether the Nth was among them. */
static uint64_t
run_point(struct fix *f, scenario_fn run, const struct cfg *cfg,
	  const struct point *pt, bool *hit)
{
	point_begin(pt);
	run(f, cfg, pt);
	point_end();
	*hit = sc_failalloc_failed() != 0;
	return sc_failalloc_seen();
}

/*
 * One sweep: N = 1, 2, ... until a run no longer reaches its Nth
 * allocation and N is past the most any run made. With workers that count
 * varies from run to run (how turns group frames), so the most starts at
 * the largest of a few clean runs (nothing failing), and the sweep stops
 * only past it. Returns the points at which a failure was injected.
 */
static uint64_t
sweep_round(struct fix *f, scenario_fn run, const struct cfg *cfg,
	    struct point *pt, uint64_t most)
{
	uint64_t max = env_u64("SC_ALLOC_SWEEP_MAX", 100000);
	uint64_t only = env_u64("SC_ALLOC_SWEEP_ONLY", 0);
	uint64_t hits = 0, n, seen;
	bool hit;

	for (n = only ? only : 1; n <= (only ? only : max); n++) {
		pt->n = n;
		seen = run_point(f, run, cfg, pt, &hit);
		most = seen > most ? seen : most;
		hits += hit;
		if (!hit && n > most)
			break;
	}
	if (only)
		(void)fprintf(stderr, "alloc sweep: %s: point %llu %s\n",
			      pt->sweep, (unsigned long long)only,
			      hits ? "failed an allocation"
				   : "was never reached");
	else
		(void)fprintf(stderr,
			      "alloc sweep: %s: %llu points (runs make up to "
			      "%llu allocations)%s\n",
			      pt->sweep, (unsigned long long)hits,
			      (unsigned long long)most,
			      n > max ? ", cut short by SC_ALLOC_SWEEP_MAX"
				      : "");
	return hits;
}

/*
 * Sweep `run` in both modes, SC_ALLOC_SWEEP_ROUNDS times with workers
 * (other interleavings meet the failures elsewhere), once without.
 * Returns the points swept in all (each round prints its own, for the
 * README's reliability table).
 */
static uint64_t
sweep(const char *what, scenario_fn run, const struct cfg *cfg)
{
	uint64_t rounds =
	    cfg->workers || cfg->sim ? env_u64("SC_ALLOC_SWEEP_ROUNDS", 10) : 1;
	uint64_t total = 0, most, seen;
	char name[200];
	struct point pt = {.sweep = name};
	struct fix f;
	bool hit;

	fix_init(&f);
	for (uint64_t round = 0; round < 2 * rounds; round++) {
		/* Each schedule seed runs in both modes. */
		pt.seed = f.seed + round / 2;
		pt.persist = round % 2 == 1;
		(void)snprintf(name, sizeof(name), "%s %s %s=%u %s seed %llu",
			       what, cfg->spec,
			       cfg->sim ? "sim held" : "workers", cfg->workers,
			       pt.persist ? "persist" : "once",
			       (unsigned long long)pt.seed);
		pt.n = UINT64_MAX; /* clean runs first */
		most = 0;
		for (int i = 0; i < (cfg->workers && !cfg->sim ? 3 : 1); i++) {
			seen = run_point(&f, run, cfg, &pt, &hit);
			cr_assert(!hit);
			most = seen > most ? seen : most;
		}
		total += sweep_round(&f, run, cfg, &pt, most);
	}
	fix_fini(&f);
	return total;
}

/* Sweep `run` over every configuration given; the points swept in all. */
static uint64_t
sweep_all(const char *what, scenario_fn run, const struct cfg *cfgs, size_t n)
{
	uint64_t total = 0;

	for (size_t i = 0; i < n; i++)
		total += sweep(what, run, &cfgs[i]);
	(void)fprintf(stderr, "alloc sweep: %s: %llu points in all\n", what,
		      (unsigned long long)total);
	return total;
}

#define SWEEP_ALL(what, run, cfgs)                                             \
	sweep_all(what, run, cfgs, sizeof(cfgs) / sizeof((cfgs)[0]))

/* --- the tests ---------------------------------------------------------- */

/* Each test asserts that its sweep injected failures at all (a sweep of 0
 * points would prove nothing); every point's own checks are above. */

Test(alloc, every_failed_allocation_in_runtime_create_is_an_error)
{
	static const struct cfg cfgs[] = {
	    {"per-node", 0, false},  {"sharded:2", 0, false},
	    {MANUAL, 0, false},	     {"per-node", 2, false},
	    {"sharded:2", 2, false}, {MANUAL, 2, false}};

	cr_assert_gt(SWEEP_ALL("runtime_create", run_create, cfgs), 0);
}

Test(alloc, every_failed_allocation_in_submit_and_wait_idle_is_an_error)
{
	static const struct cfg cfgs[] = {{"per-node", 0, false},
					  {"sharded:2", 0, false},
					  {MANUAL, 0, false}};

	cr_assert_gt(SWEEP_ALL("submit+wait_idle", run_submit, cfgs), 0);
}

Test(alloc, every_failed_allocation_in_submit_wait_on_full_edges_is_an_error)
{
	static const struct cfg cfgs[] = {{"per-node", 0, false},
					  {MANUAL, 0, false},
					  {"per-node", 2, false},
					  {MANUAL, 2, false}};

	cr_assert_gt(
	    SWEEP_ALL("submit_wait, full edges", run_submit_wait, cfgs), 0);
}

Test(alloc, every_failed_allocation_under_the_seeded_scheduler_ends_well)
{
	static const struct cfg cfgs[] = {
	    {"per-node", 2, true}, {"sharded:2", 3, true}, {MANUAL, 2, true}};

	cr_assert_gt(SWEEP_ALL("seeded schedules", run_sim, cfgs), 0);
}

Test(alloc, every_failed_allocation_in_a_settle_run_is_reported_never_ok)
{
	static const struct cfg cfgs[] = {
	    {"per-node", 2, true}, {MANUAL, 2, true}, {"sharded:2", 2, false}};

	cr_assert_gt(SWEEP_ALL("settle runs", run_settle, cfgs), 0);
}

Test(alloc, every_failed_allocation_in_a_turn_on_the_host_is_a_panic)
{
	static const struct cfg cfgs[] = {{"per-node", 0, false},
					  {"sharded:2", 0, false},
					  {MANUAL, 0, false}};

	cr_assert_gt(SWEEP_ALL("turns on the host", run_turns_on_host, cfgs),
		     0);
}

Test(alloc, every_failed_allocation_in_turns_on_two_workers_is_a_panic)
{
	static const struct cfg cfgs[] = {{"per-node", 2, false},
					  {"sharded:2", 2, false},
					  {MANUAL, 2, false}};

	cr_assert_gt(SWEEP_ALL("turns on two workers", run_submit, cfgs), 0);
}

Test(alloc, every_failed_allocation_in_integral_is_an_error)
{
	/* One replica's integral may allocate nothing; a sum of two does. */
	static const struct cfg cfgs[] = {{"per-node", 0, false},
					  {"sharded:2", 0, false},
					  {MANUAL, 0, false}};

	cr_assert_gt(SWEEP_ALL("integral", run_integral, cfgs), 0);
}

Test(alloc, every_failed_allocation_in_shutdown_and_destroy_ends_well)
{
	/* With the turns still queued, so that they run inside shutdown. */
	static const struct cfg cfgs[] = {{"per-node", 0, false},
					  {"sharded:2", 2, false},
					  {MANUAL, 2, false}};

	cr_assert_gt(SWEEP_ALL("shutdown+destroy", run_shutdown, cfgs), 0);
}

/*
 * The first bug the sweep found: a unit dying of an allocation failure had
 * no memory left to list its peers (executor.c, gather_peers), so none was
 * kicked, and a frame it had sent before dying sat in a live consumer's
 * edge at idle. Now every unit is kicked then. Here: every allocation of
 * the turns fails (persist from the first), on the host.
 */
Test(alloc, a_unit_dying_with_no_memory_for_its_peers_leaves_no_frame_behind)
{
	static const struct cfg cfg = {"per-node", 0, false};
	struct point pt = {
	    .sweep = "dying with no memory", .n = 1, .persist = true};
	struct fix f;

	fix_init(&f);
	point_begin(&pt);
	run_turns_on_host(&f, &cfg, &pt); /* verify: check_idle is 0 */
	point_end();
	cr_assert_gt(sc_failalloc_failed(), 1, "nothing failed");
	fix_fini(&f);
}

/*
 * Every strategy sc_placement_parse knows: a failed allocation is an error,
 * never a crash ("chains" must not walk parent[] when chain_parents failed
 * before writing it).
 */
Test(alloc, every_failed_allocation_in_placement_parse_is_an_error)
{
	static const struct cfg cfgs[] = {{"single", 0, false},
					  {"per-node", 0, false},
					  {"chains", 0, false},
					  {"random:3", 0, false},
					  {"sharded:2", 0, false}};

	cr_assert_gt(SWEEP_ALL("placement_parse", run_parse, cfgs), 0);
}
