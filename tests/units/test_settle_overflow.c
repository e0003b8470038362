/*
 * test_settle_overflow.c - the settle property on inputs whose PARTIAL
 * integrals pass int64 while every settled value fits.
 *
 * An i64 SUM and a COUNT are fed submissions whose running sums (a huge
 * value, or a huge weight, inserted and later retracted) leave int64 on
 * the way: how a placement's turns group those submissions into steps
 * decides which partial integrals an aggregate ever sees. A third SUM's
 * input keeps every row's integral within int64 at every submission, but
 * holds a row whose weights pass int64 across the runs of a trace (see
 * weight_subs): the turns and merge work decide which runs meet. The settled
 * values all fit, so every placement and schedule must settle where the
 * single circuit does, with no unit panicking, and where one step of the
 * whole input does (the reference is recomputed from one consolidated
 * submission per input). Seeded scheduler only (no threads): every
 * strategy x 1..3 units held x schedule seeds, over several generated
 * inputs. SC_SEED replays one input seed.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "operators/aggregate.h"
#include "operators/schema.h"
#include "tests/support/prop.h"
#include "operators/circuit.h"
#include "units/placement.h"
#include "units/runtime.h"
#include "units/settle.h"

#define NGROUPS	  3
#define NPAIRS	  4 /* transient rows per group, each inserted and retracted */
#define NSUBS	  ((size_t)2 * NGROUPS * (1 + 2 * NPAIRS)) /* both inputs */
#define NSCHEDULE 12
#define NWSUBS	  ((size_t)4 * NGROUPS) /* the third input's, see weight_subs */

static const char *const strategies[] = {"single",   "per-node",  "chains",
					 "random:2", "sharded:2", "sharded:3"};
#define NSTRATEGIES (sizeof(strategies) / sizeof(strategies[0]))

/* One submission: a row (group, id, value) with weight w to input `sum`
 * (values matter) or `cnt` (weights matter). */
struct sub {
	bool to_sum;
	uint64_t row[3];
	int64_t w;
};

static int
keep_all(void *ctx, const uint64_t *row, bool *keep)
{
	(void)ctx;
	(void)row;
	*keep = true;
	return 0;
}

/*
 * The submissions of input seed `seed`: per group and input, a base row
 * near the limit that stays, and NPAIRS transient rows of a huge value
 * (or weight), each inserted and retracted by two separate submissions at
 * random places after the base. The first pair's insertion comes right
 * after its group's base and its retraction last, so that the single
 * circuit's own partial sums pass int64 too.
 */
static void
make_subs(uint64_t seed, struct sub *s, size_t *n)
{
	struct sc_rng r;
	size_t k = 0;

	sc_rng_seed(&r, seed);
	for (int in = 0; in < 2; in++) {
		for (int64_t g = 0; g < NGROUPS; g++) {
			int64_t sign = g % 2 ? -1 : 1;
			int64_t base =
			    sign * (INT64_MAX - sc_rng_range(&r, 0, 9));
			size_t first = k;

			/* sum: the value is huge; count: the weight is. */
			s[k++] = (struct sub){
			    in == 0,
			    {sc_enc_i64(g), 0, sc_enc_i64(in == 0 ? base : 0)},
			    in == 0 ? 1 : base};
			for (int64_t p = 1; p <= NPAIRS; p++) {
				int64_t big = sign * (INT64_MAX -
						      sc_rng_range(&r, 0, 99));
				uint64_t v = sc_enc_i64(in == 0 ? big : 0);
				int64_t w = in == 0 ? 1 : big;

				s[k++] = (struct sub){
				    in == 0,
				    {sc_enc_i64(g), (uint64_t)p, v},
				    w};
				s[k++] = (struct sub){
				    in == 0,
				    {sc_enc_i64(g), (uint64_t)p, v},
				    -w};
			}
			/* Shuffle [first + 3, k - 1): the base, the first
			 * insertion and the first retraction stay put at
			 * first, first + 1 and (after the swap) k - 1. */
			{
				struct sub t = s[first + 2];

				s[first + 2] = s[k - 1];
				s[k - 1] = t;
			}
			for (size_t i = k - 2; i > first + 2; i--) {
				size_t j =
				    first + 2 +
				    sc_rng_below(&r, i - (first + 2) + 1);
				struct sub t = s[i];

				s[i] = s[j];
				s[j] = t;
			}
		}
	}
	*n = k;
}

