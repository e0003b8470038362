/*
 * test_placement.c - placement strategies, validation and printing.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/workloads/grid.h"
#include "bench/workloads/random.h"
#include "tests/support/prop.h"
#include "units/placement.h"
#include "units/runtime.h"

/* The grid workload (bench/workloads/grid.h) of 4 x 4 cells, its graph and
 * its node ids. */
static struct sc_grid *
grid_init(struct sc_graph **g, struct sc_grid_nodes *nd)
{
	struct sc_grid_opts o = {.rows = 4, .cols = 4, .seed = 1};
	struct sc_grid *gr = NULL;

	cr_assert_eq(sc_grid_create(&o, &gr), 0, "%s", sc_errmsg());
	*g = sc_grid_graph(gr);
	sc_grid_nodes(gr, nd);
	return gr;
}

/* in -> m1 -> m2 -> out_a ; in also -> f -> out_b (fan-out at `in`). */
struct chain_graph {
	struct sc_graph *g;
	int in, m1, m2, out_a, f, out_b;
};

static int
keep_all(void *ctx, const uint64_t *row, bool *keep)
{
	*keep = true;
	return 0;
}

static int
copy_row(void *ctx, const uint64_t *row, uint64_t *out)
{
	out[0] = row[0];
	out[1] = row[1];
	return 0;
}

static void
chain_graph_init(struct chain_graph *c)
{
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_schema s;

	cr_assert_eq(sc_schema_init(&s, 2, t, NULL), 0);
	cr_assert_eq(sc_graph_create(&c->g), 0);
	c->in = sc_graph_input(c->g, "in", &s);
	c->m1 = sc_graph_map(c->g, c->in, &s, copy_row, NULL);
	c->m2 = sc_graph_map(c->g, c->m1, &s, copy_row, NULL);
	c->out_a = sc_graph_output(c->g, "out_a", c->m2);
	c->f = sc_graph_filter(c->g, c->in, keep_all, NULL);
	c->out_b = sc_graph_output(c->g, "out_b", c->f);
	cr_assert_geq(c->out_b, 0, "%s", sc_errmsg());
}

Test(placement, single_puts_every_node_in_unit_0)
{
	struct chain_graph c;
	struct sc_placement *p = NULL;

	chain_graph_init(&c);
	cr_assert_eq(sc_placement_single(c.g, &p), 0);
	cr_assert_eq(sc_placement_units(p), 1);
	for (int i = 0; i <= c.out_b; i++)
		cr_assert_eq(sc_placement_unit_of(p, i), 0);
	cr_assert_str_eq(sc_placement_strategy(p), "single");
	sc_placement_destroy(p);
	sc_graph_destroy(c.g);
}

Test(placement, per_node_gives_each_node_its_own_unit)
{
	struct chain_graph c;
	struct sc_placement *p = NULL;

	chain_graph_init(&c);
	cr_assert_eq(sc_placement_per_node(c.g, &p), 0);
	cr_assert_eq(sc_placement_units(p), 6);
	for (int i = 0; i <= c.out_b; i++)
		cr_assert_eq(sc_placement_unit_of(p, i), i);
	sc_placement_destroy(p);
	sc_graph_destroy(c.g);
}

Test(placement, chains_fuse_a_linear_chain_and_split_at_a_fan_out)
{
	struct chain_graph c;
	struct sc_placement *p = NULL;

	chain_graph_init(&c);
	cr_assert_eq(sc_placement_chains(c.g, &p), 0);
	/* `in` has two readers: m1 and f start chains of their own. */
	cr_assert_eq(sc_placement_units(p), 3);
	cr_assert_eq(sc_placement_unit_of(p, c.m1),
		     sc_placement_unit_of(p, c.m2));
	cr_assert_eq(sc_placement_unit_of(p, c.m2),
		     sc_placement_unit_of(p, c.out_a));
	cr_assert_eq(sc_placement_unit_of(p, c.f),
		     sc_placement_unit_of(p, c.out_b));
	cr_assert_neq(sc_placement_unit_of(p, c.in),
		      sc_placement_unit_of(p, c.m1));
	cr_assert_neq(sc_placement_unit_of(p, c.m1),
		      sc_placement_unit_of(p, c.f));
	sc_placement_destroy(p);
	sc_graph_destroy(c.g);
}

