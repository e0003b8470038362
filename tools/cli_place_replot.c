/*
 * cli_place_replot.c - `subcirc place --replot FILE.json --plot OUT`
 * (cli_place.h): the plot of a saved place --json report, drawn again
 * without running anything, captioned from the report's own envelope
 * (its start, host, load before, version and commit), so a figure redrawn
 * later still says when and where its numbers were measured.
 *
 * The report is read whole (it is the CLI's own output, a few MB at
 * most) by the strict reader (cli_json_read.c) and checked for what the
 * plot reads: the schema, the command "place", and per case its label,
 * workers, events/s and p99 latency. Anything else missing is exit 2
 * naming the file and the field.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/error.h"
#include "tools/cli.h"
#include "tools/cli_place.h"

/* Reports larger than this are not the CLI's place reports. */
#define REPLOT_MAX_BYTES ((size_t)256 << 20)

/* The whole file into *text (NUL ended), its length in *len: 0, or 2
 * (said). */
static int
replot_slurp(const char *path, char **text, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 16, n = 0;
	char *buf;

	if (!f) {
		char msg[128] = "";

		(void)strerror_r(errno, msg, sizeof(msg));
		(void)fprintf(stderr,
			      "subcirc place: --replot: cannot read '%s': %s\n",
			      path, msg);
		return CLI_EXIT_USAGE;
	}
	if (!(buf = malloc(cap)))
		goto no_memory;
	for (;;) {
		size_t got = fread(buf + n, 1, cap - n - 1, f);

		n += got;
		if (got == 0)
			break;
		if (n + 1 == cap) {
			char *m = cap < REPLOT_MAX_BYTES ? realloc(buf, 2 * cap)
							 : NULL;

			if (!m)
				goto too_big;
			buf = m;
			cap *= 2;
		}
	}
	if (ferror(f)) {
		(void)fprintf(stderr,
			      "subcirc place: --replot: cannot read '%s'\n",
			      path);
		free(buf);
		(void)fclose(f);
		return CLI_EXIT_USAGE;
	}
	(void)fclose(f);
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return 0;
too_big:
	(void)fprintf(stderr,
		      "subcirc place: --replot: '%s' is larger than a place "
		      "report can be\n",
		      path);
	free(buf);
	(void)fclose(f);
	return CLI_EXIT_USAGE;
no_memory:
	(void)fclose(f);
	return cli_lib_error("malloc", SC_ENOMEM);
}

/* A report refused: the file and why, exit 2. */
static int __attribute__((format(printf, 2, 3)))
replot_refuse(const char *path, const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	(void)fprintf(stderr,
		      "subcirc place: --replot: '%s' is not a place report "
		      "this subcirc can draw: %s\n",
		      path, why);
	return CLI_EXIT_USAGE;
}

/* The envelope's facts for the caption. */
static int
replot_meta(const char *path, const struct cli_jv *doc,
	    struct cli_place_plot *p)
{
	const struct cli_jv *sub = cli_jv_get(doc, "subcirc");
	const struct cli_jv *host = cli_jv_get(doc, "host");
	const struct cli_jv *load = cli_jv_get(host, "load_before");
	const char *s;
	double v;

	if (!(s = cli_jv_str(doc, "started")))
		return replot_refuse(path, "no \"started\" time");
	(void)snprintf(p->meta.started, sizeof(p->meta.started), "%s", s);
	if (!(s = cli_jv_str(sub, "version")))
		return replot_refuse(path, "no subcirc.version");
	(void)snprintf(p->meta.version, sizeof(p->meta.version), "%s", s);
	s = cli_jv_str(sub, "commit");
	(void)snprintf(p->meta.commit, sizeof(p->meta.commit), "%s",
		       s ? s : "unknown");
	if (!host || host->kind != CLI_JV_OBJ)
		return replot_refuse(path, "no \"host\" object");
	s = cli_jv_str(host, "hostname");
	(void)snprintf(p->meta.hostname, sizeof(p->meta.hostname), "%s",
		       s ? s : "");
	p->meta.cores = cli_jv_num(host, "cores", &v) ? (int)v : 0;
	if (load && load->kind == CLI_JV_ARR && load->n == 3) {
		p->meta.have_load = true;
		for (int i = 0; i < 3; i++)
			p->meta.load[i] = load->items[i].kind == CLI_JV_NUM
					      ? load->items[i].num
					      : 0.0;
	}
	s = cli_jv_str(doc, "workload");
	(void)snprintf(p->workload, sizeof(p->workload), "%s", s ? s : "?");
	return 0;
}

