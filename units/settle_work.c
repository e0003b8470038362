/*
 * settle_work.c - the work of a settle check (settle.h, settle_int.h): the
 * submissions, and the reference they give the single circuit.
 *
 * Design. The reference is one run of the single, unplaced circuit of the
 * whole graph, fed the submissions one step each (a tick work: one step
 * per host tick), and every materialized output's integral after it (a
 * tick work: also every output's delta at every tick). A work computes it
 * once, so the many runs of one test (placements, schedules) share it; it
 * is recomputed, all or nothing, only by sc_settle_work_reference.
 */
#include "units/settle_int.h"

#include <stdlib.h>
#include <string.h>

#include "operators/base.h"
#include "operators/circuit.h"
#include "operators/symbol_int.h"

/* The ticks of steps[0..n): its boundaries, and a trailing tick. */
static size_t
count_ticks(const struct sc_settle_step *steps, size_t n)
{
	size_t t = 0;

	for (size_t i = 0; i < n; i++)
		t += sc__settle_is_tick(&steps[i]);
	return t + (n > 0 && !sc__settle_is_tick(&steps[n - 1]));
}

/* --- the work ------------------------------------------------------------- */

static int
work_find_outputs(struct sc_settle_work *w)
{
	size_t n = sc_graph_node_count(w->g);

	for (size_t i = 0; i < n; i++) {
		struct sc_node_info ni;

		if (sc_graph_node_info(w->g, (int)i, &ni) != 0 ||
		    ni.kind != SC_NODE_OUTPUT || ni.stream)
			continue; /* a stream output has no integral */
		if (w->nout == SC_SETTLE_MAX_OUTPUTS)
			return sc__fail(SC_EINVAL,
					"settle: more than %d outputs",
					SC_SETTLE_MAX_OUTPUTS);
		w->outputs[w->nout++] = (int)i;
	}
	return 0;
}

static int
check_steps(const struct sc_settle_step *steps, size_t n, bool ticks,
	    const char *who)
{
	if (n > 0 && !steps)
		return sc__fail(SC_EINVAL, "%s: NULL steps", who);
	for (size_t i = 0; i < n; i++)
		if (sc__settle_is_tick(&steps[i]) && !ticks)
			return sc__fail(SC_EINVAL,
					"%s: step %zu is a tick boundary in "
					"a work without SC_SETTLE_TICKS",
					who, i);
		else if (!steps[i].batch && !sc__settle_is_tick(&steps[i]))
			return sc__fail(SC_EINVAL, "%s: step %zu has no batch",
					who, i);
	return 0;
}

/* The symbol columns of output k's rows. */
static void
out_symcols(const struct sc_settle_work *w, size_t k, struct sc__symcols *sc)
{
	struct sc_node_info ni;

	memset(sc, 0, sizeof(*sc));
	if (sc_graph_node_info(w->g, w->outputs[k], &ni) == 0)
		sc__symcols_of(ni.schema, sc);
}

/* The reference's rows may name ids made inside the circuit (a
 * flat_map's texts, graph.h's sc_emit_own), which would die with it: the
 * work holds the ids of the batches it keeps (taken while the circuit
 * lives), so that a placed run making the same text gets the same id
 * and compares equal. b may be NULL (an empty delta). */
static void
ref_hold(const struct sc_settle_work *w, size_t k, const struct sc_batch *b,
	 bool hold)
{
	struct sc__symcols sc;

	out_symcols(w, k, &sc);
	if (hold)
		sc__symtab_hold(&sc, b);
	else
		sc__symtab_unhold(&sc, b);
}

/* The single circuit of the whole graph fed steps[0..n), one step each:
 * every output's integral into expect[] (all or none). *faulted when an
 * injected fault stopped it (flags has SC_SETTLE_FAULTS). */
static int
single_run(struct sc_settle_work *w, const struct sc_settle_step *steps,
	   size_t n, struct sc_batch **expect, bool *faulted)
{
	struct sc_circuit *c = NULL;
	size_t got = 0;
	int rc = sc_circuit_create(w->g, &c);

	/* The reference keeps every state (no lateness cleanup), so that a
	 * placed run with cleanup on or off is held to the integral kept
	 * whole (operators/waterline.h, "Why exact"). */
	if (!rc)
		(void)sc_circuit_set_cleanup(c, false);
	*faulted = false;
	for (size_t i = 0; i < n && !rc; i++) {
		rc = sc_circuit_feed(c, steps[i].input, steps[i].batch);
		if (!rc)
			rc = sc_circuit_step(c);
		/* What a node carried past int64 (circuit.h). */
		while (!rc && sc_circuit_carried(c))
			rc = sc_circuit_step(c);
	}
	if (rc == SC_ECALLBACK && (w->flags & SC_SETTLE_FAULTS)) {
		*faulted = true;
		rc = 0;
	}
	for (; got < w->nout && !rc && !*faulted; got++)
		rc = sc_circuit_integral(c, w->outputs[got], &expect[got]);
	if (rc)
		while (got-- > 0)
			sc_batch_release(expect[got]);
	for (size_t k = 0; !rc && k < got; k++)
		ref_hold(w, k, expect[k], true);
	sc_circuit_destroy(c);
	return rc;
}

