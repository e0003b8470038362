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
 *      cli_wrun.c          `subcirc run --workload SPEC`: any other
 *                          workload of the workload interface
 *      cli_place.c         `subcirc place` (cli_place.h), with its
 *      cli_place_out.c     outputs: one module in two files
 *      cli_stress.c        `subcirc stress`, which calls the campaign
 *      cli_stress_ranks.c  across ranks (cli_stress_ranks.h), and one
 *      cli_stress_workload.c  --workload's per-seed work
 *                          (cli_stress_workload.h)
 *   3  cli_grid.c          one run of the live grid workload (cli_grid.h),
 *                          which run and place share
 *   2  cli_ranks.c         the runtime across MPI ranks (cli_ranks.h)
 *      cli_units.c         run's unit table (cli_units.h)
 *      cli_workload.c      a workload named by --workload (cli_workload.h)
 *      cli_io.c            CSV data in and out of a graph's named inputs
 *                          and outputs (cli_io.h)
 *   1  the core, this header:
 *      cli_exit.c          how the exits on a bad argument end the process
 *      cli_args.c          those exits, and the argument parsers
 *      cli_out.c           output files, the text stream, JSON basics
 *      cli_report.c        the JSON writer and the report every command
 *                          writes (tools/report.schema.json), --version
 *      cli_json_read.c     a strict JSON reader, for reports read back
 *      cli_hist.c          the latency histogram
 *      cli_plot.c          what every --plot shares: the checks, gnuplot,
 *                          the caption
 *      cli_live.c          what a live run checks and traces, and the
 *                          progress line every command draws
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
struct sc_runtime_stats;
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

/* An edge capacity (--capacity, and its other name --edge-capacity): a
 * power of two in 1..2^20, else exit 2. */
uint32_t cli_parse_capacity(const char *cmd, const char *name, const char *s);

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

/* An output file, created before anything runs, so a bad path wastes no
 * run: the stream, or exit 2 naming option opt and the path. NULL for a
 * NULL path; "-" is stdout (once: a second "-" is exit 2), and the text
 * of cli_report_text moves to stderr. A path another output names already
 * (compared by real path) is exit 2 naming both options. The stream
 * writes a temporary file beside the path (cli_out.c says why) that
 * cli_close_out renames onto it once whole: the path holds a complete
 * file or none. */
FILE *cli_open_out(const char *cmd, const char *opt, const char *path);

/* Reserve path for an output opened later under the same opt (a dump's
 * query output, written after the run): another output naming the same
 * file is refused at once, exit 2, naming both options. "-" and NULL
 * reserve nothing. */
void cli_claim_out(const char *cmd, const char *opt, const char *path);

/* SIGINT, SIGTERM and SIGHUP end a command as its end would: the handler
 * records the signal, which the command's loop reads between steps
 * (cli_signal_caught); the command writes its summary and files for what
 * ran. The handler is installed whatever the inherited disposition (a
 * background job's ignored SIGINT included), is one-shot (a second
 * signal ends the process as it would without it) and does not restart
 * sleeps. SIGPIPE is ignored: a closed pipe is a failed write. */
void cli_signal_catch(void);

/* The signal that asked the command to end, or 0. */
int cli_signal_caught(void);

/* Flush and close an output file (NULL: nothing; stdout is flushed, not
 * closed) and put it in place; a write that failed on the way (the
 * stream's error flag), a failed flush or close prints the path, removes
 * the file and returns CLI_EXIT_LIBRARY; a file left empty (a failed run
 * wrote nothing, and said why) is removed; else 0. The writers write into an
 * open stream unchecked: this says whether it all reached the file. */
int cli_close_out(const char *cmd, const char *path, FILE *f);

/* A command's exit code rc, checked against its text on stdout: a text
 * that did not reach stdout (a closed pipe, a full disk) turns an exit 0
 * into CLI_EXIT_LIBRARY, with a message on stderr. */
int cli_text_end(const char *cmd, int rc);

/* Close an output of a command that failed before finishing it (NULL:
 * nothing): its file is removed, never left cut short. */
void cli_drop_out(FILE *f);

/* Where the human-readable text (progress, summary, tables) goes: stdout,
 * or stderr once cli_open_out gave stdout to an output file ("-"). */
FILE *cli_report_text(void);

/* A JSON string: quotes, backslashes and control characters escaped. */
void cli_json_str(FILE *f, const char *v);

