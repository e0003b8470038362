/*
 * symbol.h - interned strings: a thread-safe table from text to a u64 id.
 *
 * A symbol column stores the id of an interned string, so a row stays
 * fixed width and compares as words. SYMBOLS COMPARE BY ID, NOT
 * ALPHABETICALLY: ids are handed out in order of first interning (and
 * freed ids are reused), so the order of a symbol column, and any min or
 * max over it, says nothing about the text.
 *
 * Memory follows the live state, not the history: every id carries a
 * reference count. sc_symtab_intern returns an id with one reference that
 * the caller owns; sc_symtab_retain adds one, sc_symtab_release drops one,
 * and when the count reaches zero the text is freed and the id may be
 * handed out again for another string. Whoever keeps an id (a trace, a
 * batch in flight) must hold a reference for as long as it keeps it;
 * a caller that never releases simply gets an append-only table.
 *
 * Who holds an id. A circuit (circuit.h) holds the ids of the rows it
 * keeps, in the table its schemas name (schema.h's `symbols`; a schema
 * that names no table gets no holds): every trace, those of the stateful
 * kernels and of materialized outputs, holds one reference per symbol
 * word of each entry of each of its runs; the batch integrate,
 * differentiate and delay keep holds its words; a fed batch holds its
 * words from sc_circuit_feed until the tick after the one that emitted it
 * (sc_circuit_feed refuses, SC_ENOENT, a batch with an id that is not live
 * then). So a host may release its own reference as soon as it has fed
 * the row: the id lives while any row holding it lives, and the last one
 * gone (a trace merge that cancels it, an output's retraction merged in)
 * frees it, and only then may the id name another string. Ids in a batch
 * the circuit hands out (a delta, an integral) are live while the circuit
 * still holds them: until its next step for a delta, for ever for an
 * integral's rows the state still has; retain an id to keep its text
 * longer. A runtime (units/runtime.h) holds what its circuits keep, and
 * every edge holds the ids of each frame it has accepted until the frame
 * leaves it (units/edge_int.h): fed to the consumer's circuit (whose
 * fed frame takes the edge's holds over), summed into the outbox (the sum
 * holds before the parts let go), drained or refused by a dead consumer,
 * or dropped at destroy; a restartable edge's trace (the integral a
 * rebuild is fed) holds the runs it keeps as a circuit's trace does. So
 * under a runtime too the host may release its ids as soon as
 * sc_runtime_submit (or submit_wait) returned 0; a submit refused
 * (SC_EFULL, SC_ENOENT for an id not live, ...) took no hold, and the id
 * is still the host's to keep until a retry succeeds. Frames between units
 * are held as well, because the obvious argument that they need not be
 * (the producer's state holds their rows, or they retract rows the
 * consumer still holds) is false: a stateless producer (a map, a filter,
 * an input's own unit) holds its delta only until its next step, which may
 * run before the consumer's turn takes the frame; the test that holds only
 * the host's edges names fewer strings than it submitted (299 of 300 in
 * one run) (tests/units/test_runtime_symbols.c). The cost is one hold and
 * one unhold per symbol word per frame crossing an edge, under the table's
 * locks: the hold at the send, the unhold once the consumer's tick that
 * took the frame is over (frames a step sums keep their holds for their
 * sum, which takes none); edges of schemas without symbols pay nothing. A map
 * or flat_map callback that makes new ids keeps its references until the step
 * is over (the rows it emits are held only once a keeper takes them).
 *
 * Why holds where rows are kept, and what they cost. The options were
 * reference counts taken by every batch (exact for batches in flight too,
 * but a count change per row per batch built, on the hot path of every
 * operator), a sweep from the live traces (no cost per row, but it must
 * see every circuit sharing the table stopped at once, which a running
 * runtime never is), or a table per runtime (no cost, but an append-only
 * table: Nexmark's unique urls would never be given back). Holds taken by
 * the keepers cost one count change per symbol word of each row a trace
 * or kept batch takes in and one per entry a merge adds up or cancels
 * (the merge notes those pairs; rows it merely moves cost nothing). On
 * bench/bench_symbols.c (bids with a unique url each, joined with
 * auctions, counted per name and made distinct, every bid retracted 20
 * ticks later) that is 452M instructions against 367M with no holds
 * (+23%, callgrind, --quick) and 0.78-0.81 of the throughput; a table
 * per run keeps 400,500 ids (47 MB) at the end where holds keep 24,500
 * (2.9 MB): the 20,500 the state has and the entries whose cancellation
 * the spines had not merged yet.
 *
 * Design: the table is 16 shards, picked by bits of the text's hash,
 * each an open-addressing hash table (text -> local id, linear probing,
 * tombstones on removal; each slot keeps 32 bits of the hash beside the
 * local id, so a probe past another text touches neither its entry nor
 * its text) and an array of entries indexed by local id, behind a mutex of
 * its own. An id is its local id times 16 plus its shard, so a call given
 * an id goes to its shard without hashing. Interning hashes the text once
 * (eight bytes a step) and takes one shard's mutex: threads interning
 * different texts mostly take different locks. The holds of kept rows
 * (symbol_int.h) and sc_symtab_release_ids take every shard's mutex once
 * for a whole batch. Id 0 is never handed out, so a zero word is never a
 * valid symbol; ids stay below 2^32. Text is freed as soon as its id dies;
 * the arrays keep the size of the largest live set seen (16 bytes of slots
 * and 32 of entry per live id at the high-water mark, per shard), since
 * freed ids are reused rather than compacted.
 *
 * Faults: no call reads or writes the caller's memory while it holds the
 * mutexes. The text is copied and hashed first (on the stack below 256
 * bytes, else into the heap copy a new symbol keeps), and the results are
 * written after the mutex is given back; so a bad pointer passed from a
 * unit's callback faults with no lock held, that unit panics (with
 * catch_faults, runtime/panic.h), and every later call still completes.
 * A known string of 256 bytes or more costs a malloc and a free per
 * intern or find for that copy.
 */
