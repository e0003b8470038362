/*
 * wire.h - a frame as bytes: the lossless form an edge's frame takes
 * between processes (units/mpi_link.h carries it).
 *
 * Layout. Every integer is little-endian, whatever the host, so two hosts
 * of different byte order read one frame alike:
 *
 *   offset size  field
 *   0      4     magic "SCW1"
 *   4      2     version (1)
 *   6      2     ncols, 1 .. SC_SCHEMA_MAX_COLS
 *   8      8     total bytes of the frame, this header included
 *   16     4     edge id
 *   20     4     nsyms: distinct symbols the frame's rows name
 *   24     8     per-edge sequence number (the first frame of an edge is 1)
 *   32     8     tick, or 0 when the sender has no tick
 *   40     8     nrows
 *   48     ncols the column types, one byte each (enum sc_type)
 *   ...          the symbol dictionary: nsyms entries, each a u32 length
 *                then that many bytes (any bytes, NUL included)
 *   ...          the rows: nrows records of ncols u64 words then the
 *                weight as an int64
 *
 * What is lossless. A row's words go as they are: an i64, u64 or bool
 * column's word, and an f64 column's word bit for bit (whatever bits the
 * row holds, so a -0.0 or a NaN payload that a row was built with
 * survives; schema.h's encoding folds them, the wire never does). A
 * symbol column's word is an id in the SENDER's table (symbol.h), which
 * means nothing to the receiver: the frame carries each distinct
 * symbol's bytes once, in the dictionary, ordered by the sender's id, and
 * the row carries its index there plus 1 (0 stays 0: SC_SYMBOL_NONE). The
 * receiver interns each text in its own table and writes its own ids, so
 * the decoded rows are the same Z-set under the receiver's naming. Since
 * the dictionary follows the sender's id order, the wire rows keep the
 * sender's (strict) order, which the decoder checks; they are sorted again
 * only when a symbol column was renamed (symbols order by id).
 *
 * Who holds the symbols' references. Encoding takes none: the caller holds
 * its batch, and whoever holds the batch's rows holds their ids alive
 * (symbol.h). Decoding interns each text in the receiver's table through
 * a struct sc_wire_rx, which keeps ONE reference per distinct symbol that
 * ever arrived through it (a second arrival of a text it holds gives the
 * extra reference back at once), and releases them all at
 * sc_wire_rx_fini. So the decoded batches' ids stay live for as long as
 * the receiving side lives, and a long stream of frames never piles up
 * references (nor wraps a count).
 *
 * A malformed buffer. The decoder reads nothing past `len`, computes every
 * size with overflow checks before it allocates, and refuses a buffer
 * that is short, too long, of another magic or version, of a bad column
 * count or type, a symbol index out of the dictionary, a zero weight, or
 * rows out of order, with SC_EINVAL and a message naming the field (and
 * the row) that was wrong. It never crashes on any bytes
 * (tests/fuzz/fuzz_wire.c).
 *
 * Waterlines (units/edge.h, "Waterlines"). An edge also carries its
 * producer's waterline publications, in order with its frames: a
 * WATERLINE MESSAGE, numbered in the same sequence as the edge's frames
 * (so a lost one is a gap too), says "every row of every frame after me
 * has column c >= value[c]" for each c in its mask:
 *
 *   offset size  field
 *   0      4     magic "SCWL"
 *   4      2     version (1)
 *   6      2     ncols of the edge's rows, 1 .. SC_SCHEMA_MAX_COLS
 *   8      8     total bytes, 40 + 8 * popcount(mask)
 *   16     4     edge id
 *   20     4     mask: the columns with a value, none >= ncols, not 0
 *   24     8     sequence number (as a frame's)
 *   32     8     tick, or 0
 *   40     8 *   the values, int64, one per column of mask, lowest first
 *
 * sc_wire_peek reads both kinds (h->kind says which); sc_wire_decode
 * refuses a waterline message and sc_wire_decode_waterline a frame, each
 * naming what it got. The byte form of a message is canonical: decoding
 * and encoding again gives the same bytes (tests/fuzz/fuzz_wire.c).
 *
 * Gaps. Frames of one edge are numbered 1, 2, 3, ... by the producer;
 * sc_wire_seq_check on the receiving side refuses a frame that is not the
 * next one (a lost, duplicated or reordered frame) instead of merging it.
 *
 * Cost. 48 + ncols bytes of header, the dictionary, and 8 * (ncols + 1)
 * bytes a row: a row of one column costs 16 bytes on the wire.
 *
 * Threads: every function here is reentrant; a buffer or an rx is used by
 * one thread at a time. The symbol tables are thread safe (symbol.h).
 */
#ifndef SC_UNITS_WIRE_H
#define SC_UNITS_WIRE_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stddef.h>
#include <stdint.h>

#include "operators/batch.h"
#include "operators/error.h"
#include "operators/schema.h"

struct sc_symtab;

#define SC_WIRE_MAGIC	 0x31574353u /* "SCW1" read as a little-endian u32 */
#define SC_WIRE_WL_MAGIC 0x4c574353u /* "SCWL": a waterline message */
#define SC_WIRE_VERSION	 1u
/* Bytes before the column types. */
#define SC_WIRE_HEADER_BYTES 48u
/* Bytes of a waterline message before its values. */
#define SC_WIRE_WL_HEADER_BYTES 40u

/* What a message is (sc_wire_header.kind). */
enum sc_wire_kind {
	SC_WIRE_FRAME = 0,     /* a frame of rows */
	SC_WIRE_WATERLINE = 1, /* a waterline publication */
};

/* The header of a message, as sc_wire_peek reads it. A waterline
 * message has no rows, symbols or types (0), and its mask. */
