/*
 * bench_xsum.c - the exact accumulator against a plain double sum.
 *
 * Data: data-like doubles (cents in [-1000.00, 100000.00], so every value
 * has a long binary fraction), the same input for subject and baseline.
 * Each figure is the median of REPS repetitions, in ns per operation, with
 * the baseline measured in the same run; ratio = ours / baseline, so 1.3
 * means 30% slower.
 *
 *  stream add         sc_xsum_add into one accumulator   vs  s += v
 *  stream add_array   sc_xsum_add_array over the input   vs  s += v
 *  stream add+retract add v[i], retract v[i-1]          vs  s += v; s -= w
 *  groups G add       acc[g[i]] add, g random in [0, G)  vs  sum[g[i]] += v
 *                     (a double array, 8 bytes a group; and a double in a
 *                     64-byte group record, the same footprint as ours;
 *                     and both with the caller prefetching 16 rows ahead)
 *  read               sc_xsum_read of a compact / grown accumulator
 *  mean               sc_xsum_mean of a compact accumulator
 *  bytes              per accumulator: data-like (compact) and worst case
 *
 * --quick shrinks the sizes for a smoke run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/harness.h"
#include "operators/xsum.h"

#define REPS 7

struct group_rec {
	double sum;   /* the baseline's accumulator */
	char pad[56]; /* the rest of a 64-byte group record */
};

static double *
make_values(size_t n, uint64_t seed)
{
	double *v = malloc(n * sizeof(*v));

	for (size_t i = 0; v && i < n; i++)
		v[i] = (double)((int64_t)(sc_splitmix_next(&seed) % 10100000) -
				100000) /
		       100.0;
	return v;
}

static uint32_t *
make_groups(size_t n, uint32_t groups, uint64_t seed)
{
	uint32_t *g = malloc(n * sizeof(*g));

	for (size_t i = 0; g && i < n; i++)
		g[i] = (uint32_t)(sc_splitmix_next(&seed) % groups);
	return g;
}

/* ---- streaming ----------------------------------------------------------- */

static double
time_stream_xsum(const double *v, size_t n)
{
	struct sc_xsum x;
	uint64_t t0;
	int rc = 0;

	sc_xsum_init(&x);
	t0 = sc_bench_now_ns();
	for (size_t i = 0; i < n; i++)
		rc |= sc_xsum_add(&x, v[i]);
	double ns = (double)(sc_bench_now_ns() - t0) / (double)n;
	if (rc)
		sc_bench_fail("stream add failed");
	sc_bench_keep(&x);
	sc_xsum_fini(&x);
	return ns;
}

static double
time_stream_double(const double *v, size_t n)
{
	volatile double sink;
	double s = 0;
	uint64_t t0 = sc_bench_now_ns();

	for (size_t i = 0; i < n; i++)
		s += v[i];
	double ns = (double)(sc_bench_now_ns() - t0) / (double)n;
	sink = s;
	(void)sink;
	return ns;
}

static double
time_stream_array(const double *v, size_t n)
{
	struct sc_xsum x;
	uint64_t t0;
	int rc;

	sc_xsum_init(&x);
	t0 = sc_bench_now_ns();
	rc = sc_xsum_add_array(&x, v, n, NULL);
	double ns = (double)(sc_bench_now_ns() - t0) / (double)n;
	if (rc)
		sc_bench_fail("stream add_array failed");
	sc_bench_keep(&x);
	sc_xsum_fini(&x);
	return ns;
}

/* Per operation: one add of v[i] and one retract of v[i - 1]. */
static double
time_churn_xsum(const double *v, size_t n)
{
	struct sc_xsum x;
	uint64_t t0;
	int rc = 0;

	sc_xsum_init(&x);
	t0 = sc_bench_now_ns();
	for (size_t i = 1; i < n; i++) {
		rc |= sc_xsum_add(&x, v[i]);
		rc |= sc_xsum_retract(&x, v[i - 1]);
	}
	double ns = (double)(sc_bench_now_ns() - t0) / (double)(2 * (n - 1));
	if (rc)
		sc_bench_fail("churn failed");
	sc_bench_keep(&x);
	sc_xsum_fini(&x);
	return ns;
}

static double
time_churn_double(const double *v, size_t n)
{
	volatile double sink;
	double s = 0;
	uint64_t t0 = sc_bench_now_ns();

	for (size_t i = 1; i < n; i++) {
		s += v[i];
		s -= v[i - 1];
	}
	double ns = (double)(sc_bench_now_ns() - t0) / (double)(2 * (n - 1));
	sink = s;
	(void)sink;
	return ns;
}

