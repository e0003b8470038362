/*
 * test_runtime_symbols.c - under a runtime, symbols follow the live state
 * too (operators/symbol.h, "Who holds an id"): every edge holds the ids of
 * the frames it has accepted until they leave it (fed, coalesced in the
 * outbox, drained or refused at a closed edge, dropped at destroy), so a
 * host may release its ids as soon as its submit returned 0. Each drop path
 * on an edge of its own, then whole runtimes on a real pool and on the
 * seeded scheduler with a host that interns unique strings and releases
 * them at once.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "operators/aggregate.h"
#include "operators/symbol.h"
#include "runtime/sim.h"
#include "tests/support/prop.h"
#include "tests/support/rt_watchdog.h"
#include "units/edge.h"
#include "units/edge_int.h"
#include "units/placement.h"
#include "units/runtime.h"

/* Rows (name, value): name a symbol of t. */
static void
schema_sv(struct sc_schema *s, struct sc_symtab *t)
{
	enum sc_type ty[2] = {SC_TYPE_SYMBOL, SC_TYPE_I64};

	cr_assert_eq(sc_schema_init(s, 2, ty, t), 0);
}

static struct sc_batch *
row_of(uint64_t id, int64_t v, int64_t w)
{
	uint64_t row[2] = {id, sc_enc_i64(v)};
	struct sc_batch *b = NULL;

	cr_assert_eq(sc_batch_from_records(2, row, &w, 1, &b), 0);
	return b;
}

static bool
is_live(struct sc_symtab *t, uint64_t id)
{
	const char *s = NULL;

	return sc_symtab_lookup(t, id, &s, NULL) == 0;
}

/* --- one edge: each way a frame leaves it ------------------------------- */

struct held_edge {
	struct sc_symtab *t;
	struct sc_schema s;
	struct sc_edge *e;
};

static void
held_edge_init(struct held_edge *h, uint32_t capacity)
{
	struct sc_edge_opts o = {
	    .ncols = 2, .capacity = capacity, .outbox_bound = 64};
	struct sc__symcols sy;

	cr_assert_eq(sc_symtab_create(&h->t), 0);
	schema_sv(&h->s, h->t);
	cr_assert_eq(sc_edge_create(&o, &h->e), 0);
	sc__symcols_of(&h->s, &sy);
	cr_assert(sc__symcols_any(&sy));
	sc__edge_set_symbols(h->e, &sy);
}

/* Intern text, send (id, v) x w, release the sender's id; the id. */
static uint64_t
send_text(struct held_edge *h, const char *text, int64_t v, int64_t w, int want)
{
	uint64_t id;

	cr_assert_eq(sc_symtab_intern_cstr(h->t, text, &id), 0);
	cr_assert_eq(sc_edge_send(h->e, row_of(id, v, w)), want, "%s",
		     sc_errmsg());
	cr_assert_eq(sc_symtab_release(h->t, id), 0);
	return id;
}

/* Poll one frame and let it go as a consumer that fed it does. */
static void
poll_done(struct held_edge *h)
{
	struct sc_batch *b = NULL;
	size_t n = 0;

	cr_assert_eq(sc_edge_poll(h->e, 1, &b, &n), 0);
	cr_assert_eq(n, 1);
	sc__edge_frame_done(h->e, b);
}

Test(runtime_symbols, a_frame_holds_its_ids_until_the_consumer_is_done)
{
	struct held_edge h;
	uint64_t id;

	held_edge_init(&h, 4);
	id = send_text(&h, "apple", 1, 1, 0);
	cr_assert(is_live(h.t, id), "the edge does not hold its frame's id");
	poll_done(&h);
	cr_assert(!is_live(h.t, id), "the frame's hold outlived it");
	cr_assert_eq(sc_symtab_count(h.t), 0);
	sc_edge_destroy(h.e);
	sc_symtab_destroy(h.t);
}

