/*
 * toy.c - a small workload plugin with one thing wrong, built once per
 * variant (tests/CMakeLists.txt) for the loader's refusals
 * (tests/units/test_workload.c). Each TOY_* macro below is one part of the
 * plugin; a variant's compile definitions replace the part it breaks, and
 * with the defaults the plugin is valid (libtoy_ok.so).
 */
#include <stdlib.h>

#include "operators/error.h"
#include "operators/graph.h"
#include "units/workload.h"

#ifndef TOY_VERSION
#define TOY_VERSION SC_WORKLOAD_VERSION
#endif
#ifndef TOY_CREATE
#define TOY_CREATE toy_create
#endif
#ifndef TOY_NEXT
#define TOY_NEXT toy_next
#endif
#ifndef TOY_OUTPUTS
#define TOY_OUTPUTS 1 /* 0: a graph with an input and no output */
#endif
#ifndef TOY_ENTRY_NAME
#define TOY_ENTRY_NAME sc_workload_entry
#endif
#ifndef TOY_ENTRY
#define TOY_ENTRY (&toy_def)
#endif

static int
toy_create(struct sc_workload_env *env, void **self)
{
	enum sc_type t = SC_TYPE_I64;
	struct sc_schema s;
	struct sc_graph *g = NULL;
	int rc;

	(void)env;
	if ((rc = sc_schema_init(&s, 1, &t, NULL)) != 0 ||
	    (rc = sc_graph_create(&g)) != 0)
		return rc;
	int in = sc_graph_input(g, "in", &s);
	int out = TOY_OUTPUTS ? sc_graph_output(g, "out", in) : in;
	if (out < 0) {
		(void)sc_graph_destroy(g);
		return out;
	}
	*self = g;
	return 0;
}

/* What a create that fails leaves: its own message, which the host must
 * keep. */
static int
toy_create_fails(struct sc_workload_env *env, void **self)
{
	(void)env;
	(void)self;
	return sc_errorf(SC_EINVAL, "toy: the widget is missing");
}

static void
toy_destroy(void *self)
{
	(void)sc_graph_destroy(self);
}

static struct sc_graph *
toy_graph(void *self)
{
	return self;
}

/* No input: the loader's checks come before any submission. */
static int
toy_next(void *self, size_t i, struct sc_settle_step *out)
{
	(void)self;
	(void)i;
	(void)out;
	return SC_EEMPTY;
}

static const struct sc_workload_def toy_def = {
    .version = TOY_VERSION,
    .name = "toy",
    .about = "a plugin for the loader's tests",
    .create = TOY_CREATE,
    .destroy = toy_destroy,
    .graph = toy_graph,
    .next = TOY_NEXT,
};

/* Every part referenced, whichever the variant replaced (so no variant
 * warns of an unused function). */
const struct sc_workload_def toy_parts = {.create = toy_create_fails,
					  .next = toy_next};
const struct sc_workload_def *const toy_def_p = &toy_def;
int (*const toy_create_p)(struct sc_workload_env *, void **) = toy_create;

const struct sc_workload_def *TOY_ENTRY_NAME(void);

const struct sc_workload_def *
TOY_ENTRY_NAME(void)
{
	return TOY_ENTRY;
}
