/*
 * test_symbol_holds.c - symbols follow the live state of a circuit
 * (symbol.h, "Who holds an id"): a host may release its references once it
 * has fed the rows, the circuit keeps the ids alive while a trace, a kept
 * batch or a pending feed holds a row with them, and gives them back when
 * nothing does; so no id is reused while a row holding it is alive.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "operators/aggregate.h"
#include "operators/circuit.h"
#include "operators/graph.h"
#include "operators/symbol.h"
#include "operators/topk.h"
#include "tests/support/prop.h"

/* Rows (name, value): name a symbol of t. */
static void
schema_sv(struct sc_schema *s, struct sc_symtab *t)
{
	enum sc_type ty[2] = {SC_TYPE_SYMBOL, SC_TYPE_I64};

	cr_assert_eq(sc_schema_init(s, 2, ty, t), 0);
}

/* Feed (id, v) with weight w into `in`. */
static void
feed(struct sc_circuit *c, int in, uint64_t id, int64_t v, int64_t w)
{
	uint64_t row[2] = {id, sc_enc_i64(v)};
	struct sc_batch *b;

	cr_assert_eq(sc_batch_from_records(2, row, &w, 1, &b), 0);
	cr_assert_eq(sc_circuit_feed(c, in, b), 0, "%s", sc_errmsg());
	sc_batch_release(b);
}

/* Intern `text`, feed (id, v) x w, release the host's reference. */
static uint64_t
feed_text(struct sc_circuit *c, struct sc_symtab *t, int in, const char *text,
	  int64_t v, int64_t w)
{
	uint64_t id;

	cr_assert_eq(sc_symtab_intern_cstr(t, text, &id), 0);
	feed(c, in, id, v, w);
	cr_assert_eq(sc_symtab_release(t, id), 0);
	return id;
}

static const char *
text_of(struct sc_symtab *t, uint64_t id)
{
	const char *s = NULL;

	cr_assert_eq(sc_symtab_lookup(t, id, &s, NULL), 0,
		     "id %llu is not live", (unsigned long long)id);
	return s;
}

/* The case that once failed: count per name of "apple" then "pear", each
 * released by the host as soon as it was fed, once gave (#1, 2). */
Test(symbol_holds, counting_apple_and_pear_gives_two_names)
{
	struct sc_aggregate_spec count = {
	    .ncols = 2, .k = 1, .kind = SC_AGG_COUNT};
	struct sc_symtab *t;
	struct sc_schema s;
	struct sc_graph *g;
	struct sc_circuit *c;
	struct sc_batch *got;
	uint64_t apple, pear;
	int in, out;

	cr_assert_eq(sc_symtab_create(&t), 0);
	schema_sv(&s, t);
	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "fruit", &s);
	out = sc_graph_output(g, "counts", sc_graph_aggregate(g, in, &count));
	cr_assert_eq(sc_circuit_create(g, &c), 0, "%s", sc_errmsg());
	apple = feed_text(c, t, in, "apple", 1, 1);
	cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
	pear = feed_text(c, t, in, "pear", 2, 1);
	cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
	cr_assert_neq(apple, pear, "pear took apple's id while it was alive");
	cr_assert_eq(sc_circuit_integral(c, out, &got), 0);
	cr_assert_eq(sc_batch_count(got), 2);
	for (size_t i = 0; i < 2; i++) {
		const uint64_t *row = sc_batch_row(got, i);

		cr_assert_str_eq(text_of(t, row[0]),
				 row[0] == apple ? "apple" : "pear");
		cr_assert_eq(sc_dec_i64(row[1]), 1);
	}
	sc_batch_release(got);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_symtab_count(t), 0, "the circuit's holds outlived it");
	cr_assert_eq(sc_graph_destroy(g), 0);
	sc_symtab_destroy(t);
}

