/*
 * cli_report.c - the JSON writer and the report envelope every --json of
 * the CLI shares (cli.h; the schema: tools/report.schema.json), the
 * progress samples as JSON and CSV, and --version with the commit the
 * program was built from (cli_commit.h, which the build writes).
 */
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_commit.h"
#include "operators/version.h"
#include "tools/cli.h"

/* --- the writer ------------------------------------------------------------
 */

/* The separator before a member, and the newline and indent of a
 * container written a member a line. */
static void
json_sep(struct cli_json *j)
{
	int d = j->depth;

	if (d == 0)
		return;
	if (j->any[d - 1])
		(void)fputc(',', j->f);
	if (j->flat[d - 1])
		(void)fputs(j->any[d - 1] ? " " : "", j->f);
	else
		(void)fprintf(j->f, "\n%*s", 2 * d, "");
	j->any[d - 1] = true;
}

void
cli_json_key(struct cli_json *j, const char *key)
{
	json_sep(j);
	if (key) {
		cli_json_str(j->f, key);
		(void)fputs(": ", j->f);
	}
}

void
cli_json_open(struct cli_json *j, const char *key, char bracket, bool flat)
{
	int d = j->depth;

	cli_json_key(j, key);
	(void)fputc(bracket, j->f);
	if (d >= CLI_JSON_DEPTH)
		return; /* a bug of the caller; the document is cut short */
	j->flat[d] = flat || (d > 0 && j->flat[d - 1]);
	j->any[d] = false;
	j->close[d] = bracket == '{' ? '}' : ']';
	j->depth = d + 1;
}

void
cli_json_close(struct cli_json *j)
{
	int d = j->depth - 1;

	if (d < 0)
		return;
	if (!j->flat[d] && j->any[d])
		(void)fprintf(j->f, "\n%*s", 2 * d, "");
	(void)fputc(j->close[d], j->f);
	j->depth = d;
	if (d == 0)
		(void)fputc('\n', j->f);
}

void
cli_json_uint(struct cli_json *j, const char *key, uint64_t v)
{
	cli_json_key(j, key);
	(void)fprintf(j->f, "%" PRIu64, v);
}

void
cli_json_int(struct cli_json *j, const char *key, int64_t v)
{
	cli_json_key(j, key);
	(void)fprintf(j->f, "%" PRId64, v);
}

void
cli_json_real(struct cli_json *j, const char *key, double v)
{
	cli_json_key(j, key);
	/* 15 digits: a value given as an option reads back as given. */
	if (isfinite(v))
		(void)fprintf(j->f, "%.15g", v);
	else
		(void)fputs("null", j->f);
}

void
cli_json_bool(struct cli_json *j, const char *key, bool v)
{
	cli_json_key(j, key);
	(void)fputs(v ? "true" : "false", j->f);
}

void
cli_json_text(struct cli_json *j, const char *key, const char *v)
{
	cli_json_key(j, key);
	if (v)
		cli_json_str(j->f, v);
	else
		(void)fputs("null", j->f);
}

void
cli_json_null(struct cli_json *j, const char *key)
{
	cli_json_key(j, key);
	(void)fputs("null", j->f);
}

void
cli_json_uints(struct cli_json *j, const char *key, const uint32_t *v, size_t n)
{
	cli_json_open(j, key, '[', true);
	for (size_t i = 0; i < n; i++)
		cli_json_uint(j, NULL, v[i]);
	cli_json_close(j);
}

void
cli_json_texts(struct cli_json *j, const char *key, const char (*v)[32],
	       size_t n)
{
	cli_json_open(j, key, '[', true);
	for (size_t i = 0; i < n; i++)
		cli_json_text(j, NULL, v[i]);
	cli_json_close(j);
}

/* --- the envelope ----------------------------------------------------------
 */

static void
utc_now(char *buf, size_t n)
{
	time_t t = time(NULL);
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm))
		(void)snprintf(buf, n, "unknown");
}

void
cli_report_start(struct cli_report *r, const char *command,
		 const char *workload)
{
	memset(r, 0, sizeof(*r));
	r->command = command;
	(void)snprintf(r->workload, sizeof(r->workload), "%s", workload);
	utc_now(r->started, sizeof(r->started));
	r->have_load = cli_host_load(r->load_before);
}

static void
json_load(struct cli_json *j, const char *key, bool have, const double l[3])
{
	if (!have) {
		cli_json_null(j, key);
		return;
	}
	cli_json_open(j, key, '[', true);
	for (int i = 0; i < 3; i++)
		cli_json_real(j, NULL, l[i]);
	cli_json_close(j);
}

