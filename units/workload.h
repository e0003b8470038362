/*
 * workload.h - a workload: a circuit and the input that drives it, behind
 * one versioned interface that `subcirc run`, `place` and `stress` drive
 * the same way, whether the workload is built into the CLI (the grid,
 * random circuits, the Nexmark queries, CSV files) or loaded from a
 * user's shared object.
 *
 * What a workload gives. A definition (struct sc_workload_def) is a table
 * of callbacks with the interface version it was compiled against:
 *
 *   create    build an instance from the host's environment (a seed, an
 *             event count, and the user's K=V arguments), with its graph:
 *             named inputs and outputs (graph.h) are how the host finds
 *             them;
 *   next      submission i = 0, 1, ... in order: an input node and a new
 *             batch (an sc_settle_gen_fn, so the same callback feeds a
 *             live runtime, the settle check and a placement's
 *             calibration), or SC_EEMPTY once the input is exhausted;
 *   verify    optionally, a reference: does an output's integral after
 *             the first n submissions equal what the workload knows it
 *             must be? Without one, a host checks a placed run against the
 *             single circuit fed the same submissions (units/settle.h);
 *   destroy   release the instance and its graph.
 *
 * Versions. SC_WORKLOAD_VERSION changes whenever the definition's layout
 * or a callback's meaning changes. A definition is taken only when its
 * `version` equals the library's: the version is the first member, so it
 * reads the same in every layout, and a mismatch is refused naming both
 * numbers (SC_EINVAL), never guessed at.
 *
 * Plugins. A shared object names its definition by exporting the
 * function SC_WORKLOAD_ENTRY ("sc_workload_entry", of type
 * sc_workload_entry_fn); sc_workload_load opens it (dlopen, RTLD_NOW, so
 * a symbol it lacks is reported now and not half way through a run),
 * checks the version and creates the instance. The object stays open until
 * the instance is destroyed. A plugin is built against the installed
 * headers and library: `cc -shared -fPIC mine.c $(pkg-config --cflags
 * --libs subcirc)`.
 *
 * Arguments. The user's K=V pairs reach create through the environment;
 * the workload reads them with sc_workload_arg* (which count each key
 * read). A key create never read is a misspelling: sc_workload_create
 * then refuses the instance, naming the key (SC_EINVAL), so no argument
 * is silently ignored.
 *
 * Threads. An instance is used by one thread at a time (the host's): its
 * callbacks need no locks of their own. Its graph's callbacks (maps,
 * filters) run on workers, as any graph's do.
 */
#ifndef SC_UNITS_WORKLOAD_H
#define SC_UNITS_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "operators/batch.h"
#include "operators/graph.h"
#include "units/settle_step.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The interface's version: what a definition's `version` must equal. */
#define SC_WORKLOAD_VERSION 2u

/* The function a plugin exports, by this name. */
#define SC_WORKLOAD_ENTRY "sc_workload_entry"

/* The most K=V arguments an environment carries. */
#define SC_WORKLOAD_MAX_ARGS 32

/* Flags of a definition. */
#define SC_WORKLOAD_TICKS                                                      \
	1u /* run in tick mode (units/runtime.h): next                         \
	      may give {SC_SETTLE_TICK, NULL} boundaries */

/* One user argument, "key=value" split. */
struct sc_workload_arg {
	const char *key;
	const char *value;
};

/*
 * What the host promises about how it drives an instance (the env's
 * flags). Each lets a workload keep less; a workload may ignore any of
 * them, and its explicit arguments win over what they suggest.
 *
 *   IN_ORDER  the host feeds each submission (to a runtime or a circuit)
 *             before it asks for the next, and never holds one back: a
 *             workload may release what a submission referenced (the
 *             texts of its symbols, operators/symbol.h) once the next is
 *             asked for, so its memory does not grow with the input. A
 *             host that takes submissions ahead of feeding them (the
 *             settle check, which collects them all first) must not set
 *             it.
 *   STREAM    the host reads outputs as streams (their deltas, if at
 *             all), never their integrals: a workload may make its
 *             outputs stream outputs (graph.h), which keep nothing. A
 *             host that compares or verifies integrals must not set it.
 */
#define SC_WORKLOAD_ENV_IN_ORDER 1u
#define SC_WORKLOAD_ENV_STREAM	 2u

/* What the host decides for an instance. Borrowed by create: copy what
 * must outlive it. */
struct sc_workload_env {
	uint64_t seed;	 /* the run's seed */
	uint64_t events; /* rows the host means to submit in all, a hint for
			    sizing (0: no hint) */
	uint32_t flags;	 /* SC_WORKLOAD_ENV_*, or 0: no promise */
	const struct sc_workload_arg *args;
	size_t nargs; /* at most SC_WORKLOAD_MAX_ARGS */
	/* private to the library: which args were read (bit i: args[i]) */
	uint64_t read_;
};

struct sc_workload_def {
	uint32_t version;  /* SC_WORKLOAD_VERSION, as compiled: first, always */
	uint32_t flags;	   /* SC_WORKLOAD_TICKS or 0 */
	const char *name;  /* one word: letters, digits, '-', '_', ':' */
	const char *about; /* one line, for help and reports */
	/*
	 * Build an instance into *self, its graph complete. 0, or a negative
	 * SC_E* code with a message (sc_errorf) naming what was wrong; a
	 * bad argument is SC_EINVAL. Nothing is left on failure. Required.
	 */
	int (*create)(struct sc_workload_env *env, void **self);
	/* Release the instance (its graph included). Required. */
	void (*destroy)(void *self);
	/* The instance's graph, owned by it. Required. */
	struct sc_graph *(*graph)(void *self);
	/*
	 * Submission i (0, 1, ... in order, never skipped): 0 with *out an
	 * input node of the graph and a new batch the caller then owns (a
	 * tick workload may give a boundary instead); SC_EEMPTY when there
	 * is no more input; another SC_E* stops the host. Required.
	 */
	sc_settle_gen_fn next;
	/*
	 * Optional (NULL: none). Whether `integral`, output node `output`'s
	 * integral after the first n submissions, is right: 0 if so,
	 * SC_ECALLBACK with a message naming the first wrong row if not,
	 * another SC_E* if it cannot tell.
	 */
	int (*verify)(void *self, int output, size_t n,
		      const struct sc_batch *integral);
	/*
	 * Optional (NULL: none). The placement (sc_placement_parse's
	 * syntax) the workload suggests for `workers` workers, or NULL for
	 * the host's default. A static string or one the instance owns.
	 */
	const char *(*placement)(void *self, uint32_t workers);
};

