/*
 * test_text.c - functions over texts (operators/text.h): regular
 * expressions against expected spans, table-driven; splitting against a
 * from-scratch reference on seeded random texts; bad arguments by name.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "operators/text.h"
#include "tests/support/prop.h"

struct rx_case {
	const char *pattern, *text;
	uint32_t group;
	int want;	  /* 1 match, 0 none */
	const char *span; /* the group's text when want is 1 */
};

Test(text, regex_extracts_the_group_of_the_first_match)
{
	static const struct rx_case cases[] = {
	    /* Nexmark q21's pattern */
	    {"(&|^)channel_id=([^&]*)",
	     "https://www.nexmark.com/abc/de/fgh/item.htm?query=1"
	     "&channel_id=1234",
	     2, 1, "1234"},
	    {"(&|^)channel_id=([^&]*)", "channel_id=7&x=1", 2, 1, "7"},
	    {"(&|^)channel_id=([^&]*)", "a=1&channel_id=&b=2", 2, 1, ""},
	    {"(&|^)channel_id=([^&]*)", "a=1&channel_id=5&channel_id=6", 2, 1,
	     "5"},
	    {"(&|^)channel_id=([^&]*)", "xchannel_id=5", 2, 0, NULL},
	    {"(&|^)channel_id=([^&]*)", "https://www.nexmark.com/a/b/c/", 2, 0,
	     NULL},
	    {"(&|^)channel_id=([^&]*)", "", 2, 0, NULL},
	    /* group 0 is the whole match */
	    {"b+", "abbbc", 0, 1, "bbb"},
	    /* a group that takes no part in the match */
	    {"(x)|(y)", "y", 1, 0, NULL},
	    {"(x)|(y)", "y", 2, 1, "y"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct rx_case *k = &cases[i];
		struct sc_regex *re = NULL;
		const char *start = NULL;
		size_t len = 0;
		int rc;

		cr_assert_eq(sc_regex_create(k->pattern, &re), 0, "%s",
			     sc_errmsg());
		rc = sc_regex_extract(re, k->text, strlen(k->text), k->group,
				      &start, &len);
		cr_assert_eq(rc, k->want, "case %zu /%s/ on '%s': %d", i,
			     k->pattern, k->text, rc);
		if (rc == 1) {
			cr_assert(start >= k->text &&
				      start + len <= k->text + strlen(k->text),
				  "case %zu: the span is not in the text", i);
			cr_assert_eq(len, strlen(k->span), "case %zu: %zu", i,
				     len);
			cr_assert(!memcmp(start, k->span, len),
				  "case %zu: '%.*s', want '%s'", i, (int)len,
				  start, k->span);
		}
		sc_regex_destroy(re);
	}
}

/* The text is text[0..len), not up to a NUL: a match past len is no
 * match, and one before it is found with len short of the NUL. */
Test(text, regex_reads_only_len_bytes)
{
	struct sc_regex *re = NULL;
	const char *start;
	size_t len;

	cr_assert_eq(sc_regex_create("id=([0-9]+)", &re), 0);
	cr_assert_eq(sc_regex_extract(re, "id=12345", 5, 1, &start, &len), 1);
	cr_assert_eq(len, 2);
	cr_assert_eq(sc_regex_extract(re, "xxid=1", 4, 1, &start, &len), 0);
	cr_assert_eq(sc_regex_extract(re, NULL, 0, 1, &start, &len), 0);
	cr_assert_eq(sc_regex_groups(re), 1);
	sc_regex_destroy(re);
}

/* Each refusal: its code and a message naming what was wrong. */
Test(text, bad_arguments_are_refused_by_name)
{
	struct sc_regex *re = NULL, *bad = NULL;
	const char *start;
	size_t len;
	char many[4 * (SC_REGEX_MAX_GROUPS + 1) + 1];

	cr_assert_eq(sc_regex_create("(a)", &re), 0);
	cr_assert_eq(sc_regex_create("a(b", &bad), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "'a(b'") &&
		      strstr(sc_errmsg(), "offset 3"),
		  "%s", sc_errmsg());
	cr_assert_null(bad);
	for (int i = 0; i <= SC_REGEX_MAX_GROUPS; i++)
		memcpy(many + 4 * (size_t)i, "(a)?", 4);
	many[sizeof(many) - 1] = '\0';
	cr_assert_eq(sc_regex_create(many, &bad), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "33 groups"), "%s", sc_errmsg());
	cr_assert_eq(sc_regex_create(NULL, &bad), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "NULL pattern"), "%s", sc_errmsg());
	cr_assert_eq(sc_regex_extract(re, "a", 1, 2, &start, &len), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "group 2, the expression has 1"), "%s",
		  sc_errmsg());
	cr_assert_eq(sc_regex_extract(re, NULL, 1, 0, &start, &len), SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "NULL text"), "%s", sc_errmsg());
	cr_assert_eq(sc_text_split_part(NULL, 2, '/', 0, &start, &len),
		     SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "sc_text_split_part: NULL text"), "%s",
		  sc_errmsg());
	cr_assert_eq(sc_regex_groups(NULL), 0);
	sc_regex_destroy(NULL);
	sc_regex_destroy(re);
}

/* Seeded random texts over {a, b, /}: every part of every text equals the
 * reference (the bytes between the index-th and the next separator), and
 * the part after the last is refused. */
Test(text, split_part_equals_a_scan_from_scratch)
{
	uint64_t seed = sc_prop_seed(41);
	struct sc_rng rng;

	sc_rng_seed(&rng, seed);
	for (int round = 0; round < 2000; round++) {
		char text[24];
		size_t n = (size_t)sc_rng_below(&rng, sizeof(text)), parts = 1;

		for (size_t i = 0; i < n; i++) {
			text[i] = "ab/"[sc_rng_below(&rng, 3)];
			parts += text[i] == '/';
		}
		for (size_t index = 0; index <= parts; index++) {
			const char *p = NULL;
			size_t len = 0, from = 0, k = 0, want_from = 0,
			       want_len = 0;
			int rc =
			    sc_text_split_part(text, n, '/', index, &p, &len);

			for (size_t i = 0; i <= n; i++)
				if (i == n || text[i] == '/') {
					if (k++ == index) {
						want_from = from;
						want_len = i - from;
					}
					from = i + 1;
				}
			SC_PROP_ASSERT(seed, "text",
				       "split_part_equals_a_scan_from_scratch",
				       rc == (index < parts) &&
					   (rc != 1 || (p == text + want_from &&
							len == want_len)),
				       "round %d, '%.*s' part %zu: %d, '%.*s'",
				       round, (int)n, text, index, rc,
				       rc == 1 ? (int)len : 0,
				       rc == 1 ? p : "");
		}
	}
}
