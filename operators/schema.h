/*
 * schema.h - column types, schemas and the order-preserving row encoding.
 *
 * Every row of a Z-set is fixed width: one u64 word per column. Each column
 * type has an encoding into a u64 that preserves its order, so that
 *
 *   - two rows compare by a plain word-by-word unsigned compare
 *     (sc_row_cmp), whatever their types;
 *   - rows hash as words (sc_row_hash);
 *   - sorting can be a radix sort over the bytes of the words, most
 *     significant first (see batch.c).
 *
 * The encodings:
 *
 *   i64     the two's complement bits with the sign bit flipped, so
 *           INT64_MIN -> 0 and INT64_MAX -> UINT64_MAX.
 *   u64     the value itself.
 *   f64     the standard total-order transform of IEEE 754 bits: a
 *           non-negative double gets its sign bit set, a negative one has
 *           all its bits inverted. Two adjustments make the encoding a
 *           function of the *value*: -0.0 is folded into +0.0 (they are
 *           equal as numbers, so they must be one row), and every NaN is
 *           mapped to one canonical quiet NaN, which sorts above +inf.
 *           Decoding therefore returns +0.0 for -0.0 and the canonical NaN
 *           for any NaN; every other double round-trips bit for bit
 *           (subnormals included).
 *   bool    0 or 1.
 *   symbol  the id of an interned string (see symbol.h). SYMBOLS COMPARE BY
 *           ID, NOT ALPHABETICALLY: any order, min or max over a symbol
 *           column is the order of ids, which is the order of first
 *           interning, not of the text.
 *
 * A schema is a small value (a count and a fixed array of types), kept in
 * caller storage (init/fini) and cheap to copy: it is needed only where rows
 * are built from typed values or printed, never on the hot paths, which see
 * only the column count.
 */
#ifndef SC_SCHEMA_H
#define SC_SCHEMA_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "operators/error.h"

struct sc_symtab; /* symbol.h */

/* The column types. Values outside [0, SC__TYPE_COUNT) are SC_ETYPE. */
enum sc_type {
	SC_TYPE_I64 = 0,
	SC_TYPE_U64 = 1,
	SC_TYPE_F64 = 2,
	SC_TYPE_BOOL = 3,
	SC_TYPE_SYMBOL = 4,
	SC__TYPE_COUNT = 5
};

/* The widest row a schema describes. Wide enough for Nexmark's bids and
 * persons; rows wider than this are a design smell for a fixed-width row. */
#define SC_SCHEMA_MAX_COLS 32

struct sc_schema {
	uint32_t ncols;				/* columns in a row, >= 1 */
	enum sc_type types[SC_SCHEMA_MAX_COLS]; /* type of column i < ncols */
	struct sc_symtab *symbols;		/* table that symbol ids index,
						 * used only to print; may be
						 * NULL (ids print as #id); not
						 * owned */
};

/*
 * One typed value, for building and reading rows by type. The member read
 * is the one `type` names; a symbol is its id.
 */
struct sc_value {
	enum sc_type type;
	union {
		int64_t i64;
		uint64_t u64;
		double f64;
		bool b;
		uint64_t sym;
	} v;
};

/*
 * sc_schema_init - fill *s with `ncols` columns of the given types.
 * `symbols` may be NULL. Returns 0, SC_EINVAL (s or types NULL),
 * SC_ESCHEMA (ncols 0 or above SC_SCHEMA_MAX_COLS) or SC_ETYPE (a type
 * outside enum sc_type); on failure *s is unchanged. No allocation, so
 * there is no fini: a schema is a plain value, copied and dropped freely.
 */
int sc_schema_init(struct sc_schema *s, uint32_t ncols,
		   const enum sc_type *types, struct sc_symtab *symbols);

/* sc_schema_equal - same column count and types (the symbol table is not
 * compared). */
bool sc_schema_equal(const struct sc_schema *a, const struct sc_schema *b);

/* sc_type_name - "i64", "u64", "f64", "bool", "symbol", or "?" for an
 * unknown type. Static string. */
const char *sc_type_name(enum sc_type t);

/* --- per-type encodings (inline: they are on hot paths) ---------------- */

#define SC_F64_CANONICAL_NAN_BITS 0x7ff8000000000000ULL

static inline uint64_t
sc_enc_i64(int64_t x)
{
	return (uint64_t)x ^ 0x8000000000000000ULL;
}

