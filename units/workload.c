/*
 * workload.c - a workload's instance (workload.h): the checks around a
 * definition's callbacks, the plugin loader and the argument readers.
 *
 * Design. The library trusts a definition no further than its version:
 * every callback's result is checked here (a step naming a node that is
 * not an input, a NULL batch), so a host driving an sc_workload can rely
 * on what sc_workload_next hands out. A failure is sticky: the instance
 * answers the same code from then on, so no host resumes a workload whose
 * state is half of a step.
 */
#include "units/workload.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/error.h"

struct sc_workload {
	const struct sc_workload_def *def;
	void *self;
	struct sc_graph *g;
	void *dl;     /* the plugin's handle, or NULL for a built-in */
	size_t count; /* submissions handed out */
	int stop;     /* 0, SC_EEMPTY, or the error that stopped it */
};

/* --- arguments ------------------------------------------------------------ */

static int
arg_index(const struct sc_workload_env *env, const char *key)
{
	for (size_t i = 0; i < env->nargs; i++)
		if (!strcmp(env->args[i].key, key))
			return (int)i;
	return -1;
}

const char *
sc_workload_arg(struct sc_workload_env *env, const char *key)
{
	if (!env || !key)
		return NULL;
	int i = arg_index(env, key);
	if (i < 0)
		return NULL;
	env->read_ |= 1ull << i;
	return env->args[i].value;
}

int
sc_workload_arg_u64(struct sc_workload_env *env, const char *key, uint64_t dflt,
		    uint64_t lo, uint64_t hi, uint64_t *out)
{
	static const char fn[] = "sc_workload_arg_u64";

	if (!env || !key || !out)
		return sc__fail(SC_EINVAL, "%s: NULL argument", fn);
	const char *v = sc_workload_arg(env, key);
	if (!v) {
		*out = dflt;
		return 0;
	}
	uint64_t x = 0;
	bool ok = *v != '\0';
	for (const char *p = v; *p && ok; p++) {
		if (*p < '0' || *p > '9' || x > (UINT64_MAX - 9) / 10)
			ok = false;
		else
			x = x * 10 + (uint64_t)(*p - '0');
	}
	if (!ok || x < lo || x > hi)
		return sc__fail(SC_EINVAL,
				"%s: %s=%s: not a whole number in %" PRIu64
				"..%" PRIu64,
				fn, key, v, lo, hi);
	*out = x;
	return 0;
}

int
sc_workload_arg_double(struct sc_workload_env *env, const char *key,
		       double dflt, double lo, double hi, double *out)
{
	static const char fn[] = "sc_workload_arg_double";

	if (!env || !key || !out)
		return sc__fail(SC_EINVAL, "%s: NULL argument", fn);
	const char *v = sc_workload_arg(env, key);
	if (!v) {
		*out = dflt;
		return 0;
	}
	/* strtod alone takes signs, spaces, hex, "nan" and "inf": the digits
	 * are checked first, as the CLI's numbers are. */
	bool ok = *v >= '0' && *v <= '9';
	for (const char *p = v; *p && ok; p++)
		ok = (*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' ||
		     *p == 'E' ||
		     ((*p == '-' || *p == '+') && p > v &&
		      (p[-1] == 'e' || p[-1] == 'E'));
	char *end = NULL;
	errno = 0;
	double x = ok ? strtod(v, &end) : 0.0;
	if (!ok || errno || !end || *end || !isfinite(x) || x < lo || x > hi)
		return sc__fail(SC_EINVAL, "%s: %s=%s: not a number in %g..%g",
				fn, key, v, lo, hi);
	*out = x;
	return 0;
}

int
sc_workload_arg_bool(struct sc_workload_env *env, const char *key, bool dflt,
		     bool *out)
{
	static const char fn[] = "sc_workload_arg_bool";
	static const char *const yes[] = {"true", "1", "yes"};
	static const char *const no[] = {"false", "0", "no"};

	if (!env || !key || !out)
		return sc__fail(SC_EINVAL, "%s: NULL argument", fn);
	const char *v = sc_workload_arg(env, key);
	if (!v) {
		*out = dflt;
		return 0;
	}
	for (size_t i = 0; i < 3; i++) {
		if (!strcmp(v, yes[i]) || !strcmp(v, no[i])) {
			*out = !strcmp(v, yes[i]);
			return 0;
		}
	}
	return sc__fail(SC_EINVAL,
			"%s: %s=%s: not true, false, 1, 0, yes or no", fn, key,
			v);
}

int
sc_workload_parse_arg(const char *s, char *buf, size_t size,
		      struct sc_workload_arg *out)
{
	static const char fn[] = "sc_workload_parse_arg";

	if (!s || !buf || !out)
		return sc__fail(SC_EINVAL, "%s: NULL argument", fn);
	size_t len = strlen(s);
	if (len + 1 > size)
		return sc__fail(SC_EINVAL, "%s: '%s': longer than %zu bytes",
				fn, s, size ? size - 1 : 0);
	const char *eq = strchr(s, '=');
	if (!eq)
		return sc__fail(SC_EINVAL, "%s: '%s': not KEY=VALUE", fn, s);
	if (eq == s)
		return sc__fail(SC_EINVAL, "%s: '%s': an empty key", fn, s);
	memcpy(buf, s, len + 1);
	buf[eq - s] = '\0';
	out->key = buf;
	out->value = buf + (eq - s) + 1;
	return 0;
}

/* --- instances ------------------------------------------------------------ */

/* What a callback said when it failed with rc, copied out of the thread's
 * message (which the next message overwrites), or rc's words. */
static void
inner_detail(int rc, char *buf, size_t size)
{
	const char *d = sc_errdetail();
	(void)snprintf(buf, size, "%s", d && *d ? d : sc_strerror(rc));
}

static bool
name_ok(const char *name)
{
	if (!name || !*name)
		return false;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' ||
		      *p == ':'))
			return false;
	return true;
}

