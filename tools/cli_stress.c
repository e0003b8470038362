/*
 * cli_stress.c - `subcirc stress`: seeds x workers x placements, on the
 * grid workload, on random circuits and on the Nexmark queries
 * (bench/workloads/; --workloads nexmark: the seed draws the query, the
 * generator's seed, the events per submission chunk and the chunks, and
 * the queries read symbols of a table of the case's own), each case one
 * call of the settle check (units/settle.h): under the seeded scheduler
 * (or a real pool), the placed circuit must settle exactly where the
 * single circuit does, with every edge empty; on the grid, its outputs
 * must also equal the from-scratch reference (sc_grid_verify). With
 * injected faults (--panic-rate) a panic must stay in its unit and be
 * reported. The first failing case is printed with the command that
 * replays it.
 *
 * The campaign: --modes sim,pool crosses the seeded scheduler with the
 * real pool, and --faults LIST injects, per case, a fault drawn from the
 * case's seed (units/settle.h: panic, segv, stall, slow, burst, alloc;
 * "none" too; alloc through tools/cli_alloc.c's hook), or exactly one
 * with --panic-at UNIT:N / --fault-unit / --fault-at. The settle check
 * counts what happened; this file tallies it, prints a progress line each
 * second and a summary, writes --json, and with --shrink reduces the
 * first failing case (fewer events, simpler placements, fewer workers, an
 * earlier fault step) while it still fails. --restart R/T runs every case
 * with a restart policy (units/runtime.h, Restarts: at most R restarts in
 * T seconds, 0 for the run's life): a unit a fault kills is rebuilt, and
 * every output must then settle to the single circuit's, downstream of
 * it too, unless the rate bound gave the unit up (units/settle.h).
 * --ticks runs every case in tick mode (units/settle.h, "Tick mode"):
 * the host closes a tick after a random number of submissions drawn from
 * the case's seed (empty ticks included; --events then counts the
 * boundaries too), the random circuits may hold delay, integrate,
 * differentiate and loops through a delay (sc_randc_create_ticks), and
 * every output's delta at every tick must equal the single circuit's. A
 * placement that makes a cycle of units crossing at no delay is refused
 * by the runtime in tick mode, and counted as skipped. Tick mode takes no
 * callback or alloc fault, no --panic-rate and no --restart.
 *
 * --workload SPEC stresses one workload of the interface instead
 * (units/workload.h: a built-in or a plugin, tools/cli_workload.h): per
 * seed, an instance of that seed gives its first --steps submissions
 * once, into a work every case of the seed runs (cli_stress_workload.h);
 * its reference (verify), when it has one, checks every compared output
 * too. A tick workload puts the campaign in tick mode over its own
 * boundaries.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <time.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/workloads/grid.h"
#include "bench/workloads/nexmark.h"
#include "bench/workloads/nexmark_queries.h"
#include "bench/workloads/random.h"
#include "operators/base.h"
#include "operators/error.h"
#include "tools/cli.h"
#include "tools/cli_cmd.h"
#include "tools/cli_ranks.h"
#include "tools/cli_stress_ranks.h"
#include "tools/cli_stress_workload.h"
#include "tools/cli_workload.h"
#include "units/placement.h"
#include "units/settle.h"

const char cli_usage_stress[] =
    "usage: subcirc stress [options]\n"
    "  seeds x workers x placements on the grid workload and on random\n"
    "  circuits (sizes, batches, edge capacities and outbox bounds drawn\n"
    "  from the seed) under the\n"
    "  seeded scheduler: every case must settle exactly where the single\n"
    "  circuit does, with every edge empty. The first failing case is\n"
    "  printed with the command that replays it.\n"
    "\n"
    "  --seeds A..B      seed range, inclusive (default 1..20; or one seed)\n"
    "  --workers LIST    units held at once by the scheduler, or threads\n"
    "                    with --pool (default 1,2,3,4)\n"
    "  --placements LIST comma list (default single,per-node,chains,\n"
    "                    random:2,random:5,sharded:2,sharded:3)\n"
    "  --workloads W     comma list of grid, random (random circuits of\n"
    "                    join, antijoin, distinct, aggregate, map, filter,\n"
    "                    plus, minus...) and nexmark (the seed draws the\n"
    "                    query); default grid,random\n"
    "  --workload SPEC   instead, one workload of the interface\n"
    "                    (units/workload.h): a built-in (nexmark:q4,\n"
    "                    random, random-ticks, grid...) or a plugin's\n"
    "                    path; the seed seeds its input and the schedule,\n"
    "                    every case must also pass its reference (verify)\n"
    "  --workload-arg K=V  an argument of the workload (repeatable)\n"
    "  --steps N         the workload's submissions taken per seed\n"
    "                    (default 64; fewer if its input ends)\n"
    "  --panic-rate X    grid: share (0..1) of projection rows whose callback\n"
    "                    fails: the unit panics, and the case must still\n"
    "                    settle, report the panic and keep its edges clean\n"
    "  --pool            real worker threads instead of the scheduler\n"
    "  --modes M         sim, pool or sim,pool (default sim)\n"
    "  --faults LIST     per case, one fault drawn from the seed among\n"
    "                    none, panic, segv, stall, slow, burst, alloc\n"
    "                    (units/settle.h; alloc: the Nth allocation fails)\n"
    "  --panic-at U:N    a panic at step N of unit U (every case)\n"
    "  --fault-unit U    the unit of the --faults kind (one kind only)\n"
    "  --fault-at N      its step that faults (default drawn in 1..3;\n"
    "                    for alloc, the allocation, drawn in 1..64)\n"
    "  --stall-ms MS     the watchdog's stall threshold (default 20)\n"
    "  --restart R/T     rebuild a dead unit, at most R times in T s (0:\n"
    "                    ever); every output must then settle, none skipped\n"
    "  --events N        submissions per case (default drawn from the seed)\n"
    "  --ticks           tick mode: random host ticks, per-tick operators in\n"
    "                    random circuits, every output's delta at every tick\n"
    "                    compared (faults none, slow, burst only)\n"
    "  --keep-going      run every case, not only up to the first failure\n"
    "  --shrink          reduce the first failing case and print its replay\n"
    "  --json FILE       the report: configuration, runs,\n"
    "                    faults_injected, divergences, frames_lost, hangs,\n"
    "                    the first failure's replay\n"
    "                    (tools/report.schema.json)\n"
    "  --quiet           no progress line (one a second on stderr)\n"
    "  --plant-difference  the reference misses the last submission (to\n"
    "                    test the campaign itself: a case whose last\n"
    "                    submission reaches a compared output fails)\n"
    "  --verbose         one line per case\n"
    "  --version         the version and commit\n"
    "\n"
    "  Under `mpirun -np N subcirc stress ...` every case runs across the N\n"
    "  ranks on worker threads (a placement without @ranks is spread over\n"
    "  them: chains@ranks:N...), checked against the single circuit on\n"
    "  rank 0, with the frames sent and received per rank; faults other\n"
    "  than none, --modes sim, --ticks, --restart, --panic-rate, --shrink,\n"
    "  nexmark and --workload are refused there.\n"
    "  SIGINT, SIGTERM or SIGHUP ends the campaign between cases: the runs\n"
    "  so far are reported.\n";

/* A drawn alloc fault fails one of the run's first this many
 * allocations. */
#define STRESS_ALLOC_AT 64

/* Submissions taken from a --workload per seed without --steps. */
#define STRESS_STEPS 64

static const char *const stress_default[] = {
    "single",	"per-node",  "chains",	 "random:2",
    "random:5", "sharded:2", "sharded:3"};

