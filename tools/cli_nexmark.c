/*
 * cli_nexmark.c - `subcirc run --workload nexmark`: a Nexmark query
 * (bench/workloads/nexmark_queries.h) live across worker threads, fed by
 * the standard generator (bench/workloads/nexmark.h) or by CSV files
 * (--from), with a progress line a second and a summary; --check compares
 * the settled output with the single circuit's, --dump writes the input
 * streams and the settled output as CSV (bench/workloads/csv.h).
 *
 * The host thread makes the events in chunks of --batch, one batch per
 * stream the query reads, and submits them (waiting out a full edge: the
 * backpressure). The run is over after --events events or --seconds
 * seconds; then it waits for idle, and the events per second are counted
 * from the first submit to idle. The CPU time of the process over the same
 * span gives events per CPU-second (a figure that holds on a loaded
 * machine, where wall time does not).
 *
 * The query's output is a stream that keeps nothing (nexmark_queries.h,
 * SC_NEXMARK_QUERY_STREAM), so a stateless query runs in memory that does
 * not grow with the events; --check and --dump, which read the settled
 * output, make it materialized.
 *
 * --check replays the same input into one single circuit after the run
 * (the generator is deterministic, a replayed file is kept in memory), so
 * the check costs the run no time. With --from, every file of a stream the
 * query reads is parsed whole before anything is submitted: a bad file is
 * refused (exit 2, naming file, line and column) with nothing submitted.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench/harness.h"
#include "bench/workloads/csv.h"
#include "bench/workloads/nexmark.h"
#include "bench/workloads/nexmark_par.h"
#include "bench/workloads/nexmark_queries.h"
#include "bench/workloads/partsink.h"
#include "operators/batch.h"
#include "operators/circuit.h"
#include "operators/error.h"
#include "operators/symbol.h"
#include "runtime/executor.h"
#include "tools/cli.h"
#include "tools/cli_cmd.h"
#include "tools/cli_ranks.h"
#include "tools/cli_units.h"
#include "units/placement.h"
#include "units/runtime.h"

#define NX_STUCK_NS		30000000000ull /* a submit or idle wait that long */
#define NX_IDLE_NS		120000000000ull
#define NX_STANDARD_LATENESS_MS 4000 /* the standard suite's watermark */

static const char usage_run_nexmark[] =
    "usage: subcirc run --workload nexmark [options]\n"
    "  a Nexmark query live across worker threads, fed by the standard\n"
    "  generator (1 person : 3 auctions : 46 bids, 10,000 events per\n"
    "  second of event time) or by CSV files.\n"
    "\n"
    "  --query Q         q0 q1 q2 q3 q4 q5 q6 q7 q8 q9 q10 q11 q12 q13 q14\n"
    "                    q15 q16 q17 q18 q19 q20 q21 q22 q23\n"
    "                    (default q4)\n"
    "  --workers N       worker threads (default: all cores)\n"
    "  --placement P     single | per-node | chains | random:N | sharded:K\n"
    "                    (default: the best measured for the query)\n"
    "  --events N        stop after N events, or\n"
    "  --seconds S       after S seconds (default 3 when neither; with\n"
    "                    --from, every row of the files)\n"
    "  --rate E          offer E events/s (default: as fast as it goes)\n"
    "  --batch N         events per chunk submitted (default 1000)\n"
    "  --seed S          the generator's seed (default 1)\n"
    "  --input-threads N N threads make the generator's events, chunk by\n"
    "                    chunk, while the host only submits them in order\n"
    "                    (default 0: the host makes them between its\n"
    "                    submissions); with --from, N threads read each\n"
    "                    file; not with --dump\n"
    "  --preload         make every event (--events N, or --from's) before\n"
    "                    the run starts, so that its time and CPU are\n"
    "                    the circuit's alone (memory: every chunk at\n"
    "                    once); not with --seconds, --input-threads or\n"
    "                    --dump\n"
    "  --string-pool N   draw random texts from N per length, for study\n"
    "                    (default 0: every text fresh, as the standard\n"
    "                    generator)\n"
    "  --disorder MS     events arrive up to MS ms out of date_time order\n"
    "                    (default 0: in order); declares the matching\n"
    "                    lateness unless --lateness says otherwise\n"
    "  --lateness MS     declare a lateness of MS ms on date_time of\n"
    "                    every stream the query reads (default: 4000,\n"
    "                    the standard suite's, or the disorder when\n"
    "                    larger); 'none' declares none, and keeps every\n"
    "                    state. A submission with a row later than that\n"
    "                    is refused whole, its rows on time too (both\n"
    "                    counted); the run goes on, exit 4\n"
    "  --admit-late      admit late rows instead (counted)\n"
    "  --no-cleanup      keep every state (lateness declared or not)\n"
    "  --budget B        frames per turn (default 64)\n"
    "  --capacity C      edge capacity in frames, a power of two (64);\n"
    "                    --edge-capacity C is the same\n"
    "  --check           compare the settled output with the single\n"
    "                    circuit's (exit 1 on a difference)\n"
    "  --dump DIR        write person.csv, auction.csv, bid.csv (the\n"
    "                    input taken, header rows first; no refused\n"
    "                    row) and <query>.csv (the settled output, a\n"
    "                    weight column last) into DIR\n"
    "  --from DIR        replay DIR's CSV files (those of the streams the\n"
    "                    query reads) instead of the generator; a bad\n"
    "                    file is refused by file, line and column, exit 2\n"
    "  --proc-clock C    q12's processing time, read once a chunk and\n"
    "                    stamped on its bids: wall (the default: ms since\n"
    "                    the epoch, never going back) or step:MS (chunk i\n"
    "                    at i * MS ms, for runs that repeat); not with\n"
    "                    the generator on --input-threads (with --preload:\n"
    "                    the time each chunk is made, before the run)\n"
    "  --sink DIR        q10's file sink: every bid as CSV under DIR in a\n"
    "                    folder per day and minute of its date_time\n"
    "                    (dt=YYYY-MM-DD/hm=HH:MM/part-N.csv, a weight\n"
    "                    column last), each committed whole (written,\n"
    "                    synced, then named) once the lateness has\n"
    "                    passed its minute, the rest at the end of the\n"
    "                    run\n"
    "  --side-input F    q13's table: a CSV file with the header key,value\n"
    "                    (i64, text), read once before the run; a bad\n"
    "                    file is refused by file, line and column, exit 2\n"
    "                    (default: the standard table, key k with the\n"
    "                    value k, for k in 0..9999)\n"
    "  --plant-difference the single circuit misses the last chunk (to\n"
    "                    see --check fail: exit 1)\n"
    "  --quiet           no progress lines\n"
    "  --units           the per-unit table at the end (turns, kicks,\n"
    "                    frames moved, state, worker, pending input)\n"
    "  --units-every S   and every S seconds while it runs\n"
    "  --trace FILE      every turn and the edges' fill, in the Chrome\n"
    "                    trace event format (ui.perfetto.dev opens it)\n"
    "  --json FILE       the report: configuration, summary and progress\n"
    "                    samples (tools/report.schema.json)\n"
    "  --csv FILE        the progress samples and the total as CSV\n"
    "                    (files are created before the run: a path that\n"
    "                    cannot be is refused at once, exit 2; '-' is\n"
    "                    stdout, and the text goes to stderr)\n"
    "  --version         the version and commit\n"
    "\n"
    "  SIGINT, SIGTERM or SIGHUP ends the run early with its summary and\n"
    "  files (exit codes as for the grid run).\n";

struct nx_cfg {
	const char *query;
	uint32_t workers;
	char placement[32]; /* "" = the query's default */
	uint64_t events;
	double seconds;
	double rate;
	uint32_t batch;
	uint64_t seed;
	uint32_t capacity, budget;
	uint32_t string_pool;	/* nexmark.h's string_pool */
	uint32_t input_threads; /* 0: the host makes the input */
	bool preload;		/* the input made before the run's clock */
	uint64_t disorder_ms;	/* nexmark.h's disorder_ms */
	int64_t lateness_ms;	/* declared; -1: none; -2: the default */
	bool admit_late;	/* SC_NEXMARK_QUERY_ADMIT */
	bool no_cleanup;	/* sc_runtime_opts.no_cleanup */
	bool check, quiet;
	bool plant;	    /* the check's reference misses the last chunk */
	bool units;	    /* --units: the unit table at the end */
	double units_every; /* --units-every S; 0: none */
	const char *dump, *from, *json, *csv;
	const char *side_input;	      /* --side-input FILE, or NULL */
	const char *sink;	      /* --sink DIR (q10), or NULL */
	struct sc_proctime clock;     /* --proc-clock (q12) */
	const char *clock_text;	      /* as given; NULL: wall */
	const char *trace;	      /* --trace FILE, or NULL */
	struct sc_timeline *timeline; /* made for --trace, or NULL */
};

/* The input: the generator, or rows read from CSV. */
struct nx_source {
	struct sc_nexmark *gen;
	struct sc_nexmark *old; /* the run's, after a rewind */
	struct sc_csv_rows rows[SC_NEXMARK_KINDS];
	size_t pos[SC_NEXMARK_KINDS];
	bool loaded[SC_NEXMARK_KINDS];
	uint64_t total; /* replay: rows in all files */
};