/* The load averages (/proc/loadavg) into load: true, or false and load
 * untouched where they cannot be read. */
bool cli_host_load(double load[3]);

/* --- JSON and the report (cli_report.c) ------------------------------------
 *
 * Every --json file of the CLI is one report (tools/report.schema.json
 * says it field by field):
 *
 *   {"schema": "subcirc-report", "schema_version": 1,
 *    "subcirc": {"version", "commit"}, "command": "run|place|stress",
 *    "workload": "grid|nexmark|...", "host": {"cores", "hostname",
 *    "load_before", "load_after"}, "started", "ended" (UTC, ISO 8601),
 *    "interrupted": bool, "signal": "SIGINT"|"SIGTERM"|"SIGHUP"|null,
 *    "config": {every option's effective value}, "results": {...}}
 *
 * so a script reads any of them the same way. The writer below keeps the
 * commas and the layout: a container is written a member a line, or on
 * one line (`flat`, and everything inside it).
 */

#define CLI_JSON_DEPTH 16

struct cli_json {
	FILE *f;
	int depth;		    /* containers open */
	bool flat[CLI_JSON_DEPTH];  /* written on one line */
	bool any[CLI_JSON_DEPTH];   /* a member written already */
	char close[CLI_JSON_DEPTH]; /* '}' or ']' */
};

/* Open an object ('{') or array ('[') as member `key` of the container
 * open (key NULL: an array element, or the document itself); close the
 * innermost one. Deeper than CLI_JSON_DEPTH is a bug of the caller. */
void cli_json_open(struct cli_json *j, const char *key, char bracket,
		   bool flat);
void cli_json_close(struct cli_json *j);

/* A member `key` (NULL in an array) with its value: a whole number, a
 * number (null when not finite), a bool, a string (NULL: null), null;
 * cli_json_key writes the separator and key only, for a value the caller
 * prints itself. */
void cli_json_key(struct cli_json *j, const char *key);
void cli_json_uint(struct cli_json *j, const char *key, uint64_t v);
void cli_json_int(struct cli_json *j, const char *key, int64_t v);
void cli_json_real(struct cli_json *j, const char *key, double v);
void cli_json_bool(struct cli_json *j, const char *key, bool v);
void cli_json_text(struct cli_json *j, const char *key, const char *v);
void cli_json_null(struct cli_json *j, const char *key);

/* A list as a flat array: n whole numbers, or n strings. */
void cli_json_uints(struct cli_json *j, const char *key, const uint32_t *v,
		    size_t n);
void cli_json_texts(struct cli_json *j, const char *key, const char (*v)[32],
		    size_t n);

#define CLI_REPORT_SCHEMA  "subcirc-report"
#define CLI_REPORT_VERSION 1

/* One report: what is known when the command starts (cli_report_start:
 * the time and the load before), written after it ran. */
struct cli_report {
	struct cli_json j;
	const char *command; /* "run", "place", "stress" */
	char workload[64];
	char started[32]; /* UTC, ISO 8601 */
	bool have_load;
	double load_before[3];
};

/* Take the start: the time and the host's load (command and workload are
 * static strings or copied). Writes nothing. */
void cli_report_start(struct cli_report *r, const char *command,
		      const char *workload);

/* Write the envelope into f (the end time and the load after are taken
 * now; signal: the one that cut the command short, or 0) and open its
 * "config" object: the caller writes every option into r->j, then
 * cli_report_results closes it and opens "results", and cli_report_close
 * ends the document. */
void cli_report_open(struct cli_report *r, FILE *f, int signal);
void cli_report_results(struct cli_report *r);
void cli_report_close(struct cli_report *r);

/* "SIGINT", "SIGTERM", "SIGHUP", "signal" (another), or NULL for 0: how the
 * report and the summaries name the signal that cut a command short. */
const char *cli_signal_name(int sig);

/* The first failing case of a campaign: {"why", "replay"}, or null when
 * there was none (have false). */
void cli_report_failure(struct cli_json *j, bool have, const char *why,
			const char *replay);

/* One progress sample of a live run (a line of the progress, a row of
 * --csv, an entry of the report's "progress"). */
struct cli_sample {
	double t;	       /* seconds since the start */
	uint64_t events;       /* events done (their batches came through) */
	double eps;	       /* events per second in the interval */
	double p50_us, p99_us; /* latency in the interval; NAN: none */
	double fill;	       /* frames in rings / room of all edges */
};