Test(symbol_holds, feeding_a_dead_id_is_enoent_and_applies_nothing)
{
	struct sc_symtab *t;
	struct sc_schema s;
	struct sc_graph *g;
	struct sc_circuit *c;
	struct sc_batch *b, *got;
	uint64_t id, row[2];
	int in, out;

	cr_assert_eq(sc_symtab_create(&t), 0);
	schema_sv(&s, t);
	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &s);
	out = sc_graph_output(g, "out", in);
	cr_assert_eq(sc_circuit_create(g, &c), 0);
	cr_assert_eq(sc_symtab_intern_cstr(t, "gone", &id), 0);
	cr_assert_eq(sc_symtab_release(t, id), 0);
	row[0] = id;
	row[1] = sc_enc_i64(1);
	cr_assert_eq(sc_batch_from_records(2, row, NULL, 1, &b), 0);
	cr_assert_eq(sc_circuit_feed(c, in, b), SC_ENOENT);
	cr_assert(strstr(sc_errmsg(), "not live"), "%s", sc_errmsg());
	sc_batch_release(b);
	cr_assert_eq(sc_circuit_step(c), 0);
	cr_assert_eq(sc_circuit_integral(c, out, &got), 0);
	cr_assert_eq(sc_batch_count(got), 0);
	sc_batch_release(got);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(g), 0);
	sc_symtab_destroy(t);
}

/*
 * Every kind that keeps rows, over symbol columns: names (name, v) joined
 * with tags (name, w); the join counted per name; distinct names; the top
 * name per v by the name, descending (a complemented symbol column in the
 * top-k's trace); a delayed and an integrated copy; a stream output.
 */
struct keepers {
	struct sc_graph *g;
	int names, tags, outs[6];
};

static void
keepers_init(struct keepers *k, struct sc_symtab *t)
{
	struct sc_aggregate_spec count = {
	    .ncols = 3, .k = 1, .kind = SC_AGG_COUNT};
	struct sc_topk_spec top = {.ncols = 2,
				   .key = 1,
				   .norder = 1,
				   .order = {1},
				   .desc = {true},
				   .limit = 1};
	uint32_t swap[2] = {1, 0};
	struct sc_schema s;
	int j, by_v;

	schema_sv(&s, t);
	cr_assert_eq(sc_graph_create(&k->g), 0);
	k->names = sc_graph_input(k->g, "names", &s);
	k->tags = sc_graph_input(k->g, "tags", &s);
	j = sc_graph_join(k->g, k->names, k->tags, 1);
	k->outs[0] = sc_graph_output(k->g, "per_name",
				     sc_graph_aggregate(k->g, j, &count));
	k->outs[1] = sc_graph_output(k->g, "distinct",
				     sc_graph_distinct(k->g, k->names));
	by_v = sc_graph_index_by(k->g, k->names, swap, 2);
	k->outs[2] =
	    sc_graph_output(k->g, "top", sc_graph_topk(k->g, by_v, &top));
	k->outs[3] =
	    sc_graph_output(k->g, "delayed", sc_graph_delay(k->g, k->names));
	k->outs[4] = sc_graph_output(
	    k->g, "integrated",
	    sc_graph_differentiate(k->g, sc_graph_integrate(k->g, k->tags)));
	k->outs[5] = sc_graph_output_stream(k->g, "stream", j);
	cr_assert_geq(k->outs[5], 0, "%s", sc_errmsg());
}