struct nx_run {
	const struct nx_cfg *cfg;
	int interrupted; /* the signal that ended the feeding early, or 0 */
	struct sc_proctime clock; /* q12's, from cfg */
	int64_t p_time;		  /* this chunk's reading (q12) */
	/* q12: every chunk's reading, in the order the chunks were made, so
	 * the check's replay stamps its chunks with the run's times rather
	 * than reading the clock again (next_time: the replay's next). */
	int64_t *times;
	size_t ntimes, cap_times, next_time;
	bool replaying;
	/* --sink: q10's partitioned files, and the output's schema it
	 * borrows */
	struct sc_partsink *sink;
	struct sc_schema sink_schema;
	struct sc_partsink_stats sink_st; /* taken at the end, before the
					   * teardown frees the sink */
	struct sc_symtab *symbols;
	struct sc_nexmark_query *q;
	struct sc_placement *p;
	struct sc_runtime *rt;
	void *mpi; /* across ranks (tools/cli_ranks.c), else NULL */
	struct nx_source src;
	struct sc_nexmark_par *par; /* --input-threads: the threads making it */
	struct sc_batch_builder b[SC_NEXMARK_KINDS];
	struct sc_schema schema[SC_NEXMARK_KINDS];
	FILE *dump[SC_NEXMARK_KINDS];
	/* --dump: a chunk's rows of each kind, held until their submission
	 * is answered (nx_dump_keep), in memory (open_memstream) */
	FILE *pend[SC_NEXMARK_KINDS];
	char *pend_buf[SC_NEXMARK_KINDS];
	size_t pend_len[SC_NEXMARK_KINDS];
	/* what the run measured */
	uint64_t events, chunks, efull;
	uint64_t late_submits; /* submissions refused with SC_ELATE */
	uint64_t refused_rows; /* the rows of those, late or not */
	uint64_t t0, t_end, last_ns, last_events;
	uint64_t trace_ns, trace_events; /* --trace: the last sample */
	double cpu0, cpu_end;
	/* The host thread's CPU time making input (generating or reading a
	 * replay's rows into batches, and the dump), in ns; and that of the
	 * run alone (the check's replay after it makes input too). */
	uint64_t input_cpu_ns, input_run_ns;
	/* --from: the wall time reading the files took, before the run. */
	uint64_t read_ns;
	struct cli_sample *s; /* the progress samples, a second apart */
	size_t ns, cap_s;
	struct sc_runtime_stats st;
	struct cli_unit_longest *longest; /* every unit's longest turn */
	size_t nlongest;
	bool ok;
	char why[512];
	/* --preload: the chunks made before the run, submitted in order
	 * (pre[next_pre] next), and the wall and CPU time making them
	 * took. The generator holds their texts until the loop is over. */
	struct nx_pre *pre;
	size_t npre, next_pre, cap_pre;
	uint64_t pre_events, pre_ns, pre_cpu_ns;
};

/* A chunk made before the run: its batches (NULL: none of that kind) and
 * its events. */
struct nx_pre {
	struct sc_batch *b[SC_NEXMARK_KINDS];
	uint64_t events;
};

/* --- options ---------------------------------------------------------------
 */

bool
cli_run_is_nexmark(int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--workload=nexmark"))
			return true;
		if (!strcmp(argv[i], "--workload") && i + 1 < argc &&
		    !strcmp(argv[i + 1], "nexmark"))
			return true;
	}
	return false;
}

static void
nx_defaults(struct nx_cfg *c)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	memset(c, 0, sizeof(*c));
	c->query = "q4";
	c->workers = n > 0 ? (uint32_t)n : 1;
	c->batch = 1000;
	c->seed = 1;
	c->capacity = 64;
	c->budget = 64;
	c->string_pool = 0;
	c->lateness_ms = -2;
	(void)sc_proctime_init_wall(&c->clock);
}

/* The lateness options; false when argv[i] is not one. */
static bool
nx_late_opt(struct cli_args *a, struct nx_cfg *c)
{
	const char *v;

	if (cli_args_opt(a, "--disorder", &v))
		c->disorder_ms =
		    cli_parse_u64(a->cmd, "--disorder", v, 0, 1000000000000ull);
	else if (cli_args_opt(a, "--lateness", &v))
		c->lateness_ms =
		    !strcmp(v, "none")
			? -1
			: (int64_t)cli_parse_u64(a->cmd, "--lateness", v, 0,
						 1000000000000ull);
	else if (cli_args_opt(a, "--admit-late", NULL))
		c->admit_late = true;
	else if (cli_args_opt(a, "--no-cleanup", NULL))
		c->no_cleanup = true;
	else
		return false;
	return true;
}

/* The lateness the run declares: --lateness, else the standard suite's
 * watermark delay on date_time (4 s), or the disorder when that is
 * larger (no row is then refused). */
static int64_t
nx_lateness(const struct nx_cfg *c)
{
	if (c->lateness_ms != -2)
		return c->lateness_ms;
	return c->disorder_ms > NX_STANDARD_LATENESS_MS
		   ? (int64_t)c->disorder_ms
		   : NX_STANDARD_LATENESS_MS;
}

/* One option of the numbers kind; false when argv[i] is not one. */
static bool
nx_number_opt(struct cli_args *a, struct nx_cfg *c)
{
	const char *v;

	if (cli_args_opt(a, "--workers", &v))
		c->workers =
		    (uint32_t)cli_parse_u64(a->cmd, "--workers", v, 1, 1024);
	else if (cli_args_opt(a, "--events", &v))
		c->events =
		    cli_parse_u64(a->cmd, "--events", v, 1, UINT64_MAX / 2);
	else if (cli_args_opt(a, "--seconds", &v))
		c->seconds =
		    cli_parse_double(a->cmd, "--seconds", v, 0.001, 1e6);
	else if (cli_args_opt(a, "--rate", &v))
		c->rate = cli_parse_double(a->cmd, "--rate", v, 1.0, 1e12);
	else if (cli_args_opt(a, "--batch", &v))
		c->batch =
		    (uint32_t)cli_parse_u64(a->cmd, "--batch", v, 1, 1 << 20);
	else if (cli_args_opt(a, "--seed", &v))
		c->seed = cli_parse_u64(a->cmd, "--seed", v, 0, UINT64_MAX);
	else if (cli_args_opt(a, "--input-threads", &v))
		c->input_threads = (uint32_t)cli_parse_u64(
		    a->cmd, "--input-threads", v, 0, 256);
	else if (cli_args_opt(a, "--string-pool", &v))
		c->string_pool = (uint32_t)cli_parse_u64(
		    a->cmd, "--string-pool", v, 0, 65536);
	else if (cli_args_opt(a, "--budget", &v))
		c->budget =
		    (uint32_t)cli_parse_u64(a->cmd, "--budget", v, 1, 1 << 20);
	else if (cli_args_opt(a, "--capacity", &v))
		c->capacity = cli_parse_capacity(a->cmd, "--capacity", v);
	/* The same option under the runtime's name for it
	 * (sc_runtime_opts.edge_capacity). */
	else if (cli_args_opt(a, "--edge-capacity", &v))
		c->capacity = cli_parse_capacity(a->cmd, "--edge-capacity", v);
	else
		return false;
	return true;
}