struct sc_wire_header {
	enum sc_wire_kind kind; /* frame or waterline */
	uint32_t mask;		/* a waterline's columns; 0 for a frame */
	uint32_t edge;		/* the edge the frame travels on */
	uint64_t seq;		/* its number on that edge, from 1 */
	uint64_t tick;		/* the sender's tick, or 0 */
	uint64_t nrows;		/* rows it carries */
	uint64_t bytes;		/* the whole frame's size */
	uint32_t nsyms;		/* entries of its symbol dictionary */
	uint32_t ncols;		/* columns of a row */
	enum sc_type types[SC_SCHEMA_MAX_COLS]; /* ncols types */
};

/* A growable byte buffer, caller storage (init/fini). */
struct sc_wire_buf {
	uint8_t *data; /* len bytes of frame; owned, NULL when cap is 0 */
	size_t len;    /* bytes of the last frame encoded */
	size_t cap;    /* bytes allocated */
};

void sc_wire_buf_init(struct sc_wire_buf *b);
void sc_wire_buf_fini(struct sc_wire_buf *b);

/*
 * sc_wire_encode - frame `b` (rows of schema `s`, which must have b's
 * column count) for edge `edge` as number `seq` at `tick` into `out`
 * (replacing what it held; its buffer grows as needed and is kept).
 * `syms` is the sender's table, needed when s has a symbol column.
 * Returns
 *   0             out->len bytes of frame in out->data;
 *   SC_EINVAL     NULL b, s or out, seq 0, or a symbol column and no
 *                 table;
 *   SC_ESCHEMA    s's column count is not b's;
 *   SC_ENOENT     a symbol word that is not a live id of `syms` (naming
 *                 the row and column);
 *   SC_ENOMEM     out is unchanged but for its capacity.
 */
int sc_wire_encode(const struct sc_batch *b, const struct sc_schema *s,
		   struct sc_symtab *syms, uint32_t edge, uint64_t seq,
		   uint64_t tick, struct sc_wire_buf *out);

/*
 * sc_wire_peek - read and check the header of the message in
 * buf[0..len): magic (a frame's or a waterline's), version, a column
 * count in range, and a declared size equal to len; for a frame known
 * types, for a waterline a mask within the columns and a size that
 * holds its values. The rows are not read. Returns 0 and *h, or
 * SC_EINVAL naming the field that is wrong (h unwritten).
 */
int sc_wire_peek(const void *buf, size_t len, struct sc_wire_header *h);

/* The receiving side's symbols: caller storage, init/fini. */
struct sc_wire_rx {
	struct sc_symtab *syms; /* the receiver's table; borrowed */
	uint64_t *held;		/* ids it holds a reference on, a set
				 * (open addressing, 0 is empty) */
	size_t nheld;		/* ids in held */
	size_t cap;		/* slots of held, a power of 2 or 0 */
};

/*
 * sc_wire_rx_init - a receiving side interning into `syms` (may be NULL
 * when no frame will carry a symbol). Returns 0, SC_EINVAL (rx NULL).
 */
int sc_wire_rx_init(struct sc_wire_rx *rx, struct sc_symtab *syms);

/* sc_wire_rx_fini - release every reference rx holds. NULL allowed. */
void sc_wire_rx_fini(struct sc_wire_rx *rx);

/*
 * sc_wire_decode - the batch of the frame in buf[0..len). Symbols are
 * interned in rx's table (see the top for the references). Returns
 *   0          *out (one reference, the caller's) and, if h is not NULL,
 *              *h;
 *   SC_EINVAL  NULL buf, rx or out, or a malformed frame (the message
 *              names what was wrong); a symbol column and rx has no
 *              table;
 *   SC_ENOMEM, SC_EOVERFLOW (the table's).
 * Nothing is written on failure; symbols already interned for a refused
 * frame stay held by rx (released at fini).
 */
int sc_wire_decode(const void *buf, size_t len, struct sc_wire_rx *rx,
		   struct sc_wire_header *h, struct sc_batch **out);

/*
 * sc_wire_encode_waterline - the waterline message of edge `edge` with
 * number `seq` at `tick`: values[c] (indexed by column) for each column c
 * in mask, of an edge whose rows have `ncols` columns, into `out`
 * (replacing what it held). Returns
 *   0           out->len bytes in out->data;
 *   SC_EINVAL   NULL values or out, seq 0, ncols out of 1 ..
 *               SC_SCHEMA_MAX_COLS, mask 0 or naming a column >= ncols;
 *   SC_ENOMEM   out is unchanged but for its capacity.
 */
int sc_wire_encode_waterline(uint32_t edge, uint64_t seq, uint64_t tick,
			     uint32_t ncols, uint32_t mask,
			     const int64_t *values, struct sc_wire_buf *out);

/*
 * sc_wire_decode_waterline - the waterline message in buf[0..len):
 * *mask and values[c] for each c in it (the other entries of values,
 * SC_SCHEMA_MAX_COLS of them, set to 0), and *h if not NULL. Returns 0,
 * or SC_EINVAL (NULL, a malformed message, or a frame: the message says
 * which), nothing written.
 */
int sc_wire_decode_waterline(const void *buf, size_t len,
			     struct sc_wire_header *h, uint32_t *mask,
			     int64_t *values);

/*
 * sc_wire_seq_check - the receiver's gap check: *expected is the number
 * the next frame of an edge must carry (start it at 1). Returns
 *   0          seq == *expected, and *expected is advanced;
 *   SC_ESTATE  a gap (seq > *expected: frames were lost), a duplicate or
 *              a reordering (seq < *expected); the message names both
 *              numbers and *expected is unchanged.
 */
int sc_wire_seq_check(uint64_t *expected, uint64_t seq, uint32_t edge);

#ifdef __cplusplus
}
#endif

#endif /* SC_UNITS_WIRE_H */