Test(placement, random_is_a_function_of_its_seed_and_drops_empty_units)
{
	struct chain_graph c;

	chain_graph_init(&c);
	for (uint64_t seed = 1; seed < 50; seed++) {
		struct sc_placement *a = NULL, *b = NULL;
		bool *used;

		cr_assert_eq(sc_placement_random(c.g, 40, seed, &a), 0);
		cr_assert_eq(sc_placement_random(c.g, 40, seed, &b), 0);
		cr_assert_leq(sc_placement_units(a), 6);
		used = calloc(sc_placement_units(a), sizeof(*used));
		for (int i = 0; i <= c.out_b; i++) {
			cr_assert_eq(sc_placement_unit_of(a, i),
				     sc_placement_unit_of(b, i));
			used[sc_placement_unit_of(a, i)] = true;
		}
		for (uint32_t u = 0; u < sc_placement_units(a); u++)
			cr_assert(used[u], "unit %u of seed %llu is empty", u,
				  (unsigned long long)seed);
		free(used);
		sc_placement_destroy(a);
		sc_placement_destroy(b);
	}
	{
		struct sc_placement *a = NULL;

		/* any unit count, without an array of that size */
		cr_assert_eq(sc_placement_random(c.g, UINT32_MAX, 3, &a), 0);
		cr_assert_leq(sc_placement_units(a), 6);
		sc_placement_destroy(a);
		cr_assert_eq(sc_placement_random(c.g, 0, 3, &a), SC_EINVAL);
	}
	sc_graph_destroy(c.g);
}

Test(placement, manual_with_an_unplaced_node_is_einval_naming_the_node)
{
	struct chain_graph c;
	struct sc_placement *p = (struct sc_placement *)0x1;
	int32_t map[6] = {0, 0, 1, 1, -1, 0};

	chain_graph_init(&c);
	cr_assert_eq(sc_placement_manual(c.g, map, 6, 2, &p), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "filter#4"), "%s", sc_errmsg());
	cr_assert(strstr(sc_errmsg(), "unplaced"), "%s", sc_errmsg());
	cr_assert_eq(p, (struct sc_placement *)0x1, "out written on failure");
	sc_graph_destroy(c.g);
}

Test(placement, manual_with_a_unit_out_of_range_is_einval_naming_the_node)
{
	struct chain_graph c;
	struct sc_placement *p = NULL;
	int32_t map[6] = {0, 0, 1, 7, 1, 0};

	chain_graph_init(&c);
	cr_assert_eq(sc_placement_manual(c.g, map, 6, 2, &p), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "out_a"), "%s", sc_errmsg());
	cr_assert(strstr(sc_errmsg(), "out of range"), "%s", sc_errmsg());
	cr_assert_null(p);
	sc_graph_destroy(c.g);
}

Test(placement, manual_with_an_empty_unit_or_a_short_map_is_einval)
{
	struct chain_graph c;
	struct sc_placement *p = NULL;
	int32_t map[6] = {0, 0, 2, 2, 0, 0};

	chain_graph_init(&c);
	cr_assert_eq(sc_placement_manual(c.g, map, 6, 3, &p), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "unit 1 has no node"), "%s", sc_errmsg());
	cr_assert_eq(sc_placement_manual(c.g, map, 5, 3, &p), SC_EINVAL);
	cr_assert_eq(sc_placement_manual(c.g, NULL, 6, 3, &p), SC_EINVAL);
	cr_assert_null(p);
	sc_graph_destroy(c.g);
}

Test(placement, sharded_gives_each_keyed_node_and_its_tail_k_replicas)
{
	struct sc_grid_nodes nd;
	struct sc_graph *g;
	struct sc_grid *gr;
	struct sc_placement *p = NULL;
	uint32_t key = 0;
	int u;

	gr = grid_init(&g, &nd);
	cr_assert_eq(sc_placement_sharded(g, 4, &p), 0, "%s", sc_errmsg());
	u = sc_placement_unit_of(p, nd.agg_row);
	cr_assert_eq(sc_placement_shards(p, (uint32_t)u), 4);
	cr_assert_eq(sc_placement_shards(
			 p, (uint32_t)sc_placement_unit_of(p, nd.agg_col)),
		     4);
	cr_assert_eq(sc_placement_shards(
			 p, (uint32_t)sc_placement_unit_of(p, nd.totals)),
		     4);
	cr_assert_eq(
	    sc_placement_shards(p, (uint32_t)sc_placement_unit_of(p, nd.cells)),
	    1);
	/* agg_row heads its unit, with its linear tail (proj_row) only. */
	for (int i = 0; i < (int)sc_graph_node_count(g); i++) {
		struct sc_node_info ni;

		cr_assert_eq(sc_graph_node_info(g, i, &ni), 0);
		if (i == nd.agg_row || !strcmp(ni.name, "proj_row"))
			cr_assert_eq(sc_placement_unit_of(p, i), u, "%s",
				     ni.name);
		else
			cr_assert_neq(sc_placement_unit_of(p, i), u, "%s",
				      ni.name);
	}
	cr_assert_eq(sc_placement_key(p, (uint32_t)u, nd.cells, &key), 0);
	cr_assert_eq(key, 1);
	/* agg_col's stream does not enter agg_row's unit. */
	cr_assert_eq(sc_placement_key(p, (uint32_t)u, nd.agg_col, &key),
		     SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "agg_col"), "%s", sc_errmsg());
	cr_assert_eq(key, 1, "key written on failure");
	sc_placement_destroy(p);
	cr_assert_eq(sc_grid_destroy(gr), 0);
}

