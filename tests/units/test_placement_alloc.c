/*
 * test_placement_alloc.c - every placement strategy under a failed
 * allocation: each fails cleanly (SC_ENOMEM, *out unwritten, nothing
 * leaked), never crashes.
 *
 * This program is linked with -Wl,--wrap=malloc,calloc,realloc,free
 * (tests/CMakeLists.txt), so every call to them from the library's objects
 * and from this file goes through the __wrap_ functions below; Criterion,
 * a shared library, keeps the real allocator. Armed with fail_at = N, the
 * Nth allocation returns NULL, and the sweep runs N = 1, 2, ... until a
 * call sees no failure at all. While armed, malloc fills each block with
 * 0xa5 (as glibc's MALLOC_PERTURB_ does), so code that reads memory it has
 * not written reads garbage every time, not the zeros a fresh page holds.
 */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bench/workloads/grid.h"
#include "units/placement.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);

/* The injector's state; one test at a time runs in each process. */
static struct {
	bool armed;   /* counting allocations */
	long fail_at; /* the allocation (1-based) that fails */
	long seen;    /* allocations asked for while armed */
	bool failed;  /* fail_at was reached */
	long live;    /* blocks allocated minus blocks freed while armed */
} fa;

static bool
fa_fail_now(void)
{
	if (!fa.armed)
		return false;
	if (++fa.seen != fa.fail_at)
		return false;
	fa.failed = true;
	return true;
}

void *
__wrap_malloc(size_t n)
{
	void *p;

	if (fa_fail_now())
		return NULL;
	p = __real_malloc(n);
	if (p && fa.armed) {
		memset(p, 0xa5, n);
		fa.live++;
	}
	return p;
}

void *
__wrap_calloc(size_t k, size_t n)
{
	void *p;

	if (fa_fail_now())
		return NULL;
	p = __real_calloc(k, n);
	if (p && fa.armed)
		fa.live++;
	return p;
}

void *
__wrap_realloc(void *old, size_t n)
{
	void *p;

	if (fa_fail_now())
		return NULL;
	p = __real_realloc(old, n);
	if (p && !old && fa.armed)
		fa.live++;
	return p;
}

void
__wrap_free(void *p)
{
	if (p && fa.armed)
		fa.live--;
	__real_free(p);
}

static void
fa_arm(long fail_at)
{
	memset(&fa, 0, sizeof(fa));
	fa.fail_at = fail_at;
	fa.armed = true;
}

static void
fa_disarm(void)
{
	fa.armed = false;
}

/* The grid workload's graph: linear chains, fan-out, keyed nodes. */
static struct sc_grid *
grid_init(struct sc_graph **g)
{
	struct sc_grid_opts o = {.rows = 4, .cols = 4, .seed = 1};
	struct sc_grid *gr = NULL;

	cr_assert_eq(sc_grid_create(&o, &gr), 0, "%s", sc_errmsg());
	*g = sc_grid_graph(gr);
	return gr;
}

typedef int (*make_fn)(const struct sc_graph *g, struct sc_placement **out);

/*
 * Fail allocation 1, 2, ... of make(g) until it runs with no failure: each
 * failure must be SC_ENOMEM with *out unwritten and no block left; the run
 * without one must succeed. Returns how many allocations make needs.
 */
static long
sweep(const char *what, const struct sc_graph *g, make_fn make)
{
	struct sc_placement *const unset = (struct sc_placement *)0x1;

	for (long n = 1;; n++) {
		struct sc_placement *p = unset;
		int rc;

		fa_arm(n);
		rc = make(g, &p);
		fa_disarm();
		if (!fa.failed) {
			cr_assert_eq(rc, 0, "%s with no failure: %s", what,
				     sc_errmsg());
			sc_placement_destroy(p);
			return n - 1;
		}
		cr_assert_eq(rc, SC_ENOMEM, "%s, allocation %ld failed: %d %s",
			     what, n, rc, sc_errmsg());
		cr_assert_eq(p, unset, "%s, allocation %ld: out written", what,
			     n);
		cr_assert_eq(fa.live, 0,
			     "%s, allocation %ld: %ld blocks leaked", what, n,
			     fa.live);
	}
}

Test(placement_alloc, chains_with_a_failed_allocation_is_enomem_not_a_crash)
{
	struct sc_graph *g;
	struct sc_grid *gr = grid_init(&g);

	/* map, parent, chain_parents' two arrays, placement_make's three:
	 * every one of them fails in turn. */
	cr_assert_geq(sweep("chains", g, sc_placement_chains), 4);
	cr_assert_eq(sc_grid_destroy(gr), 0);
}

static int
make_random(const struct sc_graph *g, struct sc_placement **out)
{
	return sc_placement_random(g, 3, 7, out);
}

static int
make_sharded(const struct sc_graph *g, struct sc_placement **out)
{
	return sc_placement_sharded(g, 4, out);
}

static int
make_manual(const struct sc_graph *g, struct sc_placement **out)
{
	int32_t map[64];
	size_t n = sc_graph_node_count(g);

	cr_assert_leq(n, 64);
	for (size_t i = 0; i < n; i++)
		map[i] = (int32_t)(i % 2);
	return sc_placement_manual(g, map, n, 2, out);
}

static int
make_parsed(const struct sc_graph *g, struct sc_placement **out)
{
	return sc_placement_parse(g, "sharded:2", 1, out);
}

Test(placement_alloc, every_strategy_with_a_failed_allocation_is_enomem)
{
	struct sc_graph *g;
	struct sc_grid *gr = grid_init(&g);

	cr_assert_geq(sweep("single", g, sc_placement_single), 1);
	cr_assert_geq(sweep("per-node", g, sc_placement_per_node), 1);
	cr_assert_geq(sweep("random", g, make_random), 1);
	cr_assert_geq(sweep("manual", g, make_manual), 1);
	cr_assert_geq(sweep("sharded", g, make_sharded), 1);
	cr_assert_geq(sweep("parse sharded:2", g, make_parsed), 1);
	cr_assert_eq(sc_grid_destroy(gr), 0);
}
