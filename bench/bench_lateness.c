/*
 * bench_lateness.c - what a declared lateness buys on Nexmark: the memory
 * q4, q5, q7 and q8 keep as the events grow, with and without lateness,
 * and what the cleanup costs in throughput.
 *
 * Each configuration (query, mode) runs in a child process of its own, so
 * that peak RSS (getrusage's ru_maxrss, the kernel's VmHWM) is that
 * configuration's alone; the child reports at 1M, 10M and 50M events (the
 * peak of a run of N events is the peak of this run when it has made N
 * events: the generator is deterministic, and a shorter run is a prefix).
 * The modes:
 *
 *   plain     the query as it was, no lateness declared: every state kept
 *   cleanup   lateness declared (the generator's disorder, on date_time
 *             of every stream), cleanup on
 *   kept      lateness declared, cleanup off (sc_circuit_set_cleanup):
 *             the same graph and the same work but the dropping, for the
 *             throughput comparison (run to --kept-events only)
 *
 * The events come with a disorder of --disorder ms (default 1000: 10,000
 * events of event time at the default gap) in every mode, so all modes see
 * the same rows. The single circuit runs the query (no units, no threads),
 * its output a stream that keeps nothing; a step every --chunk events.
 *
 * A child that passes --cap-mib of peak RSS stops there and says so
 * (capped: true, with the events it had made): the plain runs of q5 and q7
 * would need more memory at 50M events than this machine has.
 *
 * Lines, JSON, one per figure, each with its "better":
 *   peak_rss   MiB, lower       per (query, mode, events)
 *   state      bytes per live window or auction, lower; the state is
 *              every node's sc_circuit_node_state; live is what no cleanup
 *              could drop: q4 the auctions not expired below the bid
 *              waterline, q5/q7/q8 the windows not closed below it
 *   throughput events per CPU-second of the child (the generator's time
 *              included), higher; cleanup's line has kept as its
 *              baseline and their ratio (target >= 0.9)
 *
 * Usage: bench_lateness [--quick] [--queries q4,q5] [--events 1000000,...]
 *        [--disorder MS] [--chunk N] [--cap-mib M] [--kept-events N]
 *        [--modes plain,cleanup,kept] [--nodes]
 *
 * --nodes prints, at each point, every node's state and waterlines on
 * stderr (to find the state that grows).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/harness.h"
#include "bench/workloads/nexmark.h"
#include "bench/workloads/nexmark_queries.h"
#include "operators/circuit.h"
#include "operators/graph.h"
#include "operators/schema.h"
#include "operators/waterline.h"

#define LB_MAX_POINTS  8
#define LB_MAX_QUERIES 8
#define LB_TEN_S       10000 /* ms: q5's width, q7's and q8's windows */
#define LB_TWO_S       2000  /* ms: q5's hop */
#define LB_MIB	       (1024.0 * 1024.0)

enum lb_mode { LB_PLAIN = 0, LB_CLEANUP = 1, LB_KEPT = 2, LB_MODES = 3 };

static const char *const mode_names[LB_MODES] = {"plain", "cleanup", "kept"};

struct lb_opts {
	const char *queries[LB_MAX_QUERIES];
	size_t nqueries;
	uint64_t points[LB_MAX_POINTS]; /* checkpoints, ascending */
	size_t npoints;
	bool modes[LB_MODES];
	uint64_t disorder_ms;
	size_t chunk;
	double cap_mib;
	uint64_t kept_events;
	bool nodes; /* --nodes: each node's state on stderr at each point */
};

/* One checkpoint of one child, sent to the parent through a pipe. */
struct lb_point {
	uint64_t events;      /* made so far */
	double rss_mib;	      /* peak RSS so far */
	double cpu_s;	      /* the child's user + system time */
	uint64_t state_bytes; /* every node's state */
	uint64_t state_rows;
	uint64_t live; /* live windows or auctions */
	uint64_t late; /* late rows admitted (0: refused ones fail) */
	int capped;    /* stopped at the memory cap */
	int failed;    /* a call failed (the child's stderr says) */
};