Test(runtime_symbols, the_outbox_sum_holds_before_its_parts_let_go)
{
	struct held_edge h;
	uint64_t a, b, c;

	held_edge_init(&h, 1);
	a = send_text(&h, "a", 1, 1, 0);	/* the ring */
	b = send_text(&h, "b", 2, 1, SC_EFULL); /* the outbox */
	c = send_text(&h, "c", 3, 1, SC_EFULL); /* summed in */
	cr_assert(is_live(h.t, a) && is_live(h.t, b) && is_live(h.t, c),
		  "an id in the ring or the outbox died");
	/* b's retraction cancels its row in the outbox: nothing holds b. */
	cr_assert_eq(sc_edge_send(h.e, row_of(b, 2, -1)), SC_EFULL);
	cr_assert(!is_live(h.t, b), "a cancelled row's hold stayed");
	cr_assert(is_live(h.t, c), "the sum let c go");
	poll_done(&h);
	cr_assert(!is_live(h.t, a));
	cr_assert_eq(sc_edge_flush(h.e), 0);
	cr_assert(is_live(h.t, c), "the flushed outbox let c go");
	poll_done(&h);
	cr_assert_eq(sc_symtab_count(h.t), 0, "a hold outlived its frame");
	sc_edge_destroy(h.e);
	sc_symtab_destroy(h.t);
}

Test(runtime_symbols, a_dead_consumer_lets_go_drained_refused_and_outbox)
{
	struct held_edge h;
	uint64_t a, b;

	held_edge_init(&h, 1);
	a = send_text(&h, "a", 1, 1, 0);
	b = send_text(&h, "b", 2, 1, SC_EFULL);
	cr_assert(is_live(h.t, a) && is_live(h.t, b));
	sc_edge_close(h.e); /* the consumer died: the ring is drained */
	cr_assert(!is_live(h.t, a), "a drained frame kept its hold");
	cr_assert(is_live(h.t, b), "the outbox goes at the producer's call");
	cr_assert_eq(sc_edge_flush(h.e), SC_EDEAD);
	cr_assert(!is_live(h.t, b), "a refused outbox kept its hold");
	/* A send refused at the closed edge never took a hold. */
	(void)send_text(&h, "c", 3, 1, SC_EDEAD);
	cr_assert_eq(sc_symtab_count(h.t), 0, "a refused send holds an id");
	sc_edge_destroy(h.e);
	sc_symtab_destroy(h.t);
}

Test(runtime_symbols, destroy_lets_go_of_the_ring_and_the_outbox)
{
	struct held_edge h;
	uint64_t a, b;

	held_edge_init(&h, 1);
	a = send_text(&h, "a", 1, 1, 0);
	b = send_text(&h, "b", 2, 1, SC_EFULL);
	cr_assert(is_live(h.t, a) && is_live(h.t, b));
	sc_edge_destroy(h.e);
	cr_assert_eq(sc_symtab_count(h.t), 0, "destroy left holds behind");
	sc_symtab_destroy(h.t);
}

/* --- whole runtimes ------------------------------------------------------ */

static bool panic_once; /* the map fails on v == 13 while set */

static int
same_row(void *ctx, const uint64_t *row, uint64_t *out)
{
	(void)ctx;
	if (panic_once && sc_dec_i64(row[1]) == 13) {
		panic_once = false;
		return SC_ECALLBACK; /* its unit dies, and is rebuilt */
	}
	out[0] = row[0];
	out[1] = row[1];
	return 0;
}

/* in(name, v) -> map (stateless, its own unit) -> count per name -> out,
 * every node in its own unit: frames cross the host edge and two edges
 * between units, the map's unit keeping nothing. */
struct fruit {
	struct sc_symtab *t;
	struct sc_schema s;
	struct sc_graph *g;
	struct sc_placement *p;
	struct sc_runtime *rt;
	int in, out;
	size_t start; /* live ids before the run */
};

