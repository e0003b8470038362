/*
 * cli_units.c - `subcirc run --units` and `--units-every S`: a table
 * of every unit (executor unit: a replica of a sharded unit is a row of
 * its own) from what the library exposes while the runtime runs:
 * sc_exec_snapshot (state, worker, turns, kicks, frames moved, pending
 * input, since when queued or running) and sc_runtime_stats (edges,
 * frames, rows, rings, outboxes). Both may be read from the host thread
 * at any time without SC_EBUSY; the snapshot is consistent (one lock),
 * the edge figures are read one by one, exact at idle.
 *
 * Busy time per unit is an estimate (one turn in 32 is timed), so the
 * table also shows turns and frames moved, and each unit's share of all
 * turns. The longest turn of each unit (the coarse clock, 1-4 ms ticks,
 * unless traced) says where the slowest answers come from; under --trace
 * the row ends with that turn's longest phase: the operator and what it
 * did there.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/executor.h"
#include "tools/cli.h"
#include "tools/cli_units.h"
#include "units/runtime.h"

bool
cli_units_parse_opt(struct cli_args *a, bool *units, double *every)
{
	const char *v;

	if (cli_args_opt(a, "--units", NULL)) {
		*units = true;
		return true;
	}
	if (cli_args_opt(a, "--units-every", &v)) {
		*every =
		    cli_parse_double(a->cmd, "--units-every", v, 0.01, 1e6);
		return true;
	}
	return false;
}

/* An operator's name, "?" when the runtime knows no such id. */
static const char *
op_name(struct sc_runtime *rt, int op)
{
	const char *name = sc_runtime_op_name(rt, op);

	return name ? name : "?";
}

/* The turns of each unit at the last table, for the turns since then. */
static uint64_t *units_prev;
static size_t units_nprev;

static void
units_remember(const struct sc_exec_unit_info *u, size_t n)
{
	if (n > units_nprev) {
		uint64_t *p = realloc(units_prev, n * sizeof(*p));

		if (!p)
			return; /* the next table shows no interval */
		memset(p + units_nprev, 0, (n - units_nprev) * sizeof(*p));
		units_prev = p;
		units_nprev = n;
	}
	for (size_t i = 0; i < n; i++)
		units_prev[i] = u[i].turns;
}

static void
units_row(struct sc_runtime *rt, const struct sc_exec_unit_info *u, size_t i,
	  uint64_t all_turns, uint64_t now, double elapsed_s)
{
	struct sc_subcircuit_stats us = {0};
	double busy_ms;
	uint64_t since =
	    u->running_since_ns ? u->running_since_ns : u->queued_since_ns;
	double share =
	    all_turns ? 100.0 * (double)u->turns / (double)all_turns : 0.0;
	double fpt = u->turns ? (double)u->progress / (double)u->turns : 0.0;
	uint64_t prev = i < units_nprev ? units_prev[i] : 0;

	(void)sc_runtime_unit_stats(rt, u->id, &us, NULL);
	busy_ms = (double)us.busy_ns / 1e6;

	(void)fprintf(
	    cli_report_text(),
	    "%4u %-24.24s %-14s %6d %10" PRIu64 " %10" PRIu64
	    " %6.1f%% %10" PRIu64 " %12" PRIu64
	    " %8.1f %9.1f %6.1f%% %10.1f %7s",
	    u->id, u->name, sc_unit_state_name(u->state), u->worker, u->turns,
	    u->turns - prev, share, u->kicks, u->progress, fpt, busy_ms,
	    elapsed_s > 0 ? busy_ms / (10.0 * elapsed_s) : 0.0,
	    (double)us.longest_ns / 1e6, u->has_pending ? "yes" : "no");
	if (since && now > since)
		(void)fprintf(cli_report_text(), " %.1f ms",
			      (double)(now - since) / 1e6);
	if (us.longest_doing)
		(void)fprintf(cli_report_text(),
			      "  longest in '%s' (%s) %.1f ms",
			      op_name(rt, us.longest_op), us.longest_doing,
			      (double)us.longest_phase_ns / 1e6);
	(void)fprintf(cli_report_text(), "\n");
}

