/*
 * wire.c - frames to bytes and back. See wire.h for the layout and the
 * rules; this file follows them in order: the header, the dictionary,
 * the rows.
 */
#include "units/wire.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "operators/batch_int.h"
#include "operators/mem_int.h"
#include "operators/symbol.h"

/* --- little-endian fields --------------------------------------------- */

/* On a little-endian host a field is its bytes as they are: one memcpy
 * (a single load or store) instead of a shift per byte, which made a
 * 1-row frame's encode about 580 instructions under callgrind. Elsewhere
 * the byte loops below, the same wire either way. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SC_WIRE_LE_HOST 1
#else
#define SC_WIRE_LE_HOST 0
#endif

static void
put_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void
put_u32(uint8_t *p, uint32_t v)
{
	if (SC_WIRE_LE_HOST) {
		memcpy(p, &v, 4);
		return;
	}
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void
put_u64(uint8_t *p, uint64_t v)
{
	if (SC_WIRE_LE_HOST) {
		memcpy(p, &v, 8);
		return;
	}
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t
get_u16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t
get_u32(const uint8_t *p)
{
	uint32_t v = 0;

	if (SC_WIRE_LE_HOST) {
		memcpy(&v, p, 4);
		return v;
	}
	for (int i = 0; i < 4; i++)
		v |= (uint32_t)p[i] << (8 * i);
	return v;
}

static uint64_t
get_u64(const uint8_t *p)
{
	uint64_t v = 0;

	if (SC_WIRE_LE_HOST) {
		memcpy(&v, p, 8);
		return v;
	}
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* --- the buffer ---------------------------------------------------------- */

void
sc_wire_buf_init(struct sc_wire_buf *b)
{
	if (b)
		*b = (struct sc_wire_buf){0};
}

void
sc_wire_buf_fini(struct sc_wire_buf *b)
{
	if (!b)
		return;
	free(b->data);
	*b = (struct sc_wire_buf){0};
}

static int
buf_reserve(struct sc_wire_buf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 256;
	uint8_t *d;

	if (n <= b->cap)
		return 0;
	while (cap < n) {
		if (cap > SIZE_MAX / 2)
			return sc__fail(SC_ENOMEM, "wire: a frame of %zu bytes",
					n);
		cap *= 2;
	}
	d = realloc(b->data, cap);
	if (!d)
		return sc__fail(SC_ENOMEM, "wire: a frame of %zu bytes", n);
	b->data = d;
	b->cap = cap;
	return 0;
}

/* --- encoding ------------------------------------------------------------ */

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The distinct non-zero symbol ids of b's symbol columns, sorted (the
 * dictionary's order). *ids is malloc'd (NULL when there are none). */
static int
collect_syms(const struct sc_batch *b, const struct sc_schema *s,
	     uint64_t **ids, size_t *n)
{
	size_t cap = 0, k = 0, out = 0;
	uint64_t *v = NULL;

	for (uint32_t c = 0; c < s->ncols; c++)
		if (s->types[c] == SC_TYPE_SYMBOL)
			cap += sc_batch_count(b);
	if (cap == 0) {
		*ids = NULL;
		*n = 0;
		return 0;
	}
	v = malloc(cap * sizeof(*v));
	if (!v)
		return sc__fail(SC_ENOMEM, "wire: %zu symbols", cap);
	for (size_t i = 0; i < sc_batch_count(b); i++)
		for (uint32_t c = 0; c < s->ncols; c++)
			if (s->types[c] == SC_TYPE_SYMBOL &&
			    sc_batch_row(b, i)[c] != SC_SYMBOL_NONE)
				v[k++] = sc_batch_row(b, i)[c];
	if (k)
		qsort(v, k, sizeof(*v), cmp_u64);
	for (size_t i = 0; i < k; i++)
		if (out == 0 || v[out - 1] != v[i])
			v[out++] = v[i];
	*ids = v;
	*n = out;
	return 0;
}

/* The dictionary index (+1) of id in the sorted ids[0..n). */
static uint64_t
sym_index(const uint64_t *ids, size_t n, uint64_t id)
{
	size_t lo = 0, hi = n;

	if (id == SC_SYMBOL_NONE)
		return 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (uint64_t)lo + 1;
}

