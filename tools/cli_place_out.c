/*
 * cli_place_out.c - what `subcirc place` shows and writes
 * (cli_place.h): the table of cases, a ranking per worker count in
 * words (units/rank.h), the JSON of every repetition, the CSV, the plot
 * through gnuplot and the placements as DOT.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "units/rank.h"
#include "operators/error.h"
#include "tools/cli.h"
#include "tools/cli_grid.h"
#include "tools/cli_place.h"
#include "units/placement.h"

/* --- figures ---------------------------------------------------------------
 */

/* The median of f(r) over a case's repetitions. */
static double
median_of(const struct cli_place_case *c,
	  double (*f)(const struct cli_run_result *))
{
	struct sc_rank_summary s;
	double v[128];
	size_t n = c->done < 128 ? c->done : 128;

	for (size_t i = 0; i < n; i++)
		v[i] = f(&c->r[i]);
	if (n == 0 || sc_rank_summarize(v, n, &s) != 0)
		return 0.0;
	return s.median;
}

static double
fig_p50(const struct cli_run_result *r)
{
	return r->p50_us;
}

static double
fig_p99(const struct cli_run_result *r)
{
	return r->p99_us;
}

static double
fig_turns(const struct cli_run_result *r)
{
	return (double)r->turns;
}

static double
fig_kicks(const struct cli_run_result *r)
{
	return (double)r->kicks;
}

static double
fig_fpt(const struct cli_run_result *r)
{
	return r->turns ? (double)r->frames / (double)r->turns : 0.0;
}

void
cli_place_figures(const struct cli_place_case *c, struct cli_place_figures *f)
{
	memset(f, 0, sizeof(*f));
	f->p50_us = median_of(c, fig_p50);
	f->p99_us = median_of(c, fig_p99);
	f->turns = median_of(c, fig_turns);
	f->kicks = median_of(c, fig_kicks);
	f->frames_per_turn = median_of(c, fig_fpt);
	f->p99_lo = f->p99_hi = f->p99_us;
	for (uint32_t i = 0; i < c->done; i++) {
		f->p99_lo =
		    c->r[i].p99_us < f->p99_lo ? c->r[i].p99_us : f->p99_lo;
		f->p99_hi =
		    c->r[i].p99_us > f->p99_hi ? c->r[i].p99_us : f->p99_hi;
	}
	if (c->done) {
		f->units = c->r[0].units;
		f->edges = c->r[0].edges;
	}
}

/* --- rankings --------------------------------------------------------------
 */

/* The cases with `workers` workers as rank cases into rc (their indices
 * in idx); how many. */
static size_t
group_of(const struct cli_place_sweep *s, uint32_t workers,
	 struct sc_rank_case *rc, size_t *idx)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n; i++) {
		const struct cli_place_case *c = &s->cases[i];

		if (c->workers != workers || c->done == 0)
			continue;
		rc[n].name = c->label;
		rc[n].v = c->eps;
		rc[n].n = c->done;
		idx[n++] = i;
	}
	return n;
}

/* Whether workers w appeared before case i (a group is ranked once). */
static bool
seen_before(const struct cli_place_sweep *s, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (s->cases[j].workers == s->cases[i].workers)
			return true;
	return false;
}

/* Visit each worker count's ranking: fn(ctx, workers, cases, ranking, n,
 * first). Returns 0 or the first error. */
static int
each_ranking(const struct cli_place_sweep *s,
	     void (*fn)(void *ctx, uint32_t workers,
			const struct sc_rank_case *rc,
			const struct sc_rank_entry *r, size_t n, bool first),
	     void *ctx)
{
	struct sc_rank_case *rc = calloc(s->n ? s->n : 1, sizeof(*rc));
	struct sc_rank_entry *r = calloc(s->n ? s->n : 1, sizeof(*r));
	size_t *idx = calloc(s->n ? s->n : 1, sizeof(*idx));
	bool first = true;
	int rc_ = 0;

	if (!rc || !r || !idx) {
		rc_ = SC_ENOMEM;
		goto free_all;
	}
	for (size_t i = 0; i < s->n && !rc_; i++) {
		size_t n;

		if (seen_before(s, i))
			continue;
		n = group_of(s, s->cases[i].workers, rc, idx);
		if (n == 0 || (rc_ = sc_rank_order(rc, n, r)) != 0)
			continue;
		fn(ctx, s->cases[i].workers, rc, r, n, first);
		first = false;
	}
free_all:
	free(idx);
	free(r);
	free(rc);
	return rc_;
}

