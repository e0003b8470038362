/*
 * runtime_late.c - the host side of lateness in the runtime (see
 * runtime_late_int.h).
 */
#include "units/runtime_late_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/base.h"
#include "operators/error.h"
#include "operators/late_int.h"

int
sc__rt_late_init(struct sc__rt_late *l, const struct sc_graph *g, int input)
{
	size_t all = sc_graph_lateness_count(g), n = 0;

	memset(l, 0, sizeof(*l));
	l->input = input;
	(void)snprintf(l->who, sizeof(l->who), "sc_runtime_submit: input %d",
		       input);
	for (size_t i = 0; i < all; i++) {
		struct sc_lateness d;

		if (sc_graph_lateness_get(g, i, &d) == 0 && d.input == input)
			n++;
	}
	if (!n)
		return 0;
	l->decl = calloc(n, sizeof(*l->decl));
	l->nlate = calloc(n, sizeof(*l->nlate));
	if (!l->decl || !l->nlate) {
		sc__rt_late_fini(l);
		return sc_errorf(SC_ENOMEM, "sc_runtime_create: lateness");
	}
	for (size_t i = 0; i < all; i++) {
		struct sc_lateness d;

		if (sc_graph_lateness_get(g, i, &d) == 0 && d.input == input)
			sc_late_init(&l->decl[l->n++], &d);
	}
	return 0;
}

void
sc__rt_late_fini(struct sc__rt_late *l)
{
	free(l->decl);
	free(l->nlate);
	memset(l, 0, sizeof(*l));
}

int
sc__rt_late_check(struct sc__rt_late *l, const struct sc_batch *b, int input)
{
	SC_ASSERT(l->n == 0 || input == l->input);
	return sc__late_check(l->decl, l->n, b, l->nlate, l->who, NULL);
}

void
sc__rt_late_advance(struct sc__rt_late *l, const struct sc_batch *b)
{
	sc__late_advance(l->decl, l->n, b, l->nlate);
}

void
sc__rt_late_counts(const struct sc__rt_late *l, uint64_t *admitted,
		   uint64_t *refused)
{
	uint64_t a = 0, r = 0;

	for (size_t i = 0; i < l->n; i++) {
		a += l->decl[i].admitted;
		r += l->decl[i].refused;
	}
	if (admitted)
		*admitted = a;
	if (refused)
		*refused = r;
}