/* The dictionary's bytes, or SC_ENOENT naming a dead id. */
static int
dict_size(struct sc_symtab *syms, const uint64_t *ids, size_t n, size_t *bytes)
{
	size_t total = 0, len;
	const char *text;

	for (size_t i = 0; i < n; i++) {
		if (sc_symtab_lookup(syms, ids[i], &text, &len) != 0)
			return sc__fail(SC_ENOENT,
					"wire: symbol #%" PRIu64
					" is not live in the sender's table",
					ids[i]);
		if (len > UINT32_MAX)
			return sc__fail(SC_EINVAL,
					"wire: symbol #%" PRIu64
					" is %zu bytes, above 2^32",
					ids[i], len);
		total += 4 + len;
	}
	*bytes = total;
	return 0;
}

static void
write_header(uint8_t *p, const struct sc_schema *s, size_t total, uint32_t edge,
	     uint64_t nsyms, uint64_t seq, uint64_t tick, uint64_t nrows)
{
	put_u32(p, SC_WIRE_MAGIC);
	put_u16(p + 4, SC_WIRE_VERSION);
	put_u16(p + 6, (uint16_t)s->ncols);
	put_u64(p + 8, (uint64_t)total);
	put_u32(p + 16, edge);
	put_u32(p + 20, (uint32_t)nsyms);
	put_u64(p + 24, seq);
	put_u64(p + 32, tick);
	put_u64(p + 40, nrows);
	for (uint32_t c = 0; c < s->ncols; c++)
		p[SC_WIRE_HEADER_BYTES + c] = (uint8_t)s->types[c];
}

static uint8_t *
write_dict(uint8_t *p, struct sc_symtab *syms, const uint64_t *ids, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *text = "";
		size_t len = 0;

		/* Live: dict_size looked each one up, and the caller's batch
		 * holds them. */
		(void)sc_symtab_lookup(syms, ids[i], &text, &len);
		put_u32(p, (uint32_t)len);
		memcpy(p + 4, text, len);
		p += 4 + len;
	}
	return p;
}

static void
write_rows(uint8_t *p, const struct sc_batch *b, const struct sc_schema *s,
	   const uint64_t *ids, size_t nids)
{
	for (size_t i = 0; i < sc_batch_count(b); i++) {
		const uint64_t *row = sc_batch_row(b, i);

		for (uint32_t c = 0; c < s->ncols; c++, p += 8)
			put_u64(p, s->types[c] == SC_TYPE_SYMBOL
				       ? sym_index(ids, nids, row[c])
				       : row[c]);
		put_u64(p, (uint64_t)sc_batch_weight(b, i));
		p += 8;
	}
}

static bool
has_symbols(const struct sc_schema *s)
{
	for (uint32_t c = 0; c < s->ncols; c++)
		if (s->types[c] == SC_TYPE_SYMBOL)
			return true;
	return false;
}

static int
wire_encode_body(const struct sc_batch *b, const struct sc_schema *s,
		 struct sc_symtab *syms, uint32_t edge, uint64_t seq,
		 uint64_t tick, struct sc_wire_buf *out)
{
	size_t nids = 0, dict = 0, rows, total;
	uint64_t *ids = NULL;
	uint8_t *p;
	int rc;

	if (!b || !s || !out || seq == 0)
		return sc__fail(SC_EINVAL, "wire: NULL batch, schema or out, "
					   "or sequence number 0");
	if (s->ncols != sc_batch_ncols(b))
		return sc__fail(SC_ESCHEMA,
				"wire: the schema has %u columns, the batch %u",
				s->ncols, sc_batch_ncols(b));
	if (has_symbols(s) && !syms)
		return sc__fail(SC_EINVAL,
				"wire: a symbol column and no symbol table");
	rc = collect_syms(b, s, &ids, &nids);
	if (rc)
		return rc;
	if (nids > UINT32_MAX) {
		rc =
		    sc__fail(SC_EINVAL, "wire: %zu symbols in one frame", nids);
		goto free_ids;
	}
	rc = dict_size(syms, ids, nids, &dict);
	if (rc)
		goto free_ids;
	/* A batch in memory already holds count * stride words, so rows
	 * cannot overflow; the header and dictionary are small. */
	rows = sc_batch_count(b) * (size_t)(s->ncols + 1) * 8;
	total = SC_WIRE_HEADER_BYTES + s->ncols + dict + rows;
	rc = buf_reserve(out, total);
	if (rc)
		goto free_ids;
	p = out->data;
	write_header(p, s, total, edge, nids, seq, tick, sc_batch_count(b));
	p = write_dict(p + SC_WIRE_HEADER_BYTES + s->ncols, syms, ids, nids);
	write_rows(p, b, s, ids, nids);
	out->len = total;
free_ids:
	free(ids);
	return rc;
}