struct stress_cfg {
	uint64_t seed_lo, seed_hi;
	uint32_t workers[CLI_MAX_LIST];
	size_t nw;
	char places[CLI_MAX_LIST][32];
	size_t np;
	double panic_rate;
	bool pool;
	bool verbose;
	bool grid, random, nexmark; /* the workloads */
	bool modes[2];		    /* sim, pool */
	bool modes_given;	    /* --modes or --pool */
	enum sc_settle_fault_kind faults[SC_SETTLE_FAULT_KINDS];
	size_t nfaults;	    /* 0: none */
	int32_t fault_unit; /* -1: drawn */
	uint64_t fault_at;  /* 0: drawn */
	uint64_t stall_ms;  /* the watchdog's threshold */
	uint64_t events;    /* submissions per case; 0: from the seed */
	bool keep_going, shrink, quiet;
	bool plant; /* the reference misses the last submission */
	bool ticks; /* --ticks: tick mode */
	const char *json;
	FILE *json_f;
	struct sc_restart_policy restart; /* --restart R/T; kind NONE: off */
	char restart_arg[48];		  /* R/T as given, for replays */
	bool workloads_given;		  /* --workloads */
	const char *workload;		  /* --workload SPEC, or NULL */
	struct cli_workload_args wl_args; /* its --workload-arg list */
	uint64_t steps;			  /* --steps; 0: STRESS_STEPS */
	struct cli_stress_wl wl;	  /* the workload and its seed's work */
};

/* One case: the workload its seed draws, and what the check found. */
struct stress_case {
	uint64_t seed;
	uint32_t workers;
	const char *placement;
	bool random;		  /* a random circuit, else the grid */
	bool nexmark;		  /* a Nexmark query (then random is false) */
	struct cli_stress_wl *wl; /* --workload: its seed's work, else NULL */
	double panic_rate;	  /* grid only */
	bool pool;
	uint64_t events;	      /* submissions; 0: from the seed */
	struct sc_settle_fault fault; /* what to inject */
	uint64_t stall_ms;
	bool plant;
	bool ticks;			  /* tick mode */
	struct sc_restart_policy restart; /* every unit's */
	const char *restart_arg;	  /* "R/T", or NULL when off */
	struct sc_grid *gr;		  /* the grid, or NULL */
	struct sc_randc *rnd;		  /* the random circuit, or NULL */
	const char *query;		  /* Nexmark: the query's name */
	struct sc_symtab *nx_syms;	  /* Nexmark: the case's symbols */
	struct sc_nexmark *nx;		  /* Nexmark: the generator */
	struct sc_nexmark_query *nxq;	  /* Nexmark: the query */
	struct sc_nexmark_feed nxf;	  /* Nexmark: its settle feed */
	struct sc_graph *g;		  /* the one of them in use */
	size_t ninputs, noutputs;
	bool skipped;	     /* the placement does not apply to this graph */
	uint64_t references; /* --workload: outputs its reference passed */
	char replay[768];
	struct sc_settle_result res;
};

/* Tick mode: a boundary where the case's seed draws one (one step in 3,
 * so empty ticks come too), else the workload's next submission. */
struct stress_ticks {
	sc_settle_gen_fn inner;
	void *ctx;
	uint64_t rng;
	size_t next; /* the workload's next submission */
};

static int
stress_tick_step(void *ctx, size_t i, struct sc_settle_step *out)
{
	struct stress_ticks *t = ctx;

	(void)i;
	if (sc_splitmix_next(&t->rng) % 3 == 0) {
		*out = (struct sc_settle_step){SC_SETTLE_TICK, NULL};
		return 0;
	}
	return t->inner(t->ctx, t->next++, out);
}

/* The work of gen(ctx) for case k, with tick boundaries in tick mode. */
static int
stress_generate(const struct stress_case *k, sc_settle_gen_fn gen, void *ctx,
		size_t n, unsigned flags, struct sc_settle_work **w)
{
	struct stress_ticks t = {
	    .inner = gen, .ctx = ctx, .rng = k->seed ^ 0x7a1c5ULL};

	if (!k->ticks)
		return sc_settle_work_generate(k->g, gen, ctx, n, flags, w);
	return sc_settle_work_generate(k->g, stress_tick_step, &t, n,
				       flags | SC_SETTLE_TICKS, w);
}

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
	return stress_generate(k, sc_grid_settle_step, &f, nbatches,
			       k->panic_rate > 0 ? SC_SETTLE_FAULTS : 0, w);
}

/* The random circuit of the case's seed, and its deltas. */
static int
stress_random(struct stress_case *k, size_t nbatches, struct sc_settle_work **w)
{
	int ids[SC_RANDC_MAX_IO];
	int rc;

	if ((rc = k->ticks ? sc_randc_create_ticks(k->seed, &k->rnd)
			   : sc_randc_create(k->seed, &k->rnd)) != 0)
		return rc;
	k->g = sc_randc_graph(k->rnd);
	k->ninputs = sc_randc_inputs(k->rnd, ids, SC_RANDC_MAX_IO);
	k->noutputs = sc_randc_outputs(k->rnd, ids, SC_RANDC_MAX_IO);
	return stress_generate(k, sc_randc_settle_step, k->rnd, nbatches, 0, w);
}

/* A Nexmark case: the query, the generator's seed, the events per chunk
 * and (without --events) the chunks drawn from the seed; events 10 ms
 * apart, so that the queries' windows close within a case. */
static int
stress_nexmark(struct stress_case *k, size_t nchunks, struct sc_settle_work **w)
{
	const char *const *names;
	size_t nq = sc_nexmark_query_names(&names);
	struct sc_nexmark_opts o;
	uint64_t s = k->seed;
	int rc;

	k->query = names[s % nq];
	sc_nexmark_opts_default(&o);
	o.seed = s;
	o.gap_us = 10000;
	rc = sc_symtab_create(&k->nx_syms);
	if (!rc)
		rc = sc_nexmark_query_create(k->query, k->nx_syms, 0, &k->nxq);
	if (!rc)
		rc = sc_nexmark_create(&o, k->nx_syms, &k->nx);
	if (rc)
		return rc;
	k->g = sc_nexmark_query_graph(k->nxq);
	k->nxf.nx = k->nx;
	k->nxf.q = k->nxq;
	k->nxf.events = 20 + (size_t)((s / 11) % 81);
	return stress_generate(
	    k, sc_nexmark_settle_step, &k->nxf,
	    sc_nexmark_feed_steps(&k->nxf, (uint64_t)k->nxf.events * nchunks),
	    0, w);
}

/* The workload's name, as --workloads (or --workload) spells it. */
static const char *
stress_workload(const struct stress_case *k)
{
	if (k->wl)
		return k->wl->spec;
	return k->nexmark ? "nexmark" : k->random ? "random" : "grid";
}