static void
fruit_init(struct fruit *f, const struct sc_runtime_opts *o, uint64_t seed)
{
	struct sc_aggregate_spec count = {
	    .ncols = 2, .k = 1, .kind = SC_AGG_COUNT};

	cr_assert_eq(sc_symtab_create(&f->t), 0);
	schema_sv(&f->s, f->t);
	cr_assert_eq(sc_graph_create(&f->g), 0);
	f->in = sc_graph_input(f->g, "fruit", &f->s);
	f->out = sc_graph_output(
	    f->g, "counts",
	    sc_graph_aggregate(f->g,
			       sc_graph_map(f->g, f->in, &f->s, same_row, NULL),
			       &count));
	cr_assert_geq(f->out, 0, "%s", sc_errmsg());
	cr_assert_eq(sc_placement_parse(f->g, "per-node", seed, &f->p), 0);
	cr_assert_eq(sc_runtime_create(f->g, f->p, o, &f->rt), 0, "%s",
		     sc_errmsg());
	f->start = sc_symtab_count(f->t);
}

/* Shut down (want: shutdown's code, SC_EPANIC once a unit panicked). */
static void
fruit_fini_rc(struct fruit *f, int want)
{
	cr_assert_eq(sc_runtime_shutdown(f->rt, NULL), want, "%s", sc_errmsg());
	sc_runtime_destroy(f->rt);
	cr_assert_eq(sc_symtab_count(f->t), f->start,
		     "%zu ids live after shutdown, %zu before the run",
		     sc_symtab_count(f->t), f->start);
	sc_placement_destroy(f->p);
	cr_assert_eq(sc_graph_destroy(f->g), 0);
	sc_symtab_destroy(f->t);
}

static void
fruit_fini(struct fruit *f)
{
	fruit_fini_rc(f, 0);
}

/* Intern text, submit (id, v) x w and release the host's id at once. */
static uint64_t
submit_text(struct fruit *f, const char *text, int64_t v, int64_t w)
{
	struct sc_batch *b;
	uint64_t id;

	cr_assert_eq(sc_symtab_intern_cstr(f->t, text, &id), 0);
	b = row_of(id, v, w);
	cr_assert_eq(sc_runtime_submit_wait(f->rt, f->in, b, 0), 0, "%s",
		     sc_errmsg());
	sc_batch_release(b);
	cr_assert_eq(sc_symtab_release(f->t, id), 0);
	return id;
}

/* The output names exactly the strings "<prefix><i>" for i < n, each
 * counted once (seen[i] marks them). */
static void
check_names(struct fruit *f, const char *prefix, size_t n)
{
	struct sc_batch *got = NULL;
	static bool seen[1024];
	size_t plen = strlen(prefix);

	cr_assert_leq(n, 1024);
	memset(seen, 0, sizeof(seen));
	cr_assert_eq(sc_runtime_integral(f->rt, f->out, &got), 0, "%s",
		     sc_errmsg());
	cr_assert_eq(sc_batch_count(got), n, "%zu names, want %zu",
		     sc_batch_count(got), n);
	for (size_t i = 0; i < n; i++) {
		const uint64_t *row = sc_batch_row(got, i);
		const char *text = NULL;
		unsigned k = 0;

		cr_assert_eq(sc_symtab_lookup(f->t, row[0], &text, NULL), 0,
			     "an output row holds a dead id");
		cr_assert(strncmp(text, prefix, plen) == 0 &&
			      sscanf(text + plen, "%u", &k) == 1 && k < n,
			  "an output row names \"%s\"", text);
		cr_assert(!seen[k], "\"%s\" twice", text);
		seen[k] = true;
		cr_assert_eq(sc_dec_i64(row[1]), 1, "\"%s\" counted %lld", text,
			     (long long)sc_dec_i64(row[1]));
	}
	sc_batch_release(got);
}

/* The same case through a runtime: with the host driving (workers 0)
 * nothing runs before wait_idle, so without the edge's holds apple's id
 * was free again when pear was interned. */