/* Append x to the array *s of *n samples (room for *cap, grown by
 * doubling; the caller frees *s): false, and nothing appended, when
 * memory runs out (a sample fewer: the run goes on). */
bool cli_sample_push(struct cli_sample **s, size_t *n, size_t *cap,
		     const struct cli_sample *x);

/* The samples as the report's "progress" array. */
void cli_report_samples(struct cli_json *j, const struct cli_sample *s,
			size_t n);

/* --csv of a live run: a header, a row per sample ("interval"), and the
 * total ("total": t is the run's seconds, fill empty); a latency that is
 * NAN is an empty field. */
void cli_report_csv(FILE *f, const struct cli_sample *s, size_t n,
		    const struct cli_sample *total);

/* --version: "subcirc VERSION (commit COMMIT)" on stdout. The commit is
 * the source tree's when it was built ("unknown" outside git). */
void cli_version_print(void);
const char *cli_report_commit(void);

/* --- figures (cli_plot.c) -------------------------------------------------
 *
 * Every --plot is drawn by gnuplot (optional: tools/deps --optional) into
 * a .png or .svg, with a caption that says when (the report's start, UTC),
 * where (host, cores, load before) and with what (version, commit) it was
 * made, so a figure found alone still says what it shows. Throughput is
 * drawn in k or M events/s and latency in ms.
 */

/* What a caption says (cli_plot_meta_now for a command that ran, or read
 * back from its report). */
struct cli_plot_meta {
	char started[32]; /* UTC, ISO 8601 */
	char version[32], commit[48];
	char hostname[128]; /* "" when unknown */
	int cores;
	bool have_load;
	double load[3]; /* before the command */
};

/* Whether gnuplot is in PATH; the terminal for path's extension, or NULL
 * when it is neither .png nor .svg. */
bool cli_plot_have_gnuplot(void);
const char *cli_plot_terminal(const char *path);

/* The argument-time checks of a --plot path (NULL: none), each exit 2
 * naming --plot: the extension, no quotes, gnuplot in PATH, and the file
 * creatable (created empty; gnuplot writes it after the run). */
void cli_plot_check(const char *cmd, const char *path);

/* gnuplot started on path, its terminal and output set: the pipe for the
 * script, or NULL (said on stderr). cli_plot_close ends it: 0 and "plot
 * written to PATH" on the text stream, or CLI_EXIT_LIBRARY (said). */
FILE *cli_plot_open(const char *cmd, const char *path);
int cli_plot_close(const char *cmd, FILE *g, const char *path);

/* The caption's one line into buf (safe inside a gnuplot "string"). */
void cli_plot_caption(const struct cli_plot_meta *m, char *buf, size_t n);

/* The caption's facts for a command that runs now, from its report r. */
void cli_plot_meta_now(const struct cli_report *r, struct cli_plot_meta *m);

/* How an axis of events/s is drawn: divide by div, label with unit. */
struct cli_plot_scale {
	double div;
	const char *unit;
};
struct cli_plot_scale cli_plot_rate_scale(double max_eps);

/* A rate as text in that unit: "200 k events/s". */
void cli_plot_rate_text(double eps, char *buf, size_t n);

/* A latency histogram as a figure into path (checked by cli_plot_check):
 * the share of events per bucket on a log axis in ms, with lines at p50,
 * p99, p99.9 and the max, titled `title` and captioned from m. 0, or
 * CLI_EXIT_LIBRARY (said; an empty histogram included). */
struct cli_hist_counts;
int cli_plot_latency(const char *cmd, const char *path,
		     const struct cli_hist_counts *c, const char *title,
		     const struct cli_plot_meta *m);

/* --- reading JSON back (cli_json_read.c) ----------------------------------
 *
 * A strict reader (RFC 8259: no comments, trailing commas, duplicate keys
 * or text after the value; nesting at most 64 deep) into a tree, for the
 * reports the CLI wrote itself (place --replot). Strings are NUL-ended
 * UTF-8 (an escaped NUL is refused); numbers are doubles.
 */

enum cli_jv_kind {
	CLI_JV_NULL,
	CLI_JV_BOOL,
	CLI_JV_NUM,
	CLI_JV_STR,
	CLI_JV_ARR,
	CLI_JV_OBJ
};