static void
units_table(struct sc_runtime *rt, double elapsed_s, const char *when)
{
	struct sc_exec *ex = sc_runtime_exec(rt);
	size_t n = sc_exec_snapshot(ex, NULL, 0);
	struct sc_exec_unit_info *u = calloc(n ? n : 1, sizeof(*u));
	struct sc_runtime_stats st;
	uint64_t all = 0, now;

	if (!u) {
		(void)fprintf(stderr, "subcirc run: --units: no memory for "
				      "the table\n");
		return;
	}
	n = sc_exec_snapshot(ex, u, n);
	now = sc_exec_now_ns();
	sc_runtime_stats(rt, &st);
	for (size_t i = 0; i < n; i++)
		all += u[i].turns;
	(void)fprintf(cli_report_text(),
		      "units at %.1f s (%s): %u units (%u dead), %u edges, "
		      "%" PRIu64 " frames (%" PRIu64 " rows) sent, %" PRIu64
		      " in rings, %" PRIu64 " rows in outboxes\n",
		      elapsed_s, when, st.units, st.dead, st.edges, st.frames,
		      st.rows, st.pending, st.outbox_rows);
	(void)fprintf(cli_report_text(),
		      "%4s %-24s %-14s %6s %10s %10s %7s %10s %12s %8s %9s "
		      "%7s %10s %7s\n",
		      "id", "unit", "state", "worker", "turns", "+turns",
		      "share", "kicks", "moved", "mv/turn", "busy ms", "busy",
		      "longest ms", "pending");
	for (size_t i = 0; i < n; i++)
		units_row(rt, &u[i], i, all, now, elapsed_s);
	units_remember(u, n);
	(void)fflush(cli_report_text());
	free(u);
}

void
cli_units_tick(double every_s, struct sc_runtime *rt, uint64_t t0, uint64_t now)
{
	static uint64_t next, start;
	uint64_t every = (uint64_t)(every_s * 1e9);

	if (every_s <= 0)
		return;
	if (start != t0) { /* a new run */
		start = t0;
		next = t0 + every;
	}
	if (now < next)
		return;
	next = now + every;
	units_table(rt, (double)(now - t0) / 1e9, "running");
}

void
cli_units_print(bool units, double every_s, struct sc_runtime *rt,
		double elapsed_s)
{
	if (!units && every_s <= 0)
		return;
	units_table(rt, elapsed_s, "idle, the end");
	free(units_prev);
	units_prev = NULL;
	units_nprev = 0;
}

void
cli_units_longest(struct sc_runtime *rt, struct cli_unit_longest **out,
		  size_t *n)
{
	uint32_t units = sc_runtime_units(rt);
	struct cli_unit_longest *l;

	*out = NULL;
	*n = 0;
	if (units == 0)
		return;
	l = calloc(units, sizeof(*l));
	if (!l)
		return;
	for (uint32_t i = 0; i < units; i++) {
		struct sc_subcircuit_stats us = {0};
		const char *name = NULL;

		l[i].id = i;
		if (sc_runtime_unit_stats(rt, i, &us, &name) != 0)
			continue;
		(void)snprintf(l[i].name, sizeof(l[i].name), "%s",
			       name ? name : "?");
		l[i].turns = us.turns;
		l[i].longest_ms = (double)us.longest_ns / 1e6;
		l[i].doing = us.longest_doing;
		if (us.longest_doing)
			(void)snprintf(l[i].op, sizeof(l[i].op), "%s",
				       op_name(rt, us.longest_op));
		l[i].phase_ms = (double)us.longest_phase_ns / 1e6;
	}
	*out = l;
	*n = units;
}

void
cli_units_json(struct cli_json *j, const struct cli_unit_longest *u, size_t n)
{
	cli_json_open(j, "longest_turns", '[', false);
	for (size_t i = 0; i < n; i++) {
		cli_json_open(j, NULL, '{', true);
		cli_json_uint(j, "unit", u[i].id);
		cli_json_text(j, "name", u[i].name);
		cli_json_uint(j, "turns", u[i].turns);
		cli_json_real(j, "longest_ms", u[i].longest_ms);
		cli_json_text(j, "op", u[i].doing ? u[i].op : NULL);
		cli_json_text(j, "doing", u[i].doing);
		if (u[i].doing)
			cli_json_real(j, "phase_ms", u[i].phase_ms);
		else
			cli_json_null(j, "phase_ms");
		cli_json_close(j);
	}
	cli_json_close(j);
}