/* --- decoding ------------------------------------------------------------ */

/* The header of a waterline message (wire.h, "Waterlines"); p holds
 * at least 8 bytes. */
static int
peek_waterline(const uint8_t *p, size_t len, struct sc_wire_header *h)
{
	struct sc_wire_header t = {.kind = SC_WIRE_WATERLINE};
	uint16_t version = get_u16(p + 4);
	uint64_t want;

	if (len < SC_WIRE_WL_HEADER_BYTES)
		return sc__fail(SC_EINVAL,
				"wire: truncated waterline header (%zu of %u "
				"bytes)",
				len, SC_WIRE_WL_HEADER_BYTES);
	if (version != SC_WIRE_VERSION)
		return sc__fail(SC_EINVAL, "wire: version %u, not %u", version,
				SC_WIRE_VERSION);
	t.ncols = get_u16(p + 6);
	t.bytes = get_u64(p + 8);
	t.edge = get_u32(p + 16);
	t.mask = get_u32(p + 20);
	t.seq = get_u64(p + 24);
	t.tick = get_u64(p + 32);
	if (t.ncols < 1 || t.ncols > SC_SCHEMA_MAX_COLS)
		return sc__fail(SC_EINVAL, "wire: %u columns (1..%d)", t.ncols,
				SC_SCHEMA_MAX_COLS);
	if (!t.mask || (t.ncols < 32 && t.mask >> t.ncols))
		return sc__fail(SC_EINVAL,
				"wire: waterline mask 0x%x for %u columns",
				t.mask, t.ncols);
	if (t.bytes != len)
		return sc__fail(SC_EINVAL,
				"wire: the waterline says %" PRIu64
				" bytes, the buffer has %zu",
				t.bytes, len);
	want =
	    SC_WIRE_WL_HEADER_BYTES + 8u * (uint64_t)__builtin_popcount(t.mask);
	if (t.bytes != want)
		return sc__fail(SC_EINVAL,
				"wire: a waterline of mask 0x%x takes %" PRIu64
				" bytes, not %" PRIu64,
				t.mask, want, t.bytes);
	*h = t;
	return 0;
}

static int
wire_peek_body(const void *buf, size_t len, struct sc_wire_header *h)
{
	const uint8_t *p = buf;
	struct sc_wire_header t = {0};
	uint32_t magic;
	uint16_t version;

	if (!buf || !h)
		return sc__fail(SC_EINVAL, "wire: NULL buffer or header");
	if (len >= 8 && get_u32(p) == SC_WIRE_WL_MAGIC)
		return peek_waterline(p, len, h);
	if (len < SC_WIRE_HEADER_BYTES)
		return sc__fail(SC_EINVAL,
				"wire: truncated header (%zu of %u bytes)", len,
				SC_WIRE_HEADER_BYTES);
	magic = get_u32(p);
	version = get_u16(p + 4);
	t.ncols = get_u16(p + 6);
	t.bytes = get_u64(p + 8);
	if (magic != SC_WIRE_MAGIC)
		return sc__fail(SC_EINVAL, "wire: bad magic 0x%08x", magic);
	if (version != SC_WIRE_VERSION)
		return sc__fail(SC_EINVAL, "wire: version %u, not %u", version,
				SC_WIRE_VERSION);
	if (t.ncols < 1 || t.ncols > SC_SCHEMA_MAX_COLS)
		return sc__fail(SC_EINVAL, "wire: %u columns (1..%d)", t.ncols,
				SC_SCHEMA_MAX_COLS);
	if (t.bytes != len)
		return sc__fail(SC_EINVAL,
				"wire: the frame says %" PRIu64
				" bytes, the buffer has %zu",
				t.bytes, len);
	if (len < SC_WIRE_HEADER_BYTES + t.ncols)
		return sc__fail(SC_EINVAL, "wire: truncated column types");
	t.edge = get_u32(p + 16);
	t.nsyms = get_u32(p + 20);
	t.seq = get_u64(p + 24);
	t.tick = get_u64(p + 32);
	t.nrows = get_u64(p + 40);
	for (uint32_t c = 0; c < t.ncols; c++) {
		uint8_t ty = p[SC_WIRE_HEADER_BYTES + c];

		if (ty >= SC__TYPE_COUNT)
			return sc__fail(SC_EINVAL,
					"wire: column %u has unknown type %u",
					c, ty);
		t.types[c] = (enum sc_type)ty;
	}
	*h = t;
	return 0;
}

