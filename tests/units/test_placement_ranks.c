/*
 * test_placement_ranks.c - process ranks in a placement (units/placement.h,
 * "Ranks"): the default, the spread rule for plain and sharded units,
 * manual ranks by replica slot, their validation, the parse syntax and the
 * printed form.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/workloads/grid.h"
#include "units/placement.h"

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

static char *
printed(const struct sc_placement *p, bool dot)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert_not_null(f);
	cr_assert_eq(
	    dot ? sc_placement_fprint_dot(p, f) : sc_placement_fprint(p, f), 0);
	cr_assert_eq(fclose(f), 0);
	return buf;
}

Test(placement_ranks, a_placement_is_on_rank_0_of_1_by_default)
{
	struct sc_grid_nodes nd;
	struct sc_graph *g;
	struct sc_grid *gr = grid_init(&g, &nd);
	struct sc_placement *p = NULL;

	cr_assert_eq(sc_placement_sharded(g, 3, &p), 0);
	cr_assert_eq(sc_placement_ranks(p), 1);
	for (uint32_t u = 0; u < sc_placement_units(p); u++)
		for (uint32_t i = 0; i < sc_placement_shards(p, u); i++)
			cr_assert_eq(sc_placement_rank_of(p, u, i), 0);
	cr_assert_eq(sc_placement_rank_of(p, sc_placement_units(p), 0),
		     SC_ENOENT);
	cr_assert_eq(sc_placement_rank_of(p, 0, 64), SC_ENOENT);
	sc_placement_destroy(p);
	cr_assert_eq(sc_grid_destroy(gr), 0);
}

Test(placement_ranks, spread_is_round_robin_by_unit_and_replica_i_mod_n)
{
	struct sc_grid_nodes nd;
	struct sc_graph *g;
	struct sc_grid *gr = grid_init(&g, &nd);
	struct sc_placement *p = NULL;
	size_t slots = 0, sharded = 0;

	cr_assert_eq(sc_placement_sharded(g, 5, &p), 0);
	cr_assert_eq(sc_placement_spread_ranks(p, 3), 0);
	cr_assert_eq(sc_placement_ranks(p), 3);
	for (uint32_t u = 0; u < sc_placement_units(p); u++) {
		uint32_t k = sc_placement_shards(p, u);

		slots += k;
		sharded += k > 1;
		for (uint32_t i = 0; i < k; i++)
			cr_assert_eq(sc_placement_rank_of(p, u, i),
				     (int)((k > 1 ? i : u) % 3),
				     "unit %u replica %u", u, i);
	}
	cr_assert_gt(sharded, 0, "the grid has sharded units");
	cr_assert_eq(sc_placement_replicas(p), slots);
	/* The rule follows shards changed later. */
	cr_assert_eq(sc_placement_set_shards(
			 p, (uint32_t)sc_placement_unit_of(p, nd.agg_row), 2),
		     0);
	cr_assert_eq(sc_placement_rank_of(
			 p, (uint32_t)sc_placement_unit_of(p, nd.agg_row), 1),
		     1);
	cr_assert_eq(sc_placement_spread_ranks(p, 0), SC_EINVAL);
	cr_assert_eq(sc_placement_spread_ranks(p, SC_PLACEMENT_MAX_RANKS + 1),
		     SC_EINVAL);
	cr_assert_eq(sc_placement_ranks(p), 3, "a refusal changes nothing");
	sc_placement_destroy(p);
	cr_assert_eq(sc_grid_destroy(gr), 0);
}

Test(placement_ranks, manual_ranks_name_each_replica_slot)
{
	struct sc_grid_nodes nd;
	struct sc_graph *g;
	struct sc_grid *gr = grid_init(&g, &nd);
	struct sc_placement *p = NULL;
	uint32_t rank[256];
	size_t n, slot = 0;
	uint32_t agg;

	cr_assert_eq(sc_placement_sharded(g, 2, &p), 0);
	n = sc_placement_replicas(p);
	cr_assert_leq(n, 256);
	for (size_t i = 0; i < n; i++)
		rank[i] = (uint32_t)((i * 7 + 3) % 4);
	cr_assert_eq(sc_placement_set_ranks(p, 4, rank, n), 0);
	/* Slots run unit by unit, shard by shard: one per replica. */
	for (uint32_t u = 0; u < sc_placement_units(p); u++)
		for (uint32_t i = 0; i < sc_placement_shards(p, u); i++) {
			cr_assert_lt(slot, n, "more shards than replicas");
			cr_assert_eq(sc_placement_rank_of(p, u, i),
				     (int)rank[slot++]);
		}
	cr_assert_eq(slot, n, "fewer shards than replicas");
	agg = (uint32_t)sc_placement_unit_of(p, nd.agg_row);
	cr_assert_eq(sc_placement_set_shards(p, agg, 3), SC_ESTATE,
		     "manual ranks name slots: shards are fixed");
	cr_assert_eq(sc_placement_shards(p, agg), 2);
	/* Refusals, each changing nothing. */
	rank[1] = 4;
	cr_assert_eq(sc_placement_set_ranks(p, 4, rank, n), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "slot 1 on rank 4"), "%s", sc_errmsg());
	rank[1] = 0;
	cr_assert_eq(sc_placement_set_ranks(p, 4, rank, n - 1), SC_EINVAL);
	cr_assert_eq(sc_placement_set_ranks(p, 0, rank, n), SC_EINVAL);
	cr_assert_eq(sc_placement_rank_of(p, 0, 0), (int)((0 * 7 + 3) % 4));
	/* Spreading again drops the manual ranks, and shards may change. */
	cr_assert_eq(sc_placement_spread_ranks(p, 2), 0);
	cr_assert_eq(sc_placement_set_shards(p, agg, 3), 0);
	cr_assert_eq(sc_placement_rank_of(p, agg, 2), 0);
	sc_placement_destroy(p);
	cr_assert_eq(sc_grid_destroy(gr), 0);
}