static int
check_def(const struct sc_workload_def *def)
{
	static const char fn[] = "sc_workload_create";

	if (def->version != SC_WORKLOAD_VERSION)
		return sc__fail(SC_EINVAL,
				"%s: the workload was built for interface "
				"version %" PRIu32 ", this library has "
				"version %u",
				fn, def->version, SC_WORKLOAD_VERSION);
	if (!name_ok(def->name))
		return sc__fail(SC_EINVAL,
				"%s: the workload's name is missing or not "
				"letters, digits, '-', '_' and ':'",
				fn);
	if (!def->create || !def->destroy || !def->graph || !def->next)
		return sc__fail(SC_EINVAL,
				"%s: workload '%s' lacks a required callback "
				"(%s)",
				fn, def->name,
				!def->create	? "create"
				: !def->destroy ? "destroy"
				: !def->graph	? "graph"
						: "next");
	if (def->flags & ~SC_WORKLOAD_TICKS)
		return sc__fail(
		    SC_EINVAL, "%s: workload '%s' has unknown flags 0x%" PRIx32,
		    fn, def->name, def->flags);
	return 0;
}

static int
check_env(const struct sc_workload_env *env)
{
	static const char fn[] = "sc_workload_create";

	if (env->flags & ~(SC_WORKLOAD_ENV_IN_ORDER | SC_WORKLOAD_ENV_STREAM))
		return sc__fail(SC_EINVAL,
				"%s: the environment has unknown flags "
				"0x%" PRIx32,
				fn, env->flags);
	if (env->nargs > SC_WORKLOAD_MAX_ARGS)
		return sc__fail(SC_EINVAL, "%s: %zu arguments (at most %d)", fn,
				env->nargs, SC_WORKLOAD_MAX_ARGS);
	if (env->nargs && !env->args)
		return sc__fail(SC_EINVAL, "%s: NULL args", fn);
	for (size_t i = 0; i < env->nargs; i++) {
		const char *k = env->args[i].key;
		if (!k || !*k || !env->args[i].value)
			return sc__fail(SC_EINVAL,
					"%s: argument %zu has no key or no "
					"value",
					fn, i);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(env->args[j].key, k))
				return sc__fail(SC_EINVAL,
						"%s: argument '%s' given "
						"twice",
						fn, k);
	}
	return 0;
}

/* The graph's inputs and outputs: a workload without either drives
 * nothing. */
