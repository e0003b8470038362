/*
 * rank.h - ranking repeated measurements soundly: a median, a spread, and
 * ties where the spreads overlap, for the placement sweep (units/sweep.h),
 * `subcirc place` and the benchmarks.
 *
 * A case is a list of samples of one figure where higher is better
 * (events/s). Each case is summarised by its median and its spread, the
 * interval [min, max] of its samples: with 5 samples the chance that the
 * true median lies outside it is 2 x 0.5^5 = 6%, with 6 samples 3%, so
 * min-max is a distribution-free interval of about 95% for the median
 * without assuming normal noise (a loaded machine's noise is not).
 *
 * Two cases whose intervals overlap are a tie: no claim is made that one
 * is faster. Otherwise the faster ran `ratio` +- `pm` times faster: with
 * samples taken in rounds (sample i of every case in round i, so a noisy
 * moment hits all cases of a round alike), the ratio is the median of
 * the per-round ratios a_i / b_i and pm half their range; with unequal
 * sample counts, the ratio of the medians, and pm half the range of
 * ratios the two intervals allow.
 *
 * The ranking orders the cases by median, best first, and compares each
 * with the one above it. Everything is on the caller's storage; any
 * thread.
 */
#ifndef SC_UNITS_RANK_H
#define SC_UNITS_RANK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* One case: a name and n >= 1 samples (higher is better). */
struct sc_rank_case {
	const char *name;
	const double *v;
	size_t n;
};

/* A case's median and its interval [lo, hi] = [min, max]. */
struct sc_rank_summary {
	double median;
	double lo, hi;
};

/* One place of a ranking. */
struct sc_rank_entry {
	size_t index; /* of the case, in the caller's array */
	struct sc_rank_summary s;
	bool tie;     /* its interval overlaps the one above it (never for
			 the first) */
	double ratio; /* the one above ran ratio +- pm times faster (0 for
			 the first) */
	double pm;
};

/*
 * sc_rank_summarize - median and min-max of v[0..n) into *out. Returns
 *   0          *out;
 *   SC_EINVAL  NULL, n = 0, or a sample that is not finite.
 */
int sc_rank_summarize(const double *v, size_t n, struct sc_rank_summary *out);

/* Whether the intervals of a and b overlap (share at least a point);
 * false when either is NULL. */
bool sc_rank_overlap(const struct sc_rank_summary *a,
		     const struct sc_rank_summary *b);

/*
 * sc_rank_ratio - how many times faster a ran than b, +- pm (see the top).
 * Returns 0 and *ratio, *pm; SC_EINVAL (NULL, an empty case, a sample
 * that is not finite or not > 0).
 */
int sc_rank_ratio(const struct sc_rank_case *a, const struct sc_rank_case *b,
		  double *ratio, double *pm);

/*
 * sc_rank_order - rank cases[0..n) into out[0..n), best median first
 * (equal medians: the earlier case first). Returns 0; SC_EINVAL (NULL,
 * n = 0, a case sc_rank_summarize or sc_rank_ratio refuses).
 */
int sc_rank_order(const struct sc_rank_case *cases, size_t n,
		  struct sc_rank_entry *out);

/*
 * sc_rank_fprint - the ranking r[0..n) of cases in words, one line each:
 *   "1. chains x2: 4.10M (3.98M-4.21M)"
 *   "2. single x2: 3.13M (...): chains x2 ran 1.31 +- 0.04 times faster"
 *   "3. per-node x2: 3.11M (...): a tie with single x2 (intervals overlap)"
 * `unit` follows each median ("events/s"). Returns 0, SC_EINVAL (NULL),
 * SC_EIO (a write failed).
 */
int sc_rank_fprint(FILE *f, const struct sc_rank_case *cases,
		   const struct sc_rank_entry *r, size_t n, const char *unit);

/*
 * sc_rank_fprint_decision - one line on what the ranking r[0..n) lets a
 * user decide: the leader, the cases whose intervals overlap the
 * leader's (ties with it: no claim either way), and how many times
 * faster the leader ran than the best case outside its interval:
 *   "decision: chains x2 leads; a tie with single x2; it ran 1.31 +- 0.04
 *    times faster than per-node x2 and the 3 cases below it"
 * Returns as sc_rank_fprint.
 */
int sc_rank_fprint_decision(FILE *f, const struct sc_rank_case *cases,
			    const struct sc_rank_entry *r, size_t n);

/* A number in 3 significant figures with k/M/G ("4.10M"), into buf
 * (nothing written when buf is NULL or size 0). */
void sc_rank_si(double v, char *buf, size_t size);

#endif /* SC_UNITS_RANK_H */