Test(symbol_holds, unique_strings_retracted_give_the_table_back)
{
	enum { N = 300 };
	struct keepers k;
	struct sc_symtab *t;
	struct sc_circuit *c;
	size_t peak = 0, start;
	char text[32];

	cr_assert_eq(sc_symtab_create(&t), 0);
	start = sc_symtab_count(t);
	keepers_init(&k, t);
	cr_assert_eq(sc_circuit_create(k.g, &c), 0, "%s", sc_errmsg());
	for (int i = 0; i < N; i++) {
		(void)snprintf(text, sizeof(text), "url-%d", i);
		feed_text(c, t, k.names, text, i % 5, 1);
		feed_text(c, t, k.tags, text, i, 1);
		/* Retract what was fed 10 steps ago: the ids are found
		 * again (the circuit holds them) and given back later. */
		if (i >= 10) {
			(void)snprintf(text, sizeof(text), "url-%d", i - 10);
			feed_text(c, t, k.names, text, (i - 10) % 5, -1);
			feed_text(c, t, k.tags, text, i - 10, -1);
		}
		cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
		peak = sc_symtab_count(t) > peak ? sc_symtab_count(t) : peak;
	}
	for (int i = N - 10; i < N; i++) {
		(void)snprintf(text, sizeof(text), "url-%d", i);
		feed_text(c, t, k.names, text, i % 5, -1);
		feed_text(c, t, k.tags, text, i, -1);
	}
	for (int i = 0; i < 3; i++)
		cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
	cr_assert_geq(peak, 10, "the circuit held nothing");
	cr_assert_eq(sc_circuit_settle(c), 0);
	cr_assert_eq(sc_symtab_count(t), start,
		     "%zu ids live after everything was retracted",
		     sc_symtab_count(t) - start);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(k.g), 0);
	sc_symtab_destroy(t);
}

/* Random interning, feeding and retracting, the host releasing every id at
 * once: after each step every row of every output reads the text it was
 * fed with (a reused id would read another). */
Test(symbol_holds, no_id_is_reused_while_a_row_holding_it_is_alive)
{
	enum { STEPS = 200, TEXTS = 40 };
	struct keepers k;
	struct sc_symtab *t;
	struct sc_circuit *c;
	struct sc_rng r;
	uint64_t seed = sc_prop_seed(8201);
	int64_t live[TEXTS] = {0}; /* weight fed per text into names */
	uint64_t ids[TEXTS] = {0}; /* its id while live */
	char text[32];

	sc_rng_seed(&r, seed);
	cr_assert_eq(sc_symtab_create(&t), 0);
	keepers_init(&k, t);
	cr_assert_eq(sc_circuit_create(k.g, &c), 0);
	for (int step = 0; step < STEPS; step++) {
		struct sc_batch *got;

		for (int n = 0; n < 4; n++) {
			int x = (int)sc_rng_below(&r, TEXTS);
			int64_t w =
			    live[x] > 0 && sc_rng_below(&r, 2) ? -live[x] : 1;

			(void)snprintf(text, sizeof(text), "text-%d", x);
			ids[x] = feed_text(c, t, k.names, text, x, w);
			live[x] += w;
		}
		cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
		if (sc_rng_below(&r, 4) == 0)
			cr_assert_eq(sc_circuit_settle(c), 0);
		cr_assert_eq(sc_circuit_integral(c, k.outs[1], &got), 0);
		for (size_t i = 0; i < sc_batch_count(got); i++) {
			uint64_t id = sc_batch_row(got, i)[0];
			int x = -1;

			for (int j = 0; j < TEXTS; j++)
				if (live[j] > 0 && ids[j] == id)
					x = j;
			(void)snprintf(text, sizeof(text), "text-%d", x);
			SC_PROP_ASSERT(
			    seed, "symbol_holds",
			    "no_id_is_reused_while_a_row_holding_it_is_alive",
			    x >= 0 && strcmp(text_of(t, id), text) == 0,
			    "step %d: id %llu reads '%s'", step,
			    (unsigned long long)id, text_of(t, id));
		}
		sc_batch_release(got);
	}
	sc_circuit_destroy(c);
	cr_assert_eq(sc_symtab_count(t), 0);
	cr_assert_eq(sc_graph_destroy(k.g), 0);
	sc_symtab_destroy(t);
}

/* One keeper between an input and a stream output (which keeps nothing),
 * so only the keeper can hold the ids. */
