/*
 * settle_check.c - what a settle run checks (settle.h, settle_int.h).
 *
 * Design. At idle the runtime must hold the idle invariant, and every
 * compared output's integral must equal the reference's; in a tick work,
 * first every output's delta at every tick, summed by a delta callback
 * over the output's replicas. A difference is reported by its first
 * output (and tick), with the first rows on which the two disagree, each
 * with both weights. After shutdown, a panic must be reported exactly
 * when one happened, and every frame sent must be accounted for.
 */
#include "units/settle_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/base.h"
#include "operators/schema.h"
#include "runtime/panic.h"

#define SETTLE_ROW_TEXT 160 /* a row as text in a message */

/* The weight of `row` (all columns) in b, 0 when absent. */
static int64_t
weight_of(const struct sc_batch *b, const uint64_t *row)
{
	size_t lo, hi;

	if (!b ||
	    sc_batch_key_range(b, row, sc_batch_ncols(b), &lo, &hi) != 0 ||
	    lo == hi)
		return 0;
	return sc_batch_weight(b, lo);
}

/* A row as text, "(1, -2, 3)", decoded by schema s when it fits. */
static void
row_text(const uint64_t *row, const struct sc_schema *s, uint32_t ncols,
	 char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = 0;
	for (uint32_t c = 0; c < ncols && at + 24 < len; c++) {
		enum sc_type t =
		    s && s->ncols == ncols ? s->types[c] : SC_TYPE_U64;
		int k =
		    t == SC_TYPE_I64
			? snprintf(buf + at, len - at, "%s%lld", c ? ", " : "(",
				   (long long)sc_dec_i64(row[c]))
			: snprintf(buf + at, len - at, "%s%#" PRIx64,
				   c ? ", " : "(", row[c]);

		if (k > 0)
			at += (size_t)k;
	}
	if (at + 2 < len)
		(void)snprintf(buf + at, len - at, ")");
}

/* The first rows of d = placed - single, each with its weight on both
 * sides; a row points into the integral that holds it (the result keeps
 * both), since d is released. */
static void
diff_rows(struct sc_settle_result *res, const struct sc_batch *got,
	  const struct sc_batch *want, const struct sc_batch *d)
{
	res->ndiff_total = d ? sc_batch_count(d) : 0;
	for (size_t k = 0; k < res->ndiff_total && k < SC_SETTLE_MAX_DIFF;
	     k++) {
		const uint64_t *row = sc_batch_row(d, k);
		struct sc_settle_diff *f = &res->diff[res->ndiff++];
		int64_t pw = weight_of(got, row);
		/* d is consolidated: a row of it has a nonzero weight on at
		 * least one side, and that side holds it. */
		const struct sc_batch *home = pw ? got : want;
		size_t lo = 0, hi = 0;

		if (home)
			(void)sc_batch_key_range(
			    home, row, sc_batch_ncols(home), &lo, &hi);
		f->row = lo < hi ? sc_batch_row(home, lo) : NULL;
		f->placed = pw;
		f->single = weight_of(want, row);
	}
}

static size_t
count_of(const struct sc_batch *b)
{
	return b ? sc_batch_count(b) : 0;
}

/* Record output i's difference between got and want (either NULL for
 * empty): both batches and the rows of got - want, with the weight on
 * each side. tick: the tick of two deltas, UINT64_MAX for integrals. */
static int
record_difference(struct sc__settle_run *r, size_t i, struct sc_batch *got,
		  struct sc_batch *want, uint64_t tick)
{
	struct sc_settle_result *res = r->res;
	struct sc_batch *neg = NULL, *d = NULL;
	struct sc_node_info ni;
	char text[SETTLE_ROW_TEXT] = "", at[48] = "";
	int rc = 0;

	if (want && (rc = sc_batch_negate(want, &neg)) == 0)
		rc = got ? sc_batch_add(got, neg, &d)
			 : (d = sc_batch_retain(neg), 0);
	else if (!want)
		d = sc_batch_retain(got);
	sc_batch_release(neg);
	if (rc)
		return rc;
	res->output = r->w->outputs[i];
	res->tick = tick;
	if (sc_graph_node_info(r->w->g, res->output, &ni) == 0)
		(void)snprintf(res->output_name, sizeof(res->output_name), "%s",
			       ni.name);
	res->placed = sc_batch_retain(got);
	res->single = sc_batch_retain(want);
	diff_rows(res, got, want, d);
	if (res->ndiff && res->diff[0].row)
		row_text(res->diff[0].row,
			 sc_graph_schema(r->w->g, res->output),
			 sc_batch_ncols(d), text, sizeof(text));
	if (tick != UINT64_MAX)
		(void)snprintf(at, sizeof(at), "at tick %" PRIu64 " its delta ",
			       tick);
	sc__settle_fail(
	    r, SC_ESTATE,
	    "output '%s' (node %d) %sdiffers from the single circuit's: "
	    "%zu rows, expected %zu; %zu rows differ, the first %s with "
	    "weight %lld placed, %lld single",
	    res->output_name, res->output, at, count_of(got), count_of(want),
	    res->ndiff_total, text,
	    res->ndiff ? (long long)res->diff[0].placed : 0LL,
	    res->ndiff ? (long long)res->diff[0].single : 0LL);
	sc_batch_release(d);
	return 0;
}