/* ---- per-group random access -------------------------------------------- */

static double
time_groups_xsum(struct sc_xsum *acc, const double *v, const uint32_t *g,
		 size_t n)
{
	uint64_t t0 = sc_bench_now_ns();
	int rc = 0;

	for (size_t i = 0; i < n; i++)
		rc |= sc_xsum_add(&acc[g[i]], v[i]);
	double ns = (double)(sc_bench_now_ns() - t0) / (double)n;
	if (rc)
		sc_bench_fail("group add failed");
	sc_bench_keep(acc);
	return ns;
}

/* The same, with the caller prefetching the group PF values ahead, as an
 * aggregate walking a batch can. */
#define PF 16

static double
time_groups_xsum_pf(struct sc_xsum *acc, const double *v, const uint32_t *g,
		    size_t n)
{
	uint64_t t0 = sc_bench_now_ns();
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		if (i + PF < n)
			sc_xsum_prefetch(&acc[g[i + PF]]);
		rc |= sc_xsum_add(&acc[g[i]], v[i]);
	}
	double ns = (double)(sc_bench_now_ns() - t0) / (double)n;
	if (rc)
		sc_bench_fail("group add failed");
	sc_bench_keep(acc);
	return ns;
}

static double
time_groups_record_pf(struct group_rec *rec, const double *v, const uint32_t *g,
		      size_t n)
{
	uint64_t t0 = sc_bench_now_ns();

	for (size_t i = 0; i < n; i++) {
		if (i + PF < n)
			__builtin_prefetch(&rec[g[i + PF]], 1);
		rec[g[i]].sum += v[i];
	}
	double ns = (double)(sc_bench_now_ns() - t0) / (double)n;
	sc_bench_keep(rec);
	return ns;
}

static double
time_groups_double(double *sum, const double *v, const uint32_t *g, size_t n)
{
	uint64_t t0 = sc_bench_now_ns();

	for (size_t i = 0; i < n; i++)
		sum[g[i]] += v[i];
	double ns = (double)(sc_bench_now_ns() - t0) / (double)n;
	sc_bench_keep(sum);
	return ns;
}

static double
time_groups_record(struct group_rec *rec, const double *v, const uint32_t *g,
		   size_t n)
{
	uint64_t t0 = sc_bench_now_ns();

	for (size_t i = 0; i < n; i++)
		rec[g[i]].sum += v[i];
	double ns = (double)(sc_bench_now_ns() - t0) / (double)n;
	sc_bench_keep(rec);
	return ns;
}

static void
bench_groups(uint32_t groups, const double *v, size_t n, uint64_t seed)
{
	double ours[REPS], dbl[REPS], recd[REPS], ourspf[REPS], recpf[REPS];
	struct sc_xsum *acc = aligned_alloc(64, groups * sizeof(*acc));
	double *sum = calloc(groups, sizeof(*sum));
	struct group_rec *rec = aligned_alloc(64, groups * sizeof(*rec));
	uint32_t *g = make_groups(n, groups, seed);
	char kase[64];

	if (!acc || !sum || !rec || !g)
		sc_bench_fail("out of memory");
	memset(rec, 0, groups * sizeof(*rec));
	for (uint32_t j = 0; j < groups; j++)
		sc_xsum_init(&acc[j]);
	/* one untimed pass each, so first-touch page faults are not timed */
	time_groups_xsum(acc, v, g, n);
	time_groups_double(sum, v, g, n);
	time_groups_record(rec, v, g, n);
	for (int r = 0; r < REPS; r++) {
		ours[r] = time_groups_xsum(acc, v, g, n);
		dbl[r] = time_groups_double(sum, v, g, n);
		recd[r] = time_groups_record(rec, v, g, n);
		ourspf[r] = time_groups_xsum_pf(acc, v, g, n);
		recpf[r] = time_groups_record_pf(rec, v, g, n);
	}
	(void)snprintf(kase, sizeof(kase), "groups %u add (random group)",
		       groups);
	double mo = sc_bench_median(ours, REPS);
	sc_bench_emit("xsum", kase, "ns/add", mo, "double[] rmw",
		      sc_bench_median(dbl, REPS));
	sc_bench_emit("xsum", kase, "ns/add", mo, "double in 64B record rmw",
		      sc_bench_median(recd, REPS));
	(void)snprintf(kase, sizeof(kase),
		       "groups %u add, caller prefetches %d ahead", groups, PF);
	sc_bench_emit("xsum", kase, "ns/add", sc_bench_median(ourspf, REPS),
		      "double in 64B record rmw, same prefetch",
		      sc_bench_median(recpf, REPS));
	for (uint32_t j = 0; j < groups; j++)
		sc_xsum_fini(&acc[j]);
	free(acc);
	free(sum);
	free(rec);
	free(g);
}