enum keeper {
	K_JOIN,
	K_ANTIJOIN,
	K_DISTINCT,
	K_MAX,
	K_TOPK_DESC,
	K_INTEGRATE,
	K_DIFFERENTIATE,
	K_OUTPUT,
	K__COUNT
};

static int
keeper_node(struct sc_graph *g, enum keeper kind, int in)
{
	struct sc_aggregate_spec max = {.ncols = 2,
					.k = 1,
					.kind = SC_AGG_MAX,
					.col = 1,
					.col_type = SC_TYPE_SYMBOL};
	struct sc_topk_spec top = {.ncols = 2,
				   .key = 1,
				   .norder = 1,
				   .order = {1},
				   .desc = {true},
				   .limit = 100};
	uint32_t swap[2] = {1, 0};

	switch (kind) {
	case K_JOIN:
		return sc_graph_join(g, in, in, 1);
	case K_ANTIJOIN:
		return sc_graph_antijoin(g, in, in, 1);
	case K_DISTINCT:
		return sc_graph_distinct(g, in);
	case K_MAX: /* (v, name) grouped by v: max over the name column */
		return sc_graph_aggregate(g, sc_graph_index_by(g, in, swap, 2),
					  &max);
	case K_TOPK_DESC:
		return sc_graph_topk(g, sc_graph_index_by(g, in, swap, 2),
				     &top);
	case K_INTEGRATE:
		return sc_graph_integrate(g, in);
	case K_DIFFERENTIATE:
		return sc_graph_differentiate(g, in);
	default:
		return sc_graph_output(g, "kept", in);
	}
}

Test(symbol_holds, each_keeper_alone_holds_the_ids_of_its_rows)
{
	enum { N = 50 };

	for (int kind = 0; kind < K__COUNT; kind++) {
		struct sc_symtab *t;
		struct sc_schema s;
		struct sc_graph *g;
		struct sc_circuit *c;
		uint64_t ids[N];
		int in, out;

		cr_assert_eq(sc_symtab_create(&t), 0);
		schema_sv(&s, t);
		cr_assert_eq(sc_graph_create(&g), 0);
		in = sc_graph_input(g, "in", &s);
		out = sc_graph_output_stream(
		    g, "s", keeper_node(g, (enum keeper)kind, in));
		cr_assert_geq(out, 0, "kind %d: %s", kind, sc_errmsg());
		cr_assert_eq(sc_circuit_create(g, &c), 0, "%s", sc_errmsg());
		for (int i = 0; i < N; i++) {
			char text[16];

			(void)snprintf(text, sizeof(text), "n%d", i);
			ids[i] = feed_text(c, t, in, text, i % 3, 1);
		}
		cr_assert_eq(sc_symtab_count(t), N, "the feed holds them");
		cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
		cr_assert_eq(sc_symtab_count(t), N,
			     "kind %d: %zu of %d ids held after the step", kind,
			     sc_symtab_count(t), N);
		/* An empty tick: differentiate's last input is then empty,
		 * every other keeper still holds its integral. */
		cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
		cr_assert_eq(sc_symtab_count(t),
			     kind == K_DIFFERENTIATE ? 0 : N,
			     "kind %d: %zu of %d ids held after two steps",
			     kind, sc_symtab_count(t), N);
		for (int i = 0; kind != K_DIFFERENTIATE && i < N; i++) {
			cr_assert_eq(sc_symtab_retain(t, ids[i]), 0);
			feed(c, in, ids[i], i % 3, -1);
			cr_assert_eq(sc_symtab_release(t, ids[i]), 0);
		}
		for (int i = 0; i < 3; i++)
			cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
		cr_assert_eq(sc_circuit_settle(c), 0);
		cr_assert_eq(sc_symtab_count(t), 0,
			     "kind %d: %zu ids held after the retraction", kind,
			     sc_symtab_count(t));
		sc_circuit_destroy(c);
		cr_assert_eq(sc_graph_destroy(g), 0);
		sc_symtab_destroy(t);
	}
}

