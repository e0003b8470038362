/*
 * cli_units.h - run's unit table (--units, --units-every S): every unit
 * of a running runtime, one row each, from sc_exec_snapshot and
 * sc_runtime_stats (tools/cli_units.c). The grid workload (cli_grid.c)
 * prints it; the run command parses its options. It takes plain values,
 * not the run's configuration, so it depends on the core alone.
 */
#ifndef SC_TOOLS_CLI_UNITS_H
#define SC_TOOLS_CLI_UNITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/cli.h"

struct sc_runtime;

/* --units (*units = true) and --units-every S (*every = S); true if
 * argv[i] was one of them, else false and nothing written. */
bool cli_units_parse_opt(struct cli_args *a, bool *units, double *every);

/* The table on cli_report_text(): every `every_s` seconds since t0 (call
 * it often; nothing when every_s <= 0), and at the end (nothing unless
 * `units` or every_s > 0). Host thread only: the turns of the last table
 * are kept here, between the calls of one run. */
void cli_units_tick(double every_s, struct sc_runtime *rt, uint64_t t0,
		    uint64_t now);
void cli_units_print(bool units, double every_s, struct sc_runtime *rt,
		     double elapsed_s);

/* One unit's longest turn, kept past the runtime for the report. */
struct cli_unit_longest {
	uint32_t id;	   /* the executor's unit id */
	char name[64];	   /* the unit's name */
	uint64_t turns;	   /* its turns */
	double longest_ms; /* its longest turn (sc_subcircuit_stats) */
	char op[64];	   /* that turn's longest phase's operator; "" when
			      not known (phases are timed only under
			      --trace) */
	const char *doing; /* and its activity (static), or NULL */
	double phase_ms;   /* and its length */
};

/* Every unit's longest turn, into *out (malloc'd, n of them: the
 * caller frees it); *out NULL and *n 0 without memory. Host thread. */
void cli_units_longest(struct sc_runtime *rt, struct cli_unit_longest **out,
		       size_t *n);

/* The report's "longest_turns": one object per unit (the schema:
 * tools/report.schema.json). */
void cli_units_json(struct cli_json *j, const struct cli_unit_longest *u,
		    size_t n);

#endif /* SC_TOOLS_CLI_UNITS_H */
