/*
 * fuzz_wire.c - a libFuzzer target for the wire decoder (units/wire.h):
 * any bytes are a frame it takes or refuses with SC_EINVAL (or SC_ENOMEM,
 * SC_EOVERFLOW: a frame whose rows renamed sum past int64), never a crash,
 * a read past the buffer or a leak. A frame it takes must keep what the
 * decoder promises, checked here independently: sc_wire_peek agrees with
 * the header it returned, the batch has the header's rows (or fewer, when
 * two texts of the dictionary were one), and encoding the batch again
 * with the receiver's table decodes to the same Z-set. A waterline
 * message (wire.h, "Waterlines") is refused by the frame decoder and
 * read by sc_wire_decode_waterline, which takes or refuses it with
 * SC_EINVAL alike; one it takes is canonical: encoding its mask and
 * values again gives the same bytes. A broken promise aborts, which
 * libFuzzer reports with the input that broke it.
 *
 * Built by tools/fuzz (clang, libFuzzer, ASan+UBSan); tools/test runs it
 * for a bounded time over tests/fuzz/corpus/wire/ (frames of every type).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/symbol.h"
#include "units/wire.h"

static void __attribute__((noreturn)) broken(const char *what)
{
	(void)fprintf(stderr, "fuzz_wire: %s (%s)\n", what, sc_errmsg());
	abort();
}

/* A refusal's message names its code, the call, then (after any inner
 * call it went through) the layer and what was wrong:
 * "SC_EINVAL: sc_wire_decode: [sc_wire_peek: ]wire: <what>". */
static int
names(const char *msg, const char *fn)
{
	size_t n = strlen(fn);
	const char *layer;

	if (strncmp(msg, "SC_EINVAL: ", 11) != 0 ||
	    strncmp(msg + 11, fn, n) != 0 ||
	    strncmp(msg + 11 + n, ": ", 2) != 0)
		return 0;
	layer = strstr(msg + 11 + n, ": wire: ");
	return layer && layer[8] != '\0';
}

static void
check_taken(const uint8_t *data, size_t size, struct sc_symtab *syms,
	    const struct sc_wire_header *h, struct sc_batch *b)
{
	struct sc_wire_header p;
	struct sc_wire_buf buf;
	struct sc_wire_rx rx;
	struct sc_schema s;
	struct sc_batch *again = NULL;

	if (sc_wire_peek(data, size, &p) != 0 || p.seq != h->seq ||
	    p.nrows != h->nrows || p.ncols != h->ncols || p.edge != h->edge)
		broken("peek disagrees with decode");
	if (sc_batch_count(b) > h->nrows || sc_batch_ncols(b) != h->ncols)
		broken("the batch does not fit its header");
	if (h->seq == 0)
		return; /* encode refuses seq 0: nothing to compare */
	if (sc_schema_init(&s, h->ncols, h->types, NULL) != 0)
		broken("a taken header's types make no schema");
	sc_wire_buf_init(&buf);
	if (sc_wire_rx_init(&rx, syms) != 0)
		broken("rx_init");
	if (sc_wire_encode(b, &s, syms, h->edge, h->seq, h->tick, &buf) != 0)
		broken("a decoded batch does not encode");
	if (sc_wire_decode(buf.data, buf.len, &rx, NULL, &again) != 0)
		broken("a re-encoded frame does not decode");
	if (!sc_batch_equal(b, again))
		broken("the re-encoded frame decodes to another Z-set");
	sc_batch_release(again);
	sc_wire_rx_fini(&rx);
	sc_wire_buf_fini(&buf);
}

/* The waterline decoder on the same bytes: it takes or refuses them
 * (SC_EINVAL naming the field), and what it takes encodes again to the
 * very bytes it read. */
static void
check_waterline(const uint8_t *data, size_t size)
{
	int64_t v[SC_SCHEMA_MAX_COLS];
	struct sc_wire_header h, p;
	struct sc_wire_buf buf;
	uint32_t mask = 0;
	int rc = sc_wire_decode_waterline(data, size, &h, &mask, v);

	if (rc != 0) {
		if (rc != SC_EINVAL ||
		    !names(sc_errmsg(), "sc_wire_decode_waterline"))
			broken("the waterline decoder refused without naming "
			       "what was wrong");
		return;
	}
	if (h.kind != SC_WIRE_WATERLINE || h.mask != mask || !mask ||
	    sc_wire_peek(data, size, &p) != 0 || p.kind != SC_WIRE_WATERLINE)
		broken("a waterline taken disagrees with its header");
	if (h.seq == 0)
		return; /* encode refuses seq 0 */
	sc_wire_buf_init(&buf);
	if (sc_wire_encode_waterline(h.edge, h.seq, h.tick, h.ncols, mask, v,
				     &buf) != 0)
		broken("a decoded waterline does not encode");
	if (buf.len != size || memcmp(buf.data, data, size) != 0)
		broken("a waterline re-encoded is not the same bytes");
	sc_wire_buf_fini(&buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sc_symtab *syms;
	struct sc_wire_rx rx;
	struct sc_wire_header h;
	struct sc_batch *b = NULL;
	int rc;

	if (sc_symtab_create(&syms) != 0 || sc_wire_rx_init(&rx, syms) != 0)
		abort();
	rc = sc_wire_decode(data, size, &rx, &h, &b);
	if (rc == 0) {
		if (!b)
			broken("decode returned 0 and no batch");
		check_taken(data, size, syms, &h, b);
		sc_batch_release(b);
	} else if (b) {
		broken("decode failed yet wrote a batch");
	} else if (rc != SC_EINVAL && rc != SC_ENOMEM && rc != SC_EOVERFLOW) {
		broken("decode returned an unexpected code");
	} else if (rc == SC_EINVAL && !names(sc_errmsg(), "sc_wire_decode")) {
		broken("decode refused without naming what was wrong");
	}
	check_waterline(data, size);
	sc_wire_rx_fini(&rx);
	sc_symtab_destroy(syms);
	return 0;
}