Test(placement, set_shards_refuses_a_unit_that_cannot_be_sharded)
{
	struct sc_grid_nodes nd;
	struct sc_graph *g;
	struct sc_grid *gr;
	struct sc_placement *p = NULL;

	gr = grid_init(&g, &nd);
	/* single: two keyed nodes (and more) in one unit */
	cr_assert_eq(sc_placement_single(g, &p), 0);
	cr_assert_eq(sc_placement_set_shards(p, 0, 2), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "two keyed nodes"), "%s", sc_errmsg());
	cr_assert_eq(sc_placement_shards(p, 0), 1, "changed on failure");
	cr_assert_eq(sc_placement_set_shards(p, 1, 2), SC_EINVAL);
	cr_assert_eq(sc_placement_set_shards(p, 0, 0), SC_EINVAL);
	sc_placement_destroy(p);
	/* per-node: the input node alone has no keyed node */
	cr_assert_eq(sc_placement_per_node(g, &p), 0);
	cr_assert_eq(sc_placement_set_shards(p, (uint32_t)nd.cells, 2),
		     SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "cannot be sharded") ||
		      strstr(sc_errmsg(), "no keyed node"),
		  "%s", sc_errmsg());
	cr_assert_eq(sc_placement_set_shards(p, (uint32_t)nd.agg_row, 2), 0);
	sc_placement_destroy(p);
	cr_assert_eq(sc_grid_destroy(gr), 0);
}

Test(placement, set_shards_refuses_a_linear_node_reading_an_entering_stream)
{
	struct sc_grid_nodes nd;
	struct sc_graph *g;
	struct sc_grid *gr;
	struct sc_placement *p = NULL;
	int32_t map[32];
	size_t n;

	gr = grid_init(&g, &nd);
	n = sc_graph_node_count(g);
	/* unit 1 = by_col + agg_col: by_col reads `cells`, which enters
	 * the unit, and feeds the keyed node: rows would be routed by the
	 * wrong key. */
	for (size_t i = 0; i < n; i++)
		map[i] = 0;
	map[nd.agg_col] = 1;
	map[nd.by_col] = 1;
	cr_assert_eq(sc_placement_manual(g, map, n, 2, &p), 0);
	cr_assert_eq(sc_placement_set_shards(p, 1, 2), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "by_col"), "%s", sc_errmsg());
	sc_placement_destroy(p);
	cr_assert_eq(sc_grid_destroy(gr), 0);
}

/* The placement's printed text (fprint or fprint_dot) in a string. */
static char *
printed(const struct sc_placement *p, bool dot)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert_not_null(f);
	cr_assert_eq(
	    dot ? sc_placement_fprint_dot(p, f) : sc_placement_fprint(p, f), 0);
	cr_assert_eq(fclose(f), 0); /* it finishes buf */
	return buf;
}

Test(placement, dot_output_contains_every_node_and_every_unit)
{
	struct sc_grid_nodes nd;
	struct sc_graph *g;
	struct sc_grid *gr;
	struct sc_placement *p = NULL;
	char *dot;

	gr = grid_init(&g, &nd);
	cr_assert_eq(sc_placement_sharded(g, 2, &p), 0);
	dot = printed(p, true);
	cr_assert(strstr(dot, "digraph placement {"), "%s", dot);
	for (int i = 0; i < (int)sc_graph_node_count(g); i++) {
		struct sc_node_info ni;
		char decl[32];

		cr_assert_eq(sc_graph_node_info(g, i, &ni), 0);
		(void)snprintf(decl, sizeof(decl), "n%d [label=\"", i);
		cr_assert(strstr(dot, decl), "node %d missing:\n%s", i, dot);
		cr_assert(strstr(dot, ni.name), "name %s missing", ni.name);
	}
	for (uint32_t u = 0; u < sc_placement_units(p); u++) {
		char cl[32];

		(void)snprintf(cl, sizeof(cl), "cluster_u%u ", u);
		cr_assert(strstr(dot, cl), "unit %u missing", u);
	}
	cr_assert(strstr(dot, " x2\""), "shards not shown:\n%s", dot);
	cr_assert(strstr(dot, "n0 -> n1 [style=bold]"), "%s", dot);
	cr_assert(strstr(dot, "n0 [label=\"cells\\ninput\"]"), "%s", dot);
	free(dot);
	sc_placement_destroy(p);
	cr_assert_eq(sc_grid_destroy(gr), 0);
}

