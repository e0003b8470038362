/*
 * cli_plot.c - what every figure of the CLI shares (cli.h): the check of
 * a --plot path before anything runs, gnuplot started on it, the caption
 * that says when, where and with what a figure was made, and the scale
 * of a throughput axis in units people read (k or M events/s).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "operators/version.h"
#include "tools/cli.h"

bool
cli_plot_have_gnuplot(void)
{
	/* PATH is read on the one thread that parses the arguments. */
	// NOLINTNEXTLINE(concurrency-mt-unsafe)
	const char *path = getenv("PATH");
	char dir[4096];

	while (path && *path) {
		size_t len = strcspn(path, ":");

		if (len > 0 && len + sizeof("/gnuplot") < sizeof(dir)) {
			memcpy(dir, path, len);
			memcpy(dir + len, "/gnuplot", sizeof("/gnuplot"));
			if (access(dir, X_OK) == 0)
				return true;
		}
		path += len + (path[len] == ':');
	}
	return false;
}

const char *
cli_plot_terminal(const char *path)
{
	size_t n = strlen(path);

	/* Fonts sized for the size: the tick labels stay legible when the
	 * figure is shown at half its size, as in a README. */
	if (n > 4 && !strcmp(path + n - 4, ".png"))
		return "pngcairo size 1400,900 font 'sans,11'";
	if (n > 4 && !strcmp(path + n - 4, ".svg"))
		return "svg size 1400,900 font 'sans,11' background '#ffffff'";
	return NULL;
}

void
cli_plot_check(const char *cmd, const char *path)
{
	FILE *f;

	if (!path)
		return;
	if (!cli_plot_terminal(path))
		cli_die_usage(cmd,
			      "--plot: '%s': the file must end in .png or .svg",
			      path);
	/* The path goes into gnuplot's script as a string: refuse quotes
	 * rather than escape them. */
	if (strpbrk(path, "\"'\\\n"))
		cli_die_usage(cmd,
			      "--plot: '%s': quotes and backslashes are not "
			      "supported",
			      path);
	if (!cli_plot_have_gnuplot())
		cli_die_usage(cmd,
			      "--plot: gnuplot is not installed (no gnuplot in "
			      "PATH); install it (Debian: apt-get install "
			      "gnuplot-nox, or tools/deps --optional) or drop "
			      "--plot");
	/* gnuplot writes the file; its path is checked here all the same,
	 * so a bad one wastes no run. */
	if ((f = cli_open_out(cmd, "--plot", path)) != NULL)
		cli_drop_out(f);
}

FILE *
cli_plot_open(const char *cmd, const char *path)
{
	const char *term = cli_plot_terminal(path);
	FILE *g;

	if (!term || strpbrk(path, "\"'\\\n")) {
		(void)fprintf(stderr,
			      "subcirc %s: --plot: '%s': not a .png or .svg "
			      "path gnuplot can be given\n",
			      cmd, path);
		return NULL;
	}
	if (!(g = popen("gnuplot", "w"))) {
		(void)fprintf(
		    stderr, "subcirc %s: --plot: cannot start gnuplot\n", cmd);
		return NULL;
	}
	(void)fprintf(g, "set terminal %s\nset output '%s'\n", term, path);
	return g;
}

int
cli_plot_close(const char *cmd, FILE *g, const char *path)
{
	int st = pclose(g);

	if (st != 0) {
		(void)fprintf(stderr,
			      "subcirc %s: --plot: gnuplot failed (status %d) "
			      "writing '%s'\n",
			      cmd, st, path);
		return CLI_EXIT_LIBRARY;
	}
	(void)fprintf(cli_report_text(), "plot written to %s\n", path);
	return 0;
}

/* Text for a gnuplot string in double quotes: the characters that would
 * end it or start an escape become '_' (the caption is for people). */
static void
plot_clean(char *s)
{
	for (; *s; s++)
		if (*s == '"' || *s == '\\' || *s == '\n' || *s == '\'' ||
		    *s == '@' || *s == '^' || *s == '&' || *s == '{' ||
		    *s == '}')
			*s = '_';
}

void
cli_plot_caption(const struct cli_plot_meta *m, char *buf, size_t n)
{
	char date[32], load[64];

	/* "2026-12-05T23:20:26Z" as "2026-12-05 23:20 UTC". */
	if (strlen(m->started) >= 16)
		(void)snprintf(date, sizeof(date), "%.10s %.5s UTC", m->started,
			       m->started + 11);
	else
		(void)snprintf(date, sizeof(date), "%s", m->started);
	if (m->have_load)
		(void)snprintf(load, sizeof(load), "load %.2f %.2f %.2f",
			       m->load[0], m->load[1], m->load[2]);
	else
		(void)snprintf(load, sizeof(load), "load unknown");
	(void)snprintf(buf, n,
		       "report of %s on %s (%d cores, %s before: 1, 5, 15 "
		       "min) - subcirc %s (commit %.12s)",
		       date, m->hostname[0] ? m->hostname : "an unnamed host",
		       m->cores, load, m->version, m->commit);
	plot_clean(buf);
}

