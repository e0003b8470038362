/*
 * subcirc_stress.c - `subcirc stress`: seeds x workers x placements, on the
 * grid workload and on random circuits (bench/workloads/), each case one
 * call of the settle check (units/settle.h): under the seeded scheduler
 * (or a real pool), the placed circuit must settle exactly where the
 * single circuit does, with every edge empty; on the grid, its outputs
 * must also equal the from-scratch reference (sc_grid_verify). With
 * injected faults (--panic-rate) a panic must stay in its unit and be
 * reported. The first failing case is printed with the command that
 * replays it.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/workloads/grid.h"
#include "bench/workloads/random.h"
#include "operators/error.h"
#include "tools/subcirc.h"
#include "units/placement.h"
#include "units/settle.h"

static const char *const stress_default[] = {
    "single",	"per-node",  "chains",	 "random:2",
    "random:5", "sharded:2", "sharded:3"};

struct stress_cfg {
	uint64_t seed_lo, seed_hi;
	uint32_t workers[MAX_LIST];
	size_t nw;
	char places[MAX_LIST][32];
	size_t np;
	double panic_rate;
	bool pool;
	bool verbose;
	bool grid, random; /* the workloads */
};

/* One case: the workload its seed draws, and what the check found. */
struct stress_case {
	uint64_t seed;
	uint32_t workers;
	const char *placement;
	bool random;	   /* a random circuit, else the grid */
	double panic_rate; /* grid only */
	bool pool;
	struct sc_grid *gr;   /* the grid, or NULL */
	struct sc_randc *rnd; /* the random circuit, or NULL */
	struct sc_graph *g;   /* the one of them in use */
	size_t ninputs, noutputs;
	bool skipped; /* the placement does not apply to this graph */
	char replay[512];
	struct sc_settle_result res;
};

/* The grid of the case's seed (sizes drawn from it) and its batches. */
static int
stress_grid(struct stress_case *k, size_t nbatches, struct sc_settle_work **w)
{
	uint64_t s = k->seed;
	struct sc_grid_opts go = {.rows = 1 + (int64_t)(s % 7),
				  .cols = 1 + (int64_t)((s / 7) % 7),
				  .seed = s,
				  .fault_rate = k->panic_rate,
				  .fault_seed = s ^ 0xfa17ULL};
	struct sc_grid_feed f = {.edits = 1 + (size_t)((s / 3) % 7)};
	int rc;

	if ((rc = sc_grid_create(&go, &k->gr)) != 0)
		return rc;
	k->g = sc_grid_graph(k->gr);
	f.gr = k->gr;
	return sc_settle_work_generate(k->g, sc_grid_settle_step, &f, nbatches,
				       k->panic_rate > 0 ? SC_SETTLE_FAULTS : 0,
				       w);
}

/* The random circuit of the case's seed, and its deltas. */
static int
stress_random(struct stress_case *k, size_t nbatches, struct sc_settle_work **w)
{
	int ids[SC_RANDC_MAX_IO];
	int rc;

	if ((rc = sc_randc_create(k->seed, &k->rnd)) != 0)
		return rc;
	k->g = sc_randc_graph(k->rnd);
	k->ninputs = sc_randc_inputs(k->rnd, ids, SC_RANDC_MAX_IO);
	k->noutputs = sc_randc_outputs(k->rnd, ids, SC_RANDC_MAX_IO);
	return sc_settle_work_generate(k->g, sc_randc_settle_step, k->rnd,
				       nbatches, 0, w);
}

/* The grid's outputs must also equal its from-scratch reference. */
static int
stress_verify(void *ctx, int output, const struct sc_batch *got)
{
	return sc_grid_verify(ctx, output, got);
}

