/*
 * test_aggregate_nonneg.c - COUNT, SUM and AVG declared SC_AGG_NONNEGATIVE
 * (aggregate.h, "Nonnegative inputs"): on inputs whose every row keeps an
 * integrated weight >= 0 they emit, step by step, exactly the deltas of the
 * row-keeping aggregate while keeping no row; a settled breach (a group's
 * total weight negative, or zero with a non-zero sum) is reported by
 * sc_aggregate_check and sc_circuit_check, a transient one is not; the flag
 * is refused where it means nothing.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "operators/aggregate.h"
#include "operators/circuit.h"
#include "operators/graph.h"
#include "operators/symbol.h"
#include "tests/support/op_gen.h"
#include "tests/support/prop.h"
#include "tests/support/zset_gen.h"

#define SUITE "aggregate_nonneg"
#define NCOLS 3

/* A value of column c of type t, from a small domain so groups collide;
 * f64 values are multiples of 1/4. */
static uint64_t
value(struct sc_rng *r, enum sc_type t)
{
	int64_t x = sc_rng_range(r, -6, 6);

	if (t == SC_TYPE_I64)
		return sc_enc_i64(x);
	if (t == SC_TYPE_U64)
		return sc_enc_u64((uint64_t)(x + 6));
	return sc_enc_f64((double)x / 4.0);
}

/*
 * A delta of about `nops` changes that keeps every row of the integral z
 * (updated here) at a weight >= 0: an insert of a fresh or a present row
 * (weight 1..3, sometimes 2^40), or a retraction of part or all of a
 * present row's weight. Several changes may hit the same row in one delta:
 * each is checked against the weight the earlier ones left.
 */
static struct sc_batch *
positive_delta(struct sc_rng *r, const enum sc_type *types, struct zref *z,
	       size_t nops)
{
	struct sc_batch_builder b;
	struct sc_batch *out;
	uint64_t row[NCOLS];

	cr_assert_eq(sc_batch_builder_init(&b, NCOLS), 0);
	for (size_t i = 0; i < nops; i++) {
		__int128 w = 0;
		const uint64_t *old = NULL;
		int64_t d;

		if (sc_rng_below(r, 2))
			old = opgen_pick(r, z, &w); /* NULL: none live */
		if (old) {
			memcpy(row, old, sizeof(row));
			/* All of it, or 1..min(w, 3). */
			if (w > 3 && sc_rng_below(r, 2))
				d = -(int64_t)w;
			else
				d = -1 - (int64_t)sc_rng_below(
					     r, (uint64_t)(w < 3 ? w : 3));
		} else {
			for (uint32_t c = 0; c < NCOLS; c++)
				row[c] = value(r, types[c]);
			d = sc_rng_below(r, 25) == 0
				? INT64_C(1) << 40
				: 1 + (int64_t)sc_rng_below(r, 3);
		}
		zref_add(z, row, d);
		cr_assert_geq(zref_weight(z, row), 0);
		cr_assert_eq(sc_batch_builder_push(&b, row, NCOLS, d), 0);
	}
	cr_assert_eq(sc_batch_builder_finish(&b, &out), 0);
	sc_batch_builder_fini(&b);
	return out;
}

/* Whether two batches are the same Z-set; *na and *nb: their rows. */
static bool
same_batch(const struct sc_batch *a, const struct sc_batch *b, uint32_t ncols,
	   __int128 *na, __int128 *nb)
{
	struct zref z;
	bool same;

	zref_init(&z, ncols);
	zref_add_batch(&z, a, 1);
	zref_add_batch(&z, b, -1);
	same = zref_nonzero(&z) == 0;
	*na = (__int128)sc_batch_count(a);
	*nb = (__int128)sc_batch_count(b);
	zref_fini(&z);
	return same;
}

