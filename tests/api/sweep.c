/*
 * sweep.c - the fixture of the contract sweep (sweep.h): the objects,
 * the checks, and the child process of each case.
 */
#include "tests/api/sweep.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "operators/batch.h"
#include "operators/circuit.h"
#include "operators/distinct.h"
#include "operators/error.h"
#include "operators/graph.h"
#include "operators/join.h"
#include "operators/schema.h"
#include "operators/symbol.h"
#include "operators/trace.h"
#include "runtime/executor.h"
#include "units/edge.h"
#include "units/placement.h"
#include "units/runtime.h"

/* The objects, made on first use in the case's child (the graph is
 * frozen once a circuit or runtime is made from it: a case asks only for
 * what its function takes). */
static struct sc_schema schema1;
static bool schema1_made;
static struct sc_graph *graph;
static struct sc_placement *placement;

static const struct sc_schema *
make_schema(void)
{
	enum sc_type t = SC_TYPE_I64;

	if (!schema1_made && sc_schema_init(&schema1, 1, &t, NULL) == 0)
		schema1_made = true;
	return schema1_made ? &schema1 : NULL;
}

/* in (node 0, one i64 column) -> out (node 1) */
static struct sc_graph *
make_graph(void)
{
	if (graph || sc_graph_create(&graph) != 0)
		return graph;
	if (sc_graph_input(graph, "in", make_schema()) != 0 ||
	    sc_graph_output(graph, "out", 0) != 1) {
		(void)fprintf(stderr, "sweep: the graph: %s\n", sc_errmsg());
		_exit(2);
	}
	return graph;
}

static struct sc_placement *
make_placement(void)
{
	if (!placement &&
	    sc_placement_parse(make_graph(), "single", 1, &placement) != 0)
		placement = NULL;
	return placement;
}

static void *
make_object(const char *type)
{
	void *o = NULL;
	uint64_t row = 1;
	int64_t w = 1;

	if (!strcmp(type, "struct sc_graph*"))
		return make_graph();
	if (!strcmp(type, "struct sc_schema*"))
		return (void *)make_schema();
	if (!strcmp(type, "struct sc_placement*"))
		return make_placement();
	if (!strcmp(type, "struct sc_batch*"))
		(void)sc_batch_from_records(1, &row, &w, 1,
					    (struct sc_batch **)&o);
	else if (!strcmp(type, "struct sc_circuit*"))
		(void)sc_circuit_create(make_graph(), (struct sc_circuit **)&o);
	else if (!strcmp(type, "struct sc_symtab*"))
		(void)sc_symtab_create((struct sc_symtab **)&o);
	else if (!strcmp(type, "struct sc_runtime*"))
		(void)sc_runtime_create(make_graph(), make_placement(), NULL,
					(struct sc_runtime **)&o);
	else if (!strcmp(type, "struct sc_exec*"))
		(void)sc_exec_create(NULL, (struct sc_exec **)&o);
	else if (!strcmp(type, "struct sc_trace*"))
		(void)sc_trace_create(1, (struct sc_trace **)&o);
	else if (!strcmp(type, "struct sc_distinct*"))
		(void)sc_distinct_create(1, (struct sc_distinct **)&o);
	else if (!strcmp(type, "struct sc_join*"))
		(void)sc_join_create(1, 1, 1, (struct sc_join **)&o);
	else if (!strcmp(type, "struct sc_antijoin*"))
		(void)sc_antijoin_create(1, 1, 1, (struct sc_antijoin **)&o);
	else if (!strcmp(type, "struct sc_edge*"))
		(void)sc_edge_create(
		    &(struct sc_edge_opts){.ncols = 1, .capacity = 4},
		    (struct sc_edge **)&o);
	return o;
}

/* One made object per kind and process. */
static struct {
	const char *type;
	void *obj;
} made[32];

static void *
object(const char *type)
{
	size_t i;

	for (i = 0; i < sizeof(made) / sizeof(made[0]) && made[i].type; i++)
		if (!strcmp(made[i].type, type))
			return made[i].obj;
	if (i == sizeof(made) / sizeof(made[0]))
		return NULL;
	made[i].type = type;
	made[i].obj = make_object(type);
	return made[i].obj;
}

/* Zeroed scratch buffers for out-parameters and plain structs: distinct
 * ones for the arguments of one call, none shared with an object. */
static _Alignas(64) unsigned char scratch[16][1 << 16];
static unsigned nscratch;

static void *
scratch_buf(void)
{
	return scratch[nscratch++ % 16];
}

void *
sw_ptr(const char *type, bool is_const, bool is_plain)
{
	static char word[] = "sweep";
	void *o;

	if (!strcmp(type, "char*"))
		return word;
	if (!strcmp(type, "FILE*")) {
		static FILE *null_file;

		if (!null_file)
			null_file = fopen("/dev/null", "w+");
		return null_file;
	}
	if (strstr(type, "**") || strstr(type, "*const*"))
		return scratch_buf();
	if (strncmp(type, "struct ", 7) != 0)
		return scratch_buf(); /* a number, an enum, void */
	if ((is_const || !is_plain) && (o = object(type)) != NULL)
		return o;
	return is_plain ? scratch_buf() : NULL;
}

static void
fail(const struct sw_case *c, const char *fmt, const char *got)
{
	(void)fprintf(stderr, "FAIL %s, %s %s: ", c->fn, c->param,
		      c->null_arg >= 0 ? "NULL" : "negative");
	(void)fprintf(stderr, fmt, got);
	(void)fputc('\n', stderr);
	_exit(1);
}

void
sw_check_int(const struct sw_case *c, int rc)
{
	char got[600];

	(void)snprintf(got, sizeof(got), "%d (%s), message \"%s\"", rc,
		       sc_errname(rc), sc_errmsg());
	if (c->want == SW_WANT_ANYTHING)
		return;
	if (rc >= 0)
		fail(c, "returned %s, not an error", got);
	if (c->want == SW_WANT_CODE && rc != c->code)
		fail(c, "returned %s, not the contract's code", got);
	if (!strstr(sc_errmsg(), c->fn))
		fail(c, "returned %s: the message does not name the function",
		     got);
}

void
sw_check_ptr(const struct sw_case *c, const void *p)
{
	if (c->want != SW_WANT_ANYTHING && p)
		fail(c, "returned %s, not NULL", "a pointer");
}

void
sw_check_none(const struct sw_case *c)
{
	(void)c;
}

static bool
run_one(const struct sw_case *c)
{
	pid_t pid;
	int st;

	(void)fflush(stderr);
	pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		(void)alarm(SW_CASE_SECONDS);
		c->call(c);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid)
		return false;
	if (WIFSIGNALED(st)) {
		(void)fprintf(
		    stderr, "FAIL %s, %s %s: died of signal %d%s\n", c->fn,
		    c->param, c->null_arg >= 0 ? "NULL" : "negative",
		    WTERMSIG(st), WTERMSIG(st) == SIGALRM ? " (a hang)" : "");
		return false;
	}
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

size_t
sw_run(const struct sw_case *cases, size_t n)
{
	size_t bad = 0;

	for (size_t i = 0; i < n; i++)
		if (!run_one(&cases[i]))
			bad++;
	return bad;
}