/* What a plugin exports under the name SC_WORKLOAD_ENTRY. */
typedef const struct sc_workload_def *(*sc_workload_entry_fn)(void);

struct sc_workload;

/*
 * sc_workload_create - an instance of def in env. Returns:
 *   0            *out is the instance
 *   SC_EINVAL    NULL def, env or out; def->version other than
 *                SC_WORKLOAD_VERSION (the message names both); a required
 *                callback NULL; unknown flags (of def or env); more than
 *                SC_WORKLOAD_MAX_ARGS args, or an arg with a NULL or empty
 *                key or a key given twice; an arg create did not read
 *                (named); a graph that is NULL or has no input or no
 *                output
 *   SC_ENOMEM
 *   other        what def->create returned (its message kept, prefixed
 *                with the workload's name)
 * Nothing is left on failure.
 */
int sc_workload_create(const struct sc_workload_def *def,
		       struct sc_workload_env *env, struct sc_workload **out);

/*
 * sc_workload_load - the definition that the shared object at `path`
 * exports (SC_WORKLOAD_ENTRY), then sc_workload_create with it. Returns
 * what create does, and:
 *   SC_EINVAL    NULL path; a file that cannot be opened or is not a
 *                shared object, or whose dependencies cannot be resolved
 *                (dlerror's words); no SC_WORKLOAD_ENTRY in it; an entry
 *                that returns NULL
 * Nothing stays open on failure.
 */
int sc_workload_load(const char *path, struct sc_workload_env *env,
		     struct sc_workload **out);

/* sc_workload_destroy - the instance and, for a loaded one, its shared
 * object. NULL is allowed. */
void sc_workload_destroy(struct sc_workload *w);

/* The instance's definition, graph (owned by the instance) and name. */
const struct sc_workload_def *sc_workload_def(const struct sc_workload *w);
struct sc_graph *sc_workload_graph(const struct sc_workload *w);
const char *sc_workload_name(const struct sc_workload *w);

/*
 * sc_workload_next - the instance's next submission, numbered by the
 * instance (0, 1, ...). Returns what def->next does: 0 (*out filled,
 * the batch the caller's), SC_EEMPTY at the end (and for ever after), or
 * an error (and for ever after the same code: a failed workload does not
 * resume). SC_EINVAL for NULL; a step naming a node that is not an input
 * of the graph (named), or a NULL batch that is not a tick boundary of
 * a tick workload, is SC_EINVAL too (the batch released).
 */
int sc_workload_next(struct sc_workload *w, struct sc_settle_step *out);

/* How many submissions sc_workload_next has handed out. */
size_t sc_workload_count(const struct sc_workload *w);

/*
 * sc_workload_gen - an sc_settle_gen_fn over an instance (ctx), for the
 * settle check and the calibration: submission i must be the instance's
 * next (i == sc_workload_count), else SC_EINVAL; SC_EEMPTY past the end.
 */
int sc_workload_gen(void *ctx, size_t i, struct sc_settle_step *out);

/*
 * sc_workload_verify - def->verify of output node `output` after the
 * first n submissions. Returns what it does; SC_ENOENT when the workload
 * has no reference (verify NULL); SC_EINVAL for NULL.
 */
int sc_workload_verify(struct sc_workload *w, int output, size_t n,
		       const struct sc_batch *integral);

/* The placement the workload suggests for `workers`, or NULL. */
const char *sc_workload_placement(struct sc_workload *w, uint32_t workers);

/*
 * Arguments, for a definition's create. sc_workload_arg: the value of
 * key (borrowed from env), or NULL when it was not given; either way the
 * key counts as read. The typed readers leave *out at the default `dflt`
 * when the key is absent and return 0; a value that does not parse or is
 * out of lo..hi is SC_EINVAL with a message naming the key, the value and
 * the range. Numbers are digits only (sc_workload_arg_double: also one
 * '.' and an exponent); booleans are true/false/1/0/yes/no.
 */
const char *sc_workload_arg(struct sc_workload_env *env, const char *key);
int sc_workload_arg_u64(struct sc_workload_env *env, const char *key,
			uint64_t dflt, uint64_t lo, uint64_t hi, uint64_t *out);
int sc_workload_arg_double(struct sc_workload_env *env, const char *key,
			   double dflt, double lo, double hi, double *out);
int sc_workload_arg_bool(struct sc_workload_env *env, const char *key,
			 bool dflt, bool *out);

/*
 * sc_workload_parse_arg - split "key=value" (s, borrowed: the pointers
 * point into buf, a copy of it of at least strlen(s)+1 bytes) into *out.
 * SC_EINVAL for NULL, no '=', an empty key, or buf too small.
 */
int sc_workload_parse_arg(const char *s, char *buf, size_t size,
			  struct sc_workload_arg *out);

#ifdef __cplusplus
}
#endif

#endif /* SC_UNITS_WORKLOAD_H */
