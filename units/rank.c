/*
 * rank.c - medians, min-max intervals, ties and ratios (rank.h).
 */
#include "units/rank.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "operators/error.h"

/* The samples sorted into a copy (n small: insertion sort). */
static double *
sorted_copy(const double *v, size_t n)
{
	double *s = malloc(n * sizeof(*s));

	if (!s)
		return NULL;
	memcpy(s, v, n * sizeof(*s));
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && s[j] < s[j - 1]; j--) {
			double t = s[j];

			s[j] = s[j - 1];
			s[j - 1] = t;
		}
	return s;
}

static double
median_sorted(const double *s, size_t n)
{
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

int
sc_rank_summarize(const double *v, size_t n, struct sc_rank_summary *out)
{
	double *s;

	if (!v || !out || n == 0)
		return sc__fail(SC_EINVAL, "sc_rank_summarize: %s",
				n ? "NULL" : "no samples");
	for (size_t i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return sc__fail(SC_EINVAL,
					"sc_rank_summarize: sample %zu is %g",
					i, v[i]);
	if (!(s = sorted_copy(v, n)))
		return sc__fail(SC_ENOMEM, "sc_rank_summarize: %zu samples", n);
	out->median = median_sorted(s, n);
	out->lo = s[0];
	out->hi = s[n - 1];
	free(s);
	return 0;
}

bool
sc_rank_overlap(const struct sc_rank_summary *a,
		const struct sc_rank_summary *b)
{
	return a && b && a->lo <= b->hi && b->lo <= a->hi;
}

static int
ratio_check(const struct sc_rank_case *c)
{
	if (!c || !c->v || c->n == 0)
		return sc__fail(SC_EINVAL, "sc_rank_ratio: an empty case");
	for (size_t i = 0; i < c->n; i++)
		if (!isfinite(c->v[i]) || !(c->v[i] > 0))
			return sc__fail(SC_EINVAL,
					"sc_rank_ratio: '%s' sample %zu is %g "
					"(want > 0)",
					c->name ? c->name : "?", i, c->v[i]);
	return 0;
}

/* Paired: the median of a_i / b_i, pm half their range. */
static int
ratio_paired(const struct sc_rank_case *a, const struct sc_rank_case *b,
	     double *ratio, double *pm)
{
	double *r = malloc(a->n * sizeof(*r)), *s;

	if (!r)
		return sc__fail(SC_ENOMEM, "sc_rank_ratio: %zu samples", a->n);
	for (size_t i = 0; i < a->n; i++)
		r[i] = a->v[i] / b->v[i];
	s = sorted_copy(r, a->n);
	free(r);
	if (!s)
		return sc__fail(SC_ENOMEM, "sc_rank_ratio: %zu samples", a->n);
	*ratio = median_sorted(s, a->n);
	*pm = (s[a->n - 1] - s[0]) / 2;
	free(s);
	return 0;
}

int
sc_rank_ratio(const struct sc_rank_case *a, const struct sc_rank_case *b,
	      double *ratio, double *pm)
{
	struct sc_rank_summary sa = {0, 0, 0}, sb = {0, 0, 0};
	int rc;

	if (!ratio || !pm)
		return sc__fail(SC_EINVAL, "sc_rank_ratio: NULL");
	if ((rc = ratio_check(a)) != 0 || (rc = ratio_check(b)) != 0)
		return rc;
	if (a->n == b->n)
		return ratio_paired(a, b, ratio, pm);
	if ((rc = sc_rank_summarize(a->v, a->n, &sa)) != 0 ||
	    (rc = sc_rank_summarize(b->v, b->n, &sb)) != 0)
		return rc;
	*ratio = sa.median / sb.median;
	*pm = (sa.hi / sb.lo - sa.lo / sb.hi) / 2;
	return 0;
}

int
sc_rank_order(const struct sc_rank_case *cases, size_t n,
	      struct sc_rank_entry *out)
{
	int rc;

	if (!cases || !out || n == 0)
		return sc__fail(SC_EINVAL, "sc_rank_order: %s",
				n ? "NULL" : "no cases");
	for (size_t i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		out[i].index = i;
		rc = sc_rank_summarize(cases[i].v, cases[i].n, &out[i].s);
		if (rc)
			return rc;
	}
	/* Stable insertion sort, best median first. */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i;
		     j > 0 && out[j].s.median > out[j - 1].s.median; j--) {
			struct sc_rank_entry t = out[j];

			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	for (size_t i = 1; i < n; i++) {
		out[i].tie = sc_rank_overlap(&out[i].s, &out[i - 1].s);
		rc = sc_rank_ratio(&cases[out[i - 1].index],
				   &cases[out[i].index], &out[i].ratio,
				   &out[i].pm);
		if (rc)
			return rc;
	}
	return 0;
}

void
sc_rank_si(double v, char *buf, size_t size)
{
	static const char *const sfx[] = {"", "k", "M", "G", "T"};
	size_t k = 0;

	if (!buf || size == 0)
		return;
	while (fabs(v) >= 1000.0 && k + 1 < sizeof(sfx) / sizeof(sfx[0])) {
		v /= 1000.0;
		k++;
	}
	(void)snprintf(buf, size, "%.*f%s",
		       fabs(v) >= 100  ? 0
		       : fabs(v) >= 10 ? 1
				       : 2,
		       v, sfx[k]);
}

int
sc_rank_fprint(FILE *f, const struct sc_rank_case *cases,
	       const struct sc_rank_entry *r, size_t n, const char *unit)
{
	if (!f || !cases || !r || !unit)
		return sc__fail(SC_EINVAL, "sc_rank_fprint: NULL");
	for (size_t i = 0; i < n; i++) {
		const char *name = cases[r[i].index].name;
		char m[32], lo[32], hi[32];

		sc_rank_si(r[i].s.median, m, sizeof(m));
		sc_rank_si(r[i].s.lo, lo, sizeof(lo));
		sc_rank_si(r[i].s.hi, hi, sizeof(hi));
		(void)fprintf(f, "%zu. %s: %s %s (%s-%s)", i + 1, name, m, unit,
			      lo, hi);
		if (i > 0 && r[i].tie)
			(void)fprintf(f, ": a tie with %s (intervals overlap)",
				      cases[r[i - 1].index].name);
		else if (i > 0)
			(void)fprintf(f, ": %s ran %.2f +- %.2f times faster",
				      cases[r[i - 1].index].name, r[i].ratio,
				      r[i].pm);
		(void)fputc('\n', f);
	}
	if (ferror(f))
		return sc__fail(SC_EIO, "sc_rank_fprint: a write failed");
	return 0;
}

int
sc_rank_fprint_decision(FILE *f, const struct sc_rank_case *cases,
			const struct sc_rank_entry *r, size_t n)
{
	size_t ties = 0, below = 0, first_below = n;
	double ratio = 0, pm = 0;
	int rc;

	if (!f || !cases || !r || n == 0)
		return sc__fail(SC_EINVAL, "sc_rank_fprint_decision: %s",
				n ? "NULL" : "no cases");
	(void)fprintf(f, "decision: %s leads", cases[r[0].index].name);
	for (size_t i = 1; i < n; i++) {
		if (!sc_rank_overlap(&r[i].s, &r[0].s)) {
			below++;
			first_below = first_below < i ? first_below : i;
			continue;
		}
		(void)fprintf(f, "%s%s", ties++ ? ", " : "; a tie with ",
			      cases[r[i].index].name);
	}
	if (first_below < n) {
		rc = sc_rank_ratio(&cases[r[0].index],
				   &cases[r[first_below].index], &ratio, &pm);
		if (rc)
			return rc;
		(void)fprintf(f, "; it ran %.2f +- %.2f times faster than %s",
			      ratio, pm, cases[r[first_below].index].name);
		if (below > 1)
			(void)fprintf(f, " and the %zu case%s below it",
				      below - 1, below > 2 ? "s" : "");
	} else if (n > 1) {
		(void)fprintf(f, "; every case ties with it");
	}
	(void)fputc('\n', f);
	if (ferror(f))
		return sc__fail(SC_EIO,
				"sc_rank_fprint_decision: a write failed");
	return 0;
}