static void
print_ranking(void *ctx, uint32_t workers, const struct sc_rank_case *rc,
	      const struct sc_rank_entry *r, size_t n, bool first)
{
	(void)ctx;
	(void)first;
	(void)fprintf(cli_report_text(),
		      "\nranking with %u worker%s, by median events/s (higher "
		      "is better; a tie: min-max intervals overlap):\n",
		      workers, workers == 1 ? "" : "s");
	(void)sc_rank_fprint(cli_report_text(), rc, r, n, "events/s");
	(void)sc_rank_fprint_decision(cli_report_text(), rc, r, n);
}

/* --- the table -------------------------------------------------------------
 */

void
cli_place_print(const struct cli_place_sweep *s)
{
	int rc;

	(void)fprintf(cli_report_text(),
		      "subcirc place: workload %s (%s), %zu cases x %u "
		      "repetitions of %s, %.1f s in all; medians, min-max of "
		      "events/s (higher is better; p50, p99: per event, "
		      "lower is better)\n",
		      s->w->name, s->w->about, s->n, s->reps,
		      s->time_per_case > 0 ? "a time" : "an event count",
		      s->seconds);
	(void)fprintf(cli_report_text(),
		      "%-26s %5s %5s %10s %21s %9s %9s %9s %8s %7s %3s\n",
		      "case", "units", "edges", "events/s", "min-max", "p50 us",
		      "p99 us", "turns", "kicks", "fr/turn", "ok");
	for (size_t i = 0; i < s->n; i++) {
		const struct cli_place_case *c = &s->cases[i];
		struct cli_place_figures f;
		struct sc_rank_summary sm;
		char m[32], lo[32], hi[32], mm[72];

		if (c->done == 0 || sc_rank_summarize(c->eps, c->done, &sm))
			continue;
		cli_place_figures(c, &f);
		sc_rank_si(sm.median, m, sizeof(m));
		sc_rank_si(sm.lo, lo, sizeof(lo));
		sc_rank_si(sm.hi, hi, sizeof(hi));
		(void)snprintf(mm, sizeof(mm), "%s-%s", lo, hi);
		(void)fprintf(cli_report_text(),
			      "%-26s %5u %5u %10s %21s %9.1f %9.1f %9.0f %8.0f "
			      "%7.1f %3s\n",
			      c->label, f.units, f.edges, m, mm, f.p50_us,
			      f.p99_us, f.turns, f.kicks, f.frames_per_turn,
			      c->ok ? "yes" : "NO");
	}
	if ((rc = each_ranking(s, print_ranking, NULL)) != 0)
		(void)cli_lib_error("the ranking", rc);
	(void)fflush(cli_report_text());
}

/* --- JSON and CSV ----------------------------------------------------------
 */

static void
json_rep(struct cli_json *j, const struct cli_run_result *r)
{
	cli_json_open(j, NULL, '{', true);
	cli_json_uint(j, "events", r->events);
	cli_json_real(j, "seconds", r->seconds);
	cli_json_real(j, "events_per_s", r->eps);
	cli_json_real(j, "p50_us", r->p50_us);
	cli_json_real(j, "p99_us", r->p99_us);
	cli_json_real(j, "max_us", r->max_us);
	cli_json_uint(j, "turns", r->turns);
	cli_json_uint(j, "kicks", r->kicks);
	cli_json_uint(j, "frames", r->frames);
	cli_json_real(j, "frames_per_turn",
		      r->turns ? (double)r->frames / (double)r->turns : 0.0);
	cli_json_uint(j, "efull", r->efull);
	cli_json_bool(j, "ok", r->ok);
	cli_json_close(j);
}