/* Submissions per case without --events (Nexmark: submission chunks). */
static uint64_t
stress_events(const struct stress_case *k)
{
	if (k->events || k->wl)
		return k->events;
	return k->nexmark ? 2 + k->seed % 7 : 4 + k->seed % 29;
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
	char rate[64] = "", buf[32], fault[160] = "", events[40] = "";
	char wl[384];

	if (k->panic_rate > 0)
		(void)snprintf(rate, sizeof(rate), " --panic-rate %s",
			       shortest(k->panic_rate, buf));
	if (k->fault.kind != SC_SETTLE_FAULT_NONE) {
		int at = snprintf(fault, sizeof(fault), " --faults %s",
				  sc_settle_fault_name(k->fault.kind));

		if (k->fault.unit >= 0 && at > 0)
			at += snprintf(fault + at, sizeof(fault) - (size_t)at,
				       " --fault-unit %d", k->fault.unit);
		if (at > 0 && k->fault.kind != SC_SETTLE_FAULT_SLOW &&
		    k->fault.kind != SC_SETTLE_FAULT_BURST)
			at += snprintf(fault + at, sizeof(fault) - (size_t)at,
				       " --fault-at %" PRIu64,
				       k->fault.at ? k->fault.at : 1);
		if (k->fault.kind == SC_SETTLE_FAULT_STALL && at > 0)
			(void)snprintf(fault + at, sizeof(fault) - (size_t)at,
				       " --stall-ms %" PRIu64, k->stall_ms);
	}
	if (k->events)
		(void)snprintf(events, sizeof(events), " --%s %" PRIu64,
			       k->wl ? "steps" : "events", k->events);
	if (k->wl)
		cli_stress_wl_command(k->wl, wl, sizeof(wl));
	else
		(void)snprintf(wl, sizeof(wl), " --workloads %s",
			       stress_workload(k));
	(void)snprintf(k->replay, sizeof(k->replay),
		       "%s stress --seeds %" PRIu64 " --workers %u "
		       "--placements %s%s --modes %s%s%s%s",
		       exe, k->seed, k->workers, k->placement, wl,
		       k->pool ? "pool" : "sim", rate, fault, events);
	if (k->plant && strlen(k->replay) + 20 < sizeof(k->replay))
		strcat(k->replay, " --plant-difference");
	/* A tick workload is in tick mode by itself: --ticks draws host
	 * ticks for the others. */
	if (k->ticks && !(k->wl && k->wl->tick_workload) &&
	    strlen(k->replay) + 8 < sizeof(k->replay))
		strcat(k->replay, " --ticks");
	if (k->restart_arg && strlen(k->replay) + strlen(k->restart_arg) + 12 <
				  sizeof(k->replay)) {
		strcat(k->replay, " --restart ");
		strcat(k->replay, k->restart_arg);
	}
}

/* --plant-difference: the reference of every submission but the last
 * (a tick boundary is kept), so that the check has something to find (a
 * test of the campaign). */
static int
stress_plant(struct sc_settle_work *w)
{
	size_t n = sc_settle_work_steps(w), m = 0, last = n;
	struct sc_settle_step *st = calloc(n ? n : 1, sizeof(*st));
	int rc = st ? 0 : SC_ENOMEM;

	for (size_t i = 0; i < n && !rc; i++)
		if ((rc = sc_settle_work_step(w, i, &st[i])) == 0 &&
		    st[i].batch)
			last = i;
	for (size_t i = 0; i < n && !rc; i++)
		if (i != last)
			st[m++] = st[i];
	if (!rc)
		rc = sc_settle_work_reference(w, st, m);
	free(st);
	return rc;
}

/* A --workload case: the work of its seed's first submissions, shared
 * with every case of the seed (planted once, when it is built). */
static int
stress_wl_case(struct stress_case *k, size_t steps, struct sc_settle_work **w)
{
	bool fresh = false;
	int rc = cli_stress_wl_work(k->wl, k->seed, steps, k->ticks, w, &fresh);

	if (!rc && fresh && k->plant && (rc = stress_plant(*w)) != 0)
		cli_stress_wl_drop(k->wl);
	if (rc)
		*w = NULL;
	else
		k->g = sc_settle_work_graph(*w);
	return rc;
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
	    .verify = k->wl			? cli_stress_wl_verify
		      : k->random || k->nexmark ? NULL
						: stress_verify,
	    .verify_ctx = k->wl ? (void *)k->wl : (void *)k->gr,
	    .replay = k->replay,
	    .fault = k->fault,
	    .restart = k->restart};
	o->fault.stall_ns = k->stall_ms * 1000000ull;
}

/* Run one case: 0 when it passed (or was skipped); CLI_EXIT_CHECK when it ran
 * to a verdict that is not settled (k->res.why); CLI_EXIT_LIBRARY when it
 * could not be run (SC_ENOMEM building the workload, the placement or
 * the runtime: k->res.why too), which is no verdict on the schedule. */
static int
stress_run(struct stress_case *k, const char *exe)
{
	size_t nbatches = (size_t)stress_events(k);
	struct sc_settle_work *w = NULL;
	struct sc_placement *p = NULL;
	struct sc_settle_opts o;
	int rc;

	stress_replay(exe, k);
	rc = k->wl	  ? stress_wl_case(k, nbatches, &w)
	     : k->nexmark ? stress_nexmark(k, nbatches, &w)
	     : k->random  ? stress_random(k, nbatches, &w)
			  : stress_grid(k, nbatches, &w);
	if (!rc && k->plant && !k->wl)
		rc = stress_plant(w);
	if (!rc) {
		rc = sc_placement_parse(k->g, k->placement, k->seed, &p);
		/* A strategy may not apply to a random graph (a sharded
		 * unit needs its keyed node to read its inputs alone). */
		k->skipped =
		    rc == SC_EINVAL && (k->random || k->nexmark || k->wl);
	}
	/* An explicit fault unit the placement does not have: no case. */
	if (!rc && k->fault.unit >= 0 &&
	    (uint32_t)k->fault.unit >= sc_placement_units(p)) {
		k->skipped = true;
		rc = SC_EINVAL;
	}
	if (!rc) {
		uint64_t before = k->wl ? k->wl->references : 0;

		stress_opts(k, &o);
		rc = sc_settle_run(w, p, &o, &k->res);
		k->references = k->wl ? k->wl->references - before : 0;
		/* Tick mode refuses a cycle of units crossing at no delay,
		 * which a random placement can make: no case. */
		k->skipped = k->ticks && rc == SC_EINVAL &&
			     strstr(k->res.why, "cycle of units");
		/* The replay names the unit and step the run struck. */
		if (k->fault.unit < 0 && k->res.fault_unit >= 0) {
			k->fault.unit = k->res.fault_unit;
			stress_replay(exe, k);
			(void)snprintf(k->res.replay, sizeof(k->res.replay),
				       "%s", k->replay);
		}
	}
	if (rc && !k->skipped && !k->res.why[0])
		(void)snprintf(k->res.why, sizeof(k->res.why), "setup: %s (%s)",
			       sc_errname(rc),
			       sc_errmsg()[0] ? sc_errmsg() : sc_strerror(rc));
	sc_placement_destroy(p);
	if (!k->wl) /* a workload's is its seed's, kept for the next case */
		sc_settle_work_destroy(w);
	if (k->skipped)
		return 0;
	/* An allocation failure may end the run in SC_ENOMEM (a refused
	 * submit: nothing to compare); it must still lose no frame and not
	 * hang (units/settle.h). */
	if (k->fault.kind == SC_SETTLE_FAULT_ALLOC && !k->res.ok &&
	    (rc == SC_ENOMEM || (!rc && k->res.error == SC_ENOMEM)) &&
	    !k->res.hung && !k->res.frames_lost &&
	    k->res.injected[k->fault.kind])
		return 0;
	if (rc)
		return CLI_EXIT_LIBRARY;
	return k->res.ok ? 0 : CLI_EXIT_CHECK;
}

