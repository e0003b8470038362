/*
 * cli.h - the core of the `subcirc` command line: what every module of
 * the program uses (not an installed header: the CLI is a program, and
 * these names are its own, prefixed cli_).
 *
 * The program in floors. A file calls only into its own floor's module
 * or the floors below; no command calls another command:
 *
 *   5  subcirc.c           main: dispatches to the commands (cli_cmd.h)
 *   4  cli_run.c           `subcirc run` (the grid workload) and its
 *                          reports
 *      cli_nexmark.c       `subcirc run --workload nexmark`
 *      cli_place.c         `subcirc place` (cli_place.h), with its
 *      cli_place_out.c     outputs: one module in two files
 *      cli_stress.c        `subcirc stress`, which calls the campaign
 *      cli_stress_ranks.c  across ranks (cli_stress_ranks.h)
 *   3  cli_grid.c          one run of the live grid workload (cli_grid.h),
 *                          which run and place share
 *   2  cli_ranks.c         the runtime across MPI ranks (cli_ranks.h)
 *      cli_units.c         run's unit table (cli_units.h)
 *   1  the core, this header:
 *      cli_exit.c          how the exits on a bad argument end the process
 *      cli_args.c          those exits, and the argument parsers
 *      cli_out.c           output files, the text stream, JSON basics
 *      cli_hist.c          the latency histogram
 *      cli_live.c          what a live run checks and traces
 *      cli_alloc.c         stress's allocation fault hook
 *
 * Exit codes: 0 success, 1 a failed check (a result that is not the
 * reference, a stress case that does not settle), 2 a bad argument (an
 * output file that cannot be created included), 3 an error of the library
 * (a unit that panicked, SC_ENOMEM, a run stuck for 30 s, an output file
 * that could not be written), 4 input refused (a Nexmark run whose
 * lateness refused submissions: the rest ran and was checked).
 */
#ifndef SC_TOOLS_CLI_H
#define SC_TOOLS_CLI_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CLI_EXIT_CHECK	 1
#define CLI_EXIT_USAGE	 2
#define CLI_EXIT_LIBRARY 3
#define CLI_EXIT_REFUSED 4 /* input was refused (late rows), the rest ran */

#define CLI_MAX_LIST 32 /* entries of a comma list */

struct sc_graph;
struct sc_runtime;
struct sc_timeline;

/* --- exits (cli_exit.c, cli_args.c) ----------------------------------------
 */

/* How the argument checks end the process: exit(code) (cli_exit.c). The
 * fuzzer's harness (tests/fuzz/fuzz_cli_args.c) links the parsers of
 * cli_args.c with its own definition, which jumps back to its loop. */
void __attribute__((noreturn)) cli_exit(int code);

/* A bad argument: say which and exit 2 (through cli_exit). */
void __attribute__((noreturn, format(printf, 2, 3)))
cli_die_usage(const char *cmd, const char *fmt, ...);

/* A library call failed: name it, with the library's message; returns 3. */
int cli_lib_error(const char *what, int rc);

/* A library call failed while arguments are checked: name it, exit 3. */
void __attribute__((noreturn)) cli_die_library(const char *what, int rc);

/* --- argument parsing (cli_args.c) -----------------------------------------
 */

struct cli_args {
	const char *cmd; /* for messages */
	int argc;
	char **argv;
	int i; /* next argument */
};

/* Whether argv[i] is option `name`; its value (from "--name=v" or the next
 * argument) in *val when the option takes one (val non-NULL). */
bool cli_args_opt(struct cli_args *a, const char *name, const char **val);

/* Numbers are strict: digits only (and, for a number, one '.' and an
 * exponent), no sign, no spaces; a comma list has no empty entry. */

/* A whole number in lo..hi, or a number in lo..hi; else exit 2. */
uint64_t cli_parse_u64(const char *cmd, const char *name, const char *s,
		       uint64_t lo, uint64_t hi);
double cli_parse_double(const char *cmd, const char *name, const char *s,
			double lo, double hi);

/* A comma list of whole numbers (at most CLI_MAX_LIST) into out; its
 * length. */
size_t cli_parse_u32_list(const char *cmd, const char *name, const char *s,
			  uint32_t lo, uint32_t hi, uint32_t *out);

/* A comma list of placement names, checked against the grid's graph so a
 * misspelled one is refused before anything runs. */
size_t cli_parse_placements(const char *cmd, const char *s, char out[][32]);

/* The parameter of a "random:N" or "sharded:K" placement: digits in the
 * strategy's range, else exit 2 with the range (any other name passes). */
void cli_check_placement(const char *cmd, const char *opt, const char *spec);

