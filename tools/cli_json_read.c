/*
 * cli_json_read.c - a small strict JSON reader (RFC 8259) for the CLI's
 * own reports (cli.h): `place --replot` reads a saved --json back.
 *
 * Strict, because a report that does not parse as written is better
 * refused than half read: no comments, no trailing commas, no leading
 * zeros or '+', no control characters in strings, no duplicate keys,
 * nothing but whitespace after the value. Strings are unescaped to UTF-8
 * (\uXXXX surrogate pairs joined; a lone surrogate is refused). Numbers
 * are doubles (strtod on the checked text); other bytes pass through
 * unchecked (the CLI wrote them). Nesting is bounded, so a
 * hostile file cannot exhaust the stack.
 *
 * The tree is one allocation per value; cli_jv_free frees it all.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cli.h"

#define JSON_MAX_DEPTH 64 /* the messages below say 64 */

struct reader {
	const char *s, *end;
	const char *start;
	int depth;
	char *err;
	size_t errlen;
};

static bool
fail(struct reader *r, const char *why)
{
	if (r->err && r->errlen > 0)
		(void)snprintf(r->err, r->errlen, "at byte %zu: %s",
			       (size_t)(r->s - r->start), why);
	return false;
}

static void
skip_ws(struct reader *r)
{
	while (r->s < r->end && (*r->s == ' ' || *r->s == '\t' ||
				 *r->s == '\n' || *r->s == '\r'))
		r->s++;
}

static bool
literal(struct reader *r, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(r->end - r->s) < n || memcmp(r->s, word, n) != 0)
		return fail(r, "not a JSON value");
	r->s += n;
	return true;
}