static int
wire_rx_init_body(struct sc_wire_rx *rx, struct sc_symtab *syms)
{
	if (!rx)
		return sc__fail(SC_EINVAL, "wire: NULL rx");
	*rx = (struct sc_wire_rx){.syms = syms};
	return 0;
}

void
sc_wire_rx_fini(struct sc_wire_rx *rx)
{
	if (!rx)
		return;
	for (size_t i = 0; i < rx->cap; i++)
		if (rx->held[i])
			(void)sc_symtab_release(rx->syms, rx->held[i]);
	free(rx->held);
	*rx = (struct sc_wire_rx){.syms = rx->syms};
}

static size_t
held_slot(const struct sc_wire_rx *rx, uint64_t id)
{
	size_t mask = rx->cap - 1, i = (size_t)(id * 0x9e3779b97f4a7c15ULL);

	for (i &= mask; rx->held[i] && rx->held[i] != id; i = (i + 1) & mask)
		;
	return i;
}

static int
held_grow(struct sc_wire_rx *rx)
{
	size_t cap = rx->cap ? rx->cap * 2 : 64, old = rx->cap;
	uint64_t *was = rx->held, *now = calloc(cap, sizeof(*now));

	if (!now)
		return sc__fail(SC_ENOMEM, "wire: %zu held symbols", cap);
	rx->held = now;
	rx->cap = cap;
	for (size_t i = 0; i < old; i++)
		if (was[i])
			now[held_slot(rx, was[i])] = was[i];
	free(was);
	return 0;
}

/* Intern one arrived text; rx keeps one reference per distinct id. */
static int
rx_intern(struct sc_wire_rx *rx, const uint8_t *text, uint32_t len,
	  uint64_t *id)
{
	size_t slot;
	int rc;

	if (rx->nheld + 1 > rx->cap / 2 && (rc = held_grow(rx)) != 0)
		return rc;
	rc = sc_symtab_intern(rx->syms, (const char *)text, len, id);
	if (rc)
		return rc;
	slot = held_slot(rx, *id);
	if (rx->held[slot]) /* already held: give the new one back */
		return sc_symtab_release(rx->syms, *id);
	rx->held[slot] = *id;
	rx->nheld++;
	return 0;
}

/* Read the dictionary at *p (within end) into ids[0..n), interning. */
static int
read_dict(struct sc_wire_rx *rx, const uint8_t **p, const uint8_t *end,
	  uint64_t *ids, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t len;
		int rc;

		if ((size_t)(end - *p) < 4)
			return sc__fail(
			    SC_EINVAL, "wire: truncated symbol %u of %u", i, n);
		len = get_u32(*p);
		if ((size_t)(end - *p) - 4 < len)
			return sc__fail(SC_EINVAL,
					"wire: symbol %u says %u bytes, past "
					"the frame's end",
					i, len);
		rc = rx_intern(rx, *p + 4, len, &ids[i]);
		if (rc)
			return rc;
		*p += 4 + len;
	}
	return 0;
}