Test(symbol_holds, streams_of_two_tables_do_not_meet)
{
	struct sc_symtab *t1, *t2;
	struct sc_schema s1, s2;
	struct sc_graph *g;
	int a, b;

	cr_assert_eq(sc_symtab_create(&t1), 0);
	cr_assert_eq(sc_symtab_create(&t2), 0);
	schema_sv(&s1, t1);
	schema_sv(&s2, t2);
	cr_assert_eq(sc_graph_create(&g), 0);
	a = sc_graph_input(g, "a", &s1);
	b = sc_graph_input(g, "b", &s2);
	cr_assert_eq(sc_graph_join(g, a, b, 1), SC_ESCHEMA);
	cr_assert(strstr(sc_errmsg(), "two different tables"), "%s",
		  sc_errmsg());
	cr_assert_eq(sc_graph_antijoin(g, a, b, 1), SC_ESCHEMA);
	cr_assert_eq(sc_graph_plus(g, a, b), SC_ESCHEMA);
	cr_assert_eq(sc_graph_minus(g, a, b), SC_ESCHEMA);
	cr_assert_geq(sc_graph_plus(g, a, a), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_graph_destroy(g), 0);
	sc_symtab_destroy(t1);
	sc_symtab_destroy(t2);
}

/* COUNT and SUM keep their rows in a hash table, not a trace: the table
 * holds the ids of the rows it keeps, lets them go when a row's weight
 * returns to 0, and at destroy. The output is a stream, so nothing else
 * keeps the rows. */
static void
table_keeper_holds(enum sc_agg_kind kind)
{
	enum { N = 40 };
	struct sc_aggregate_spec spec = {.ncols = 2,
					 .k = 1,
					 .kind = kind,
					 .col = 1,
					 .col_type = SC_TYPE_I64};
	struct sc_symtab *t;
	struct sc_schema s;
	struct sc_graph *g;
	struct sc_circuit *c;
	uint64_t ids[N];
	int in, out;

	cr_assert_eq(sc_symtab_create(&t), 0);
	schema_sv(&s, t);
	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &s);
	out = sc_graph_output_stream(g, "s", sc_graph_aggregate(g, in, &spec));
	cr_assert_geq(out, 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_create(g, &c), 0, "%s", sc_errmsg());
	for (int i = 0; i < N; i++) {
		char text[16];

		(void)snprintf(text, sizeof(text), "g%d", i);
		ids[i] = feed_text(c, t, in, text, i, 1);
	}
	cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
	/* The feed's hold ended with the step after it: the table's stays. */
	cr_assert_eq(sc_symtab_count(t), N, "%zu of %d ids held by the table",
		     sc_symtab_count(t), N);
	for (int i = 0; i < N; i++)
		(void)text_of(t, ids[i]);
	/* Retract half the rows: their ids go once nothing holds them. */
	for (int i = 0; i < N / 2; i++) {
		cr_assert_eq(sc_symtab_retain(t, ids[i]), 0);
		feed(c, in, ids[i], i, -1);
		cr_assert_eq(sc_symtab_release(t, ids[i]), 0);
	}
	cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_symtab_count(t), N / 2, "%zu ids left, want %d",
		     sc_symtab_count(t), N / 2);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_symtab_count(t), 0, "destroy lets the rest go");
	sc_graph_destroy(g);
	sc_symtab_destroy(t);
}

Test(symbol_holds, count_in_its_row_table_holds_the_ids_of_its_rows)
{
	table_keeper_holds(SC_AGG_COUNT);
}

Test(symbol_holds, sum_in_its_row_table_holds_the_ids_of_its_rows)
{
	table_keeper_holds(SC_AGG_SUM);
}

/*
 * A step sums the frames fed since the last one; the sum takes no holds of
 * its own, the frames keep theirs for it (circuit.c, frames_cover): so the
 * ids the sum names live through its tick, whatever the frames were, and
 * are given back once the next tick begins; ids the sum lost (a row and
 * its retraction in two frames) are given back then too.
 */
