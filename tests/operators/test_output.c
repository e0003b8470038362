/*
 * test_output.c - the two modes of an output (graph.h): a materialized
 * output integrates its deltas and is readable whole; a stream output
 * keeps nothing across steps, hands each delta to its sink once, and
 * refuses to be read whole.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "operators/circuit.h"
#include "operators/graph.h"
#include "operators/schema.h"

#define STEPS 1000
#define ROWS  40

/* What a sink saw: the sum of the deltas and how many calls. */
struct sink {
	struct sc_batch *sum;
	size_t calls;
	int node;
};

static int
sink_add(void *ctx, int node, const struct sc_batch *delta)
{
	struct sink *s = ctx;
	struct sc_batch *next;
	int rc;

	cr_assert_eq(node, s->node);
	rc = sc_batch_add(s->sum, delta, &next);
	if (rc)
		return rc;
	sc_batch_release(s->sum);
	s->sum = next;
	s->calls++;
	return 0;
}

/* in(a, b) -> stream output "s" and materialized output "m" of the same
 * stream. */
struct two {
	struct sc_graph *g;
	struct sc_circuit *c;
	int in, s, m;
};

static void
two_init(struct two *t)
{
	enum sc_type ty[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_schema sch;

	cr_assert_eq(sc_schema_init(&sch, 2, ty, NULL), 0);
	cr_assert_eq(sc_graph_create(&t->g), 0);
	t->in = sc_graph_input(t->g, "in", &sch);
	t->s = sc_graph_output_stream(t->g, "s", t->in);
	t->m = sc_graph_output(t->g, "m", t->in);
	cr_assert_geq(t->m, 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_create(t->g, &t->c), 0, "%s", sc_errmsg());
}

static void
two_fini(struct two *t)
{
	sc_circuit_destroy(t->c);
	cr_assert_eq(sc_graph_destroy(t->g), 0);
}

/* Step i's delta: ROWS new unique rows, and the rows of step i - 1
 * retracted, so the integral stays small and every row is new once. */
static struct sc_batch *
delta_at(int i)
{
	uint64_t rows[2 * ROWS * 2];
	int64_t w[2 * ROWS];
	struct sc_batch *b;
	size_t n = 0;

	for (int j = 0; j < ROWS; j++) {
		rows[2 * n] = sc_enc_i64(i);
		rows[2 * n + 1] = sc_enc_i64(j);
		w[n++] = 1;
		if (i == 0)
			continue;
		rows[2 * n] = sc_enc_i64(i - 1);
		rows[2 * n + 1] = sc_enc_i64(j);
		w[n++] = -1;
	}
	cr_assert_eq(sc_batch_from_records(2, rows, w, n, &b), 0);
	return b;
}

Test(output, stream_output_keeps_nothing_over_many_steps)
{
	struct two t;
	struct sc_node_state st;
	size_t held_m = 0;

	two_init(&t);
	for (int i = 0; i < STEPS; i++) {
		struct sc_batch *d = delta_at(i);

		cr_assert_eq(sc_circuit_feed(t.c, t.in, d), 0);
		sc_batch_release(d);
		cr_assert_eq(sc_circuit_step(t.c), 0, "%s", sc_errmsg());
		cr_assert_eq(sc_circuit_node_state(t.c, t.s, &st), 0);
		cr_assert_eq(st.rows, 0,
			     "step %d: stream output holds %zu rows", i,
			     st.rows);
		cr_assert_eq(st.bytes, 0);
		cr_assert_eq(sc_circuit_node_state(t.c, t.m, &st), 0);
		held_m = st.rows > held_m ? st.rows : held_m;
	}
	/* The counter does see what a materialized output keeps (its trace
	 * holds rows and their retractions until merges cancel them). */
	cr_assert_gt(held_m, 0);
	two_fini(&t);
}

Test(output, stream_output_sink_sees_every_delta_exactly_once)
{
	struct two t;
	struct sink s = {NULL, 0, 0};
	struct sc_batch *m;
	size_t nonempty = 0;

	two_init(&t);
	s.node = t.s;
	cr_assert_eq(sc_batch_empty(2, &s.sum), 0);
	cr_assert_eq(sc_circuit_on_delta(t.c, t.s, sink_add, &s), 0);
	for (int i = 0; i < STEPS; i++) {
		struct sc_batch *d = delta_at(i);

		/* Every tenth step is fed nothing: no call then. */
		if (i % 10 != 9) {
			cr_assert_eq(sc_circuit_feed(t.c, t.in, d), 0);
			nonempty++;
		}
		sc_batch_release(d);
		cr_assert_eq(sc_circuit_step(t.c), 0, "%s", sc_errmsg());
	}
	cr_assert_eq(s.calls, nonempty);
	cr_assert_eq(sc_circuit_integral(t.c, t.m, &m), 0);
	cr_assert(sc_batch_equal(s.sum, m),
		  "the sink's sum is not the materialized integral");
	sc_batch_release(m);
	sc_batch_release(s.sum);
	two_fini(&t);
}

Test(output, integral_of_a_stream_output_is_estate)
{
	struct two t;
	struct sc_batch *b = NULL;

	two_init(&t);
	cr_assert_eq(sc_circuit_step(t.c), 0);
	cr_assert_eq(sc_circuit_integral(t.c, t.s, &b), SC_ESTATE);
	cr_assert_null(b);
	cr_assert(strstr(sc_errmsg(), "stream output") != NULL, "%s",
		  sc_errmsg());
	/* Its delta stays readable for the tick. */
	cr_assert_eq(sc_circuit_delta(t.c, t.s, &b), 0);
	sc_batch_release(b);
	two_fini(&t);
}

Test(output, graph_records_the_mode_of_each_output)
{
	struct two t;
	struct sc_node_info ni;

	two_init(&t);
	cr_assert_eq(sc_graph_node_info(t.g, t.s, &ni), 0);
	cr_assert_eq(ni.kind, SC_NODE_OUTPUT);
	cr_assert(ni.stream);
	cr_assert_eq(sc_graph_node_info(t.g, t.m, &ni), 0);
	cr_assert_not(ni.stream);
	two_fini(&t);
}

Test(output, stream_output_refuses_what_an_output_refuses)
{
	enum sc_type ty[1] = {SC_TYPE_I64};
	struct sc_schema sch;
	struct sc_graph *g;
	int in;

	cr_assert_eq(sc_schema_init(&sch, 1, ty, NULL), 0);
	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &sch);
	cr_assert_eq(sc_graph_output_stream(NULL, "s", in), SC_EINVAL);
	cr_assert_eq(sc_graph_output_stream(g, "in", in), SC_EINVAL);
	cr_assert_eq(sc_graph_output_stream(g, NULL, in), SC_EINVAL);
	cr_assert_eq(sc_graph_output_stream(g, "s", 7), SC_ENOENT);
	cr_assert_eq(sc_graph_output_stream(g, "s", SC_ENOMEM), SC_ENOMEM);
	cr_assert_eq(sc_graph_node_count(g), 1);
	cr_assert_eq(sc_graph_destroy(g), 0);
}