Test(aggregate_nonneg, equals_the_row_keeping_aggregate_on_positive_inputs)
{
	static const enum sc_type num_types[] = {SC_TYPE_I64, SC_TYPE_U64,
						 SC_TYPE_F64};
	uint64_t base = sc_prop_seed(16041);

	for (uint64_t c = 0; c < sc_prop_count(80); c++) {
		struct sc_rng r;
		enum sc_type types[NCOLS];
		struct sc_aggregate_spec rows = {0};
		struct sc_aggregate *keep, *nn;
		struct zref in;

		sc_rng_seed(&r, base + c);
		for (uint32_t i = 0; i < NCOLS; i++)
			types[i] = num_types[sc_rng_below(&r, 3)];
		rows.ncols = NCOLS;
		rows.kind = (enum sc_agg_kind)sc_rng_below(&r, 3);
		rows.k = (uint32_t)sc_rng_below(&r, NCOLS);
		rows.col = rows.k + (uint32_t)sc_rng_below(&r, NCOLS - rows.k);
		rows.col_type = types[rows.col];
		cr_assert_eq(sc_aggregate_create(&rows, &keep), 0, "%s",
			     sc_errmsg());
		cr_assert_eq(
		    sc_aggregate_create_flags(&rows, SC_AGG_NONNEGATIVE, &nn),
		    0, "%s", sc_errmsg());
		zref_init(&in, NCOLS);
		for (int step = 0; step < 40; step++) {
			struct sc_batch *d =
			    sc_rng_below(&r, 8) == 0
				? NULL
				: positive_delta(&r, types, &in,
						 sc_rng_below(&r, 12));
			struct sc_batch *want, *got;
			__int128 nw, ng;

			cr_assert_eq(sc_aggregate_step(keep, d, &want), 0, "%s",
				     sc_errmsg());
			cr_assert_eq(sc_aggregate_step(nn, d, &got), 0, "%s",
				     sc_errmsg());
			SC_PROP_ASSERT(
			    base + c, SUITE,
			    "equals_the_row_keeping_aggregate_on_positive_"
			    "inputs",
			    same_batch(want, got, rows.k + 1, &nw, &ng),
			    "step %d kind %d k %u col %u type %s: the "
			    "row-keeping delta has %lld rows, the flagged %lld",
			    step, (int)rows.kind, rows.k, rows.col,
			    sc_type_name(rows.col_type), (long long)nw,
			    (long long)ng);
			SC_PROP_ASSERT(
			    base + c, SUITE,
			    "equals_the_row_keeping_aggregate_on_positive_"
			    "inputs",
			    sc_aggregate_check(nn) == 0 &&
				sc_aggregate_rows(nn) == 0 &&
				sc_aggregate_groups(nn) ==
				    sc_aggregate_groups(keep),
			    "step %d: check %d, %zu rows kept, %zu groups "
			    "(row-keeping: %zu)",
			    step, sc_aggregate_check(nn), sc_aggregate_rows(nn),
			    sc_aggregate_groups(nn), sc_aggregate_groups(keep));
			sc_batch_release(d);
			sc_batch_release(want);
			sc_batch_release(got);
		}
		sc_aggregate_destroy(keep);
		sc_aggregate_destroy(nn);
		zref_fini(&in);
	}
}

/* Step (key, value) with weight w into agg; the output is dropped. */
static void
put(struct sc_aggregate *agg, int64_t key, int64_t v, int64_t w)
{
	uint64_t row[2] = {sc_enc_i64(key), sc_enc_i64(v)};
	struct sc_batch *b, *out;

	cr_assert_eq(sc_batch_from_records(2, row, &w, 1, &b), 0);
	cr_assert_eq(sc_aggregate_step(agg, b, &out), 0, "%s", sc_errmsg());
	sc_batch_release(b);
	sc_batch_release(out);
}

Test(aggregate_nonneg, state_is_a_group_entry_not_a_row_per_value)
{
	struct sc_aggregate_spec avg = {2, 1, SC_AGG_AVG, 1, SC_TYPE_I64};
	struct sc_aggregate *nn, *keep;

	cr_assert_eq(sc_aggregate_create_flags(&avg, SC_AGG_NONNEGATIVE, &nn),
		     0);
	cr_assert_eq(sc_aggregate_create(&avg, &keep), 0);
	for (int64_t v = 0; v < 1000; v++) {
		put(nn, v % 4, v, 1);
		put(keep, v % 4, v, 1);
	}
	cr_assert_eq(sc_aggregate_groups(nn), 4);
	cr_assert_eq(sc_aggregate_rows(nn), 0);
	cr_assert_eq(sc_aggregate_rows(keep), 1000);
	cr_assert_lt(sc_aggregate_bytes(nn) * 10, sc_aggregate_bytes(keep),
		     "%zu bytes, the row-keeping %zu", sc_aggregate_bytes(nn),
		     sc_aggregate_bytes(keep));
	/* Retracting every row empties the table. */
	for (int64_t v = 0; v < 1000; v++)
		put(nn, v % 4, v, -1);
	cr_assert_eq(sc_aggregate_groups(nn), 0);
	sc_aggregate_destroy(nn);
	sc_aggregate_destroy(keep);
}