static void
json_host(struct cli_report *r)
{
	struct cli_json *j = &r->j;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	char name[256] = "";
	double after[3];
	bool have_after = cli_host_load(after);

	cli_json_open(j, "host", '{', true);
	cli_json_int(j, "cores", cores > 0 ? cores : 1);
	if (gethostname(name, sizeof(name) - 1) == 0 && name[0])
		cli_json_text(j, "hostname", name);
	else
		cli_json_null(j, "hostname");
	json_load(j, "load_before", r->have_load, r->load_before);
	json_load(j, "load_after", have_after, after);
	cli_json_close(j);
}

const char *
cli_signal_name(int sig)
{
	if (sig == 0)
		return NULL;
	if (sig == SIGHUP)
		return "SIGHUP";
	return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "signal";
}

void
cli_report_open(struct cli_report *r, FILE *f, int signal)
{
	struct cli_json *j = &r->j;
	char ended[32];

	utc_now(ended, sizeof(ended));
	memset(j, 0, sizeof(*j));
	j->f = f;
	cli_json_open(j, NULL, '{', false);
	cli_json_text(j, "schema", CLI_REPORT_SCHEMA);
	cli_json_int(j, "schema_version", CLI_REPORT_VERSION);
	cli_json_open(j, "subcirc", '{', true);
	cli_json_text(j, "version", sc_version_string());
	cli_json_text(j, "commit", cli_report_commit());
	cli_json_close(j);
	cli_json_text(j, "command", r->command);
	cli_json_text(j, "workload", r->workload);
	json_host(r);
	cli_json_text(j, "started", r->started);
	cli_json_text(j, "ended", ended);
	cli_json_bool(j, "interrupted", signal != 0);
	cli_json_text(j, "signal", cli_signal_name(signal));
	cli_json_open(j, "config", '{', false);
}

void
cli_report_results(struct cli_report *r)
{
	cli_json_close(&r->j);
	cli_json_open(&r->j, "results", '{', false);
}

void
cli_report_close(struct cli_report *r)
{
	while (r->j.depth > 0)
		cli_json_close(&r->j);
}

void
cli_report_failure(struct cli_json *j, bool have, const char *why,
		   const char *replay)
{
	if (!have) {
		cli_json_null(j, "first_failure");
		return;
	}
	cli_json_open(j, "first_failure", '{', true);
	cli_json_text(j, "why", why);
	cli_json_text(j, "replay", replay);
	cli_json_close(j);
}

/* --- progress samples ------------------------------------------------------
 */

bool
cli_sample_push(struct cli_sample **s, size_t *n, size_t *cap,
		const struct cli_sample *x)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 64;
		struct cli_sample *m = realloc(*s, c * sizeof(*m));

		if (!m)
			return false;
		*s = m;
		*cap = c;
	}
	(*s)[(*n)++] = *x;
	return true;
}

void
cli_report_samples(struct cli_json *j, const struct cli_sample *s, size_t n)
{
	cli_json_open(j, "progress", '[', false);
	for (size_t i = 0; i < n; i++) {
		cli_json_open(j, NULL, '{', true);
		cli_json_real(j, "t", s[i].t);
		cli_json_uint(j, "events", s[i].events);
		cli_json_real(j, "events_per_s", s[i].eps);
		cli_json_real(j, "p50_us", s[i].p50_us);
		cli_json_real(j, "p99_us", s[i].p99_us);
		cli_json_real(j, "edge_fill", s[i].fill);
		cli_json_close(j);
	}
	cli_json_close(j);
}

/* A latency field of the CSV: empty when there is none. */
static void
csv_latency(FILE *f, double us)
{
	if (isfinite(us))
		(void)fprintf(f, ",%.2f", us);
	else
		(void)fputc(',', f);
}

void
cli_report_csv(FILE *f, const struct cli_sample *s, size_t n,
	       const struct cli_sample *total)
{
	(void)fprintf(f, "kind,t_s,events,events_per_s,p50_us,p99_us,"
			 "edge_fill\n");
	for (size_t i = 0; i < n; i++) {
		(void)fprintf(f, "interval,%.3f,%" PRIu64 ",%.1f", s[i].t,
			      s[i].events, s[i].eps);
		csv_latency(f, s[i].p50_us);
		csv_latency(f, s[i].p99_us);
		(void)fprintf(f, ",%.4f\n", s[i].fill);
	}
	(void)fprintf(f, "total,%.3f,%" PRIu64 ",%.1f", total->t, total->events,
		      total->eps);
	csv_latency(f, total->p50_us);
	csv_latency(f, total->p99_us);
	(void)fputs(",\n", f);
}

/* --- version ---------------------------------------------------------------
 */

const char *
cli_report_commit(void)
{
	return CLI_COMMIT;
}

void
cli_version_print(void)
{
	(void)printf("subcirc %s (commit %s)\n", sc_version_string(),
		     cli_report_commit());
}