Test(symbol_holds, a_sum_of_frames_holds_its_ids_through_its_tick)
{
	struct sc_symtab *t;
	struct sc_schema s;
	struct sc_graph *g;
	struct sc_circuit *c;
	struct sc_batch *d;
	uint64_t kept, gone;
	int in, out;

	cr_assert_eq(sc_symtab_create(&t), 0);
	schema_sv(&s, t);
	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &s);
	out = sc_graph_output_stream(g, "out", in);
	cr_assert_geq(out, 0);
	cr_assert_eq(sc_circuit_create(g, &c), 0);
	kept = feed_text(c, t, in, "kept", 1, 1);
	gone = feed_text(c, t, in, "gone", 2, 1);
	feed(c, in, kept, 1, 1);
	feed(c, in, gone, 2, -1);
	cr_assert_eq(sc_symtab_refs(t, kept), 2, "one hold per frame");
	cr_assert_eq(sc_circuit_step(c), 0);
	cr_assert_eq(sc_circuit_delta(c, out, &d), 0);
	cr_assert_eq(sc_batch_count(d), 1);
	cr_assert_eq(sc_batch_row(d, 0)[0], kept);
	cr_assert_eq(sc_batch_weight(d, 0), 2);
	sc_batch_release(d);
	cr_assert_str_eq(text_of(t, kept), "kept");
	cr_assert_str_eq(text_of(t, gone), "gone",
			 "a frame's ids live through its tick");
	cr_assert_eq(sc_circuit_step(c), 0);
	cr_assert_eq(sc_symtab_refs(t, kept), 0);
	cr_assert_eq(sc_symtab_refs(t, gone), 0);
	cr_assert_eq(sc_symtab_count(t), 0, "every id given back");
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(g), 0);
	sc_symtab_destroy(t);
}

/* A circuit destroyed while a summed delta and frames fed after it are
 * still held gives every id back (no hold is lost or dropped twice). */
Test(symbol_holds, destroy_after_a_summed_step_gives_every_id_back)
{
	struct sc_symtab *t;
	struct sc_schema s;
	struct sc_graph *g;
	struct sc_circuit *c;
	int in;

	cr_assert_eq(sc_symtab_create(&t), 0);
	schema_sv(&s, t);
	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &s);
	cr_assert_geq(sc_graph_output_stream(g, "out", in), 0);
	cr_assert_eq(sc_circuit_create(g, &c), 0);
	(void)feed_text(c, t, in, "a", 1, 1);
	(void)feed_text(c, t, in, "b", 1, 1);
	cr_assert_eq(sc_circuit_step(c), 0);
	(void)feed_text(c, t, in, "c", 1, 1);
	(void)feed_text(c, t, in, "a", 2, 1);
	cr_assert_eq(sc_symtab_count(t), 3);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_symtab_count(t), 0, "every id given back");
	cr_assert_eq(sc_graph_destroy(g), 0);
	sc_symtab_destroy(t);
}

/* --- ids a flat_map makes (sc_emit_own) ------------------------------------
 */

struct upper {
	struct sc_symtab *t;
	bool leak; /* keep the references (no sc_emit_own) */
	struct sc_graph *g;
	int in, out;
};

/* (name, v) -> (NAME, v): the text upper-cased, interned, and its
 * reference handed to the step; with u->leak kept instead (released by
 * nobody): the leak the test below must see. */