static void
stress_release(struct stress_case *k)
{
	sc_settle_result_fini(&k->res);
	(void)sc_grid_destroy(k->gr);
	(void)sc_randc_destroy(k->rnd);
	/* The rows that held the generator's ids are gone (the work and
	 * the runs): then the generator, the query, the table. */
	sc_nexmark_feed_fini(&k->nxf);
	sc_nexmark_destroy(k->nx);
	(void)sc_nexmark_query_destroy(k->nxq);
	sc_symtab_destroy(k->nx_syms);
}

static void
stress_parse_seeds(const char *v, struct stress_cfg *s)
{
	const char *dots = strstr(v, "..");
	char lo[32];

	if (!dots) {
		s->seed_lo = s->seed_hi =
		    cli_parse_u64("stress", "--seeds", v, 0, UINT64_MAX);
		return;
	}
	if ((size_t)(dots - v) >= sizeof(lo))
		cli_die_usage("stress", "--seeds: '%s' is not A..B", v);
	memcpy(lo, v, (size_t)(dots - v));
	lo[dots - v] = 0;
	s->seed_lo =
	    cli_parse_u64("stress", "--seeds (from)", lo, 0, UINT64_MAX);
	s->seed_hi =
	    cli_parse_u64("stress", "--seeds (to)", dots + 2, 0, UINT64_MAX);
	if (s->seed_hi < s->seed_lo)
		cli_die_usage("stress",
			      "--seeds: %" PRIu64 "..%" PRIu64
			      " is an empty range",
			      s->seed_lo, s->seed_hi);
}

static void
stress_parse_workloads(const char *v, struct stress_cfg *s)
{
	char buf[64];
	char *save = NULL, *tok;

	if (strlen(v) >= sizeof(buf) || !v[0] || strstr(v, ",,") ||
	    v[strlen(v) - 1] == ',' || v[0] == ',')
		cli_die_usage("stress", "--workloads: '%s' is not a comma list",
			      v);
	strcpy(buf, v);
	s->grid = s->random = s->nexmark = false;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		bool *on = !strcmp(tok, "grid")	     ? &s->grid
			   : !strcmp(tok, "random")  ? &s->random
			   : !strcmp(tok, "nexmark") ? &s->nexmark
						     : NULL;

		if (!on || *on)
			cli_die_usage(
			    "stress",
			    "--workloads: '%s' is not a list of grid, "
			    "random and nexmark (each once)",
			    v);
		*on = true;
	}
}

static void
stress_parse_modes(const char *v, struct stress_cfg *s)
{
	bool sim = !strcmp(v, "sim") || !strcmp(v, "sim,pool") ||
		   !strcmp(v, "pool,sim");
	bool pool = !strcmp(v, "pool") || !strcmp(v, "sim,pool") ||
		    !strcmp(v, "pool,sim");

	if (!sim && !pool)
		cli_die_usage("stress",
			      "--modes: '%s' is not sim, pool or sim,pool", v);
	s->modes[0] = sim;
	s->modes[1] = pool;
	s->modes_given = true;
}

static void
stress_parse_faults(const char *v, struct stress_cfg *s)
{
	char buf[256];
	char *save = NULL, *tok;

	if (strlen(v) >= sizeof(buf) || !v[0] || strstr(v, ",,") ||
	    v[strlen(v) - 1] == ',' || v[0] == ',')
		cli_die_usage("stress", "--faults: '%s' is not a comma list",
			      v);
	strcpy(buf, v);
	s->nfaults = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		enum sc_settle_fault_kind k;

		if (!strcmp(tok, "alloc") &&
		    sc_settle_fault_parse(tok, &k) != 0)
			cli_die_usage(
			    "stress",
			    "--faults: alloc is not injected in-process "
			    "in this build (no allocation hook: %s); use "
			    "the LD_PRELOAD tests/tools/failalloc_preload.c",
			    sc_errmsg());
		if (sc_settle_fault_parse(tok, &k) != 0)
			cli_die_usage(
			    "stress",
			    "--faults: '%s' is not none, panic, segv, "
			    "stall, slow, burst or alloc",
			    tok);
		if (s->nfaults == SC_SETTLE_FAULT_KINDS)
			cli_die_usage("stress", "--faults: too many entries");
		s->faults[s->nfaults++] = k;
	}
}

/* --restart R/T: at most R restarts (1..SC_RESTART_MAX) in T seconds
 * (0: in the run's life). */
static void
stress_parse_restart(const char *v, struct stress_cfg *s)
{
	const char *slash = strchr(v, '/');
	char r[24];
	double t;

	if (!slash || (size_t)(slash - v) >= sizeof(r) ||
	    strlen(v) >= sizeof(s->restart_arg))
		cli_die_usage("stress", "--restart: '%s' is not R/T", v);
	memcpy(r, v, (size_t)(slash - v));
	r[slash - v] = 0;
	s->restart.kind = SC_RESTART_BOUNDED;
	s->restart.max_restarts = (uint32_t)cli_parse_u64(
	    "stress", "--restart (restarts)", r, 1, SC_RESTART_MAX);
	t = cli_parse_double("stress", "--restart (seconds)", slash + 1, 0.0,
			     86400.0);
	s->restart.period_ns = (uint64_t)(t * 1e9);
	(void)snprintf(s->restart_arg, sizeof(s->restart_arg), "%s", v);
}

/* --panic-at UNIT:N */
static void
stress_parse_panic_at(const char *v, struct stress_cfg *s)
{
	const char *colon = strchr(v, ':');
	char unit[24];

	if (!colon || (size_t)(colon - v) >= sizeof(unit))
		cli_die_usage("stress", "--panic-at: '%s' is not UNIT:N", v);
	memcpy(unit, v, (size_t)(colon - v));
	unit[colon - v] = 0;
	s->fault_unit = (int32_t)cli_parse_u64("stress", "--panic-at (unit)",
					       unit, 0, INT32_MAX);
	s->fault_at = cli_parse_u64("stress", "--panic-at (step)", colon + 1, 1,
				    UINT64_MAX);
	s->faults[0] = SC_SETTLE_FAULT_PANIC;
	s->nfaults = 1;
}

static bool
stress_parse_campaign(struct cli_args *a, struct stress_cfg *s)
{
	const char *v;

	if (cli_args_opt(a, "--modes", &v))
		stress_parse_modes(v, s);
	else if (cli_args_opt(a, "--faults", &v))
		stress_parse_faults(v, s);
	else if (cli_args_opt(a, "--panic-at", &v))
		stress_parse_panic_at(v, s);
	else if (cli_args_opt(a, "--fault-unit", &v))
		s->fault_unit = (int32_t)cli_parse_u64("stress", "--fault-unit",
						       v, 0, INT32_MAX);
	else if (cli_args_opt(a, "--fault-at", &v))
		s->fault_at =
		    cli_parse_u64("stress", "--fault-at", v, 1, UINT64_MAX);
	else if (cli_args_opt(a, "--stall-ms", &v))
		s->stall_ms =
		    cli_parse_u64("stress", "--stall-ms", v, 5, 10000);
	else if (cli_args_opt(a, "--events", &v))
		s->events = cli_parse_u64("stress", "--events", v, 1, 1000000);
	else if (cli_args_opt(a, "--json", &v))
		s->json = v;
	else if (cli_args_opt(a, "--keep-going", NULL))
		s->keep_going = true;
	else if (cli_args_opt(a, "--shrink", NULL))
		s->shrink = true;
	else if (cli_args_opt(a, "--quiet", NULL))
		s->quiet = true;
	else if (cli_args_opt(a, "--plant-difference", NULL))
		s->plant = true;
	else if (cli_args_opt(a, "--ticks", NULL))
		s->ticks = true;
	else if (cli_args_opt(a, "--restart", &v))
		stress_parse_restart(v, s);
	else
		return false;
	return true;
}