/* The configuration's reps and rate. */
static void
replot_config(const struct cli_jv *doc, struct cli_place_plot *p)
{
	const struct cli_jv *cfg = cli_jv_get(doc, "config");
	char rate[32];
	double v;

	p->reps = cli_jv_num(cfg, "reps", &v) && v >= 0 ? (uint32_t)v : 0;
	if (cli_jv_num(cfg, "rate", &v) && v > 0) {
		p->open_loop = true;
		cli_plot_rate_text(v, rate, sizeof(rate));
		(void)snprintf(p->loop, sizeof(p->loop), "open loop at %s",
			       rate);
	}
}

/* One case: the fields the plot reads, each a number (p99's min and
 * max over the repetitions, as the live plot draws them). */
static int
replot_case(const char *path, size_t i, const struct cli_jv *c,
	    struct cli_plot_case *o)
{
	const struct cli_jv *reps = cli_jv_get(c, "reps");
	const char *label = cli_jv_str(c, "case");
	double w;

	if (!label || !cli_jv_num(c, "workers", &w) ||
	    !cli_jv_num(c, "median_events_per_s", &o->eps) ||
	    !cli_jv_num(c, "min_events_per_s", &o->eps_lo) ||
	    !cli_jv_num(c, "max_events_per_s", &o->eps_hi) ||
	    !cli_jv_num(c, "median_p99_us", &o->p99_us))
		return replot_refuse(path,
				     "results.cases[%zu] lacks a field the "
				     "plot reads (case, workers, "
				     "median/min/max_events_per_s, "
				     "median_p99_us)",
				     i);
	(void)snprintf(o->label, sizeof(o->label), "%s", label);
	o->workers = (uint32_t)w;
	o->p99_lo = o->p99_hi = o->p99_us;
	for (size_t k = 0; reps && reps->kind == CLI_JV_ARR && k < reps->n;
	     k++) {
		double v;

		if (!cli_jv_num(&reps->items[k], "p99_us", &v))
			continue;
		o->p99_lo = v < o->p99_lo ? v : o->p99_lo;
		o->p99_hi = v > o->p99_hi ? v : o->p99_hi;
	}
	return 0;
}

/* The checked report into p (its cases malloc'd into *cs). */
static int
replot_read(const char *path, const struct cli_jv *doc,
	    struct cli_place_plot *p, struct cli_plot_case **cs)
{
	const struct cli_jv *cases =
	    cli_jv_get(cli_jv_get(doc, "results"), "cases");
	const char *schema = cli_jv_str(doc, "schema");
	const char *cmd = cli_jv_str(doc, "command");
	double ver;
	int rc;

	if (!doc || doc->kind != CLI_JV_OBJ)
		return replot_refuse(path, "not a JSON object");
	if (!schema || strcmp(schema, CLI_REPORT_SCHEMA) != 0 ||
	    !cli_jv_num(doc, "schema_version", &ver) ||
	    ver != CLI_REPORT_VERSION)
		return replot_refuse(path,
				     "its schema is not \"%s\" version %d",
				     CLI_REPORT_SCHEMA, CLI_REPORT_VERSION);
	if (!cmd || strcmp(cmd, "place") != 0)
		return replot_refuse(path, "its command is \"%s\", not place",
				     cmd ? cmd : "?");
	if ((rc = replot_meta(path, doc, p)) != 0)
		return rc;
	replot_config(doc, p);
	if (!cases || cases->kind != CLI_JV_ARR || cases->n == 0)
		return replot_refuse(path, "no results.cases");
	if (!(*cs = calloc(cases->n, sizeof(**cs))))
		return cli_lib_error("calloc", SC_ENOMEM);
	for (size_t i = 0; i < cases->n; i++)
		if ((rc = replot_case(path, i, &cases->items[i], &(*cs)[i])) !=
		    0)
			return rc;
	p->cases = *cs;
	p->n = cases->n;
	return 0;
}

int
cli_place_replot(const char *json, const char *path)
{
	struct cli_place_plot p;
	struct cli_plot_case *cs = NULL;
	struct cli_jv *doc = NULL;
	char *text = NULL, err[160];
	size_t len = 0;
	int rc;

	memset(&p, 0, sizeof(p));
	if ((rc = replot_slurp(json, &text, &len)) != 0)
		return rc;
	if (cli_json_parse(text, len, &doc, err, sizeof(err)) != 0) {
		rc = replot_refuse(json, "not JSON (%s)", err);
		goto free_text;
	}
	/* The report first: a bad one is refused as such, also where
	 * gnuplot is missing; then the plot path's checks (exit 2). */
	if ((rc = replot_read(json, doc, &p, &cs)) == 0) {
		cli_plot_check("place", path);
		rc = cli_place_plot_draw(&p, path);
	}
	free(cs);
	cli_jv_free(doc);
free_text:
	free(text);
	return rc;
}
