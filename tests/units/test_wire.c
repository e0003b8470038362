/*
 * test_wire.c - the wire form of a frame (units/wire.h): a round trip of
 * random batches of every column type is the same Z-set, symbols cross
 * from one table to another by their text, f64 words keep every bit, the
 * receiver holds one reference per symbol, every malformed or truncated
 * buffer is refused by name, and the gap check refuses what is not next.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "operators/symbol.h"
#include "tests/support/zset_gen.h"
#include "units/wire.h"

#define SUITE "wire"
#define NSYMS 40

/* The sender's table holds texts s0..s39; the receiver's is seeded with
 * other texts first, so the same text has another id there. */
struct two_tables {
	struct sc_symtab *tx, *rx;
	uint64_t ids[NSYMS]; /* sender ids of s0..s39 */
};

static void
tables_init(struct two_tables *t)
{
	char text[32];
	uint64_t id;

	cr_assert_eq(sc_symtab_create(&t->tx), 0);
	cr_assert_eq(sc_symtab_create(&t->rx), 0);
	for (int i = 0; i < 7; i++) {
		(void)snprintf(text, sizeof(text), "other%d", i);
		cr_assert_eq(sc_symtab_intern_cstr(t->rx, text, &id), 0);
	}
	for (int i = 0; i < NSYMS; i++) {
		/* One text with a NUL inside, one empty: bytes, not C strings.
		 */
		size_t len = (size_t)snprintf(text, sizeof(text), "s%d", i);

		if (i == 3)
			text[1] = 0;
		if (i == 4)
			len = 0;
		cr_assert_eq(sc_symtab_intern(t->tx, text, len, &t->ids[i]), 0);
	}
}

static void
tables_fini(struct two_tables *t)
{
	sc_symtab_destroy(t->tx);
	sc_symtab_destroy(t->rx);
}

/* A random word for a column of type t: any bits for f64 (so -0.0, NaN
 * payloads and words the schema encoding never makes), any word for the
 * integers, 0/1 for bool, a sender id (or none) for symbols. */
static uint64_t
random_word(struct sc_rng *r, enum sc_type t, const struct two_tables *tt)
{
	static const uint64_t f64_specials[] = {
	    0x7fffffffffffffffULL, /* sc_dec_f64: -0.0 */
	    0x8000000000000000ULL, /* +0.0 */
	    0x0007ffffffffffffULL, /* a negative NaN with a payload */
	    0xfff0000000000001ULL, /* a signalling NaN's word */
	};

	switch (t) {
	case SC_TYPE_F64:
		if (sc_rng_below(r, 3) == 0)
			return f64_specials[sc_rng_below(r, 4)];
		return sc_rng_next(r);
	case SC_TYPE_BOOL:
		return sc_rng_below(r, 2);
	case SC_TYPE_SYMBOL:
		if (sc_rng_below(r, 10) == 0)
			return SC_SYMBOL_NONE;
		return tt->ids[sc_rng_below(r, NSYMS)];
	default:
		return sc_rng_below(r, 2) ? sc_rng_below(r, 8) : sc_rng_next(r);
	}
}

static struct sc_batch *
random_batch(struct sc_rng *r, const struct sc_schema *s, size_t maxrows,
	     const struct two_tables *tt)
{
	struct sc_batch_builder b;
	struct sc_batch *out;
	uint64_t row[SC_SCHEMA_MAX_COLS];
	size_t n = sc_rng_below(r, maxrows + 1);

	cr_assert_eq(sc_batch_builder_init(&b, s->ncols), 0);
	for (size_t i = 0; i < n; i++) {
		int64_t w = sc_rng_below(r, 4) ? sc_rng_range(r, -3, 3)
					       : (int64_t)sc_rng_next(r);

		for (uint32_t c = 0; c < s->ncols; c++)
			row[c] = random_word(r, s->types[c], tt);
		cr_assert_eq(sc_batch_builder_push(&b, row, s->ncols, w), 0);
	}
	/* Random int64 weights may sum past int64: draw again then. */
	if (sc_batch_builder_finish(&b, &out) != 0) {
		sc_batch_builder_fini(&b);
		return random_batch(r, s, maxrows, tt);
	}
	sc_batch_builder_fini(&b);
	return out;
}

