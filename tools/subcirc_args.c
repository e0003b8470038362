/*
 * subcirc_args.c - argument parsing of the command line (subcirc.h): every
 * bad argument is refused by name, with exit code 2, before anything runs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/workloads/grid.h"
#include "operators/error.h"
#include "tools/subcirc.h"
#include "units/placement.h"

void __attribute__((noreturn, format(printf, 2, 3)))
die_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	(void)fprintf(stderr, "subcirc %s: ", cmd);
	va_start(ap, fmt);
	/* The analyzer loses va_start on some inlined paths. */
	// NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized)
	(void)vfprintf(stderr, fmt, ap);
	va_end(ap);
	(void)fprintf(stderr, "\n(see `subcirc %s --help`)\n", cmd);
	/* The CLI exits before it starts any thread. */
	exit(EXIT_USAGE); // NOLINT(concurrency-mt-unsafe)
}

int
lib_error(const char *what, int rc)
{
	(void)fprintf(stderr, "subcirc: %s: %s (%s)\n", what, sc_errname(rc),
		      sc_errmsg()[0] ? sc_errmsg() : sc_strerror(rc));
	return EXIT_LIBRARY;
}

void __attribute__((noreturn)) die_library(const char *what, int rc)
{
	/* The CLI exits before it starts any thread. */
	exit(lib_error(what, rc)); // NOLINT(concurrency-mt-unsafe)
}

bool
args_opt(struct args *a, const char *name, const char **val)
{
	const char *s = a->argv[a->i];
	size_t n = strlen(name);

	if (strncmp(s, name, n) != 0 || (s[n] != 0 && s[n] != '='))
		return false;
	if (!val) {
		if (s[n] == '=')
			die_usage(a->cmd, "%s takes no value", name);
		a->i++;
		return true;
	}
	if (s[n] == '=') {
		*val = s + n + 1;
	} else {
		if (a->i + 1 >= a->argc)
			die_usage(a->cmd, "%s needs a value", name);
		*val = a->argv[++a->i];
	}
	a->i++;
	return true;
}

uint64_t
parse_u64(const char *cmd, const char *name, const char *s, uint64_t lo,
	  uint64_t hi)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (!*s || *end || errno || s[0] == '-' || v < lo || v > hi)
		die_usage(cmd,
			  "%s: '%s' is not a whole number in %" PRIu64
			  "..%" PRIu64,
			  name, s, lo, hi);
	return v;
}

double
parse_double(const char *cmd, const char *name, const char *s, double lo,
	     double hi)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (!*s || *end || errno || !(v >= lo && v <= hi))
		die_usage(cmd, "%s: '%s' is not a number in %g..%g", name, s,
			  lo, hi);
	return v;
}

/* A comma list of whole numbers. */
size_t
parse_u32_list(const char *cmd, const char *name, const char *s, uint32_t lo,
	       uint32_t hi, uint32_t *out)
{
	char buf[256], *save = NULL, *tok;
	size_t n = 0;

	if (strlen(s) >= sizeof(buf))
		die_usage(cmd, "%s: list too long", name);
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (n == MAX_LIST)
			die_usage(cmd, "%s: more than %d entries", name,
				  MAX_LIST);
		out[n++] = (uint32_t)parse_u64(cmd, name, tok, lo, hi);
	}
	if (n == 0)
		die_usage(cmd, "%s: empty list", name);
	return n;
}

/* A comma list of placement names, checked against the grid's graph so a
 * misspelled one is refused before anything runs. */
size_t
parse_placements(const char *cmd, const char *s, char out[][32])
{
	char buf[512], *save = NULL, *tok;
	struct sc_grid_opts go = {.rows = 1, .cols = 1};
	struct sc_grid *gr = NULL;
	size_t n = 0;

	if (strlen(s) >= sizeof(buf))
		die_usage(cmd, "--placements: list too long");
	strcpy(buf, s);
	if (sc_grid_create(&go, &gr) != 0)
		die_library("sc_grid_create", SC_ENOMEM);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		struct sc_placement *p = NULL;

		if (n == MAX_LIST || strlen(tok) >= 32)
			die_usage(cmd, "--placements: too many or too long");
		if (sc_placement_parse(sc_grid_graph(gr), tok, 1, &p) != 0)
			die_usage(cmd, "--placements: '%s': %s", tok,
				  sc_errmsg());
		sc_placement_destroy(p);
		strcpy(out[n++], tok);
	}
	sc_grid_destroy(gr);
	if (n == 0)
		die_usage(cmd, "--placements: empty list");
	return n;
}

bool
parse_workload_opt(struct args *a, struct run_cfg *c)
{
	const char *v;

	if (args_opt(a, "--batch", &v))
		c->batch =
		    (uint32_t)parse_u64(a->cmd, "--batch", v, 1, 1 << 20);
	else if (args_opt(a, "--rows", &v))
		c->rows = (int64_t)parse_u64(a->cmd, "--rows", v, 1, 1 << 24);
	else if (args_opt(a, "--cols", &v))
		c->cols = (int64_t)parse_u64(a->cmd, "--cols", v, 1, 1 << 24);
	else if (args_opt(a, "--seed", &v))
		c->seed = parse_u64(a->cmd, "--seed", v, 0, UINT64_MAX);
	else if (args_opt(a, "--capacity", &v)) {
		c->capacity =
		    (uint32_t)parse_u64(a->cmd, "--capacity", v, 1, 1 << 20);
		if (c->capacity & (c->capacity - 1))
			die_usage(a->cmd,
				  "--capacity: %u is not a power of two",
				  c->capacity);
	} else if (args_opt(a, "--budget", &v))
		c->budget =
		    (uint32_t)parse_u64(a->cmd, "--budget", v, 1, 1 << 20);
	else
		return false;
	return true;
}