/* The single circuit stepped once per tick of steps[0..n) (tick works):
 * every output's delta at every tick into *want (nout * *ticks, NULL for
 * an empty one) and its integral after the last into expect[]. */
static int
single_ticks(struct sc_settle_work *w, const struct sc_settle_step *steps,
	     size_t n, struct sc_batch **expect, struct sc_batch ***want,
	     size_t *ticks)
{
	size_t nt = count_ticks(steps, n), t = 0, got = 0;
	struct sc_batch **d =
	    calloc(w->nout * nt + 1, sizeof(struct sc_batch *));
	struct sc_circuit *c = NULL;
	int rc = d ? sc_circuit_create(w->g, &c) : SC_ENOMEM;

	if (!rc) /* as single_run: every state kept */
		(void)sc_circuit_set_cleanup(c, false);
	for (size_t i = 0; i <= n && t < nt && !rc; i++) {
		if (i < n && !sc__settle_is_tick(&steps[i])) {
			rc = sc_circuit_feed(c, steps[i].input, steps[i].batch);
			continue;
		}
		if (i == n && n > 0 && sc__settle_is_tick(&steps[n - 1]))
			break; /* no trailing tick */
		rc = sc_circuit_step(c);
		for (size_t k = 0; k < w->nout && !rc; k++) {
			struct sc_batch **slot = &d[k * nt + t];

			rc = sc_circuit_delta(c, w->outputs[k], slot);
			if (!rc && sc_batch_count(*slot) == 0) {
				sc_batch_release(*slot);
				*slot = NULL;
			}
			ref_hold(w, k, *slot, true);
		}
		t++;
	}
	for (; got < w->nout && !rc; got++)
		rc = sc_circuit_integral(c, w->outputs[got], &expect[got]);
	if (rc) {
		while (got-- > 0)
			sc_batch_release(expect[got]);
		for (size_t k = 0; d && k < w->nout * nt; k++) {
			ref_hold(w, k / nt, d[k], false);
			sc_batch_release(d[k]);
		}
		free(d);
		d = NULL;
	}
	for (size_t k = 0; !rc && k < got; k++)
		ref_hold(w, k, expect[k], true);
	sc_circuit_destroy(c);
	*want = d;
	*ticks = nt;
	return rc;
}

static void
work_release_expect(struct sc_settle_work *w)
{
	for (size_t i = 0; i < w->nout; i++) {
		ref_hold(w, i, w->expect[i], false);
		sc_batch_release(w->expect[i]);
		w->expect[i] = NULL;
	}
	for (size_t k = 0; w->want && k < w->nout * w->want_ticks; k++) {
		ref_hold(w, k / w->want_ticks, w->want[k], false);
		sc_batch_release(w->want[k]);
	}
	free(w->want);
	w->want = NULL;
	w->want_ticks = 0;
}

int
sc_settle_work_reference(struct sc_settle_work *w,
			 const struct sc_settle_step *steps, size_t n)
{
	struct sc_batch *expect[SC_SETTLE_MAX_OUTPUTS] = {0};
	struct sc_batch **want = NULL;
	size_t want_ticks = 0;
	bool faulted = false, ticks;
	int rc;

	if (!w)
		return sc__fail(SC_EINVAL, "sc_settle_work_reference: NULL");
	ticks = (w->flags & SC_SETTLE_TICKS) != 0;
	if ((rc = check_steps(steps, n, ticks, "sc_settle_work_reference")) !=
	    0)
		return rc;
	rc = ticks ? single_ticks(w, steps, n, expect, &want, &want_ticks)
		   : single_run(w, steps, n, expect, &faulted);
	if (rc)
		return rc;
	work_release_expect(w);
	memcpy(w->expect, expect, sizeof(expect));
	w->want = want;
	w->want_ticks = want_ticks;
	w->single_failed = faulted;
	return 0;
}

/* A work with room for n steps and its outputs found, no reference yet;
 * NULL with *rc on failure. */
