/*
 * cli_stress_ranks.c - `subcirc stress` under mpirun: a campaign of
 * seeded cases whose placements span the ranks, each checked against the
 * single circuit (tools/cli_ranks.h).
 *
 * A case is a seed, a workload (the grid of a size drawn from the seed,
 * or the seed's random circuit: bench/workloads/random.h), a worker count
 * per rank and a placement over every rank. Every rank builds the same
 * workload, placement and runtime (sc_mpi_runtime_create, with the edge
 * capacity and outbox bound drawn from the seed, so small windows press
 * on the credits, and one case in four has a link of one credit per
 * remote edge); rank 0 submits the seed's batches, feeding the same
 * ones to the single circuit (operators/circuit.h) and stepping it after
 * each; then every rank waits for idle, takes the integral of every
 * output (gathered to rank 0, which compares it with the single
 * circuit's), checks its own idle invariant (edges empty, nothing
 * undeliverable, no panic) and destroys the runtime. After that, with
 * the runtime gone, one sum over the ranks says what every rank found
 * and how many frames crossed: a frame sent that no rank received is
 * lost. So every case is checked whole, and every rank knows the
 * verdict, which keeps them in step (a failure ends the campaign on
 * every rank at once unless --keep-going).
 *
 * What does not apply across ranks is refused (units/runtime_remote.h):
 * the seeded scheduler (it runs turns on the host: workers = 0), tick
 * mode, restart policies, the injected faults (a panic there would end a
 * case with a dead unit, which the settle check judges for one process
 * only), --panic-rate, --shrink and Nexmark. A case that hangs (no idle
 * within 60 s) or whose collective call fails cannot leave the ranks in
 * step: it is reported with its replay and the job ends (MPI_Abort).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/workloads/grid.h"
#include "bench/workloads/random.h"
#include "operators/batch.h"
#include "operators/circuit.h"
#include "operators/error.h"
#include "tools/cli.h"
#include "tools/cli_ranks.h"
#include "tools/cli_stress_ranks.h"
#include "units/placement.h"
#include "units/runtime.h"

#define SR_IDLE_NS   60000000000ull /* a case that is not idle by then */
#define SR_SUBMIT_NS 20000000000ull /* a submission stuck this long */

/* One workload instance: its graph, its submissions, its outputs. */
struct sr_wl {
	struct sc_grid *gr;
	struct sc_randc *rc;
	int out[SC_RANDC_MAX_IO];
	size_t nout;
	uint32_t edits; /* grid: edits per batch */
};

/* The campaign's tally (rank 0's, from the per-case sums). */
struct sr_tally {
	uint64_t runs, skipped, failures, divergences, frames_lost, errors;
	uint64_t outputs_compared;
	bool have_first;
	char first_why[512], first_replay[512];
};

/* What one case found on this rank, summed over the ranks after it. */
enum {
	SR_FAILED,   /* this rank's checks failed */
	SR_DIVERGED, /* rank 0: an output differs */
	SR_SKIPPED,  /* the placement does not apply */
	SR_ERROR,    /* a call failed */
	SR_SENT,     /* frames sent over MPI */
	SR_RECV,     /* frames received */
	SR_UNDELIV,  /* frames for a dead rank */
	SR_COMPARED, /* rank 0: outputs compared */
	SR_N
};