static int
hex4(const char *p)
{
	int v = 0;

	for (int i = 0; i < 4; i++) {
		char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

static size_t
put_utf8(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* One \u escape at r->s (past the 'u'), a pair for a high surrogate,
 * as a code point in *cp. */
static bool
unicode_escape(struct reader *r, uint32_t *cp)
{
	int hi, lo;

	if (r->end - r->s < 4 || (hi = hex4(r->s)) < 0)
		return fail(r, "bad \\u escape");
	r->s += 4;
	if (hi >= 0xdc00 && hi <= 0xdfff)
		return fail(r, "a lone low surrogate");
	if (hi < 0xd800 || hi > 0xdbff) {
		*cp = (uint32_t)hi;
		return true;
	}
	if (r->end - r->s < 6 || r->s[0] != '\\' || r->s[1] != 'u' ||
	    (lo = hex4(r->s + 2)) < 0 || lo < 0xdc00 || lo > 0xdfff)
		return fail(r, "a high surrogate without its low one");
	r->s += 6;
	*cp =
	    0x10000 + (((uint32_t)hi - 0xd800) << 10) + ((uint32_t)lo - 0xdc00);
	return true;
}

/* A string at r->s (its opening quote) into *out (malloc'd, NUL ended;
 * an embedded \u0000 is refused, so the C string is the whole value). */
static bool
read_string(struct reader *r, char **out)
{
	/* Unescaping never lengthens: the text's length bounds the output. */
	const char *q = ++r->s;
	char *o, *buf;

	while (q < r->end && *q != '"')
		q += (*q == '\\' && q + 1 < r->end) ? 2 : 1;
	if (q >= r->end)
		return fail(r, "a string without its closing quote");
	if (!(buf = malloc((size_t)(q - r->s) + 1)))
		return fail(r, "out of memory");
	o = buf;
	while (*r->s != '"') {
		unsigned char c = (unsigned char)*r->s;
		uint32_t cp = 0;

		if (c < 0x20) {
			free(buf);
			return fail(r, "a control character in a string");
		}
		if (c != '\\') {
			*o++ = (char)c;
			r->s++;
			continue;
		}
		r->s++;
		switch (*r->s++) {
		case '"':
			*o++ = '"';
			break;
		case '\\':
			*o++ = '\\';
			break;
		case '/':
			*o++ = '/';
			break;
		case 'b':
			*o++ = '\b';
			break;
		case 'f':
			*o++ = '\f';
			break;
		case 'n':
			*o++ = '\n';
			break;
		case 'r':
			*o++ = '\r';
			break;
		case 't':
			*o++ = '\t';
			break;
		case 'u':
			if (!unicode_escape(r, &cp)) {
				free(buf);
				return false;
			}
			if (cp == 0) {
				free(buf);
				return fail(r, "\\u0000 in a string");
			}
			o += put_utf8(o, cp);
			break;
		default:
			r->s--;
			free(buf);
			return fail(r, "bad escape in a string");
		}
	}
	r->s++;
	*o = '\0';
	*out = buf;
	return true;
}

static bool
digits(struct reader *r)
{
	const char *p = r->s;

	while (r->s < r->end && *r->s >= '0' && *r->s <= '9')
		r->s++;
	return r->s > p;
}

/* A number by the grammar: -? (0 | [1-9][0-9]*) (.[0-9]+)?
 * ([eE][+-]?[0-9]+)? */
static bool
read_number(struct reader *r, double *out)
{
	const char *p = r->s;
	char buf[64];

	if (*r->s == '-')
		r->s++;
	if (r->s < r->end && *r->s == '0')
		r->s++;
	else if (!digits(r))
		return fail(r, "not a JSON value");
	if (r->s < r->end && *r->s == '.') {
		r->s++;
		if (!digits(r))
			return fail(r, "a number without digits after '.'");
	}
	if (r->s < r->end && (*r->s == 'e' || *r->s == 'E')) {
		r->s++;
		if (r->s < r->end && (*r->s == '+' || *r->s == '-'))
			r->s++;
		if (!digits(r))
			return fail(r, "a number without exponent digits");
	}
	if ((size_t)(r->s - p) >= sizeof(buf))
		return fail(r, "a number longer than 63 characters");
	memcpy(buf, p, (size_t)(r->s - p));
	buf[r->s - p] = '\0';
	*out = strtod(buf, NULL);
	return true;
}

static bool read_value(struct reader *r, struct cli_jv *v);

/* Room for one more member or element (doubling). */
static bool
grow(struct reader *r, struct cli_jv *v, size_t *cap)
{
	size_t c = *cap ? 2 * *cap : 8;
	struct cli_jv *items;

	/* Room, and the arrays made (an object's keys beside its items). */
	if (v->n < *cap && v->items && (v->kind != CLI_JV_OBJ || v->keys))
		return true;
	if (!(items = realloc(v->items, c * sizeof(*items))))
		return fail(r, "out of memory");
	v->items = items;
	if (v->kind == CLI_JV_OBJ) {
		char **keys = realloc(v->keys, c * sizeof(*keys));

		if (!keys)
			return fail(r, "out of memory");
		v->keys = keys;
	}
	*cap = c;
	return true;
}

static bool
read_container(struct reader *r, struct cli_jv *v, char close)
{
	size_t cap = 0;

	if (++r->depth > JSON_MAX_DEPTH)
		return fail(r, "nested deeper than 64");
	v->kind = close == '}' ? CLI_JV_OBJ : CLI_JV_ARR;
	r->s++;
	skip_ws(r);
	if (r->s < r->end && *r->s == close) {
		r->s++;
		r->depth--;
		return true;
	}
	for (;;) {
		if (!grow(r, v, &cap) || !v->items ||
		    (v->kind == CLI_JV_OBJ && !v->keys))
			return false;
		memset(&v->items[v->n], 0, sizeof(v->items[0]));
		if (v->kind == CLI_JV_OBJ) {
			char *key = NULL;

			skip_ws(r);
			if (r->s >= r->end || *r->s != '"')
				return fail(r, "expected a key");
			if (!read_string(r, &key))
				return false;
			if (cli_jv_get(v, key)) {
				free(key);
				return fail(r, "a duplicate key");
			}
			v->keys[v->n] = key;
			skip_ws(r);
			if (r->s >= r->end || *r->s != ':') {
				v->n++;
				return fail(r, "expected ':'");
			}
			r->s++;
		}
		v->n++;
		if (!read_value(r, &v->items[v->n - 1]))
			return false;
		skip_ws(r);
		if (r->s < r->end && *r->s == ',') {
			r->s++;
			continue;
		}
		if (r->s < r->end && *r->s == close) {
			r->s++;
			r->depth--;
			return true;
		}
		return fail(r, close == '}' ? "expected ',' or '}'"
					    : "expected ',' or ']'");
	}
}

static bool
read_value(struct reader *r, struct cli_jv *v)
{
	skip_ws(r);
	if (r->s >= r->end)
		return fail(r, "the text ends before its value");
	switch (*r->s) {
	case '{':
		return read_container(r, v, '}');
	case '[':
		return read_container(r, v, ']');
	case '"':
		v->kind = CLI_JV_STR;
		return read_string(r, &v->str);
	case 't':
		v->kind = CLI_JV_BOOL;
		v->b = true;
		return literal(r, "true");
	case 'f':
		v->kind = CLI_JV_BOOL;
		return literal(r, "false");
	case 'n':
		v->kind = CLI_JV_NULL;
		return literal(r, "null");
	default:
		v->kind = CLI_JV_NUM;
		return read_number(r, &v->num);
	}
}

static void
jv_fini(struct cli_jv *v)
{
	for (size_t i = 0; i < v->n; i++) {
		jv_fini(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->str);
}

void
cli_jv_free(struct cli_jv *v)
{
	if (!v)
		return;
	jv_fini(v);
	free(v);
}

int
cli_json_parse(const char *text, size_t len, struct cli_jv **out, char *err,
	       size_t errlen)
{
	struct reader r = {.s = text,
			   .end = text + len,
			   .start = text,
			   .err = err,
			   .errlen = errlen};
	struct cli_jv *v = calloc(1, sizeof(*v));

	if (err && errlen)
		err[0] = '\0';
	if (!v) {
		(void)fail(&r, "out of memory");
		return -1;
	}
	if (!read_value(&r, v)) {
		cli_jv_free(v);
		return -1;
	}
	skip_ws(&r);
	if (r.s != r.end) {
		(void)fail(&r, "text after the value");
		cli_jv_free(v);
		return -1;
	}
	*out = v;
	return 0;
}

const struct cli_jv *
cli_jv_get(const struct cli_jv *obj, const char *key)
{
	if (!obj || obj->kind != CLI_JV_OBJ)
		return NULL;
	for (size_t i = 0; i < obj->n; i++)
		if (obj->keys[i] && !strcmp(obj->keys[i], key))
			return &obj->items[i];
	return NULL;
}

const char *
cli_jv_str(const struct cli_jv *obj, const char *key)
{
	const struct cli_jv *v = cli_jv_get(obj, key);

	return v && v->kind == CLI_JV_STR ? v->str : NULL;
}

bool
cli_jv_num(const struct cli_jv *obj, const char *key, double *out)
{
	const struct cli_jv *v = cli_jv_get(obj, key);

	if (!v || v->kind != CLI_JV_NUM)
		return false;
	*out = v->num;
	return true;
}