Test(placement, text_output_lists_every_unit_with_its_nodes)
{
	struct chain_graph c;
	struct sc_placement *p = NULL;
	char *txt;

	chain_graph_init(&c);
	cr_assert_eq(sc_placement_chains(c.g, &p), 0);
	txt = printed(p, false);
	cr_assert(strstr(txt, "placement 'chains': 6 nodes in 3 units"), "%s",
		  txt);
	cr_assert(strstr(txt, "unit 1: map#1 (map), map#2 (map), out_a "
			      "(output)"),
		  "%s", txt);
	cr_assert(strstr(txt, "unit 2: filter#4 (filter), out_b (output)"),
		  "%s", txt);
	free(txt);
	sc_placement_destroy(p);
	sc_graph_destroy(c.g);
}

/* /dev/full takes no byte: every write to it fails (ENOSPC). */
Test(placement, printing_to_a_stream_that_fails_is_eio)
{
	struct chain_graph c;
	struct sc_placement *p = NULL;

	chain_graph_init(&c);
	cr_assert_eq(sc_placement_chains(c.g, &p), 0);
	for (int dot = 0; dot < 2; dot++) {
		FILE *f = fopen("/dev/full", "w");

		cr_assert_not_null(f, "no /dev/full");
		cr_assert_eq(dot ? sc_placement_fprint_dot(p, f)
				 : sc_placement_fprint(p, f),
			     SC_EIO, "%s: %s", dot ? "dot" : "text",
			     sc_errmsg());
		cr_assert(strstr(sc_errmsg(), dot ? "sc_placement_fprint_dot"
						  : "sc_placement_fprint"),
			  "%s", sc_errmsg());
		(void)fclose(f);
	}
	sc_placement_destroy(p);
	sc_graph_destroy(c.g);
}

Test(placement, parse_knows_the_strategies_and_refuses_others)
{
	struct chain_graph c;
	const char *good[] = {"single", "per-node", "chains", "random:3",
			      "sharded:2"};
	const char *bad[] = {"",	 "random",  "random:0",
			     "random:x", "shard:2", "sharded:"};

	chain_graph_init(&c);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct sc_placement *p = NULL;

		cr_assert_eq(sc_placement_parse(c.g, good[i], 1, &p), 0,
			     "%s: %s", good[i], sc_errmsg());
		sc_placement_destroy(p);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sc_placement *p = NULL;

		cr_assert_eq(sc_placement_parse(c.g, bad[i], 1, &p), SC_EINVAL,
			     "%s", bad[i]);
		cr_assert_null(p);
	}
	cr_assert(strstr(sc_errmsg(), "random:N"), "%s", sc_errmsg());
	sc_graph_destroy(c.g);
}

Test(placement, parse_takes_digits_only_and_names_the_range)
{
	struct chain_graph c;
	/* Each was accepted (a space, a sign, a wrapped negative) or called
	 * an unknown strategy before parse checked its number strictly. */
	const char *bad[] = {"random: 5",  "random:+5",	 "random:-1",
			     "sharded:0",  "sharded:-1", "sharded:65",
			     "sharded: 2", "random:5x",	 "random:99999999999"};

	chain_graph_init(&c);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sc_placement *p = NULL;

		cr_assert_eq(sc_placement_parse(c.g, bad[i], 1, &p), SC_EINVAL,
			     "%s", bad[i]);
		cr_assert_null(p);
		cr_assert(strstr(sc_errmsg(), "takes a whole number in 1.."),
			  "%s: %s", bad[i], sc_errmsg());
	}
	cr_assert(strstr(sc_errmsg(), "1..4294967295"), "%s", sc_errmsg());
	cr_assert_eq(sc_placement_parse(c.g, "sharded:65", 1,
					&(struct sc_placement *){NULL}),
		     SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "1..64"), "%s", sc_errmsg());
	sc_graph_destroy(c.g);
}

/*
 * a -> distinct -> out ; b -> out_b, with a, b, distinct and out in unit 0
 * and out_b in unit 1: input node b enters unit 0 but its keyed node does
 * not read it, so no routing key exists for it.
 */