/* --workload SPEC: alone among the workloads, with its own size
 * (--steps), opened once for the first seed so that a bad spec or
 * argument is refused before any case; a tick workload puts the
 * campaign in tick mode. */
static void
stress_parse_workload(struct stress_cfg *s)
{
	int rc;

	if (!s->workload) {
		if (s->steps || s->wl_args.n)
			cli_die_usage("stress",
				      "--%s: only with --workload "
				      "SPEC",
				      s->steps ? "steps" : "workload-arg");
		return;
	}
	if (s->workloads_given)
		cli_die_usage("stress",
			      "--workload and --workloads: one or the other "
			      "(--workload SPEC runs one workload of the "
			      "interface, --workloads LIST the built-in "
			      "stress draws)");
	if (s->panic_rate > 0)
		cli_die_usage("stress", "--panic-rate: the grid's of "
					"--workloads, not with --workload");
	if (s->events)
		cli_die_usage("stress",
			      "--events: with --workload, --steps N sets "
			      "the submissions per seed");
	s->grid = s->random = s->nexmark = false;
	if (!s->steps)
		s->steps = STRESS_STEPS;
	s->wl.spec = s->workload;
	s->wl.args = &s->wl_args;
	if ((rc = cli_stress_wl_probe(&s->wl, s->seed_lo)) != 0)
		cli_exit(rc);
	if (s->wl.tick_workload)
		s->ticks = true;
}

/* What put the campaign in tick mode, for a refusal. */
static const char *
stress_tick_why(const struct stress_cfg *s)
{
	return s->wl.tick_workload ? "--workload (a tick workload)" : "--ticks";
}

static void
stress_parse(int argc, char **argv, struct stress_cfg *s)
{
	struct cli_args a = {
	    .cmd = "stress", .argc = argc, .argv = argv, .i = 0};
	const char *v;

	memset(s, 0, sizeof(*s));
	s->seed_lo = 1;
	s->seed_hi = 20;
	s->grid = s->random = true;
	s->modes[0] = true;
	s->fault_unit = -1;
	s->stall_ms = 20;
	for (s->nw = 0; s->nw < 4; s->nw++)
		s->workers[s->nw] = (uint32_t)s->nw + 1;
	while (a.i < argc) {
		if (cli_args_opt(&a, "--help", NULL) ||
		    cli_args_opt(&a, "-h", NULL)) {
			(void)fputs(cli_usage_stress, stdout);
			/* The CLI exits before it starts any thread. */
			exit(0); // NOLINT(concurrency-mt-unsafe)
		} else if (cli_args_opt(&a, "--version", NULL)) {
			cli_version_print();
			exit(0); // NOLINT(concurrency-mt-unsafe)
		} else if (cli_args_opt(&a, "--seeds", &v)) {
			stress_parse_seeds(v, s);
		} else if (cli_args_opt(&a, "--workers", &v)) {
			s->nw = cli_parse_u32_list("stress", "--workers", v, 1,
						   64, s->workers);
		} else if (cli_args_opt(&a, "--placements", &v)) {
			s->np = cli_parse_placements("stress", v, s->places);
		} else if (cli_args_opt(&a, "--panic-rate", &v)) {
			s->panic_rate = cli_parse_double(
			    "stress", "--panic-rate", v, 0.0, 1.0);
		} else if (cli_args_opt(&a, "--workloads", &v)) {
			stress_parse_workloads(v, s);
			s->workloads_given = true;
		} else if (cli_args_opt(&a, "--workload", &v)) {
			s->workload = v;
		} else if (cli_args_opt(&a, "--workload-arg", &v)) {
			cli_workload_arg_add("stress", &s->wl_args, v);
		} else if (cli_args_opt(&a, "--steps", &v)) {
			s->steps =
			    cli_parse_u64("stress", "--steps", v, 1, 1000000);
		} else if (cli_args_opt(&a, "--pool", NULL)) {
			s->modes[0] = false;
			s->modes[1] = true;
			s->modes_given = true;
		} else if (cli_args_opt(&a, "--verbose", NULL)) {
			s->verbose = true;
		} else if (!stress_parse_campaign(&a, s)) {
			cli_die_usage("stress", "unknown argument '%s'",
				      argv[a.i]);
		}
	}
	if ((s->fault_unit >= 0 || s->fault_at) && s->nfaults != 1)
		cli_die_usage("stress",
			      "--fault-unit and --fault-at need one "
			      "fault kind (--faults KIND or --panic-at)");
	stress_parse_workload(s);
	for (size_t i = 0; s->ticks && i < s->nfaults; i++)
		if (s->faults[i] != SC_SETTLE_FAULT_NONE &&
		    s->faults[i] != SC_SETTLE_FAULT_SLOW &&
		    s->faults[i] != SC_SETTLE_FAULT_BURST)
			cli_die_usage("stress",
				      "%s: fault '%s' is not "
				      "checked in tick mode (none, slow "
				      "and burst are)",
				      stress_tick_why(s),
				      sc_settle_fault_name(s->faults[i]));
	if (s->ticks && (s->panic_rate > 0 || s->restart.kind))
		cli_die_usage("stress",
			      "%s: no --panic-rate nor --restart "
			      "in tick mode",
			      stress_tick_why(s));
	if (s->np == 0)
		for (;
		     s->np < sizeof(stress_default) / sizeof(stress_default[0]);
		     s->np++)
			strcpy(s->places[s->np], stress_default[s->np]);
	s->json_f = cli_open_out("stress", "--json", s->json);
}

static void
stress_print_failure(const struct stress_case *k)
{
	(void)fprintf(cli_report_text(),
		      "FAIL seed %" PRIu64 ", %s%s%s, placement %s, %u %s%s%s: "
		      "%s\n",
		      k->seed,
		      k->random ? "random circuit" : stress_workload(k),
		      k->nexmark ? " " : "", k->nexmark ? k->query : "",
		      k->placement, k->workers, k->pool ? "workers" : "held",
		      k->fault.kind ? ", fault " : "",
		      k->fault.kind ? sc_settle_fault_name(k->fault.kind) : "",
		      k->res.why);
	(void)fprintf(cli_report_text(), "replay: %s\n", k->replay);
}

static void
stress_print_case(const struct stress_case *k, bool ok)
{
	char shape[64] = "";

	if (k->random)
		(void)snprintf(shape, sizeof(shape), " (%zu in, %zu out)",
			       k->ninputs, k->noutputs);
	if (k->nexmark)
		(void)snprintf(shape, sizeof(shape), " %s", k->query);
	(void)fprintf(
	    cli_report_text(), "seed %" PRIu64 " %s%s %s x%u %s %s: %s%s\n",
	    k->seed, stress_workload(k), shape, k->placement, k->workers,
	    k->pool ? "pool" : "sim", sc_settle_fault_name(k->fault.kind),
	    k->skipped ? "skipped"
	    : ok       ? "ok"
		       : "FAIL",
	    k->res.panicked ? " (panicked)" : "");
}

/* Counts over the cases run. */
struct stress_tally {
	uint64_t cases, panicked, skipped, failures, divergences, hangs, errors;
	uint64_t frames_lost, stalls_reported, outputs_compared, outputs_dead;
	uint64_t ticks_compared;     /* tick mode: ticks of every output */
	uint64_t restarts, given_up; /* units rebuilt; units the bound kept
					dead */
	uint64_t references; /* --workload: outputs its reference passed */
	uint64_t injected[SC_SETTLE_FAULT_KINDS];
	bool have_first;
	char first_why[640], first_replay[768], shrunk[768];
	uint64_t shrink_tries;
};

