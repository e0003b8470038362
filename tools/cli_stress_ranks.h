/*
 * cli_stress_ranks.h - `subcirc stress` under mpirun (tools/
 * cli_stress_ranks.c): seeded cases across the ranks, each checked
 * against the single circuit. The half of the stress command that runs
 * across ranks: cli_stress.c parses the arguments and calls it; it calls
 * the core and the ranks, never back into cli_stress.c.
 */
#ifndef SC_TOOLS_CLI_STRESS_RANKS_H
#define SC_TOOLS_CLI_STRESS_RANKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tools/cli.h"

/* What `stress` parsed that applies across ranks; every placement spans
 * every rank. */
struct cli_stress_ranks_cfg {
	uint64_t seed_lo, seed_hi;
	uint32_t workers[CLI_MAX_LIST];
	size_t nw;
	char places[CLI_MAX_LIST][48];
	size_t np;
	bool grid, random; /* the workloads */
	uint64_t events;   /* submissions per case; 0: from the seed */
	bool keep_going, quiet, verbose;
	bool plant; /* the reference misses the last submission */
	const char *json;
	FILE *json_f;
	/* The report of --json, started by stress, and what writes its
	 * configuration (every option stress parsed). */
	struct cli_report *report;
	void (*config)(const void *ctx, struct cli_json *j);
	const void *config_ctx;
};

/* The campaign across ranks; the exit code (the same on every rank). */
int cli_stress_ranks(const struct cli_stress_ranks_cfg *c, const char *exe);

#endif /* SC_TOOLS_CLI_STRESS_RANKS_H */
