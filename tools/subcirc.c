/*
 * subcirc.c - the subcirc command line: run, place, stress. main and the
 * usage texts; each command lives in its own file (tools/subcirc.h lists
 * them).
 *
 *   subcirc run     a live grid workload across cores, a progress line a
 *                   second and a final summary verified against the
 *                   workload's from-scratch reference;
 *   subcirc place   every placement strategy x worker count x budget on
 *                   the grid, repeated in rounds and ranked with ties;
 *   subcirc stress  seed ranges x workers x placements, on the grid and on
 *                   random circuits (bench/workloads/random.h), under the
 *                   seeded scheduler (or a real pool), checking with
 *                   units/settle.h that the placed circuit settles where
 *                   the single circuit does, and, with injected faults,
 *                   that a panic stays in its unit and is reported.
 *
 * Everything here is a call of the public C API (operators/graph.h,
 * operators/circuit.h, units/placement.h, units/runtime.h,
 * units/settle.h, runtime/executor.h, runtime/watchdog.h) and of the
 * workloads (bench/workloads/grid.h, bench/workloads/random.h), so a
 * program can do the same.
 *
 * Exit codes: 0 success, 1 a failed check (a result that is not the
 * reference, a stress case that does not settle), 2 a bad argument (an
 * output file that cannot be created included), 3 an error of the library
 * (a unit that panicked, memory that ran out, a run stuck for 30 s, an
 * output file that could not be written).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "operators/version.h"
#include "tools/subcirc.h"

/*
 * jemalloc, the CLI's allocator, reads this at start-up. By default it
 * gives each thread an arena of its own, made at the thread's first
 * allocation; when that fails for want of address space (`ulimit -v`),
 * jemalloc 5.3 dereferences the arena it could not make (its thread
 * cache takes the NULL that arena_choose_hard returns: jemalloc issue
 * #2289, where its maintainers say such paths are untested) and the process
 * dies of SIGSEGV inside the allocator, where the glibc build ends with a
 * clear SC_ENOMEM. With one arena, made before main, a thread's first
 * allocation makes nothing, so running out of memory reaches the library
 * as a NULL from malloc and ends in an error or a unit panic
 * (cli.run_under_an_address_space_limit_ends_in_a_clear_error). Each
 * thread keeps its cache (tcache), so the one arena is locked only to
 * refill or flush one; `subcirc run --workers 2` measured the same
 * events/s either way (medians of 5, 4.5M and 5.2M, in noise).
 *
 * Under a limit, the caches go too. With them, a rarer crash inside
 * jemalloc remained under heavy load (2 runs in 900 of
 * `subcirc run --workers 2 --events 200000` at limits of 45-90 MB, load
 * average ~12: SIGSEGV in a worker's malloc); with MALLOC_CONF=tcache:false
 * none in 2,700 of the same runs (900 through this re-execution). Thread
 * caches off cost about 5% of events/s, so they go only when the process
 * runs under an address-space or data limit (limited_memory): jemalloc is
 * set up before main (and
 * before any constructor of ours) and reads malloc_conf once, so main asks
 * for it through the environment and re-executes itself (once: the
 * variable is then set). A MALLOC_CONF the user set is left as it is.
 */
const char *malloc_conf = "narenas:1";

void
subcirc_exit(int code)
{
	/* The CLI checks its arguments before it starts any thread. */
	exit(code); // NOLINT(concurrency-mt-unsafe)
}

const char usage_main[] =
    "usage: subcirc <command> [options]\n"
    "\n"
    "commands:\n"
    "  run      a live grid or Nexmark workload across cores (progress,\n"
    "           summary)\n"
    "  place    every placement x workers x budget, repeated, ranked\n"
    "  stress   seeds x workers x placements under the seeded scheduler\n"
    "\n"
    "`subcirc <command> --help` describes a command's options;\n"
    "`subcirc --version` prints the version.\n"
    "Exit codes: 0 ok, 1 a failed check, 2 a bad argument, 3 a library\n"
    "error (a unit that panicked, no memory, a file not written).\n";