Test(runtime_symbols, apple_and_pear_through_the_runtime_give_two_names)
{
	struct sc_runtime_opts o = {.workers = 0};
	struct fruit f;
	struct sc_batch *got = NULL;
	uint64_t apple, pear;

	fruit_init(&f, &o, 1);
	apple = submit_text(&f, "apple", 1, 1);
	pear = submit_text(&f, "pear", 2, 1);
	cr_assert_neq(apple, pear, "pear took apple's id while it was alive");
	cr_assert_eq(sc_runtime_wait_idle(f.rt, 0, NULL), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_runtime_integral(f.rt, f.out, &got), 0);
	cr_assert_eq(sc_batch_count(got), 2);
	for (size_t i = 0; i < 2; i++) {
		const uint64_t *row = sc_batch_row(got, i);
		const char *text = NULL;

		cr_assert_eq(sc_symtab_lookup(f.t, row[0], &text, NULL), 0);
		cr_assert_str_eq(text, row[0] == apple ? "apple" : "pear");
		cr_assert_eq(sc_dec_i64(row[1]), 1);
	}
	sc_batch_release(got);
	/* Retracted (interned again: the circuit's holds keep the ids). */
	cr_assert_eq(submit_text(&f, "apple", 1, -1), apple);
	cr_assert_eq(submit_text(&f, "pear", 2, -1), pear);
	cr_assert_eq(sc_runtime_wait_idle(f.rt, 0, NULL), 0, "%s", sc_errmsg());
	check_names(&f, "none-", 0);
	fruit_fini(&f);
}

Test(runtime_symbols, submit_of_a_dead_id_is_enoent_and_holds_nothing)
{
	struct sc_runtime_opts o = {.workers = 0};
	struct fruit f;
	struct sc_batch *b;
	uint64_t id;

	fruit_init(&f, &o, 1);
	cr_assert_eq(sc_symtab_intern_cstr(f.t, "gone", &id), 0);
	cr_assert_eq(sc_symtab_release(f.t, id), 0);
	b = row_of(id, 1, 1);
	cr_assert_eq(sc_runtime_submit(f.rt, f.in, b), SC_ENOENT);
	cr_assert(strstr(sc_errmsg(), "not live"), "%s", sc_errmsg());
	sc_batch_release(b);
	cr_assert_eq(sc_runtime_wait_idle(f.rt, 0, NULL), 0);
	check_names(&f, "gone", 0);
	fruit_fini(&f);
}

#define POOL_N 300

/* Unique strings on four workers and edges of two frames, released by the
 * host as soon as each submit returned: inserted, checked, retracted. */
Test(runtime_symbols, unique_strings_on_a_pool_are_named_and_given_back)
{
	struct sc_runtime_opts o = {.workers = 4, .edge_capacity = 2};
	struct sc_test_guard *guard;
	struct fruit f;
	char text[32];

	fruit_init(&f, &o, 1);
	guard = sc_test_guard_begin(sc_runtime_exec(f.rt),
				    "runtime_symbols/pool", 20000);
	for (int r = 0; r < 2; r++) {
		for (unsigned i = 0; i < POOL_N; i++) {
			(void)snprintf(text, sizeof(text), "u%d-%u", r, i);
			(void)submit_text(&f, text, i, 1);
		}
		cr_assert_eq(sc_runtime_wait_idle(f.rt, 0, NULL), 0, "%s",
			     sc_errmsg());
		(void)snprintf(text, sizeof(text), "u%d-", r);
		check_names(&f, text, POOL_N);
		for (unsigned i = 0; i < POOL_N; i++) {
			(void)snprintf(text, sizeof(text), "u%d-%u", r, i);
			(void)submit_text(&f, text, i, -1);
		}
		cr_assert_eq(sc_runtime_wait_idle(f.rt, 0, NULL), 0, "%s",
			     sc_errmsg());
		check_names(&f, "u", 0);
	}
	sc_test_guard_end(guard);
	fruit_fini(&f);
}

/* A unit rebuilt from the integral its input edge kept (runtime.h,
 * Restarts): that trace holds the ids of what it recorded, so the rebuild
 * finds them live though the host released every one at once. */
