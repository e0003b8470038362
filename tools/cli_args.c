/*
 * cli_args.c - argument parsing of the command line (cli.h): every
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
#include "tools/cli.h"
#include "units/placement.h"

void __attribute__((noreturn, format(printf, 2, 3)))
cli_die_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	(void)fprintf(stderr, "subcirc %s: ", cmd);
	va_start(ap, fmt);
	/* The analyzer loses va_start on some inlined paths. */
	// NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized)
	(void)vfprintf(stderr, fmt, ap);
	va_end(ap);
	(void)fprintf(stderr, "\n(see `subcirc %s --help`)\n", cmd);
	cli_exit(CLI_EXIT_USAGE);
}

int
cli_lib_error(const char *what, int rc)
{
	(void)fprintf(stderr, "subcirc: %s: %s (%s)\n", what, sc_errname(rc),
		      sc_errdetail()[0] ? sc_errdetail() : sc_strerror(rc));
	return CLI_EXIT_LIBRARY;
}

void __attribute__((noreturn)) cli_die_library(const char *what, int rc)
{
	cli_exit(cli_lib_error(what, rc));
}

bool
cli_args_opt(struct cli_args *a, const char *name, const char **val)
{
	const char *s = a->argv[a->i];
	size_t n = strlen(name);

	if (strncmp(s, name, n) != 0 || (s[n] != 0 && s[n] != '='))
		return false;
	if (!val) {
		if (s[n] == '=')
			cli_die_usage(a->cmd, "%s takes no value", name);
		a->i++;
		return true;
	}
	if (s[n] == '=') {
		*val = s + n + 1;
	} else {
		if (a->i + 1 >= a->argc)
			cli_die_usage(a->cmd, "%s needs a value", name);
		*val = a->argv[++a->i];
	}
	a->i++;
	return true;
}

/* Whether s is digits only (at least one): no sign, no spaces, so that
 * strtoull's leniency (leading blanks, '+', a '-' that wraps) never
 * reaches a value. */
static bool
all_digits(const char *s)
{
	return *s && s[strspn(s, "0123456789")] == 0;
}

uint64_t
cli_parse_u64(const char *cmd, const char *name, const char *s, uint64_t lo,
	      uint64_t hi)
{
	unsigned long long v = 0;

	errno = 0;
	if (all_digits(s))
		v = strtoull(s, NULL, 10);
	if (!all_digits(s) || errno || v < lo || v > hi)
		cli_die_usage(cmd,
			      "%s: '%s' is not a whole number in %" PRIu64
			      "..%" PRIu64,
			      name, s, lo, hi);
	return v;
}

uint32_t
cli_parse_capacity(const char *cmd, const char *name, const char *s)
{
	uint32_t c = (uint32_t)cli_parse_u64(cmd, name, s, 1, 1 << 20);

	if (c & (c - 1))
		cli_die_usage(cmd, "%s: %u is not a power of two", name, c);
	return c;
}

/* Whether s is a plain decimal: digits with at most one '.', at least one
 * digit, then an optional exponent (e or E, an optional sign, digits).
 * No sign, spaces, hex, inf or nan. */
static bool
plain_decimal(const char *s)
{
	size_t i = strspn(s, "0123456789"), frac = 0;

	if (s[i] == '.')
		frac = strspn(s + i + 1, "0123456789") + 1;
	if (i + frac == 0 || (i == 0 && frac == 1))
		return false;
	s += i + frac;
	if (*s == 'e' || *s == 'E') {
		s += 1 + (s[1] == '+' || s[1] == '-');
		return all_digits(s);
	}
	return *s == 0;
}

double
cli_parse_double(const char *cmd, const char *name, const char *s, double lo,
		 double hi)
{
	double v = 0;

	errno = 0;
	if (plain_decimal(s))
		v = strtod(s, NULL);
	if (!plain_decimal(s) || errno || !(v >= lo && v <= hi))
		cli_die_usage(cmd, "%s: '%s' is not a number in %g..%g", name,
			      s, lo, hi);
	return v;
}

/* The next entry of comma list *s into tok (size n), *s moved past it and
 * its comma; false at the end. An empty entry (",1", "1,,2", "1,") is
 * refused by name: strtok_r would skip it silently. */
static bool
list_next(const char *cmd, const char *name, const char **s, const char *all,
	  char *tok, size_t n)
{
	size_t len;

	if (!*s)
		return false;
	len = strcspn(*s, ",");
	if (len == 0)
		cli_die_usage(cmd, "%s: '%s' has an empty entry", name, all);
	if (len >= n)
		cli_die_usage(cmd, "%s: entry '%.*s' too long", name, (int)len,
			      *s);
	memcpy(tok, *s, len);
	tok[len] = 0;
	*s = (*s)[len] == ',' ? *s + len + 1 : NULL;
	return true;
}