/* Check that the rows fill exactly what is left and read one record's
 * words, renaming symbols. */
static int
read_record(const struct sc_wire_header *h, const uint8_t *p,
	    const uint64_t *ids, uint64_t i, uint64_t *rec)
{
	for (uint32_t c = 0; c < h->ncols; c++) {
		uint64_t w = get_u64(p + (size_t)8 * c);

		if (h->types[c] == SC_TYPE_SYMBOL && w != 0) {
			if (w > h->nsyms)
				return sc__fail(SC_EINVAL,
						"wire: row %" PRIu64
						" column %u: symbol %" PRIu64
						" of a dictionary of %u",
						i, c, w, h->nsyms);
			w = ids[w - 1];
		}
		rec[c] = w;
	}
	rec[h->ncols] = get_u64(p + (size_t)8 * h->ncols);
	if (rec[h->ncols] == 0)
		return sc__fail(SC_EINVAL, "wire: row %" PRIu64 " has weight 0",
				i);
	return 0;
}

/* The rows of a frame without symbols, as they are: the wire keeps the
 * sender's strict order and no id is renamed, so once checked (strictly
 * ascending, no zero weight) they are already consolidated and become the
 * batch's records directly, with no builder, sort or second copy. A
 * 1-row frame's decode took 0.4-1.5 us through the builder (its
 * allocations and its finish) on this project's machine, the larger part
 * of one frame's latency across a link. */
static int
read_rows_direct(const struct sc_wire_header *h, const uint8_t *p,
		 struct sc_batch **out)
{
	uint32_t stride = h->ncols + 1;
	size_t n = (size_t)h->nrows;
	bool small = n <= SC__SMALL_ROWS;
	struct sc_batch *sb = NULL;
	uint64_t *rec;
	int rc = 0;

	if (n == 0)
		return sc_batch_empty(h->ncols, out);
	if (small) {
		sb = sc__small_alloc(n, stride);
		rec = sb ? (uint64_t *)(sb + 1) : NULL;
	} else {
		rec = sc__rec_alloc(n, stride);
	}
	if (!rec)
		return sc__fail(SC_ENOMEM, "wire: %zu rows", n);
	for (size_t i = 0; i < n && !rc; i++, p += (size_t)8 * stride) {
		uint64_t *r = rec + i * stride;
		uint64_t wt = get_u64(p + (size_t)8 * h->ncols);

		for (uint32_t c = 0; c < h->ncols; c++) {
			uint64_t w = get_u64(p + (size_t)8 * c);

			if (h->types[c] == SC_TYPE_SYMBOL && w && !rc)
				rc =
				    sc__fail(SC_EINVAL,
					     "wire: row %zu column %u: symbol "
					     "%" PRIu64 " of a dictionary of 0",
					     i, c, w);
			r[c] = w;
		}
		r[h->ncols] = wt;
		/* The order is checked first, as the builder's path does. */
		if (i > 0 && sc_row_cmp(r - stride, r, h->ncols) >= 0) {
			rc = sc__fail(SC_EINVAL,
				      "wire: row %zu is not after row %zu", i,
				      i - 1);
			break;
		}
		if (rc)
			break;
		if (wt == 0)
			rc = sc__fail(SC_EINVAL, "wire: row %zu has weight 0",
				      i);
	}
	if (rc) {
		if (small)
			free(sb);
		else
			sc__mem_free(rec);
		return rc;
	}
	if (small) {
		*out = sc__small_seal(sb, h->ncols, n, n);
		return 0;
	}
	return sc__batch_adopt(h->ncols, rec, n, n, out);
}