Test(aggregate_nonneg, a_settled_negative_weight_is_reported_a_transient_not)
{
	struct sc_aggregate_spec cnt = {2, 1, SC_AGG_COUNT, 0, SC_TYPE_I64};
	struct sc_aggregate_spec sum = {2, 1, SC_AGG_SUM, 1, SC_TYPE_I64};
	struct sc_aggregate *c, *s;

	cr_assert_eq(sc_aggregate_create_flags(&cnt, SC_AGG_NONNEGATIVE, &c),
		     0);
	cr_assert_eq(sc_aggregate_create_flags(&sum, SC_AGG_NONNEGATIVE, &s),
		     0);
	/* A retraction before its insertion: negative, then settled. */
	put(c, 1, 5, -1);
	cr_assert_eq(sc_aggregate_check(c), SC_ESCHEMA);
	cr_assert(strstr(sc_errmsg(), "SC_AGG_NONNEGATIVE") &&
		      strstr(sc_errmsg(), "negative"),
		  "%s", sc_errmsg());
	put(c, 1, 5, 1);
	cr_assert_eq(sc_aggregate_check(c), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_aggregate_groups(c), 0);
	/* Total weight 0, sum not 0: +1 of 5 and -1 of 7. */
	put(s, 1, 5, 1);
	put(s, 1, 7, -1);
	cr_assert_eq(sc_aggregate_check(s), SC_ESCHEMA);
	put(s, 1, 7, 1);
	cr_assert_eq(sc_aggregate_check(s), 0, "%s", sc_errmsg());
	sc_aggregate_destroy(c);
	sc_aggregate_destroy(s);
}

Test(aggregate_nonneg, circuit_check_names_the_node_of_a_settled_breach)
{
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_aggregate_spec avg = {2, 1, SC_AGG_AVG, 1, SC_TYPE_I64};
	struct sc_schema sch;
	struct sc_graph *g;
	struct sc_circuit *circ;
	struct sc_batch *b, *integral = NULL;
	uint64_t row[2] = {sc_enc_i64(3), sc_enc_i64(9)};
	int64_t w = -2;
	int in, agg, out;

	cr_assert_eq(sc_schema_init(&sch, 2, t, NULL), 0);
	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &sch);
	agg = sc_graph_aggregate_flags(g, in, &avg, SC_AGG_NONNEGATIVE);
	cr_assert_geq(agg, 0, "%s", sc_errmsg());
	cr_assert_eq(sc_graph_set_name(g, agg, "avg_price"), 0, "%s",
		     sc_errmsg());
	out = sc_graph_output(g, "out", agg);
	cr_assert_eq(sc_circuit_create(g, &circ), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_batch_from_records(2, row, &w, 1, &b), 0);
	cr_assert_eq(sc_circuit_feed(circ, in, b), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_step(circ), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_check(circ, out), SC_ESCHEMA);
	cr_assert(strstr(sc_errmsg(), "avg_price"), "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_integral(circ, out, &integral), SC_ESCHEMA);
	w = 2;
	sc_batch_release(b);
	cr_assert_eq(sc_batch_from_records(2, row, &w, 1, &b), 0);
	cr_assert_eq(sc_circuit_feed(circ, in, b), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_step(circ), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_check(circ, out), 0, "%s", sc_errmsg());
	sc_batch_release(b);
	sc_circuit_destroy(circ);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(aggregate_nonneg, flag_is_refused_on_min_max_and_unknown_flags)
{
	struct sc_aggregate_spec mx = {2, 1, SC_AGG_MAX, 1, SC_TYPE_I64};
	struct sc_aggregate_spec sum = {2, 1, SC_AGG_SUM, 1, SC_TYPE_I64};
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_schema sch;
	struct sc_graph *g;
	struct sc_aggregate *agg = NULL;
	int in;

	cr_assert_eq(sc_aggregate_create_flags(&mx, SC_AGG_NONNEGATIVE, &agg),
		     SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "MAX"), "%s", sc_errmsg());
	cr_assert_eq(sc_aggregate_create_flags(&sum, 0x6, &agg), SC_EINVAL);
	cr_assert_null(agg);
	cr_assert_eq(sc_aggregate_create_flags(&sum, SC_AGG_NONNEGATIVE, &agg),
		     0);
	sc_aggregate_destroy(agg);
	cr_assert_eq(sc_schema_init(&sch, 2, t, NULL), 0);
	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &sch);
	cr_assert_eq(sc_graph_aggregate_flags(g, in, &mx, SC_AGG_NONNEGATIVE),
		     SC_EINVAL);
	cr_assert_eq(sc_graph_aggregate_flags(g, in, &sum, 0x6), SC_EINVAL);
	cr_assert_geq(sc_graph_aggregate_flags(g, in, &sum, SC_AGG_NONNEGATIVE),
		      0, "%s", sc_errmsg());
	cr_assert_eq(sc_graph_destroy(g), 0);
}

