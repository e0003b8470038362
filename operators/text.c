/*
 * text.c - functions over texts (text.h): PCRE2 for regular expressions.
 */
#include "operators/text.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sc_regex {
	pcre2_code *code;
	uint32_t groups;
};

/* PCRE2's error `err` of a call of `fn` as ours: SC_ENOMEM for its memory
 * limits, else SC_EINVAL with `what` and PCRE2's reason. */
static int
pcre2_fail(int err, const char *fn, const char *what)
{
	PCRE2_UCHAR why[128];

	if (err == PCRE2_ERROR_NOMEMORY || err == PCRE2_ERROR_HEAPLIMIT)
		return sc__fail(SC_ENOMEM, "%s: out of memory", fn);
	(void)pcre2_get_error_message(err, why, sizeof(why));
	return sc__fail(SC_EINVAL, "%s: %s%s", fn, what, (const char *)why);
}

int
sc_regex_create(const char *pattern, struct sc_regex **out)
{
	struct sc_regex *re;
	PCRE2_SIZE at = 0;
	int err = 0;

	if (!pattern || !out)
		return sc__fail(SC_EINVAL, "sc_regex_create: NULL %s",
				!pattern ? "pattern" : "out");
	if (!(re = calloc(1, sizeof(*re))))
		return sc__fail(SC_ENOMEM, "sc_regex_create: out of memory");
	re->code = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, 0,
				 &err, &at, NULL);
	if (!re->code) {
		char what[320];

		free(re);
		(void)snprintf(what, sizeof(what),
			       "pattern '%s' does not compile at offset %zu: ",
			       pattern, (size_t)at);
		return pcre2_fail(err, "sc_regex_create", what);
	}
	(void)pcre2_pattern_info(re->code, PCRE2_INFO_CAPTURECOUNT,
				 &re->groups);
	if (re->groups > SC_REGEX_MAX_GROUPS) {
		uint32_t n = re->groups;

		sc_regex_destroy(re);
		return sc__fail(SC_EINVAL,
				"sc_regex_create: pattern '%s' has %u groups, "
				"more than %d",
				pattern, (unsigned)n, SC_REGEX_MAX_GROUPS);
	}
	/* Machine code where the JIT exists; the interpreter otherwise
	 * (the same matches, slower). */
	(void)pcre2_jit_compile(re->code, PCRE2_JIT_COMPLETE);
	*out = re;
	return 0;
}

void
sc_regex_destroy(struct sc_regex *re)
{
	if (!re)
		return;
	pcre2_code_free(re->code);
	free(re);
}

uint32_t
sc_regex_groups(const struct sc_regex *re)
{
	return re ? re->groups : 0;
}

int
sc_regex_extract(const struct sc_regex *re, const char *text, size_t len,
		 uint32_t group, const char **start, size_t *glen)
{
	pcre2_match_data *md;
	PCRE2_SIZE *ov;
	int rc, found = 0;

	if (!re || (!text && len) || !start || !glen)
		return sc__fail(SC_EINVAL, "sc_regex_extract: NULL %s",
				!re	       ? "re"
				: !text && len ? "text"
				: !start       ? "start"
					       : "glen");
	if (group > re->groups)
		return sc__fail(SC_EINVAL,
				"sc_regex_extract: group %u, the expression "
				"has %u",
				(unsigned)group, (unsigned)re->groups);
	if (!(md = pcre2_match_data_create(re->groups + 1, NULL)))
		return sc__fail(SC_ENOMEM, "sc_regex_extract: out of memory");
	rc = pcre2_match(re->code, (PCRE2_SPTR)(text ? text : ""), len, 0, 0,
			 md, NULL);
	/* A group that took no part in the match is unset: no span. */
	if (rc >= 0) {
		ov = pcre2_get_ovector_pointer(md) + 2 * (size_t)group;
		if (ov[0] != PCRE2_UNSET) {
			*start = text + ov[0];
			*glen = (size_t)(ov[1] - ov[0]);
			found = 1;
		}
	}
	pcre2_match_data_free(md);
	if (rc < 0 && rc != PCRE2_ERROR_NOMATCH)
		return pcre2_fail(rc, "sc_regex_extract", "");
	return found;
}

int
sc_text_split_part(const char *text, size_t len, char sep, size_t index,
		   const char **part, size_t *plen)
{
	const char *p = text, *end = text + len, *at;

	if ((!text && len) || !part || !plen)
		return sc__fail(SC_EINVAL, "sc_text_split_part: NULL %s",
				!text && len ? "text"
				: !part	     ? "part"
					     : "plen");
	if (!text) {
		if (index)
			return 0;
		*part = "";
		*plen = 0;
		return 1;
	}
	/* memchr finds each separator a vector at a time. */
	for (; index > 0; index--) {
		if (!(at = memchr(p, sep, (size_t)(end - p))))
			return 0;
		p = at + 1;
	}
	at = memchr(p, sep, (size_t)(end - p));
	*part = p;
	*plen = (size_t)((at ? at : end) - p);
	return 1;
}