#ifndef SC_SYMBOL_H
#define SC_SYMBOL_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stddef.h>
#include <stdint.h>

#include "operators/error.h"

struct sc_symtab;

/* No symbol: a word that is never a valid id. */
#define SC_SYMBOL_NONE 0u

/*
 * sc_symtab_create - a new empty table. Returns 0 and writes *out, or
 * SC_EINVAL (out NULL) / SC_ENOMEM. One thread creates it; afterwards any
 * thread may call the functions below concurrently.
 */
int sc_symtab_create(struct sc_symtab **out);

/*
 * sc_symtab_destroy - free the table and every string in it, whatever
 * their counts. No other thread may be using it. NULL is allowed.
 */
void sc_symtab_destroy(struct sc_symtab *t);

/*
 * sc_symtab_intern - the id of the `len` bytes at `text` (any bytes,
 * including NUL; len 0 is the empty string), interning them if new. The
 * caller owns one reference on the returned id. Returns 0 and writes *id,
 * or SC_EINVAL (t, id NULL, or text NULL with len > 0), SC_ENOMEM or
 * SC_EOVERFLOW (the id's count would wrap). Thread safe.
 */
int sc_symtab_intern(struct sc_symtab *t, const char *text, size_t len,
		     uint64_t *id);

/* sc_symtab_intern_cstr - sc_symtab_intern of a NUL-terminated string. */
int sc_symtab_intern_cstr(struct sc_symtab *t, const char *text, uint64_t *id);

/*
 * sc_symtab_find - the id of `text` if it is interned, without taking a
 * reference. Returns 0 and writes *id, SC_ENOENT if absent, SC_EINVAL, or
 * SC_ENOMEM (no memory to copy a text of 256 bytes or more).
 */
int sc_symtab_find(struct sc_symtab *t, const char *text, size_t len,
		   uint64_t *id);

/*
 * sc_symtab_lookup - the text of a live id. Writes *text (NUL-terminated,
 * owned by the table) and, if len is not NULL, *len. The pointer stays
 * valid while the caller (or anyone) holds a reference on the id. Returns
 * 0, SC_ENOENT (id not live) or SC_EINVAL. Thread safe.
 */
int sc_symtab_lookup(struct sc_symtab *t, uint64_t id, const char **text,
		     size_t *len);

/*
 * sc_symtab_retain - add a reference to a live id. Returns 0, SC_ENOENT
 * (not live), SC_EOVERFLOW or SC_EINVAL. Thread safe.
 */
int sc_symtab_retain(struct sc_symtab *t, uint64_t id);

/*
 * sc_symtab_release - drop a reference; the last one frees the text and
 * makes the id reusable. Returns 0, SC_ENOENT (not live) or SC_EINVAL.
 * Thread safe.
 */
int sc_symtab_release(struct sc_symtab *t, uint64_t id);

/*
 * sc_symtab_release_ids - sc_symtab_release of each of ids[0..n) (an id
 * twice: two references), under one pass. Returns 0, SC_ENOENT (some ids
 * were not live: skipped, the message counts them and names the first;
 * every live one was released) or SC_EINVAL (t NULL, or ids NULL with
 * n > 0). Thread safe.
 */
int sc_symtab_release_ids(struct sc_symtab *t, const uint64_t *ids, size_t n);

/* sc_symtab_count - how many ids are live now. Thread safe. */
size_t sc_symtab_count(struct sc_symtab *t);

/*
 * sc_symtab_refs - the reference count of an id (0 if not live), for
 * tests and leak checks. Thread safe.
 */
uint64_t sc_symtab_refs(struct sc_symtab *t, uint64_t id);

/* sc_symtab_bytes - bytes the table holds now (entries, hash, text). */
size_t sc_symtab_bytes(struct sc_symtab *t);

#ifdef __cplusplus
}
#endif

#endif /* SC_SYMBOL_H */