struct cli_jv {
	enum cli_jv_kind kind;
	bool b;		      /* CLI_JV_BOOL */
	double num;	      /* CLI_JV_NUM */
	char *str;	      /* CLI_JV_STR */
	size_t n;	      /* CLI_JV_ARR, CLI_JV_OBJ: items */
	struct cli_jv *items; /* the elements, or the members' values */
	char **keys;	      /* CLI_JV_OBJ: the members' keys */
};

/* Parse len bytes of text: 0 and the tree in *out (free it with
 * cli_jv_free), or -1 and why in err ("at byte N: ..."; err may be
 * NULL). */
int cli_json_parse(const char *text, size_t len, struct cli_jv **out, char *err,
		   size_t errlen);
void cli_jv_free(struct cli_jv *v);

/* Member key of object obj: the value, or NULL (obj NULL or not an
 * object, or no such member); as a string (NULL unless a string); as a
 * number into *out (false, *out untouched, unless a number). */
const struct cli_jv *cli_jv_get(const struct cli_jv *obj, const char *key);
const char *cli_jv_str(const struct cli_jv *obj, const char *key);
bool cli_jv_num(const struct cli_jv *obj, const char *key, double *out);

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

/* The smallest value (ns) of bucket i; bucket i ends where i + 1 starts
 * (UINT64_MAX past the last). */
uint64_t cli_hist_bucket_floor_ns(unsigned i);

/* --- live runs (cli_live.c): what the grid and Nexmark runs share ----------
 */

/* Whether a unit of rt panicked: 0, or its name and message on stderr
 * and CLI_EXIT_LIBRARY. It takes the executor's lock: call it at most
 * every millisecond. */
int cli_runtime_check_alive(struct sc_runtime *rt);

/* The share of all edges' room their rings hold (st of a runtime whose
 * edges hold `capacity` frames each): 0..1, 0 without edges. */
double cli_edge_fill(const struct sc_runtime_stats *st, uint32_t capacity);

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

/* What the host does, as slices on its own track (so a trace shows where
 * the host's time went beside the workers'): from start_ns (sc_clock_ns)
 * to now, with the rows it submitted. Nothing when tl is NULL or off. */
enum cli_trace_host {
	CLI_TRACE_SUBMIT,      /* sc_runtime_submit */
	CLI_TRACE_WAIT_ROOM,   /* sc_runtime_submit_wait: an input edge full */
	CLI_TRACE_WAIT_FLIGHT, /* the ring of batches in flight full */
	CLI_TRACE_WAIT_IDLE,   /* sc_runtime_wait_idle: the drain */
	CLI_TRACE_HOST_KINDS
};
void cli_trace_host(struct sc_timeline *tl, enum cli_trace_host k,
		    uint64_t start_ns, uint64_t rows);

/* The run's report (write(ctx, f) writes the whole document into f) as
 * the trace's otherData "report", so a trace says which version ran it,
 * where, when and how configured: 0, or 3 (said). tl NULL: nothing. */
int cli_trace_report(struct sc_timeline *tl, void (*write)(void *ctx, FILE *f),
		     void *ctx);

/* --- the progress line (cli_live.c): every command's --------------------
 *
 * One line at a time, "[  12.3s] <what>", with "  ETA 1m05s" after it
 * when the command knows how far along it is. On a terminal the line is
 * drawn again in place (\r, erase to the end); into a file or a pipe each
 * is a line of its own, so a log keeps them all. One command draws at a
 * time (host thread only).
 */

/* Draw progress on o from now on (nothing if quiet); whether o is a
 * terminal decides the redraw. */
void cli_progress_begin(FILE *o, bool quiet);

/* One progress line: elapsed seconds, the share done (0..1; negative when
 * the length is unknown: no ETA), the text. */
void __attribute__((format(printf, 3, 4)))
cli_progress_line(double elapsed_s, double done, const char *fmt, ...);

/* End the line drawn in place, if any, before other text follows. */
void cli_progress_end(void);

/* --- the allocation hook (cli_alloc.c) -------------------------------------
 */

/* Install the hook of SC_SETTLE_FAULT_ALLOC (sc_settle_alloc_hook_set)
 * when the CLI was linked with the wrap; else nothing. */
void cli_alloc_hook_install(void);

#endif /* SC_TOOLS_CLI_H */