/*
 * The third input's submissions for group g: row r = (g, 100, 0) gets +MAX
 * in a batch of 4 rows, -1 alone, +1 in a batch of 3, -1 alone. Its
 * integral is MAX or MAX - 1 after each, but a trace's runs, largest first,
 * can read MAX, +1, -1, whose first two pass int64 (and are the next
 * merge): which runs an aggregate holds is up to its turns and its work.
 */
static void
weight_subs(int64_t g, int input, struct sc_settle_step *out)
{
	uint64_t k = sc_enc_i64(g), v0 = sc_enc_i64(0), v1 = sc_enc_i64(1);
	uint64_t d1[] = {k, 100, v0, k, 101, v1, k, 102, v1, k, 103, v1};
	uint64_t d2[] = {k, 100, v0};
	uint64_t d3[] = {k, 100, v0, k, 104, v1, k, 105, v1};
	int64_t w1[] = {INT64_MAX, 1, 1, 1}, w2[] = {-1}, w3[] = {1, 1, 1};
	const uint64_t *ds[] = {d1, d2, d3, d2};
	const int64_t *ws[] = {w1, w2, w3, w2};
	size_t ns[] = {4, 1, 3, 1};

	for (int i = 0; i < 4; i++) {
		out[i].input = input;
		cr_assert_eq(sc_batch_from_records(3, ds[i], ws[i], ns[i],
						   &out[i].batch),
			     0);
	}
}

/* Whether a running sum over the submissions, in order, leaves int64. */
static bool
partials_pass_int64(const struct sub *s, size_t n)
{
	for (int in = 0; in < 2; in++)
		for (int64_t g = 0; g < NGROUPS; g++) {
			__int128 acc = 0;

			for (size_t i = 0; i < n; i++) {
				if (s[i].to_sum != (in == 0) ||
				    sc_dec_i64(s[i].row[0]) != g)
					continue;
				acc += in == 0 ? (__int128)s[i].w *
						     sc_dec_i64(s[i].row[2])
					       : s[i].w;
				if (acc > INT64_MAX || acc < INT64_MIN)
					return true;
			}
		}
	return false;
}

