/*
 * settle.c - the settle check (units/settle.h): a placed run ends exactly
 * where the single circuit ends, under each placement and schedule tried.
 *
 * A work holds a graph, the host's submissions and the reference: every
 * output's integral in the single circuit after them. sc_settle_run runs
 * the submissions on a runtime of one placement under one schedule (the
 * seeded scheduler, where a seed picks the order of every turn and submit
 * so that a failure replays exactly, or a pool of real worker threads)
 * and compares each output's integral with the reference once idle. The
 * program checks circuit.c's graph under five placements, then plants a
 * difference (a reference that misses the last submission) to show what
 * a failure reports.
 *
 * Build against an installed subcirc, and run:
 *   cc settle.c $(pkg-config --cflags --libs subcirc) -o settle
 *   ./settle
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <subcirc/subcirc.h>

#define NSUBMITS 30
#define NSEEDS	 10

static int
keep_ten_or_more(void *ctx, const uint64_t *row, bool *keep)
{
	(void)ctx;
	*keep = sc_dec_i64(row[1]) >= 10;
	return 0;
}

/* circuit.c's graph: totals = auctions join SUM(price >= 10) per auction;
 * in[0] is "bids", in[1] "auctions". */
static int
build(struct sc_graph *g, int in[2])
{
	enum sc_type types[2] = {SC_TYPE_I64, SC_TYPE_I64};
	struct sc_aggregate_spec sum = {.ncols = 2,
					.k = 1,
					.kind = SC_AGG_SUM,
					.col = 1,
					.col_type = SC_TYPE_I64};
	struct sc_schema s;
	int rc = sc_schema_init(&s, 2, types, NULL);

	if (rc != 0)
		return rc;
	in[0] = sc_graph_input(g, "bids", &s);
	in[1] = sc_graph_input(g, "auctions", &s);
	rc = sc_graph_aggregate(
	    g, sc_graph_filter(g, in[0], keep_ten_or_more, NULL), &sum);
	rc = sc_graph_output(g, "totals", sc_graph_join(g, in[1], rc, 1));
	return rc < 0 ? rc : 0;
}

/* Submission i: the auctions 0..2, then one bid each, every third one
 * retracting (weight -1) the bid made two before. */
static int
next(void *ctx, size_t i, struct sc_settle_step *out)
{
	const int *in = ctx;
	uint64_t rows[6];
	int64_t w = i % 3 == 0 ? -1 : 1;
	size_t j = i % 3 == 0 ? i - 2 : i;

	if (i == 0) {
		for (int64_t a = 0; a < 3; a++) {
			rows[2 * a] = sc_enc_i64(a);
			rows[2 * a + 1] = sc_enc_i64(100 * (a + 1));
		}
		out->input = in[1];
		return sc_batch_from_records(2, rows, NULL, 3, &out->batch);
	}
	rows[0] = sc_enc_i64((int64_t)(j % 3));
	rows[1] = sc_enc_i64((int64_t)(7 * j % 41));
	out->input = in[0];
	return sc_batch_from_records(2, rows, &w, 1, &out->batch);
}

/* Runs seeds 0..NSEEDS-1 under the scheduler holding up to 3 units at
 * once, then a pool of 4 workers fed by 2 host threads; tiny edges (2
 * frames) make backpressure happen. Returns 0, 1 if a run did not settle,
 * or a negative SC_E* code when a run could not be made. */
static int
check(const struct sc_settle_work *w, const struct sc_placement *p,
      const char *spec)
{
	struct sc_settle_result res;
	int rc = 0;

	for (uint64_t s = 0; rc == 0 && s <= NSEEDS; s++) {
		struct sc_settle_opts o = {.mode = s < NSEEDS ? SC_SETTLE_SIM
							      : SC_SETTLE_POOL,
					   .seed = s,
					   .units = s < NSEEDS ? 3 : 4,
					   .hosts = 2,
					   .edge_capacity = 2};

		rc = sc_settle_run(w, p, &o, &res);
		if (rc == 0 && !res.ok) { /* why and how to replay: */
			(void)printf("%s: seed %" PRIu64 ": NOT settled, %zu "
				     "rows of '%s' differ\n",
				     spec, s, res.ndiff_total, res.output_name);
			(void)fprintf(stderr, "%s\nreplay: %s\n", res.why,
				      res.replay);
			rc = 1;
		}
		sc_settle_result_fini(&res);
	}
	if (rc == 0)
		(void)printf("%s: settled in %d schedules and on 4 workers\n",
			     spec, NSEEDS);
	return rc;
}

/* Checks every placement; then replaces the reference by one without the
 * last submission, which the check must catch (check returns 1). */
static int
run(struct sc_graph *g, struct sc_settle_work **w)
{
	static const char *const specs[] = {"single", "per-node", "chains",
					    "random:3", "sharded:2"};
	struct sc_settle_step steps[NSUBMITS];
	struct sc_placement *p = NULL;
	int in[2] = {-1, -1};
	int rc = build(g, in);

	if (rc == 0)
		rc = sc_settle_work_generate(g, next, in, NSUBMITS, 0, w);
	for (size_t i = 0; rc == 0 && i < sizeof(specs) / sizeof(*specs); i++) {
		rc = sc_placement_parse(g, specs[i], 1, &p);
		if (rc == 0)
			rc = check(*w, p, specs[i]);
		sc_placement_destroy(p);
		p = NULL;
	}
	for (size_t i = 0; rc == 0 && i < NSUBMITS; i++)
		rc = sc_settle_work_step(*w, i, &steps[i]);
	if (rc == 0)
		rc = sc_settle_work_reference(*w, steps, NSUBMITS - 1);
	if (rc == 0)
		rc = sc_placement_parse(g, "chains", 1, &p);
	if (rc == 0) { /* caught: check says 1, the example 0 */
		(void)printf("with a reference that misses the last step:\n");
		rc = check(*w, p, "chains");
		rc = rc < 0 ? rc : !rc;
	}
	sc_placement_destroy(p);
	return rc;
}

int
main(void)
{
	struct sc_graph *g = NULL;
	struct sc_settle_work *w = NULL;
	int rc = sc_graph_create(&g);

	if (rc == 0)
		rc = run(g, &w);
	if (rc < 0)
		(void)fprintf(stderr, "settle: %s: %s\n", sc_strerror(rc),
			      sc_errmsg());
	sc_settle_work_destroy(w); /* before the graph it borrows */
	if (sc_graph_destroy(g) != 0 && rc == 0)
		rc = SC_EBUSY;
	return rc == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