/* A comma list of whole numbers. */
size_t
cli_parse_u32_list(const char *cmd, const char *name, const char *s,
		   uint32_t lo, uint32_t hi, uint32_t *out)
{
	const char *rest = s;
	char tok[32];
	size_t n = 0;

	while (list_next(cmd, name, &rest, s, tok, sizeof(tok))) {
		if (n == CLI_MAX_LIST)
			cli_die_usage(cmd, "%s: more than %d entries", name,
				      CLI_MAX_LIST);
		out[n++] = (uint32_t)cli_parse_u64(cmd, name, tok, lo, hi);
	}
	return n;
}

/* The parameter of "random:N" or "sharded:K", if spec is one: digits
 * only and in the strategy's range (sc_placement_parse would call
 * sharded:0 or random: 5 an unknown strategy, and take ' 5' or '+5'). */
void
cli_check_placement(const char *cmd, const char *opt, const char *spec)
{
	const char *num = strchr(spec, ':');
	const char *at = strchr(spec, '@');
	char digits[32];
	uint64_t hi, v = 0;
	size_t len;

	if (!strncmp(spec, "random:", 7))
		hi = UINT32_MAX;
	else if (!strncmp(spec, "sharded:", 8))
		hi = SC_PLACEMENT_MAX_SHARDS;
	else
		return;
	num++;
	/* The parameter ends at an "@ranks:..." suffix (the library's
	 * parser checks that part). */
	len = at ? (size_t)(at - num) : strlen(num);
	/* A parameter longer than any number in range (leading zeros
	 * included) is refused whole: cutting it would check a prefix and
	 * let "random:<31 digits>x" through (found by fuzz_cli_args; the
	 * options' own 31-character limit keeps the CLI from reaching it,
	 * the corpus seed placement_long_parameter_cut replays it). Past
	 * 2^64 strtoull saturates, which is out of range too. */
	if (len < sizeof(digits)) {
		memcpy(digits, num, len);
		digits[len] = '\0';
		if (all_digits(digits))
			v = strtoull(digits, NULL, 10);
	}
	if (v < 1 || v > hi)
		cli_die_usage(
		    cmd, "%s: '%s': %s takes a whole number in 1..%" PRIu64,
		    opt, spec, spec[0] == 'r' ? "random:N" : "sharded:K", hi);
}

/* A placement of the grid's graph by name: an unknown or malformed name
 * (SC_EINVAL) is a bad argument, exit 2; anything else (SC_ENOMEM) is
 * the library's, exit 3. */
void
cli_check_placement_of(const char *cmd, const char *opt,
		       const struct sc_graph *g, const char *spec,
		       uint64_t seed)
{
	struct sc_placement *p = NULL;
	int rc;

	cli_check_placement(cmd, opt, spec);
	rc = sc_placement_parse(g, spec, seed, &p);
	if (rc == SC_EINVAL)
		cli_die_usage(cmd, "%s: '%s': %s", opt, spec, sc_errmsg());
	if (rc)
		cli_die_library("sc_placement_parse", rc);
	sc_placement_destroy(p);
}

/* A comma list of placement names, checked against the grid's graph so a
 * misspelled one is refused before anything runs. */
size_t
cli_parse_placements(const char *cmd, const char *s, char out[][32])
{
	/* Made once and kept for the process: a refusal ends the process
	 * (cli_exit) from the middle of the list, and the fuzzer's
	 * harness, which returns from it instead, must not leak a grid per
	 * value. The CLI parses on one thread, before any other starts. */
	static struct sc_grid *gr;
	struct sc_grid_opts go = {.rows = 1, .cols = 1};
	const char *rest = s;
	char tok[32];
	size_t n = 0;
	int rc;

	if (!gr && (rc = sc_grid_create(&go, &gr)) != 0)
		cli_die_library("sc_grid_create", rc);
	while (list_next(cmd, "--placements", &rest, s, tok, sizeof(tok))) {
		if (n == CLI_MAX_LIST)
			cli_die_usage(cmd, "--placements: more than %d entries",
				      CLI_MAX_LIST);
		cli_check_placement_of(cmd, "--placements", sc_grid_graph(gr),
				       tok, 1);
		strcpy(out[n++], tok);
	}
	return n;
}