/* Parse argv; exits 2 on a bad argument, returns false after --help. */
static bool
nx_parse(int argc, char **argv, struct nx_cfg *c)
{
	struct cli_args a = {.cmd = "run", .argc = argc, .argv = argv, .i = 0};
	const char *v;

	nx_defaults(c);
	while (a.i < argc) {
		if (cli_args_opt(&a, "--help", NULL) ||
		    cli_args_opt(&a, "-h", NULL)) {
			(void)fputs(usage_run_nexmark, stdout);
			return false;
		} else if (cli_args_opt(&a, "--version", NULL)) {
			cli_version_print();
			return false;
		} else if (cli_args_opt(&a, "--workload", &v)) {
			(void)v; /* nexmark: how we got here */
		} else if (cli_args_opt(&a, "--query", &v)) {
			c->query = v;
		} else if (cli_args_opt(&a, "--placement", &v)) {
			if (strlen(v) >= sizeof(c->placement))
				cli_die_usage("run",
					      "--placement: '%s' too long", v);
			strcpy(c->placement, v);
		} else if (cli_args_opt(&a, "--check", NULL)) {
			c->check = true;
		} else if (cli_args_opt(&a, "--quiet", NULL)) {
			c->quiet = true;
		} else if (cli_args_opt(&a, "--preload", NULL)) {
			c->preload = true;
		} else if (cli_args_opt(&a, "--plant-difference", NULL)) {
			c->plant = true;
		} else if (cli_args_opt(&a, "--dump", &v)) {
			c->dump = v;
		} else if (cli_args_opt(&a, "--from", &v)) {
			c->from = v;
		} else if (cli_args_opt(&a, "--side-input", &v)) {
			c->side_input = v;
		} else if (cli_args_opt(&a, "--sink", &v)) {
			c->sink = v;
		} else if (cli_args_opt(&a, "--proc-clock", &v)) {
			if (sc_proctime_parse(v, &c->clock) != 0)
				cli_die_usage("run", "--proc-clock: %s",
					      sc_errdetail());
			c->clock_text = v;
		} else if (cli_args_opt(&a, "--json", &v)) {
			c->json = v;
		} else if (cli_args_opt(&a, "--csv", &v)) {
			c->csv = v;
		} else if (cli_args_opt(&a, "--trace", &v)) {
			c->trace = v;
		} else if (!nx_number_opt(&a, c) && !nx_late_opt(&a, c) &&
			   !cli_units_parse_opt(&a, &c->units,
						&c->units_every)) {
			cli_die_usage("run",
				      "unknown argument '%s' (see "
				      "--workload nexmark --help)",
				      argv[a.i]);
		}
	}
	if (c->events && c->seconds > 0)
		cli_die_usage("run",
			      "--events and --seconds: give one, not both");
	if (c->preload && (c->seconds > 0 || (!c->events && !c->from)))
		cli_die_usage("run",
			      "--preload makes every event before the run: "
			      "give --events N (or --from DIR), not a time");
	if (c->preload && c->input_threads)
		cli_die_usage("run",
			      "--preload makes the input on the host before "
			      "the run; --input-threads makes it on threads "
			      "during the run: give one, not both");
	if (c->preload && c->dump)
		cli_die_usage("run",
			      "--preload and --dump: the dump writes each "
			      "chunk as it is submitted; give one, not both");
	if (!c->events && c->seconds <= 0 && !c->from)
		c->seconds = 3.0;
	if (c->clock_text && strcmp(c->query, "q12") != 0)
		cli_die_usage("run",
			      "--proc-clock is q12's processing time; %s "
			      "reads none",
			      c->query);
	/* Threads make the generator's chunks out of order, so their
	 * readings would be; a replay (--from) carries its own. */
	if (!strcmp(c->query, "q12") && c->input_threads && !c->from)
		cli_die_usage("run",
			      "q12 stamps each chunk with the time the host "
			      "takes it: not with --input-threads");
	if (c->side_input && strcmp(c->query, "q13") != 0)
		cli_die_usage("run",
			      "--side-input is q13's table; %s reads none",
			      c->query);
	if (c->sink && strcmp(c->query, "q10") != 0)
		cli_die_usage("run",
			      "--sink writes q10's partitioned files; %s has "
			      "none",
			      c->query);
	if (c->input_threads && c->dump)
		cli_die_usage("run",
			      "--input-threads makes the generator's events on "
			      "threads of their own; --dump writes them on the "
			      "host: give one, not both");
	return true;
}

/* --- input ------------------------------------------------------------------
 */

static const int time_col[SC_NEXMARK_KINDS] = {
    SC_NXP_DATE_TIME, SC_NXA_DATE_TIME, SC_NXB_DATE_TIME};

/* Read DIR's file of each stream the query reads, every one whole before
 * anything is submitted. A bad file is exit 2 (the message names file,
 * line and column); one that cannot be read is exit 2 too. */
static int
nx_load(struct nx_run *x)
{
	uint64_t t0 = sc_bench_now_ns();

	for (int k = 0; k < SC_NEXMARK_KINDS; k++) {
		const char *const *cols;
		char path[4096];
		int rc;

		if (sc_nexmark_query_input(x->q, k) < 0)
			continue;
		(void)snprintf(path, sizeof(path), "%s/%s.csv", x->cfg->from,
			       sc_nexmark_kind_name(k));
		/* --input-threads: that many threads read each file. */
		(void)sc_nexmark_query_input_columns(x->q, k, &cols);
		rc = sc_csv_read_file_threads(path, &x->schema[k], cols, 0,
					      x->cfg->input_threads,
					      &x->src.rows[k], NULL);
		if (rc == SC_EINVAL || rc == SC_EIO) {
			(void)fprintf(stderr, "subcirc run: --from: %s\n",
				      sc_errdetail());
			return CLI_EXIT_USAGE;
		}
		if (rc)
			return cli_lib_error("sc_csv_read_file", rc);
		x->src.loaded[k] = true;
		x->src.total += x->src.rows[k].n;
	}
	x->read_ns = sc_bench_now_ns() - t0;
	return 0;
}

/* The stream whose next row is the earliest (ties: person, auction,
 * bid, as the generator orders a block), or -1 when all are done. */
static int
nx_replay_next(const struct nx_source *s)
{
	int best = -1;
	int64_t bt = 0;

	for (int k = 0; k < SC_NEXMARK_KINDS; k++) {
		const struct sc_csv_rows *r = &s->rows[k];
		int64_t t;

		if (!s->loaded[k] || s->pos[k] >= r->n)
			continue;
		t = sc_dec_i64(r->rows[s->pos[k] * r->ncols + time_col[k]]);
		if (best < 0 || t < bt) {
			best = k;
			bt = t;
		}
	}
	return best;
}

/* One event into the builders (and the dump): from the generator or the
 * replay. Returns 0, 1 at the end of a replay, or an exit code. */
static int
nx_event(struct nx_run *x, bool dump)
{
	struct sc_nexmark_event ev;
	uint64_t wide[SC_NXB_NCOLS + 1];
	const uint64_t *row;
	int k, rc;

	if (x->src.gen) {
		if ((rc = sc_nexmark_next(x->src.gen, &ev)) != 0)
			return cli_lib_error("sc_nexmark_next", rc);
		k = ev.kind;
		row = ev.row;
		if (x->schema[k].ncols > sc_nexmark_ncols(k)) { /* p_time */
			memcpy(wide, row, sc_nexmark_ncols(k) * sizeof(*row));
			wide[SC_NXB_P_TIME] = sc_enc_i64(x->p_time);
			row = wide;
		}
	} else {
		if ((k = nx_replay_next(&x->src)) < 0)
			return 1;
		row = x->src.rows[k].rows +
		      x->src.pos[k]++ * x->src.rows[k].ncols;
	}
	if (dump && x->pend[k] &&
	    (rc = sc_csv_write_row(x->pend[k], &x->schema[k], row, NULL)) != 0)
		return cli_lib_error("writing the dump", rc);
	if (sc_nexmark_query_input(x->q, k) >= 0 &&
	    (rc = sc_batch_builder_push(&x->b[k], row, x->schema[k].ncols,
					1)) != 0)
		return cli_lib_error("sc_batch_builder_push", rc);
	return 0;
}

/* The next chunk of at most `n` events as batches (NULL: none); *made
 * says how many events. Returns 0 or an exit code. */
static int nx_chunk_made(struct nx_run *x, uint64_t n, bool dump,
			 struct sc_batch **out, uint64_t *made);

/* nx_chunk_made, its CPU time counted as the input's: two clock reads a
 * chunk of --batch events. */
static int
nx_chunk(struct nx_run *x, uint64_t n, bool dump, struct sc_batch **out,
	 uint64_t *made)
{
	uint64_t t0 = sc_bench_cpu_ns();
	int rc = nx_chunk_made(x, n, dump, out, made);

	x->input_cpu_ns += sc_bench_cpu_ns() - t0;
	return rc;
}

/* q12: the chunk's processing time into x->p_time. The run reads the
 * clock and records the reading; the check's replay takes the recorded
 * one, so both stamp each chunk alike however the clock moved since.
 * Returns 0 or an exit code. */
static int
nx_chunk_time(struct nx_run *x)
{
	int rc;

	if (x->replaying) {
		if (x->next_time >= x->ntimes)
			return cli_lib_error("--check: a chunk the run did not "
					     "make",
					     SC_EINVAL);
		x->p_time = x->times[x->next_time++];
		return 0;
	}
	if (x->ntimes == x->cap_times) {
		size_t cap = x->cap_times ? 2 * x->cap_times : 1024;
		int64_t *t = realloc(x->times, cap * sizeof(*t));

		if (!t)
			return cli_lib_error("recording the chunks' times",
					     SC_ENOMEM);
		x->times = t;
		x->cap_times = cap;
	}
	if ((rc = sc_proctime_read(&x->clock, &x->p_time)) != 0)
		return cli_lib_error("sc_proctime_read", rc);
	x->times[x->ntimes++] = x->p_time;
	return 0;
}

static int
nx_chunk_made(struct nx_run *x, uint64_t n, bool dump, struct sc_batch **out,
	      uint64_t *made)
{
	int rc = 0;

	*made = 0;
	for (int k = 0; k < SC_NEXMARK_KINDS; k++) {
		sc_batch_builder_clear(&x->b[k]);
		out[k] = NULL;
	}
	/* q12: one reading a chunk, the time the host takes its events. */
	if (x->src.gen && sc_nexmark_query_proctime(x->q) &&
	    (rc = nx_chunk_time(x)) != 0)
		return rc;
	for (int k = 0; k < SC_NEXMARK_KINDS; k++) {
		if (dump && x->dump[k] &&
		    !(x->pend[k] =
			  open_memstream(&x->pend_buf[k], &x->pend_len[k])))
			return cli_lib_error("open_memstream", SC_ENOMEM);
	}
	while (*made < n && (rc = nx_event(x, dump)) == 0)
		(*made)++;
	if (rc > 1 || rc < 0)
		return rc;
	for (int k = 0; k < SC_NEXMARK_KINDS; k++) {
		if (!sc_batch_builder_count(&x->b[k]))
			continue;
		if ((rc = sc_batch_builder_finish(&x->b[k], &out[k])) != 0) {
			for (int j = 0; j < k; j++)
				sc_batch_release(out[j]);
			return cli_lib_error("sc_batch_builder_finish", rc);
		}
	}
	return 0;
}