static int
upper_name(void *ctx, const uint64_t *row, struct sc_emitter *out)
{
	const struct upper *u = ctx;
	struct sc_symtab *t = u->t;
	char buf[64];
	const char *text;
	size_t len;
	uint64_t id, o[2];
	int rc;

	if ((rc = sc_symtab_lookup(t, sc_dec_symbol(row[0]), &text, &len)) != 0)
		return rc;
	for (size_t i = 0; i < len && i < sizeof(buf); i++)
		buf[i] = (char)(text[i] >= 'a' && text[i] <= 'z'
				    ? text[i] - 'a' + 'A'
				    : text[i]);
	if ((rc = sc_symtab_intern(t, buf, len < sizeof(buf) ? len : 64,
				   &id)) != 0)
		return rc;
	o[0] = sc_enc_symbol(id);
	o[1] = row[1];
	if ((rc = sc_emit(out, o)) != 0 ||
	    (!u->leak && (rc = sc_emit_own(out, id)) != 0)) {
		(void)sc_symtab_release(t, id);
		return rc;
	}
	return 0;
}

static void
upper_init(struct upper *u, bool stream, bool leak)
{
	struct sc_schema s;

	cr_assert_eq(sc_symtab_create(&u->t), 0);
	u->leak = leak;
	schema_sv(&s, u->t);
	cr_assert_eq(sc_graph_create(&u->g), 0);
	u->in = sc_graph_input(u->g, "names", &s);
	u->out = sc_graph_flat_map(u->g, u->in, &s, upper_name, u);
	u->out = stream ? sc_graph_output_stream(u->g, "upper", u->out)
			: sc_graph_output(u->g, "upper", u->out);
	cr_assert_geq(u->out, 0, "%s", sc_errmsg());
}

static void
upper_fini(struct upper *u)
{
	cr_assert_eq(sc_graph_destroy(u->g), 0);
	sc_symtab_destroy(u->t);
}

/* The output reads the texts the callback made while it keeps the rows;
 * once every input row is retracted, no id is left: the step let go of
 * the callback's references, and the output of its holds. */
Test(symbol_holds, ids_a_flat_map_makes_live_as_long_as_their_rows)
{
	static const char *const names[] = {"apple", "pear", "fig", "plum"};
	struct upper u;
	struct sc_circuit *c;
	struct sc_batch *got;

	for (int leak = 0; leak < 2; leak++) {
		upper_init(&u, false, leak);
		cr_assert_eq(sc_circuit_create(u.g, &c), 0, "%s", sc_errmsg());
		for (int i = 0; i < 4; i++) {
			feed_text(c, u.t, u.in, names[i], i, 1);
			cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
		}
		for (int i = 0; i < 2; i++)
			cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
		cr_assert_eq(sc_circuit_integral(c, u.out, &got), 0);
		cr_assert_eq(sc_batch_count(got), 4);
		for (size_t i = 0; i < 4; i++) {
			const uint64_t *row = sc_batch_row(got, i);
			const char *want[] = {"APPLE", "PEAR", "FIG", "PLUM"};

			cr_assert_str_eq(text_of(u.t, sc_dec_symbol(row[0])),
					 want[sc_dec_i64(row[1])]);
		}
		sc_batch_release(got);
		for (int i = 0; i < 4; i++)
			feed_text(c, u.t, u.in, names[i], i, -1);
		cr_assert_eq(sc_circuit_settle(c), 0);
		for (int i = 0; i < 3; i++)
			cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
		if (leak) /* the inputs' ids went; the kept made ones not */
			cr_assert_eq(sc_symtab_count(u.t), 4,
				     "%zu ids live with 4 references kept",
				     sc_symtab_count(u.t));
		else
			cr_assert_eq(sc_symtab_count(u.t), 0,
				     "%zu ids live after every row went",
				     sc_symtab_count(u.t));
		sc_circuit_destroy(c);
		upper_fini(&u);
	}
}

/* A stream output's delta callback: the text of each row's name. */
struct seen {
	struct sc_symtab *t;
	char text[16];
	size_t rows;
};

static int
seen_delta(void *ctx, int node, const struct sc_batch *delta)
{
	struct seen *s = ctx;
	const char *text;

	(void)node;
	for (size_t i = 0; i < sc_batch_count(delta); i++) {
		if (sc_symtab_lookup(s->t,
				     sc_dec_symbol(sc_batch_row(delta, i)[0]),
				     &text, NULL) != 0)
			return SC_ENOENT;
		(void)snprintf(s->text, sizeof(s->text), "%s", text);
		s->rows++;
	}
	return 0;
}

