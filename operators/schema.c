/*
 * schema.c - schemas, typed values and row formatting (see schema.h).
 */
#include "operators/schema.h"

#include <inttypes.h>
#include <stdio.h>

#include "operators/symbol.h"

static bool
type_valid(enum sc_type t)
{
	/* Compare as unsigned so a negative value cast to the enum fails. */
	return (unsigned)t < (unsigned)SC__TYPE_COUNT;
}

int
sc_schema_init(struct sc_schema *s, uint32_t ncols, const enum sc_type *types,
	       struct sc_symtab *symbols)
{
	if (!s || !types)
		return sc__fail(SC_EINVAL, "sc_schema_init: %s is NULL",
				!s ? "schema" : "types");
	if (ncols == 0 || ncols > SC_SCHEMA_MAX_COLS)
		return sc__fail(SC_ESCHEMA,
				"sc_schema_init: %u columns, want 1..%d", ncols,
				SC_SCHEMA_MAX_COLS);
	for (uint32_t i = 0; i < ncols; i++)
		if (!type_valid(types[i]))
			return sc__fail(SC_ETYPE,
					"sc_schema_init: column %u has unknown "
					"type %d",
					i, (int)types[i]);
	memset(s, 0, sizeof(*s));
	s->ncols = ncols;
	memcpy(s->types, types, ncols * sizeof(types[0]));
	s->symbols = symbols;
	return 0;
}

bool
sc_schema_equal(const struct sc_schema *a, const struct sc_schema *b)
{
	if (!a || !b)
		return a == b;
	if (a->ncols != b->ncols)
		return false;
	for (uint32_t i = 0; i < a->ncols; i++)
		if (a->types[i] != b->types[i])
			return false;
	return true;
}

const char *
sc_type_name(enum sc_type t)
{
	static const char *const names[] = {"i64", "u64", "f64", "bool",
					    "symbol"};

	return type_valid(t) ? names[t] : "?";
}

int
sc_value_encode(const struct sc_value *v, uint64_t *out)
{
	if (!v || !out)
		return sc__fail(SC_EINVAL, "sc_value_encode: %s is NULL",
				!v ? "value" : "out");
	switch (v->type) {
	case SC_TYPE_I64:
		*out = sc_enc_i64(v->v.i64);
		return 0;
	case SC_TYPE_U64:
		*out = sc_enc_u64(v->v.u64);
		return 0;
	case SC_TYPE_F64:
		*out = sc_enc_f64(v->v.f64);
		return 0;
	case SC_TYPE_BOOL:
		*out = sc_enc_bool(v->v.b);
		return 0;
	case SC_TYPE_SYMBOL:
		*out = sc_enc_symbol(v->v.sym);
		return 0;
	default:
		return sc__fail(SC_ETYPE, "sc_value_encode: unknown type %d",
				(int)v->type);
	}
}

int
sc_value_decode(enum sc_type t, uint64_t w, struct sc_value *out)
{
	struct sc_value v = {.type = t};

	if (!out)
		return sc__fail(SC_EINVAL, "sc_value_decode: out is NULL");
	switch (t) {
	case SC_TYPE_I64:
		v.v.i64 = sc_dec_i64(w);
		break;
	case SC_TYPE_U64:
		v.v.u64 = sc_dec_u64(w);
		break;
	case SC_TYPE_F64:
		v.v.f64 = sc_dec_f64(w);
		break;
	case SC_TYPE_BOOL:
		if (w > 1)
			return sc__fail(SC_EINVAL,
					"sc_value_decode: bool word %" PRIu64
					" is not 0 or 1",
					w);
		v.v.b = w == 1;
		break;
	case SC_TYPE_SYMBOL:
		v.v.sym = sc_dec_symbol(w);
		break;
	default:
		return sc__fail(SC_ETYPE, "sc_value_decode: unknown type %d",
				(int)t);
	}
	*out = v;
	return 0;
}