/* b's rows with every symbol renamed from the sender's table to the
 * receiver's, by text: what the decoder must produce. */
static struct sc_batch *
renamed(const struct sc_batch *b, const struct sc_schema *s,
	const struct two_tables *tt)
{
	struct sc_batch_builder bb;
	struct sc_batch *out;
	uint64_t row[SC_SCHEMA_MAX_COLS];

	cr_assert_eq(sc_batch_builder_init(&bb, s->ncols), 0);
	for (size_t i = 0; i < sc_batch_count(b); i++) {
		memcpy(row, sc_batch_row(b, i), s->ncols * sizeof(*row));
		for (uint32_t c = 0; c < s->ncols; c++) {
			const char *text;
			size_t len;

			if (s->types[c] != SC_TYPE_SYMBOL || !row[c])
				continue;
			cr_assert_eq(
			    sc_symtab_lookup(tt->tx, row[c], &text, &len), 0);
			cr_assert_eq(sc_symtab_find(tt->rx, text, len, &row[c]),
				     0, "the receiver never interned a text");
		}
		cr_assert_eq(sc_batch_builder_push(&bb, row, s->ncols,
						   sc_batch_weight(b, i)),
			     0);
	}
	cr_assert_eq(sc_batch_builder_finish(&bb, &out), 0);
	sc_batch_builder_fini(&bb);
	return out;
}

static void
random_schema(struct sc_rng *r, struct sc_schema *s)
{
	enum sc_type t[SC_SCHEMA_MAX_COLS];
	uint32_t n = 1 + (uint32_t)sc_rng_below(r, 6);

	for (uint32_t i = 0; i < n; i++)
		t[i] = (enum sc_type)sc_rng_below(r, SC__TYPE_COUNT);
	cr_assert_eq(sc_schema_init(s, n, t, NULL), 0);
}

Test(wire, round_trip_of_every_type_across_two_symbol_tables)
{
	uint64_t base = sc_prop_seed(1501);
	struct two_tables tt;
	struct sc_wire_buf buf;
	struct sc_wire_rx rx;
	size_t types_seen[SC__TYPE_COUNT] = {0};

	tables_init(&tt);
	sc_wire_buf_init(&buf);
	cr_assert_eq(sc_wire_rx_init(&rx, tt.rx), 0);
	for (uint64_t c = 0; c < sc_prop_count(300); c++) {
		struct sc_rng r;
		struct sc_schema s;
		struct sc_wire_header h;
		struct sc_batch *b, *got, *want;
		uint64_t tick;

		sc_rng_seed(&r, base + c);
		random_schema(&r, &s);
		for (uint32_t i = 0; i < s.ncols; i++)
			types_seen[s.types[i]]++;
		b = random_batch(&r, &s, 1 + sc_rng_below(&r, 300), &tt);
		tick = sc_rng_below(&r, 2) ? sc_rng_next(&r) : 0;
		cr_assert_eq(sc_wire_encode(b, &s, tt.tx, 7, c + 1, tick, &buf),
			     0, "%s", sc_errmsg());
		cr_assert_eq(sc_wire_decode(buf.data, buf.len, &rx, &h, &got),
			     0, "%s", sc_errmsg());
		want = renamed(b, &s, &tt);
		SC_PROP_ASSERT(
		    base + c, SUITE,
		    "round_trip_of_every_type_across_two_symbol_"
		    "tables",
		    sc_batch_equal(got, want) && h.edge == 7 &&
			h.seq == c + 1 && h.tick == tick &&
			h.nrows == sc_batch_count(b) && h.ncols == s.ncols &&
			!memcmp(h.types, s.types, s.ncols * sizeof(s.types[0])),
		    "the decoded frame differs from the sent one");
		sc_batch_release(b);
		sc_batch_release(got);
		sc_batch_release(want);
	}
	for (int t = 0; t < SC__TYPE_COUNT; t++)
		cr_assert_gt(types_seen[t], 0, "type %d never drawn", t);
	sc_wire_rx_fini(&rx);
	sc_wire_buf_fini(&buf);
	tables_fini(&tt);
}

