/*
 * cli_io.c - CSV data in and out of any circuit (cli_io.h).
 */
#include "tools/cli_io.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/harness.h"
#include "bench/workloads/csv.h"
#include "operators/batch.h"
#include "operators/error.h"
#include "operators/graph.h"
#include "units/runtime.h"

/* How long cli_io_next waits for any input before SC_ETIMEDOUT, so the
 * host looks at signals about ten times a second. */
#define IO_WAIT_MS 100

struct io_in {
	const char *path;
	int node;
	struct sc_csv_stream *st;
	bool done; /* at its end */
};

struct io_out {
	const char *name; /* the graph's */
	const char *path;
	int node;
	const struct sc_schema *schema;
	FILE *f;
	bool closed;	     /* cli_close_out ran */
	pthread_mutex_t mu;  /* the sinks of its replicas write in turn */
	int err;	     /* a sink's write failed (then nothing more) */
	int sys_errno;	     /* why, as the system said */
	atomic_bool *broken; /* the io's: set with err */
};

struct cli_io {
	const char *cmd;
	struct sc_graph *g;
	bool integral;
	struct io_in in[CLI_IO_MAX];
	size_t nin;
	struct io_out out[CLI_IO_MAX];
	size_t nout;
	size_t turn; /* the input to try first */
	int err;     /* the error cli_io_next returns again */
	char errmsg[512];
	atomic_bool broken; /* an output's write failed (a sink's thread) */
};

void
cli_io_opts_init(struct cli_io_opts *o)
{
	memset(o, 0, sizeof(*o));
}

/* A NAME=FILE value of option opt into list[*n]. */
static void
io_spec_add(struct cli_args *a, const char *opt, const char *val,
	    struct cli_io_spec *list, size_t *n)
{
	struct cli_io_spec *s;
	char *eq;

	if (*n >= CLI_IO_MAX)
		cli_die_usage(a->cmd, "%s: more than %d", opt, CLI_IO_MAX);
	s = &list[*n];
	if (strlen(val) >= sizeof(s->buf))
		cli_die_usage(a->cmd, "%s: '%.40s...' is too long", opt, val);
	(void)snprintf(s->buf, sizeof(s->buf), "%s", val);
	eq = strchr(s->buf, '=');
	if (!eq || eq == s->buf || !eq[1])
		cli_die_usage(a->cmd, "%s: '%s' is not NAME=FILE", opt, val);
	*eq = '\0';
	s->node = s->buf;
	s->path = eq + 1;
	for (size_t i = 0; i < *n; i++)
		if (!strcmp(list[i].node, s->node))
			cli_die_usage(a->cmd, "%s: '%s' given twice", opt,
				      s->node);
	(*n)++;
}

bool
cli_io_parse_opt(struct cli_args *a, struct cli_io_opts *o)
{
	const char *v;

	if (cli_args_opt(a, "--input", &v))
		io_spec_add(a, "--input", v, o->in, &o->nin);
	else if (cli_args_opt(a, "--output", &v))
		io_spec_add(a, "--output", v, o->out, &o->nout);
	else if (cli_args_opt(a, "--integral", NULL))
		o->integral = true;
	else if (cli_args_opt(a, "--linger-ms", &v))
		o->linger_ms =
		    (uint32_t)cli_parse_u64(a->cmd, "--linger-ms", v, 0, 60000);
	else if (cli_args_opt(a, "--batch-rows", &v))
		o->batch_rows = (uint32_t)cli_parse_u64(a->cmd, "--batch-rows",
							v, 1, 1u << 24);
	else
		return false;
	return true;
}

/* "a, b, c": the names of g's nodes of kind k, for a message. */
static void
io_names(const struct sc_graph *g, enum sc_node_kind k, char *buf, size_t n)
{
	size_t at = 0;

	buf[0] = '\0';
	for (size_t id = 0; id < sc_graph_node_count(g) && at < n; id++) {
		struct sc_node_info ni;
		int w;

		if (sc_graph_node_info(g, (int)id, &ni) != 0 || ni.kind != k)
			continue;
		w = snprintf(buf + at, n - at, "%s%s", at ? ", " : "", ni.name);
		at += w > 0 ? (size_t)w : 0;
	}
	if (!buf[0])
		(void)snprintf(buf, n, "none");
}