/* --dump: the chunk's rows of kind k go to the dump when `keep` (their
 * submission was taken), and are dropped when it was refused: a refused
 * row is no input of the run, and the dump replays the run's input.
 * Returns 0 or an exit code. */
static int
nx_dump_keep(struct nx_run *x, int k, bool keep)
{
	int rc = 0;

	if (!x->pend[k])
		return 0;
	if (fclose(x->pend[k]) != 0)
		rc = cli_lib_error("writing the dump", SC_ENOMEM);
	x->pend[k] = NULL;
	if (!rc && keep && x->pend_len[k] &&
	    fwrite(x->pend_buf[k], 1, x->pend_len[k], x->dump[k]) !=
		x->pend_len[k])
		rc = cli_lib_error("writing the dump", SC_EIO);
	free(x->pend_buf[k]);
	x->pend_buf[k] = NULL;
	x->pend_len[k] = 0;
	return rc;
}

/* Back to the first event (for the check's replay): a new generator.
 * The old one is kept (its references keep the texts of its bounded sets
 * and pools alive), so those the new one interns again get the ids they
 * had; a fresh text gets its old id while the runtime's state (its output
 * included) still holds it. */
static int
nx_rewind(struct nx_run *x)
{
	struct sc_nexmark_opts o;
	struct sc_nexmark *gen = NULL;
	int rc;

	memset(x->src.pos, 0, sizeof(x->src.pos));
	if (x->cfg->from)
		return 0;
	sc_nexmark_opts_default(&o);
	o.seed = x->cfg->seed;
	o.string_pool = x->cfg->string_pool;
	o.disorder_ms = x->cfg->disorder_ms;
	if ((rc = sc_nexmark_create(&o, x->symbols, &gen)) != 0)
		return cli_lib_error("sc_nexmark_create", rc);
	sc_nexmark_destroy(x->src.old);
	x->src.old = x->src.gen;
	x->src.gen = gen;
	return 0;
}

/* --- setup
 * -------------------------------------------------------------------- */

static void
nx_teardown(struct nx_run *x)
{
	cli_ranks_runtime_destroy(x->rt, x->mpi);
	sc_partsink_destroy(x->sink); /* what was not committed is dropped */
	x->sink = NULL;
	sc_placement_destroy(x->p);
	sc_nexmark_par_destroy(x->par);
	for (size_t i = x->next_pre; i < x->npre; i++)
		for (int k = 0; k < SC_NEXMARK_KINDS; k++)
			sc_batch_release(x->pre[i].b[k]);
	free(x->pre);
	free(x->times);
	sc_nexmark_destroy(x->src.gen);
	sc_nexmark_destroy(x->src.old);
	for (int k = 0; k < SC_NEXMARK_KINDS; k++) {
		sc_csv_rows_fini(&x->src.rows[k]);
		sc_batch_builder_fini(&x->b[k]);
		(void)nx_dump_keep(x, k, false);
	}
	(void)sc_nexmark_query_destroy(x->q);
	sc_symtab_destroy(x->symbols);
}

/* The dump's input files, created before the run (exit 2 if one cannot
 * be), with their header rows. */
static int
nx_open_dump(struct nx_run *x)
{
	const char *dir = x->cfg->dump;

	if (!dir || cli_ranks_rank() != 0)
		return 0; /* across ranks, rank 0 (the host) writes it */
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		char msg[128] = "";

		(void)strerror_r(errno, msg, sizeof(msg));
		cli_die_usage("run", "--dump: cannot create '%s': %s", dir,
			      msg);
	}
	{
		char path[4096];

		/* The query's output, written after the run, is refused now
		 * when another output names it. */
		(void)snprintf(path, sizeof(path), "%s/%s.csv", dir,
			       sc_nexmark_query_name(x->q));
		cli_claim_out("run", "--dump", path);
	}
	for (int k = 0; k < SC_NEXMARK_KINDS; k++) {
		const char *const *cols;
		char path[4096];
		size_t n;

		if (!x->src.gen && !x->src.loaded[k])
			continue;
		(void)snprintf(path, sizeof(path), "%s/%s.csv", dir,
			       sc_nexmark_kind_name(k));
		x->dump[k] = cli_open_out("run", "--dump", path);
		n = sc_nexmark_query_input_columns(x->q, k, &cols);
		(void)sc_csv_write_header(x->dump[k], cols, n, false);
	}
	return 0;
}

static struct sc_schema nx_out_schema(const struct nx_run *x);

/* --sink: a row's partition is its date_time's; every worker running a
 * replica of the output writes its deltas with its waterline there. */
static int
nx_sink_delta(void *ctx, int node, const struct sc_batch *delta)
{
	struct nx_run *x = ctx;
	int64_t w = SC_WATERLINE_NONE;
	const void *src = NULL;
	int rc = sc_circuit_delta_waterline(SC_NEXMARK_Q10_TIME_COL, &w, &src);

	(void)node;
	if (rc == SC_ENOENT) /* no lateness: the partitions close at the end */
		w = SC_WATERLINE_NONE;
	else if (rc)
		return rc;
	return sc_partsink_write(x->sink, delta, src, w);
}

static int
nx_open_sink(struct nx_run *x)
{
	int out = sc_nexmark_query_output(x->q);
	struct sc_partsink_opts o = {.dir = x->cfg->sink,
				     .time_col = SC_NEXMARK_Q10_TIME_COL,
				     .width_ms = SC_NEXMARK_Q10_WIDTH_MS,
				     .format = SC_NEXMARK_Q10_FORMAT};
	const char *const *cols;
	int rc;

	if (!x->cfg->sink)
		return 0;
	(void)sc_nexmark_query_columns(x->q, &cols);
	x->sink_schema = nx_out_schema(x);
	o.schema = &x->sink_schema;
	o.cols = cols;
	o.sources = sc_placement_shards(
	    x->p, (uint32_t)sc_placement_unit_of(x->p, out));
	if (sc_partsink_create(&o, &x->sink) != 0) {
		(void)fprintf(stderr, "subcirc run: --sink: %s\n",
			      sc_errdetail());
		return CLI_EXIT_USAGE;
	}
	if ((rc = sc_runtime_on_delta(x->rt, out, nx_sink_delta, x)) != 0)
		return cli_lib_error("sc_runtime_on_delta", rc);
	return 0;
}

static int
nx_setup(struct nx_run *x, const struct nx_cfg *cfg)
{
	struct sc_runtime_opts ro = {.workers = cfg->workers,
				     .budget = cfg->budget,
				     .edge_capacity = cfg->capacity,
				     .timeline = cfg->timeline,
				     .no_cleanup = cfg->no_cleanup};
	struct sc_nexmark_query_opts qo;
	const char *place;
	int rc;

	x->cfg = cfg;
	x->clock = cfg->clock;
	if ((rc = sc_symtab_create(&x->symbols)) != 0)
		return cli_lib_error("sc_symtab_create", rc);
	/* The output keeps its integral only when something reads it. */
	sc_nexmark_query_opts_default(&qo);
	qo.flags = cfg->check || cfg->dump ? 0 : SC_NEXMARK_QUERY_STREAM;
	qo.lateness_ms = nx_lateness(cfg);
	if (cfg->admit_late && qo.lateness_ms < 0)
		cli_die_usage("run", "--admit-late without a lateness (give "
				     "--disorder or --lateness)");
	if (cfg->admit_late)
		qo.flags |= SC_NEXMARK_QUERY_ADMIT;
	qo.side_input = cfg->side_input;
	rc = sc_nexmark_query_create_opts(cfg->query, x->symbols, &qo, &x->q);
	if (rc == SC_ENOENT)
		cli_die_usage("run", "--query: %s", sc_errdetail());
	if (cfg->side_input && (rc == SC_EINVAL || rc == SC_EIO)) {
		(void)fprintf(stderr, "subcirc run: --side-input: %s\n",
			      sc_errdetail());
		return CLI_EXIT_USAGE;
	}
	if (rc)
		return cli_lib_error("sc_nexmark_query_create", rc);
	for (int k = 0; k < SC_NEXMARK_KINDS; k++) {
		(void)sc_nexmark_query_schema(x->q, k, &x->schema[k]);
		(void)sc_batch_builder_init(&x->b[k], x->schema[k].ncols);
	}
	place = cfg->placement[0] ? cfg->placement
				  : sc_nexmark_query_placement(x->q);
	cli_check_placement_of("run", "--placement",
			       sc_nexmark_query_graph(x->q), place, cfg->seed);
	/* MPI starts here when the placement spans ranks. */
	(void)cli_ranks_start_placement("run", sc_nexmark_query_graph(x->q),
					place, cfg->seed);
	if ((rc = sc_placement_parse(sc_nexmark_query_graph(x->q), place,
				     cfg->seed, &x->p)) != 0)
		return cli_lib_error("sc_placement_parse", rc);
	if (cfg->from) {
		if ((rc = nx_load(x)) != 0)
			return rc;
	} else if ((rc = nx_rewind(x)) != 0) {
		return rc;
	}
	if ((rc = nx_open_dump(x)) != 0)
		return rc;
	if ((rc = cli_ranks_runtime_create(sc_nexmark_query_graph(x->q), x->p,
					   &ro, 0, &x->rt, &x->mpi)) != 0)
		return cli_lib_error("sc_runtime_create", rc);
	return nx_open_sink(x);
}

