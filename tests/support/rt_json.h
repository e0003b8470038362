/*
 * rt_json.h - a small strict JSON reader for tests that check what the
 * runtime and the CLI write (traces, --json reports): it parses a whole
 * document into a tree (RFC 8259: objects, arrays, strings with escapes,
 * numbers, true/false/null; nothing after the value but whitespace) and
 * says where the first error is. Not for speed: tests only.
 */
#ifndef SC_TESTS_RT_JSON_H
#define SC_TESTS_RT_JSON_H

#include <stdbool.h>
#include <stddef.h>

enum tj_kind { TJ_NULL, TJ_BOOL, TJ_NUM, TJ_STR, TJ_ARR, TJ_OBJ };

struct tj {
	enum tj_kind kind;
	bool b;
	double num;
	char *str;	  /* TJ_STR: decoded (UTF-8), NUL-terminated */
	size_t n;	  /* TJ_ARR / TJ_OBJ: items */
	struct tj *items; /* their values */
	char **keys;	  /* TJ_OBJ: their keys */
};

/* Parse text[0..len); NULL on error, with err (if not NULL) set to a
 * message naming the byte offset. Free with tj_free. */
struct tj *tj_parse(const char *text, size_t len, char *err, size_t errlen);
void tj_free(struct tj *v);

/* The value of key in object o, or NULL (also when o is not an object). */
const struct tj *tj_get(const struct tj *o, const char *key);

/* Read a whole file and parse it; NULL on error (err says why). */
struct tj *tj_parse_file(const char *path, char *err, size_t errlen);

#endif /* SC_TESTS_RT_JSON_H */