/* --- what is live ------------------------------------------------------------
 */

/* The largest date_time per stream, and q4's open auctions. */
struct lb_live {
	int64_t max[SC_NEXMARK_KINDS];
	int64_t *expires; /* auctions' expiry, pruned below the waterline */
	size_t n, cap;
	int64_t lateness;
};

static int64_t
lb_time_col(enum sc_nexmark_kind k)
{
	static const int64_t c[SC_NEXMARK_KINDS] = {
	    SC_NXP_DATE_TIME, SC_NXA_DATE_TIME, SC_NXB_DATE_TIME};

	return c[k];
}

/* Drop the expiries below w (they are no longer live). */
static void
lb_prune(struct lb_live *l, int64_t w)
{
	size_t j = 0;

	for (size_t i = 0; i < l->n; i++)
		if (l->expires[i] >= w)
			l->expires[j++] = l->expires[i];
	l->n = j;
}

static int
lb_live_note(struct lb_live *l, enum sc_nexmark_kind k,
	     const struct sc_batch *b)
{
	for (size_t i = 0; i < sc_batch_count(b); i++) {
		const uint64_t *r = sc_batch_row(b, i);
		int64_t t = sc_dec_i64(r[lb_time_col(k)]);

		l->max[k] = t > l->max[k] ? t : l->max[k];
		if (k != SC_NEXMARK_AUCTION)
			continue;
		if (l->n == l->cap) {
			int64_t bw = l->max[SC_NEXMARK_BID] - l->lateness;
			size_t cap = l->cap ? 2 * l->cap : 1024;
			int64_t *e;

			lb_prune(l, bw);
			if (l->n < l->cap / 2)
				goto push;
			if (!(e = realloc(l->expires, cap * sizeof(*e))))
				return SC_ENOMEM;
			l->expires = e;
			l->cap = cap;
		}
	push:
		l->expires[l->n++] = sc_dec_i64(r[SC_NXA_EXPIRES]);
	}
	return 0;
}

/* Windows [s, s + width), s a multiple of hop, with s <= max and
 * s + width > w: those a row at or above w may still reach. */
static uint64_t
lb_windows(int64_t max, int64_t w, int64_t width, int64_t hop)
{
	int64_t hi = max / hop * hop;
	int64_t lo = (w - width) / hop * hop + hop;

	while (lo - hop + width > w)
		lo -= hop;
	return hi >= lo ? (uint64_t)((hi - lo) / hop + 1) : 0;
}

static uint64_t
lb_live_count(struct lb_live *l, const char *query)
{
	int64_t bmax = l->max[SC_NEXMARK_BID];
	int64_t pa = l->max[SC_NEXMARK_PERSON] > l->max[SC_NEXMARK_AUCTION]
			 ? l->max[SC_NEXMARK_PERSON]
			 : l->max[SC_NEXMARK_AUCTION];

	if (!strcmp(query, "q4")) {
		lb_prune(l, bmax - l->lateness);
		return l->n;
	}
	if (!strcmp(query, "q5"))
		return lb_windows(bmax, bmax - l->lateness, LB_TEN_S, LB_TWO_S);
	if (!strcmp(query, "q8"))
		return lb_windows(pa, pa - l->lateness, LB_TEN_S, LB_TEN_S);
	return lb_windows(bmax, bmax - l->lateness, LB_TEN_S, LB_TEN_S);
}

/* --- one child ---------------------------------------------------------------
 */

static double
lb_cpu_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static double
lb_rss_mib(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (double)ru.ru_maxrss * 1024.0 / LB_MIB; /* kB on Linux */
}

static void
lb_state(const struct sc_circuit *c, const struct sc_graph *g,
	 struct lb_point *p)
{
	p->state_bytes = p->state_rows = 0;
	for (size_t n = 0; n < sc_graph_node_count(g); n++) {
		struct sc_node_state ns;

		if (sc_circuit_node_state(c, (int)n, &ns) == 0) {
			p->state_bytes += ns.bytes;
			p->state_rows += ns.rows;
		}
	}
}