/* A stream output keeps nothing: the made id is live while its delta is
 * handed out, and gone after the next step. */
Test(symbol_holds, ids_a_flat_map_makes_go_with_a_stream_delta)
{
	struct upper u;
	struct sc_circuit *c;
	struct seen s = {0};

	upper_init(&u, true, false);
	s.t = u.t;
	cr_assert_eq(sc_circuit_create(u.g, &c), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_on_delta(c, u.out, seen_delta, &s), 0, "%s",
		     sc_errmsg());
	feed_text(c, u.t, u.in, "kiwi", 1, 1);
	cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
	cr_assert_eq(s.rows, 1);
	cr_assert_str_eq(s.text, "KIWI");
	cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_symtab_count(u.t), 0,
		     "%zu ids live a step after the delta went",
		     sc_symtab_count(u.t));
	/* and a circuit destroyed right after a step gives them back */
	feed_text(c, u.t, u.in, "lime", 2, 1);
	cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
	cr_assert_str_eq(s.text, "LIME");
	sc_circuit_destroy(c);
	cr_assert_eq(sc_symtab_count(u.t), 0, "%zu ids outlived the circuit",
		     sc_symtab_count(u.t));
	upper_fini(&u);
}

/* Each refusal of sc_emit_own names what was wrong and leaves the
 * reference with the caller. */
struct own_case {
	const char *what;
	bool null_emitter, no_table;
	uint64_t id;
	const char *msg;
};

static int
own_bad(void *ctx, const uint64_t *row, struct sc_emitter *out)
{
	const struct own_case *k = ctx;

	(void)row;
	return sc_emit_own(k->null_emitter ? NULL : out, k->id);
}

Test(symbol_holds, emit_own_refuses_what_it_cannot_own_by_name)
{
	static const struct own_case cases[] = {
	    {"NULL emitter", true, false, 5, "NULL emitter"},
	    {"id 0", false, false, 0, "id 0"},
	    {"no table", false, true, 5, "names no symbol table"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct own_case *k = &cases[i];
		struct sc_symtab *t;
		struct sc_schema s;
		struct sc_graph *g;
		struct sc_circuit *c;
		uint64_t row[2] = {0, 0};
		int64_t w = 1;
		struct sc_batch *b;
		int in, out;

		cr_assert_eq(sc_symtab_create(&t), 0);
		{
			enum sc_type ty[2] = {SC_TYPE_I64, SC_TYPE_I64};

			cr_assert_eq(sc_schema_init(&s, 2, ty, NULL), 0);
		}
		cr_assert_eq(sc_graph_create(&g), 0);
		in = sc_graph_input(g, "in", &s);
		if (!k->no_table)
			schema_sv(&s, t);
		out = sc_graph_output(
		    g, "out", sc_graph_flat_map(g, in, &s, own_bad, (void *)k));
		cr_assert_geq(out, 0, "%s", sc_errmsg());
		cr_assert_eq(sc_circuit_create(g, &c), 0, "%s", sc_errmsg());
		cr_assert_eq(sc_batch_from_records(2, row, &w, 1, &b), 0);
		cr_assert_eq(sc_circuit_feed(c, in, b), 0, "%s", sc_errmsg());
		sc_batch_release(b);
		cr_assert_eq(sc_circuit_step(c), SC_EINVAL, "%s: %s", k->what,
			     sc_errmsg());
		cr_assert(strstr(sc_errmsg(), "sc_emit_own") &&
			      strstr(sc_errmsg(), k->msg),
			  "%s: %s", k->what, sc_errmsg());
		sc_circuit_destroy(c);
		cr_assert_eq(sc_graph_destroy(g), 0);
		sc_symtab_destroy(t);
	}
}
