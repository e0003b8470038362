/*
 * builtin.h - the workloads built into the CLI, as definitions of the
 * public workload interface (units/workload.h): the same callbacks a
 * plugin gives, so `subcirc run`, `place` and `stress` drive a built-in
 * and a user's workload by one path.
 *
 * Names and arguments (--workload-arg K=V; every one optional):
 *
 *   grid          bench/workloads/grid.h, seeded by the run's seed: rows,
 *                 cols (256 x 256), batch (cell edits a submission, 256),
 *                 edits (in all: the input ends once that many are out, the
 *                 last batch cut to fit; default the host's events hint,
 *                 and 0, with no hint, never ends). Its reference is
 *                 sc_grid_verify, after every submission made so far.
 *   random        a random circuit of the run's seed (random.h): steps
 *                 (deltas in all, 1000; 0 never ends).
 *   random-ticks  the tick-mode draw (sc_randc_create_ticks), a tick
 *                 workload: steps as above and tick (deltas a host tick,
 *                 4), a boundary after every tick's deltas.
 *   nexmark:Q     query Q of nexmark_queries.h ("nexmark:q4"), fed by the
 *                 standard generator of the run's seed as `subcirc run
 *                 --workload nexmark` feeds it: batch (events a chunk,
 *                 1000; one submission per stream the query reads), events
 *                 (in all, default the hint, 0 never ends), disorder (ms,
 *                 0), lateness (ms declared on date_time: 4000, the
 *                 standard suite's, or the disorder when larger),
 *                 no_lateness (declare none), admit_late (admit late rows
 *                 instead of refusing their submission), string_pool (0),
 *                 stream (the output keeps nothing; default: whether the
 *                 host set SC_WORKLOAD_ENV_STREAM, as a host that reads
 *                 integrals needs it materialized), release_texts
 *                 (default: whether the host set SC_WORKLOAD_ENV_IN_ORDER;
 *                 false: the generator's fresh texts are held until the
 *                 instance is destroyed, as a host may take submissions
 *                 ahead of feeding them; true: a chunk's are released
 *                 when the next chunk is made, for a host that feeds each
 *                 submission before it asks for the next, so memory does
 *                 not grow with the events). It suggests the
 *                 placement measured best for the query on 2 or more
 *                 workers (sc_nexmark_query_placement), none for one.
 */
#ifndef SC_BENCH_WORKLOADS_BUILTIN_H
#define SC_BENCH_WORKLOADS_BUILTIN_H

#include <stddef.h>

#include "units/workload.h"

/* The definition named `name`, or NULL when no built-in has that name.
 * Static: never freed. */
const struct sc_workload_def *sc_builtin_workload(const char *name);

/* The built-ins' names into names[0 .. max) (static strings); returns how
 * many there are, all of them. */
size_t sc_builtin_workload_names(const char **names, size_t max);

#endif /* SC_BENCH_WORKLOADS_BUILTIN_H */