Test(wire, f64_words_keep_negative_zero_and_nan_payloads)
{
	static const uint64_t words[] = {
	    0x7fffffffffffffffULL, /* decodes to -0.0 */
	    0x0007fffffffffff0ULL, /* a NaN with a payload */
	    0xfff4000000000abcULL, /* another payload */
	    0x8000000000000000ULL,
	};
	enum sc_type t = SC_TYPE_F64;
	struct sc_schema s;
	struct sc_batch *b, *got;
	struct sc_wire_buf buf;
	struct sc_wire_rx rx;

	cr_assert_eq(sc_schema_init(&s, 1, &t, NULL), 0);
	cr_assert_eq(sc_batch_from_records(1, words, NULL, 4, &b), 0);
	sc_wire_buf_init(&buf);
	cr_assert_eq(sc_wire_rx_init(&rx, NULL), 0);
	cr_assert_eq(sc_wire_encode(b, &s, NULL, 1, 1, 0, &buf), 0);
	cr_assert_eq(sc_wire_decode(buf.data, buf.len, &rx, NULL, &got), 0);
	cr_assert_eq(sc_batch_count(got), 4);
	for (size_t i = 0; i < 4; i++) {
		double x = sc_dec_f64(sc_batch_row(b, i)[0]);
		double y = sc_dec_f64(sc_batch_row(got, i)[0]);
		uint64_t bx, by; /* the bits themselves: NaN != NaN */

		memcpy(&bx, &x, sizeof(bx));
		memcpy(&by, &y, sizeof(by));
		cr_assert_eq(bx, by, "row %zu: the double's bits changed", i);
	}
	cr_assert(signbit(sc_dec_f64(words[0])), "the -0.0 word is -0.0");
	sc_batch_release(b);
	sc_batch_release(got);
	sc_wire_rx_fini(&rx);
	sc_wire_buf_fini(&buf);
}

Test(wire, receiver_holds_one_reference_per_symbol_until_fini)
{
	struct two_tables tt;
	enum sc_type t = SC_TYPE_SYMBOL;
	struct sc_schema s;
	struct sc_batch *b, *got;
	struct sc_wire_buf buf;
	struct sc_wire_rx rx;
	uint64_t rid;

	tables_init(&tt);
	cr_assert_eq(sc_schema_init(&s, 1, &t, NULL), 0);
	cr_assert_eq(sc_batch_from_records(1, &tt.ids[10], NULL, 1, &b), 0);
	sc_wire_buf_init(&buf);
	cr_assert_eq(sc_wire_rx_init(&rx, tt.rx), 0);
	for (uint64_t seq = 1; seq <= 5; seq++) {
		cr_assert_eq(sc_wire_encode(b, &s, tt.tx, 0, seq, 0, &buf), 0);
		cr_assert_eq(sc_wire_decode(buf.data, buf.len, &rx, NULL, &got),
			     0);
		sc_batch_release(got);
	}
	cr_assert_eq(sc_symtab_find(tt.rx, "s10", 3, &rid), 0);
	cr_assert_eq(sc_symtab_refs(tt.rx, rid), 1,
		     "five arrivals of one text: one reference");
	cr_assert_eq(sc_symtab_refs(tt.tx, tt.ids[10]), 1,
		     "encoding takes no reference");
	sc_wire_rx_fini(&rx);
	cr_assert_eq(sc_symtab_refs(tt.rx, rid), 0, "fini releases it");
	sc_batch_release(b);
	sc_wire_buf_fini(&buf);
	tables_fini(&tt);
}