static int
read_rows(const struct sc_wire_header *h, const uint8_t *p, const uint8_t *end,
	  const uint64_t *ids, struct sc_batch **out)
{
	size_t stride = (size_t)h->ncols + 1, left = (size_t)(end - p);
	uint64_t rec[SC_SCHEMA_MAX_COLS + 1], prev[SC_SCHEMA_MAX_COLS];
	struct sc_batch_builder bb;
	int rc;

	if (h->nrows > left / (8 * stride) || h->nrows * 8 * stride != left)
		return sc__fail(SC_EINVAL,
				"wire: %" PRIu64 " rows of %zu bytes do not "
				"fill the %zu bytes left",
				h->nrows, 8 * stride, left);
	if (h->nsyms == 0)
		return read_rows_direct(h, p, out);
	rc = sc_batch_builder_init(&bb, h->ncols);
	if (rc)
		return rc;
	rc = sc_batch_builder_reserve(&bb, (size_t)h->nrows);
	for (uint64_t i = 0; rc == 0 && i < h->nrows; i++, p += 8 * stride) {
		/* The wire words are in the sender's strict order (the
		 * dictionary follows the sender's ids): check it on them. */
		for (uint32_t c = 0; c < h->ncols; c++)
			rec[c] = get_u64(p + (size_t)8 * c);
		if (i > 0 && sc_row_cmp(prev, rec, h->ncols) >= 0) {
			rc = sc__fail(SC_EINVAL,
				      "wire: row %" PRIu64
				      " is not after row %" PRIu64,
				      i, i - 1);
			break;
		}
		memcpy(prev, rec, h->ncols * sizeof(*rec));
		rc = read_record(h, p, ids, i, rec);
		if (rc == 0)
			rc = sc_batch_builder_push(&bb, rec, h->ncols,
						   (int64_t)rec[h->ncols]);
	}
	if (rc == 0)
		rc = sc_batch_builder_finish(&bb, out);
	sc_batch_builder_fini(&bb);
	return rc;
}

static int
wire_decode_body(const void *buf, size_t len, struct sc_wire_rx *rx,
		 struct sc_wire_header *h, struct sc_batch **out)
{
	struct sc_wire_header t;
	const uint8_t *p, *end;
	uint64_t *ids = NULL;
	int rc;

	if (!buf || !rx || !out)
		return sc__fail(SC_EINVAL, "wire: NULL buffer, rx or out");
	rc = sc_wire_peek(buf, len, &t);
	if (rc)
		return rc;
	if (t.kind != SC_WIRE_FRAME)
		return sc__fail(SC_EINVAL,
				"wire: a waterline message, not a frame");
	p = (const uint8_t *)buf + SC_WIRE_HEADER_BYTES + t.ncols;
	end = (const uint8_t *)buf + len;
	/* Each entry takes at least 4 bytes: a count beyond what is left
	 * is refused before it sizes an allocation. */
	if (t.nsyms > (size_t)(end - p) / 4)
		return sc__fail(SC_EINVAL,
				"wire: %u symbols cannot fit in %zu bytes",
				t.nsyms, (size_t)(end - p));
	if (t.nsyms && !rx->syms)
		return sc__fail(SC_EINVAL,
				"wire: a frame with symbols and no table");
	if (t.nsyms && !(ids = malloc(t.nsyms * sizeof(*ids))))
		return sc__fail(SC_ENOMEM, "wire: %u symbols", t.nsyms);
	rc = read_dict(rx, &p, end, ids, t.nsyms);
	if (rc == 0)
		rc = read_rows(&t, p, end, ids, out);
	free(ids);
	if (rc == 0 && h)
		*h = t;
	return rc;
}

static int
wire_encode_waterline_body(uint32_t edge, uint64_t seq, uint64_t tick,
			   uint32_t ncols, uint32_t mask, const int64_t *values,
			   struct sc_wire_buf *out)
{
	size_t total;
	uint8_t *p;
	int rc;

	if (!values || !out || seq == 0)
		return sc__fail(SC_EINVAL, "wire: NULL values or out, or "
					   "sequence number 0");
	if (ncols < 1 || ncols > SC_SCHEMA_MAX_COLS || !mask ||
	    (ncols < 32 && mask >> ncols))
		return sc__fail(SC_EINVAL,
				"wire: waterline mask 0x%x for %u columns",
				mask, ncols);
	total = SC_WIRE_WL_HEADER_BYTES + 8u * (size_t)__builtin_popcount(mask);
	rc = buf_reserve(out, total);
	if (rc)
		return rc;
	p = out->data;
	put_u32(p, SC_WIRE_WL_MAGIC);
	put_u16(p + 4, SC_WIRE_VERSION);
	put_u16(p + 6, (uint16_t)ncols);
	put_u64(p + 8, (uint64_t)total);
	put_u32(p + 16, edge);
	put_u32(p + 20, mask);
	put_u64(p + 24, seq);
	put_u64(p + 32, tick);
	p += SC_WIRE_WL_HEADER_BYTES;
	for (uint32_t c = 0; c < ncols; c++)
		if (mask >> c & 1) {
			put_u64(p, (uint64_t)values[c]);
			p += 8;
		}
	out->len = total;
	return 0;
}