/* The shortest decimal that reads back as x (for a replay line). */
static const char *
shortest(double x, char buf[32])
{
	for (int prec = 1; prec <= 17; prec++) {
		(void)snprintf(buf, 32, "%.*g", prec, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	return buf;
}

/* The command line that replays case k. */
static void
stress_replay(const char *exe, struct stress_case *k)
{
	char rate[64] = "", buf[32];

	if (k->panic_rate > 0)
		(void)snprintf(rate, sizeof(rate), " --panic-rate %s",
			       shortest(k->panic_rate, buf));
	(void)snprintf(k->replay, sizeof(k->replay),
		       "%s stress --seeds %" PRIu64 " --workers %u "
		       "--placements %s --workloads %s%s%s",
		       exe, k->seed, k->workers, k->placement,
		       k->random ? "random" : "grid", rate,
		       k->pool ? " --pool" : "");
}

/* The schedule of case k: sizes from its seed, as the settle tests. */
static void
stress_opts(const struct stress_case *k, struct sc_settle_opts *o)
{
	static const uint32_t caps[] = {1, 2, 4, 64};
	static const size_t bounds[] = {1, 4, 64, 4096};
	uint64_t s = k->seed;

	*o = (struct sc_settle_opts){
	    .mode = k->pool ? SC_SETTLE_POOL : SC_SETTLE_SIM,
	    .seed = s,
	    .units = k->workers,
	    .budget = k->pool ? 1 + (uint32_t)(s % 4) : 0,
	    .edge_capacity = caps[s % 4],
	    .outbox_bound = bounds[(s / 4) % 4],
	    .timeout_ns = 20000000000ull,
	    .verify = k->random ? NULL : stress_verify,
	    .verify_ctx = k->gr,
	    .replay = k->replay};
}

/* Run one case: 0 when it passed (or was skipped); EXIT_CHECK when it ran
 * to a verdict that is not settled (k->res.why); EXIT_LIBRARY when it
 * could not be run (SC_ENOMEM building the workload, the placement or
 * the runtime: k->res.why too), which is no verdict on the schedule. */
static int
stress_run(struct stress_case *k, const char *exe)
{
	size_t nbatches = 4 + (size_t)(k->seed % 29);
	struct sc_settle_work *w = NULL;
	struct sc_placement *p = NULL;
	struct sc_settle_opts o;
	int rc;

	stress_replay(exe, k);
	rc = k->random ? stress_random(k, nbatches, &w)
		       : stress_grid(k, nbatches, &w);
	if (!rc) {
		rc = sc_placement_parse(k->g, k->placement, k->seed, &p);
		/* A strategy may not apply to a random graph (a sharded
		 * unit needs its keyed node to read its inputs alone). */
		k->skipped = rc == SC_EINVAL && k->random;
	}
	if (!rc) {
		stress_opts(k, &o);
		rc = sc_settle_run(w, p, &o, &k->res);
	}
	if (rc && !k->skipped && !k->res.why[0])
		(void)snprintf(k->res.why, sizeof(k->res.why), "setup: %s (%s)",
			       sc_errname(rc),
			       sc_errmsg()[0] ? sc_errmsg() : sc_strerror(rc));
	sc_placement_destroy(p);
	sc_settle_work_destroy(w);
	if (k->skipped)
		return 0;
	if (rc)
		return EXIT_LIBRARY;
	return k->res.ok ? 0 : EXIT_CHECK;
}

static void
stress_release(struct stress_case *k)
{
	sc_settle_result_fini(&k->res);
	(void)sc_grid_destroy(k->gr);
	(void)sc_randc_destroy(k->rnd);
}

static void
stress_parse_seeds(const char *v, struct stress_cfg *s)
{
	const char *dots = strstr(v, "..");
	char lo[32];

	if (!dots) {
		s->seed_lo = s->seed_hi =
		    parse_u64("stress", "--seeds", v, 0, UINT64_MAX);
		return;
	}
	if ((size_t)(dots - v) >= sizeof(lo))
		die_usage("stress", "--seeds: '%s' is not A..B", v);
	memcpy(lo, v, (size_t)(dots - v));
	lo[dots - v] = 0;
	s->seed_lo = parse_u64("stress", "--seeds (from)", lo, 0, UINT64_MAX);
	s->seed_hi =
	    parse_u64("stress", "--seeds (to)", dots + 2, 0, UINT64_MAX);
	if (s->seed_hi < s->seed_lo)
		die_usage("stress",
			  "--seeds: %" PRIu64 "..%" PRIu64 " is an empty range",
			  s->seed_lo, s->seed_hi);
}

static void
stress_parse_workloads(const char *v, struct stress_cfg *s)
{
	s->grid = !strcmp(v, "grid") || !strcmp(v, "grid,random") ||
		  !strcmp(v, "random,grid");
	s->random = !strcmp(v, "random") || !strcmp(v, "grid,random") ||
		    !strcmp(v, "random,grid");
	if (!s->grid && !s->random)
		die_usage(
		    "stress",
		    "--workloads: '%s' is not grid, random or grid,random", v);
}

static void
stress_parse(int argc, char **argv, struct stress_cfg *s)
{
	struct args a = {.cmd = "stress", .argc = argc, .argv = argv, .i = 0};
	const char *v;

	memset(s, 0, sizeof(*s));
	s->seed_lo = 1;
	s->seed_hi = 20;
	s->grid = s->random = true;
	for (s->nw = 0; s->nw < 4; s->nw++)
		s->workers[s->nw] = (uint32_t)s->nw + 1;
	while (a.i < argc) {
		if (args_opt(&a, "--help", NULL) || args_opt(&a, "-h", NULL)) {
			(void)fputs(usage_stress, stdout);
			/* The CLI exits before it starts any thread. */
			exit(0); // NOLINT(concurrency-mt-unsafe)
		} else if (args_opt(&a, "--seeds", &v)) {
			stress_parse_seeds(v, s);
		} else if (args_opt(&a, "--workers", &v)) {
			s->nw = parse_u32_list("stress", "--workers", v, 1, 64,
					       s->workers);
		} else if (args_opt(&a, "--placements", &v)) {
			s->np = parse_placements("stress", v, s->places);
		} else if (args_opt(&a, "--panic-rate", &v)) {
			s->panic_rate =
			    parse_double("stress", "--panic-rate", v, 0.0, 1.0);
		} else if (args_opt(&a, "--workloads", &v)) {
			stress_parse_workloads(v, s);
		} else if (args_opt(&a, "--pool", NULL)) {
			s->pool = true;
		} else if (args_opt(&a, "--verbose", NULL)) {
			s->verbose = true;
		} else {
			die_usage("stress", "unknown argument '%s'", argv[a.i]);
		}
	}
	if (s->np == 0)
		for (;
		     s->np < sizeof(stress_default) / sizeof(stress_default[0]);
		     s->np++)
			strcpy(s->places[s->np], stress_default[s->np]);
}

static void
stress_print_failure(const struct stress_case *k)
{
	(void)printf("FAIL seed %" PRIu64 ", %s, placement %s, %u %s: %s\n",
		     k->seed, k->random ? "random circuit" : "grid",
		     k->placement, k->workers, k->pool ? "workers" : "held",
		     k->res.why);
	(void)printf("replay: %s\n", k->replay);
}

static void
stress_print_case(const struct stress_case *k, bool ok)
{
	char shape[64] = "";

	if (k->random)
		(void)snprintf(shape, sizeof(shape), " (%zu in, %zu out)",
			       k->ninputs, k->noutputs);
	(void)printf("seed %" PRIu64 " %s%s %s x%u: %s%s\n", k->seed,
		     k->random ? "random" : "grid", shape, k->placement,
		     k->workers,
		     k->skipped ? "skipped"
		     : ok	? "ok"
				: "FAIL",
		     k->res.panicked ? " (panicked)" : "");
}

/* Counts over the cases run. */
struct stress_tally {
	uint64_t cases, panicked, skipped;
};

/* One case; 0, or the exit code after printing the failure (or the
 * error that kept it from running). */
static int
stress_one(const struct stress_cfg *s, struct stress_case *k, const char *exe,
	   struct stress_tally *t)
{
	int rc = stress_run(k, exe);

	t->cases++;
	t->panicked += k->res.panicked;
	t->skipped += k->skipped;
	if (s->verbose)
		stress_print_case(k, rc == 0);
	if (rc == EXIT_CHECK)
		stress_print_failure(k);
	else if (rc)
		(void)fprintf(stderr,
			      "subcirc stress: seed %" PRIu64
			      ", placement %s: the case could not be run: "
			      "%s\n",
			      k->seed, k->placement, k->res.why);
	stress_release(k);
	return rc;
}

static void
stress_print_tally(const struct stress_cfg *s, const struct stress_tally *t)
{
	(void)printf("subcirc stress: %" PRIu64 " cases passed (seeds %" PRIu64
		     "..%" PRIu64 ", %s, %zu worker counts, %zu placements, "
		     "%s); %" PRIu64 " skipped (placement does not apply)",
		     t->cases - t->skipped, s->seed_lo, s->seed_hi,
		     s->grid && s->random ? "grid and random circuits"
		     : s->grid		  ? "grid"
					  : "random circuits",
		     s->nw, s->np, s->pool ? "real pool" : "seeded scheduler",
		     t->skipped);
	if (s->panic_rate > 0)
		(void)printf("; %" PRIu64 " with an injected panic",
			     t->panicked);
	(void)printf("\n");
}

int
cmd_stress(int argc, char **argv, const char *exe)
{
	struct stress_cfg s;
	struct stress_tally t = {0};

	stress_parse(argc, argv, &s);
	for (uint64_t seed = s.seed_lo;; seed++) {
		for (int w = 0; w < 2; w++) {
			if (!(w ? s.random : s.grid))
				continue;
			for (size_t j = 0; j < s.nw; j++) {
				for (size_t i = 0; i < s.np; i++) {
					struct stress_case k = {
					    .seed = seed,
					    .workers = s.workers[j],
					    .placement = s.places[i],
					    .random = w == 1,
					    .panic_rate = w ? 0 : s.panic_rate,
					    .pool = s.pool};

					int rc = stress_one(&s, &k, exe, &t);

					if (rc)
						return rc;
				}
			}
		}
		if (seed == s.seed_hi)
			break;
	}
	stress_print_tally(&s, &t);
	return 0;
}
