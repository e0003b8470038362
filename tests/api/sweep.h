/*
 * sweep.h - the fixture of the public API's contract sweep.
 *
 * tests/api/gen_sweep.py reads the public headers' prototypes and writes a
 * Criterion suite that calls every public function once for each pointer
 * argument with that argument NULL (and once for each signed id or count
 * with it negative), the other arguments as valid as this fixture can
 * make them: a live object of each kind it knows how to make (a graph with
 * an input node 0 and an output node 1, a one-column schema and batch, a
 * circuit, a placement, a runtime, an executor, ...), a zeroed scratch
 * buffer for an out-parameter or a plain struct, a short string, and NULL
 * for an opaque kind it cannot make (that case then has two NULLs, and
 * still must be refused).
 *
 * Each case runs in a child process of its own (fork), so a crash or a
 * hang (an alarm after SW_CASE_SECONDS) is one failed case, named, and the
 * rest still run. A case passes when the call's result is its contract's
 * (sw_check_*): an int function returns the expected negative code and
 * sc_errmsg() names the function; a pointer function returns NULL; any
 * other returns without a crash.
 */
#ifndef SC_TESTS_API_SWEEP_H
#define SC_TESTS_API_SWEEP_H

#include <stdbool.h>
#include <stddef.h>

#define SW_CASE_SECONDS 10

/* What a case expects of an int function. */
enum sw_want {
	SW_WANT_CODE,	  /* this negative code, named in the message */
	SW_WANT_ERROR,	  /* any negative code, named in the message */
	SW_WANT_ANYTHING, /* NULL allowed by contract: no crash, no hang */
};

struct sw_case {
	const char *fn;	   /* the function's name */
	const char *param; /* the argument made NULL or negative */
	int null_arg;	   /* its index when NULL, else -1 */
	int neg_arg;	   /* its index when negative, else -1 */
	enum sw_want want;
	int code;			       /* SW_WANT_CODE: the code */
	void (*call)(const struct sw_case *c); /* runs it and checks */
};

/*
 * sw_ptr - a valid argument of pointer type `type` (its spelling without
 * const and blanks, "struct sc_graph*"): an object the fixture makes once
 * per process (`is_const` prefers it to a scratch buffer for a plain
 * struct), a zeroed scratch buffer for an out-parameter or a plain struct
 * (`is_plain`: its definition is in a public header), or NULL for an
 * opaque kind the fixture cannot make.
 */
void *sw_ptr(const char *type, bool is_const, bool is_plain);

/* The checks, run in the child; each exits the child 1 with a message on
 * stderr when the case fails. */
void sw_check_int(const struct sw_case *c, int rc);
void sw_check_ptr(const struct sw_case *c, const void *p);
void sw_check_none(const struct sw_case *c);

/* Run `n` cases, each in a child; returns how many failed (each named on
 * stderr). */
size_t sw_run(const struct sw_case *cases, size_t n);

#endif /* SC_TESTS_API_SWEEP_H */