/* The node named `name` of kind k, or -1 said on stderr. */
static int
io_find(const char *cmd, const char *opt, const struct sc_graph *g,
	const char *name, enum sc_node_kind k, struct sc_node_info *ni)
{
	int id = sc_graph_find(g, name);
	char names[512];

	if (id >= 0 && sc_graph_node_info(g, id, ni) == 0 && ni->kind == k)
		return id;
	io_names(g, k, names, sizeof(names));
	(void)fprintf(stderr,
		      "subcirc %s: %s %s: the graph has no %s named '%s' "
		      "(its %ss: %s)\n",
		      cmd, opt, name, sc_node_kind_name(k), name,
		      sc_node_kind_name(k), names);
	return -1;
}

static int
io_open_in(struct cli_io *io, const struct cli_io_opts *o, size_t i)
{
	const struct cli_io_spec *s = &o->in[i];
	struct sc_csv_stream_opts so = {
	    .batch_rows = o->batch_rows,
	    .linger_ms = o->linger_ms,
	};
	struct sc_node_info ni;
	struct io_in *in = &io->in[i];
	int id, rc;

	if ((id = io_find(io->cmd, "--input", io->g, s->node, SC_NODE_INPUT,
			  &ni)) < 0)
		return CLI_EXIT_USAGE;
	for (size_t j = 0; j < i; j++)
		if (!strcmp(s->path, "-") && !strcmp(o->in[j].path, "-")) {
			(void)fprintf(stderr,
				      "subcirc %s: --input %s=-: stdin is "
				      "read by --input %s already\n",
				      io->cmd, s->node, o->in[j].node);
			return CLI_EXIT_USAGE;
		}
	in->path = s->path;
	in->node = id;
	if (!strcmp(s->path, "-"))
		rc = sc_csv_stream_create(0, "stdin", ni.schema, &so, &in->st);
	else
		rc = sc_csv_stream_open(s->path, ni.schema, &so, &in->st);
	if (rc == 0)
		return 0;
	(void)fprintf(stderr, "subcirc %s: --input %s: %s\n", io->cmd, s->node,
		      sc_errdetail());
	return rc == SC_ENOMEM ? CLI_EXIT_LIBRARY : CLI_EXIT_USAGE;
}

static int
io_open_out(struct cli_io *io, const struct cli_io_opts *o, size_t i)
{
	const struct cli_io_spec *s = &o->out[i];
	struct sc_node_info ni;
	struct io_out *out = &io->out[i];
	int id;

	if ((id = io_find(io->cmd, "--output", io->g, s->node, SC_NODE_OUTPUT,
			  &ni)) < 0)
		return CLI_EXIT_USAGE;
	if (o->integral && ni.stream) {
		(void)fprintf(stderr,
			      "subcirc %s: --output %s with --integral: a "
			      "stream output keeps no integral (leave "
			      "--integral out for its changes)\n",
			      io->cmd, s->node);
		return CLI_EXIT_USAGE;
	}
	out->name = s->node;
	out->path = s->path;
	out->node = id;
	out->schema = ni.schema;
	out->f = cli_open_out(io->cmd, "--output", s->path);
	return 0;
}

/* Free io and what it opened; outputs not closed are dropped. */
static void
io_free(struct cli_io *io)
{
	for (size_t i = 0; i < io->nin; i++)
		sc_csv_stream_destroy(io->in[i].st);
	for (size_t i = 0; i < io->nout; i++) {
		if (!io->out[i].closed && io->out[i].f != stdout)
			cli_drop_out(io->out[i].f);
		(void)pthread_mutex_destroy(&io->out[i].mu);
	}
	free(io);
}

int
cli_io_open(const char *cmd, const struct cli_io_opts *o, struct sc_graph *g,
	    struct cli_io **out)
{
	struct cli_io *io;
	int rc = 0;