int
sc_schema_encode_row(const struct sc_schema *s, const struct sc_value *vals,
		     size_t n, uint64_t *out)
{
	uint64_t tmp[SC_SCHEMA_MAX_COLS];
	int rc;

	if (!s || !vals || !out)
		return sc__fail(SC_EINVAL,
				"sc_schema_encode_row: an argument is NULL");
	if (n != s->ncols)
		return sc__fail(SC_ESCHEMA,
				"sc_schema_encode_row: row has %zu columns, "
				"schema has %u",
				n, s->ncols);
	for (size_t i = 0; i < n; i++) {
		if (vals[i].type != s->types[i])
			return sc__fail(SC_ESCHEMA,
					"sc_schema_encode_row: column %zu is "
					"%s, value is %s",
					i, sc_type_name(s->types[i]),
					sc_type_name(vals[i].type));
		rc = sc_value_encode(&vals[i], &tmp[i]);
		if (rc)
			return rc;
	}
	memcpy(out, tmp, n * sizeof(tmp[0]));
	return 0;
}

int
sc_schema_decode_row(const struct sc_schema *s, const uint64_t *row,
		     struct sc_value *out, size_t n)
{
	struct sc_value tmp[SC_SCHEMA_MAX_COLS];
	int rc;

	if (!s || !row || !out)
		return sc__fail(SC_EINVAL,
				"sc_schema_decode_row: an argument is NULL");
	if (n < s->ncols)
		return sc__fail(SC_ESCHEMA,
				"sc_schema_decode_row: room for %zu values, "
				"schema has %u columns",
				n, s->ncols);
	for (uint32_t i = 0; i < s->ncols; i++) {
		rc = sc_value_decode(s->types[i], row[i], &tmp[i]);
		if (rc)
			return rc;
	}
	memcpy(out, tmp, s->ncols * sizeof(tmp[0]));
	return 0;
}

/* snprintf that advances through buf and keeps counting past its end. */
static void
append(char **p, size_t *left, int *total, int n)
{
	if (n < 0)
		return;
	*total += n;
	if (*left == 0)
		return;
	if ((size_t)n >= *left) {
		*p += *left;
		*left = 0;
	} else {
		*p += n;
		*left -= (size_t)n;
	}
}

static int
format_word(const struct sc_schema *s, enum sc_type t, uint64_t w, char *buf,
	    size_t len)
{
	const char *text;

	switch (t) {
	case SC_TYPE_I64:
		return snprintf(buf, len, "%" PRId64, sc_dec_i64(w));
	case SC_TYPE_U64:
		return snprintf(buf, len, "%" PRIu64, w);
	case SC_TYPE_F64:
		return snprintf(buf, len, "%.17g", sc_dec_f64(w));
	case SC_TYPE_BOOL:
		return snprintf(buf, len, "%s",
				w == 0	 ? "false"
				: w == 1 ? "true"
					 : "bool?");
	case SC_TYPE_SYMBOL:
		if (s->symbols &&
		    sc_symtab_lookup(s->symbols, w, &text, NULL) == 0)
			return snprintf(buf, len, "'%s'", text);
		return snprintf(buf, len, "#%" PRIu64, w);
	default:
		return snprintf(buf, len, "0x%016" PRIx64, w);
	}
}

int
sc_schema_format_row(const struct sc_schema *s, const uint64_t *row, char *buf,
		     size_t len)
{
	char *p = buf;
	size_t left = buf ? len : 0;
	int total = 0;

	if (left)
		buf[0] = '\0';
	if (!s || !row)
		return 0;
	append(&p, &left, &total, snprintf(p, left, "("));
	for (uint32_t i = 0; i < s->ncols; i++) {
		if (i)
			append(&p, &left, &total, snprintf(p, left, ", "));
		append(&p, &left, &total,
		       format_word(s, s->types[i], row[i], p, left));
	}
	append(&p, &left, &total, snprintf(p, left, ")"));
	return total;
}
