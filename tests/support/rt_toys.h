/*
 * rt_toys.h - toy units for testing runtime/ without Z-sets.
 *
 * A toy network is counter units passing tokens over bounded SPSC ring
 * buffers ("edges", with atomic counts, so has_pending is lock-free):
 *
 *   chain:  host -> [u0] -> [u1] -> ... -> [u(n-1)]   (the last is a sink)
 *   ring:   [u0] -> [u1] -> ... -> [u(n-1)] -> [u0]   (tokens pre-loaded)
 *
 * A token is (id << 16 | hops). A unit forwards a token with hops-1; a
 * token with 0 hops, or one reaching the chain's sink, is retired: the
 * network counts it in seen[id]. rt_net_check then says whether every
 * token arrived exactly once (nothing lost, nothing duplicated), and the
 * chain's sink also asserts FIFO order inside its turn (a panic if not).
 *
 * The toys follow unit.h's rules: a turn stops at its budget and says
 * `more` only if it has input it could still handle; a full output edge is
 * not `more`; neighbours names the units across edges that moved.
 *
 * Ownership: the executor owns the units (their destroy frees only the unit
 * struct); the network owns the edges and the counts. Destroy the executor
 * first, then the network.
 *
 * Also here: the probe, a unit whose turn result is scripted by the test.
 */
#ifndef SC_TEST_RT_TOYS_H
#define SC_TEST_RT_TOYS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/executor.h"

#define RT_HOST	    UINT32_MAX /* the host's end of an edge */
#define RT_EDGE_MAX 64	       /* largest edge capacity */

/* A bounded single-producer single-consumer queue of tokens. */
struct rt_edge {
	_Atomic uint64_t head;		   /* tokens taken (consumer writes) */
	_Atomic uint64_t tail;		   /* tokens pushed (producer writes) */
	uint32_t cap;			   /* capacity, 1..RT_EDGE_MAX */
	uint32_t producer;		   /* unit id or RT_HOST */
	uint32_t consumer;		   /* unit id */
	_Atomic uint64_t buf[RT_EDGE_MAX]; /* the ring (relaxed slots) */
};

bool rt_edge_push(struct rt_edge *e, uint64_t tok); /* false when full */
bool rt_edge_full(const struct rt_edge *e);
bool rt_edge_empty(const struct rt_edge *e);
uint32_t rt_edge_len(const struct rt_edge *e);

/* Knobs a test sets on one toy before running (faults to inject). */
struct rt_toy_faults {
	uint64_t panic_at_turn; /* panic in this turn (1-based); 0: never */
	uint64_t segv_at_turn;	/* write to a bad address in this turn */
	bool panic_in_destroy;	/* destroy panics (after freeing) */
};

struct rt_net;

/* A chain of `units` toys (>= 1), edges of capacity `cap`, `tokens` tokens
 * that the host feeds into u0. Units get ids first..first+units-1. */
int rt_chain_create(struct sc_exec *ex, uint32_t units, uint32_t cap,
		    uint32_t tokens, struct rt_net **out);

/* A ring of `units` toys (>= 1); `tokens` tokens (fewer than units * cap)
 * pre-loaded round robin, each with a seeded number of hops in
 * [0, max_hops]; every unit is kicked once by rt_net_start. */
int rt_ring_create(struct sc_exec *ex, uint32_t units, uint32_t cap,
		   uint32_t tokens, uint32_t max_hops, uint64_t seed,
		   struct rt_net **out);

/* Kick what must be kicked at the start (a ring: every unit). */
int rt_net_start(struct rt_net *net, struct sc_exec *ex);

/* The sim's host callback (ctx = the net): push a seeded number of the
 * chain's remaining tokens into u0's edge and kick u0. True while tokens
 * remain. A ring has no host input (returns false at once). */
bool rt_net_host_step(void *ctx, struct sc_exec *ex, uint64_t rnd);

/* For real threads: feed every remaining token, waiting (yielding) while
 * u0's edge is full. Returns 0 or a kick's error. */
int rt_net_feed_all(struct rt_net *net, struct sc_exec *ex);

/* True when every token was retired exactly once; else false with the
 * first problem in why. */
bool rt_net_check(const struct rt_net *net, char *why, size_t len);

/* After a panic: true when no token was retired twice and every token is
 * either retired or still in an edge (nothing lost, nothing duplicated);
 * else false with the problem in why. Only when nothing runs. */
bool rt_net_check_conserved(const struct rt_net *net, char *why, size_t len);

/* Tokens retired so far (all ids, with repeats). */
uint64_t rt_net_retired(const struct rt_net *net);

/* The executor id of toy i, its faults, its turns so far. */
uint32_t rt_net_id(const struct rt_net *net, uint32_t i);
struct rt_toy_faults *rt_net_faults(struct rt_net *net, uint32_t i);
uint64_t rt_net_turns(const struct rt_net *net, uint32_t i);
struct rt_edge *rt_net_edge_in(struct rt_net *net, uint32_t i);

/* Set edge i's capacity (1..RT_EDGE_MAX) before anything runs. */
void rt_net_set_cap(struct rt_net *net, uint32_t i, uint32_t cap);

/* Free the edges and counts; the executor must be destroyed already. */
void rt_net_destroy(struct rt_net *net);

/* --- the probe: a scripted unit --------------------------------------- */

struct rt_probe {
	struct sc_unit unit;   /* first member */
	char name[16];	       /* "probe<k>" */
	struct sc_turn result; /* what the next turns return */
	uint32_t nbrs[8];      /* neighbours named after progress */
	uint32_t n_nbrs;
	uint32_t peers[8]; /* what peers answers (its death kicks) */
	uint32_t n_peers;
	size_t claim_nbrs;	/* nonzero: neighbours answers this count (a
				   lie), writing n_nbrs ids */
	_Atomic uint64_t turns; /* turns run */
	_Atomic bool pending;	/* what has_pending answers */
	void (*on_turn)(struct rt_probe *p, void *ctx); /* called in turn */
	void *ctx;
	_Atomic int *destroyed; /* incremented by destroy, if set */
};

/* A probe with default result {0, false}; added to ex; *id its id. The
 * executor owns it. */
struct rt_probe *rt_probe_add(struct sc_exec *ex, uint32_t *id);

#endif /* SC_TEST_RT_TOYS_H */