/* --nodes: what each node keeps and the waterlines it carries, for
 * finding the state that grows. */
static void
lb_nodes(const struct sc_circuit *c, const struct sc_graph *g,
	 const char *query, const char *mode, uint64_t events)
{
	for (size_t n = 0; n < sc_graph_node_count(g); n++) {
		struct sc_node_state ns = {0, 0};
		struct sc_node_info ni;
		int64_t v[SC_SCHEMA_MAX_COLS];
		uint32_t mask = 0;

		(void)sc_circuit_node_state(c, (int)n, &ns);
		if (sc_graph_node_info(g, (int)n, &ni) != 0)
			continue;
		(void)sc_circuit_waterlines(c, (int)n, &mask, v);
		(void)fprintf(stderr,
			      "bench_lateness: %s %s at %llu: node %zu %s "
			      "rows %zu bytes %zu waterlines",
			      query, mode, (unsigned long long)events, n,
			      ni.name ? ni.name : "?", ns.rows, ns.bytes);
		for (uint32_t col = 0; col < SC_SCHEMA_MAX_COLS; col++)
			if (mask >> col & 1)
				(void)fprintf(stderr, " c%u=%lld", col,
					      (long long)v[col]);
		(void)fprintf(stderr, "\n");
	}
}

static void
lb_send(int fd, const struct lb_point *p)
{
	if (write(fd, p, sizeof(*p)) != (ssize_t)sizeof(*p))
		_exit(3);
}

/* The child's run: the query, fed chunk by chunk, a point at each
 * checkpoint (or at the cap), until the last checkpoint. */
struct lb_run {
	struct sc_symtab *t;
	struct sc_nexmark *nx;
	struct sc_nexmark_query *q;
	struct sc_circuit *c;
	struct lb_live live;
};

static int
lb_open(struct lb_run *r, const struct lb_opts *o, const char *query,
	enum lb_mode mode)
{
	struct sc_nexmark_opts no;
	struct sc_nexmark_query_opts qo;
	int rc;

	sc_nexmark_opts_default(&no);
	no.disorder_ms = o->disorder_ms;
	sc_nexmark_query_opts_default(&qo);
	qo.flags = SC_NEXMARK_QUERY_STREAM;
	if (mode != LB_PLAIN)
		qo.lateness_ms = sc_nexmark_lateness(&no);
	r->live.lateness = (int64_t)o->disorder_ms;
	for (int k = 0; k < SC_NEXMARK_KINDS; k++)
		r->live.max[k] = INT64_MIN / 2;
	if ((rc = sc_symtab_create(&r->t)) != 0 ||
	    (rc = sc_nexmark_create(&no, r->t, &r->nx)) != 0 ||
	    (rc = sc_nexmark_query_create_opts(query, r->t, &qo, &r->q)) != 0 ||
	    (rc = sc_circuit_create(sc_nexmark_query_graph(r->q), &r->c)) != 0)
		return rc;
	if (mode != LB_PLAIN)
		rc = sc_circuit_set_cleanup(r->c, mode == LB_CLEANUP);
	return rc;
}

/* One chunk: make it, note what is live, feed what the query reads,
 * step. */
static int
lb_chunk(struct lb_run *r, size_t events)
{
	struct sc_batch *b[SC_NEXMARK_KINDS] = {NULL};
	int rc;

	if ((rc = sc_nexmark_batches(r->nx, events, b)) != 0)
		return rc;
	for (int k = 0; k < SC_NEXMARK_KINDS; k++) {
		int in = sc_nexmark_query_input(r->q, k);

		if (b[k] && !rc)
			rc = lb_live_note(&r->live, k, b[k]);
		if (b[k] && in >= 0 && !rc)
			rc = sc_circuit_feed(r->c, in, b[k]);
		sc_batch_release(b[k]);
	}
	sc_nexmark_release_texts(r->nx); /* the circuit holds what it keeps */
	return rc ? rc : sc_circuit_step(r->c);
}

