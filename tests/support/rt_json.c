/* rt_json.c - see rt_json.h. */
#include "tests/support/rt_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cur {
	const char *start, *s, *end;
	char *err;
	size_t errlen;
	int depth;
};

static bool
fail(struct cur *c, const char *what)
{
	if (c->err && c->err[0] == 0)
		(void)snprintf(c->err, c->errlen, "%s at byte %td", what,
			       c->s - c->start);
	return false;
}

static void
ws(struct cur *c)
{
	while (c->s < c->end && (*c->s == ' ' || *c->s == '\t' ||
				 *c->s == '\n' || *c->s == '\r'))
		c->s++;
}

static bool value(struct cur *c, struct tj *v);

static bool
put_utf8(char **o, unsigned cp)
{
	char *p = *o;

	if (cp < 0x80) {
		*p++ = (char)cp;
	} else if (cp < 0x800) {
		*p++ = (char)(0xc0 | (cp >> 6));
		*p++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*p++ = (char)(0xe0 | (cp >> 12));
		*p++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*p++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*p++ = (char)(0xf0 | (cp >> 18));
		*p++ = (char)(0x80 | ((cp >> 12) & 0x3f));
		*p++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*p++ = (char)(0x80 | (cp & 0x3f));
	}
	*o = p;
	return true;
}

static bool
hex4(struct cur *c, unsigned *out)
{
	unsigned v = 0;

	if (c->end - c->s < 4)
		return fail(c, "short \\u escape");
	for (int i = 0; i < 4; i++) {
		char h = *c->s++;

		v <<= 4;
		if (h >= '0' && h <= '9')
			v |= (unsigned)(h - '0');
		else if (h >= 'a' && h <= 'f')
			v |= (unsigned)(h - 'a' + 10);
		else if (h >= 'A' && h <= 'F')
			v |= (unsigned)(h - 'A' + 10);
		else
			return fail(c, "bad hex digit");
	}
	*out = v;
	return true;
}

static bool
string(struct cur *c, char **out)
{
	char *buf, *o;

	if (c->s >= c->end || *c->s != '"')
		return fail(c, "expected a string");
	c->s++;
	{
		/* Decoded, a string is no longer than its text up to the
		 * closing quote (an escape never grows: \uXXXX is at most 4
		 * bytes of UTF-8, a pair 4 for 12). */
		const char *q = c->s;

		while (q < c->end && *q != '"')
			q += (*q == '\\' && q + 1 < c->end) ? 2 : 1;
		buf = malloc((size_t)(q - c->s) + 1);
	}
	if (!buf)
		return fail(c, "out of memory");
	o = buf;
	for (;;) {
		unsigned char ch;

		if (c->s >= c->end) {
			free(buf);
			return fail(c, "unterminated string");
		}
		ch = (unsigned char)*c->s++;
		if (ch == '"')
			break;
		if (ch < 0x20) {
			free(buf);
			return fail(c, "control byte in a string");
		}
		if (ch != '\\') {
			*o++ = (char)ch;
			continue;
		}
		if (c->s >= c->end) {
			free(buf);
			return fail(c, "unterminated escape");
		}
		ch = (unsigned char)*c->s++;
		switch (ch) {
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
		case 'u': {
			unsigned cp = 0;

			if (!hex4(c, &cp)) {
				free(buf);
				return false;
			}
			if (cp >= 0xd800 && cp < 0xdc00) {
				unsigned lo = 0;

				if (c->end - c->s < 2 || c->s[0] != '\\' ||
				    c->s[1] != 'u') {
					free(buf);
					return fail(c, "lone surrogate");
				}
				c->s += 2;
				if (!hex4(c, &lo) || lo < 0xdc00 ||
				    lo > 0xdfff) {
					free(buf);
					return fail(c, "bad surrogate pair");
				}
				cp = 0x10000 + ((cp - 0xd800) << 10) +
				     (lo - 0xdc00);
			}
			put_utf8(&o, cp);
			break;
		}
		default:
			free(buf);
			return fail(c, "unknown escape");
		}
	}
	*o = 0;
	*out = buf;
	return true;
}

static bool
number(struct cur *c, double *out)
{
	const char *p = c->s;
	char tmp[64];
	size_t n;

	if (p < c->end && *p == '-')
		p++;
	if (p >= c->end || *p < '0' || *p > '9')
		return fail(c, "expected a value");
	if (*p == '0')
		p++;
	else
		while (p < c->end && *p >= '0' && *p <= '9')
			p++;
	if (p < c->end && *p == '.') {
		p++;
		if (p >= c->end || *p < '0' || *p > '9')
			return fail(c, "digits expected after '.'");
		while (p < c->end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < c->end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < c->end && (*p == '+' || *p == '-'))
			p++;
		if (p >= c->end || *p < '0' || *p > '9')
			return fail(c, "digits expected in an exponent");
		while (p < c->end && *p >= '0' && *p <= '9')
			p++;
	}
	n = (size_t)(p - c->s);
	if (n >= sizeof(tmp))
		return fail(c, "number too long");
	memcpy(tmp, c->s, n);
	tmp[n] = 0;
	*out = strtod(tmp, NULL);
	c->s = p;
	return true;
}

