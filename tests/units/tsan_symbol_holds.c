/*
 * tsan_symbol_holds.c - the circuits of a real pool hold the symbols of the
 * rows they keep (operators/symbol.h, "Who holds an id"), taking and
 * dropping holds on one shared table from every worker at once, as a plain
 * program for the ThreadSanitizer pass: names joined with tags, counted
 * per name, on four workers with every node in its own unit; the host
 * releases each id as soon as its submit returned (the edges hold the
 * frames' ids, units/edge_int.h, from every worker too). Afterwards every
 * kept row reads the text it was fed with, and once everything is
 * retracted and the runtime destroyed the table is empty. Exit 0 is a
 * pass; an alarm turns a hang into a failure.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "operators/aggregate.h"
#include "operators/symbol.h"
#include "units/placement.h"
#include "units/runtime.h"

#define N      400
#define ROUNDS 4

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			(void)fprintf(stderr,                                  \
				      "tsan_symbol_holds:%d: %s failed "       \
				      "(%s)\n",                                \
				      __LINE__, #cond, sc_errmsg());           \
			return 1;                                              \
		}                                                              \
	} while (0)

static struct sc_symtab *tab;

/* Submit (text, v) x w to input `in`, then release the host's id. */
static int
submit(struct sc_runtime *rt, int in, const char *text, int64_t v, int64_t w)
{
	uint64_t row[2];
	struct sc_batch *b;

	CHECK(sc_symtab_intern_cstr(tab, text, &row[0]) == 0);
	row[1] = sc_enc_i64(v);
	CHECK(sc_batch_from_records(2, row, &w, 1, &b) == 0);
	CHECK(sc_runtime_submit_wait(rt, in, b, 0) == 0);
	sc_batch_release(b);
	CHECK(sc_symtab_release(tab, row[0]) == 0);
	return 0;
}

/* Every (name, count) row of the output names "name-<i>" for some i. */
static int
check_names(struct sc_runtime *rt, int out, size_t want)
{
	struct sc_batch *got;

	CHECK(sc_runtime_integral(rt, out, &got) == 0);
	CHECK(sc_batch_count(got) == want);
	for (size_t i = 0; i < sc_batch_count(got); i++) {
		const char *text = NULL;

		CHECK(sc_symtab_lookup(tab, sc_batch_row(got, i)[0], &text,
				       NULL) == 0);
		CHECK(strncmp(text, "name-", 5) == 0);
	}
	sc_batch_release(got);
	return 0;
}

static int
run(void)
{
	enum sc_type ty[2] = {SC_TYPE_SYMBOL, SC_TYPE_I64};
	struct sc_aggregate_spec count = {
	    .ncols = 3, .k = 1, .kind = SC_AGG_COUNT};
	struct sc_runtime_opts o = {.workers = 4, .edge_capacity = 4};
	struct sc_schema s;
	struct sc_graph *g;
	struct sc_placement *p;
	struct sc_runtime *rt;
	int names, tags, out;
	char text[32];

	CHECK(sc_symtab_create(&tab) == 0);
	CHECK(sc_schema_init(&s, 2, ty, tab) == 0);
	CHECK(sc_graph_create(&g) == 0);
	names = sc_graph_input(g, "names", &s);
	tags = sc_graph_input(g, "tags", &s);
	out = sc_graph_output(
	    g, "per_name",
	    sc_graph_aggregate(g, sc_graph_join(g, names, tags, 1), &count));
	CHECK(out >= 0);
	CHECK(sc_placement_parse(g, "per-node", 1, &p) == 0);
	CHECK(sc_runtime_create(g, p, &o, &rt) == 0);
	for (int r = 0; r < ROUNDS; r++) {
		int64_t w = r % 2 ? -1 : 1; /* in, out, in, out */

		for (int i = 0; i < N; i++) {
			(void)snprintf(text, sizeof(text), "name-%d",
				       r / 2 * N + i);
			CHECK(submit(rt, names, text, i, w) == 0);
			CHECK(submit(rt, tags, text, i % 7, w) == 0);
		}
		CHECK(sc_runtime_wait_idle(rt, 0, NULL) == 0);
		CHECK(check_names(rt, out, w > 0 ? N : 0) == 0);
	}
	CHECK(sc_runtime_shutdown(rt, NULL) == 0);
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
	CHECK(sc_symtab_count(tab) == 0);
	CHECK(sc_graph_destroy(g) == 0);
	sc_symtab_destroy(tab);
	return 0;
}

int
main(void)
{
	(void)alarm(120);
	if (run() != 0)
		return 1;
	(void)printf("tsan_symbol_holds: ok\n");
	return 0;
}
