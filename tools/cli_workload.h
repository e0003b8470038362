/*
 * cli_workload.h - a workload named on the command line (not an installed
 * header): `--workload SPEC` with `--workload-arg K=V ...`, resolved to a
 * built-in (bench/workloads/builtin.h) or, for a SPEC that contains a '/'
 * or ends in ".so", a plugin loaded from that file (sc_workload_load).
 * run, place and stress open workloads only through here.
 */
#ifndef SC_TOOLS_CLI_WORKLOAD_H
#define SC_TOOLS_CLI_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "tools/cli.h"
#include "units/workload.h"

/* The user's --workload-arg list, parsed (each "K=V" split in place). */
struct cli_workload_args {
	struct sc_workload_arg args[SC_WORKLOAD_MAX_ARGS];
	char buf[SC_WORKLOAD_MAX_ARGS][256];
	size_t n;
};

/* Add one --workload-arg value: exit 2 (naming cmd) on a value that is not
 * K=V, a key given twice or too many. */
void cli_workload_arg_add(const char *cmd, struct cli_workload_args *a,
			  const char *kv);

/* Whether spec names a plugin file rather than a built-in. */
bool cli_workload_is_plugin(const char *spec);

/*
 * An instance of the workload spec names, with args, seed, the events
 * hint and the host's promises (flags: SC_WORKLOAD_ENV_*, units/workload.h,
 * each only where the command keeps it): 0 and *out; or, said on stderr
 * naming cmd and the library's
 * message, CLI_EXIT_USAGE (an unknown name, a plugin refused: wrong
 * version, missing symbol, a bad argument, a graph that fails to build)
 * or CLI_EXIT_LIBRARY (SC_ENOMEM).
 */
int cli_workload_open(const char *cmd, const char *spec,
		      const struct cli_workload_args *args, uint64_t seed,
		      uint64_t events, uint32_t flags,
		      struct sc_workload **out);

/*
 * cli_workload_create - cli_workload_open without a word on stderr, for a
 * host that opens a spec it opened once already (stress, once a seed):
 * 0 and *out; SC_EINVAL for an unknown name (named) or what
 * sc_workload_load or sc_workload_create returned, sc_errmsg() saying
 * what was wrong.
 */
int cli_workload_create(const char *spec, const struct cli_workload_args *args,
			uint64_t seed, uint64_t events, uint32_t flags,
			struct sc_workload **out);

#endif /* SC_TOOLS_CLI_WORKLOAD_H */
