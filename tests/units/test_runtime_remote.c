/*
 * test_runtime_remote.c - what sc_runtime_create refuses of a placement
 * across ranks (units/runtime_remote.h): without a transport (one process
 * cannot run another rank's units), and with one, the modes a transport
 * cannot carry. The runs across ranks are tests/mpi/test_mpi_runtime.c.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "bench/workloads/grid.h"
#include "units/placement.h"
#include "units/runtime.h"
#include "units/runtime_remote.h"

static int
no_cut(void *ctx, const struct sc_runtime_cut *c)
{
	(void)ctx;
	(void)c;
	return 0;
}

static int
no_start(void *ctx, struct sc_runtime *rt)
{
	(void)ctx;
	(void)rt;
	return 0;
}

static int
no_wait(void *ctx, uint64_t t)
{
	(void)ctx;
	(void)t;
	return 0;
}

static int
no_gather(void *ctx, int o, const struct sc_batch *l, struct sc_batch **out)
{
	(void)ctx;
	(void)o;
	*out = sc_batch_retain((struct sc_batch *)l);
	return 0;
}

static void
no_stop(void *ctx)
{
	(void)ctx;
}

static const struct sc_runtime_remote_ops ops = {no_cut, no_start, no_wait,
						 no_gather, no_stop};

static struct sc_grid *
grid_placed(const char *spec, struct sc_placement **p)
{
	struct sc_grid_opts o = {.rows = 3, .cols = 3, .seed = 1};
	struct sc_grid *gr = NULL;

	cr_assert_eq(sc_grid_create(&o, &gr), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_placement_parse(sc_grid_graph(gr), spec, 1, p), 0, "%s",
		     sc_errmsg());
	return gr;
}

Test(runtime_remote, a_placement_over_ranks_is_refused_without_a_transport)
{
	struct sc_runtime_opts o = {.workers = 1};
	struct sc_placement *p = NULL;
	struct sc_grid *gr = grid_placed("per-node@ranks:2", &p);
	struct sc_runtime *rt = NULL;

	cr_assert_eq(sc_runtime_create(sc_grid_graph(gr), p, &o, &rt),
		     SC_EINVAL);
	cr_assert_null(rt);
	cr_assert_not_null(strstr(sc_errmsg(), "spans 2 ranks"), "%s",
			   sc_errmsg());
	sc_placement_destroy(p);
	cr_assert_eq(sc_grid_destroy(gr), 0);
}

Test(runtime_remote,
     a_transport_refuses_workers_0_ticks_and_a_rank_count_mismatch)
{
	struct sc_runtime_remote r = {.rank = 0, .nranks = 2, .ops = &ops};
	struct sc_runtime_opts o = {.workers = 0, .remote = &r};
	struct sc_placement *p = NULL;
	struct sc_grid *gr = grid_placed("per-node@ranks:2", &p);
	struct sc_runtime *rt = NULL;

	cr_assert_eq(sc_runtime_create(sc_grid_graph(gr), p, &o, &rt),
		     SC_EINVAL);
	cr_assert_not_null(strstr(sc_errmsg(), "workers = 0"), "%s",
			   sc_errmsg());
	o.workers = 1;
	o.ticks = true;
	cr_assert_eq(sc_runtime_create(sc_grid_graph(gr), p, &o, &rt),
		     SC_EINVAL);
	o.ticks = false;
	r.nranks = 3;
	cr_assert_eq(sc_runtime_create(sc_grid_graph(gr), p, &o, &rt),
		     SC_EINVAL);
	cr_assert_not_null(strstr(sc_errmsg(), "transport has 3"), "%s",
			   sc_errmsg());
	cr_assert_null(rt);
	sc_placement_destroy(p);
	cr_assert_eq(sc_grid_destroy(gr), 0);
}