/* --- the run ----------------------------------------------------------------
 */

static double
nx_cpu_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static long
nx_peak_rss_kb(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : 0;
}

/* A dead unit ends the run (exit 3, naming it). */
static int
nx_check_alive(struct nx_run *x)
{
	return cli_runtime_check_alive(x->rt);
}

static int
nx_submit(struct nx_run *x, int input, struct sc_batch *b)
{
	struct sc_timeline *tl = x->cfg->timeline;
	uint64_t rows = tl ? sc_batch_count(b) : 0;
	uint64_t t = tl ? sc_bench_now_ns() : 0;
	int rc = sc_runtime_submit(x->rt, input, b);

	cli_trace_host(tl, CLI_TRACE_SUBMIT, t, rows);
	if (rc == SC_EFULL) {
		x->efull++;
		t = tl ? sc_bench_now_ns() : 0;
		rc = sc_runtime_submit_wait(x->rt, input, b, NX_STUCK_NS);
		cli_trace_host(tl, CLI_TRACE_WAIT_ROOM, t, rows);
	}
	if (rc == SC_ELATE) {
		/* Refused whole, nothing applied: reported, its rows counted
		 * (the late ones and those dropped with them), and the run
		 * goes on (the check's single circuit refuses the same). */
		x->refused_rows += sc_batch_count(b);
		if (!x->late_submits++ && !x->cfg->quiet)
			(void)fprintf(cli_report_text(), "  late: %s\n",
				      sc_errdetail());
		return 0;
	}
	if (rc && nx_check_alive(x) == 0)
		return cli_lib_error("sc_runtime_submit", rc);
	return rc ? CLI_EXIT_LIBRARY : 0;
}

static void
nx_nap(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000ull),
			      (long)(ns % 1000000000ull)};

	(void)nanosleep(&ts, NULL);
}

/* Open loop: wait until the next chunk is due at --rate (never past the
 * run's end). */
static int
nx_pace(struct nx_run *x, uint64_t end)
{
	uint64_t due, now;
	int rc;

	if (x->cfg->rate <= 0)
		return 0;
	due = x->t0 + (uint64_t)((double)x->events / x->cfg->rate * 1e9);
	due = due < end ? due : end;
	while ((now = sc_bench_now_ns()) < due && !cli_signal_caught()) {
		nx_nap(due - now < 10000000ull ? due - now : 10000000ull);
		if ((rc = nx_check_alive(x)) != 0)
			return rc;
	}
	return 0;
}

/* The share of the run done: by its seconds, its events or the rows of
 * the files replayed. */
static double
nx_share(const struct nx_run *x, double t)
{
	if (x->cfg->seconds > 0)
		return t / x->cfg->seconds;
	if (x->cfg->events)
		return (double)x->events / (double)x->cfg->events;
	if (x->src.total)
		return (double)x->events / (double)x->src.total;
	return -1;
}

static void
nx_progress(struct nx_run *x, uint64_t now)
{
	struct sc_runtime_stats st;
	struct cli_sample smp = {.p50_us = NAN, .p99_us = NAN};
	double dt = (double)(now - x->last_ns) / 1e9;

	sc_runtime_stats(x->rt, &st);
	smp.t = (double)(now - x->t0) / 1e9;
	smp.events = x->events;
	smp.eps = (double)(x->events - x->last_events) / dt;
	smp.fill = cli_edge_fill(&st, x->cfg->capacity);
	(void)cli_sample_push(&x->s, &x->ns, &x->cap_s, &smp);
	cli_progress_line(smp.t, nx_share(x, smp.t),
			  "%10.0f ev/s  events %12" PRIu64
			  "  edge fill %5.1f%%  turns %" PRIu64,
			  smp.eps, smp.events, 100.0 * smp.fill, st.turns);
	x->last_ns = now;
	x->last_events = x->events;
}

/* The feeding is over: its events, its seconds, or a signal (which the
 * run ends as its end would: drained, summed up and written). */
static bool
nx_done(const struct nx_run *x, uint64_t now, uint64_t end)
{
	return (x->cfg->events && x->events >= x->cfg->events) || now >= end ||
	       cli_signal_caught();
}

/* --input-threads: the threads start making chunks of --batch events,
 * --events in all (no end with --seconds), of the streams the query
 * reads. */
static int
nx_par_start(struct nx_run *x)
{
	const struct nx_cfg *c = x->cfg;
	struct sc_nexmark_opts o;
	uint32_t kinds = 0;
	int rc;

	for (int k = 0; k < SC_NEXMARK_KINDS; k++)
		if (sc_nexmark_query_input(x->q, k) >= 0)
			kinds |= 1u << k;
	sc_nexmark_opts_default(&o);
	o.seed = c->seed;
	o.string_pool = c->string_pool;
	o.disorder_ms = c->disorder_ms;
	rc = sc_nexmark_par_create(&o, x->symbols, c->input_threads, c->batch,
				   c->events, kinds, &x->par);
	return rc ? cli_lib_error("sc_nexmark_par_create", rc) : 0;
}

/* The next chunk from the input threads: its batches into b (the chunk
 * keeps its texts' references until sc_nexmark_par_done). */
static int
nx_par_chunk(struct nx_run *x, struct sc_batch **b, uint64_t *made,
	     struct sc_nexmark_chunk **ch)
{
	int rc = sc_nexmark_par_next(x->par, ch);

	*made = 0;
	for (int k = 0; k < SC_NEXMARK_KINDS; k++)
		b[k] = NULL;
	if (rc == 1)
		return 0; /* every event made: the loop ends on its count */
	if (rc)
		return cli_lib_error("sc_nexmark_par_next", rc);
	for (int k = 0; k < SC_NEXMARK_KINDS; k++) {
		b[k] = (*ch)->b[k];
		(*ch)->b[k] = NULL;
	}
	*made = (*ch)->events;
	return 0;
}

/* --preload: every chunk of the run made and kept before its clock
 * starts, with a progress line a second. A signal stops the making (and
 * the run then submits nothing). Returns 0 or an exit code. */
static int
nx_preload(struct nx_run *x)
{
	const struct nx_cfg *c = x->cfg;
	uint64_t t0 = sc_bench_now_ns(), c0 = sc_bench_cpu_ns(), last = t0;

	cli_progress_begin(cli_report_text(), c->quiet);
	while (!cli_signal_caught() &&
	       (!c->events || x->pre_events < c->events)) {
		uint64_t want = c->batch, made = 0, now;
		struct nx_pre *pc;
		int rc;

		if (c->events && c->events - x->pre_events < want)
			want = c->events - x->pre_events;
		if (x->npre == x->cap_pre) {
			size_t cap = x->cap_pre ? 2 * x->cap_pre : 1024;
			struct nx_pre *p = realloc(x->pre, cap * sizeof(*p));

			if (!p)
				return cli_lib_error("--preload", SC_ENOMEM);
			x->pre = p;
			x->cap_pre = cap;
		}
		pc = &x->pre[x->npre];
		if ((rc = nx_chunk_made(x, want, false, pc->b, &made)) != 0)
			return rc;
		if (!made)
			break; /* the replay is over */
		pc->events = made;
		x->npre++;
		x->pre_events += made;
		now = sc_bench_now_ns();
		if (now - last >= 1000000000ull) {
			double t = (double)(now - t0) / 1e9;

			cli_progress_line(
			    t,
			    c->events
				? (double)x->pre_events / (double)c->events
				: -1,
			    "%10.0f ev/s made before the run  events "
			    "%12" PRIu64,
			    (double)x->pre_events / t, x->pre_events);
			last = now;
		}
	}
	cli_progress_end();
	x->pre_ns = sc_bench_now_ns() - t0;
	x->pre_cpu_ns = sc_bench_cpu_ns() - c0;
	return 0;
}

/* The next preloaded chunk into b (none left: *made is 0). */
static void
nx_pre_chunk(struct nx_run *x, struct sc_batch **b, uint64_t *made)
{
	*made = 0;
	for (int k = 0; k < SC_NEXMARK_KINDS; k++)
		b[k] = NULL;
	if (x->next_pre == x->npre)
		return;
	for (int k = 0; k < SC_NEXMARK_KINDS; k++)
		b[k] = x->pre[x->next_pre].b[k];
	*made = x->pre[x->next_pre++].events;
}