Test(placement_ranks, parse_reads_ranks_after_any_strategy)
{
	struct sc_grid_nodes nd;
	struct sc_graph *g;
	struct sc_grid *gr = grid_init(&g, &nd);
	struct sc_placement *p = NULL;
	uint32_t agg;

	cr_assert_eq(sc_placement_parse(g, "ranks:2", 1, &p), 0, "%s",
		     sc_errmsg());
	cr_assert_str_eq(sc_placement_strategy(p), "chains");
	cr_assert_eq(sc_placement_ranks(p), 2);
	sc_placement_destroy(p);

	cr_assert_eq(sc_placement_parse(g, "sharded:4@ranks:3", 1, &p), 0, "%s",
		     sc_errmsg());
	agg = (uint32_t)sc_placement_unit_of(p, nd.agg_row);
	cr_assert_eq(sc_placement_shards(p, agg), 4);
	cr_assert_eq(sc_placement_rank_of(p, agg, 3), 0);
	cr_assert_eq(sc_placement_rank_of(p, agg, 2), 2);
	sc_placement_destroy(p);

	cr_assert_eq(sc_placement_parse(g, "single@ranks:1,", 1, &p),
		     SC_EINVAL);
	cr_assert_eq(sc_placement_parse(g, "single@ranks:1", 1, &p), 0);
	cr_assert_eq(sc_placement_ranks(p), 1);
	sc_placement_destroy(p);
	/* A trailing comma is an empty entry. */
	cr_assert_eq(sc_placement_parse(g, "single@ranks:3,", 1, &p),
		     SC_EINVAL);
	p = NULL;
	cr_assert_eq(sc_placement_parse(g, "per-node@ranks:1,0", 1, &p),
		     SC_EINVAL, "two ranks for more slots than two");
	cr_assert(strstr(sc_errmsg(), "ranks given for"), "%s", sc_errmsg());
	cr_assert_null(p);
	cr_assert_eq(sc_placement_parse(g, "chains@ranks:0", 1, &p), SC_EINVAL);
	cr_assert_eq(sc_placement_parse(g, "chains@ranks:x", 1, &p), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "ranks:N"), "%s", sc_errmsg());
	cr_assert_eq(sc_placement_parse(g, "nosuch@ranks:2", 1, &p), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "unknown strategy 'nosuch'"), "%s",
		  sc_errmsg());
	cr_assert_null(p);
	cr_assert_eq(sc_grid_destroy(gr), 0);
}

Test(placement_ranks, printed_forms_name_the_ranks)
{
	struct sc_grid_nodes nd;
	struct sc_graph *g;
	struct sc_grid *gr = grid_init(&g, &nd);
	struct sc_placement *p = NULL;
	char *txt;

	cr_assert_eq(sc_placement_parse(g, "sharded:2@ranks:2", 1, &p), 0);
	txt = printed(p, false);
	cr_assert(strstr(txt, " over 2 ranks\n"), "%s", txt);
	cr_assert(strstr(txt, "unit 0 @rank 0:"), "%s", txt);
	cr_assert(strstr(txt, " x2 @ranks 0,1:"), "%s", txt);
	free(txt);
	txt = printed(p, true);
	cr_assert(strstr(txt, "x2 @ranks 0,1\""), "%s", txt);
	free(txt);
	cr_assert_eq(sc_placement_spread_ranks(p, 1), 0);
	txt = printed(p, false);
	cr_assert_null(strstr(txt, "rank"), "one rank prints as before: %s",
		       txt);
	free(txt);
	sc_placement_destroy(p);
	cr_assert_eq(sc_grid_destroy(gr), 0);
}
