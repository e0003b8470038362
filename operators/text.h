/*
 * text.h - functions over texts for map and flat_map callbacks (graph.h):
 * regular expressions and splitting on a separator.
 *
 * A symbol column names a text in its table (symbol.h); a callback reads
 * it with sc_symtab_lookup, computes on the bytes with these functions,
 * and, when its output names a new text, interns it and hands the
 * reference to the step (sc_emit_own), so that the made text lives as
 * long as a row that names it. Nothing here allocates per call on the
 * success path but a match's scratch (below), and nothing keeps a pointer
 * into the text passed: results point into it.
 *
 * Regular expressions are PCRE2's (Debian's libpcre2-8), compiled once to
 * machine code by its JIT where the machine has one. Measured on Nexmark
 * q21's pattern `(&|^)channel_id=([^&]*)` over its urls: 72-75 ns a url
 * where glibc's POSIX regexec takes 1,636-1,754 (bench/bench_text.c;
 * bench/README.md, "Five more queries"). The syntax and the matching are
 * Perl's: the leftmost match, and of those the first alternative that matches
 * (POSIX takes the longest), which gives the same spans for patterns whose
 * alternatives cannot both match at one place. A compiled expression is
 * read-only: any number of threads may match with it at once; each match takes
 * its own scratch for the groups (a malloc and a free).
 */
#ifndef SC_TEXT_H
#define SC_TEXT_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stddef.h>
#include <stdint.h>

#include "operators/error.h"

struct sc_regex;

/* The most capture groups an expression may have. */
#define SC_REGEX_MAX_GROUPS 32

/*
 * sc_regex_create - compile `pattern` (NUL-terminated, PCRE2 syntax, UTF-8
 * not assumed: bytes match bytes). Returns:
 *   0            *out is the expression (sc_regex_destroy frees it)
 *   SC_EINVAL    NULL argument; a pattern that does not compile (the
 *                message gives PCRE2's reason and the offset); more
 *                than SC_REGEX_MAX_GROUPS groups
 *   SC_ENOMEM
 */
int sc_regex_create(const char *pattern, struct sc_regex **out);

/* sc_regex_destroy - free it. NULL is allowed. */
void sc_regex_destroy(struct sc_regex *re);

/* sc_regex_groups - how many capture groups it has (group 0, the whole
 * match, not counted); 0 for NULL. */
uint32_t sc_regex_groups(const struct sc_regex *re);

/*
 * sc_regex_extract - the span of group `group` (0: the whole match) in
 * the first match of re in text[0..len) (the text need not end in a NUL).
 * Writes *start (a pointer into text) and *glen. Returns:
 *   1            matched, and the group took part: *start, *glen written
 *   0            no match, or the group did not take part in the match
 *                (SQL's REGEXP_EXTRACT gives NULL)
 *   SC_EINVAL    NULL argument (text may be NULL only with len 0), group
 *                above sc_regex_groups, or PCRE2 gave up (its match limit:
 *                the message says so)
 *   SC_ENOMEM    the match's scratch could not be allocated
 * Thread safe.
 */
int sc_regex_extract(const struct sc_regex *re, const char *text, size_t len,
		     uint32_t group, const char **start, size_t *glen);

/*
 * sc_text_split_part - part `index` (from 0) of text[0..len) cut at every
 * byte `sep`: "a/b//c" has the parts "a", "b", "" and "c". Writes *part
 * (a pointer into text) and *plen. Returns 1, or 0 when the text has no
 * such part (index >= the number of separators + 1), or SC_EINVAL for a
 * NULL argument (text may be NULL only with len 0).
 */
int sc_text_split_part(const char *text, size_t len, char sep, size_t index,
		       const char **part, size_t *plen);

#ifdef __cplusplus
}
#endif

#endif /* SC_TEXT_H */