/* Submit chunks until the run's end (or the replay's). */
static int
nx_loop(struct nx_run *x)
{
	const struct nx_cfg *c = x->cfg;
	uint64_t end =
	    c->seconds > 0 ? x->t0 + (uint64_t)(c->seconds * 1e9) : UINT64_MAX;
	int rc;

	if (c->input_threads && !c->from && (rc = nx_par_start(x)) != 0)
		return rc;
	while (!nx_done(x, sc_bench_now_ns(), end)) {
		struct sc_batch *b[SC_NEXMARK_KINDS];
		struct sc_nexmark_chunk *ch = NULL;
		uint64_t want = c->batch, made = 0, now;

		if ((rc = nx_pace(x, end)) != 0)
			return rc;
		if (nx_done(x, sc_bench_now_ns(), end))
			break; /* the pace waited up to the end */
		if (c->events && c->events - x->events < want)
			want = c->events - x->events;
		if (c->preload)
			nx_pre_chunk(x, b, &made);
		else
			rc = x->par ? nx_par_chunk(x, b, &made, &ch)
				    : nx_chunk(x, want, true, b, &made);
		if (rc)
			return rc;
		for (int k = 0; k < SC_NEXMARK_KINDS; k++) {
			uint64_t refused = x->late_submits;

			if (b[k] && !rc)
				rc = nx_submit(
				    x, sc_nexmark_query_input(x->q, k), b[k]);
			if (!rc)
				rc = nx_dump_keep(x, k,
						  x->late_submits == refused);
			sc_batch_release(b[k]);
		}
		/* The runtime holds the texts it keeps (the preloaded
		 * chunks' are held for them until the loop is over). */
		if (x->par)
			sc_nexmark_par_done(x->par, ch);
		else if (!c->preload)
			sc_nexmark_release_texts(x->src.gen);
		if (rc)
			return rc;
		if (!made)
			return 0; /* the replay is over */
		x->events += made;
		x->chunks++;
		now = sc_bench_now_ns();
		if (now - x->last_ns >= 1000000000ull)
			nx_progress(x, now);
		if (x->cfg->timeline)
			cli_trace_sample(x->cfg->timeline, x->rt, now,
					 &x->trace_ns, &x->trace_events,
					 x->events);
		cli_units_tick(c->units_every, x->rt, x->t0, now);
		if (x->chunks % 64 == 0 && (rc = nx_check_alive(x)) != 0)
			return rc;
	}
	return 0;
}

/* --- after the run ---------------------------------------------------------
 */

/* The output's schema, with the run's table to print symbols. */
static struct sc_schema
nx_out_schema(const struct nx_run *x)
{
	struct sc_schema s = *sc_graph_schema(sc_nexmark_query_graph(x->q),
					      sc_nexmark_query_output(x->q));

	s.symbols = x->symbols;
	return s;
}

/* The single circuit fed the same input (chunk by chunk) into *out. */
static int
nx_single(struct nx_run *x, struct sc_batch **out)
{
	struct sc_circuit *c = NULL;
	uint64_t done = 0;
	int rc;

	if ((rc = nx_rewind(x)) != 0)
		return rc;
	x->replaying = true;
	x->next_time = 0;
	if ((rc = sc_circuit_create(sc_nexmark_query_graph(x->q), &c)) != 0)
		return cli_lib_error("sc_circuit_create", rc);
	while (done < x->events) {
		struct sc_batch *b[SC_NEXMARK_KINDS];
		uint64_t want = x->events - done < x->cfg->batch
				    ? x->events - done
				    : x->cfg->batch,
			 made = 0;

		if (x->cfg->plant && done + want >= x->events && done > 0)
			break; /* --plant-difference: drop the last chunk */

		if ((rc = nx_chunk(x, want, false, b, &made)) != 0)
			break;
		for (int k = 0; k < SC_NEXMARK_KINDS; k++) {
			if (b[k] && !rc &&
			    (rc = sc_circuit_feed(
				 c, sc_nexmark_query_input(x->q, k), b[k])) !=
				0 &&
			    rc != SC_ELATE) /* refused as the run's was */
				rc = cli_lib_error("sc_circuit_feed", rc);
			if (rc == SC_ELATE)
				rc = 0;
			sc_batch_release(b[k]);
		}
		sc_nexmark_release_texts(x->src.gen);
		if (!rc && (rc = sc_circuit_step(c)) != 0)
			rc = cli_lib_error("sc_circuit_step", rc);
		if (rc || !made)
			break;
		done += made;
	}
	if (!rc && (rc = sc_circuit_integral(c, sc_nexmark_query_output(x->q),
					     out)) != 0)
		rc = cli_lib_error("sc_circuit_integral", rc);
	sc_circuit_destroy(c);
	return rc;
}

/* The first row where a and b differ, described into why. */
static void
nx_describe_difference(struct nx_run *x, const struct sc_batch *got,
		       const struct sc_batch *want)
{
	struct sc_schema s = nx_out_schema(x);
	size_t i = 0, n = sc_batch_count(got) < sc_batch_count(want)
			      ? sc_batch_count(got)
			      : sc_batch_count(want);
	char row[256] = "";

	while (
	    i < n &&
	    sc_row_eq(sc_batch_row(got, i), sc_batch_row(want, i), s.ncols) &&
	    sc_batch_weight(got, i) == sc_batch_weight(want, i))
		i++;
	if (i < sc_batch_count(want))
		(void)sc_schema_format_row(&s, sc_batch_row(want, i), row,
					   sizeof(row));
	(void)snprintf(x->why, sizeof(x->why),
		       "%zu rows, the single circuit %zu; first difference at "
		       "row %zu %s",
		       sc_batch_count(got), sc_batch_count(want), i, row);
}

static int
nx_write_output(struct nx_run *x, const struct sc_batch *got)
{
	struct sc_schema s = nx_out_schema(x);
	const char *const *cols;
	char path[4096];
	FILE *f;
	int rc;

	(void)sc_nexmark_query_columns(x->q, &cols);
	(void)snprintf(path, sizeof(path), "%s/%s.csv", x->cfg->dump,
		       sc_nexmark_query_name(x->q));
	f = cli_open_out("run", "--dump", path);
	rc = sc_csv_write_batch(f, &s, cols, got);
	if (cli_close_out("run", path, f) || rc)
		return rc ? cli_lib_error("writing the dump", rc)
			  : CLI_EXIT_LIBRARY;
	return 0;
}

static int
nx_finish(struct nx_run *x)
{
	struct sc_batch *got = NULL, *want = NULL;
	int rc = 0;

	x->ok = true;
	sc_runtime_stats(x->rt, &x->st);
	cli_units_longest(x->rt, &x->longest, &x->nlongest);
	for (int k = 0; k < SC_NEXMARK_KINDS && !rc; k++)
		if (x->dump[k]) {
			rc = cli_close_out("run", "the input dump", x->dump[k]);
			x->dump[k] = NULL;
		}
	if (rc)
		return rc;
	/* Idle: every row is in, so every partition is whole. */
	if (x->sink && (rc = sc_partsink_finish(x->sink)) != 0)
		return cli_lib_error("--sink", rc);
	sc_partsink_stats(x->sink, &x->sink_st);
	if (!x->cfg->check && !x->cfg->dump)
		return 0;
	if ((rc = sc_runtime_integral(x->rt, sc_nexmark_query_output(x->q),
				      &got)) != 0 ||
	    !got)
		return cli_lib_error("sc_runtime_integral",
				     rc ? rc : SC_ENOMEM);
	if (cli_ranks_rank() != 0) { /* its part went to rank 0 */
		sc_batch_release(got);
		return 0;
	}
	if (x->cfg->dump && (rc = nx_write_output(x, got)) != 0)
		goto out;
	if (x->cfg->check && (rc = nx_single(x, &want)) == 0 && want &&
	    !sc_batch_equal(got, want)) {
		x->ok = false;
		nx_describe_difference(x, got, want);
	}
out:
	sc_batch_release(got);
	sc_batch_release(want);
	return rc;
}

/* Late rows over the query's inputs (sc_runtime_late). */
static void
nx_late_rows(const struct nx_run *x, uint64_t *admitted, uint64_t *refused)
{
	*admitted = *refused = 0;
	for (int k = 0; k < SC_NEXMARK_KINDS; k++) {
		int in = sc_nexmark_query_input(x->q, k);
		uint64_t a = 0, r = 0;

		if (in >= 0 && sc_runtime_late(x->rt, in, &a, &r) == 0) {
			*admitted += a;
			*refused += r;
		}
	}
}

/* What the summary and the report say, taken while the query and the
 * runtime are alive (the report is written after them, with the ranks'
 * figures). */
struct nx_figs {
	char query[16], placement[48];
	double seconds, cpu_s, eps, epc; /* events per s, per CPU-s */
	double input_cpu_s;		 /* of cpu_s, making the input */
	long rss_kb;			 /* peak */
	size_t sym_live, sym_bytes;	 /* the symbol table at the end */
	int64_t lateness_ms;		 /* declared; -1: none */
	uint64_t late_admitted, late_refused;
};

