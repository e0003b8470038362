/*
 * subcirc.c - the subcirc command line: run, place, stress. main and the
 * usage texts; each command lives in its own file (tools/cli.h lists
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
 * output file that could not be written), 4 input refused (a Nexmark
 * run whose lateness refused submissions: the rest ran).
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */

#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

extern char **environ;

#include "tools/cli.h"
#include "tools/cli_cmd.h"
#include "tools/cli_ranks.h"

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

static const char usage_main[] =
    "usage: subcirc <command> [options]\n"
    "\n"
    "commands:\n"
    "  run      a live workload across cores (the grid, Nexmark, any\n"
    "           built-in or plugin; progress, summary)\n"
    "  place    every placement x workers x budget, repeated, ranked\n"
    "  stress   seeds x workers x placements under the seeded scheduler\n"
    "\n"
    "`subcirc <command> --help` describes a command's options;\n"
    "`subcirc --version` (or `subcirc <command> --version`) prints the\n"
    "version and the commit it was built from.\n"
    "Exit codes: 0 ok, 1 a failed check, 2 a bad argument, 3 a library\n"
    "error (a unit that panicked, no memory, a file not written), 4\n"
    "input refused (late rows: the rest ran).\n";

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

/*
 * Under a memory limit, run again with jemalloc's thread caches off (see
 * malloc_conf). Returns only if nothing was done or the exec failed (then
 * the run goes on with the caches, as before).
 *
 * Nothing here may call malloc: under a small limit (`ulimit -v` of
 * 16-24 MB) jemalloc's first allocation can fail inside the allocator,
 * which dies of SIGSEGV (the jemalloc issue above) rather than return
 * NULL, and setenv reallocates the environment with malloc. So the new
 * environment is an array of pointers mapped with mmap, whose failure is
 * a clean MAP_FAILED: the old entries, then MALLOC_CONF.
 */
static void
reexec_without_tcache(char **argv)
{
	static char conf[] = "MALLOC_CONF=tcache:false";
	size_t n = 0, bytes;
	char **env;

	/* First thing in main, before any thread: the environment is
	 * ours alone. */
	if (getenv("MALLOC_CONF") || !limited_memory())
		return;
	while (environ[n])
		n++;
	bytes = (n + 2) * sizeof(*env);
	env = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (env == MAP_FAILED)
		return;
	memcpy(env, environ, n * sizeof(*env));
	env[n] = conf;
	env[n + 1] = NULL;
	(void)execve("/proc/self/exe", argv, env);
	(void)munmap(env, bytes);
}

/* After a command under mpirun: MPI_Finalize (tools/cli_ranks.c). */
static int
ranks_end(int rc)
{
	cli_ranks_stop();
	return rc;
}

int
main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	reexec_without_tcache(argv);

	if (!cmd) {
		(void)fputs(usage_main, stderr);
		return CLI_EXIT_USAGE;
	}
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") ||
	    !strcmp(cmd, "help")) {
		if (argc > 2 && !strcmp(argv[2], "run"))
			(void)fputs(cli_usage_run, stdout);
		else if (argc > 2 && !strcmp(argv[2], "place"))
			(void)fputs(cli_usage_place, stdout);
		else if (argc > 2 && !strcmp(argv[2], "stress"))
			(void)fputs(cli_usage_stress, stdout);
		else
			(void)fputs(usage_main, stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version")) {
		cli_version_print();
		return 0;
	}
	/* A reader of stdout that goes away (`| head`) is a failed write,
	 * exit 3 with a message, not a silent death by SIGPIPE. */
	(void)signal(SIGPIPE, SIG_IGN);
	if (!strcmp(cmd, "run") && cli_run_is_workload(argc - 2, argv + 2))
		return cli_text_end(
		    "run", ranks_end(cli_cmd_run_workload(argc - 2, argv + 2)));
	if (!strcmp(cmd, "run") && cli_run_is_nexmark(argc - 2, argv + 2))
		return cli_text_end(
		    "run", ranks_end(cli_cmd_run_nexmark(argc - 2, argv + 2)));
	if (!strcmp(cmd, "run"))
		return cli_text_end("run",
				    ranks_end(cli_cmd_run(argc - 2, argv + 2)));
	if (!strcmp(cmd, "place")) {
		/* Each rank would rank the strategies on its own, N times. */
		if (cli_ranks_launched() > 1)
			cli_die_usage("place",
				      "not under mpirun (%u ranks): place "
				      "ranks strategies in one process",
				      cli_ranks_launched());
		return cli_text_end("place", cli_cmd_place(argc - 2, argv + 2));
	}
	if (!strcmp(cmd, "stress"))
		return cli_text_end(
		    "stress",
		    ranks_end(cli_cmd_stress(argc - 2, argv + 2, argv[0])));
	(void)fprintf(stderr, "subcirc: unknown command '%s'\n\n%s", cmd,
		      usage_main);
	return CLI_EXIT_USAGE;
}
