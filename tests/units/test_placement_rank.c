/*
 * test_placement_rank.c - the ranking `subcirc place` prints
 * (units/rank.h), on made-up samples: medians, min-max, ties where the
 * intervals overlap, paired ratios, and the words.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "units/rank.h"
#include "operators/error.h"

Test(placement_rank, summary_is_the_median_and_the_min_max)
{
	const double odd[5] = {5, 1, 4, 2, 3}, even[4] = {4, 1, 3, 2};
	struct sc_rank_summary s;

	cr_assert_eq(sc_rank_summarize(odd, 5, &s), 0);
	cr_assert_eq(s.median, 3);
	cr_assert_eq(s.lo, 1);
	cr_assert_eq(s.hi, 5);
	cr_assert_eq(sc_rank_summarize(even, 4, &s), 0);
	cr_assert_eq(s.median, 2.5);
	cr_assert_eq(sc_rank_summarize(odd, 0, &s), SC_EINVAL);
	cr_assert_eq(sc_rank_summarize(NULL, 5, &s), SC_EINVAL);
}

Test(placement_rank, ties_are_called_when_intervals_overlap)
{
	/* b's best sample is above a's worst: overlapping, so a tie,
	 * though a's median is clearly higher. */
	const double a[3] = {100, 110, 120}, b[3] = {80, 90, 101};
	const double c[3] = {10, 11, 12};
	struct sc_rank_case cs[3] = {{"b", b, 3}, {"c", c, 3}, {"a", a, 3}};
	struct sc_rank_entry r[3];

	cr_assert_eq(sc_rank_order(cs, 3, r), 0);
	cr_assert_str_eq(cs[r[0].index].name, "a");
	cr_assert_str_eq(cs[r[1].index].name, "b");
	cr_assert_str_eq(cs[r[2].index].name, "c");
	cr_assert_not(r[0].tie, "the first is never a tie");
	cr_assert(r[1].tie, "a and b overlap at 100..101");
	cr_assert_not(r[2].tie, "b and c are far apart");
}

Test(placement_rank, touching_intervals_tie_and_disjoint_ones_do_not)
{
	struct sc_rank_summary x = {.median = 5, .lo = 4, .hi = 6};
	struct sc_rank_summary y = {.median = 7, .lo = 6, .hi = 8};
	struct sc_rank_summary z = {.median = 9, .lo = 8.01, .hi = 10};

	cr_assert(sc_rank_overlap(&x, &y));
	cr_assert(sc_rank_overlap(&y, &x));
	cr_assert_not(sc_rank_overlap(&x, &z));
	cr_assert_not(sc_rank_overlap(&z, &y));
}

Test(placement_rank, paired_ratio_is_the_median_of_per_round_ratios)
{
	/* Round ratios 2.0, 2.2, 1.8: median 2.0, +- 0.2. */
	const double a[3] = {20, 22, 9}, b[3] = {10, 10, 5};
	struct sc_rank_case ca = {"a", a, 3}, cb = {"b", b, 3};
	double ratio, pm;

	cr_assert_eq(sc_rank_ratio(&ca, &cb, &ratio, &pm), 0);
	cr_assert_float_eq(ratio, 2.0, 1e-12);
	cr_assert_float_eq(pm, 0.2, 1e-12);
}

Test(placement_rank, unpaired_ratio_is_the_ratio_of_medians)
{
	const double a[3] = {18, 20, 22}, b[2] = {9, 11};
	struct sc_rank_case ca = {"a", a, 3}, cb = {"b", b, 2};
	double ratio, pm;

	cr_assert_eq(sc_rank_ratio(&ca, &cb, &ratio, &pm), 0);
	cr_assert_float_eq(ratio, 2.0, 1e-12);
	cr_assert_float_eq(pm, (22.0 / 9 - 18.0 / 11) / 2, 1e-12);
}

Test(placement_rank, ratio_refuses_samples_that_are_not_positive)
{
	const double a[2] = {1, 0}, b[2] = {1, 1};
	struct sc_rank_case ca = {"a", a, 2}, cb = {"b", b, 2};
	double ratio = -1, pm = -1;

	cr_assert_eq(sc_rank_ratio(&cb, &ca, &ratio, &pm), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "'a' sample 1"), "%s", sc_errmsg());
	cr_assert_eq(ratio, -1, "nothing written on failure");
}

Test(placement_rank, words_say_faster_with_the_ratio_or_a_tie)
{
	const double a[3] = {2.6e6, 2.62e6, 2.64e6}, b[3] = {2e6, 2e6, 2e6};
	const double c[3] = {1.9e6, 1.95e6, 2.1e6};
	struct sc_rank_case cs[3] = {
	    {"single x2", b, 3}, {"chains x2", a, 3}, {"per-node x2", c, 3}};
	struct sc_rank_entry r[3];
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert_not_null(f);
	cr_assert_eq(sc_rank_order(cs, 3, r), 0);
	cr_assert_eq(sc_rank_fprint(f, cs, r, 3, "events/s"), 0);
	cr_assert_eq(fclose(f), 0);
	cr_assert(strstr(text, "1. chains x2: 2.62M events/s (2.60M-2.64M)\n"),
		  "%s", text);
	cr_assert(strstr(text, "2. single x2: 2.00M events/s (2.00M-2.00M): "
			       "chains x2 ran 1.31 +- 0.01 times faster\n"),
		  "%s", text);
	cr_assert(strstr(text, "3. per-node x2: 1.95M events/s (1.90M-2.10M): "
			       "a tie with single x2 (intervals overlap)\n"),
		  "%s", text);
	free(text);
}

/* The leader, what ties with it, and its ratio over the best case
 * outside its interval (not only over the case right below it). */
Test(placement_rank, decision_names_the_leader_its_ties_and_its_margin)
{
	const double a[3] = {100, 104, 108}, b[3] = {98, 100, 101};
	const double c[3] = {50, 52, 54}, d[3] = {10, 11, 12};
	struct sc_rank_case cs[4] = {
	    {"a", a, 3}, {"b", b, 3}, {"c", c, 3}, {"d", d, 3}};
	struct sc_rank_entry r[4];
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert_not_null(f);
	cr_assert_eq(sc_rank_order(cs, 4, r), 0);
	cr_assert_eq(sc_rank_fprint_decision(f, cs, r, 4), 0);
	cr_assert_eq(fclose(f), 0);
	cr_assert_str_eq(text, "decision: a leads; a tie with b; it ran 2.00 "
			       "+- 0.00 times faster than c and the 1 case "
			       "below it\n");
	free(text);
}

Test(placement_rank, decision_says_when_every_case_ties)
{
	const double a[2] = {10, 20}, b[2] = {12, 14};
	struct sc_rank_case cs[2] = {{"a", a, 2}, {"b", b, 2}};
	struct sc_rank_entry r[2];
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert_not_null(f);
	cr_assert_eq(sc_rank_order(cs, 2, r), 0);
	cr_assert_eq(sc_rank_fprint_decision(f, cs, r, 2), 0);
	cr_assert_eq(fclose(f), 0);
	cr_assert_str_eq(text, "decision: a leads; a tie with b; every case "
			       "ties with it\n");
	free(text);
}