void
cli_plot_meta_now(const struct cli_report *r, struct cli_plot_meta *m)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);

	memset(m, 0, sizeof(*m));
	(void)snprintf(m->started, sizeof(m->started), "%s", r->started);
	(void)snprintf(m->version, sizeof(m->version), "%s",
		       sc_version_string());
	(void)snprintf(m->commit, sizeof(m->commit), "%s", cli_report_commit());
	if (gethostname(m->hostname, sizeof(m->hostname) - 1) != 0)
		m->hostname[0] = '\0';
	m->cores = cores > 0 ? (int)cores : 1;
	m->have_load = r->have_load;
	memcpy(m->load, r->load_before, sizeof(m->load));
}

struct cli_plot_scale
cli_plot_rate_scale(double max_eps)
{
	if (max_eps >= 1e6)
		return (struct cli_plot_scale){1e6, "M events/s"};
	if (max_eps >= 1e3)
		return (struct cli_plot_scale){1e3, "k events/s"};
	return (struct cli_plot_scale){1, "events/s"};
}

void
cli_plot_rate_text(double eps, char *buf, size_t n)
{
	struct cli_plot_scale sc = cli_plot_rate_scale(eps);

	(void)snprintf(buf, n, "%.4g %s", eps / sc.div, sc.unit);
}

/* --- the latency histogram -------------------------------------------------
 */

/* The buckets from the first to the last that holds a value, as steps:
 * a line per bucket (its floor in ms, its share of the events in %), and
 * the last bucket's end at 0, so gnuplot's fillsteps draws each bucket
 * as wide as it is. The largest share into *top. */
static void
latency_data(FILE *g, const struct cli_hist_counts *c, double *top)
{
	unsigned first = CLI_HIST_BUCKETS, last = 0;

	*top = 0;
	for (unsigned i = 0; i < CLI_HIST_BUCKETS; i++)
		if (c->b[i]) {
			first = i < first ? i : first;
			last = i;
		}
	(void)fprintf(g, "$hist << EOD\n");
	for (unsigned i = first; i <= last && first < CLI_HIST_BUCKETS; i++) {
		double share = 100.0 * (double)c->b[i] / (double)c->n;

		*top = share > *top ? share : *top;
		(void)fprintf(g, "%.9g %.6g\n",
			      (double)cli_hist_bucket_floor_ns(i) / 1e6, share);
	}
	if (first < CLI_HIST_BUCKETS)
		(void)fprintf(g, "%.9g 0\n",
			      (double)cli_hist_bucket_floor_ns(last + 1) / 1e6);
	(void)fprintf(g, "EOD\n");
}

int
cli_plot_latency(const char *cmd, const char *path,
		 const struct cli_hist_counts *c, const char *title,
		 const struct cli_plot_meta *m)
{
	static const struct {
		double q;
		const char *name, *colour;
	} marks[] = {{0.50, "p50", "#59a14f"},
		     {0.99, "p99", "#f28e2b"},
		     {0.999, "p99.9", "#e15759"},
		     {1.0, "max", "#000000"}};
	char caption[512], t[256];
	double top;
	FILE *g;

	if (c->n == 0) {
		(void)fprintf(stderr,
			      "subcirc %s: --plot: no latency was measured, "
			      "nothing to draw in '%s'\n",
			      cmd, path);
		return CLI_EXIT_LIBRARY;
	}
	if (!(g = cli_plot_open(cmd, path)))
		return CLI_EXIT_LIBRARY;
	cli_plot_caption(m, caption, sizeof(caption));
	(void)snprintf(t, sizeof(t), "%s", title);
	plot_clean(t);
	latency_data(g, c, &top);
	/* A vertical line per percentile, as data, so the legend names it. */
	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
		double ms = cli_hist_quantile_ns(c, marks[i].q) / 1e6;

		(void)fprintf(g, "$mark%zu << EOD\n%.9g 0\n%.9g %.6g\nEOD\n", i,
			      ms, ms, top * 1.1);
	}
	(void)fprintf(
	    g,
	    "set termoption noenhanced\n"
	    "set lmargin screen 0.08\nset rmargin screen 0.80\n"
	    "set bmargin screen 0.14\nset tmargin screen 0.90\n"
	    "set title \"%s\" font ',13'\n"
	    "set label 1 \"%s\" at screen 0.5, screen 0.02 center "
	    "font ',10'\n"
	    "set logscale x 10\nset format x '%%g'\n"
	    "set xlabel 'latency per event, ms (log scale)'\n"
	    "set ylabel 'events, %% of all per bucket (16 buckets per "
	    "doubling)'\n"
	    "set yrange [0:%.6g]\nset grid xtics ytics mxtics\n"
	    "set key outside right top Left reverse\n"
	    "set style fill solid 0.6 noborder\n"
	    "plot $hist using 1:2 with fillsteps lc rgb '#4e79a7' "
	    "title 'events (%llu in all)'",
	    t, caption, top * 1.1, (unsigned long long)c->n);
	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
		double ms = cli_hist_quantile_ns(c, marks[i].q) / 1e6;

		(void)fprintf(g,
			      ", $mark%zu using 1:2 with lines lw 2 dt %zu lc "
			      "rgb '%s' title '%s = %.3g ms'",
			      i, i + 1, marks[i].colour, marks[i].name, ms);
	}
	(void)fprintf(g, "\n");
	return cli_plot_close(cmd, g, path);
}
