/*
 * builtin.c - the built-in workloads' definitions (builtin.h): a table of
 * names and the definitions that adapt each workload of bench/workloads/
 * to the workload interface.
 */
#include "bench/workloads/builtin.h"

#include <string.h>

struct builtin {
	const char *name;
	const struct sc_workload_def *def;
};

static const struct builtin builtins[] = {
    {NULL, NULL}, /* the adapters register here */
};


const struct sc_workload_def *
sc_builtin_workload(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; builtins[i].name; i++)
		if (!strcmp(builtins[i].name, name))
			return builtins[i].def;
	return NULL;
}

size_t
sc_builtin_workload_names(const char **names, size_t max)
{
	size_t n = 0;
	for (; builtins[n].name; n++)
		if (n < max)
			names[n] = builtins[n].name;
	return n;
}
