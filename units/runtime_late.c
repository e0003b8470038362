/*
 * runtime_late.c - the host side of lateness in the runtime (see
 * runtime_late_int.h).
 */
#include "units/runtime_late_int.h"

#include <stdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/error.h"

int
sc__rt_late_init(struct sc__rt_late *l, const struct sc_graph *g, int input)
{
	size_t all = sc_graph_lateness_count(g), n = 0;

	memset(l, 0, sizeof(*l));
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
	for (size_t i = 0; i < l->n; i++) {
		struct sc_late *d = &l->decl[i];
		size_t first = 0;

		l->nlate[i] = sc_late_count(d, b, &first);
		if (l->nlate[i] && !(d->decl.flags & SC_LATE_ADMIT)) {
			char who[48];

			(void)snprintf(who, sizeof(who),
				       "sc_runtime_submit: input %d", input);
			return sc_late_refuse(d, b, l->nlate[i], first, who,
					      NULL);
		}
	}
	return 0;
}

void
sc__rt_late_advance(struct sc__rt_late *l, const struct sc_batch *b)
{
	for (size_t i = 0; i < l->n; i++)
		sc_late_advance(&l->decl[i], b, l->nlate[i]);
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