static uint64_t
lb_late(const struct lb_run *r)
{
	uint64_t late = 0;

	for (int k = 0; k < SC_NEXMARK_KINDS; k++) {
		int in = sc_nexmark_query_input(r->q, k);
		uint64_t n = 0;

		if (in >= 0 && sc_circuit_late(r->c, in, &n, NULL) == 0)
			late += n;
	}
	return late;
}

static void
lb_child(int fd, const struct lb_opts *o, const char *query, enum lb_mode mode)
{
	struct lb_run r;
	uint64_t last = o->points[o->npoints - 1], made = 0;
	size_t next = 0;

	memset(&r, 0, sizeof(r));
	if (mode == LB_KEPT && o->kept_events < last)
		last = o->kept_events;
	if (lb_open(&r, o, query, mode) != 0) {
		struct lb_point p = {.failed = 1};

		(void)fprintf(stderr, "bench_lateness: %s %s: %s\n", query,
			      mode_names[mode], sc_errmsg());
		lb_send(fd, &p);
		_exit(1);
	}
	while (made < last) {
		struct lb_point p;
		size_t n = o->chunk;

		if (n > o->points[next] - made)
			n = (size_t)(o->points[next] - made);
		memset(&p, 0, sizeof(p));
		if (lb_chunk(&r, n) != 0) {
			(void)fprintf(stderr,
				      "bench_lateness: %s %s at %llu: %s\n",
				      query, mode_names[mode],
				      (unsigned long long)made, sc_errmsg());
			p.failed = 1;
		}
		made += n;
		p.rss_mib = lb_rss_mib();
		p.capped = !p.failed && p.rss_mib > o->cap_mib;
		if (made < o->points[next] && !p.capped && !p.failed)
			continue;
		p.events = made;
		p.cpu_s = lb_cpu_s();
		lb_state(r.c, sc_nexmark_query_graph(r.q), &p);
		p.live = lb_live_count(&r.live, query);
		p.late = mode == LB_PLAIN ? 0 : lb_late(&r);
		if (o->nodes)
			lb_nodes(r.c, sc_nexmark_query_graph(r.q), query,
				 mode_names[mode], made);
		lb_send(fd, &p);
		if (p.capped || p.failed)
			break;
		next++;
	}
	/* No cleanup: the process ends, and freeing gigabytes of traces
	 * would only add to its time. */
	_exit(0);
}

/* --- the parent
 * ----------------------------------------------------------------
 */

/* Run one configuration in a child; its points into pts (returns how
 * many). */
static size_t
lb_spawn(const struct lb_opts *o, const char *query, enum lb_mode mode,
	 struct lb_point *pts)
{
	int fds[2], status = 0;
	size_t n = 0;
	pid_t pid;

	if (pipe(fds) != 0)
		sc_bench_fail("pipe");
	(void)fflush(stdout);
	if ((pid = fork()) < 0)
		sc_bench_fail("fork");
	if (pid == 0) {
		(void)close(fds[0]);
		lb_child(fds[1], o, query, mode);
	}
	(void)close(fds[1]);
	while (n < LB_MAX_POINTS &&
	       read(fds[0], &pts[n], sizeof(pts[n])) == (ssize_t)sizeof(pts[n]))
		n++;
	(void)close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		(void)fprintf(stderr,
			      "bench_lateness: %s %s: child status %d\n", query,
			      mode_names[mode], status);
	return n;
}

static const char *
lb_live_what(const char *query)
{
	return strcmp(query, "q4") ? "window" : "auction";
}