static int
check_graph(const struct sc_workload_def *def, const struct sc_graph *g)
{
	static const char fn[] = "sc_workload_create";
	size_t in = 0, out = 0;

	if (!g)
		return sc__fail(SC_EINVAL, "%s: workload '%s' has no graph", fn,
				def->name);
	for (size_t i = 0; i < sc_graph_node_count(g); i++) {
		struct sc_node_info ni;
		if (sc_graph_node_info(g, (int)i, &ni))
			continue;
		in += ni.kind == SC_NODE_INPUT;
		out += ni.kind == SC_NODE_OUTPUT;
	}
	if (!in || !out)
		return sc__fail(SC_EINVAL,
				"%s: workload '%s''s graph has no %s", fn,
				def->name, !in ? "input" : "output");
	return 0;
}

static int
create_with(const struct sc_workload_def *def, struct sc_workload_env *env,
	    void *dl, struct sc_workload **out)
{
	static const char fn[] = "sc_workload_create";
	int rc = check_def(def);

	if (!rc)
		rc = check_env(env);
	if (rc)
		return rc;
	struct sc_workload *w = calloc(1, sizeof(*w));
	if (!w)
		return sc__fail(SC_ENOMEM, "%s: the instance", fn);
	w->def = def;
	w->dl = dl;
	env->read_ = 0;
	rc = def->create(env, &w->self);
	if (rc) {
		char m[512];
		inner_detail(rc, m, sizeof(m));
		rc = sc__fail(rc < 0 ? rc : SC_ECALLBACK,
			      "%s: workload '%s': %s", fn, def->name, m);
		free(w);
		return rc;
	}
	w->g = def->graph(w->self);
	rc = check_graph(def, w->g);
	for (size_t i = 0; !rc && i < env->nargs; i++)
		if (!(env->read_ & (1ull << i)))
			rc = sc__fail(SC_EINVAL,
				      "%s: workload '%s' takes no argument "
				      "'%s'",
				      fn, def->name, env->args[i].key);
	if (rc) {
		def->destroy(w->self);
		free(w);
		return rc;
	}
	*out = w;
	return 0;
}

int
sc_workload_create(const struct sc_workload_def *def,
		   struct sc_workload_env *env, struct sc_workload **out)
{
	if (!def || !env || !out)
		return sc__fail(SC_EINVAL, "sc_workload_create: NULL %s",
				!def   ? "def"
				: !env ? "env"
				       : "out");
	return create_with(def, env, NULL, out);
}

int
sc_workload_load(const char *path, struct sc_workload_env *env,
		 struct sc_workload **out)
{
	static const char fn[] = "sc_workload_load";

	if (!path || !env || !out)
		return sc__fail(SC_EINVAL, "%s: NULL %s", fn,
				!path  ? "path"
				: !env ? "env"
				       : "out");
	/* dlopen searches the library path for a bare name: a plugin is a
	 * file the user names, so a name without '/' is taken as ./name. */
	char buf[4096];
	const char *p = path;
	if (!strchr(path, '/')) {
		if ((size_t)snprintf(buf, sizeof(buf), "./%s", path) >=
		    sizeof(buf))
			return sc__fail(SC_EINVAL, "%s: '%s': path too long",
					fn, path);
		p = buf;
	}
	(void)dlerror();
	void *dl = dlopen(p, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		const char *e = dlerror();
		return sc__fail(SC_EINVAL, "%s: '%s': %s", fn, path,
				e ? e : "cannot be opened");
	}
	sc_workload_entry_fn entry;
	void *sym = dlsym(dl, SC_WORKLOAD_ENTRY);
	/* POSIX's way to turn a data pointer from dlsym into a function
	 * pointer: copy its bytes. */
	memcpy(&entry, &sym, sizeof(entry));
	const struct sc_workload_def *def = sym ? entry() : NULL;
	int rc = 0;
	if (!sym)
		rc = sc__fail(SC_EINVAL,
			      "%s: '%s' exports no %s (a workload plugin "
			      "defines `const struct sc_workload_def "
			      "*%s(void)`)",
			      fn, path, SC_WORKLOAD_ENTRY, SC_WORKLOAD_ENTRY);
	else if (!def)
		rc = sc__fail(SC_EINVAL, "%s: '%s': %s() returned NULL", fn,
			      path, SC_WORKLOAD_ENTRY);
	else
		rc = sc__errwrap(create_with(def, env, dl, out), fn);
	if (rc)
		dlclose(dl);
	return rc;
}