const char usage_run[] =
    "usage: subcirc run [--workload grid|nexmark] [options]\n"
    "  (`subcirc run --workload nexmark --help`: the Nexmark queries)\n"
    "  a live grid workload (cell edits -> sums per row and column -> a\n"
    "  projection with a total per row) across worker threads; the final\n"
    "  output is checked against the workload's from-scratch reference.\n"
    "\n"
    "  --workers N       worker threads (default: all cores)\n"
    "  --placement P     single | per-node | chains | random:N | sharded:K\n"
    "                    | balanced[:K] (default chains); across MPI\n"
    "                    ranks: ranks:N, or P@ranks:N (P@ranks:R,R,..)\n"
    "                    under `mpirun -np N subcirc run ...`: rank 0\n"
    "                    submits and reports, with per-rank figures\n"
    "  --events N        stop after N cell edits, or\n"
    "  --seconds S       stop after S seconds (default 3 when neither)\n"
    "  --batch R         cell edits per submitted batch (default 256)\n"
    "  --rate E          offer E events/s on an open-loop schedule: each\n"
    "                    event's latency counts from its arrival; the\n"
    "                    machine's floor is measured first, and a rate\n"
    "                    not kept within 5% is warned about (default: as\n"
    "                    fast as backpressure allows, latency from submit)\n"
    "  --linger US       with --rate: submit a batch once its first event\n"
    "                    has waited US microseconds, full or not (default:\n"
    "                    when full; at low rates a full batch of 256 makes\n"
    "                    its first events wait most of its interval)\n"
    "  --rows N --cols N grid size (default 256 x 256)\n"
    "  --seed S          the edit generator's seed (default 1)\n"
    "  --capacity C      edge capacity in frames, a power of two (64)\n"
    "  --budget B        frames per turn (default 64)\n"
    "  --panic-rate X    share (0..1) of projection rows whose callback\n"
    "                    fails, so the unit that runs it panics (a test\n"
    "                    of how a run ends when a unit dies)\n"
    "  --credits W       across ranks: frames in flight per remote edge\n"
    "                    (the MPI link's window, and as many kept beyond\n"
    "                    it; default 32 and 64)\n"
    "  --quiet           no progress lines\n"
    "  --units           the per-unit table at the end (turns, kicks,\n"
    "                    frames moved, state, worker, pending input)\n"
    "  --units-every S   and every S seconds while it runs\n"
    "  --trace FILE      every turn (worker, unit, time, frames and rows)\n"
    "                    and the edges' fill, in the Chrome trace event\n"
    "                    format (open it in ui.perfetto.dev)\n"
    "  --json FILE       the summary and progress samples as JSON\n"
    "  --csv FILE        the progress samples and the total as CSV\n"
    "                    (files are created before the run: a path that\n"
    "                    cannot be is refused at once, exit 2; '-' is\n"
    "                    stdout, and the text goes to stderr)\n"
    "\n"
    "  Numbers are digits only (no sign, no spaces). A unit that panics\n"
    "  ends the run soon after, naming it, with exit 3, as does a batch\n"
    "  that has not come through in 30 s; a file that cannot be written\n"
    "  is exit 3 too. Output that differs from the reference is exit 1.\n"
    "  SIGINT or SIGTERM ends the run early with its summary and files.\n";

const char usage_stress[] =
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
    "  --json FILE       runs, faults_injected, divergences, frames_lost,\n"
    "                    hangs, the first failure's replay\n"
    "  --quiet           no progress line (one a second on stderr)\n"
    "  --plant-difference  the reference misses the last submission (to\n"
    "                    test the campaign itself: a case whose last\n"
    "                    submission reaches a compared output fails)\n"
    "  --verbose         one line per case\n"
    "\n"
    "  Under `mpirun -np N subcirc stress ...` every case runs across the N\n"
    "  ranks on worker threads (a placement without @ranks is spread over\n"
    "  them: chains@ranks:N...), checked against the single circuit on\n"
    "  rank 0, with the frames sent and received per rank; faults other\n"
    "  than none, --modes sim, --ticks, --restart, --panic-rate, --shrink\n"
    "  and nexmark are refused there.\n";

/* Whether an address-space or data limit is set (`ulimit -v`, `-d`). */
static bool
limited_memory(void)
{
	struct rlimit as, data;

	return (getrlimit(RLIMIT_AS, &as) == 0 &&
		as.rlim_cur != RLIM_INFINITY) ||
	       (getrlimit(RLIMIT_DATA, &data) == 0 &&
		data.rlim_cur != RLIM_INFINITY);
}

/* Under a memory limit, run again with jemalloc's thread caches off (see
 * malloc_conf). Returns only if nothing was done or the exec failed (then
 * the run goes on with the caches, as before). */
static void
reexec_without_tcache(char **argv)
{
	/* First thing in main, before any thread: the environment is
	 * ours alone. */
	if (getenv("MALLOC_CONF") || !limited_memory())
		return;
	// NOLINTNEXTLINE(concurrency-mt-unsafe): no thread exists yet
	if (setenv("MALLOC_CONF", "tcache:false", 1) != 0)
		return;
	(void)execv("/proc/self/exe", argv);
	// NOLINTNEXTLINE(concurrency-mt-unsafe): no thread exists yet
	(void)unsetenv("MALLOC_CONF");
}

/* After a command under mpirun: MPI_Finalize (tools/subcirc_mpi.c). */
static int
ranks_end(int rc)
{
	ranks_stop();
	return rc;
}

int
main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	reexec_without_tcache(argv);

	if (!cmd) {
		(void)fputs(usage_main, stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") ||
	    !strcmp(cmd, "help")) {
		if (argc > 2 && !strcmp(argv[2], "run"))
			(void)fputs(usage_run, stdout);
		else if (argc > 2 && !strcmp(argv[2], "place"))
			(void)fputs(usage_place, stdout);
		else if (argc > 2 && !strcmp(argv[2], "stress"))
			(void)fputs(usage_stress, stdout);
		else
			(void)fputs(usage_main, stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version")) {
		(void)printf("subcirc %s\n", sc_version_string());
		return 0;
	}
	if (!strcmp(cmd, "run"))
		return ranks_end(cmd_run(argc - 2, argv + 2));
	if (!strcmp(cmd, "place")) {
		/* Each rank would rank the strategies on its own, N times. */
		if (ranks_launched() > 1)
			die_usage("place",
				  "not under mpirun (%u ranks): place "
				  "ranks strategies in one process",
				  ranks_launched());
		return cmd_place(argc - 2, argv + 2);
	}
	if (!strcmp(cmd, "stress"))
		return ranks_end(cmd_stress(argc - 2, argv + 2, argv[0]));
	(void)fprintf(stderr, "subcirc: unknown command '%s'\n\n%s", cmd,
		      usage_main);
	return EXIT_USAGE;
}