/* ---- reads ----------------------------------------------------------------
 */

/* ns per read over `m` accumulators kept in cache, read round robin. */
static double
time_reads(const struct sc_xsum *acc, int m, int rounds, bool mean)
{
	double out = 0, s = 0;
	uint64_t t0 = sc_bench_now_ns();

	for (int r = 0; r < rounds; r++) {
		for (int j = 0; j < m; j++) {
			if (mean)
				sc_xsum_mean(&acc[j], 1000 + j, &out);
			else
				sc_xsum_read(&acc[j], &out);
			s += out;
		}
	}
	double ns = (double)(sc_bench_now_ns() - t0) / ((double)m * rounds);
	sc_bench_keep(&s);
	return ns;
}

static void
bench_reads(const double *v, size_t n, int rounds)
{
	enum { M = 64 };
	struct sc_xsum compact[M], grown[M];
	double rc[REPS], rg[REPS], rm[REPS];

	for (int j = 0; j < M; j++) {
		sc_xsum_init(&compact[j]);
		sc_xsum_init(&grown[j]);
		for (size_t i = (size_t)j; i < n && i < (size_t)j + 1000; i++) {
			sc_xsum_add(&compact[j], v[i]);
			sc_xsum_add(&grown[j], v[i]);
		}
		/* far-apart magnitudes force the full-width form */
		if (sc_xsum_add(&grown[j], 1e300) ||
		    sc_xsum_add(&grown[j], 1e-300))
			sc_bench_fail("grow failed");
	}
	for (int r = 0; r < REPS; r++) {
		rc[r] = time_reads(compact, M, rounds, false);
		rg[r] = time_reads(grown, M, rounds / 4 + 1, false);
		rm[r] = time_reads(compact, M, rounds / 4 + 1, true);
	}
	sc_bench_emit("xsum", "read compact", "ns/read",
		      sc_bench_median(rc, REPS), NULL, 0);
	sc_bench_emit("xsum", "read grown", "ns/read",
		      sc_bench_median(rg, REPS), NULL, 0);
	sc_bench_emit("xsum", "mean compact", "ns/read",
		      sc_bench_median(rm, REPS), NULL, 0);
	sc_bench_emit("xsum", "bytes per accumulator, data-like (compact)",
		      "bytes", (double)sc_xsum_bytes(&compact[0]), "double",
		      (double)sizeof(double));
	sc_bench_emit("xsum", "bytes per accumulator, worst case (grown)",
		      "bytes", (double)sc_xsum_bytes(&grown[0]), "double",
		      (double)sizeof(double));
	for (int j = 0; j < M; j++) {
		sc_xsum_fini(&compact[j]);
		sc_xsum_fini(&grown[j]);
	}
}

int
main(int argc, char **argv)
{
	bool quick = sc_bench_init(argc, argv);
	size_t n = quick ? 200000 : 4000000;
	double *v = make_values(n, 42);
	double so[REPS], sd[REPS], sa[REPS], co[REPS], cd[REPS];

	if (!v)
		sc_bench_fail("out of memory");
	time_stream_xsum(v, n); /* warm up */
	for (int r = 0; r < REPS; r++) {
		so[r] = time_stream_xsum(v, n);
		sd[r] = time_stream_double(v, n);
		sa[r] = time_stream_array(v, n);
		co[r] = time_churn_xsum(v, n);
		cd[r] = time_churn_double(v, n);
	}
	sc_bench_emit("xsum", "stream add", "ns/add", sc_bench_median(so, REPS),
		      "double s += v", sc_bench_median(sd, REPS));
	sc_bench_emit("xsum", "stream add_array", "ns/add",
		      sc_bench_median(sa, REPS), "double s += v",
		      sc_bench_median(sd, REPS));
	sc_bench_emit("xsum", "stream add+retract", "ns/op",
		      sc_bench_median(co, REPS), "double s += v; s -= w",
		      sc_bench_median(cd, REPS));
	bench_groups(1000, v, n, 7);
	bench_groups(quick ? 10000 : 100000, v, n, 8);
	bench_reads(v, n, quick ? 200 : 2000);
	free(v);
	return 0;
}