static void
nx_take_figs(const struct nx_run *x, struct nx_figs *f)
{
	f->seconds = (double)(x->t_end - x->t0) / 1e9;
	f->cpu_s = x->cpu_end - x->cpu0;
	f->input_cpu_s =
	    (double)(x->par ? sc_nexmark_par_cpu_ns(x->par) : x->input_run_ns) /
	    1e9;
	f->eps = f->seconds > 0 ? (double)x->events / f->seconds : 0;
	f->epc = f->cpu_s > 0 ? (double)x->events / f->cpu_s : 0;
	f->rss_kb = nx_peak_rss_kb();
	f->sym_live = sc_symtab_count(x->symbols);
	f->sym_bytes = sc_symtab_bytes(x->symbols);
	(void)snprintf(f->query, sizeof(f->query), "%s",
		       sc_nexmark_query_name(x->q));
	(void)snprintf(f->placement, sizeof(f->placement), "%s",
		       x->cfg->placement[0] ? x->cfg->placement
					    : sc_nexmark_query_placement(x->q));
	f->lateness_ms = sc_nexmark_query_lateness(x->q);
	nx_late_rows(x, &f->late_admitted, &f->late_refused);
}

static void
nx_summary(const struct nx_run *x, const struct nx_figs *f)
{
	FILE *o = cli_report_text();

	(void)fprintf(o,
		      "subcirc run: nexmark %s, placement %s (%u units, %u "
		      "edges), %u workers%s, batch %u%s\n",
		      f->query, f->placement, x->st.units, x->st.edges,
		      x->cfg->workers, cli_ranks_active() ? " per rank" : "",
		      x->cfg->batch, x->cfg->from ? ", from files" : "");
	if (cli_ranks_active())
		(void)fprintf(o,
			      "  across %d ranks (MPI), the host on rank 0; "
			      "turns and RSS are rank 0's\n",
			      cli_ranks_size());
	if (x->interrupted)
		(void)fprintf(o,
			      "  interrupted by %s: the figures are for what "
			      "ran\n",
			      cli_signal_name(x->interrupted));
	(void)fprintf(o,
		      "  events %" PRIu64 " in %.3f s: %.0f events/s, %.0f "
		      "events per CPU-second (%.2f CPU-s)\n",
		      x->events, f->seconds, f->eps, f->epc, f->cpu_s);
	if (x->cfg->from)
		(void)fprintf(o,
			      "  files read before the run in %.2f s by %u "
			      "thread%s\n",
			      (double)x->read_ns / 1e9,
			      x->cfg->input_threads > 1 ? x->cfg->input_threads
							: 1,
			      x->cfg->input_threads > 1 ? "s" : "");
	if (x->cfg->preload)
		(void)fprintf(o,
			      "  input made before the run by the host: "
			      "%" PRIu64 " events in %.2f s (%.2f CPU-s), "
			      "not in the run's figures\n",
			      x->pre_events, (double)x->pre_ns / 1e9,
			      (double)x->pre_cpu_ns / 1e9);
	else if (x->par)
		(void)fprintf(
		    o,
		    "  input made by %u thread%s (the host submits "
		    "it): %.2f CPU-s, %.0f%% of the run's CPU\n",
		    x->cfg->input_threads,
		    x->cfg->input_threads == 1 ? "" : "s", f->input_cpu_s,
		    f->cpu_s > 0 ? 100.0 * f->input_cpu_s / f->cpu_s : 0.0);
	else
		(void)fprintf(
		    o,
		    "  input made by 1 thread (the host): %.2f CPU-s, "
		    "%.0f%% of the run's CPU\n",
		    f->input_cpu_s,
		    f->cpu_s > 0 ? 100.0 * f->input_cpu_s / f->cpu_s : 0.0);
	(void)fprintf(o,
		      "  peak RSS %.1f MiB; turns %" PRIu64
		      ", submits that met a full edge %" PRIu64 "\n",
		      (double)f->rss_kb / 1024.0, x->st.turns, x->efull);
	(void)fprintf(o,
		      "  symbols live at the end %zu (%.1f MiB in the table)\n",
		      f->sym_live, (double)f->sym_bytes / 1048576.0);
	if (x->cfg->sink)
		(void)fprintf(o,
			      "  sink %s: %" PRIu64 " rows in %" PRIu64
			      " files committed (%" PRIu64
			      " partitions opened again by late rows)\n",
			      x->cfg->sink, x->sink_st.rows,
			      x->sink_st.committed, x->sink_st.reopened);
	if (x->cfg->check)
		(void)fprintf(o, "  output %s\n",
			      x->ok ? "equals the single circuit"
				    : "DIFFERS from the single circuit");
	if (!x->ok)
		(void)fprintf(o, "  %s\n", x->why);
	if (f->lateness_ms >= 0)
		(void)fprintf(
		    o,
		    "  lateness %" PRId64 " ms on date_time (disorder "
		    "%" PRIu64 " ms), cleanup %s: late rows admitted "
		    "%" PRIu64 ", refused %" PRIu64 " (in %" PRIu64
		    " submissions, refused whole: %" PRIu64 " rows, %" PRIu64
		    " on time dropped with the late)\n",
		    f->lateness_ms, x->cfg->disorder_ms,
		    x->cfg->no_cleanup ? "off" : "on", f->late_admitted,
		    f->late_refused, x->late_submits, x->refused_rows,
		    x->refused_rows - f->late_refused);
}

/* The run's configuration: every option's effective value. */
static void
nx_json_config(const struct nx_cfg *c, const struct nx_figs *f,
	       struct cli_json *j)
{
	cli_json_text(j, "query", f->query);
	cli_json_uint(j, "workers", c->workers);
	cli_json_text(j, "placement", f->placement);
	if (c->events)
		cli_json_uint(j, "events", c->events);
	else
		cli_json_null(j, "events");
	if (c->seconds > 0)
		cli_json_real(j, "seconds", c->seconds);
	else
		cli_json_null(j, "seconds");
	if (c->rate > 0)
		cli_json_real(j, "rate", c->rate);
	else
		cli_json_null(j, "rate");
	cli_json_uint(j, "batch", c->batch);
	cli_json_uint(j, "seed", c->seed);
	cli_json_uint(j, "string_pool", c->string_pool);
	cli_json_uint(j, "input_threads", c->input_threads);
	cli_json_bool(j, "preload", c->preload);
	cli_json_uint(j, "disorder_ms", c->disorder_ms);
	if (f->lateness_ms >= 0)
		cli_json_int(j, "lateness_ms", f->lateness_ms);
	else
		cli_json_null(j, "lateness_ms");
	cli_json_bool(j, "admit_late", c->admit_late);
	cli_json_bool(j, "no_cleanup", c->no_cleanup);
	cli_json_uint(j, "budget", c->budget);
	cli_json_uint(j, "capacity", c->capacity);
	cli_json_bool(j, "check", c->check);
	cli_json_bool(j, "plant_difference", c->plant);
	cli_json_text(j, "dump", c->dump);
	cli_json_text(j, "from", c->from);
	cli_json_text(j, "side_input", c->side_input);
	cli_json_text(j, "sink", c->sink);
	cli_json_text(j, "proc_clock",
		      strcmp(c->query, "q12") != 0 ? NULL
		      : c->clock_text		   ? c->clock_text
						   : "wall");
	cli_json_bool(j, "quiet", c->quiet);
	cli_json_bool(j, "units", c->units);
	if (c->units_every > 0)
		cli_json_real(j, "units_every", c->units_every);
	else
		cli_json_null(j, "units_every");
	cli_json_text(j, "json", c->json);
	cli_json_text(j, "csv", c->csv);
	cli_json_text(j, "trace", c->trace);
}

/* The report: configuration, the figures, the ranks' (or null), the
 * progress samples. */
static void
nx_json(struct cli_report *rep, const struct nx_run *x, const struct nx_figs *f,
	const struct cli_rank_figs *all, FILE *out)
{
	struct cli_json *j = &rep->j;

	cli_report_open(rep, out, x->interrupted);
	nx_json_config(x->cfg, f, j);
	cli_report_results(rep);
	cli_json_uint(j, "events", x->events);
	cli_json_uint(j, "batches", x->chunks);
	cli_json_real(j, "seconds", f->seconds);
	cli_json_real(j, "events_per_s", f->eps);
	cli_json_real(j, "events_per_cpu_s", f->epc);
	cli_json_real(j, "cpu_s", f->cpu_s);
	cli_json_open(j, "input", '{', true);
	cli_json_uint(j, "threads", x->par ? x->cfg->input_threads : 1);
	if (x->cfg->from)
		cli_json_real(j, "read_s", (double)x->read_ns / 1e9);
	else
		cli_json_null(j, "read_s");
	cli_json_real(j, "cpu_s", f->input_cpu_s);
	if (x->cfg->preload) {
		cli_json_open(j, "preloaded", '{', true);
		cli_json_uint(j, "events", x->pre_events);
		cli_json_real(j, "seconds", (double)x->pre_ns / 1e9);
		cli_json_real(j, "cpu_s", (double)x->pre_cpu_ns / 1e9);
		cli_json_close(j);
	} else {
		cli_json_null(j, "preloaded");
	}
	cli_json_close(j);
	cli_json_int(j, "peak_rss_kb", f->rss_kb);
	cli_json_open(j, "symbols", '{', true);
	cli_json_uint(j, "live", f->sym_live);
	cli_json_uint(j, "bytes", f->sym_bytes);
	cli_json_close(j);
	if (x->cfg->sink) { /* taken at the end: the sink is gone */
		cli_json_open(j, "sink", '{', true);
		cli_json_uint(j, "rows", x->sink_st.rows);
		cli_json_uint(j, "files", x->sink_st.committed);
		cli_json_uint(j, "reopened", x->sink_st.reopened);
		cli_json_close(j);
	} else {
		cli_json_null(j, "sink");
	}
	cli_json_uint(j, "turns", x->st.turns);
	cli_json_uint(j, "efull", x->efull);
	cli_json_uint(j, "units", x->st.units);
	cli_json_uint(j, "edges", x->st.edges);
	cli_units_json(j, x->longest, x->nlongest);
	cli_json_bool(j, "checked", x->cfg->check);
	cli_json_bool(j, "ok", x->ok);
	cli_json_text(j, "why", x->ok ? NULL : x->why);
	cli_json_open(j, "lateness", '{', true);
	cli_json_uint(j, "disorder_ms", x->cfg->disorder_ms);
	cli_json_int(j, "lateness_ms", f->lateness_ms);
	cli_json_bool(j, "cleanup", !x->cfg->no_cleanup);
	cli_json_uint(j, "late_admitted", f->late_admitted);
	cli_json_uint(j, "late_refused", f->late_refused);
	cli_json_uint(j, "refused_submissions", x->late_submits);
	/* A refused submission is refused whole: its on-time rows are
	 * dropped with its late ones, and both are said. */
	cli_json_uint(j, "refused_rows", x->refused_rows);
	cli_json_uint(j, "dropped_on_time", x->refused_rows - f->late_refused);
	cli_json_close(j);
	if (all)
		cli_ranks_write_json(j, all, cli_ranks_size());
	else
		cli_json_null(j, "ranks");
	cli_report_samples(j, x->s, x->ns);
	cli_report_close(rep);
}