static void
json_case(struct cli_json *j, const struct cli_place_case *c)
{
	struct sc_rank_summary sm = {0, 0, 0};
	struct cli_place_figures fg;

	if (c->done)
		(void)sc_rank_summarize(c->eps, c->done, &sm);
	cli_place_figures(c, &fg);
	cli_json_open(j, NULL, '{', false);
	cli_json_text(j, "case", c->label);
	cli_json_text(j, "placement", c->placement);
	cli_json_uint(j, "workers", c->workers);
	cli_json_uint(j, "budget", c->budget);
	cli_json_uint(j, "units", fg.units);
	cli_json_uint(j, "edges", fg.edges);
	cli_json_real(j, "median_events_per_s", sm.median);
	cli_json_real(j, "min_events_per_s", sm.lo);
	cli_json_real(j, "max_events_per_s", sm.hi);
	cli_json_real(j, "median_p50_us", fg.p50_us);
	cli_json_real(j, "median_p99_us", fg.p99_us);
	cli_json_bool(j, "ok", c->ok);
	cli_json_open(j, "reps", '[', false);
	for (uint32_t i = 0; i < c->done; i++)
		json_rep(j, &c->r[i]);
	cli_json_close(j);
	cli_json_close(j);
}

static void
json_ranking(void *ctx, uint32_t workers, const struct sc_rank_case *rc,
	     const struct sc_rank_entry *r, size_t n, bool first)
{
	struct cli_json *j = ctx;

	(void)first;
	cli_json_open(j, NULL, '{', false);
	cli_json_uint(j, "workers", workers);
	cli_json_open(j, "order", '[', false);
	for (size_t i = 0; i < n; i++) {
		cli_json_open(j, NULL, '{', true);
		cli_json_uint(j, "rank", i + 1);
		cli_json_text(j, "case", rc[r[i].index].name);
		cli_json_real(j, "median_events_per_s", r[i].s.median);
		cli_json_bool(j, "tie_with_above", r[i].tie);
		cli_json_real(j, "above_ratio", r[i].ratio);
		cli_json_real(j, "above_pm", r[i].pm);
		cli_json_close(j);
	}
	cli_json_close(j);
	cli_json_close(j);
}

void
cli_place_json_results(const struct cli_place_sweep *s, struct cli_json *j)
{
	cli_json_real(j, "seconds", s->seconds);
	cli_json_bool(j, "calibrated", s->cost != NULL);
	cli_json_open(j, "cases", '[', false);
	for (size_t i = 0; i < s->n; i++)
		json_case(j, &s->cases[i]);
	cli_json_close(j);
	cli_json_open(j, "rankings", '[', false);
	(void)each_ranking(s, json_ranking, j);
	cli_json_close(j);
}

void
cli_place_csv(const struct cli_place_sweep *s, FILE *f)
{
	(void)fprintf(f, "case,placement,workers,budget,rep,units,edges,"
			 "events,seconds,events_per_s,p50_us,p99_us,turns,"
			 "kicks,frames,frames_per_turn,efull,ok\n");
	for (size_t i = 0; i < s->n; i++) {
		const struct cli_place_case *c = &s->cases[i];

		for (uint32_t k = 0; k < c->done; k++) {
			const struct cli_run_result *r = &c->r[k];

			(void)fprintf(
			    f,
			    "%s,%s,%u,%u,%u,%u,%u,%" PRIu64 ",%.6f,%.1f,%.2f,"
			    "%.2f,%" PRIu64 ",%" PRIu64 ",%" PRIu64
			    ",%.3f,%" PRIu64 ",%d\n",
			    c->label, c->placement, c->workers, c->budget,
			    k + 1, r->units, r->edges, r->events, r->seconds,
			    r->eps, r->p50_us, r->p99_us, r->turns, r->kicks,
			    r->frames,
			    r->turns ? (double)r->frames / (double)r->turns
				     : 0.0,
			    r->efull, r->ok ? 1 : 0);
		}
	}
}

/* --- the plot (gnuplot) ----------------------------------------------------
 */

/* Eight colours that stay apart for the colour-blind (Tableau 10). */
static const char *const plot_colours[] = {"#4e79a7", "#f28e2b", "#59a14f",
					   "#e15759", "#76b7b2", "#b07aa1",
					   "#9c755f", "#edc948"};