Test(settle_overflow, partial_sums_past_int64_settle_under_every_placement)
{
	enum sc_type types[3] = {SC_TYPE_I64, SC_TYPE_U64, SC_TYPE_I64};
	struct sc_aggregate_spec sum = {3, 1, SC_AGG_SUM, 2, SC_TYPE_I64};
	struct sc_aggregate_spec cnt = {3, 1, SC_AGG_COUNT, 0, SC_TYPE_I64};
	uint64_t base = sc_prop_seed(2101), cases = sc_prop_count(4);
	struct sc_schema sch;
	struct sc_graph *g;
	int in_sum, in_cnt, in_wt, runs = 0;
	char rbuf[256];

	sc_schema_init(&sch, 3, types, NULL);
	cr_assert_eq(sc_graph_create(&g), 0);
	in_sum = sc_graph_input(g, "sum_in", &sch);
	in_cnt = sc_graph_input(g, "cnt_in", &sch);
	sc_graph_output(
	    g, "sums",
	    sc_graph_aggregate(g, sc_graph_filter(g, in_sum, keep_all, NULL),
			       &sum));
	sc_graph_output(g, "counts", sc_graph_aggregate(g, in_cnt, &cnt));
	in_wt = sc_graph_input(g, "wt_in", &sch);
	sc_graph_output(g, "weights", sc_graph_aggregate(g, in_wt, &sum));
	for (uint64_t c = 0; c < cases; c++) {
		uint64_t seed = base + c;
		struct sub s[NSUBS];
		struct sc_settle_step steps[NSUBS + NWSUBS], whole[3];
		struct sc_settle_work *work = NULL;
		size_t n;
		int rc;

		make_subs(seed, s, &n);
		SC_PROP_ASSERT(seed, "settle_overflow",
			       "partial_sums_past_int64_settle_under_every_"
			       "placement",
			       partials_pass_int64(s, n),
			       "the input must pass int64 on the way");
		for (size_t i = 0; i < n; i++) {
			steps[i].input = s[i].to_sum ? in_sum : in_cnt;
			cr_assert_eq(sc_batch_from_records(3, s[i].row, &s[i].w,
							   1, &steps[i].batch),
				     0);
		}
		for (int64_t gi = 0; gi < NGROUPS; gi++)
			weight_subs(gi, in_wt, &steps[n + 4 * (size_t)gi]);
		n += NWSUBS;
		/* The single circuit, one step per submission. */
		rc = sc_settle_work_create(g, steps, n, 0, &work);
		cr_assert_eq(rc, 0, "%s: %s",
			     sc_prop_replay(rbuf, sizeof(rbuf), seed,
					    "settle_overflow",
					    "partial_sums_past_int64_settle_"
					    "under_every_placement"),
			     sc_errmsg());
		/* The reference: one consolidated submission per input. */
		for (int in = 0; in < 3; in++) {
			struct sc_batch *acc;

			whole[in].input = in == 0   ? in_sum
					  : in == 1 ? in_cnt
						    : in_wt;
			cr_assert_eq(sc_batch_empty(3, &acc), 0);
			for (size_t i = 0; i < n; i++) {
				struct sc_batch *t;

				if (steps[i].input != whole[in].input)
					continue;
				cr_assert_eq(
				    sc_batch_add(acc, steps[i].batch, &t), 0);
				sc_batch_release(acc);
				acc = t;
			}
			whole[in].batch = acc;
		}
		cr_assert_eq(sc_settle_work_reference(work, whole, 3), 0, "%s",
			     sc_errmsg());
		for (size_t si = 0; si < NSTRATEGIES; si++) {
			struct sc_placement *p = NULL;

			cr_assert_eq(
			    sc_placement_parse(g, strategies[si], seed, &p), 0,
			    "%s", sc_errmsg());
			for (uint64_t sched = 0; sched < NSCHEDULE; sched++) {
				struct sc_settle_opts o = {
				    .mode = SC_SETTLE_SIM,
				    .seed = seed * 1000 + sched,
				    .units = 1 + (uint32_t)(sched % 3),
				    .edge_capacity = sched % 2 ? 1 : 4};
				struct sc_settle_result res;

				cr_assert_eq(sc_settle_run(work, p, &o, &res),
					     0, "%s", sc_errmsg());
				cr_assert(res.ok, "%s: %s\nreplay: %s",
					  strategies[si], res.why, res.replay);
				cr_assert_eq(res.outputs_compared, 3);
				sc_settle_result_fini(&res);
				runs++;
			}
			sc_placement_destroy(p);
		}
		sc_settle_work_destroy(work);
		for (size_t i = 0; i < n; i++)
			sc_batch_release(steps[i].batch);
		for (int in = 0; in < 3; in++)
			sc_batch_release(whole[in].batch);
	}
	cr_assert_eq((uint64_t)runs, cases * NSTRATEGIES * NSCHEDULE);
	cr_assert_eq(sc_graph_destroy(g), 0);
}

/*
 * A settled sum outside int64 is an error on the READ (aggregate.h: the
 * group has no row, so an output downstream would silently lack it). The
 * graph: in(g, v) -> sum by g -> map (identity) -> out; the read fails
 * with SC_EOVERFLOW naming the aggregate, whether the aggregate shares the
 * output's circuit or sits in another unit, and reads whole again once the
 * sum is back in range.
 */
static int
same_row(void *ctx, const uint64_t *in, uint64_t *out)
{
	(void)ctx;
	out[0] = in[0];
	out[1] = in[1];
	return 0;
}

static struct sc_graph *
sum_then_map(int *in, int *agg, int *out)
{
	struct sc_schema two = {2, {SC_TYPE_I64, SC_TYPE_I64}, NULL};
	struct sc_aggregate_spec sum = {2, 1, SC_AGG_SUM, 1, SC_TYPE_I64};
	struct sc_graph *g;
	int m;

	cr_assert_eq(sc_graph_create(&g), 0);
	*in = sc_graph_input(g, "in", &two);
	*agg = sc_graph_aggregate(g, *in, &sum);
	cr_assert_geq(*agg, 0, "%s", sc_errmsg());
	m = sc_graph_map(g, *agg, &two, same_row, NULL);
	cr_assert_geq(m, 0, "%s", sc_errmsg());
	*out = sc_graph_output(g, "out", m);
	cr_assert_geq(*out, 0, "%s", sc_errmsg());
	return g;
}