static void
stress_count(struct stress_tally *t, const struct stress_case *k, int rc)
{
	t->cases++;
	t->panicked += k->res.panicked;
	t->skipped += k->skipped;
	if (k->skipped)
		return;
	t->errors += rc == CLI_EXIT_LIBRARY;
	t->failures += rc == CLI_EXIT_CHECK;
	t->divergences += rc == CLI_EXIT_CHECK && k->res.output >= 0;
	t->hangs += k->res.hung;
	t->frames_lost += k->res.frames_lost;
	t->stalls_reported += k->res.stalls_reported;
	t->outputs_compared += k->res.outputs_compared;
	t->outputs_dead += k->res.outputs_dead;
	t->ticks_compared += k->res.ticks_compared;
	t->restarts += k->res.stats.restarts;
	t->given_up += k->res.stats.given_up;
	t->references += k->references;
	for (int i = 0; i < SC_SETTLE_FAULT_KINDS; i++)
		t->injected[i] += k->res.injected[i];
	if (rc && !t->have_first) {
		t->have_first = true;
		(void)snprintf(t->first_why, sizeof(t->first_why), "%s",
			       k->res.why);
		(void)snprintf(t->first_replay, sizeof(t->first_replay), "%s",
			       k->replay);
	}
}

/* One case; 0, or the exit code after printing the failure (or the
 * error that kept it from running). */
static int
stress_one(const struct stress_cfg *s, struct stress_case *k, const char *exe,
	   struct stress_tally *t)
{
	int rc = stress_run(k, exe);

	if (t)
		stress_count(t, k, rc);
	if (s->verbose)
		stress_print_case(k, rc == 0);
	if (t && rc == CLI_EXIT_CHECK)
		stress_print_failure(k);
	else if (t && rc)
		(void)fprintf(stderr,
			      "subcirc stress: seed %" PRIu64
			      ", placement %s: the case could not be run: "
			      "%s\n",
			      k->seed, k->placement, k->res.why);
	stress_release(k);
	return rc;
}

/* The case at (seed, workload, mode, workers, placement) of the matrix,
 * with its fault drawn from them. */
static struct stress_case
stress_case_at(struct stress_cfg *s, uint64_t seed, int w, int mode, size_t j,
	       size_t i)
{
	struct stress_case k = {.seed = seed,
				.workers = s->workers[j],
				.placement = s->places[i],
				.random = w == 1,
				.nexmark = w == 2,
				.wl = w == 3 ? &s->wl : NULL,
				.panic_rate = w ? 0 : s->panic_rate,
				.pool = mode == 1,
				.events = w == 3 ? s->steps : s->events,
				.stall_ms = s->stall_ms,
				.plant = s->plant,
				.ticks = s->ticks,
				.restart = s->restart,
				.restart_arg =
				    s->restart.kind ? s->restart_arg : NULL,
				.fault = {.unit = -1}};
	uint64_t x = seed ^ ((uint64_t)j << 40) ^ ((uint64_t)i << 48) ^
		     ((uint64_t)(w * 2 + mode) << 56);
	uint64_t h = sc_splitmix_next(&x);

	if (s->nfaults) {
		k.fault.kind = s->faults[h % s->nfaults];
		k.fault.unit = s->fault_unit;
		/* alloc: the Nth allocation of the run, drawn wider, so that
		 * it falls in a worker's turn as well as in a submit. */
		k.fault.at = s->fault_at ? s->fault_at
			     : k.fault.kind == SC_SETTLE_FAULT_ALLOC
				 ? 1 + (h >> 32) % STRESS_ALLOC_AT
				 : 1 + (h >> 32) % 3;
	}
	return k;
}

/* Whether case k (a copy; its results are dropped) fails. */
static bool
stress_fails(const struct stress_cfg *s, struct stress_case k, const char *exe,
	     struct stress_tally *t)
{
	t->shrink_tries++;
	return stress_one(s, &k, exe, NULL) != 0;
}

/* Reduce a failing case while it still fails: fewer events, a placement
 * of fewer units, fewer workers, an earlier fault step, no fault. */
static void
stress_shrink(const struct stress_cfg *s, struct stress_case k, const char *exe,
	      struct stress_tally *t)
{
	static const char *const simpler[] = {"single", "chains", "random:2"};
	bool better = true;

	if (!k.events)
		k.events = stress_events(&k);
	while (better) {
		better = false;
		for (uint64_t cut = k.events / 2; cut >= 1 && k.events > 1;
		     cut /= 2) {
			struct stress_case c = k;

			c.events = k.events - cut;
			if (stress_fails(s, c, exe, t)) {
				k = c;
				better = true;
				break;
			}
		}
		for (size_t i = 0; i < 3 && !better; i++) {
			struct stress_case c = k;

			if (!strcmp(k.placement, simpler[i]))
				break;
			c.placement = simpler[i];
			c.fault.unit = -1; /* re-drawn in the new placement */
			if (stress_fails(s, c, exe, t)) {
				k = c;
				better = true;
			}
		}
		if (!better && k.workers > 1) {
			struct stress_case c = k;

			c.workers = k.workers - 1;
			if (stress_fails(s, c, exe, t)) {
				k = c;
				better = true;
			}
		}
		if (!better && k.fault.kind != SC_SETTLE_FAULT_SLOW &&
		    k.fault.kind != SC_SETTLE_FAULT_BURST && k.fault.kind &&
		    k.fault.at > 1) {
			struct stress_case c = k;

			c.fault.at = k.fault.at - 1;
			if (stress_fails(s, c, exe, t)) {
				k = c;
				better = true;
			}
		}
	}
	stress_replay(exe, &k);
	(void)snprintf(t->shrunk, sizeof(t->shrunk), "%s", k.replay);
	(void)fprintf(cli_report_text(), "shrunk after %" PRIu64 " tries: %s\n",
		      t->shrink_tries, k.replay);
}

static double
now_s(void)
{
	return (double)sc_clock_ns() / 1e9;
}

static uint64_t
stress_injected(const struct stress_tally *t)
{
	uint64_t n = 0;

	for (int i = 1; i < SC_SETTLE_FAULT_KINDS; i++)
		n += t->injected[i];
	return n;
}

static void
stress_progress(const struct stress_tally *t, uint64_t total, double t0)
{
	cli_progress_line(now_s() - t0, (double)t->cases / (double)total,
			  "cases %" PRIu64 "/%" PRIu64 ", %" PRIu64
			  " failures, %" PRIu64 " faults injected",
			  t->cases, total, t->failures, stress_injected(t));
}

/* The workloads of the campaign, for its summary. */
static const char *
stress_workloads_name(const struct stress_cfg *s)
{
	static const char *const names[8] = {
	    "no workload",
	    "grid",
	    "random circuits",
	    "grid and random circuits",
	    "Nexmark queries",
	    "grid and Nexmark queries",
	    "random circuits and Nexmark queries",
	    "grid, random circuits and Nexmark queries"};

	if (s->workload)
		return s->workload;
	return names[(s->grid ? 1 : 0) | (s->random ? 2 : 0) |
		     (s->nexmark ? 4 : 0)];
}