static double
sr_now(void)
{
	struct timespec t;

	(void)clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int
sr_wl_make(bool random, uint64_t seed, struct sr_wl *w)
{
	int rc;

	memset(w, 0, sizeof(*w));
	if (random) {
		if ((rc = sc_randc_create(seed, &w->rc)) != 0)
			return rc;
		w->nout = sc_randc_outputs(w->rc, w->out, SC_RANDC_MAX_IO);
	} else {
		struct sc_grid_opts o = {.rows = 1 + (int64_t)(seed % 7),
					 .cols = 1 + (int64_t)((seed / 7) % 7),
					 .seed = seed};
		struct sc_grid_nodes n;

		if ((rc = sc_grid_create(&o, &w->gr)) != 0)
			return rc;
		sc_grid_nodes(w->gr, &n);
		w->out[0] = n.out_grid;
		w->out[1] = n.out_totals;
		w->nout = 2;
		w->edits = 1 + (uint32_t)((seed / 3) % 7);
	}
	return 0;
}

static struct sc_graph *
sr_wl_graph(const struct sr_wl *w)
{
	return w->rc ? sc_randc_graph(w->rc) : sc_grid_graph(w->gr);
}

static int
sr_wl_next(struct sr_wl *w, int *input, struct sc_batch **b)
{
	struct sc_grid_nodes n;

	if (w->rc)
		return sc_randc_next(w->rc, input, b);
	sc_grid_nodes(w->gr, &n);
	*input = n.cells;
	return sc_grid_next(w->gr, w->edits, b);
}

static void
sr_wl_free(struct sr_wl *w)
{
	(void)sc_randc_destroy(w->rc);
	(void)sc_grid_destroy(w->gr);
	memset(w, 0, sizeof(*w));
}

/* The command that replays one case. */
static void
sr_replay(const struct cli_stress_ranks_cfg *c, const char *exe, uint64_t seed,
	  bool random, uint32_t workers, const char *place, char *out, size_t n)
{
	char ev[48] = "";

	if (c->events)
		(void)snprintf(ev, sizeof(ev), " --events %" PRIu64, c->events);
	(void)snprintf(out, n,
		       "mpirun --oversubscribe --allow-run-as-root -np %d %s "
		       "stress --seeds %" PRIu64 " --workloads %s --workers "
		       "%u --placements %s%s%s",
		       cli_ranks_size(), exe, seed, random ? "random" : "grid",
		       workers, place, ev,
		       c->plant ? " --plant-difference" : "");
}

/* Rank 0: submit the case's batches, feeding the single circuit the same
 * ones (all but the last with --plant-difference). 0 or an error code,
 * with why said. */
static int
sr_submit(struct sc_runtime *rt, struct sr_wl *w, struct sr_wl *ref,
	  struct sc_circuit *c, size_t steps, bool plant, char *why,
	  size_t nwhy)
{
	for (size_t i = 0; i < steps; i++) {
		struct sc_batch *b = NULL, *rb = NULL;
		int in = 0, rin = 0, rc;

		if ((rc = sr_wl_next(w, &in, &b)) != 0 ||
		    (rc = sr_wl_next(ref, &rin, &rb)) != 0) {
			sc_batch_release(b);
			(void)snprintf(why, nwhy, "the workload: %s",
				       sc_errmsg());
			return rc;
		}
		rc = sc_runtime_submit_wait(rt, in, b, SR_SUBMIT_NS);
		sc_batch_release(b);
		if (rc) {
			sc_batch_release(rb);
			(void)snprintf(why, nwhy, "submit %zu: %s", i,
				       sc_errmsg());
			return rc;
		}
		if (plant && i + 1 == steps) {
			sc_batch_release(rb);
			break; /* the reference misses the last one */
		}
		rc = sc_circuit_feed(c, rin, rb);
		sc_batch_release(rb);
		if (rc || (rc = sc_circuit_step(c)) != 0) {
			(void)snprintf(why, nwhy, "the single circuit: %s",
				       sc_errmsg());
			return rc;
		}
	}
	return 0;
}

/* A collective step failed: the ranks are out of step, so the job ends
 * here, after the message. */
static void __attribute__((noreturn))
sr_abort(const char *what, int rc, const char *replay)
{
	(void)fprintf(stderr,
		      "subcirc stress: rank %d: %s: %s (%s)\nreplay: %s\nthe "
		      "ranks are out of step: the job ends\n",
		      cli_ranks_rank(), what, rc ? sc_errname(rc) : "-",
		      sc_errmsg(), replay);
	cli_ranks_abort(CLI_EXIT_LIBRARY);
}

/* Every rank: wait for idle, take every output's integral (rank 0
 * compares), check the idle invariant here. */
static void
sr_compare(struct sc_runtime *rt, struct sr_wl *w, struct sc_circuit *c,
	   uint64_t *v, char *why, size_t nwhy, const char *replay)
{
	struct sc_panic_record first;
	struct sc_runtime_stats st;
	const bool host = cli_ranks_rank() == 0;
	int rc;

	rc = sc_runtime_wait_idle(rt, host ? SR_IDLE_NS : 2 * SR_IDLE_NS,
				  &first);
	if (rc == SC_ETIMEDOUT)
		sr_abort("a hang: not idle in 60 s", rc, replay);
	if (rc) {
		(void)snprintf(why, nwhy, "rank %d: wait_idle: %s",
			       cli_ranks_rank(), sc_errmsg());
		sr_abort(why, rc, replay);
	}
	for (size_t o = 0; o < w->nout; o++) {
		struct sc_batch *got = NULL, *want = NULL;

		if ((rc = sc_runtime_integral(rt, w->out[o], &got)) != 0)
			sr_abort("the integral", rc, replay);
		if (host && !v[SR_DIVERGED]) {
			if (sc_circuit_integral(c, w->out[o], &want) != 0) {
				(void)snprintf(why, nwhy,
					       "the single circuit's "
					       "integral: %s",
					       sc_errmsg());
				v[SR_ERROR] = 1;
			} else if (!sc_batch_equal(got, want)) {
				(void)snprintf(why, nwhy,
					       "output %d: %zu rows across "
					       "ranks, %zu in the single "
					       "circuit",
					       w->out[o], sc_batch_count(got),
					       sc_batch_count(want));
				v[SR_DIVERGED] = 1;
			}
			v[SR_COMPARED]++;
			sc_batch_release(want);
		}
		sc_batch_release(got);
	}
	if (sc_runtime_check_idle(rt) != 0) {
		(void)fprintf(stderr,
			      "subcirc stress: rank %d: idle check: %s\n",
			      cli_ranks_rank(), sc_errmsg());
		v[SR_FAILED] = 1;
	}
	sc_runtime_stats(rt, &st);
	if (st.frames_undeliverable || st.panics) {
		(void)fprintf(stderr,
			      "subcirc stress: rank %d: %" PRIu64
			      " frames undeliverable, %u panics\n",
			      cli_ranks_rank(), st.frames_undeliverable,
			      st.panics);
		v[SR_FAILED] = 1;
	}
}

/* One case on every rank; v: what this rank found (summed after). */
static void
sr_case(const struct cli_stress_ranks_cfg *c, uint64_t seed, bool random,
	uint32_t workers, const char *place, struct cli_rank_figs *mine,
	uint64_t *v, char *why, size_t nwhy, const char *replay)
{
	struct sc_runtime_opts o = {.workers = workers};
	struct sc_runtime *rt = NULL;
	struct sc_circuit *circ = NULL;
	struct sc_placement *p = NULL;
	struct sr_wl w, ref = {0};
	void *mpi = NULL;
	size_t steps = c->events ? c->events : 5 + (size_t)(seed % 36);
	int rc;

	if (sr_wl_make(random, seed, &w) != 0) {
		(void)snprintf(why, nwhy, "the workload: %s", sc_errmsg());
		v[SR_ERROR] = 1;
		return;
	}
	rc = sc_placement_parse(sr_wl_graph(&w), place, seed, &p);
	if (rc == SC_EINVAL) { /* e.g. sharded:K on a graph with no key */
		v[SR_SKIPPED] = 1;
		sr_wl_free(&w);
		return;
	}
	/* Small windows now and then, so credits and outboxes fill. */
	o.edge_capacity = 1u << (seed % 7);
	o.outbox_bound = seed % 3 == 0 ? 1 : 0;
	/* One credit in four cases: the ranks wait on credits. */
	if (rc || (rc = cli_ranks_runtime_create(sr_wl_graph(&w), p, &o,
						 seed % 4 == 1 ? 1 : 0, &rt,
						 &mpi)) != 0)
		sr_abort("creating the case", rc, replay);
	if (cli_ranks_rank() == 0) {
		if (sr_wl_make(random, seed, &ref) != 0 ||
		    sc_circuit_create(sr_wl_graph(&ref), &circ) != 0) {
			(void)snprintf(why, nwhy, "the single circuit: %s",
				       sc_errmsg());
			v[SR_ERROR] = 1;
		} else if (sr_submit(rt, &w, &ref, circ, steps, c->plant, why,
				     nwhy) != 0) {
			v[SR_ERROR] = 1;
		}
	}
	sr_compare(rt, &w, circ, v, why, nwhy, replay);
	{
		struct cli_rank_figs f;
		struct sc_runtime_stats st;

		memset(&f, 0, sizeof(f));
		cli_ranks_link_figs(mpi, &f);
		sc_runtime_stats(rt, &st);
		v[SR_SENT] = f.frames_sent;
		v[SR_RECV] = f.frames_recv;
		v[SR_UNDELIV] = f.undeliverable;
		mine->frames_sent += f.frames_sent;
		mine->frames_recv += f.frames_recv;
		mine->bytes_sent += f.bytes_sent;
		mine->bytes_recv += f.bytes_recv;
		mine->credit_waits += f.credit_waits;
		mine->credit_msgs += f.credit_msgs;
		mine->undeliverable += f.undeliverable;
		mine->waves += f.waves;
		mine->turns += st.turns;
		mine->frames_delivered += st.frames_delivered;
		for (uint32_t u = 0; u < sc_placement_units(p); u++)
			for (uint32_t i = 0; i < sc_placement_shards(p, u); i++)
				mine->units_here +=
				    sc_placement_rank_of(p, u, i) ==
				    cli_ranks_rank();
	}
	cli_ranks_runtime_destroy(rt, mpi);
	sc_placement_destroy(p);
	sc_circuit_destroy(circ);
	sr_wl_free(&ref);
	sr_wl_free(&w);
}

/* Rank 0: count one case from the sums over the ranks. */
static bool
sr_count(struct sr_tally *t, const uint64_t *sum, const char *why,
	 const char *replay, bool verbose)
{
	bool bad;

	if (sum[SR_SKIPPED]) {
		t->skipped++;
		return false;
	}
	t->runs++;
	t->outputs_compared += sum[SR_COMPARED];
	t->divergences += sum[SR_DIVERGED] ? 1 : 0;
	t->frames_lost += sum[SR_SENT] > sum[SR_RECV] + sum[SR_UNDELIV]
			      ? sum[SR_SENT] - sum[SR_RECV] - sum[SR_UNDELIV]
			      : 0;
	bad = sum[SR_FAILED] || sum[SR_DIVERGED] ||
	      sum[SR_SENT] != sum[SR_RECV] + sum[SR_UNDELIV];
	if (sum[SR_ERROR])
		t->errors++;
	else if (bad)
		t->failures++;
	if ((bad || sum[SR_ERROR]) && !t->have_first) {
		t->have_first = true;
		(void)snprintf(t->first_why, sizeof(t->first_why), "%s",
			       why[0] ? why
			       : sum[SR_FAILED]
				   ? "a rank's idle check failed (its "
				     "messages say why)"
				   : "frames sent and received differ");
		(void)snprintf(t->first_replay, sizeof(t->first_replay), "%s",
			       replay);
	}
	if (verbose || bad || sum[SR_ERROR])
		(void)fprintf(cli_report_text(),
			      "%s %s (%" PRIu64 " frames across)\n",
			      sum[SR_ERROR] ? "ERROR"
			      : bad	    ? "FAIL"
					    : "ok",
			      replay, sum[SR_SENT]);
	return bad || sum[SR_ERROR];
}

static void
sr_print(const struct cli_stress_ranks_cfg *c, const struct sr_tally *t,
	 const struct cli_rank_figs *all)
{
	FILE *o = cli_report_text();

	(void)fprintf(o,
		      "subcirc stress: %" PRIu64 " runs, %" PRIu64
		      " passed (seeds %" PRIu64 "..%" PRIu64
		      ", %s, %zu worker counts, %zu placements, real pool "
		      "across %d ranks); %" PRIu64
		      " skipped (placement does not apply)\n",
		      t->runs, t->runs - t->failures - t->errors, c->seed_lo,
		      c->seed_hi,
		      c->grid && c->random ? "grid and random circuits"
		      : c->grid		   ? "grid"
					   : "random circuits",
		      c->nw, c->np, cli_ranks_size(), t->skipped);
	(void)fprintf(o,
		      "failures %" PRIu64 ", divergences %" PRIu64
		      ", frames lost %" PRIu64 ", hangs 0, errors %" PRIu64
		      "; outputs compared %" PRIu64 "\n",
		      t->failures, t->divergences, t->frames_lost, t->errors,
		      t->outputs_compared);
	cli_ranks_print(o, all, cli_ranks_size());
	if (t->have_first)
		(void)fprintf(o, "first failure: %s\nreplay: %s\n",
			      t->first_why, t->first_replay);
}

static void
sr_json(const struct cli_stress_ranks_cfg *c, const struct sr_tally *t,
	const struct cli_rank_figs *all, FILE *f)
{
	struct cli_json *j = &c->report->j;

	cli_report_open(c->report, f, 0);
	c->config(c->config_ctx, j);
	cli_report_results(c->report);
	cli_json_uint(j, "runs", t->runs);
	cli_json_uint(j, "skipped", t->skipped);
	cli_json_uint(j, "failures", t->failures);
	cli_json_uint(j, "divergences", t->divergences);
	cli_json_uint(j, "frames_lost", t->frames_lost);
	cli_json_uint(j, "hangs", 0);
	cli_json_uint(j, "errors", t->errors);
	cli_json_uint(j, "outputs_compared", t->outputs_compared);
	cli_json_int(j, "nranks", cli_ranks_size());
	cli_ranks_write_json(j, all, cli_ranks_size());
	cli_report_failure(j, t->have_first, t->first_why, t->first_replay);
	cli_report_close(c->report);
}

int
cli_stress_ranks(const struct cli_stress_ranks_cfg *c, const char *exe)
{
	/* The process's one campaign (not freed). */
	static struct cli_rank_figs all[SC_PLACEMENT_MAX_RANKS];
	struct cli_rank_figs mine;
	struct sr_tally t;
	const bool host = cli_ranks_rank() == 0;
	double t0 = sr_now(), last = t0;
	uint64_t done = 0, total;
	bool stop = false;
	int rc = 0, rc2;

	memset(&mine, 0, sizeof(mine));
	memset(&t, 0, sizeof(t));
	cli_progress_begin(stderr, c->quiet);
	total = (c->seed_hi - c->seed_lo + 1) *
		(uint64_t)((c->grid ? 1 : 0) + (c->random ? 1 : 0)) * c->nw *
		c->np;
	for (uint64_t seed = c->seed_lo; !stop; seed++) {
		for (int wl = 0; wl < 2 && !stop; wl++) {
			if (!(wl ? c->random : c->grid))
				continue;
			for (size_t j = 0; j < c->nw && !stop; j++)
				for (size_t i = 0; i < c->np && !stop; i++) {
					uint64_t v[SR_N] = {0}, sum[SR_N];
					char why[512] = "", replay[512];

					sr_replay(c, exe, seed, wl == 1,
						  c->workers[j], c->places[i],
						  replay, sizeof(replay));
					sr_case(c, seed, wl == 1, c->workers[j],
						c->places[i], &mine, v, why,
						sizeof(why), replay);
					memcpy(sum, v, sizeof(sum));
					if (cli_ranks_sum(sum, SR_N) != 0)
						sr_abort("the case's sums", 0,
							 replay);
					done++;
					if (host &&
					    sr_count(&t, sum, why, replay,
						     c->verbose))
						rc = CLI_EXIT_CHECK;
					/* Every rank has the sums: all stop
					 * together. */
					if ((sum[SR_FAILED] ||
					     sum[SR_DIVERGED] ||
					     sum[SR_ERROR] ||
					     sum[SR_SENT] !=
						 sum[SR_RECV] +
						     sum[SR_UNDELIV]) &&
					    !c->keep_going)
						stop = true;
					if (host && sr_now() - last >= 1.0) {
						last = sr_now();
						cli_progress_line(
						    last - t0,
						    (double)done /
							(double)total,
						    "cases %" PRIu64 "/%" PRIu64
						    ", failures %" PRIu64
						    ", errors %" PRIu64,
						    done, total,
						    t.failures + t.divergences,
						    t.errors);
					}
				}
		}
		if (seed == c->seed_hi)
			break;
	}
	if (t.errors)
		rc = CLI_EXIT_LIBRARY;
	cli_progress_end();
	if ((rc2 = cli_ranks_gather(&mine, all)) != 0)
		return cli_ranks_agree(rc2);
	if (host) {
		sr_print(c, &t, all);
		if (c->json_f) {
			sr_json(c, &t, all, c->json_f);
			rc2 = cli_close_out("stress", c->json, c->json_f);
			rc = rc == CLI_EXIT_LIBRARY || rc2 ? CLI_EXIT_LIBRARY
							   : rc;
		}
	} else if (c->json_f) {
		(void)cli_close_out("stress", c->json, c->json_f);
	}
	return cli_ranks_agree(host ? rc : 0);
}