/* Run rows (sym, i) for i in 0..n with weight w through the circuit. */
static void
feed_syms(struct sc_circuit *circ, int in, uint64_t sym, int n, int64_t w)
{
	uint64_t rows[2 * 8];
	int64_t ws[8];
	struct sc_batch *b;

	for (size_t i = 0; i < (size_t)n; i++) {
		rows[2 * i] = sc_enc_symbol(sym);
		rows[2 * i + 1] = sc_enc_i64((int64_t)i);
		ws[i] = w;
	}
	cr_assert_eq(sc_batch_from_records(2, rows, ws, (size_t)n, &b), 0);
	cr_assert_eq(sc_circuit_feed(circ, in, b), 0, "%s", sc_errmsg());
	sc_batch_release(b);
	cr_assert_eq(sc_circuit_step(circ), 0, "%s", sc_errmsg());
}

/* The references on `id` after each phase of a circuit of one COUNT keyed
 * by a symbol (flags as given): 3 rows in, the 3 out, 2 in, destroyed. */
static void
refs_by_phase(struct sc_symtab *tab, uint64_t id, uint32_t flags,
	      uint64_t out[4])
{
	enum sc_type t[2] = {SC_TYPE_SYMBOL, SC_TYPE_I64};
	struct sc_aggregate_spec cnt = {2, 1, SC_AGG_COUNT, 0, SC_TYPE_I64};
	struct sc_schema sch;
	struct sc_graph *g;
	struct sc_circuit *circ;
	int in;

	cr_assert_eq(sc_schema_init(&sch, 2, t, tab), 0);
	cr_assert_eq(sc_graph_create(&g), 0);
	in = sc_graph_input(g, "in", &sch);
	cr_assert_geq(
	    sc_graph_output_stream(
		g, "out", sc_graph_aggregate_flags(g, in, &cnt, flags)),
	    0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_create(g, &circ), 0, "%s", sc_errmsg());
	feed_syms(circ, in, id, 3, 1);
	out[0] = sc_symtab_refs(tab, id);
	feed_syms(circ, in, id, 3, -1);
	out[1] = sc_symtab_refs(tab, id);
	feed_syms(circ, in, id, 2, 1);
	out[2] = sc_symtab_refs(tab, id);
	sc_circuit_destroy(circ);
	out[3] = sc_symtab_refs(tab, id);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

/* Keyed by a symbol, the aggregate keeps no row to hold the key's id:
 * its group entry holds it once while the group lives, and lets it go
 * with the group (the row-keeping aggregate holds one per row); whatever
 * else the circuit holds is the same for both. */
Test(aggregate_nonneg, a_group_holds_its_symbol_key_while_it_lives)
{
	struct sc_symtab *tab;
	uint64_t id, base, nn[4], rows[4];

	cr_assert_eq(sc_symtab_create(&tab), 0);
	cr_assert_eq(sc_symtab_intern_cstr(tab, "k", &id), 0);
	base = sc_symtab_refs(tab, id);
	refs_by_phase(tab, id, SC_AGG_NONNEGATIVE, nn);
	refs_by_phase(tab, id, 0, rows);
	/* 3 rows of one group live: one reference against three. */
	cr_assert_eq(rows[0] - nn[0], 2, "flagged %llu, row-keeping %llu",
		     (unsigned long long)nn[0], (unsigned long long)rows[0]);
	/* All gone: the same (only what the circuit holds besides). */
	cr_assert_eq(nn[1], rows[1]);
	/* 2 rows live: one against two. */
	cr_assert_eq(rows[2] - nn[2], 1);
	/* Destroyed: nothing held. */
	cr_assert_eq(nn[3], base);
	cr_assert_eq(rows[3], base);
	sc_symtab_destroy(tab);
}