static void
stress_print_tally(const struct stress_cfg *s, const struct stress_tally *t)
{
	uint64_t runs = t->cases - t->skipped;

	(void)fprintf(
	    cli_report_text(),
	    "subcirc stress: %" PRIu64 " runs, %" PRIu64
	    " passed (seeds %" PRIu64 "..%" PRIu64
	    ", %s, %zu worker counts, %zu placements, %s%s); %" PRIu64
	    " skipped (placement does not apply)",
	    runs, runs - t->failures - t->errors, s->seed_lo, s->seed_hi,
	    stress_workloads_name(s), s->nw, s->np,
	    s->modes[0] ? "seeded scheduler" : "",
	    s->modes[1] ? (s->modes[0] ? " and real pool" : "real pool") : "",
	    t->skipped);
	if (s->panic_rate > 0)
		(void)fprintf(cli_report_text(),
			      "; %" PRIu64 " with an injected panic",
			      t->panicked);
	(void)fprintf(cli_report_text(), "\n");
	if (s->nfaults)
		(void)fprintf(cli_report_text(),
			      "faults injected: panic %" PRIu64
			      ", segv %" PRIu64 ", stall %" PRIu64
			      " (watchdog reported %" PRIu64 "), slow %" PRIu64
			      ", burst %" PRIu64 ", alloc %" PRIu64 "\n",
			      t->injected[1], t->injected[2], t->injected[3],
			      t->stalls_reported, t->injected[4],
			      t->injected[5], t->injected[6]);
	(void)fprintf(cli_report_text(),
		      "failures %" PRIu64 ", divergences %" PRIu64
		      ", frames lost %" PRIu64 ", hangs %" PRIu64
		      ", errors %" PRIu64 "; outputs compared %" PRIu64
		      ", skipped as downstream of a dead unit %" PRIu64 "\n",
		      t->failures, t->divergences, t->frames_lost, t->hangs,
		      t->errors, t->outputs_compared, t->outputs_dead);
	if (s->workload && s->wl.has_verify)
		(void)fprintf(cli_report_text(),
			      "the workload's reference held on %" PRIu64
			      " outputs\n",
			      t->references);
	if (s->ticks)
		(void)fprintf(cli_report_text(),
			      "tick mode: %" PRIu64 " ticks compared (every "
			      "output's delta at each)\n",
			      t->ticks_compared);
	if (s->restart.kind)
		(void)fprintf(cli_report_text(),
			      "restarts %" PRIu64
			      " (--restart %s), units given "
			      "up past the rate bound %" PRIu64 "\n",
			      t->restarts, s->restart_arg, t->given_up);
	if (t->have_first)
		(void)fprintf(cli_report_text(),
			      "first failure: %s\nreplay: %s\n", t->first_why,
			      t->first_replay);
}

/* The workloads as the report names them: "grid,random", or the
 * --workload's spec. */
static void
stress_workloads_list(const struct stress_cfg *s, char *buf, size_t n)
{
	if (s->workload) {
		(void)snprintf(buf, n, "%s", s->workload);
		return;
	}
	(void)snprintf(buf, n, "%s%s%s%s%s", s->grid ? "grid" : "",
		       s->grid && (s->random || s->nexmark) ? "," : "",
		       s->random ? "random" : "",
		       s->random && s->nexmark ? "," : "",
		       s->nexmark ? "nexmark" : "");
}

/* The campaign's configuration: every option's effective value (also
 * the report's of the campaign across ranks). */
static void
stress_json_config(const void *ctx, struct cli_json *j)
{
	const struct stress_cfg *s = ctx;

	cli_json_open(j, "seeds", '[', true);
	cli_json_uint(j, NULL, s->seed_lo);
	cli_json_uint(j, NULL, s->seed_hi);
	cli_json_close(j);
	cli_json_uints(j, "workers", s->workers, s->nw);
	cli_json_texts(j, "placements", s->places, s->np);
	cli_json_text(j, "workload", s->workload);
	cli_json_open(j, "workload_args", '[', true);
	for (size_t i = 0; i < s->wl_args.n; i++) {
		char kv[600];

		(void)snprintf(kv, sizeof(kv), "%s=%s", s->wl_args.args[i].key,
			       s->wl_args.args[i].value);
		cli_json_text(j, NULL, kv);
	}
	cli_json_close(j);
	if (s->workload)
		cli_json_uint(j, "steps", s->steps);
	else
		cli_json_null(j, "steps");
	cli_json_open(j, "workloads", '[', true);
	if (s->grid)
		cli_json_text(j, NULL, "grid");
	if (s->random)
		cli_json_text(j, NULL, "random");
	if (s->nexmark)
		cli_json_text(j, NULL, "nexmark");
	cli_json_close(j);
	cli_json_open(j, "modes", '[', true);
	if (s->modes[0])
		cli_json_text(j, NULL, "sim");
	if (s->modes[1])
		cli_json_text(j, NULL, "pool");
	cli_json_close(j);
	cli_json_open(j, "faults", '[', true);
	for (size_t i = 0; i < s->nfaults; i++)
		cli_json_text(j, NULL, sc_settle_fault_name(s->faults[i]));
	cli_json_close(j);
	if (s->fault_unit >= 0)
		cli_json_int(j, "fault_unit", s->fault_unit);
	else
		cli_json_null(j, "fault_unit");
	if (s->fault_at)
		cli_json_uint(j, "fault_at", s->fault_at);
	else
		cli_json_null(j, "fault_at");
	cli_json_real(j, "panic_rate", s->panic_rate);
	cli_json_uint(j, "stall_ms", s->stall_ms);
	cli_json_text(j, "restart", s->restart.kind ? s->restart_arg : NULL);
	if (s->events)
		cli_json_uint(j, "events", s->events);
	else
		cli_json_null(j, "events");
	cli_json_bool(j, "ticks", s->ticks);
	cli_json_bool(j, "keep_going", s->keep_going);
	cli_json_bool(j, "shrink", s->shrink);
	cli_json_bool(j, "plant_difference", s->plant);
	cli_json_bool(j, "quiet", s->quiet);
	cli_json_bool(j, "verbose", s->verbose);
	cli_json_text(j, "json", s->json);
}

static void
stress_write_json(struct cli_report *rep, const struct stress_cfg *s,
		  const struct stress_tally *t, FILE *f)
{
	struct cli_json *j = &rep->j;

	cli_report_open(rep, f, cli_signal_caught());
	stress_json_config(s, j);
	cli_report_results(rep);
	cli_json_uint(j, "runs", t->cases - t->skipped);
	cli_json_uint(j, "skipped", t->skipped);
	cli_json_uint(j, "failures", t->failures);
	cli_json_uint(j, "divergences", t->divergences);
	cli_json_uint(j, "frames_lost", t->frames_lost);
	cli_json_uint(j, "hangs", t->hangs);
	cli_json_uint(j, "errors", t->errors);
	cli_json_open(j, "faults_injected", '{', true);
	for (int i = 1; i < SC_SETTLE_FAULT_KINDS; i++)
		cli_json_uint(j, sc_settle_fault_name(i), t->injected[i]);
	cli_json_close(j);
	cli_json_uint(j, "stalls_reported", t->stalls_reported);
	cli_json_uint(j, "units_panicked", t->panicked);
	cli_json_uint(j, "outputs_compared", t->outputs_compared);
	cli_json_uint(j, "outputs_dead", t->outputs_dead);
	cli_json_uint(j, "restarts", t->restarts);
	cli_json_uint(j, "units_given_up", t->given_up);
	cli_json_uint(j, "ticks_compared", t->ticks_compared);
	cli_json_uint(j, "references_checked", t->references);
	cli_report_failure(j, t->have_first, t->first_why, t->first_replay);
	cli_json_text(j, "shrunk_replay", t->shrunk[0] ? t->shrunk : NULL);
	cli_report_close(rep);
}