static void
lb_emit(const char *query, enum lb_mode mode, const struct lb_point *p,
	const struct lb_opts *o)
{
	double per = p->live ? (double)p->state_bytes / (double)p->live : 0;

	if (p->failed) {
		printf("{\"bench\": \"lateness\", \"query\": \"%s\", \"mode\": "
		       "\"%s\", \"failed\": true}\n",
		       query, mode_names[mode]);
		return;
	}
	printf("{\"bench\": \"lateness\", \"case\": \"%s %s peak RSS at %llu "
	       "events\", \"figure\": \"peak_rss\", \"unit\": \"MiB\", "
	       "\"better\": \"lower\", \"value\": %.1f, \"query\": \"%s\", "
	       "\"mode\": \"%s\", \"events\": %llu, \"disorder_ms\": %llu, "
	       "\"capped\": %s, \"cap_mib\": %.0f, \"late_rows\": %llu}\n",
	       query, mode_names[mode], (unsigned long long)p->events,
	       p->rss_mib, query, mode_names[mode],
	       (unsigned long long)p->events,
	       (unsigned long long)o->disorder_ms, p->capped ? "true" : "false",
	       o->cap_mib, (unsigned long long)p->late);
	printf("{\"bench\": \"lateness\", \"case\": \"%s %s state per live %s "
	       "at %llu events\", \"figure\": \"state\", \"unit\": "
	       "\"bytes\", \"better\": \"lower\", \"value\": %.0f, \"query\": "
	       "\"%s\", \"mode\": \"%s\", \"events\": %llu, \"state_bytes\": "
	       "%llu, \"state_rows\": %llu, \"live\": %llu}\n",
	       query, mode_names[mode], lb_live_what(query),
	       (unsigned long long)p->events, per, query, mode_names[mode],
	       (unsigned long long)p->events,
	       (unsigned long long)p->state_bytes,
	       (unsigned long long)p->state_rows, (unsigned long long)p->live);
}

static void
lb_emit_throughput(const char *query, enum lb_mode mode,
		   const struct lb_point *p, const struct lb_point *base)
{
	double v = p->cpu_s > 0 ? (double)p->events / p->cpu_s : 0;
	double bv =
	    base && base->cpu_s > 0 ? (double)base->events / base->cpu_s : 0;

	printf("{\"bench\": \"lateness\", \"case\": \"%s %s throughput at "
	       "%llu events\", \"figure\": \"throughput\", \"unit\": "
	       "\"events/CPU-s\", \"better\": \"higher\", \"value\": %.0f, "
	       "\"query\": \"%s\", \"mode\": \"%s\", \"events\": %llu, "
	       "\"cpu_s\": %.2f",
	       query, mode_names[mode], (unsigned long long)p->events, v, query,
	       mode_names[mode], (unsigned long long)p->events, p->cpu_s);
	if (bv > 0)
		printf(", \"baseline\": \"kept\", \"baseline_value\": %.0f, "
		       "\"ratio\": %.3f, \"target\": \"ratio >= 0.9\", "
		       "\"met\": %s",
		       bv, v / bv, v / bv >= 0.9 ? "true" : "false");
	printf("}\n");
}

static void
lb_query(const struct lb_opts *o, const char *query)
{
	struct lb_point pts[LB_MODES][LB_MAX_POINTS];
	size_t n[LB_MODES] = {0};

	/* kept before cleanup: the two throughput runs side by side. */
	static const enum lb_mode order[LB_MODES] = {LB_PLAIN, LB_KEPT,
						     LB_CLEANUP};

	for (int i = 0; i < LB_MODES; i++) {
		enum lb_mode m = order[i];

		if (!o->modes[m])
			continue;
		n[m] = lb_spawn(o, query, m, pts[m]);
		for (size_t j = 0; j < n[m]; j++)
			lb_emit(query, m, &pts[m][j], o);
	}
	for (int m = 0; m < LB_MODES; m++)
		for (size_t j = 0; j < n[m]; j++) {
			const struct lb_point *base = NULL;

			if (pts[m][j].failed || pts[m][j].capped)
				continue;
			for (size_t k = 0; m == LB_CLEANUP && k < n[LB_KEPT];
			     k++)
				if (pts[LB_KEPT][k].events ==
					pts[m][j].events &&
				    !pts[LB_KEPT][k].capped &&
				    !pts[LB_KEPT][k].failed)
					base = &pts[LB_KEPT][k];
			lb_emit_throughput(query, m, &pts[m][j], base);
		}
	(void)fflush(stdout);
}

/* --- arguments ---------------------------------------------------------------
 */