static struct sc_settle_work *
work_alloc(struct sc_graph *g, size_t n, unsigned flags, int *rc)
{
	struct sc_settle_work *w;

	if (!g) {
		*rc = sc__fail(SC_EINVAL, "settle: NULL graph");
		return NULL;
	}
	if (flags & ~(SC_SETTLE_FAULTS | SC_SETTLE_TICKS)) {
		*rc = sc__fail(SC_EINVAL, "settle: unknown flags %#x", flags);
		return NULL;
	}
	if ((flags & SC_SETTLE_FAULTS) && (flags & SC_SETTLE_TICKS)) {
		*rc = sc__fail(SC_EINVAL, "settle: SC_SETTLE_FAULTS with "
					  "SC_SETTLE_TICKS (a dead unit "
					  "leaves its ticks partial)");
		return NULL;
	}
	*rc = SC_ENOMEM;
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->g = g;
	w->flags = flags;
	/* room for a trailing tick's boundary */
	w->steps = calloc(n + 1, sizeof(*w->steps));
	if (!w->steps) {
		free(w);
		return NULL;
	}
	if ((*rc = work_find_outputs(w)) != 0) {
		sc_settle_work_destroy(w);
		return NULL;
	}
	return w;
}

/* Compute the reference of a filled work; destroy it on failure. */
static int
work_finish(struct sc_settle_work *w, struct sc_settle_work **out)
{
	int rc;

	if ((w->flags & SC_SETTLE_TICKS) && w->n > 0 &&
	    !sc__settle_is_tick(&w->steps[w->n - 1]))
		w->steps[w->n++] =
		    (struct sc_settle_step){SC_SETTLE_TICK, NULL};
	w->nticks = count_ticks(w->steps, w->n);
	rc = sc_settle_work_reference(w, w->steps, w->n);

	if (rc) {
		sc_settle_work_destroy(w);
		return rc;
	}
	*out = w;
	return 0;
}

int
sc_settle_work_create(struct sc_graph *g, const struct sc_settle_step *steps,
		      size_t n, unsigned flags, struct sc_settle_work **out)
{
	struct sc_settle_work *w;
	int rc;

	if (!out)
		return sc__fail(SC_EINVAL, "sc_settle_work_create: NULL out");
	if ((rc = check_steps(steps, n, (flags & SC_SETTLE_TICKS) != 0,
			      "sc_settle_work_create")) != 0)
		return rc;
	if (!(w = work_alloc(g, n, flags, &rc)))
		return rc;
	for (; w->n < n; w->n++) {
		w->steps[w->n].input = steps[w->n].input;
		w->steps[w->n].batch = sc_batch_retain(steps[w->n].batch);
	}
	return work_finish(w, out);
}

int
sc_settle_work_generate(struct sc_graph *g, sc_settle_gen_fn gen, void *ctx,
			size_t n, unsigned flags, struct sc_settle_work **out)
{
	struct sc_settle_work *w;
	int rc;

	if (!gen || !out)
		return sc__fail(SC_EINVAL,
				"sc_settle_work_generate: NULL gen or out");
	if (!(w = work_alloc(g, n, flags, &rc)))
		return rc;
	for (; w->n < n; w->n++) {
		struct sc_settle_step s = {.input = -2, .batch = NULL};

		rc = gen(ctx, w->n, &s);
		if (!rc && sc__settle_is_tick(&s) && !(flags & SC_SETTLE_TICKS))
			rc = sc__fail(SC_EINVAL,
				      "sc_settle_work_generate: step %zu is a "
				      "tick boundary in a work without "
				      "SC_SETTLE_TICKS",
				      w->n);
		else if (!rc && !s.batch && !sc__settle_is_tick(&s))
			rc = sc__fail(SC_EINVAL,
				      "sc_settle_work_generate: step %zu "
				      "has no batch",
				      w->n);
		if (rc) {
			sc_batch_release(s.batch);
			sc_settle_work_destroy(w);
			return rc;
		}
		w->steps[w->n] = s;
	}
	return work_finish(w, out);
}

void
sc_settle_work_destroy(struct sc_settle_work *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n; i++)
		sc_batch_release(w->steps[i].batch);
	work_release_expect(w);
	free(w->steps);
	free(w);
}

struct sc_graph *
sc_settle_work_graph(const struct sc_settle_work *w)
{
	return w ? w->g : NULL;
}

size_t
sc_settle_work_steps(const struct sc_settle_work *w)
{
	return w ? w->n : 0;
}

int
sc_settle_work_step(const struct sc_settle_work *w, size_t i,
		    struct sc_settle_step *out)
{
	if (!w || !out || i >= w->n)
		return sc__fail(SC_EINVAL, "sc_settle_work_step: NULL or "
					   "step out of range");
	*out = w->steps[i];
	return 0;
}

size_t
sc_settle_work_outputs(const struct sc_settle_work *w, int *ids, size_t max)
{
	if (!w)
		return 0;
	for (size_t i = 0; ids && i < w->nout && i < max; i++)
		ids[i] = w->outputs[i];
	return w->nout;
}