static void
nx_csv(const struct nx_run *x, const struct nx_figs *f, FILE *out)
{
	struct cli_sample total = {.t = f->seconds,
				   .events = x->events,
				   .eps = f->eps,
				   .p50_us = NAN,
				   .p99_us = NAN};

	cli_report_csv(out, x->s, x->ns, &total);
}

/* Across ranks, after the runtime: every rank's figures to rank 0, which
 * prints them (*all: for the report); 0, or an exit code when the gather
 * failed or another rank did. */
static int
nx_ranks(struct cli_rank_figs *mine, bool printed,
	 const struct cli_rank_figs **all_out)
{
	/* The process's last run (not freed). */
	static struct cli_rank_figs all[SC_PLACEMENT_MAX_RANKS];
	int rc = cli_ranks_gather(mine, all), bad = 0;

	if (rc || cli_ranks_rank() != 0)
		return rc;
	*all_out = all;
	if (printed)
		cli_ranks_print(cli_report_text(), all, cli_ranks_size());
	for (int k = 1; k < cli_ranks_size(); k++)
		if (all[k].failed) {
			(void)fprintf(cli_report_text(),
				      "  rank %d failed (its messages say "
				      "why)\n",
				      k);
			bad = CLI_EXIT_LIBRARY;
		}
	return bad;
}

/* This rank's figures, before its runtime goes. */
static void
nx_rank_figs(const struct nx_run *x, int rc, struct cli_rank_figs *f)
{
	cli_ranks_figs_of(x->rt, x->mpi, x->p, f);
	f->failed = rc != 0;
}

/* What the trace's otherData "report" holds: the run's report, whole
 * when it ran to its end; else the envelope and the configuration. */
struct nx_trace_doc {
	struct cli_report *rep;
	const struct nx_cfg *c; /* x->cfg may be unset: setup failed */
	const struct nx_run *x;
	const struct nx_figs *f;
	const struct cli_rank_figs *all;
	bool ran;
};

static void
nx_trace_write(void *ctx, FILE *out)
{
	struct nx_trace_doc *d = ctx;

	if (d->ran) {
		nx_json(d->rep, d->x, d->f, d->all, out);
		return;
	}
	cli_report_open(d->rep, out, 0);
	nx_json_config(d->c, d->f, &d->rep->j);
	cli_report_results(d->rep);
	cli_report_close(d->rep);
}

int
cli_cmd_run_nexmark(int argc, char **argv)
{
	struct nx_cfg c;
	struct nx_run x;
	struct nx_figs f = {.lateness_ms = -1};
	struct sc_panic_record pr;
	struct cli_rank_figs mine;
	const struct cli_rank_figs *all = NULL;
	struct cli_report rep;
	struct nx_trace_doc doc;
	FILE *json, *csv, *trace;
	bool host, across, printed = false;
	uint64_t t_idle;
	int rc, rc2, wrc;

	cli_report_start(&rep, "run", "nexmark");
	if (!nx_parse(argc, argv, &c))
		return 0;
	memset(&x, 0, sizeof(x));
	json = cli_open_out("run", "--json", c.json);
	csv = cli_open_out("run", "--csv", c.csv);
	trace = cli_open_out("run", "--trace", c.trace);
	if (trace && (rc = cli_trace_open(c.workers, &c.timeline)) != 0)
		return rc;
	/* Before the setup (a replay's files load there): a signal on the
	 * way ends the run with what it has, its files in place. */
	cli_signal_catch();
	if ((rc = nx_setup(&x, &c)) != 0)
		goto out;
	/* Across ranks (tools/cli_grid.c says how): rank 0 submits and
	 * reports; every rank makes the same collective calls whatever
	 * happened before. */
	host = cli_ranks_rank() == 0;
	across = cli_ranks_active();
	if (!host)
		c.quiet = true;
	/* --preload: the input is made before the clock starts, so the
	 * run's time and CPU are the circuit's alone. */
	rc = host && c.preload ? nx_preload(&x) : 0;
	if (rc != 0 && !across)
		goto out;
	cli_progress_begin(cli_report_text(), c.quiet);
	x.t0 = x.last_ns = sc_bench_now_ns();
	x.cpu0 = nx_cpu_s();
	if (rc == 0)
		rc = host ? nx_loop(&x) : 0;
	cli_progress_end();
	x.interrupted = cli_signal_caught();
	if (rc != 0 && !across)
		goto out;
	t_idle = sc_bench_now_ns();
	rc2 = sc_runtime_wait_idle(x.rt, host ? NX_IDLE_NS : 0, &pr);
	cli_trace_host(c.timeline, CLI_TRACE_WAIT_IDLE, t_idle, 0);
	if (rc2 != 0) {
		if (rc2 == SC_EPANIC)
			(void)fprintf(stderr, "subcirc: unit %s panicked: %s\n",
				      pr.name, pr.message);
		rc2 = cli_lib_error("sc_runtime_wait_idle", rc2);
		rc = rc ? rc : rc2;
		if (!across)
			goto out;
	}
	x.t_end = sc_bench_now_ns();
	x.cpu_end = nx_cpu_s();
	x.input_run_ns = x.input_cpu_ns;
	/* --preload: the generator lets the texts of its chunks go, every
	 * one submitted (or left unsubmitted): input bookkeeping, after the
	 * run's clocks. */
	if (c.preload)
		sc_nexmark_release_texts(x.src.gen);
	rc2 = nx_finish(&x);
	rc = rc ? rc : rc2;
	if (rc == 0 && host) {
		nx_take_figs(&x, &f);
		cli_units_print(c.units, c.units_every, x.rt, f.seconds);
		nx_summary(&x, &f);
		printed = true;
	}
out:
	if (cli_ranks_active())
		nx_rank_figs(&x, rc, &mine);
	/* Not closed on the way (a failed run): removed, never left cut
	 * mid-row. */
	for (int k = 0; k < SC_NEXMARK_KINDS; k++)
		if (x.dump[k])
			cli_drop_out(x.dump[k]);
	nx_teardown(&x);
	if (cli_ranks_active() && (rc2 = nx_ranks(&mine, printed, &all)) != 0)
		rc = rc ? rc : rc2;
	if (printed && json)
		nx_json(&rep, &x, &f, all, json);
	if (printed && csv)
		nx_csv(&x, &f, csv);
	wrc = cli_close_out("run", c.json, json);
	if (cli_close_out("run", c.csv, csv) && !wrc)
		wrc = CLI_EXIT_LIBRARY;
	/* After the runtime: no turn records any more. What ran is in the
	 * trace even when the run failed. */
	doc = (struct nx_trace_doc){&rep, &c, &x, &f, all, printed};
	if (cli_ranks_rank() == 0 &&
	    (rc2 = cli_trace_report(c.timeline, nx_trace_write, &doc)) != 0 &&
	    !wrc)
		wrc = rc2;
	if ((rc2 = cli_trace_close(
		 c.timeline, cli_ranks_rank() == 0 ? trace : NULL)) != 0 &&
	    !wrc)
		wrc = rc2;
	if (cli_close_out("run", c.trace, trace)) {
		wrc = wrc ? wrc : CLI_EXIT_LIBRARY;
	} else if (trace && cli_ranks_rank() == 0 && rc2 == 0)
		(void)fprintf(cli_report_text(), "trace written to %s\n",
			      c.trace);
	/* After the trace's report, which holds them too. */
	free(x.s);
	free(x.longest);
	if (rc || wrc)
		return cli_ranks_agree(rc ? rc : wrc);
	if (!x.ok)
		return cli_ranks_agree(CLI_EXIT_CHECK);
	return cli_ranks_agree(x.late_submits ? CLI_EXIT_REFUSED : 0);
}