/* A tick work's delta callback on every compared output: what a step
 * reports, summed at its tick (a sharded output's replicas add up). */
static int
ticks_on_delta(void *ctx, int node, const struct sc_batch *delta)
{
	struct sc__settle_run *r = ctx;
	uint64_t tick = sc_runtime_delta_tick();
	size_t k = 0;

	while (k < r->w->nout && r->w->outputs[k] != node)
		k++;
	pthread_mutex_lock(&r->mu);
	if (k == r->w->nout || tick >= r->w->nticks) {
		if (!r->bad_rc) {
			r->bad_rc = SC_ESTATE;
			r->bad_tick = tick;
			r->bad_node = node;
		}
	} else {
		struct sc_batch **slot = &r->got[k * r->w->nticks + tick];
		struct sc_batch *sum = NULL;
		int rc = 0;

		if (!*slot)
			*slot = sc_batch_retain((struct sc_batch *)delta);
		else if ((rc = sc_batch_add(*slot, delta, &sum)) == 0) {
			sc_batch_release(*slot);
			*slot = sum;
		} else if (!r->bad_rc) {
			r->bad_rc = rc;
			r->bad_tick = tick;
			r->bad_node = node;
		}
	}
	pthread_mutex_unlock(&r->mu);
	return 0;
}

/* Install ticks_on_delta on every compared output. */
int
sc__settle_ticks_arm(struct sc__settle_run *r)
{
	int rc = 0;

	r->got =
	    calloc(r->w->nout * r->w->nticks + 1, sizeof(struct sc_batch *));
	if (!r->got)
		return SC_ENOMEM;
	for (size_t k = 0; k < r->w->nout && !rc; k++)
		rc = sc_runtime_on_delta(r->rt, r->w->outputs[k],
					 ticks_on_delta, r);
	return rc;
}

void
sc__settle_ticks_disarm(struct sc__settle_run *r)
{
	for (size_t k = 0; r->got && k < r->w->nout * r->w->nticks; k++)
		sc_batch_release(r->got[k]);
	free(r->got);
	r->got = NULL;
}

static bool
same_delta(const struct sc_batch *a, const struct sc_batch *b)
{
	if (count_of(a) == 0 || count_of(b) == 0)
		return count_of(a) == count_of(b);
	return sc_batch_equal(a, b);
}

/* At idle, every output's delta at every tick (of the run's and of the
 * reference's) equals the reference's; the first tick that differs, and
 * its first output, is reported. */
static void
check_ticks(struct sc__settle_run *r)
{
	const struct sc_settle_work *w = r->w;
	size_t nt = w->nticks > w->want_ticks ? w->nticks : w->want_ticks;

	if (r->bad_rc) {
		sc__settle_fail(
		    r, r->bad_rc,
		    "output node %d reported a delta at tick %" PRIu64
		    " (the work has %zu ticks) or its sum failed (%s)",
		    r->bad_node, r->bad_tick, w->nticks, sc_errname(r->bad_rc));
		return;
	}
	for (size_t t = 0; t < nt; t++) {
		for (size_t k = 0; k < w->nout; k++) {
			struct sc_batch *got =
			    t < w->nticks ? r->got[k * w->nticks + t] : NULL;
			struct sc_batch *want =
			    t < w->want_ticks ? w->want[k * w->want_ticks + t]
					      : NULL;
			int rc;

			if (same_delta(got, want))
				continue;
			if ((rc = record_difference(r, k, got, want, t)) != 0)
				sc__settle_fail(
				    r, rc,
				    "output node %d differs at tick %zu "
				    "(%s)",
				    w->outputs[k], t, sc_errname(rc));
			return;
		}
		r->res->ticks_compared++;
	}
}

