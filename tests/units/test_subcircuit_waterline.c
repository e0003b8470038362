/*
 * test_subcircuit_waterline.c - waterlines cross units (subcircuit.h,
 * "Waterlines"): a producer unit publishes its boundary output's
 * waterline after its step, the consumer raises its boundary input to it
 * once it has fed the frames sent before it, and a stream fed by two
 * producers (a sharded input's replicas) gets the lower of the two. The
 * units' turns are called directly, in a fixed order.
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "operators/circuit.h"
#include "operators/waterline.h"
#include "runtime/unit.h"
#include "units/edge.h"
#include "units/subcircuit.h"

/* in(t, k), lateness 5 on t -> distinct -> out */
struct wl_graph {
	struct sc_graph *g;
	int in, d, out;
};

static void
wl_graph_init(struct wl_graph *c)
{
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_schema s;

	cr_assert_eq(sc_schema_init(&s, 2, t, NULL), 0);
	cr_assert_eq(sc_graph_create(&c->g), 0);
	c->in = sc_graph_input(c->g, "in", &s);
	cr_assert_eq(sc_graph_lateness(c->g, c->in, 0, 5, 0), 0);
	c->d = sc_graph_distinct(c->g, c->in);
	c->out = sc_graph_output(c->g, "out", c->d);
	cr_assert_geq(c->out, 0, "%s", sc_errmsg());
}

/* Rows (t, t) for t in lo..hi, weight 1. */
static struct sc_batch *
span(int64_t lo, int64_t hi)
{
	uint64_t rows[2 * 64];
	struct sc_batch *b = NULL;
	size_t n = 0;

	for (int64_t t = lo; t <= hi; t++, n++) {
		rows[2 * n] = sc_enc_i64(t);
		rows[2 * n + 1] = sc_enc_i64(t);
	}
	cr_assert_eq(sc_batch_from_records(2, rows, NULL, n, &b), 0);
	return b;
}

static void
turn(struct sc_subcircuit *s)
{
	struct sc_unit *u = sc_subcircuit_unit(s);

	(void)u->ops->turn(u, 64);
}

/* nprod producer units {in}, each fed by its own host edge, each sending
 * to the consumer {distinct, out} on an edge of its own. */
struct wl_units {
	struct wl_graph c;
	struct sc_edge *host[2], *mid[2];
	struct sc_subcircuit *prod[2], *cons;
	int nprod;
};

/* The consumer {distinct, out} on the producers' edges; restore: NULL, or
 * each edge's integral for a rebuild (subcircuit.h, "A rebuild"). */
static void
wl_cons_create(struct wl_units *w, struct sc_batch **restore)
{
	struct sc_subcircuit_in cin[2];
	int cn[2] = {w->c.d, w->c.out};
	struct sc_subcircuit_desc d = {.name = "C",
				       .graph = w->c.g,
				       .nodes = cn,
				       .nnodes = 2,
				       .in = cin,
				       .nin = (size_t)w->nprod,
				       .restore = restore};

	for (int i = 0; i < w->nprod; i++)
		cin[i] = (struct sc_subcircuit_in){
		    .edge = w->mid[i], .stream = w->c.in, .peer = (uint32_t)i};
	cr_assert_eq(sc_subcircuit_create(&d, &w->cons), 0, "%s", sc_errmsg());
}

static void
wl_units_init(struct wl_units *w, int nprod)
{
	static const uint32_t to_c = 2;
	struct sc_edge_opts eo = {.ncols = 2, .capacity = 8};
	int pn[1];

	wl_graph_init(&w->c);
	w->nprod = nprod;
	pn[0] = w->c.in;
	for (int i = 0; i < nprod; i++) {
		struct sc_subcircuit_in hin;
		struct sc_subcircuit_out pout;
		struct sc_subcircuit_desc d;

		cr_assert_eq(sc_edge_create(&eo, &w->host[i]), 0);
		cr_assert_eq(sc_edge_create(&eo, &w->mid[i]), 0);
		hin = (struct sc_subcircuit_in){.edge = w->host[i],
						.stream = w->c.in,
						.peer = SC_SUBCIRCUIT_HOST};
		pout = (struct sc_subcircuit_out){.stream = w->c.in,
						  .nedges = 1,
						  .edges = &w->mid[i],
						  .peers = &to_c};
		d = (struct sc_subcircuit_desc){.name = "P",
						.graph = w->c.g,
						.nodes = pn,
						.nnodes = 1,
						.in = &hin,
						.nin = 1,
						.out = &pout,
						.nout = 1};
		cr_assert_eq(sc_subcircuit_create(&d, &w->prod[i]), 0, "%s",
			     sc_errmsg());
	}
	wl_cons_create(w, NULL);
}

static void
wl_units_fini(struct wl_units *w)
{
	sc_subcircuit_destroy(w->cons);
	for (int i = 0; i < w->nprod; i++) {
		sc_subcircuit_destroy(w->prod[i]);
		sc_edge_destroy(w->host[i]);
		sc_edge_destroy(w->mid[i]);
	}
	cr_assert_eq(sc_graph_destroy(w->c.g), 0);
}

