/*
 * test_lateness.c - lateness, waterlines and cleanup (operators/waterline.h).
 *
 * Three groups: the submission check (late rows refused with nothing
 * applied, or admitted and counted); the waterline transfer, one test per
 * node kind by name; and cleanup: random windowed and time-bounded-join
 * circuits whose inputs respect their lateness give the same output deltas
 * at every step with cleanup on and off, and with cleanup on the state
 * stays bounded while the times advance.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "operators/aggregate.h"
#include "operators/circuit.h"
#include "operators/topk.h"
#include "operators/waterline.h"
#include "operators/window.h"
#include "tests/support/prop.h"

/* --- helpers -------------------------------------------------------------- */

static struct sc_schema
schema_i64(uint32_t ncols)
{
	enum sc_type t[SC_SCHEMA_MAX_COLS];
	struct sc_schema s;

	for (uint32_t i = 0; i < ncols; i++)
		t[i] = SC_TYPE_I64;
	cr_assert_eq(sc_schema_init(&s, ncols, t, NULL), 0);
	return s;
}

/* A batch of n rows of ncols i64 values (row-major), weights w (NULL: 1). */
static struct sc_batch *
rows_i64(uint32_t ncols, const int64_t *vals, size_t n, const int64_t *w)
{
	uint64_t words[64 * SC_SCHEMA_MAX_COLS];
	struct sc_batch *b = NULL;

	cr_assert(n * ncols <= sizeof(words) / sizeof(words[0]));
	for (size_t i = 0; i < n * ncols; i++)
		words[i] = sc_enc_i64(vals[i]);
	cr_assert_eq(sc_batch_from_records(ncols, words, w, n, &b), 0, "%s",
		     sc_errmsg());
	return b;
}

static void
feed(struct sc_circuit *c, int in, uint32_t ncols, const int64_t *vals,
     size_t n)
{
	struct sc_batch *b = rows_i64(ncols, vals, n, NULL);

	cr_assert_eq(sc_circuit_feed(c, in, b), 0, "%s", sc_errmsg());
	sc_batch_release(b);
}

static size_t
delta_rows(const struct sc_circuit *c, int node)
{
	struct sc_batch *d = NULL;
	size_t n;

	cr_assert_eq(sc_circuit_delta(c, node, &d), 0);
	n = sc_batch_count(d);
	sc_batch_release(d);
	return n;
}

/* --- declaring and checking ----------------------------------------------- */

Test(lateness, declaration_is_checked)
{
	struct sc_graph *g;
	struct sc_schema s = schema_i64(2);
	enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_F64};
	struct sc_schema sf;
	int a, f, x;

	cr_assert_eq(sc_schema_init(&sf, 2, t, NULL), 0);
	cr_assert_eq(sc_graph_create(&g), 0);
	a = sc_graph_input(g, "a", &s);
	f = sc_graph_input(g, "f", &sf);
	x = sc_graph_negate(g, a);
	cr_assert_eq(sc_graph_lateness(g, a, 0, 5, 0), 0);
	cr_assert_eq(sc_graph_lateness(g, a, 0, 5, 0), SC_EINVAL);
	cr_assert_eq(sc_graph_lateness(g, a, 1, -1, 0), SC_EINVAL);
	cr_assert_eq(sc_graph_lateness(g, a, 1, 1, 0x10), SC_EINVAL);
	cr_assert_eq(sc_graph_lateness(g, a, 2, 1, 0), SC_ESCHEMA);
	cr_assert_eq(sc_graph_lateness(g, x, 0, 1, 0), SC_ESCHEMA);
	cr_assert_eq(sc_graph_lateness(g, f, 1, 1, 0), SC_ETYPE);
	cr_assert_eq(sc_graph_lateness(g, 99, 0, 1, 0), SC_ENOENT);
	cr_assert_eq(sc_graph_lateness_count(g), 1);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

/* A graph a(t, v) with lateness 10 on t, read by an output. */
static void
one_input(unsigned flags, struct sc_graph **g, struct sc_circuit **c, int *a,
	  int *out)
{
	struct sc_schema s = schema_i64(2);

	cr_assert_eq(sc_graph_create(g), 0);
	*a = sc_graph_input(*g, "a", &s);
	*out = sc_graph_output(*g, "out", *a);
	cr_assert_eq(sc_graph_lateness(*g, *a, 0, 10, flags), 0);
	cr_assert_eq(sc_circuit_create(*g, c), 0, "%s", sc_errmsg());
}