/* Output i at idle: equal to the reference, and to the caller's check. */
static void
check_output(struct sc__settle_run *r, size_t i)
{
	struct sc_batch *got = NULL;
	int out = r->w->outputs[i];
	int rc = sc_runtime_integral(r->rt, out, &got);

	if (rc) {
		sc__settle_fail(r, rc, "integral of output node %d: %s", out,
				sc_errmsg());
		return;
	}
	if (!r->w->single_failed && !sc_batch_equal(got, r->w->expect[i])) {
		if ((rc = record_difference(r, i, got, r->w->expect[i],
					    UINT64_MAX)) != 0)
			sc__settle_fail(r, rc, "output node %d differs (%s)",
					out, sc_errname(rc));
	} else if (r->o->verify &&
		   (rc = r->o->verify(r->o->verify_ctx, out, got)) != 0) {
		sc__settle_fail(r, rc, "output node %d: %s", out, sc_errmsg());
	}
	sc_batch_release(got);
}

/* With restarts, output i downstream of a dead unit is a failure unless
 * the rate bound gave some unit up (settle.h, Restarts). */
static void
check_restarted(struct sc__settle_run *r, size_t i)
{
	struct sc_runtime_stats st;

	if (!sc__settle_restarting(r))
		return;
	sc_runtime_stats(r->rt, &st);
	if (st.given_up == 0)
		sc__settle_fail(
		    r, SC_ESTATE,
		    "output node %d is downstream of a dead unit that "
		    "the restart policy should have rebuilt (%u dead, "
		    "%u restarts, %u failed): %s",
		    r->w->outputs[i], st.dead, st.restarts, st.restarts_failed,
		    sc_errmsg());
}

void
sc__settle_check_idle(struct sc__settle_run *r)
{
	int rc = sc_runtime_check_idle(r->rt);

	if (rc) {
		sc__settle_fail(r, rc, "check_idle: %s", sc_errmsg());
		return;
	}
	if (r->ticks)
		check_ticks(r);
	for (size_t i = 0; i < r->w->nout && r->res->ok; i++) {
		/* A dead unit's part never arrived: the outputs it feeds
		 * cannot be compared, every other one must be whole. */
		if (r->res->panicked &&
		    sc_runtime_upstream_dead(r->rt, r->w->outputs[i], NULL) ==
			SC_EDEAD) {
			r->res->outputs_dead++;
			check_restarted(r, i);
			continue;
		}
		r->res->outputs_compared++;
		check_output(r, i);
	}
}

/* After shutdown: frames sent that were neither delivered, nor counted
 * undeliverable, nor wait in a dead unit's ring (see settle.h). */
void
sc__settle_check_frames(struct sc__settle_run *r)
{
	const struct sc_runtime_stats *st = &r->res->stats;
	uint64_t accounted = st->frames_delivered + st->frames_undeliverable +
			     st->pending_closed;

	r->res->frames_lost =
	    st->frames_sent > accounted ? st->frames_sent - accounted : 0;
	if (accounted > st->frames_sent)
		sc__settle_fail(
		    r, SC_ESTATE,
		    "%" PRIu64 " frames accounted for but %" PRIu64
		    " sent: %" PRIu64 " delivered, %" PRIu64
		    " undeliverable, %" PRIu64 " in dead units' rings",
		    accounted, st->frames_sent, st->frames_delivered,
		    st->frames_undeliverable, st->pending_closed);
	else if (r->res->frames_lost)
		sc__settle_fail(
		    r, SC_ESTATE,
		    "%" PRIu64 " frames lost: %" PRIu64 " sent, %" PRIu64
		    " delivered, %" PRIu64 " undeliverable to %u dead "
		    "units, %" PRIu64 " in their rings, %" PRIu64
		    " in live rings",
		    r->res->frames_lost, st->frames_sent, st->frames_delivered,
		    st->frames_undeliverable, st->dead, st->pending_closed,
		    st->pending - st->pending_closed);
}

/* Whether no turn runs or waits: the frame accounting is exact then. */
bool
sc__settle_runtime_quiet(struct sc_runtime *rt)
{
	struct sc_exec_info info;

	sc_exec_info(sc_runtime_exec(rt), &info);
	return info.idle;
}

/* A panic must be reported at shutdown exactly when one happened. */
void
sc__settle_check_shutdown(struct sc__settle_run *r)
{
	struct sc_panic_record pr;
	int rc = sc_runtime_shutdown(r->rt, &pr);

	if (r->res->panicked && rc != SC_EPANIC)
		sc__settle_fail(r, SC_ESTATE,
				"a unit panicked but shutdown returned %s",
				sc_errname(rc));
	else if (!r->res->panicked && rc)
		sc__settle_fail(r, rc, "shutdown: %s", sc_errmsg());
}
