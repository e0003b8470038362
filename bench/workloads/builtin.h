/*
 * builtin.h - the workloads built into the CLI, as definitions of the
 * public workload interface (units/workload.h): the same callbacks a
 * plugin gives, so `subcirc run`, `place` and `stress` drive a built-in
 * and a user's workload by one path.
 *
 * Names: "grid" (bench/workloads/grid.h), "random" (random circuits,
 * bench/workloads/random.h), and "nexmark:Q" for each query Q of
 * bench/workloads/nexmark_queries.h ("nexmark:q4").
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
