/*
 * fuzz_cli_args.c - a libFuzzer target for every parser of the command
 * line's option values (tools/cli_args.c) and for the library's own
 * parser of outside text, sc_placement_parse.
 *
 * The first byte of an input picks the parser, the rest is the value. A
 * value the parser refuses ends in cli_die_usage, whose cli_exit is
 * defined here to jump back, so one process tries millions of values. A
 * value it takes must satisfy what the parser promises, checked here
 * independently: a whole number is digits only and prints back as itself,
 * a decimal has no sign, blank, hex, inf or nan, a list has no empty entry
 * and every entry is in range, and a placement the CLI's check lets
 * through is one sc_placement_parse builds. A broken promise aborts, which
 * libFuzzer reports with the input that broke it.
 *
 * Built by tools/fuzz (clang, libFuzzer, ASan+UBSan); tools/test runs it
 * for a bounded time over tests/fuzz/corpus/cli_args/. It runs with
 * -detect_leaks=0: a refusal jumps out of a parser that holds memory the
 * CLI would free by exiting (cli_parse_placements' grid), which is no leak of
 * the program.
 */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/workloads/grid.h"
#include "tools/cli.h"
#include "units/placement.h"

#define MAX_VALUE 256

static jmp_buf back;
static struct sc_grid *grid;

void
cli_exit(int code)
{
	longjmp(back, code ? code : 1);
}

/* A broken promise: name it (the input is libFuzzer's to print). */
static void __attribute__((noreturn))
broken(const char *what, const char *value)
{
	(void)fprintf(stderr, "fuzz_cli_args: %s: '%s'\n", what, value);
	abort();
}

static int
digits_only(const char *s)
{
	return *s && s[strspn(s, "0123456789")] == 0;
}

/* A whole number taken must be digits only and print back as itself
 * (leading zeros aside). */
static void
check_u64(const char *s, uint64_t lo, uint64_t hi)
{
	char buf[32];
	uint64_t v = cli_parse_u64("fuzz", "--n", s, lo, hi);
	const char *t = s;

	if (!digits_only(s))
		broken("cli_parse_u64 took a value that is not digits only", s);
	while (t[0] == '0' && t[1])
		t++;
	(void)snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	if (strcmp(buf, t) != 0 || v < lo || v > hi)
		broken("cli_parse_u64 read a different or out-of-range number",
		       s);
}

static void
check_double(const char *s)
{
	double v = cli_parse_double("fuzz", "--x", s, 0.0, 1.0);

	/* Digits and one '.', then an exponent whose sign alone may be
	 * '+' or '-': nothing else, and a digit or '.' first. */
	if (!strchr("0123456789.", s[0]) ||
	    s[strspn(s, "0123456789.eE+-")] != 0)
		broken("cli_parse_double took a sign, blank, hex, inf or nan",
		       s);
	for (const char *c = s; *c; c++)
		if ((*c == '+' || *c == '-') && c[-1] != 'e' && c[-1] != 'E')
			broken(
			    "cli_parse_double took a sign outside an exponent",
			    s);
	if (!(v >= 0.0 && v <= 1.0))
		broken("cli_parse_double returned a value out of range", s);
}

static void
check_list(const char *s)
{
	uint32_t out[CLI_MAX_LIST];
	size_t n = cli_parse_u32_list("fuzz", "--workers", s, 1, 64, out),
	       commas;

	commas = 0;
	for (const char *c = s; *c; c++)
		commas += *c == ',';
	if (n == 0 || n != commas + 1)
		broken("cli_parse_u32_list took an empty entry", s);
	for (size_t i = 0; i < n; i++)
		if (out[i] < 1 || out[i] > 64)
			broken(
			    "cli_parse_u32_list returned an entry out of range",
			    s);
}

/* The CLI's check and the library's parser must agree on random:N and
 * sharded:K: a parameter the check lets through, the parser builds. An
 * "@ranks:..." suffix is the library's to check (cli_check_placement stops
 * at it, and cli_check_placement_of reports the library's refusal of it as a
 * bad argument), so a spec with one must only be refused with a message. */
static void
check_placement_spec(const char *s)
{
	struct sc_placement *p = NULL;
	int rc;

	cli_check_placement("fuzz", "--placement", s);
	rc = sc_placement_parse(sc_grid_graph(grid), s, 1, &p);
	if (rc == 0 && !p)
		broken("sc_placement_parse returned 0 and no placement", s);
	if (rc != 0 && p)
		broken("sc_placement_parse failed yet wrote a placement", s);
	if (rc == SC_EINVAL && !strchr(s, '@') &&
	    (!strncmp(s, "random:", 7) || !strncmp(s, "sharded:", 8)))
		broken(
		    "cli_check_placement let through what the library refuses",
		    s);
	if (rc != 0 && rc != SC_EINVAL && rc != SC_ENOMEM)
		broken("sc_placement_parse returned an unexpected code", s);
	if (rc == SC_EINVAL && !sc_errmsg()[0])
		broken("sc_placement_parse refused without a message", s);
	sc_placement_destroy(p);
}

static void
check_placement_list(const char *s)
{
	char out[CLI_MAX_LIST][32];
	size_t n = cli_parse_placements("fuzz", s, out);

	if (n == 0 || n > CLI_MAX_LIST)
		broken("cli_parse_placements returned no entry or too many", s);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct sc_grid_opts go = {.rows = 2, .cols = 2};

	(void)argc;
	(void)argv;
	/* cli_die_usage's messages are what a refusal looks like: tools/fuzz
	 * passes -close_fd_mask=2, so millions of them do not drown
	 * libFuzzer's own report (which it writes to a copy of stderr). */
	if (sc_grid_create(&go, &grid) != 0)
		abort();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char value[MAX_VALUE + 1];
	size_t n;

	if (size == 0)
		return 0;
	n = size - 1 < MAX_VALUE ? size - 1 : MAX_VALUE;
	memcpy(value, data + 1, n);
	value[n] = 0;
	if (setjmp(back) != 0)
		return 0; /* refused by name: what a bad value should get */
	switch (data[0] % 6) {
	case 0:
		check_u64(value, 0, UINT64_MAX);
		break;
	case 1:
		check_u64(value, 1, 64);
		break;
	case 2:
		check_double(value);
		break;
	case 3:
		check_list(value);
		break;
	case 4:
		check_placement_spec(value);
		break;
	default:
		check_placement_list(value);
		break;
	}
	return 0;
}