	if (o->integral && !o->nout) {
		(void)fprintf(stderr,
			      "subcirc %s: --integral needs an "
			      "--output NAME=FILE\n",
			      cmd);
		return CLI_EXIT_USAGE;
	}
	if (!(io = calloc(1, sizeof(*io))))
		return cli_lib_error("cli_io_open", SC_ENOMEM);
	io->cmd = cmd;
	io->g = g;
	io->integral = o->integral;
	atomic_init(&io->broken, false);
	for (size_t i = 0; i < o->nin && !rc; i++, io->nin++)
		rc = io_open_in(io, o, i);
	for (size_t i = 0; i < o->nout && !rc; i++) {
		if (pthread_mutex_init(&io->out[i].mu, NULL) != 0) {
			rc = cli_lib_error("cli_io_open", SC_ENOMEM);
			break;
		}
		io->out[i].broken = &io->broken;
		io->nout++;
		rc = io_open_out(io, o, i);
	}
	if (rc) {
		io_free(io);
		return rc;
	}
	*out = io;
	return 0;
}

bool
cli_io_has_input(const struct cli_io *io)
{
	return io && io->nin > 0;
}

/* Keep rc, with the message raised, as the error next returns again. */
static int
io_keep(struct cli_io *io, int rc)
{
	io->err = rc;
	(void)snprintf(io->errmsg, sizeof(io->errmsg), "%s", sc_errdetail());
	return rc;
}

/* The batch of b for input in: 0 and *out, or an error kept. */
static int
io_step(struct cli_io *io, const struct io_in *in, const struct sc_csv_batch *b,
	struct sc_settle_step *out)
{
	const struct sc_schema *s = sc_graph_schema(io->g, in->node);
	struct sc_batch *batch = NULL;
	int rc =
	    sc_batch_from_records(s->ncols, b->rows, b->weights, b->n, &batch);

	if (rc)
		return io_keep(
		    io, sc_errorf(rc, "%s: the rows from line %llu: %s",
				  in->path, (unsigned long long)b->first_line,
				  sc_errdetail()));
	out->input = in->node;
	out->batch = batch;
	return 0;
}

/* Try each input that is not at its end once, without waiting: 0 (a
 * step), SC_ETIMEDOUT (none ready), SC_EEMPTY (all at their end), or an
 * error. */
static int
io_try(struct cli_io *io, struct sc_settle_step *out)
{
	bool any = false;

	for (size_t k = 0; k < io->nin; k++) {
		size_t i = (io->turn + k) % io->nin;
		struct io_in *in = &io->in[i];
		struct sc_csv_batch b;
		int rc;

		if (in->done)
			continue;
		rc = sc_csv_stream_next(in->st, 0, &b);
		if (rc == SC_EEMPTY) {
			in->done = true;
			continue;
		}
		any = true;
		if (rc == SC_ETIMEDOUT)
			continue;
		if (rc)
			return io_keep(io, rc);
		io->turn = i + 1;
		return io_step(io, in, &b, out);
	}
	return any ? SC_ETIMEDOUT : SC_EEMPTY;
}

/*
 * Wait until an input has bytes, at most ms. A poll of every descriptor
 * rather than one stream's wait, so no input waits behind another; a
 * stream with rows lingering is looked at again within 1 ms, as its
 * linger runs on the clock, not on bytes.
 */
static void
io_wait(struct cli_io *io, int ms)
{
	struct pollfd p[CLI_IO_MAX];
	nfds_t n = 0;

	for (size_t i = 0; i < io->nin; i++)
		if (!io->in[i].done)
			p[n++] = (struct pollfd){
			    .fd = sc_csv_stream_fd(io->in[i].st),
			    .events = POLLIN,
			};
	(void)poll(p, n, ms);
}

int
cli_io_next(struct cli_io *io, struct sc_settle_step *out)
{
	uint64_t until;

	if (!io || !out)
		return sc_errorf(SC_EINVAL, "cli_io_next: NULL");
	if (io->err)
		return sc_errorf(io->err, "%s", io->errmsg);
	until = sc_bench_now_ns() / 1000000u + IO_WAIT_MS;
	for (;;) {
		int rc = io_try(io, out);

		if (rc != SC_ETIMEDOUT)
			return rc;
		if (sc_bench_now_ns() / 1000000u >= until)
			return SC_ETIMEDOUT;
		/* Rows may be lingering in a stream: wake to hand them out
		 * on time, with at most a millisecond late. */
		io_wait(io, 1);
		if (cli_signal_caught())
			return SC_ETIMEDOUT;
	}
}