/* The worst exit code of the campaign: a library error over a failure. */
static int
stress_worst(int a, int b)
{
	return a == CLI_EXIT_LIBRARY || b == CLI_EXIT_LIBRARY ? CLI_EXIT_LIBRARY
	       : a					      ? a
							      : b;
}

/* The ranks placement spec spans on the grid's graph (1 if it does not
 * parse: then it spans none, and the campaign skips it as usual). */
static uint32_t
stress_span(const char *spec)
{
	static struct sc_grid *gr; /* kept, as cli_parse_placements' */
	struct sc_grid_opts go = {.rows = 1, .cols = 1};
	struct sc_placement *p = NULL;
	uint32_t n;

	if (!gr && sc_grid_create(&go, &gr) != 0)
		cli_die_library("sc_grid_create", SC_ENOMEM);
	if (sc_placement_parse(sc_grid_graph(gr), spec, 1, &p) != 0)
		return 1;
	n = sc_placement_ranks(p);
	sc_placement_destroy(p);
	return n;
}

/* Whether the campaign runs workload w of the case matrix: the grid,
 * random circuits, Nexmark, a --workload. */
static bool
stress_has(const struct stress_cfg *s, int w)
{
	switch (w) {
	case 0:
		return s->grid;
	case 1:
		return s->random;
	case 2:
		return s->nexmark;
	default:
		return s->workload != NULL;
	}
}

/* Under mpirun (or with a placement over ranks): the campaign across
 * ranks (tools/cli_stress_ranks.c), refusing what does not apply
 * there; a placement with no ranks of its own is spread over all of
 * them. -1 when the campaign runs in this process as usual. */
static int
stress_across(const struct stress_cfg *s, const char *exe,
	      struct cli_report *rep)
{
	static struct cli_stress_ranks_cfg c;
	uint32_t n = cli_ranks_launched(), span = 1;

	for (size_t i = 0; i < s->np; i++) {
		uint32_t k = stress_span(s->places[i]);

		span = k > span ? k : span;
	}
	if (n <= 1 && span <= 1)
		return -1;
	if (s->nexmark)
		cli_die_usage("stress", "--workloads nexmark: not across ranks "
					"(grid and random are)");
	if (s->workload)
		cli_die_usage("stress",
			      "--workload: not across ranks (the cases there "
			      "run --workloads grid and random)");
	if (s->modes_given && s->modes[0])
		cli_die_usage("stress",
			      "--modes sim: the seeded scheduler runs "
			      "turns on the host (workers 0), which a "
			      "runtime across ranks cannot; every case "
			      "there runs on worker threads (pool)");
	for (size_t i = 0; i < s->nfaults; i++)
		if (s->faults[i] != SC_SETTLE_FAULT_NONE)
			cli_die_usage(
			    "stress",
			    "--faults %s: not across ranks (a case "
			    "there is judged whole, every unit alive; "
			    "only none)",
			    sc_settle_fault_name(s->faults[i]));
	if (s->panic_rate > 0 || s->ticks || s->restart.kind || s->shrink ||
	    s->fault_unit >= 0 || s->fault_at)
		cli_die_usage("stress", "--panic-rate, --panic-at, --ticks, "
					"--restart and --shrink: not across "
					"ranks (units/runtime_remote.h)");
	if (span <= 1)
		span = n; /* every placement spread over mpirun's ranks */
	memset(&c, 0, sizeof(c));
	for (size_t i = 0; i < s->np; i++) {
		uint32_t k = stress_span(s->places[i]);

		if (k <= 1 && !strchr(s->places[i], '@'))
			(void)snprintf(c.places[i], sizeof(c.places[i]),
				       "%s@ranks:%u", s->places[i], span);
		else if (k != span)
			cli_die_usage("stress",
				      "--placements: '%s' spans %u ranks, "
				      "another spans %u: one count for all",
				      s->places[i], k, span);
		else
			(void)snprintf(c.places[i], sizeof(c.places[i]), "%s",
				       s->places[i]);
	}
	(void)cli_ranks_start("stress", span); /* exit 2 if it cannot run */
	c.np = s->np;
	c.seed_lo = s->seed_lo;
	c.seed_hi = s->seed_hi;
	memcpy(c.workers, s->workers, sizeof(c.workers));
	c.nw = s->nw;
	c.grid = s->grid;
	c.random = s->random;
	c.events = s->events;
	c.keep_going = s->keep_going;
	c.quiet = s->quiet || cli_ranks_rank() != 0;
	c.verbose = s->verbose && cli_ranks_rank() == 0;
	c.plant = s->plant;
	c.json = s->json;
	c.json_f = s->json_f;
	c.report = rep;
	c.config = stress_json_config;
	c.config_ctx = s;
	return cli_stress_ranks(&c, exe);
}

int
cli_cmd_stress(int argc, char **argv, const char *exe)
{
	struct stress_cfg s;
	static struct stress_tally t;
	uint64_t total;
	double t0 = now_s(), last = t0;
	int worst = 0, rc;
	struct stress_case first = {0};
	struct cli_report rep;
	char workloads[64];
	bool stop = false;

	cli_alloc_hook_install(); /* before --faults alloc is parsed */
	stress_parse(argc, argv, &s);
	stress_workloads_list(&s, workloads, sizeof(workloads));
	cli_report_start(&rep, "stress", workloads);
	cli_progress_begin(stderr, s.quiet || cli_ranks_rank() != 0);
	if ((rc = stress_across(&s, exe, &rep)) >= 0)
		return rc;
	cli_signal_catch();
	total = (s.seed_hi - s.seed_lo + 1) *
		(uint64_t)((s.grid ? 1 : 0) + (s.random ? 1 : 0) +
			   (s.nexmark ? 1 : 0) + (s.workload ? 1 : 0)) *
		(uint64_t)(s.modes[0] + s.modes[1]) * s.nw * s.np;
	for (uint64_t seed = s.seed_lo; !stop; seed++) {
		for (int w = 0; w < 4 && !stop; w++) {
			if (!stress_has(&s, w))
				continue;
			for (int m = 0; m < 2 && !stop; m++) {
				if (!s.modes[m])
					continue;
				for (size_t j = 0; j < s.nw && !stop; j++) {
					for (size_t i = 0; i < s.np && !stop;
					     i++) {
						struct stress_case k =
						    stress_case_at(&s, seed, w,
								   m, j, i);
						struct stress_case again = k;

						rc =
						    stress_one(&s, &k, exe, &t);
						if (rc && !worst)
							first = again;
						worst = stress_worst(worst, rc);
						/* A signal ends the campaign
						 * between cases: the runs so
						 * far are reported. */
						stop = (rc && !s.keep_going) ||
						       cli_signal_caught();
						if (now_s() - last >= 1.0) {
							last = now_s();
							stress_progress(
							    &t, total, t0);
						}
					}
				}
			}
		}
		if (seed == s.seed_hi)
			break;
	}
	cli_progress_end();
	if (cli_signal_caught())
		(void)fprintf(stderr,
			      "subcirc stress: interrupted by %s: the runs so "
			      "far are reported\n",
			      cli_signal_name(cli_signal_caught()));
	if (worst && s.shrink && !cli_signal_caught())
		stress_shrink(&s, first, exe, &t);
	stress_print_tally(&s, &t);
	if (s.json_f) {
		stress_write_json(&rep, &s, &t, s.json_f);
		rc = cli_close_out("stress", s.json, s.json_f);
		worst = stress_worst(worst, rc);
	}
	cli_stress_wl_fini(&s.wl);
	return worst;
}