static struct sc_batch *
one_row(int64_t g, int64_t v, int64_t w)
{
	uint64_t rec[] = {sc_enc_i64(g), sc_enc_i64(v)};
	struct sc_batch *b;

	cr_assert_eq(sc_batch_from_records(2, rec, &w, 1, &b), 0);
	return b;
}

Test(settle_overflow,
     circuit_read_downstream_of_a_sum_outside_int64_is_eoverflow)
{
	int in, agg, out;
	struct sc_graph *g = sum_then_map(&in, &agg, &out);
	struct sc_batch *b, *got = NULL;
	struct sc_circuit *c;

	cr_assert_eq(sc_circuit_create(g, &c), 0, "%s", sc_errmsg());
	b = one_row(7, INT64_MAX, 1);
	cr_assert_eq(sc_circuit_feed(c, in, b), 0, "%s", sc_errmsg());
	sc_batch_release(b);
	b = one_row(7, 1, 1);
	cr_assert_eq(sc_circuit_feed(c, in, b), 0, "%s", sc_errmsg());
	sc_batch_release(b);
	cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_integral(c, out, &got), SC_EOVERFLOW,
		     "the group's row is missing: the read must say so");
	cr_assert_null(got);
	cr_assert(strstr(sc_errmsg(), "sum#") || strstr(sc_errmsg(), "aggr"),
		  "names the aggregate: %s", sc_errmsg());
	/* Retract the 1: the sum is INT64_MAX again and the read is whole. */
	b = one_row(7, 1, -1);
	cr_assert_eq(sc_circuit_feed(c, in, b), 0, "%s", sc_errmsg());
	sc_batch_release(b);
	cr_assert_eq(sc_circuit_step(c), 0, "%s", sc_errmsg());
	cr_assert_eq(sc_circuit_integral(c, out, &got), 0, "%s", sc_errmsg());
	cr_assert_eq(got->count, 1);
	sc_batch_release(got);
	sc_circuit_destroy(c);
	sc_graph_destroy(g);
}

Test(settle_overflow,
     runtime_read_of_an_output_placed_apart_from_the_sum_is_eoverflow)
{
	int in, agg, out;
	struct sc_graph *g = sum_then_map(&in, &agg, &out);
	struct sc_placement *p;
	struct sc_runtime *rt;
	struct sc_batch *b, *got = NULL;

	/* per-node: the aggregate, the map and the output each in a unit. */
	cr_assert_eq(sc_placement_per_node(g, &p), 0, "%s", sc_errmsg());
	cr_assert_neq(sc_placement_unit_of(p, agg),
		      sc_placement_unit_of(p, out));
	cr_assert_eq(sc_runtime_create(g, p, NULL, &rt), 0, "%s", sc_errmsg());
	b = one_row(7, INT64_MAX, 1);
	cr_assert_eq(sc_runtime_submit(rt, in, b), 0, "%s", sc_errmsg());
	sc_batch_release(b);
	b = one_row(7, 1, 1);
	cr_assert_eq(sc_runtime_submit(rt, in, b), 0, "%s", sc_errmsg());
	sc_batch_release(b);
	cr_assert_eq(sc_runtime_wait_idle(rt, 10ull * 1000000000ull, NULL), 0,
		     "%s", sc_errmsg());
	cr_assert_eq(sc_runtime_integral(rt, out, &got), SC_EOVERFLOW,
		     "the group's row is missing: the read must say so");
	cr_assert_null(got);
	b = one_row(7, 1, -1);
	cr_assert_eq(sc_runtime_submit(rt, in, b), 0, "%s", sc_errmsg());
	sc_batch_release(b);
	cr_assert_eq(sc_runtime_wait_idle(rt, 10ull * 1000000000ull, NULL), 0,
		     "%s", sc_errmsg());
	cr_assert_eq(sc_runtime_integral(rt, out, &got), 0, "%s", sc_errmsg());
	cr_assert_eq(got->count, 1);
	sc_batch_release(got);
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
	sc_graph_destroy(g);
}