Test(wire, encode_refuses_a_dead_symbol_and_a_wrong_schema)
{
	enum sc_type t[2] = {SC_TYPE_SYMBOL, SC_TYPE_I64};
	uint64_t row[2] = {999, 1};
	struct sc_symtab *syms;
	struct sc_schema s, one;
	struct sc_batch *b;
	struct sc_wire_buf buf;

	cr_assert_eq(sc_symtab_create(&syms), 0);
	cr_assert_eq(sc_schema_init(&s, 2, t, NULL), 0);
	cr_assert_eq(sc_schema_init(&one, 1, t + 1, NULL), 0);
	cr_assert_eq(sc_batch_from_records(2, row, NULL, 1, &b), 0);
	sc_wire_buf_init(&buf);
	cr_assert_eq(sc_wire_encode(b, &s, syms, 0, 1, 0, &buf), SC_ENOENT);
	cr_assert(strstr(sc_errmsg(), "#999"), "%s", sc_errmsg());
	cr_assert_eq(sc_wire_encode(b, &s, NULL, 0, 1, 0, &buf), SC_EINVAL);
	cr_assert_eq(sc_wire_encode(b, &one, syms, 0, 1, 0, &buf), SC_ESCHEMA);
	cr_assert_eq(sc_wire_encode(b, &s, syms, 0, 0, 0, &buf), SC_EINVAL,
		     "sequence numbers start at 1");
	sc_batch_release(b);
	sc_wire_buf_fini(&buf);
	sc_symtab_destroy(syms);
}

/* A valid frame of two symbol rows and an i64 column, to break. */
static void
sample_frame(struct two_tables *tt, struct sc_wire_buf *buf)
{
	enum sc_type t[2] = {SC_TYPE_SYMBOL, SC_TYPE_I64};
	uint64_t rows[4] = {tt->ids[1], 5, tt->ids[2], 6};
	struct sc_schema s;
	struct sc_batch *b;

	cr_assert_eq(sc_schema_init(&s, 2, t, NULL), 0);
	cr_assert_eq(sc_batch_from_records(2, rows, NULL, 2, &b), 0);
	cr_assert_eq(sc_wire_encode(b, &s, tt->tx, 3, 1, 0, buf), 0);
	sc_batch_release(b);
}

static void
expect_refused(const uint8_t *p, size_t len, struct sc_wire_rx *rx,
	       const char *words)
{
	struct sc_batch *got = NULL;

	cr_assert_eq(sc_wire_decode(p, len, rx, NULL, &got), SC_EINVAL,
		     "accepted a frame with %s", words);
	cr_assert_null(got);
	cr_assert(strstr(sc_errmsg(), words), "'%s' lacks '%s'", sc_errmsg(),
		  words);
}

Test(wire, every_truncation_is_refused)
{
	struct two_tables tt;
	struct sc_wire_buf buf;
	struct sc_wire_rx rx;

	tables_init(&tt);
	sc_wire_buf_init(&buf);
	sample_frame(&tt, &buf);
	cr_assert_eq(sc_wire_rx_init(&rx, tt.rx), 0);
	for (size_t n = 0; n < buf.len; n++) {
		struct sc_batch *got = NULL;

		cr_assert_eq(sc_wire_decode(buf.data, n, &rx, NULL, &got),
			     SC_EINVAL, "a frame cut to %zu bytes", n);
		cr_assert_null(got);
		cr_assert(strstr(sc_errmsg(), "wire: "), "%s", sc_errmsg());
	}
	sc_wire_rx_fini(&rx);
	sc_wire_buf_fini(&buf);
	tables_fini(&tt);
}

