/*
 * cli_workload.c - a workload named on the command line (cli_workload.h).
 */
#include "tools/cli_workload.h"

#include <stdio.h>
#include <string.h>

#include "bench/workloads/builtin.h"
#include "operators/error.h"

void
cli_workload_arg_add(const char *cmd, struct cli_workload_args *a,
		     const char *kv)
{
	if (a->n >= SC_WORKLOAD_MAX_ARGS)
		cli_die_usage(cmd, "--workload-arg: more than %d arguments",
			      SC_WORKLOAD_MAX_ARGS);
	struct sc_workload_arg arg;
	if (sc_workload_parse_arg(kv, a->buf[a->n], sizeof(a->buf[a->n]), &arg))
		cli_die_usage(cmd, "--workload-arg: %s", sc_errdetail());
	for (size_t i = 0; i < a->n; i++)
		if (!strcmp(a->args[i].key, arg.key))
			cli_die_usage(cmd, "--workload-arg: '%s' given twice",
				      arg.key);
	a->args[a->n++] = arg;
}

bool
cli_workload_is_plugin(const char *spec)
{
	size_t n = strlen(spec);
	return strchr(spec, '/') || (n > 3 && !strcmp(spec + n - 3, ".so"));
}

int
cli_workload_create(const char *spec, const struct cli_workload_args *args,
		    uint64_t seed, uint64_t events, uint32_t flags,
		    struct sc_workload **out)
{
	struct sc_workload_env env = {
	    .seed = seed,
	    .events = events,
	    .flags = flags,
	    .args = args ? args->args : NULL,
	    .nargs = args ? args->n : 0,
	};
	const struct sc_workload_def *def;

	if (cli_workload_is_plugin(spec))
		return sc_workload_load(spec, &env, out);
	if (!(def = sc_builtin_workload(spec)))
		return sc_errorf(SC_EINVAL, "unknown workload '%s'", spec);
	return sc_workload_create(def, &env, out);
}

int
cli_workload_open(const char *cmd, const char *spec,
		  const struct cli_workload_args *args, uint64_t seed,
		  uint64_t events, uint32_t flags, struct sc_workload **out)
{
	int rc;

	if (!cli_workload_is_plugin(spec) && !sc_builtin_workload(spec)) {
		const char *names[64];
		size_t n = sc_builtin_workload_names(names, 64);

		(void)fprintf(stderr,
			      "subcirc %s: --workload: unknown workload "
			      "'%s' (built in:",
			      cmd, spec);
		for (size_t i = 0; i < n && i < 64; i++)
			(void)fprintf(stderr, " %s", names[i]);
		(void)fprintf(stderr, "; or a plugin's path)\n");
		return CLI_EXIT_USAGE;
	}
	if (!(rc = cli_workload_create(spec, args, seed, events, flags, out)))
		return 0;
	(void)fprintf(stderr, "subcirc %s: --workload %s: %s\n", cmd, spec,
		      sc_errmsg());
	return rc == SC_ENOMEM ? CLI_EXIT_LIBRARY : CLI_EXIT_USAGE;
}