static void
lb_usage(const char *why)
{
	(void)fprintf(stderr,
		      "bench_lateness: %s\nusage: bench_lateness [--quick] "
		      "[--queries q4,q5,...] [--events N,N,...] "
		      "[--disorder MS] [--chunk N] [--cap-mib M] "
		      "[--kept-events N] [--modes plain,cleanup,kept] "
		      "[--nodes]\n",
		      why);
	exit(2); // NOLINT(concurrency-mt-unsafe): no thread exists
}

static uint64_t
lb_number(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || v == 0)
		lb_usage("a number >= 1 expected");
	return (uint64_t)v;
}

/* Split a comma list in place into at most max parts. */
static size_t
lb_split(char *s, char **parts, size_t max)
{
	size_t n = 0;
	char *save = NULL;

	for (char *t = strtok_r(s, ",", &save); t && n < max;
	     t = strtok_r(NULL, ",", &save))
		parts[n++] = t;
	return n;
}

static void
lb_defaults(struct lb_opts *o, bool quick)
{
	static const char *const q[] = {"q4", "q5", "q7", "q8"};

	memset(o, 0, sizeof(*o));
	for (size_t i = 0; i < 4; i++)
		o->queries[o->nqueries++] = q[i];
	o->points[0] = quick ? 100000 : 1000000;
	o->points[1] = quick ? 300000 : 10000000;
	o->points[2] = quick ? 1000000 : 50000000;
	o->npoints = 3;
	for (int m = 0; m < LB_MODES; m++)
		o->modes[m] = true;
	o->disorder_ms = 1000;
	o->chunk = 10000;
	o->cap_mib = 4096;
	o->kept_events = quick ? 300000 : 10000000;
}

static void
lb_args(int argc, char **argv, struct lb_opts *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		char *v = i + 1 < argc ? argv[i + 1] : NULL, *parts[8];
		size_t n;

		if (!strcmp(a, "--quick"))
			continue;
		if (!strcmp(a, "--nodes")) {
			o->nodes = true;
			continue;
		}
		if (!v)
			lb_usage("a flag without its value");
		i++;
		if (!strcmp(a, "--queries")) {
			o->nqueries = lb_split(v, parts, LB_MAX_QUERIES);
			for (size_t j = 0; j < o->nqueries; j++)
				o->queries[j] = parts[j];
		} else if (!strcmp(a, "--events")) {
			o->npoints = lb_split(v, parts, LB_MAX_POINTS);
			for (size_t j = 0; j < o->npoints; j++) {
				o->points[j] = lb_number(parts[j]);
				if (j && o->points[j] <= o->points[j - 1])
					lb_usage("--events must ascend");
			}
		} else if (!strcmp(a, "--modes")) {
			memset(o->modes, 0, sizeof(o->modes));
			n = lb_split(v, parts, 8);
			for (size_t j = 0; j < n; j++) {
				int m = 0;

				while (m < LB_MODES &&
				       strcmp(parts[j], mode_names[m]) != 0)
					m++;
				if (m == LB_MODES)
					lb_usage("modes: plain, cleanup, kept");
				o->modes[m] = true;
			}
		} else if (!strcmp(a, "--disorder")) {
			o->disorder_ms = strcmp(v, "0") ? lb_number(v) : 0;
		} else if (!strcmp(a, "--chunk")) {
			o->chunk = (size_t)lb_number(v);
		} else if (!strcmp(a, "--cap-mib")) {
			o->cap_mib = (double)lb_number(v);
		} else if (!strcmp(a, "--kept-events")) {
			o->kept_events = lb_number(v);
		} else {
			lb_usage("unknown flag");
		}
	}
	if (!o->nqueries || !o->npoints)
		lb_usage("no query or no checkpoint");
}

int
main(int argc, char **argv)
{
	struct lb_opts o;

	lb_defaults(&o, sc_bench_init(argc, argv));
	lb_args(argc, argv, &o);
	for (size_t i = 0; i < o.nqueries; i++)
		lb_query(&o, o.queries[i]);
	return 0;
}