/* cli_check_placement, then sc_placement_parse on g: SC_EINVAL exits 2
 * naming option opt, another error (SC_ENOMEM) exits 3. */
void cli_check_placement_of(const char *cmd, const char *opt,
			    const struct sc_graph *g, const char *spec,
			    uint64_t seed);

/* --- output (cli_out.c) ----------------------------------------------------
 */

/* An output file, created (or truncated) before anything runs, so a bad
 * path wastes no run: the stream, or exit 2 naming option opt and the
 * path. NULL for a NULL path; "-" is stdout (once: a second "-" is exit
 * 2), and the text of cli_report_text moves to stderr. */
FILE *cli_open_out(const char *cmd, const char *opt, const char *path);

/* Flush and close an output file (NULL: nothing; stdout is flushed, not
 * closed); a write that failed on the way (the stream's error flag), a
 * failed flush or close prints the path and returns CLI_EXIT_LIBRARY;
 * else 0. The writers write into an open stream unchecked: this says
 * whether it all reached the file. */
int cli_close_out(const char *cmd, const char *path, FILE *f);

/* Where the human-readable text (progress, summary, tables) goes: stdout,
 * or stderr once cli_open_out gave stdout to an output file ("-"). */
FILE *cli_report_text(void);

/* A JSON string: quotes, backslashes and control characters escaped. */
void cli_json_str(FILE *f, const char *v);

/* The load averages (/proc/loadavg) into load: true, or false and load
 * untouched where they cannot be read. */
bool cli_host_load(double load[3]);

/* --- latency histogram (cli_hist.c) ----------------------------------------
 * Bucket of v ns: v itself below 32; else 16 steps per power of two, so a
 * percentile is within 1/32 (3.2%) of the sample at its rank (exact below
 * 32 ns, and the max exact). Adds are atomic (any worker). */

#define CLI_HIST_SUB	 16
#define CLI_HIST_BUCKETS (61 * CLI_HIST_SUB) /* the last holds 2^63.. */

struct cli_hist {
	_Atomic uint64_t b[CLI_HIST_BUCKETS];
	_Atomic uint64_t max; /* the largest value added */
};

/* A copy of a histogram's counts (cli_hist_take), which percentiles
 * read. */
struct cli_hist_counts {
	uint64_t b[CLI_HIST_BUCKETS];
	uint64_t n, max; /* values in all, the largest */
};

void cli_hist_add(struct cli_hist *h, uint64_t v);

/* n values v at once (a batch's events that all waited v ns). */
void cli_hist_add_n(struct cli_hist *h, uint64_t v, uint64_t n);

/* The n values first + floor(j * step), j = 0..n-1 (step >= 0, in ns):
 * a batch's events, arrived evenly spread; the same counts as n
 * cli_hist_add, in one increment per bucket crossed. */
void cli_hist_add_linear(struct cli_hist *h, uint64_t first, double step,
			 uint64_t n);

/* Copy h into *out (and zero h if `reset`); returns the count. */
uint64_t cli_hist_take(struct cli_hist *h, struct cli_hist_counts *out,
		       bool reset);

/* The q-quantile (0..1) of c by nearest rank (the value at 1-based rank
 * ceil(q * n)): the midpoint of its bucket, never past the max; q = 1 is
 * the max itself. 0 when empty. In ns, or in us. */
double cli_hist_quantile_ns(const struct cli_hist_counts *c, double q);
double cli_hist_quantile_us(const struct cli_hist_counts *c, double q);

/* --- live runs (cli_live.c): what the grid and Nexmark runs share ----------
 */

/* Whether a unit of rt panicked: 0, or its name and message on stderr
 * and CLI_EXIT_LIBRARY. It takes the executor's lock: call it at most
 * every millisecond. */
int cli_runtime_check_alive(struct sc_runtime *rt);

/* --trace: a started timeline with a track per worker and the host (0,
 * or exit code 3 after a message); write it to f and free it (f may be
 * NULL: only free; 0 or 3); and, from the host loop, sample the edges'
 * fill and the events through per second at most every millisecond
 * (last_ns, last_events: the caller's memory). */
int cli_trace_open(uint32_t workers, struct sc_timeline **out);
int cli_trace_close(struct sc_timeline *tl, FILE *f);
void cli_trace_sample(struct sc_timeline *tl, struct sc_runtime *rt,
		      uint64_t now, uint64_t *last_ns, uint64_t *last_events,
		      uint64_t events);

/* --- the allocation hook (cli_alloc.c) -------------------------------------
 */

/* Install the hook of SC_SETTLE_FAULT_ALLOC (sc_settle_alloc_hook_set)
 * when the CLI was linked with the wrap; else nothing. */
void cli_alloc_hook_install(void);

#endif /* SC_TOOLS_CLI_H */