static int64_t
consumer_waterline(struct wl_units *w)
{
	int64_t v = 0;

	cr_assert_eq(sc_circuit_waterline(sc_subcircuit_circuit(w->cons),
					  w->c.in, 0, &v),
		     0, "%s", sc_errmsg());
	return v;
}

Test(subcircuit_waterline, the_consumer_takes_its_producers_waterline)
{
	struct wl_units w;

	wl_units_init(&w, 1);
	cr_assert_eq(sc_edge_send(w.host[0], span(0, 9)), 0);
	turn(w.prod[0]); /* steps: W = 9 - 5, published */
	turn(w.cons);	 /* feeds 0..9, raises to 4, steps */
	cr_assert_eq(consumer_waterline(&w), 4);
	cr_assert_eq(sc_edge_send(w.host[0], span(100, 109)), 0);
	turn(w.prod[0]);
	turn(w.cons);
	cr_assert_eq(consumer_waterline(&w), 104);
	wl_units_fini(&w);
}

Test(subcircuit_waterline, a_stream_fed_by_two_producers_takes_the_lower)
{
	struct wl_units w;

	wl_units_init(&w, 2);
	cr_assert_eq(sc_edge_send(w.host[0], span(100, 109)), 0);
	cr_assert_eq(sc_edge_send(w.host[1], span(40, 50)), 0);
	turn(w.prod[0]); /* W = 104 */
	turn(w.cons);	 /* the other edge has none yet: nothing known */
	cr_assert_eq(consumer_waterline(&w), SC_WATERLINE_NONE);
	turn(w.prod[1]); /* W = 45 */
	cr_assert_eq(sc_edge_send(w.host[0], span(110, 111)), 0);
	turn(w.prod[0]); /* W = 106 */
	turn(w.cons);
	cr_assert_eq(consumer_waterline(&w), 45);
	wl_units_fini(&w);
}

/* The distinct of the consumer after 0..39 then eight spans of 10 far
 * above: with cleanup off it keeps all 120 rows, with it on (the
 * producer's waterline having crossed) fewer than half. */
static size_t
distinct_rows_after(bool cleanup)
{
	struct wl_units w;
	struct sc_node_state st;

	wl_units_init(&w, 1);
	cr_assert_eq(
	    sc_circuit_set_cleanup(sc_subcircuit_circuit(w.cons), cleanup), 0);
	cr_assert_eq(sc_edge_send(w.host[0], span(0, 39)), 0);
	turn(w.prod[0]);
	turn(w.cons);
	for (int i = 0; i < 8; i++) {
		cr_assert_eq(
		    sc_edge_send(w.host[0], span(1000 + i * 10, 1009 + i * 10)),
		    0);
		turn(w.prod[0]);
		turn(w.cons);
	}
	cr_assert_eq(
	    sc_circuit_node_state(sc_subcircuit_circuit(w.cons), w.c.d, &st),
	    0);
	wl_units_fini(&w);
	return st.rows;
}

Test(subcircuit_waterline, cleanup_in_the_consumer_drops_rows_below_it)
{
	size_t kept = distinct_rows_after(false);
	size_t cleaned = distinct_rows_after(true);

	cr_assert_eq(kept, 120);
	cr_assert_lt(cleaned, 60, "kept %zu of 120 rows", cleaned);
}

/* A restart (units/runtime.h, "Restarts") as the runtime makes one: the
 * consumer dies (its input edge closed), is destroyed, its edge reopened
 * and a new one built from the edge's integral. The rebuilt consumer must
 * know its producer's waterline from its first turn, with no publication
 * since (the producer has nothing new to say), so its state stays bounded;
 * it used to start with none until the next publication. */
Test(subcircuit_waterline, a_rebuilt_consumer_takes_its_inputs_waterline)
{
	struct wl_units w;
	struct sc_batch *restore[1];
	struct sc_node_state st;

	wl_units_init(&w, 1);
	cr_assert_eq(sc_edge_send(w.host[0], span(0, 39)), 0);
	turn(w.prod[0]); /* W = 39 - 5, published */
	turn(w.cons);
	cr_assert_eq(consumer_waterline(&w), 34);
	sc_edge_close(w.mid[0]);
	sc_subcircuit_destroy(w.cons);
	cr_assert_eq(sc_edge_reopen(w.mid[0]), 0, "%s", sc_errmsg());
	restore[0] = span(0, 39); /* what the edge's trace would give */
	wl_cons_create(&w, restore);
	sc_batch_release(restore[0]);
	turn(w.cons); /* the rebuild's turn: no frame, no publication */
	cr_assert_eq(consumer_waterline(&w), 34,
		     "the rebuilt consumer's waterline is %lld",
		     (long long)consumer_waterline(&w));
	/* And the rebuilt distinct drops what lies below it. */
	for (int i = 0; i < 4; i++)
		turn(w.cons);
	cr_assert_eq(
	    sc_circuit_node_state(sc_subcircuit_circuit(w.cons), w.c.d, &st),
	    0);
	cr_assert_lt(st.rows, 40, "the rebuilt distinct keeps %zu of 40 rows",
		     st.rows);
	wl_units_fini(&w);
}