static inline int64_t
sc_dec_i64(uint64_t w)
{
	uint64_t u = w ^ 0x8000000000000000ULL;
	int64_t x;

	memcpy(&x, &u, sizeof(x)); /* defined conversion, no UB */
	return x;
}

static inline uint64_t
sc_enc_u64(uint64_t x)
{
	return x;
}

static inline uint64_t
sc_dec_u64(uint64_t w)
{
	return w;
}

static inline uint64_t
sc_enc_f64(double x)
{
	uint64_t u;

	if (x != x) /* every NaN is one value */
		u = SC_F64_CANONICAL_NAN_BITS;
	else if (x == 0.0) /* -0.0 == +0.0 */
		u = 0;
	else
		memcpy(&u, &x, sizeof(u));
	return (u & 0x8000000000000000ULL) ? ~u : u | 0x8000000000000000ULL;
}

static inline double
sc_dec_f64(uint64_t w)
{
	uint64_t u =
	    (w & 0x8000000000000000ULL) ? w & ~0x8000000000000000ULL : ~w;
	double x;

	memcpy(&x, &u, sizeof(x));
	return x;
}

static inline uint64_t
sc_enc_bool(bool b)
{
	return b ? 1u : 0u;
}

static inline bool
sc_dec_bool(uint64_t w)
{
	return w != 0;
}

static inline uint64_t
sc_enc_symbol(uint64_t id)
{
	return id;
}

static inline uint64_t
sc_dec_symbol(uint64_t w)
{
	return w;
}

/*
 * sc_value_encode - the word for one typed value. Returns 0 and writes *out,
 * or SC_EINVAL (NULL) / SC_ETYPE (unknown type).
 */
int sc_value_encode(const struct sc_value *v, uint64_t *out);

/*
 * sc_value_decode - the typed value of word `w` in a column of type `t`.
 * Returns 0 and writes *out, or SC_EINVAL / SC_ETYPE. A bool column word
 * other than 0 or 1 is SC_EINVAL (not a word our encoding produces).
 */
int sc_value_decode(enum sc_type t, uint64_t w, struct sc_value *out);

/*
 * sc_schema_encode_row - encode `n` typed values into the row `out`
 * (s->ncols words). Returns 0, SC_EINVAL (NULL), SC_ESCHEMA (n !=
 * s->ncols, or a value's type differs from its column's) or SC_ETYPE.
 * `out` is written only on success.
 */
int sc_schema_encode_row(const struct sc_schema *s, const struct sc_value *vals,
			 size_t n, uint64_t *out);

/*
 * sc_schema_decode_row - the typed values of `row` (s->ncols words) into
 * `out` (room for `n` >= s->ncols values). Errors as sc_value_decode, and
 * SC_ESCHEMA when n < s->ncols.
 */
int sc_schema_decode_row(const struct sc_schema *s, const uint64_t *row,
			 struct sc_value *out, size_t n);

/*
 * sc_schema_format_row - "(1, -2.5, true, 'abc')" into buf (NUL-terminated,
 * truncated to len). A symbol prints as its text when s->symbols knows the
 * id, else as #id. Returns the length the full text would have (as
 * snprintf). For messages and tests; not fast.
 */
int sc_schema_format_row(const struct sc_schema *s, const uint64_t *row,
			 char *buf, size_t len);

/* --- rows -------------------------------------------------------------- */

/*
 * sc_row_cmp - the order of rows: word by word, unsigned; -1, 0 or 1.
 * Agrees with the typed order of every column (symbols by id).
 */
static inline int
sc_row_cmp(const uint64_t *a, const uint64_t *b, size_t ncols)
{
	for (size_t i = 0; i < ncols; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

static inline bool
sc_row_eq(const uint64_t *a, const uint64_t *b, size_t ncols)
{
	for (size_t i = 0; i < ncols; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/*
 * sc_row_hash - a 64-bit hash of a row's words (for sharding and hash
 * tables). Equal rows hash equal; deterministic across runs and machines.
 */
static inline uint64_t
sc_row_hash(const uint64_t *row, size_t ncols)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ (uint64_t)ncols;

	for (size_t i = 0; i < ncols; i++) {
		h ^= row[i];
		h *= 0xbf58476d1ce4e5b9ULL;
		h ^= h >> 31;
	}
	h *= 0x94d049bb133111ebULL;
	return h ^ (h >> 29);
}

#ifdef __cplusplus
}
#endif

#endif /* SC_SCHEMA_H */
