/*
 * subcirc_place.c - `subcirc place`: every placement strategy x worker
 * count on the grid workload (run_once, subcirc_run.c), `reps` runs each,
 * the run of median throughput shown side by side (subcirc_report.c).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/error.h"
#include "tools/subcirc.h"

#define PLACE_MAX_REPS 15

static const char *const place_default[] = {
    "single", "per-node", "chains", "random:3", "sharded:2", "sharded:4"};

/* Run a case `reps` times; *out is the run of median throughput. Every
 * run must match the reference (*all_ok goes false otherwise). */
static int
place_case(const struct run_cfg *c, uint32_t reps, struct run_result *out,
	   bool *all_ok)
{
	struct run_result r[PLACE_MAX_REPS];
	uint32_t n = 0;
	int rc = 0;

	for (; n < reps && !rc; n++) {
		rc = run_once(c, &r[n]);
		free(r[n].s);
		r[n].s = NULL;
		*all_ok = *all_ok && (rc || r[n].ok);
	}
	if (rc)
		return rc;
	/* Insertion sort by events/s; n is small. */
	for (uint32_t i = 1; i < n; i++)
		for (uint32_t j = i; j > 0 && r[j].eps < r[j - 1].eps; j--) {
			struct run_result t = r[j];

			r[j] = r[j - 1];
			r[j - 1] = t;
		}
	*out = r[n / 2];
	return 0;
}

int
cmd_place(int argc, char **argv)
{
	struct args a = {.cmd = "place", .argc = argc, .argv = argv, .i = 0};
	uint32_t workers[MAX_LIST] = {1, 2};
	char places[MAX_LIST][32];
	size_t nw = 2, np = 0, n = 0;
	const char *v, *json = NULL, *csv = NULL;
	struct place_row *rows;
	struct run_cfg c;
	bool all_ok = true;
	uint32_t reps = 3;
	FILE *jf, *cf;
	int rc = 0, wrc;

	run_defaults(&c);
	c.events = 200000;
	c.quiet = true;
	while (a.i < argc) {
		if (args_opt(&a, "--help", NULL) || args_opt(&a, "-h", NULL)) {
			(void)fputs(usage_place, stdout);
			return 0;
		} else if (args_opt(&a, "--workers", &v)) {
			nw = parse_u32_list("place", "--workers", v, 1, 1024,
					    workers);
		} else if (args_opt(&a, "--placements", &v)) {
			np = parse_placements("place", v, places);
		} else if (args_opt(&a, "--events", &v)) {
			c.events = parse_u64("place", "--events", v, 1,
					     UINT64_MAX / 2);
		} else if (args_opt(&a, "--reps", &v)) {
			reps = (uint32_t)parse_u64("place", "--reps", v, 1,
						   PLACE_MAX_REPS);
		} else if (args_opt(&a, "--json", &v)) {
			json = v;
		} else if (args_opt(&a, "--csv", &v)) {
			csv = v;
		} else if (!parse_workload_opt(&a, &c)) {
			die_usage("place", "unknown argument '%s'", argv[a.i]);
		}
	}
	if (np == 0)
		for (; np < sizeof(place_default) / sizeof(place_default[0]);
		     np++)
			strcpy(places[np], place_default[np]);
	jf = open_out("place", "--json", json);
	cf = open_out("place", "--csv", csv);
	rows = calloc(np * nw, sizeof(*rows));
	if (!rows) {
		(void)close_out("place", json, jf);
		(void)close_out("place", csv, cf);
		return lib_error("calloc", SC_ENOMEM);
	}
	place_print_header();
	for (size_t i = 0; i < np && !rc; i++) {
		for (size_t j = 0; j < nw && !rc; j++, n++) {
			struct place_row *pr = &rows[n];

			strcpy(c.placement, places[i]);
			c.workers = workers[j];
			strcpy(pr->placement, places[i]);
			pr->workers = workers[j];
			if ((rc = place_case(&c, reps, &pr->r, &all_ok)) != 0)
				break;
			place_print_row(pr);
		}
	}
	place_plot(rows, n);
	/* The rows done so far, also after a failed case. */
	if (jf)
		place_write_json(jf, rows, n);
	if (cf)
		place_write_csv(cf, rows, n);
	free(rows);
	wrc = close_out("place", json, jf);
	wrc = close_out("place", csv, cf) ? EXIT_LIBRARY : wrc;
	if (rc || wrc)
		return rc ? rc : wrc;
	return all_ok ? 0 : EXIT_CHECK;
}