Test(wire, malformed_fields_are_refused_by_name)
{
	struct two_tables tt;
	struct sc_wire_buf buf;
	struct sc_wire_rx rx;
	uint8_t *p;
	size_t rows0;

	tables_init(&tt);
	sc_wire_buf_init(&buf);
	sample_frame(&tt, &buf);
	cr_assert_eq(sc_wire_rx_init(&rx, tt.rx), 0);
	p = buf.data;
	/* The rows start after the header, 2 types and 2 texts "s1","s2". */
	rows0 = SC_WIRE_HEADER_BYTES + 2 + 2 * (4 + 2);
	cr_assert_eq(rows0 + (size_t)2 * 24, buf.len);

	p[0] ^= 1;
	expect_refused(p, buf.len, &rx, "magic");
	p[0] ^= 1;
	p[4] = 9;
	expect_refused(p, buf.len, &rx, "version");
	p[4] = 1;
	p[6] = 0;
	expect_refused(p, buf.len, &rx, "columns");
	p[6] = 2;
	p[SC_WIRE_HEADER_BYTES + 1] = 77;
	expect_refused(p, buf.len, &rx, "unknown type");
	p[SC_WIRE_HEADER_BYTES + 1] = SC_TYPE_I64;
	p[20] = 200; /* nsyms */
	expect_refused(p, buf.len, &rx, "symbols cannot fit");
	p[20] = 2;
	p[SC_WIRE_HEADER_BYTES + 2 + 6] = 100; /* the second text's length */
	expect_refused(p, buf.len, &rx, "past the frame's end");
	p[SC_WIRE_HEADER_BYTES + 2 + 6] = 2;
	p[40] = 3; /* nrows */
	expect_refused(p, buf.len, &rx, "do not fill");
	p[40] = 2;
	p[rows0] = 9; /* the first row's symbol index, of 2 */
	expect_refused(p, buf.len, &rx, "of a dictionary of 2");
	p[rows0] = 2; /* (s2, 7) before (s2, 6): out of order */
	p[rows0 + 8] = 7;
	expect_refused(p, buf.len, &rx, "row 1 is not after row 0");
	p[rows0] = 1;
	p[rows0 + 8] = 5;
	memset(p + rows0 + 16, 0, 8); /* the first weight */
	expect_refused(p, buf.len, &rx, "weight 0");
	p[rows0 + 16] = 1;
	{
		struct sc_batch *got;

		cr_assert_eq(sc_wire_decode(p, buf.len, &rx, NULL, &got), 0,
			     "restored, the frame decodes: %s", sc_errmsg());
		cr_assert_eq(sc_batch_count(got), 2);
		sc_batch_release(got);
	}
	sc_wire_rx_fini(&rx);
	sc_wire_buf_fini(&buf);
	tables_fini(&tt);
}

Test(wire, seq_check_refuses_gaps_and_duplicates)
{
	uint64_t next = 1;

	cr_assert_eq(sc_wire_seq_check(&next, 1, 4), 0);
	cr_assert_eq(sc_wire_seq_check(&next, 2, 4), 0);
	cr_assert_eq(next, 3);
	cr_assert_eq(sc_wire_seq_check(&next, 4, 4), SC_ESTATE);
	cr_assert(strstr(sc_errmsg(), "a gap"), "%s", sc_errmsg());
	cr_assert_eq(next, 3, "a refused frame does not advance");
	cr_assert_eq(sc_wire_seq_check(&next, 2, 4), SC_ESTATE);
	cr_assert(strstr(sc_errmsg(), "duplicate"), "%s", sc_errmsg());
	cr_assert_eq(sc_wire_seq_check(&next, 3, 4), 0);
}

/* A waterline message: every mask of a 3-column edge, values at the
 * ends of int64, back as they went, its header as peek reads it, and
 * byte for byte the same when encoded again. */
