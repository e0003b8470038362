/*
 * test_analysis.c - loops across units and gating (units/analysis.h).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "units/analysis.h"

static int
keep(void *ctx, const uint64_t *row, bool *k)
{
	*k = true;
	return 0;
}

/* in -> a -> b -> out, filters. */
static struct sc_graph *
line(int ids[4])
{
	enum sc_type t[1] = {SC_TYPE_I64};
	struct sc_graph *g = NULL;
	struct sc_schema s;

	cr_assert_eq(sc_schema_init(&s, 1, t, NULL), 0);
	cr_assert_eq(sc_graph_create(&g), 0);
	ids[0] = sc_graph_input(g, "in", &s);
	ids[1] = sc_graph_filter(g, ids[0], keep, NULL);
	ids[2] = sc_graph_filter(g, ids[1], keep, NULL);
	ids[3] = sc_graph_output(g, "out", ids[2]);
	cr_assert_geq(ids[3], 0);
	return g;
}

Test(analysis, edges_between_units_of_a_dag_gate_and_a_cycle_of_units_does_not)
{
	int ids[4];
	struct sc_graph *g = line(ids);
	int32_t dag[4] = {0, 1, 2, 2}, cyc[4] = {0, 1, 0, 0};
	struct sc_placement *p = NULL;
	struct sc_analysis a;

	cr_assert_eq(sc_placement_manual(g, dag, 4, 3, &p), 0);
	cr_assert_eq(sc_analysis_init(&a, g, p), 0, "%s", sc_errmsg());
	cr_expect(sc_analysis_gates(&a, 0, 1));
	cr_expect(sc_analysis_gates(&a, 1, 2));
	sc_analysis_fini(&a);
	sc_placement_destroy(p);
	/* in, b, out in unit 0 and a in unit 1: 0 -> 1 -> 0, one component
	 * (a cycle of units without a loop of nodes), so nothing gates. */
	cr_assert_eq(sc_placement_manual(g, cyc, 4, 2, &p), 0);
	cr_assert_eq(sc_analysis_init(&a, g, p), 0, "%s", sc_errmsg());
	cr_expect(!sc_analysis_gates(&a, 0, 1));
	cr_expect(!sc_analysis_gates(&a, 1, 0));
	sc_analysis_fini(&a);
	sc_analysis_fini(&a); /* twice is harmless */
	sc_placement_destroy(p);
	sc_graph_destroy(g);
}

Test(analysis, a_loop_across_units_is_einval_naming_its_edge)
{
	enum sc_type t[1] = {SC_TYPE_I64};
	struct sc_placement *p = NULL;
	struct sc_graph *g = NULL;
	struct sc_analysis a;
	struct sc_schema s;
	int in, fb, d, sum;

	cr_assert_eq(sc_schema_init(&s, 1, t, NULL), 0);
	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &s);
	fb = sc_graph_feedback(g, &s);
	d = sc_graph_delay(g, fb);
	sum = sc_graph_plus(g, in, d);
	cr_assert_eq(sc_graph_bind(g, fb, sum), 0);
	cr_assert_geq(sc_graph_output(g, "sum", sum), 0);
	cr_assert_eq(sc_placement_per_node(g, &p), 0);
	cr_assert_eq(sc_analysis_init(&a, g, p), SC_EINVAL);
	cr_expect(strstr(sc_errmsg(), "crosses units"), "%s", sc_errmsg());
	cr_expect_null(a.comp, "nothing held on failure");
	sc_placement_destroy(p);
	cr_assert_eq(sc_placement_single(g, &p), 0);
	cr_assert_eq(sc_analysis_init(&a, g, p), 0, "%s", sc_errmsg());
	sc_analysis_fini(&a);
	sc_placement_destroy(p);
	sc_graph_destroy(g);
}

Test(analysis, check_mode_refuses_a_per_tick_node_only_in_the_coalescing_mode)
{
	enum sc_type t[1] = {SC_TYPE_I64};
	struct sc_graph *g = NULL;
	struct sc_schema s;
	int in, neg, d;

	cr_assert_eq(sc_schema_init(&s, 1, t, NULL), 0);
	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &s);
	neg = sc_graph_negate(g, in);
	cr_assert_geq(sc_graph_output(g, "neg", neg), 0);
	/* Integral-functional: both modes. */
	cr_assert_eq(sc_analysis_check_mode(g, false), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_analysis_check_mode(g, true), 0, "%s", sc_errmsg());
	d = sc_graph_differentiate(g, neg);
	cr_assert_eq(sc_graph_set_name(g, d, "change"), 0);
	cr_assert_geq(sc_graph_output(g, "d", d), 0);
	cr_assert_eq(sc_analysis_check_mode(g, false), SC_EINVAL);
	cr_expect(strstr(sc_errmsg(), "'change' (differentiate) is per tick"),
		  "%s", sc_errmsg());
	cr_assert_eq(sc_analysis_check_mode(g, true), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_analysis_check_mode(NULL, true), SC_EINVAL);
	sc_graph_destroy(g);
}