static bool
word(struct cur *c, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(c->end - c->s) < n || memcmp(c->s, w, n) != 0)
		return fail(c, "expected a value");
	c->s += n;
	return true;
}

/* Room doubles at powers of two, so n pushes copy O(n) items. */
static bool
push(struct tj *v, struct tj *item, char *key)
{
	if ((v->n & (v->n - 1)) == 0) {
		size_t cap = v->n ? v->n * 2 : 1;
		struct tj *items = realloc(v->items, cap * sizeof(*items));

		if (!items)
			return false;
		v->items = items;
		if (v->kind == TJ_OBJ) {
			char **keys = realloc(v->keys, cap * sizeof(*keys));

			if (!keys)
				return false;
			v->keys = keys;
		}
	}
	if (v->kind == TJ_OBJ)
		v->keys[v->n] = key;
	v->items[v->n++] = *item;
	return true;
}

static bool
container(struct cur *c, struct tj *v, bool obj)
{
	char close = obj ? '}' : ']';

	if (++c->depth > 200)
		return fail(c, "nested too deep");
	v->kind = obj ? TJ_OBJ : TJ_ARR;
	c->s++;
	ws(c);
	if (c->s < c->end && *c->s == close) {
		c->s++;
		c->depth--;
		return true;
	}
	for (;;) {
		struct tj item = {0};
		char *key = NULL;

		ws(c);
		if (obj) {
			if (!string(c, &key))
				return false;
			ws(c);
			if (c->s >= c->end || *c->s != ':') {
				free(key);
				return fail(c, "expected ':'");
			}
			c->s++;
		}
		if (!value(c, &item) || !push(v, &item, key)) {
			free(key);
			tj_free(&item);
			return fail(c, "bad item");
		}
		ws(c);
		if (c->s < c->end && *c->s == ',') {
			c->s++;
			continue;
		}
		if (c->s < c->end && *c->s == close) {
			c->s++;
			c->depth--;
			return true;
		}
		return fail(c, obj ? "expected ',' or '}'"
				   : "expected ',' or ']'");
	}
}

static bool
value(struct cur *c, struct tj *v)
{
	ws(c);
	if (c->s >= c->end)
		return fail(c, "expected a value");
	switch (*c->s) {
	case '{':
		return container(c, v, true);
	case '[':
		return container(c, v, false);
	case '"':
		v->kind = TJ_STR;
		return string(c, &v->str);
	case 't':
		v->kind = TJ_BOOL;
		v->b = true;
		return word(c, "true");
	case 'f':
		v->kind = TJ_BOOL;
		return word(c, "false");
	case 'n':
		v->kind = TJ_NULL;
		return word(c, "null");
	default:
		v->kind = TJ_NUM;
		return number(c, &v->num);
	}
}

static void
free_inside(struct tj *v)
{
	for (size_t i = 0; i < v->n; i++) {
		free_inside(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->str);
}

void
tj_free(struct tj *v)
{
	if (!v)
		return;
	free_inside(v);
	memset(v, 0, sizeof(*v));
}

struct tj *
tj_parse(const char *text, size_t len, char *err, size_t errlen)
{
	struct cur c = {text, text, text + len, err, errlen, 0};
	struct tj *v = calloc(1, sizeof(*v));

	if (err && errlen)
		err[0] = 0;
	if (!v)
		return NULL;
	if (!value(&c, v)) {
		tj_free(v);
		free(v);
		return NULL;
	}
	ws(&c);
	if (c.s != c.end) {
		fail(&c, "text after the value");
		tj_free(v);
		free(v);
		return NULL;
	}
	return v;
}

const struct tj *
tj_get(const struct tj *o, const char *key)
{
	if (!o || o->kind != TJ_OBJ)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return &o->items[i];
	return NULL;
}

struct tj *
tj_parse_file(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0;
	struct tj *v;

	if (!f) {
		(void)snprintf(err, errlen, "cannot open %s", path);
		return NULL;
	}
	for (;;) {
		size_t got;

		if (n == cap) {
			char *b = realloc(buf, cap ? cap * 2 : 65536);

			if (!b) {
				free(buf);
				(void)fclose(f);
				(void)snprintf(err, errlen, "out of memory");
				return NULL;
			}
			buf = b;
			cap = cap ? cap * 2 : 65536;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	(void)fclose(f);
	v = tj_parse(buf, n, err, errlen);
	free(buf);
	return v;
}