Test(wire, waterline_message_round_trips_every_mask_and_value)
{
	static const int64_t ends[3] = {INT64_MIN, -1, INT64_MAX};
	struct sc_wire_buf buf, again;

	sc_wire_buf_init(&buf);
	sc_wire_buf_init(&again);
	for (uint32_t mask = 1; mask < 8; mask++) {
		int64_t v[SC_SCHEMA_MAX_COLS] = {0}, got[SC_SCHEMA_MAX_COLS];
		struct sc_wire_header h;
		uint32_t m = 0;

		for (uint32_t c = 0; c < 3; c++)
			v[c] = mask >> c & 1 ? ends[(c + mask) % 3] : 0;
		cr_assert_eq(
		    sc_wire_encode_waterline(9, 5, 77, 3, mask, v, &buf), 0,
		    "%s", sc_errmsg());
		cr_assert_eq(sc_wire_peek(buf.data, buf.len, &h), 0, "%s",
			     sc_errmsg());
		cr_assert_eq(h.kind, SC_WIRE_WATERLINE);
		cr_assert(h.edge == 9 && h.seq == 5 && h.tick == 77 &&
			  h.ncols == 3 && h.mask == mask && h.nrows == 0);
		cr_assert_eq(
		    sc_wire_decode_waterline(buf.data, buf.len, NULL, &m, got),
		    0, "%s", sc_errmsg());
		cr_assert_eq(m, mask);
		for (uint32_t c = 0; c < SC_SCHEMA_MAX_COLS; c++)
			cr_assert_eq(got[c], v[c], "mask %u column %u", mask,
				     c);
		cr_assert_eq(
		    sc_wire_encode_waterline(9, 5, 77, 3, m, got, &again), 0);
		cr_assert(again.len == buf.len &&
			  !memcmp(again.data, buf.data, buf.len));
	}
	sc_wire_buf_fini(&again);
	sc_wire_buf_fini(&buf);
}

/* Each kind's decoder refuses the other kind, and a waterline message
 * with a bad field is refused by name (every truncation too). */
Test(wire, waterline_message_is_decoded_strictly)
{
	int64_t v[SC_SCHEMA_MAX_COLS] = {4, 5}, got[SC_SCHEMA_MAX_COLS];
	struct two_tables tt;
	struct sc_wire_buf buf, fr;
	struct sc_wire_rx rx;
	struct sc_batch *b = NULL;
	uint8_t *p;
	uint32_t m;

	tables_init(&tt);
	sc_wire_buf_init(&buf);
	sc_wire_buf_init(&fr);
	cr_assert_eq(sc_wire_rx_init(&rx, tt.rx), 0);
	cr_assert_eq(sc_wire_encode_waterline(1, 1, 0, 2, 3, v, &buf), 0);
	cr_assert_eq(sc_wire_decode(buf.data, buf.len, &rx, NULL, &b),
		     SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "a waterline message, not a frame"), "%s",
		  sc_errmsg());
	cr_assert_null(b);
	{
		uint64_t w[2] = {sc_enc_i64(1), sc_enc_i64(2)};
		enum sc_type t[2] = {SC_TYPE_I64, SC_TYPE_I64};
		struct sc_schema s;

		cr_assert_eq(sc_schema_init(&s, 2, t, NULL), 0);
		cr_assert_eq(sc_batch_from_records(2, w, NULL, 1, &b), 0);
		cr_assert_eq(sc_wire_encode(b, &s, NULL, 1, 1, 0, &fr), 0);
		sc_batch_release(b);
	}
	cr_assert_eq(sc_wire_decode_waterline(fr.data, fr.len, NULL, &m, got),
		     SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "a frame, not a waterline"), "%s",
		  sc_errmsg());
	for (size_t n = 0; n < buf.len; n++)
		cr_assert_eq(
		    sc_wire_decode_waterline(buf.data, n, NULL, &m, got),
		    SC_EINVAL, "a waterline cut at %zu bytes", n);
	p = buf.data;
	p[20] = 0; /* mask 0 */
	cr_assert_eq(sc_wire_decode_waterline(p, buf.len, NULL, &m, got),
		     SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "mask 0x0"), "%s", sc_errmsg());
	p[20] = 4; /* column 2 of 2 */
	cr_assert_eq(sc_wire_decode_waterline(p, buf.len, NULL, &m, got),
		     SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "mask 0x4 for 2 columns"), "%s",
		  sc_errmsg());
	p[20] = 1; /* one value in a message of two */
	cr_assert_eq(sc_wire_decode_waterline(p, buf.len, NULL, &m, got),
		     SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "takes 48 bytes, not 56"), "%s",
		  sc_errmsg());
	p[20] = 3;
	p[4] = 2; /* version */
	cr_assert_eq(sc_wire_decode_waterline(p, buf.len, NULL, &m, got),
		     SC_EINVAL);
	cr_assert(strstr(sc_errmsg(), "version 2"), "%s", sc_errmsg());
	p[4] = 1;
	cr_assert_eq(sc_wire_decode_waterline(p, buf.len, NULL, &m, got), 0,
		     "restored, it decodes: %s", sc_errmsg());
	cr_assert(m == 3 && got[0] == 4 && got[1] == 5);
	sc_wire_rx_fini(&rx);
	sc_wire_buf_fini(&fr);
	sc_wire_buf_fini(&buf);
	tables_fini(&tt);
}