/* A label as a gnuplot data string: quotes and backslashes would end it. */
static void
plot_label(FILE *g, const char *s)
{
	(void)fputc('"', g);
	for (; *s; s++)
		(void)fputc(*s == '"' || *s == '\\' || *s == '\n' ? '_' : *s,
			    g);
	(void)fputc('"', g);
}

/* The worker counts of p's cases in the order they first appear: how
 * many (at most max). */
static size_t
plot_groups(const struct cli_place_plot *p, uint32_t *w, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n; i++) {
		size_t k = 0;

		while (k < n && w[k] != p->cases[i].workers)
			k++;
		if (k == n && n < max)
			w[n++] = p->cases[i].workers;
	}
	return n;
}

/* The data: a block per worker count (gnuplot's "index"), each line x,
 * label, events/s median, min, max (in the axis' unit), p99 median, min,
 * max in ms. The bars of one worker count stand together. */
static void
plot_data(FILE *g, const struct cli_place_plot *p, const uint32_t *w, size_t nw,
	  struct cli_plot_scale sc)
{
	size_t x = 0;

	(void)fprintf(g, "$data << EOD\n");
	for (size_t k = 0; k < nw; k++) {
		if (k > 0)
			(void)fprintf(g, "\n\n");
		for (size_t i = 0; i < p->n; i++) {
			const struct cli_plot_case *c = &p->cases[i];

			if (c->workers != w[k])
				continue;
			(void)fprintf(g, "%zu ", x++);
			plot_label(g, c->label);
			(void)fprintf(g, " %.6g %.6g %.6g %.6g %.6g %.6g\n",
				      c->eps / sc.div, c->eps_lo / sc.div,
				      c->eps_hi / sc.div, c->p99_us / 1e3,
				      c->p99_lo / 1e3, c->p99_hi / 1e3);
		}
	}
	(void)fprintf(g, "EOD\n");
}

/* One panel: a bar per case coloured by worker count, its min-max as a
 * black line with flat ends (vectors: gnuplot's error bars leave a gap
 * at the median that reads as a marker); columns col (median), col+1,
 * col+2 (min, max). */
static void
plot_panel(FILE *g, const uint32_t *w, size_t nw, int col, bool labels)
{
	/* The legend once, beside the upper panel: both panels share it. */
	(void)fprintf(g, "%s\n",
		      labels ? "unset key"
			     : "set key outside "
			       "right top Left reverse");
	(void)fprintf(g, "plot ");
	for (size_t k = 0; k < nw; k++)
		(void)fprintf(g,
			      "$data index %zu using 1:%d%s with boxes lc rgb "
			      "'%s' title '%u worker%s (median)', ",
			      k, col, labels ? ":xtic(2)" : "",
			      plot_colours[k % 8], w[k], w[k] == 1 ? "" : "s");
	for (size_t k = 0; k < nw; k++)
		(void)fprintf(g,
			      "%s$data index %zu using 1:%d:(0):($%d-$%d) with "
			      "vectors heads size screen 0.006,90 lc rgb "
			      "'black' %s",
			      k ? ", " : "", k, col + 1, col + 2, col + 1,
			      k ? "notitle" : "title 'min-max of the reps'");
	(void)fputc('\n', g);
}