/* The header c1,...,cN,weight. */
static int
io_header(struct io_out *o)
{
	char names[SC_SCHEMA_MAX_COLS][12]; /* "c" and any uint32_t */
	const char *cols[SC_SCHEMA_MAX_COLS];

	for (uint32_t c = 0; c < o->schema->ncols; c++) {
		(void)snprintf(names[c], sizeof(names[c]), "c%u", c + 1);
		cols[c] = names[c];
	}
	return sc_csv_write_header(o->f, cols, o->schema->ncols, true);
}

/* The rows of b with their weights. */
static int
io_rows(struct io_out *o, const struct sc_batch *b)
{
	for (size_t i = 0; i < sc_batch_count(b); i++) {
		int64_t w = sc_batch_weight(b, i);
		int rc =
		    sc_csv_write_row(o->f, o->schema, sc_batch_row(b, i), &w);

		if (rc)
			return rc;
	}
	return 0;
}

/* A write of o failed: kept, with the system's reason, for
 * cli_io_finish, and said to the host through cli_io_broken. */
static void
io_failed(struct io_out *o)
{
	o->err = SC_EIO;
	o->sys_errno = errno;
	atomic_store(o->broken, true);
}

/* The delta sink: one step's change, flushed. A failed write is kept
 * for cli_io_finish rather than failing the step: the circuit's state
 * is right whatever became of its copy in a file. */
static int
io_sink(void *ctx, int node, const struct sc_batch *delta)
{
	struct io_out *o = ctx;

	(void)node;
	(void)pthread_mutex_lock(&o->mu);
	if (!o->err && (io_rows(o, delta) != 0 || fflush(o->f) != 0))
		io_failed(o);
	(void)pthread_mutex_unlock(&o->mu);
	return 0;
}

bool
cli_io_broken(const struct cli_io *io)
{
	return io && atomic_load(&((struct cli_io *)io)->broken);
}

int
cli_io_attach(struct cli_io *io, struct sc_runtime *rt)
{
	int rc;

	if (!io || !rt)
		return cli_lib_error("cli_io_attach",
				     sc_errorf(SC_EINVAL, "NULL"));
	if (io->integral)
		return 0;
	for (size_t i = 0; i < io->nout; i++) {
		struct io_out *o = &io->out[i];

		if ((rc = sc_runtime_on_delta(rt, o->node, io_sink, o)) != 0)
			return cli_lib_error("sc_runtime_on_delta", rc);
		if (io_header(o) != 0 || fflush(o->f) != 0)
			io_failed(o);
	}
	return 0;
}

/* The integral of output o, written whole. */
static int
io_integral(struct cli_io *io, struct io_out *o, struct sc_runtime *rt)
{
	struct sc_batch *b = NULL;
	int rc = sc_runtime_integral(rt, o->node, &b);

	if (rc) {
		(void)fprintf(stderr,
			      "subcirc %s: --output %s: its integral: %s\n",
			      io->cmd, o->name, sc_errdetail());
		return CLI_EXIT_LIBRARY;
	}
	if (io_header(o) != 0 || io_rows(o, b) != 0)
		io_failed(o);
	sc_batch_release(b);
	return 0;
}

int
cli_io_finish(struct cli_io *io, struct sc_runtime *rt)
{
	int ret = 0;

	if (!io)
		return cli_lib_error("cli_io_finish",
				     sc_errorf(SC_EINVAL, "NULL"));
	for (size_t i = 0; i < io->nout; i++) {
		struct io_out *o = &io->out[i];
		int rc = 0;

		if (o->closed)
			continue;
		if (io->integral)
			rc = rt ? io_integral(io, o, rt) : CLI_EXIT_LIBRARY;
		if (o->err && !rc) {
			bool out = o->f == stdout;
			char why[128] = "";

			(void)strerror_r(o->sys_errno, why, sizeof(why));
			(void)fprintf(stderr,
				      "subcirc %s: --output %s: writing %s%s%s "
				      "failed: %s\n",
				      io->cmd, o->name, out ? "" : "'",
				      out ? "standard output" : o->path,
				      out ? "" : "'", why);
			rc = CLI_EXIT_LIBRARY;
		}
		if (rc) {
			if (o->f != stdout)
				cli_drop_out(o->f);
		} else {
			rc = cli_close_out(io->cmd, o->path, o->f);
		}
		o->closed = true;
		if (rc && !ret)
			ret = rc;
	}
	return ret;
}

void
cli_io_destroy(struct cli_io *io)
{
	if (io)
		io_free(io);
}
