/*
 * test_graph.c - the graph API: nodes, schema inference and checks,
 * reading nodes and edges, cycles, cuts, freezing, and bad input.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "operators/aggregate.h"
#include "operators/circuit.h"
#include "operators/graph.h"
#include "operators/window.h"

static struct sc_schema
schema_of_types(uint32_t n, const enum sc_type *t)
{
	struct sc_schema s;

	cr_assert_eq(sc_schema_init(&s, n, t, NULL), 0);
	return s;
}

static struct sc_graph *
new_graph(void)
{
	struct sc_graph *g = NULL;

	cr_assert_eq(sc_graph_create(&g), 0);
	return g;
}

static int
ident(void *ctx, const uint64_t *row, uint64_t *out)
{
	(void)ctx;
	out[0] = row[0];
	return 0;
}

static int
keep_all(void *ctx, const uint64_t *row, bool *keep)
{
	(void)ctx;
	(void)row;
	*keep = true;
	return 0;
}

static const enum sc_type I2[] = {SC_TYPE_I64, SC_TYPE_I64};
static const enum sc_type IF[] = {SC_TYPE_I64, SC_TYPE_F64};
static const enum sc_type IUS[] = {SC_TYPE_I64, SC_TYPE_U64, SC_TYPE_SYMBOL};
static const enum sc_type U1[] = {SC_TYPE_U64};

Test(graph, ids_are_given_in_order_and_info_reads_them_back)
{
	struct sc_graph *g = new_graph();
	struct sc_schema s = schema_of_types(2, I2);
	struct sc_node_info info;
	int in, neg, out;

	in = sc_graph_input(g, "in", &s);
	neg = sc_graph_negate(g, in);
	out = sc_graph_output(g, "out", neg);
	cr_assert_eq(in, 0);
	cr_assert_eq(neg, 1);
	cr_assert_eq(out, 2);
	cr_assert_eq(sc_graph_node_count(g), 3);
	cr_assert_eq(sc_graph_node_info(g, neg, &info), 0);
	cr_assert_eq(info.kind, SC_NODE_NEGATE);
	cr_assert_str_eq(info.name, "negate#1");
	cr_assert_eq(info.ninputs, 1);
	cr_assert_eq(info.inputs[0], in);
	cr_assert(sc_schema_equal(info.schema, &s));
	cr_assert_str_eq(sc_node_kind_name(info.kind), "negate");
	cr_assert_eq(sc_graph_find(g, "out"), out);
	cr_assert_eq(sc_graph_find(g, "nope"), SC_ENOENT);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(graph, names_must_be_unique)
{
	struct sc_graph *g = new_graph();
	struct sc_schema s = schema_of_types(1, U1);
	int in = sc_graph_input(g, "x", &s);

	cr_assert_eq(sc_graph_input(g, "x", &s), SC_EINVAL);
	cr_assert_eq(sc_graph_output(g, "x", in), SC_EINVAL);
	cr_assert_eq(sc_graph_input(g, "", &s), SC_EINVAL);
	cr_assert_eq(sc_graph_input(g, NULL, &s), SC_EINVAL);
	cr_assert_eq(sc_graph_set_name(g, in, "y"), 0);
	cr_assert_eq(sc_graph_find(g, "y"), in);
	cr_assert_eq(sc_graph_node_count(g), 1);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(graph, plus_and_minus_refuse_different_schemas_and_add_nothing)
{
	struct sc_graph *g = new_graph();
	struct sc_schema a = schema_of_types(2, I2);
	struct sc_schema b = schema_of_types(2, IF);
	int x = sc_graph_input(g, "a", &a);
	int y = sc_graph_input(g, "b", &b);
	int both[2] = {x, y};

	cr_assert_eq(sc_graph_plus(g, x, y), SC_ESCHEMA);
	cr_assert(strstr(sc_errmsg(), "'a'") && strstr(sc_errmsg(), "'b'"),
		  "%s", sc_errmsg());
	cr_assert_eq(sc_graph_minus(g, x, y), SC_ESCHEMA);
	cr_assert_eq(sc_graph_sum(g, both, 2), SC_ESCHEMA);
	cr_assert_eq(sc_graph_node_count(g), 2);
	cr_assert_geq(sc_graph_plus(g, x, x), 0);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(graph, join_schema_is_key_then_left_rest_then_right_rest)
{
	struct sc_graph *g = new_graph();
	struct sc_schema a = schema_of_types(3, IUS);
	struct sc_schema b = schema_of_types(2, IF);
	const struct sc_schema *j;
	int x = sc_graph_input(g, "a", &a);
	int y = sc_graph_input(g, "b", &b);
	int id = sc_graph_join(g, x, y, 1);

	cr_assert_geq(id, 0, "%s", sc_errmsg());
	j = sc_graph_schema(g, id);
	cr_assert_eq(j->ncols, 4);
	cr_assert_eq(j->types[0], SC_TYPE_I64);
	cr_assert_eq(j->types[1], SC_TYPE_U64);
	cr_assert_eq(j->types[2], SC_TYPE_SYMBOL);
	cr_assert_eq(j->types[3], SC_TYPE_F64);
	cr_assert(sc_schema_equal(
	    sc_graph_schema(g, sc_graph_antijoin(g, x, y, 1)), &a));
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(graph, join_refuses_keys_of_different_types)
{
	struct sc_graph *g = new_graph();
	struct sc_schema a = schema_of_types(3, IUS);
	struct sc_schema b = schema_of_types(2, IF);
	int x = sc_graph_input(g, "a", &a);
	int y = sc_graph_input(g, "b", &b);

	cr_assert_eq(sc_graph_join(g, x, y, 2), SC_ESCHEMA);
	cr_assert(strstr(sc_errmsg(), "key column 1"), "%s", sc_errmsg());
	cr_assert_eq(sc_graph_antijoin(g, x, y, 2), SC_ESCHEMA);
	cr_assert_eq(sc_graph_join(g, x, y, 3), SC_ESCHEMA);
	cr_assert_eq(sc_graph_node_count(g), 2);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(graph, index_by_projects_the_schema_and_checks_columns)
{
	struct sc_graph *g = new_graph();
	struct sc_schema a = schema_of_types(3, IUS);
	uint32_t cols[] = {2, 0, 0};
	uint32_t bad[] = {3};
	const struct sc_schema *s;
	int x = sc_graph_input(g, "a", &a);
	int id = sc_graph_index_by(g, x, cols, 3);

	cr_assert_geq(id, 0);
	s = sc_graph_schema(g, id);
	cr_assert_eq(s->ncols, 3);
	cr_assert_eq(s->types[0], SC_TYPE_SYMBOL);
	cr_assert_eq(s->types[1], SC_TYPE_I64);
	cr_assert_eq(sc_graph_index_by(g, x, bad, 1), SC_ESCHEMA);
	cr_assert_eq(sc_graph_index_by(g, x, cols, 0), SC_ESCHEMA);
	cr_assert_eq(sc_graph_index_by(g, x, NULL, 1), SC_EINVAL);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(graph, aggregate_infers_its_value_type_and_checks_the_spec)
{
	struct sc_graph *g = new_graph();
	struct sc_schema a = schema_of_types(3, IUS);
	struct sc_aggregate_spec cnt = {3, 1, SC_AGG_COUNT, 0, SC_TYPE_I64};
	struct sc_aggregate_spec avg = {3, 1, SC_AGG_AVG, 1, SC_TYPE_U64};
	struct sc_aggregate_spec mx = {3, 1, SC_AGG_MAX, 2, SC_TYPE_SYMBOL};
	struct sc_aggregate_spec sum_sym = {3, 1, SC_AGG_SUM, 2,
					    SC_TYPE_SYMBOL};
	struct sc_aggregate_spec lie = {3, 1, SC_AGG_MIN, 1, SC_TYPE_I64};
	struct sc_aggregate_spec wide = {2, 1, SC_AGG_COUNT, 0, SC_TYPE_I64};
	int x = sc_graph_input(g, "a", &a);
	int id;

	id = sc_graph_aggregate(g, x, &cnt);
	cr_assert_eq(sc_graph_schema(g, id)->ncols, 2);
	cr_assert_eq(sc_graph_schema(g, id)->types[1], SC_TYPE_I64);
	id = sc_graph_aggregate(g, x, &avg);
	cr_assert_eq(sc_graph_schema(g, id)->types[1], SC_TYPE_F64);
	id = sc_graph_aggregate(g, x, &mx);
	cr_assert_eq(sc_graph_schema(g, id)->types[1], SC_TYPE_SYMBOL);
	cr_assert_eq(sc_graph_aggregate(g, x, &sum_sym), SC_ETYPE);
	cr_assert_eq(sc_graph_aggregate(g, x, &lie), SC_ESCHEMA);
	cr_assert_eq(sc_graph_aggregate(g, x, &wide), SC_ESCHEMA);
	cr_assert_eq(sc_graph_aggregate(g, x, NULL), SC_EINVAL);
	cr_assert_eq(sc_graph_node_count(g), 4);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(graph, unknown_ids_are_enoent_and_negative_ids_pass_through)
{
	struct sc_graph *g = new_graph();
	struct sc_schema s = schema_of_types(1, U1);
	struct sc_node_info info;

	cr_assert_eq(sc_graph_negate(g, 0), SC_ENOENT);
	cr_assert_eq(sc_graph_output(g, "o", 5), SC_ENOENT);
	cr_assert_eq(sc_graph_node_info(g, 3, &info), SC_ENOENT);
	cr_assert_null(sc_graph_schema(g, 0));
	/* a failed inner call's code comes out of the outer one */
	cr_assert_eq(sc_graph_output(
			 g, "o", sc_graph_negate(g, sc_graph_input(g, "", &s))),
		     SC_EINVAL);
	cr_assert_eq(sc_graph_distinct(g, SC_ESCHEMA), SC_ESCHEMA);
	cr_assert_eq(sc_graph_node_count(g), 0);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(graph, null_arguments_are_einval)
{
	struct sc_graph *g = new_graph();
	struct sc_schema s = schema_of_types(1, U1);
	struct sc_cut cut;
	int x = sc_graph_input(g, "x", &s);

	cr_assert_eq(sc_graph_create(NULL), SC_EINVAL);
	cr_assert_eq(sc_graph_input(NULL, "a", &s), SC_EINVAL);
	cr_assert_eq(sc_graph_input(g, "a", NULL), SC_EINVAL);
	cr_assert_eq(sc_graph_map(g, x, &s, NULL, NULL), SC_EINVAL);
	cr_assert_eq(sc_graph_map(g, x, NULL, ident, NULL), SC_EINVAL);
	cr_assert_eq(sc_graph_filter(g, x, NULL, NULL), SC_EINVAL);
	cr_assert_eq(sc_graph_sum(g, NULL, 1), SC_EINVAL);
	cr_assert_eq(sc_graph_node_info(g, x, NULL), SC_EINVAL);
	cr_assert_eq(sc_graph_node_info(NULL, x, NULL), SC_EINVAL);
	cr_assert_eq(sc_graph_cut(g, NULL, 1, &cut), SC_EINVAL);
	cr_assert_eq(sc_graph_check(NULL), SC_EINVAL);
	cr_assert_eq(sc_graph_find(g, NULL), SC_EINVAL);
	cr_assert_eq(sc_graph_node_count(NULL), 0);
	cr_assert_eq(sc_graph_destroy(NULL), 0);
	cr_assert_eq(sc_graph_node_count(g), 1);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(graph, edges_are_listed_by_consumer_then_port)
{
	struct sc_graph *g = new_graph();
	struct sc_schema s = schema_of_types(1, U1);
	struct sc_edge_info e;
	int a = sc_graph_input(g, "a", &s);
	int b = sc_graph_input(g, "b", &s);
	int m = sc_graph_minus(g, b, a);
	int o = sc_graph_output(g, "o", m);

	cr_assert_eq(sc_graph_edge_count(g), 3);
	cr_assert_eq(sc_graph_edge(g, 0, &e), 0);
	cr_assert(e.from == b && e.to == m && e.port == 0);
	cr_assert_eq(sc_graph_edge(g, 1, &e), 0);
	cr_assert(e.from == a && e.to == m && e.port == 1);
	cr_assert_eq(sc_graph_edge(g, 2, &e), 0);
	cr_assert(e.from == m && e.to == o && e.port == 0);
	cr_assert_eq(sc_graph_edge(g, 3, &e), SC_ENOENT);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(graph, cut_lists_the_streams_that_cross_the_part)
{
	struct sc_graph *g = new_graph();
	struct sc_schema s = schema_of_types(1, U1);
	struct sc_cut cut;
	int a = sc_graph_input(g, "a", &s);
	int f = sc_graph_filter(g, a, keep_all, NULL);
	int n = sc_graph_negate(g, f);
	int p = sc_graph_plus(g, n, a);
	int part[] = {n, f, n}; /* order and repeats do not matter */

	sc_graph_output(g, "o", p);
	cr_assert_eq(sc_graph_cut(g, part, 3, &cut), 0);
	cr_assert_eq(cut.nin, 1);
	cr_assert_eq(cut.in[0], a);
	cr_assert_eq(cut.nout, 1);
	cr_assert_eq(cut.out[0], n);
	sc_cut_fini(&cut);
	part[0] = 42;
	cr_assert_eq(sc_graph_cut(g, part, 1, &cut), SC_ENOENT);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(graph, check_names_the_nodes_of_a_cycle_without_delay)
{
	struct sc_graph *g = new_graph();
	struct sc_schema s = schema_of_types(1, U1);
	int in = sc_graph_input(g, "in", &s);
	int fb = sc_graph_feedback(g, &s);
	int m = sc_graph_map(g, fb, &s, ident, NULL);
	int p = sc_graph_plus(g, in, m);

	cr_assert_eq(sc_graph_set_name(g, m, "m"), 0);
	cr_assert_eq(sc_graph_set_name(g, p, "p"), 0);
	cr_assert_eq(sc_graph_set_name(g, fb, "back"), 0);
	cr_assert_eq(sc_graph_check(g), SC_ESTATE); /* fb unbound */
	cr_assert(strstr(sc_errmsg(), "'back'"), "%s", sc_errmsg());
	cr_assert_eq(sc_graph_bind(g, fb, p), 0);
	cr_assert_eq(sc_graph_check(g), SC_ECYCLE);
	/* the cycle, in stream direction, from where the walk closed it */
	cr_assert(strstr(sc_errmsg(), "'back' -> 'm' -> 'p' -> 'back'") ||
		      strstr(sc_errmsg(), "'m' -> 'p' -> 'back' -> 'm'") ||
		      strstr(sc_errmsg(), "'p' -> 'back' -> 'm' -> 'p'"),
		  "%s", sc_errmsg());
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(graph, check_accepts_a_cycle_through_a_delay)
{
	struct sc_graph *g = new_graph();
	struct sc_schema s = schema_of_types(1, U1);
	int in = sc_graph_input(g, "in", &s);
	int fb = sc_graph_feedback(g, &s);
	int p = sc_graph_plus(g, in, sc_graph_delay(g, fb));

	cr_assert_eq(sc_graph_bind(g, fb, p), 0);
	cr_assert_eq(sc_graph_check(g), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(graph, bind_only_once_only_feedbacks_only_same_schema)
{
	struct sc_graph *g = new_graph();
	struct sc_schema s = schema_of_types(1, U1);
	struct sc_schema t = schema_of_types(2, I2);
	int in = sc_graph_input(g, "in", &s);
	int wide = sc_graph_input(g, "wide", &t);
	int fb = sc_graph_feedback(g, &s);

	cr_assert_eq(sc_graph_bind(g, in, in), SC_EINVAL);
	cr_assert_eq(sc_graph_bind(g, fb, wide), SC_ESCHEMA);
	cr_assert_eq(sc_graph_bind(g, fb, in), 0);
	cr_assert_eq(sc_graph_bind(g, fb, in), SC_ESTATE);
	cr_assert_eq(sc_graph_bind(g, 9, in), SC_ENOENT);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(graph, a_graph_with_a_live_circuit_is_frozen)
{
	struct sc_graph *g = new_graph();
	struct sc_schema s = schema_of_types(1, U1);
	struct sc_circuit *c;
	int in = sc_graph_input(g, "in", &s);

	sc_graph_output(g, "out", in);
	cr_assert_eq(sc_circuit_create(g, &c), 0);
	cr_assert_eq(sc_graph_negate(g, in), SC_EBUSY);
	cr_assert_eq(sc_graph_set_name(g, in, "z"), SC_EBUSY);
	cr_assert_eq(sc_graph_destroy(g), SC_EBUSY);
	cr_assert_eq(sc_graph_node_count(g), 2);
	sc_circuit_destroy(c);
	cr_assert_geq(sc_graph_negate(g, in), 0);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(graph, windows_check_their_arguments)
{
	struct sc_graph *g = new_graph();
	struct sc_schema a = schema_of_types(2, IF);
	const struct sc_schema *w;
	int x = sc_graph_input(g, "a", &a);
	int id;

	cr_assert_eq(sc_window_tumbling(g, x, 1, 10), SC_ETYPE); /* f64 */
	cr_assert_eq(sc_window_tumbling(g, x, 2, 10), SC_ESCHEMA);
	cr_assert_eq(sc_window_tumbling(g, x, 0, 0), SC_EINVAL);
	cr_assert_eq(sc_window_hopping(g, x, 0, 10, 11), SC_EINVAL);
	cr_assert_eq(sc_window_hopping(g, x, 0, 1 << 20, 1), SC_EINVAL);
	cr_assert_eq(sc_window_tumbling(NULL, x, 0, 10), SC_EINVAL);
	cr_assert_eq(sc_window_tumbling(g, 7, 0, 10), SC_ENOENT);
	cr_assert_eq(sc_graph_node_count(g), 1);
	id = sc_window_hopping(g, x, 0, 10, 5);
	cr_assert_geq(id, 0, "%s", sc_errmsg());
	w = sc_graph_schema(g, id);
	cr_assert_eq(w->ncols, 3);
	cr_assert_eq(w->types[2], SC_TYPE_I64);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(graph, a_passed_through_id_names_the_call_and_quotes_the_inner_error)
{
	struct sc_graph *g = new_graph();
	struct sc_schema s = schema_of_types(1, U1);

	/* A stale message from an earlier, unrelated call is not the
	 * message of a later one that returns a negative id. */
	(void)sc_errorf(SC_ENOENT, "an earlier call");
	cr_assert_eq(sc_graph_map(g, -1, &s, NULL, NULL), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "SC_EINVAL: sc_graph_map: ") ==
		      sc_errmsg(),
		  "%s", sc_errmsg());
	/* nested: the outer call names itself and the inner call's words */
	cr_assert_eq(sc_graph_negate(g, sc_graph_input(g, "", &s)), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "sc_graph_negate: "), "%s", sc_errmsg());
	cr_assert(strstr(sc_errmsg(), "sc_graph_input: name is NULL or empty"),
		  "%s", sc_errmsg());
	cr_assert_eq(sc_graph_plus(g, SC_ESCHEMA, 0), SC_ESCHEMA);
	cr_assert(strstr(sc_errmsg(), "sc_graph_plus: "), "%s", sc_errmsg());
	cr_assert_eq(sc_graph_destroy(g), 0);
}