static int
wire_decode_waterline_body(const void *buf, size_t len,
			   struct sc_wire_header *h, uint32_t *mask,
			   int64_t *values)
{
	struct sc_wire_header t = {0};
	const uint8_t *p;
	int rc;

	if (!buf || !mask || !values)
		return sc__fail(SC_EINVAL, "wire: NULL buffer, mask or values");
	rc = sc_wire_peek(buf, len, &t);
	if (rc)
		return rc;
	if (t.kind != SC_WIRE_WATERLINE)
		return sc__fail(SC_EINVAL,
				"wire: a frame, not a waterline message");
	p = (const uint8_t *)buf + SC_WIRE_WL_HEADER_BYTES;
	for (uint32_t c = 0; c < SC_SCHEMA_MAX_COLS; c++)
		if (t.mask >> c & 1) {
			values[c] = (int64_t)get_u64(p);
			p += 8;
		} else {
			values[c] = 0;
		}
	*mask = t.mask;
	if (h)
		*h = t;
	return 0;
}

static int
wire_seq_check_body(uint64_t *expected, uint64_t seq, uint32_t edge)
{
	if (!expected)
		return sc__fail(SC_EINVAL, "wire: NULL expected");
	if (seq == *expected) {
		(*expected)++;
		return 0;
	}
	return sc__fail(SC_ESTATE,
			"wire: edge %u: frame %" PRIu64 " where %" PRIu64
			" was next (%s)",
			edge, seq, *expected,
			seq > *expected ? "a gap: frames were lost"
					: "a duplicate or a reordering");
}

int
sc_wire_encode(const struct sc_batch *b, const struct sc_schema *s,
	       struct sc_symtab *syms, uint32_t edge, uint64_t seq,
	       uint64_t tick, struct sc_wire_buf *out)
{
	return sc__errwrap(wire_encode_body(b, s, syms, edge, seq, tick, out),
			   "sc_wire_encode");
}

int
sc_wire_peek(const void *buf, size_t len, struct sc_wire_header *h)
{
	return sc__errwrap(wire_peek_body(buf, len, h), "sc_wire_peek");
}

int
sc_wire_rx_init(struct sc_wire_rx *rx, struct sc_symtab *syms)
{
	return sc__errwrap(wire_rx_init_body(rx, syms), "sc_wire_rx_init");
}

int
sc_wire_decode(const void *buf, size_t len, struct sc_wire_rx *rx,
	       struct sc_wire_header *h, struct sc_batch **out)
{
	return sc__errwrap(wire_decode_body(buf, len, rx, h, out),
			   "sc_wire_decode");
}

int
sc_wire_encode_waterline(uint32_t edge, uint64_t seq, uint64_t tick,
			 uint32_t ncols, uint32_t mask, const int64_t *values,
			 struct sc_wire_buf *out)
{
	return sc__errwrap(wire_encode_waterline_body(edge, seq, tick, ncols,
						      mask, values, out),
			   "sc_wire_encode_waterline");
}

int
sc_wire_decode_waterline(const void *buf, size_t len, struct sc_wire_header *h,
			 uint32_t *mask, int64_t *values)
{
	return sc__errwrap(
	    wire_decode_waterline_body(buf, len, h, mask, values),
	    "sc_wire_decode_waterline");
}

int
sc_wire_seq_check(uint64_t *expected, uint64_t seq, uint32_t edge)
{
	return sc__errwrap(wire_seq_check_body(expected, seq, edge),
			   "sc_wire_seq_check");
}
