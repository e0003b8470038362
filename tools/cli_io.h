/*
 * cli_io.h - CSV data in and out of any circuit on the command line (not
 * an installed header): `--input NAME=FILE` feeds the graph's input named
 * NAME from a CSV file, `--output NAME=FILE` writes what the output named
 * NAME produces, for a host (`run --workload SPEC`) that drives the
 * runtime.
 *
 * Input. Each --input is a stream reader (bench/workloads/csv.h,
 * sc_csv_stream) typed by its input node's schema: a regular file, a
 * FIFO, or `-` for standard input, read as it arrives. cli_io_next
 * hands out one step at a time, taking the inputs in turn, each step a
 * batch of at most --batch-rows rows, or fewer once the first has
 * waited --linger-ms: a pipe fed slowly has its rows submitted about
 * as they come, not at its end. A bad row stops the input: every row
 * before it is handed out first, then cli_io_next says which file,
 * line and column, so what ran is exactly the rows before that line.
 *
 * Output. Without --integral each --output gets every step's change, as
 * it happens: a delta sink (sc_runtime_on_delta) writes the changed rows
 * with their weights (+1 added, -1 retracted) and flushes after each
 * step, so a reader at the other end of a pipe sees them at once. With
 * --integral it gets, at the end, the output's integral: the final rows,
 * each with its multiplicity. Each file starts with the header
 * c1,c2,...,weight (graph schemas have no column names).
 *
 * Threads. The host's thread calls everything here; the delta sinks run
 * on the runtime's workers and take a lock per output.
 */
#ifndef SC_TOOLS_CLI_IO_H
#define SC_TOOLS_CLI_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/cli.h"
#include "units/settle_step.h"

struct sc_graph;
struct sc_runtime;

/* The most --input and the most --output options. */
#define CLI_IO_MAX 16

/* A NAME=FILE option, split in place (pointers into name). */
struct cli_io_spec {
	const char *node; /* the graph's name of the input or output */
	const char *path; /* the file, "-" for stdin or stdout */
	char buf[512];	  /* the option's text, '=' cut */
};

/* The options, as parsed. Caller storage: cli_io_opts_init. */
struct cli_io_opts {
	struct cli_io_spec in[CLI_IO_MAX];
	size_t nin;
	struct cli_io_spec out[CLI_IO_MAX];
	size_t nout;
	bool integral;	     /* outputs get the final integral */
	uint32_t linger_ms;  /* 0: SC_CSV_LINGER_MS */
	uint32_t batch_rows; /* 0: SC_CSV_BATCH_ROWS */
};

struct cli_io;

/* cli_io_opts_init - no input, no output, the defaults. */
void cli_io_opts_init(struct cli_io_opts *o);

/*
 * cli_io_parse_opt - whether argv[a->i] is one of --input NAME=FILE,
 * --output NAME=FILE, --integral, --linger-ms MS (0..60000, 0 the
 * default), --batch-rows N (1..16777216): then it is consumed (a->i
 * moved past it and its value) into *o; false and nothing consumed
 * otherwise. A bad value (no '=', an empty NAME or FILE, a NAME given
 * twice, more than CLI_IO_MAX, a number out of range) exits 2 naming the
 * option.
 */
bool cli_io_parse_opt(struct cli_args *a, struct cli_io_opts *o);

/*
 * cli_io_open - resolve o's names against g's inputs and outputs and
 * open the files (outputs through cli_open_out: created now, so a bad
 * path wastes no run). g must be built and outlive io. Returns
 *   0                 *out
 *   CLI_EXIT_USAGE    said on stderr, naming cmd: a NAME that is not an
 *                     input (or output) of g, listing g's; a file that
 *                     cannot be read (missing, a directory, unreadable);
 *                     stdin named twice; --integral on a stream output
 *                     (it keeps no integral); --integral with no
 *                     --output. A file that cannot be created exits 2
 *                     (cli_open_out).
 *   CLI_EXIT_LIBRARY  SC_ENOMEM, said on stderr
 * Nothing is left open on failure.
 */
int cli_io_open(const char *cmd, const struct cli_io_opts *o,
		struct sc_graph *g, struct cli_io **out);

/* Whether io reads any --input (the host then takes its steps from
 * cli_io_next rather than its workload). False for NULL. */
bool cli_io_has_input(const struct cli_io *io);

/*
 * cli_io_next - the next step: the inputs are taken in turn, each
 * waited for together for at most about 100 ms. Returns
 *   0             *out is {input node, a new batch the caller owns}; its
 *                 symbol ids are held by io until the next call (submit
 *                 before calling again)
 *   SC_ETIMEDOUT  nothing ready yet (or a signal came): look at the
 *                 signals and call again
 *   SC_EEMPTY     every input is at its end, every row handed out
 *   SC_EINVAL     a bad row, after every row before it was handed out:
 *                 sc_errmsg() says "file:line:column: what"; or NULL
 *   SC_EIO        a read failed (the file and the system's reason)
 *   SC_ENOMEM, SC_EOVERFLOW (a symbol's count; weights of one row that
 *                 sum past int64)
 * Once it returned an error, it returns that error again.
 */
int cli_io_next(struct cli_io *io, struct sc_settle_step *out);

/*
 * cli_io_attach - install the delta sinks of the stream mode on rt (a
 * runtime of io's graph; before the first submit) and write each output's
 * header. With --integral, nothing is installed. Returns 0, or
 * CLI_EXIT_LIBRARY with the library's message on stderr.
 */
int cli_io_attach(struct cli_io *io, struct sc_runtime *rt);

/* cli_io_broken - whether a write of an output failed (a full disk, a
 * reader that closed its pipe): the host then stops feeding, and
 * cli_io_finish says which and why. Any thread; false for NULL. */
bool cli_io_broken(const struct cli_io *io);

/*
 * cli_io_finish - with --integral, write each output's integral (rt
 * idle: after sc_runtime_wait_idle); then close every output, putting
 * its file in place (cli_close_out). Call it after a bad row too: the
 * outputs keep the changes of the rows before it. Returns 0, or
 * CLI_EXIT_LIBRARY with a message on stderr: an integral that cannot be
 * read (rt not idle, a dead unit), a write that failed (a full disk, a
 * closed pipe) in a sink or here.
 */
int cli_io_finish(struct cli_io *io, struct sc_runtime *rt);

/* cli_io_destroy - close the inputs, release the held symbols and drop
 * the outputs cli_io_finish did not close (their files removed). NULL
 * is allowed. */
void cli_io_destroy(struct cli_io *io);

#endif /* SC_TOOLS_CLI_IO_H */