/* A frame without symbols is decoded straight into the batch's records
 * (no builder): 1 row and 40 rows (past the small-batch bound) decode
 * to the batch encoded, and the same checks hold: rows out of order, a
 * zero weight, a symbol word with an empty dictionary are refused. */
Test(wire, frames_without_symbols_decode_directly_and_as_strictly)
{
	enum sc_type t[2] = {SC_TYPE_U64, SC_TYPE_SYMBOL};
	uint64_t rows[2 * 40];
	struct sc_wire_buf buf;
	struct sc_wire_rx rx;
	struct sc_symtab *syms = NULL;
	struct sc_schema s;
	uint8_t *p;

	cr_assert_eq(sc_schema_init(&s, 2, t, NULL), 0);
	cr_assert_eq(sc_symtab_create(&syms), 0);
	for (size_t i = 0; i < 40; i++) {
		rows[2 * i] = 100 + i;
		rows[2 * i + 1] = 0; /* SC_SYMBOL_NONE: no dictionary */
	}
	sc_wire_buf_init(&buf);
	cr_assert_eq(sc_wire_rx_init(&rx, NULL), 0);
	for (size_t n = 1; n <= 40; n += 39) {
		struct sc_batch *b = NULL, *got = NULL;

		cr_assert_eq(sc_batch_from_records(2, rows, NULL, n, &b), 0);
		cr_assert_eq(sc_wire_encode(b, &s, syms, 3, 1, 0, &buf), 0,
			     "%s", sc_errmsg());
		cr_assert_eq(sc_wire_decode(buf.data, buf.len, &rx, NULL, &got),
			     0, "%s", sc_errmsg());
		cr_assert(sc_batch_equal(b, got), "%zu rows", n);
		sc_batch_release(got);
		sc_batch_release(b);
	}
	/* buf holds the 40 rows; record r starts at 50 + 24 r. */
	p = buf.data;
	p[50 + 24] = 99; /* row 1's key (101 -> 99) below row 0's */
	expect_refused(p, buf.len, &rx, "row 1 is not after row 0");
	p[50 + 24] = 101;
	memset(p + 50 + (ptrdiff_t)24 * 5 + 16, 0, 8); /* row 5's weight */
	expect_refused(p, buf.len, &rx, "row 5 has weight 0");
	p[50 + 24 * 5 + 16] = 1;
	p[50 + 24 * 7 + 8] = 1; /* row 7's symbol word, no dictionary */
	expect_refused(p, buf.len, &rx, "of a dictionary of 0");
	p[50 + 24 * 7 + 8] = 0;
	{
		struct sc_batch *got = NULL;

		cr_assert_eq(sc_wire_decode(p, buf.len, &rx, NULL, &got), 0,
			     "restored, it decodes: %s", sc_errmsg());
		cr_assert_eq(sc_batch_count(got), 40);
		sc_batch_release(got);
	}
	sc_wire_rx_fini(&rx);
	sc_wire_buf_fini(&buf);
	sc_symtab_destroy(syms);
}