int
cli_place_plot_draw(const struct cli_place_plot *p, const char *path)
{
	uint32_t w[8 * CLI_MAX_LIST];
	size_t nw = plot_groups(p, w, sizeof(w) / sizeof(w[0]));
	double top = 0;
	struct cli_plot_scale sc;
	char caption[512];
	FILE *g;

	for (size_t i = 0; i < p->n; i++)
		top = p->cases[i].eps_hi > top ? p->cases[i].eps_hi : top;
	sc = cli_plot_rate_scale(top);
	cli_plot_caption(&p->meta, caption, sizeof(caption));
	if (p->n == 0) {
		(void)fprintf(stderr,
			      "subcirc place: --plot: no case ran, nothing "
			      "to draw in '%s'\n",
			      path);
		return CLI_EXIT_LIBRARY;
	}
	if (!(g = cli_plot_open("place", path)))
		return CLI_EXIT_LIBRARY;
	plot_data(g, p, w, nw, sc);
	/* Margins in screen units: the legend has the right-hand column,
	 * the rotated case names the space under the lower panel, the
	 * caption the bottom line; nothing is cut at the edge. */
	(void)fprintf(
	    g,
	    "set termoption noenhanced\n"
	    "set multiplot layout 2,1 margins screen 0.08,0.80,0.20,0.92 "
	    "spacing screen 0.05 title \"subcirc place: workload %s, %u "
	    "repetitions per case, %s\" font ',13'\n"
	    "set label 1 \"%s\" at screen 0.5, screen 0.015 center "
	    "font ',10'\n"
	    "set style fill solid 0.7 border rgb '#404040'\nset boxwidth 0.7\n"
	    "set grid ytics\n"
	    "set xrange [-0.6:%zu.6]\nset yrange [0:*]\n"
	    "set xtics scale 0\nset format x ''\n"
	    "set ylabel '%s (higher is better)'\n",
	    p->workload, p->reps, p->open_loop ? p->loop : "closed loop",
	    caption, p->n - 1, sc.unit);
	plot_panel(g, w, nw, 3, false);
	(void)fprintf(g, "unset label 1\n"
			 "set format x '%%g'\n"
			 "set xtics rotate by 30 right font ',10'\n"
			 "set ylabel 'p99 latency, ms (lower is better)'\n");
	plot_panel(g, w, nw, 6, true);
	(void)fprintf(g, "unset multiplot\n");
	return cli_plot_close("place", g, path);
}

int
cli_place_plot_file(const struct cli_place_sweep *s,
		    const struct cli_report *rep, const char *path)
{
	struct cli_place_plot p;
	struct cli_plot_case *cs = calloc(s->n ? s->n : 1, sizeof(*cs));
	char rate[32];
	int rc;

	if (!cs)
		return cli_lib_error("calloc", SC_ENOMEM);
	memset(&p, 0, sizeof(p));
	for (size_t i = 0; i < s->n; i++) {
		const struct cli_place_case *c = &s->cases[i];
		struct cli_plot_case *o = &cs[p.n];
		struct sc_rank_summary sm;
		struct cli_place_figures f;

		if (c->done == 0 || sc_rank_summarize(c->eps, c->done, &sm))
			continue;
		cli_place_figures(c, &f);
		(void)snprintf(o->label, sizeof(o->label), "%s", c->label);
		o->workers = c->workers;
		o->eps = sm.median;
		o->eps_lo = sm.lo;
		o->eps_hi = sm.hi;
		o->p99_us = f.p99_us;
		o->p99_lo = f.p99_lo;
		o->p99_hi = f.p99_hi;
		p.n++;
	}
	p.cases = cs;
	(void)snprintf(p.workload, sizeof(p.workload), "%s", s->w->name);
	p.reps = s->reps;
	p.open_loop = s->base.rate > 0;
	cli_plot_rate_text(s->base.rate, rate, sizeof(rate));
	(void)snprintf(p.loop, sizeof(p.loop), "open loop at %s", rate);
	cli_plot_meta_now(rep, &p.meta);
	rc = cli_place_plot_draw(&p, path);
	free(cs);
	return rc;
}

/* --- DOT -------------------------------------------------------------------
 */

/* Whether case i's placement appeared before it. */
static bool
dot_seen(const struct cli_place_sweep *s, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (!strcmp(s->cases[j].placement, s->cases[i].placement))
			return true;
	return false;
}

int
cli_place_dot(const struct cli_place_sweep *s, FILE *f)
{
	void *owner = NULL;
	struct sc_graph *g = s->inst ? sc_workload_graph(s->inst) : NULL;
	int rc = s->inst ? 0 : s->w->graph(&s->base, &owner, &g);

	if (rc)
		return cli_lib_error("the workload's graph", rc);
	for (size_t i = 0; i < s->n && !rc; i++) {
		struct sc_placement *p = NULL;

		if (dot_seen(s, i))
			continue;
		if ((rc = cli_place_make(s, &s->cases[i], g, &p)) != 0)
			break;
		(void)fprintf(f, "// %s\n", s->cases[i].placement);
		rc = sc_placement_fprint_dot(p, f);
		sc_placement_destroy(p);
	}
	if (!s->inst)
		s->w->graph_free(owner);
	return rc ? cli_lib_error("--dot", rc) : 0;
}