Test(runtime_symbols, a_rebuilt_unit_finds_its_inputs_ids_alive)
{
	/* One frame a turn: the input's unit steps per row, so its own
	 * holds on the rows behind the death are gone by the rebuild. */
	struct sc_runtime_opts o = {
	    .workers = 0,
	    .budget = 1,
	    .restart = {.kind = SC_RESTART_BOUNDED, .max_restarts = 1}};
	struct sc_runtime_stats st;
	struct fruit f;
	char text[32];

	fruit_init(&f, &o, 1);
	for (unsigned i = 0; i < 40; i++) {
		(void)snprintf(text, sizeof(text), "r-%u", i);
		(void)submit_text(&f, text, i, 1);
	}
	panic_once = true;
	/* The panic stays recorded (runtime.h, Restarts): SC_EPANIC. */
	cr_assert_eq(sc_runtime_wait_idle(f.rt, 0, NULL), SC_EPANIC);
	cr_assert(!panic_once, "the map never failed");
	sc_runtime_stats(f.rt, &st);
	cr_assert_eq(st.restarts, 1, "%u restarts", st.restarts);
	cr_assert_eq(st.panics, 1, "the rebuild died too (a dead id?)");
	cr_assert_eq(st.given_up, 0);
	check_names(&f, "r-", 40);
	for (unsigned i = 0; i < 40; i++) {
		(void)snprintf(text, sizeof(text), "r-%u", i);
		(void)submit_text(&f, text, i, -1);
	}
	cr_assert_eq(sc_runtime_wait_idle(f.rt, 0, NULL), SC_EPANIC);
	check_names(&f, "r-", 0);
	fruit_fini_rc(&f, SC_EPANIC);
}

/* --- the seeded scheduler ------------------------------------------------ */

#define SIM_N 60

struct sim_host {
	struct fruit *f;
	int64_t w;	    /* 1: insert, -1: retract */
	unsigned next;	    /* the next string */
	struct sc_batch *b; /* a submit refused for room, to retry */
	uint64_t id;	    /* its id, still the host's */
	bool error;
};

/* One host event: submit the next string (or retry a full one), then
 * release the host's id at once. */
static bool
sim_event(void *ctx, struct sc_exec *ex, uint64_t rnd)
{
	struct sim_host *h = ctx;
	char text[32];
	int rc;

	(void)ex;
	(void)rnd;
	if (!h->b) {
		if (h->next >= SIM_N)
			return false;
		(void)snprintf(text, sizeof(text), "s-%u", h->next);
		if (sc_symtab_intern_cstr(h->f->t, text, &h->id) != 0) {
			h->error = true;
			return false;
		}
		h->b = row_of(h->id, h->next, h->w);
	}
	rc = sc_runtime_submit(h->f->rt, h->f->in, h->b);
	if (rc == SC_EFULL)
		return true; /* refused: no hold taken, the id stays ours */
	sc_batch_release(h->b);
	h->b = NULL;
	if (rc || sc_symtab_release(h->f->t, h->id) != 0) {
		h->error = true;
		return false;
	}
	h->next++;
	return h->next < SIM_N;
}

static void
sim_phase(struct fruit *f, uint64_t seed, int64_t w)
{
	struct sim_host h = {.f = f, .w = w};
	struct sc_sim_opts so = {
	    .seed = seed, .held_max = 2, .host = sim_event, .host_ctx = &h};
	struct sc_sim_result res;
	int rc = sc_sim_run(sc_runtime_exec(f->rt), &so, &res);

	SC_PROP_ASSERT(seed, "runtime_symbols",
		       "seeded_schedules_name_and_give_back_unique_strings",
		       rc == 0 && !h.error && h.next == SIM_N,
		       "sim: rc %d, %u submitted: %s", rc, h.next, res.why);
	cr_assert_eq(sc_runtime_wait_idle(f->rt, 0, NULL), 0, "%s",
		     sc_errmsg());
}

Test(runtime_symbols, seeded_schedules_name_and_give_back_unique_strings)
{
	uint64_t base = sc_prop_seed(0x5eed5);

	for (uint64_t k = 0; k < sc_prop_count(16); k++) {
		uint64_t seed = base + k;
		struct sc_runtime_opts o = {.workers = 0,
					    .edge_capacity = 1u << (seed % 2)};
		struct fruit f;

		fruit_init(&f, &o, seed);
		sim_phase(&f, seed, 1);
		check_names(&f, "s-", SIM_N);
		sim_phase(&f, seed * 31 + 7, -1);
		check_names(&f, "s-", 0);
		fruit_fini(&f);
	}
}