void
sc_workload_destroy(struct sc_workload *w)
{
	if (!w)
		return;
	w->def->destroy(w->self);
	if (w->dl)
		dlclose(w->dl);
	free(w);
}

const struct sc_workload_def *
sc_workload_def(const struct sc_workload *w)
{
	return w ? w->def : NULL;
}

struct sc_graph *
sc_workload_graph(const struct sc_workload *w)
{
	return w ? w->g : NULL;
}

const char *
sc_workload_name(const struct sc_workload *w)
{
	return w ? w->def->name : NULL;
}

size_t
sc_workload_count(const struct sc_workload *w)
{
	return w ? w->count : 0;
}

/* A step the host can submit: an input node of the graph, a batch (or a
 * tick workload's boundary). */
static int
check_step(const struct sc_workload *w, const struct sc_settle_step *s)
{
	static const char fn[] = "sc_workload_next";
	struct sc_node_info ni;

	if (s->input == SC_SETTLE_TICK && !s->batch) {
		if (w->def->flags & SC_WORKLOAD_TICKS)
			return 0;
		return sc__fail(SC_EINVAL,
				"%s: workload '%s' gave a tick boundary at "
				"submission %zu but is not a tick workload",
				fn, w->def->name, w->count);
	}
	if (!s->batch)
		return sc__fail(SC_EINVAL,
				"%s: workload '%s' gave no batch at "
				"submission %zu",
				fn, w->def->name, w->count);
	if (sc_graph_node_info(w->g, s->input, &ni) || ni.kind != SC_NODE_INPUT)
		return sc__fail(SC_EINVAL,
				"%s: workload '%s' submitted to node %d, "
				"which is not an input of its graph",
				fn, w->def->name, s->input);
	return 0;
}

int
sc_workload_next(struct sc_workload *w, struct sc_settle_step *out)
{
	static const char fn[] = "sc_workload_next";

	if (!w || !out)
		return sc__fail(SC_EINVAL, "%s: NULL %s", fn, !w ? "w" : "out");
	if (w->stop)
		return w->stop == SC_EEMPTY
			   ? SC_EEMPTY
			   : sc__fail(w->stop,
				      "%s: workload '%s' failed before "
				      "(%s)",
				      fn, w->def->name, sc_errname(w->stop));
	struct sc_settle_step s = {.input = -2, .batch = NULL};
	int rc = w->def->next(w->self, w->count, &s);
	if (rc == SC_EEMPTY) {
		sc_batch_release(s.batch);
		w->stop = SC_EEMPTY;
		return SC_EEMPTY;
	}
	if (rc) {
		sc_batch_release(s.batch);
		w->stop = rc < 0 ? rc : SC_ECALLBACK;
		char m[512];
		inner_detail(w->stop, m, sizeof(m));
		return sc__fail(w->stop,
				"%s: workload '%s', submission %zu: %s", fn,
				w->def->name, w->count, m);
	}
	rc = check_step(w, &s);
	if (rc) {
		sc_batch_release(s.batch);
		w->stop = rc;
		return rc;
	}
	w->count++;
	*out = s;
	return 0;
}

int
sc_workload_gen(void *ctx, size_t i, struct sc_settle_step *out)
{
	struct sc_workload *w = ctx;

	if (!w || !out)
		return sc__fail(SC_EINVAL, "sc_workload_gen: NULL %s",
				!w ? "ctx" : "out");
	if (i != w->count)
		return sc__fail(SC_EINVAL,
				"sc_workload_gen: submission %zu asked, the "
				"next is %zu",
				i, w->count);
	return sc_workload_next(w, out);
}

int
sc_workload_verify(struct sc_workload *w, int output, size_t n,
		   const struct sc_batch *integral)
{
	static const char fn[] = "sc_workload_verify";

	if (!w || !integral)
		return sc__fail(SC_EINVAL, "%s: NULL %s", fn,
				!w ? "w" : "integral");
	if (!w->def->verify)
		return SC_ENOENT;
	int rc = w->def->verify(w->self, output, n, integral);
	if (rc > 0)
		rc = SC_ECALLBACK;
	return rc ? sc__errwrap(rc, fn) : 0;
}

const char *
sc_workload_placement(struct sc_workload *w, uint32_t workers)
{
	if (!w || !w->def->placement)
		return NULL;
	return w->def->placement(w->self, workers);
}