Test(lateness, late_rows_are_refused_and_nothing_is_applied)
{
	struct sc_graph *g;
	struct sc_circuit *c;
	struct sc_batch *b, *integral = NULL;
	int64_t first[] = {100, 1};
	int64_t late[] = {95, 2, 85, 3, 80, 4};
	uint64_t admitted, refused;
	int64_t w;
	int a, out;

	one_input(0, &g, &c, &a, &out);
	feed(c, a, 2, first, 1);
	cr_assert_eq(sc_circuit_step(c), 0);
	cr_assert_eq(sc_circuit_waterline(c, a, 0, &w), 0);
	cr_assert_eq(w, 90);
	b = rows_i64(2, late, 3, NULL);
	cr_assert_eq(sc_circuit_feed(c, a, b), SC_ELATE);
	cr_assert(strstr(sc_errmsg(), "2 late rows of 3"), "%s", sc_errmsg());
	cr_assert(strstr(sc_errmsg(), "has 80 below the waterline 90"), "%s",
		  sc_errmsg());
	sc_batch_release(b);
	cr_assert_eq(sc_circuit_step(c), 0);
	cr_assert_eq(delta_rows(c, out), 0, "a refused feed applied nothing");
	cr_assert_eq(sc_circuit_integral(c, out, &integral), 0);
	cr_assert_eq(sc_batch_count(integral), 1);
	sc_batch_release(integral);
	cr_assert_eq(sc_circuit_late(c, a, &admitted, &refused), 0);
	cr_assert_eq(admitted, 0);
	cr_assert_eq(refused, 2);
	cr_assert_eq(sc_circuit_waterline(c, a, 0, &w), 0);
	cr_assert_eq(w, 90, "a refused feed does not move the waterline");
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(lateness, late_rows_admitted_are_counted_and_applied)
{
	struct sc_graph *g;
	struct sc_circuit *c;
	int64_t first[] = {100, 1};
	int64_t more[] = {95, 2, 85, 3, 120, 4};
	uint64_t admitted, refused;
	int64_t w;
	int a, out;

	one_input(SC_LATE_ADMIT, &g, &c, &a, &out);
	feed(c, a, 2, first, 1);
	cr_assert_eq(sc_circuit_step(c), 0);
	feed(c, a, 2, more, 3);
	cr_assert_eq(sc_circuit_step(c), 0);
	cr_assert_eq(delta_rows(c, out), 3);
	cr_assert_eq(sc_circuit_late(c, a, &admitted, &refused), 0);
	cr_assert_eq(admitted, 1);
	cr_assert_eq(refused, 0);
	cr_assert_eq(sc_circuit_waterline(c, a, 0, &w), 0);
	cr_assert_eq(w, 110);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(lateness, each_feed_is_checked_against_the_waterline_before_it)
{
	struct sc_graph *g;
	struct sc_circuit *c;
	struct sc_batch *b;
	int64_t first[] = {100, 1}, second[] = {89, 1};
	int a, out;

	one_input(0, &g, &c, &a, &out);
	feed(c, a, 2, first, 1); /* W = 90 from here, before any step */
	b = rows_i64(2, second, 1, NULL);
	cr_assert_eq(sc_circuit_feed(c, a, b), SC_ELATE);
	sc_batch_release(b);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(lateness, waterline_is_none_before_any_row_and_can_be_raised)
{
	struct sc_graph *g;
	struct sc_circuit *c;
	struct sc_batch *b;
	int64_t row[] = {30, 1};
	int64_t w;
	int a, out;

	one_input(0, &g, &c, &a, &out);
	cr_assert_eq(sc_circuit_step(c), 0);
	cr_assert_eq(sc_circuit_waterline(c, a, 0, &w), 0);
	cr_assert_eq(w, SC_WATERLINE_NONE);
	cr_assert_eq(sc_circuit_waterline(c, a, 1, &w), SC_ENOENT);
	cr_assert_eq(sc_circuit_set_waterline(c, a, 0, 40), 0);
	cr_assert_eq(sc_circuit_set_waterline(c, a, 0, 20), 0); /* ignored */
	cr_assert_eq(sc_circuit_set_waterline(c, a, 1, 20), SC_ENOENT);
	cr_assert_eq(sc_circuit_set_waterline(c, out, 0, 20), SC_EINVAL);
	b = rows_i64(2, row, 1, NULL);
	cr_assert_eq(sc_circuit_feed(c, a, b), SC_ELATE, "30 < raised 40");
	sc_batch_release(b);
	cr_assert_eq(sc_circuit_step(c), 0);
	cr_assert_eq(sc_circuit_waterline(c, a, 0, &w), 0);
	cr_assert_eq(w, 40);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

/* What the delta callback below saw, step by step. */
struct seen_wl {
	int64_t w[4];	    /* the waterline on t each callback read */
	int64_t least[4];   /* the least t of its delta */
	int rc_none;	    /* the read on v, which carries none */
	const void *src[4]; /* the source each read gave */
	size_t n;
};

static int
record_wl(void *ctx, int node, const struct sc_batch *d)
{
	struct seen_wl *s = ctx;
	const void *src = NULL;
	int64_t v = 0;

	(void)node;
	cr_assert_lt(s->n, 4);
	cr_assert_eq(sc_circuit_delta_waterline(0, &s->w[s->n], &s->src[s->n]),
		     0, "%s", sc_errmsg());
	s->least[s->n] = INT64_MAX;
	for (size_t i = 0; i < sc_batch_count(d); i++)
		if (sc_dec_i64(sc_batch_row(d, i)[0]) < s->least[s->n])
			s->least[s->n] = sc_dec_i64(sc_batch_row(d, i)[0]);
	s->rc_none = sc_circuit_delta_waterline(1, &v, &src);
	cr_assert_eq(src, s->src[s->n], "the source is set without a value");
	s->n++;
	return 0;
}

/* Inside a delta callback, the output's waterline as it bounds the delta
 * reported: the one after the previous step (none before any), at or below
 * every row of it; outside a callback there is none to read. */
Test(lateness, a_delta_callback_reads_the_waterline_that_bounds_its_delta)
{
	struct sc_graph *g;
	struct sc_circuit *c;
	struct seen_wl seen = {.n = 0};
	int64_t first[] = {100, 1}, second[] = {95, 2, 120, 3},
		third[] = {111, 4};
	int64_t w;
	int a, out;

	one_input(0, &g, &c, &a, &out);
	cr_assert_eq(sc_circuit_on_delta(c, out, record_wl, &seen), 0);
	feed(c, a, 2, first, 1);
	cr_assert_eq(sc_circuit_step(c), 0);
	feed(c, a, 2, second, 2);
	cr_assert_eq(sc_circuit_step(c), 0);
	feed(c, a, 2, third, 1);
	cr_assert_eq(sc_circuit_step(c), 0);
	cr_assert_eq(seen.n, 3);
	cr_assert_eq(seen.w[0], SC_WATERLINE_NONE);
	cr_assert_eq(seen.w[1], 90, "after the step of 100: %lld",
		     (long long)seen.w[1]);
	cr_assert_eq(seen.w[2], 110, "after the step of 120: %lld",
		     (long long)seen.w[2]);
	for (size_t i = 0; i < seen.n; i++) {
		cr_assert_leq(seen.w[i], seen.least[i]);
		cr_assert_eq(seen.src[i], seen.src[0],
			     "one circuit, one source");
	}
	cr_assert_not_null(seen.src[0]);
	cr_assert_eq(seen.rc_none, SC_ENOENT);
	cr_assert_eq(sc_circuit_delta_waterline(0, &w, NULL), SC_ESTATE);
	cr_assert(strstr(sc_errmsg(), "not inside a delta callback"), "%s",
		  sc_errmsg());
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

Test(lateness, host_side_check_counts_refuses_and_advances)
{
	struct sc_lateness d = {0, 0, 5, 0, true};
	struct sc_late l;
	int64_t v1[] = {50, 0}, v2[] = {44, 0, 46, 0, 60, 0};
	struct sc_batch *b1 = rows_i64(2, v1, 1, NULL);
	struct sc_batch *b2 = rows_i64(2, v2, 3, NULL);
	size_t first = 99;

	sc_late_init(&l, &d);
	cr_assert_eq(sc_late_waterline(&l), SC_WATERLINE_NONE);
	cr_assert_eq(sc_late_submit(&l, b1, "t", NULL), 0);
	cr_assert_eq(sc_late_waterline(&l), 45);
	cr_assert_eq(sc_late_count(&l, b2, &first), 1);
	cr_assert_eq(first, 0);
	cr_assert_eq(sc_late_submit(&l, b2, "t", "bids"), SC_ELATE);
	cr_assert(strstr(sc_errmsg(), "'bids'"), "%s", sc_errmsg());
	cr_assert_eq(sc_late_waterline(&l), 45);
	cr_assert_eq(l.refused, 1);
	sc_batch_release(b1);
	sc_batch_release(b2);
}

Test(lateness, refusing_a_row_the_batch_does_not_have_is_an_error)
{
	struct sc_lateness d = {0, 0, 5, 0, true};
	struct sc_late l;
	int64_t v[] = {50, 0};
	struct sc_batch *b = rows_i64(2, v, 1, NULL);

	sc_late_init(&l, &d);
	cr_assert_eq(sc_late_refuse(&l, b, 1, 1, "t", NULL), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "first late row 1 of a batch of 1"), "%s",
		  sc_errmsg());
	cr_assert_eq(l.refused, 0, "nothing counted on an error");
	cr_assert_eq(sc_late_refuse(&l, b, 1, 0, "t", NULL), SC_ELATE);
	cr_assert_eq(l.refused, 1);
	sc_batch_release(b);
}

/* --- the transfer, one kind at a time ------------------------------------
 * a(t, k, v) has lateness 5 on t and gets t = 100 (W 95); b(t, k, v) has
 * lateness 0 on t and gets t = 50 (W 50); c(t, k, v) declares none. */

struct tg {
	struct sc_graph *g;
	int a, b, c;
};

static void
tg_init(struct tg *t)
{
	struct sc_schema s = schema_i64(3);

	cr_assert_eq(sc_graph_create(&t->g), 0);
	t->a = sc_graph_input(t->g, "a", &s);
	t->b = sc_graph_input(t->g, "b", &s);
	t->c = sc_graph_input(t->g, "c", &s);
	cr_assert_eq(sc_graph_lateness(t->g, t->a, 0, 5, 0), 0);
	cr_assert_eq(sc_graph_lateness(t->g, t->b, 0, 0, 0), 0);
}

/* Build, feed one row to each input, step: node's waterline on col into
 * *v, or the error. Frees the graph. */
static int
tg_run(struct tg *t, int node, uint32_t col, int64_t *v)
{
	struct sc_circuit *c;
	int64_t ra[] = {100, 1, 7}, rb[] = {50, 1, 8}, rc_[] = {10, 1, 9};
	uint32_t mask = 0;
	int rc;

	cr_assert_geq(node, 0, "%s", sc_errmsg());
	cr_assert_eq(sc_graph_output(t->g, "out", node) >= 0, true);
	cr_assert_eq(sc_circuit_create(t->g, &c), 0, "%s", sc_errmsg());
	feed(c, t->a, 3, ra, 1);
	feed(c, t->b, 3, rb, 1);
	feed(c, t->c, 3, rc_, 1);
	cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
	rc = sc_circuit_waterline(c, node, col, v);
	/* The static columns agree with the values the step computed. */
	cr_assert_eq(sc_graph_waterline_cols(t->g, node, &mask), 0);
	cr_assert_eq((mask >> col & 1u) != 0, rc == 0);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(t->g), 0);
	return rc;
}

static int
keep_all(void *ctx, const uint64_t *row, bool *keep)
{
	(void)ctx;
	(void)row;
	*keep = true;
	return 0;
}

static int
copy3(void *ctx, const uint64_t *row, uint64_t *out)
{
	(void)ctx;
	memcpy(out, row, 3 * sizeof(uint64_t));
	return 0;
}

static int64_t
twice(void *ctx, int64_t v)
{
	(void)ctx;
	return 2 * v;
}

Test(waterline, input_carries_its_declared_column)
{
	struct tg t;
	int64_t v;

	tg_init(&t);
	cr_assert_eq(tg_run(&t, t.a, 0, &v), 0);
	cr_assert_eq(v, 95);
	tg_init(&t);
	cr_assert_eq(tg_run(&t, t.a, 1, &v), SC_ENOENT);
	tg_init(&t);
	cr_assert_eq(tg_run(&t, t.c, 0, &v), SC_ENOENT);
}

Test(waterline, filter_passes)
{
	struct tg t;
	int64_t v;

	tg_init(&t);
	cr_assert_eq(
	    tg_run(&t, sc_graph_filter(t.g, t.a, keep_all, NULL), 0, &v), 0);
	cr_assert_eq(v, 95);
}

Test(waterline, map_drops_unless_declared_monotone)
{
	struct sc_schema s = schema_i64(3);
	struct tg t;
	int64_t v;
	int m;

	tg_init(&t);
	cr_assert_eq(tg_run(&t, sc_graph_map(t.g, t.a, &s, copy3, NULL), 0, &v),
		     SC_ENOENT);
	tg_init(&t);
	m = sc_graph_map(t.g, t.a, &s, copy3, NULL);
	cr_assert_eq(sc_graph_monotone_offset(t.g, m, 2, 0, 10), 0);
	cr_assert_eq(sc_graph_monotone(t.g, m, 0, 0, twice, NULL), 0);
	cr_assert_eq(sc_graph_monotone(t.g, m, 0, 0, twice, NULL), SC_EINVAL);
	cr_assert_eq(sc_graph_monotone(t.g, t.a, 0, 0, twice, NULL), SC_EINVAL);
	cr_assert_eq(tg_run(&t, m, 2, &v), 0);
	cr_assert_eq(v, 105);
	tg_init(&t);
	m = sc_graph_map(t.g, t.a, &s, copy3, NULL);
	cr_assert_eq(sc_graph_monotone(t.g, m, 0, 0, twice, NULL), 0);
	cr_assert_eq(tg_run(&t, m, 0, &v), 0);
	cr_assert_eq(v, 190);
}

static int
emit_copy(void *ctx, const uint64_t *row, struct sc_emitter *out)
{
	(void)ctx;
	return sc_emit(out, row);
}

Test(waterline, flat_map_drops_unless_declared_monotone)
{
	struct sc_schema s = schema_i64(3);
	struct tg t;
	int64_t v;
	int m;

	tg_init(&t);
	cr_assert_eq(
	    tg_run(&t, sc_graph_flat_map(t.g, t.a, &s, emit_copy, NULL), 0, &v),
	    SC_ENOENT);
	tg_init(&t);
	m = sc_graph_flat_map(t.g, t.a, &s, emit_copy, NULL);
	cr_assert_eq(sc_graph_monotone_offset(t.g, m, 0, 0, 0), 0);
	cr_assert_eq(tg_run(&t, m, 0, &v), 0);
	cr_assert_eq(v, 95);
}

Test(waterline, window_gives_the_start_column_the_first_open_window)
{
	struct tg t;
	int64_t v;

	/* Tumbling 10: a row at t >= 95 is in a window starting >= 90. */
	tg_init(&t);
	cr_assert_eq(tg_run(&t, sc_window_tumbling(t.g, t.a, 0, 10), 3, &v), 0);
	cr_assert_eq(v, 90);
	tg_init(&t);
	cr_assert_eq(tg_run(&t, sc_window_tumbling(t.g, t.a, 0, 10), 0, &v), 0);
	cr_assert_eq(v, 95);
	/* Hopping 20 every 5: the windows of t >= 95 start > 75, so >= 80. */
	tg_init(&t);
	cr_assert_eq(tg_run(&t, sc_window_hopping(t.g, t.a, 0, 20, 5), 3, &v),
		     0);
	cr_assert_eq(v, 80);
}

Test(waterline, index_by_follows_the_permutation)
{
	uint32_t cols[] = {2, 0};
	struct tg t;
	int64_t v;

	tg_init(&t);
	cr_assert_eq(tg_run(&t, sc_graph_index_by(t.g, t.a, cols, 2), 1, &v),
		     0);
	cr_assert_eq(v, 95);
	tg_init(&t);
	cr_assert_eq(tg_run(&t, sc_graph_index_by(t.g, t.a, cols, 2), 0, &v),
		     SC_ENOENT);
}

Test(waterline, plus_takes_the_min_and_needs_every_input)
{
	struct tg t;
	int64_t v;

	tg_init(&t);
	cr_assert_eq(tg_run(&t, sc_graph_plus(t.g, t.a, t.b), 0, &v), 0);
	cr_assert_eq(v, 50);
	tg_init(&t);
	cr_assert_eq(tg_run(&t, sc_graph_plus(t.g, t.a, t.c), 0, &v),
		     SC_ENOENT);
}

Test(waterline, minus_takes_the_min)
{
	struct tg t;
	int64_t v;

	tg_init(&t);
	cr_assert_eq(tg_run(&t, sc_graph_minus(t.g, t.b, t.a), 0, &v), 0);
	cr_assert_eq(v, 50);
}

Test(waterline, negate_passes)
{
	struct tg t;
	int64_t v;

	tg_init(&t);
	cr_assert_eq(tg_run(&t, sc_graph_negate(t.g, t.a), 0, &v), 0);
	cr_assert_eq(v, 95);
}

Test(waterline, distinct_passes)
{
	struct tg t;
	int64_t v;

	tg_init(&t);
	cr_assert_eq(tg_run(&t, sc_graph_distinct(t.g, t.a), 0, &v), 0);
	cr_assert_eq(v, 95);
}

Test(waterline, join_key_gets_the_min_of_both_sides)
{
	struct tg t;
	int64_t v;

	tg_init(&t);
	cr_assert_eq(tg_run(&t, sc_graph_join(t.g, t.a, t.b, 1), 0, &v), 0);
	cr_assert_eq(v, 50);
	tg_init(&t);
	cr_assert_eq(tg_run(&t, sc_graph_join(t.g, t.a, t.c, 1), 0, &v),
		     SC_ENOENT);
}

Test(waterline, antijoin_key_gets_the_min_of_both_sides)
{
	struct tg t;
	int64_t v;

	tg_init(&t);
	cr_assert_eq(tg_run(&t, sc_graph_antijoin(t.g, t.a, t.b, 1), 0, &v), 0);
	cr_assert_eq(v, 50);
}

Test(waterline, join_within_bounds_a_hi_and_b_t)
{
	uint32_t acols[] = {1, 0, 0}, bcols[] = {1, 0};
	struct tg t;
	int64_t v;
	int ia, m, ib, j;

	/* a' = (k, lo = t, hi = t + 30), b' = (k, t); out (k, lo, hi, t). */
	tg_init(&t);
	ia = sc_graph_index_by(t.g, t.a, acols, 3);
	{
		struct sc_schema s = schema_i64(3);

		m = sc_graph_map(t.g, ia, &s, copy3, NULL);
	}
	cr_assert_eq(sc_graph_monotone_offset(t.g, m, 1, 1, 0), 0);
	ib = sc_graph_index_by(t.g, t.b, bcols, 2);
	j = sc_graph_join_within(t.g, m, ib, 1, 1, 2, 1);
	cr_assert_eq(tg_run(&t, j, 2, &v), 0);
	cr_assert_eq(v, 50, "min(W_b(t) = 50, W_a(lo) = 95)");
	tg_init(&t);
	ia = sc_graph_index_by(t.g, t.a, acols, 3);
	ib = sc_graph_index_by(t.g, t.b, bcols, 2);
	j = sc_graph_join_within(t.g, ia, ib, 1, 1, 2, 1);
	cr_assert_eq(tg_run(&t, j, 3, &v), 0);
	cr_assert_eq(v, 50);
	tg_init(&t);
	ia = sc_graph_index_by(t.g, t.a, acols, 3);
	ib = sc_graph_index_by(t.g, t.b, bcols, 2);
	j = sc_graph_join_within(t.g, ia, ib, 1, 1, 2, 1);
	cr_assert_eq(tg_run(&t, j, 1, &v), SC_ENOENT, "lo is not bounded");
}

Test(waterline, aggregate_passes_the_key_and_drops_the_value)
{
	struct sc_aggregate_spec sp = {3, 1, SC_AGG_SUM, 2, SC_TYPE_I64};
	struct tg t;
	int64_t v;

	tg_init(&t);
	cr_assert_eq(tg_run(&t, sc_graph_aggregate(t.g, t.a, &sp), 0, &v), 0);
	cr_assert_eq(v, 95);
	sp.k = 2;
	tg_init(&t);
	cr_assert_eq(tg_run(&t, sc_graph_aggregate(t.g, t.a, &sp), 2, &v),
		     SC_ENOENT);
}

Test(waterline, topk_passes_the_key)
{
	struct sc_topk_spec sp = {3, 1, 1, {2}, {true}, 1};
	struct tg t;
	int64_t v;

	tg_init(&t);
	cr_assert_eq(tg_run(&t, sc_graph_topk(t.g, t.a, &sp), 0, &v), 0);
	cr_assert_eq(v, 95);
}

Test(waterline, integrate_differentiate_delay_drop)
{
	struct tg t;
	int64_t v;

	tg_init(&t);
	cr_assert_eq(tg_run(&t, sc_graph_integrate(t.g, t.a), 0, &v),
		     SC_ENOENT);
	tg_init(&t);
	cr_assert_eq(tg_run(&t, sc_graph_differentiate(t.g, t.a), 0, &v),
		     SC_ENOENT);
	tg_init(&t);
	cr_assert_eq(tg_run(&t, sc_graph_delay(t.g, t.a), 0, &v), SC_ENOENT);
}

Test(waterline, output_and_feedback_pass)
{
	struct sc_schema s = schema_i64(3);
	struct tg t;
	int64_t v;
	int fb;

	tg_init(&t);
	cr_assert_eq(tg_run(&t, sc_graph_output(t.g, "o", t.a), 0, &v), 0);
	cr_assert_eq(v, 95);
	tg_init(&t);
	fb = sc_graph_feedback(t.g, &s);
	cr_assert_eq(sc_graph_bind(t.g, fb, t.a), 0);
	cr_assert_eq(tg_run(&t, fb, 0, &v), 0);
	cr_assert_eq(v, 95);
}

Test(waterline, cut_carries_columns_and_boundary_inputs_take_set_values)
{
	struct sc_aggregate_spec sp = {3, 2, SC_AGG_COUNT, 0, SC_TYPE_I64};
	uint32_t cols[] = {3, 1, 2};
	struct sc_schema s = schema_i64(3);
	struct sc_graph *g;
	struct sc_circuit *c;
	const struct sc_cut *cut;
	int64_t row[] = {90, 1, 2, 90}, v;
	int a, w, ix, agg, out, part[3];

	cr_assert_eq(sc_graph_create(&g), 0);
	a = sc_graph_input(g, "a", &s);
	cr_assert_eq(sc_graph_lateness(g, a, 0, 5, 0), 0);
	w = sc_window_tumbling(g, a, 0, 10);
	ix = sc_graph_index_by(g, w, cols, 3);
	agg = sc_graph_aggregate(g, ix, &sp);
	out = sc_graph_output(g, "out", agg);
	part[0] = ix;
	part[1] = agg;
	part[2] = out;
	cr_assert_eq(sc_circuit_create_part(g, part, 3, &c), 0, "%s",
		     sc_errmsg());
	cut = sc_circuit_cut(c);
	cr_assert_eq(cut->nin, 1);
	cr_assert_eq(cut->in[0], w);
	cr_assert_eq(cut->in_wl[0], 1u << 0 | 1u << 3, "t and start");
	cr_assert_eq(sc_circuit_set_waterline(c, w, 3, 80), 0);
	cr_assert_eq(sc_circuit_set_waterline(c, w, 1, 80), SC_ENOENT);
	feed(c, w, 4, row, 1);
	cr_assert_eq(sc_circuit_step(c), 0);
	cr_assert_eq(sc_circuit_waterline(c, agg, 0, &v), 0);
	cr_assert_eq(v, 80);
	cr_assert_eq(sc_circuit_waterline(c, agg, 1, &v), SC_ENOENT);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

/* --- cleanup ---------------------------------------------------------------
 * The circuit: a(t, k, v) and b(t, k, v), lateness L on t.
 *   windows    w = tumbling(a, t, WIDTH) -> (s, k, v): count, sum, min of v
 *              per (s, k); distinct (s, k); top 2 v per s
 *   equi-join  (s, k) of a's windows with (s, k, t) of b's: time in the key
 *   antijoin   (s, k) of a's windows against (s, k) of b's
 *   bounded    (k, t, t + SPAN) of a with (k, t) of b, a.t <= b.t <= a.t +
 *              SPAN (sc_graph_join_within)
 * Every kernel has an output (a stream output: it keeps nothing). */

#define WIDTH 10
#define SPAN  25

struct cl {
	struct sc_graph *g;
	int a, b;
	int nout;
	int out[8];    /* the output nodes */
	int kernel[8]; /* the kernel each reads */
};

static int
widen(void *ctx, const uint64_t *row, uint64_t *out)
{
	(void)ctx;
	out[0] = row[1];
	out[1] = row[0];
	out[2] = sc_enc_i64(sc_dec_i64(row[0]) + SPAN);
	out[3] = row[2];
	return 0;
}

static void
cl_out(struct cl *x, const char *name, int kernel)
{
	cr_assert_geq(kernel, 0, "%s: %s", name, sc_errmsg());
	x->kernel[x->nout] = kernel;
	x->out[x->nout++] = sc_graph_output_stream(x->g, name, kernel);
}

static void
cl_build(struct cl *x, int64_t lateness)
{
	struct sc_schema s3 = schema_i64(3), s4 = schema_i64(4);
	uint32_t skv[] = {3, 1, 2}, sk[] = {3, 1}, skt[] = {3, 1, 0},
		 kt[] = {1, 0};
	struct sc_aggregate_spec cnt = {3, 2, SC_AGG_COUNT, 2, SC_TYPE_I64};
	struct sc_aggregate_spec sum = {3, 2, SC_AGG_SUM, 2, SC_TYPE_I64};
	struct sc_aggregate_spec mn = {3, 2, SC_AGG_MIN, 2, SC_TYPE_I64};
	struct sc_topk_spec top = {3, 1, 1, {2}, {true}, 2};
	int wa, wb, ia, wide;

	memset(x, 0, sizeof(*x));
	cr_assert_eq(sc_graph_create(&x->g), 0);
	x->a = sc_graph_input(x->g, "a", &s3);
	x->b = sc_graph_input(x->g, "b", &s3);
	cr_assert_eq(sc_graph_lateness(x->g, x->a, 0, lateness, 0), 0);
	cr_assert_eq(sc_graph_lateness(x->g, x->b, 0, lateness, 0), 0);
	wa = sc_window_tumbling(x->g, x->a, 0, WIDTH);
	wb = sc_window_tumbling(x->g, x->b, 0, WIDTH);
	ia = sc_graph_index_by(x->g, wa, skv, 3);
	cl_out(x, "count", sc_graph_aggregate(x->g, ia, &cnt));
	cl_out(x, "sum", sc_graph_aggregate(x->g, ia, &sum));
	cl_out(x, "min", sc_graph_aggregate(x->g, ia, &mn));
	cl_out(x, "distinct",
	       sc_graph_distinct(x->g, sc_graph_index_by(x->g, wa, sk, 2)));
	cl_out(x, "topk", sc_graph_topk(x->g, ia, &top));
	cl_out(x, "join",
	       sc_graph_join(x->g, sc_graph_index_by(x->g, wa, sk, 2),
			     sc_graph_index_by(x->g, wb, skt, 3), 2));
	cl_out(x, "antijoin",
	       sc_graph_antijoin(x->g, sc_graph_index_by(x->g, wa, sk, 2),
				 sc_graph_index_by(x->g, wb, sk, 2), 2));
	wide = sc_graph_map(x->g, x->a, &s4, widen, NULL);
	cr_assert_eq(sc_graph_monotone_offset(x->g, wide, 1, 0, 0), 0);
	cr_assert_eq(sc_graph_monotone_offset(x->g, wide, 2, 0, SPAN), 0);
	cl_out(x, "within",
	       sc_graph_join_within(x->g, wide,
				    sc_graph_index_by(x->g, x->b, kt, 2), 1, 1,
				    2, 1));
}

/* A stream of rows whose times advance by about `pace` per step, each at
 * most `lateness` behind the largest so far, with retractions of rows
 * still above the waterline. */
struct gen {
	struct sc_rng r;
	int64_t lateness, pace, now, max;
	int64_t live[4096][3];
	size_t nlive;
};

static struct sc_batch *
gen_step(struct gen *gn, int rows)
{
	int64_t vals[64 * 3], w[64];
	int64_t wl = gn->max - gn->lateness;
	size_t n = 0;

	for (int i = 0; i < rows && n < 64; i++) {
		int64_t *v = vals + 3 * n;

		if (gn->nlive && sc_rng_below(&gn->r, 4) == 0) {
			size_t j = sc_rng_below(&gn->r, gn->nlive);

			if (gn->live[j][0] < wl)
				continue;
			memcpy(v, gn->live[j], sizeof(gn->live[j]));
			w[n++] = -1;
			gn->live[j][0] = gn->live[--gn->nlive][0];
			gn->live[j][1] = gn->live[gn->nlive][1];
			gn->live[j][2] = gn->live[gn->nlive][2];
			continue;
		}
		v[0] = sc_rng_range(&gn->r, gn->now - gn->lateness, gn->now);
		if (v[0] < wl)
			v[0] = wl;
		v[1] = sc_rng_range(&gn->r, 0, 3);
		v[2] = sc_rng_range(&gn->r, 0, 20);
		w[n++] = 1;
		if (gn->nlive < 4096)
			memcpy(gn->live[gn->nlive++], v, 3 * sizeof(int64_t));
	}
	for (size_t i = 0; i < n; i++)
		if (vals[3 * i] > gn->max)
			gn->max = vals[3 * i];
	return n ? rows_i64(3, vals, n, w) : NULL;
}

static void
gen_init(struct gen *gn, uint64_t seed, int64_t lateness, int64_t pace)
{
	memset(gn, 0, sizeof(*gn));
	sc_rng_seed(&gn->r, seed);
	gn->lateness = lateness;
	gn->pace = pace;
	gn->max = INT64_MIN / 2;
}

/* One clock for both streams, so that neither lags the other (a lag
 * keeps the other side's join partners alive: bounded, but by the lag). */
static void
gen_tick(struct gen *a, struct gen *b)
{
	a->now += sc_rng_range(&a->r, 0, 2 * a->pace);
	b->now = a->now;
}

static void
feed_both(struct sc_circuit *on, struct sc_circuit *off, int in,
	  struct sc_batch *b)
{
	if (!b)
		return;
	cr_assert_eq(sc_circuit_feed(on, in, b), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_feed(off, in, b), 0, "%s", sc_errmsg());
	sc_batch_release(b);
}

static bool
same_delta(struct sc_circuit *on, struct sc_circuit *off, int node)
{
	struct sc_batch *x = NULL, *y = NULL;
	bool eq;

	cr_assert_eq(sc_circuit_delta(on, node, &x), 0);
	cr_assert_eq(sc_circuit_delta(off, node, &y), 0);
	eq = sc_batch_equal(x, y);
	sc_batch_release(x);
	sc_batch_release(y);
	return eq;
}

/*
 * Offer `on` (only) a batch with some rows below a's waterline: it must be
 * refused whole, with exactly those rows counted. That nothing of it was
 * applied shows in the next step's deltas, compared with `off`'s.
 */
static void
offer_late(struct sc_circuit *on, int in, struct gen *g, uint64_t seed)
{
	int64_t vals[8 * 3], w = g->max - g->lateness;
	uint64_t before, after;
	struct sc_batch *b;
	size_t late = 0, n = 1 + sc_rng_below(&g->r, 8);

	for (size_t i = 0; i < n; i++) {
		bool below = i == 0 || sc_rng_below(&g->r, 2);

		vals[3 * i] = below ? w - 1 - sc_rng_range(&g->r, 0, 50)
				    : w + sc_rng_range(&g->r, 0, 50);
		vals[3 * i + 1] = (int64_t)i; /* distinct rows */
		vals[3 * i + 2] = 0;
		late += below;
	}
	b = rows_i64(3, vals, n, NULL);
	cr_assert_eq(sc_circuit_late(on, in, NULL, &before), 0);
	SC_PROP_ASSERT(seed, "cleanup",
		       "on_and_off_give_the_same_deltas_at_every_step",
		       sc_circuit_feed(on, in, b) == SC_ELATE,
		       "a batch with %zu late rows was not refused", late);
	cr_assert_eq(sc_circuit_late(on, in, NULL, &after), 0);
	SC_PROP_ASSERT(seed, "cleanup",
		       "on_and_off_give_the_same_deltas_at_every_step",
		       after - before == late, "%llu late rows counted, %zu",
		       (unsigned long long)(after - before), late);
	sc_batch_release(b);
}

Test(cleanup, on_and_off_give_the_same_deltas_at_every_step)
{
	uint64_t base = sc_prop_seed(1600), n = sc_prop_count(12);

	for (uint64_t k = 0; k < n; k++) {
		uint64_t seed = base + k;
		struct sc_circuit *on, *off;
		struct gen ga, gb;
		struct cl x;
		struct sc_rng r;
		int64_t lateness, pace;

		sc_rng_seed(&r, seed);
		lateness = sc_rng_range(&r, 0, 30);
		pace = sc_rng_range(&r, 1, 12);
		cl_build(&x, lateness);
		cr_assert_eq(sc_circuit_create(x.g, &on), 0, "%s", sc_errmsg());
		cr_assert_eq(sc_circuit_create(x.g, &off), 0);
		cr_assert_eq(sc_circuit_set_cleanup(off, false), 0);
		/* A small least budget, so sweeps finish mid-merge too. */
		cr_assert_eq(sc_circuit_set_work(on, sc_rng_range(&r, 0, 64)),
			     0);
		gen_init(&ga, seed * 31 + 1, lateness, pace);
		gen_init(&gb, seed * 31 + 2, lateness, pace);
		for (int step = 0; step < 150; step++) {
			gen_tick(&ga, &gb);
			feed_both(on, off, x.a,
				  gen_step(&ga, (int)sc_rng_range(&r, 0, 12)));
			feed_both(on, off, x.b,
				  gen_step(&gb, (int)sc_rng_range(&r, 0, 12)));
			if (ga.max > INT64_MIN / 2 && step % 7 == 3)
				offer_late(on, x.a, &ga, seed);
			cr_assert_eq(sc_circuit_step(on), 0, "%s", sc_errmsg());
			cr_assert_eq(sc_circuit_step(off), 0, "%s",
				     sc_errmsg());
			for (int o = 0; o < x.nout; o++)
				SC_PROP_ASSERT(seed, "cleanup",
					       "on_and_off_give_the_same_"
					       "deltas_at_every_step",
					       same_delta(on, off, x.out[o]),
					       "step %d: output %d differs "
					       "(lateness %lld, pace %lld)",
					       step, o, (long long)lateness,
					       (long long)pace);
		}
		sc_circuit_destroy(on);
		sc_circuit_destroy(off);
		cr_assert_eq(sc_graph_destroy(x.g), 0);
	}
}

static size_t
kernel_rows(const struct sc_circuit *c, int node)
{
	struct sc_node_state st;

	cr_assert_eq(sc_circuit_node_state(c, node, &st), 0);
	return st.rows;
}

/* With times that advance, each kernel's state stays bounded with cleanup
 * on (the live windows and join partners only), and grows without. */
Test(cleanup, state_stays_bounded_as_times_advance)
{
	const char *names[] = {"count", "sum",	"min",	    "distinct",
			       "topk",	"join", "antijoin", "within"};
	struct sc_circuit *on, *off;
	size_t mid_on[8], mid_off[8];
	struct sc_node_state all_on, all_off;
	struct gen ga, gb;
	struct cl x;

	cl_build(&x, 20);
	cr_assert_eq(sc_circuit_create(x.g, &on), 0);
	cr_assert_eq(sc_circuit_create(x.g, &off), 0);
	cr_assert_eq(sc_circuit_set_cleanup(off, false), 0);
	gen_init(&ga, 11, 20, 5);
	gen_init(&gb, 12, 20, 5);
	for (int step = 0; step < 1500; step++) {
		gen_tick(&ga, &gb);
		feed_both(on, off, x.a, gen_step(&ga, 8));
		feed_both(on, off, x.b, gen_step(&gb, 8));
		cr_assert_eq(sc_circuit_step(on), 0, "%s", sc_errmsg());
		cr_assert_eq(sc_circuit_step(off), 0, "%s", sc_errmsg());
		if (step != 499)
			continue;
		for (int o = 0; o < x.nout; o++) {
			mid_on[o] = kernel_rows(on, x.kernel[o]);
			mid_off[o] = kernel_rows(off, x.kernel[o]);
		}
	}
	for (int o = 0; o < x.nout; o++) {
		size_t end_on = kernel_rows(on, x.kernel[o]);
		size_t end_off = kernel_rows(off, x.kernel[o]);

		cr_assert_gt(mid_off[o], 0, "%s keeps state", names[o]);
		cr_assert_leq(end_on, mid_on[o] + mid_on[o] / 2 + 64,
			      "%s: %zu rows at step 1500, %zu at 500 (cleanup "
			      "on)",
			      names[o], end_on, mid_on[o]);
		cr_assert_geq(end_off, 2 * mid_off[o],
			      "%s: %zu rows at step 1500, %zu at 500 (cleanup "
			      "off)",
			      names[o], end_off, mid_off[o]);
		cr_assert_lt(end_on * 4, end_off, "%s: %zu on, %zu off",
			     names[o], end_on, end_off);
	}
	cr_assert_eq(sc_circuit_state(on, &all_on), 0);
	cr_assert_eq(sc_circuit_state(off, &all_off), 0);
	cr_assert_lt(all_on.bytes, all_off.bytes);
	sc_circuit_destroy(on);
	sc_circuit_destroy(off);
	cr_assert_eq(sc_graph_destroy(x.g), 0);
}

/* The circuit of a graph without lateness has no waterline anywhere. */
Test(waterline, none_without_lateness)
{
	struct sc_schema s = schema_i64(2);
	struct sc_graph *g;
	struct sc_circuit *c;
	uint32_t mask = 1;
	int a;

	cr_assert_eq(sc_graph_create(&g), 0);
	a = sc_graph_input(g, "a", &s);
	(void)sc_graph_output(g, "o", a);
	cr_assert_eq(sc_circuit_create(g, &c), 0);
	cr_assert_eq(sc_circuit_waterlines(c, a, &mask, NULL), 0);
	cr_assert_eq(mask, 0);
	cr_assert_eq(sc_circuit_set_waterline(c, a, 0, 1), SC_ENOENT);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

/* u64 times: a value above INT64_MAX reads as INT64_MAX, so every bound
 * stays sound (the clamp is monotone). */
Test(lateness, u64_times_are_read_clamped_to_int64)
{
	enum sc_type t[1] = {SC_TYPE_U64};
	uint64_t big = (uint64_t)INT64_MAX + 10, small = 1000, mid = 5000;
	struct sc_batch *b;
	struct sc_schema s;
	struct sc_graph *g;
	struct sc_circuit *c;
	int64_t w;
	int a;

	cr_assert_eq(sc_schema_init(&s, 1, t, NULL), 0);
	cr_assert_eq(sc_graph_create(&g), 0);
	a = sc_graph_input(g, "a", &s);
	(void)sc_graph_output(g, "o", a);
	cr_assert_eq(sc_graph_lateness(g, a, 0, 100, 0), 0);
	cr_assert_eq(sc_circuit_create(g, &c), 0);
	cr_assert_eq(sc_batch_from_records(1, &mid, NULL, 1, &b), 0);
	cr_assert_eq(sc_circuit_feed(c, a, b), 0);
	sc_batch_release(b);
	cr_assert_eq(sc_circuit_step(c), 0);
	cr_assert_eq(sc_circuit_waterline(c, a, 0, &w), 0);
	cr_assert_eq(w, 4900);
	cr_assert_eq(sc_batch_from_records(1, &small, NULL, 1, &b), 0);
	cr_assert_eq(sc_circuit_feed(c, a, b), SC_ELATE);
	sc_batch_release(b);
	cr_assert_eq(sc_batch_from_records(1, &big, NULL, 1, &b), 0);
	cr_assert_eq(sc_circuit_feed(c, a, b), 0);
	sc_batch_release(b);
	cr_assert_eq(sc_circuit_step(c), 0);
	cr_assert_eq(sc_circuit_waterline(c, a, 0, &w), 0);
	cr_assert_eq(w, INT64_MAX - 100);
	sc_circuit_destroy(c);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

/*
 * A q7/q5-like circuit over a long run with many distinct rows a step, as
 * Nexmark feeds it: MAX per time (a trace), COUNT per (time, id) (a row
 * table) and a join on time. Its traces then hold large runs that merge
 * while a sweep reads them (the sweep's work on a merged run used to be
 * lost, so dead rows piled up), and the row table is walked by slot (its
 * sweep used to go round more slowly than rows came in). State at step 3N
 * stays within that at step N, plus slack, and every delta equals cleanup
 * off.
 */
struct lr {
	struct sc_rng r;
	int64_t now, id;
};

static struct sc_batch *
lr_step(struct lr *l, size_t rows, int64_t lateness)
{
	uint64_t words[256 * 3] = {0};
	struct sc_batch *b = NULL;

	cr_assert(rows <= 256);
	for (size_t i = 0; i < rows; i++) {
		words[3 * i] = sc_enc_i64(
		    l->now - (int64_t)sc_rng_below(&l->r, (uint64_t)lateness));
		words[3 * i + 1] = sc_enc_i64(l->id++);
		words[3 * i + 2] = sc_enc_i64(sc_rng_range(&l->r, 0, 1000));
	}
	cr_assert_eq(sc_batch_from_records(3, words, NULL, rows, &b), 0, "%s",
		     sc_errmsg());
	return b;
}

Test(cleanup, state_stays_bounded_on_a_long_run_of_large_steps)
{
	enum { N = 400, L = 40 };
	const char *names[] = {"max", "count", "join"};
	struct sc_schema s3 = schema_i64(3);
	struct sc_aggregate_spec mx = {3, 1, SC_AGG_MAX, 2, SC_TYPE_I64};
	struct sc_aggregate_spec cnt = {3, 2, SC_AGG_COUNT, 2, SC_TYPE_I64};
	struct sc_circuit *on, *off;
	size_t mid_on[3];
	struct lr la, lb;
	struct cl x;

	memset(&x, 0, sizeof(x));
	memset(&la, 0, sizeof(la));
	memset(&lb, 0, sizeof(lb));
	sc_rng_seed(&la.r, 31);
	sc_rng_seed(&lb.r, 32);
	cr_assert_eq(sc_graph_create(&x.g), 0);
	x.a = sc_graph_input(x.g, "a", &s3);
	x.b = sc_graph_input(x.g, "b", &s3);
	cr_assert_eq(sc_graph_lateness(x.g, x.a, 0, L, 0), 0);
	cr_assert_eq(sc_graph_lateness(x.g, x.b, 0, L, 0), 0);
	cl_out(&x, "max", sc_graph_aggregate(x.g, x.a, &mx));
	cl_out(&x, "count", sc_graph_aggregate(x.g, x.a, &cnt));
	cl_out(&x, "join", sc_graph_join(x.g, x.a, x.b, 1));
	cr_assert_eq(x.nout, 3);
	cr_assert_eq(sc_circuit_create(x.g, &on), 0);
	cr_assert_eq(sc_circuit_create(x.g, &off), 0);
	cr_assert_eq(sc_circuit_set_cleanup(off, false), 0);
	for (int step = 0; step < 3 * N; step++) {
		la.now = lb.now = L + step;
		feed_both(on, off, x.a, lr_step(&la, 200, L));
		feed_both(on, off, x.b, lr_step(&lb, 2, L));
		cr_assert_eq(sc_circuit_step(on), 0, "%s", sc_errmsg());
		cr_assert_eq(sc_circuit_step(off), 0, "%s", sc_errmsg());
		for (int o = 0; o < 3; o++)
			cr_assert(same_delta(on, off, x.out[o]),
				  "%s: deltas differ at step %d", names[o],
				  step);
		if (step != N - 1)
			continue;
		for (int o = 0; o < 3; o++)
			mid_on[o] = kernel_rows(on, x.kernel[o]);
	}
	for (int o = 0; o < 3; o++) {
		size_t end_on = kernel_rows(on, x.kernel[o]);

		cr_assert_leq(end_on, mid_on[o] + mid_on[o] / 2 + 256,
			      "%s: %zu rows at step %d, %zu at %d (cleanup on)",
			      names[o], end_on, 3 * N, mid_on[o], N);
	}
	sc_circuit_destroy(on);
	sc_circuit_destroy(off);
	cr_assert_eq(sc_graph_destroy(x.g), 0);
}