Test(placement, set_shards_refuses_an_input_node_its_keyed_node_does_not_read)
{
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_placement *p = NULL;
	struct sc_runtime *rt = NULL;
	struct sc_graph *g;
	struct sc_schema s;
	int32_t map[5] = {0, 0, 0, 0, 1};
	int a, b, d;

	cr_assert_eq(sc_schema_init(&s, 2, t, NULL), 0);
	cr_assert_eq(sc_graph_create(&g), 0);
	a = sc_graph_input(g, "a", &s);
	b = sc_graph_input(g, "b", &s);
	d = sc_graph_distinct(g, a);
	cr_assert_geq(sc_graph_output(g, "out", d), 0, "%s", sc_errmsg());
	cr_assert_geq(sc_graph_output(g, "out_b", b), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_placement_manual(g, map, 5, 2, &p), 0, "%s",
		     sc_errmsg());
	cr_assert_eq(sc_placement_set_shards(p, 0, 2), SC_EINVAL,
		     "accepted; sc_runtime_create then says: %s",
		     sc_runtime_create(g, p, NULL, &rt) ? sc_errmsg() : "ok");
	cr_assert(strstr(sc_errmsg(), "'b'"), "%s", sc_errmsg());
	cr_assert_eq(sc_placement_shards(p, 0), 1, "changed on failure");
	sc_placement_destroy(p);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

/*
 * Try set_shards(u, 2) on every unit of p; where it is accepted,
 * sc_runtime_create must build it. Counts the units accepted and refused.
 */
static void
shard_every_unit(uint64_t seed, struct sc_graph *g, struct sc_placement *p,
		 size_t *accepted, size_t *refused)
{
	for (uint32_t u = 0; u < sc_placement_units(p); u++) {
		struct sc_runtime *rt = NULL;
		int got;

		if (sc_placement_set_shards(p, u, 2) != 0) {
			++*refused;
			continue;
		}
		++*accepted;
		got = sc_runtime_create(g, p, NULL, &rt);
		SC_PROP_ASSERT(seed, "placement",
			       "every_unit_set_shards_accepts_builds_as_a_"
			       "runtime",
			       got == 0, "%s unit %u: %s",
			       sc_placement_strategy(p), u, sc_errmsg());
		sc_runtime_destroy(rt);
		cr_assert_eq(sc_placement_set_shards(p, u, 1), 0);
	}
}

/*
 * Over random circuits, their sharded placement and random two-unit maps
 * (a node and about a quarter of the others in unit 0: units near the
 * rule's edge, some shardable, most not), every unit that
 * sc_placement_set_shards accepts builds: sc_runtime_create applies the
 * same rule (through sc_placement_key) and never refuses it.
 */
Test(placement, every_unit_set_shards_accepts_builds_as_a_runtime)
{
	uint64_t base = sc_prop_seed(19), count = sc_prop_count(40);
	size_t accepted = 0, refused = 0;

	for (uint64_t seed = base; seed < base + count; seed++) {
		struct sc_randc *rc = NULL;
		struct sc_placement *p = NULL;
		struct sc_graph *g;
		struct sc_rng r;
		int32_t map[64];
		size_t n;

		sc_rng_seed(&r, seed);
		cr_assert_eq(sc_randc_create(seed, &rc), 0, "%s", sc_errmsg());
		g = sc_randc_graph(rc);
		n = sc_graph_node_count(g);
		cr_assert_leq(n, 64);
		cr_assert_eq(sc_placement_sharded(g, 2, &p), 0, "%s",
			     sc_errmsg());
		shard_every_unit(seed, g, p, &accepted, &refused);
		sc_placement_destroy(p);
		for (int draw = 0; draw < 16; draw++) {
			uint64_t centre = sc_rng_below(&r, n);

			map[n - 1] = 1; /* unit 1 never empty */
			for (size_t i = 0; i + 1 < n; i++)
				map[i] = i == centre || sc_rng_below(&r, 4) == 0
					     ? 0
					     : 1;
			map[centre] = 0;
			if (sc_placement_manual(g, map, n, 2, &p) != 0)
				continue; /* centre was the last node */
			shard_every_unit(seed, g, p, &accepted, &refused);
			sc_placement_destroy(p);
		}
		cr_assert_eq(sc_randc_destroy(rc), 0);
	}
	cr_assert_gt(accepted, 0, "no unit was ever shardable: vacuous");
	cr_assert_gt(refused, 0, "no unit was ever refused: vacuous");
}
