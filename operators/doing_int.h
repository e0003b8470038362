/*
 * doing_int.h - what the thread's turn is doing now: which operator, and
 * whether it steps, grows a hash table, merges a trace, sorts or emits.
 * Library internal.
 *
 * Why. A live workload is judged by its slowest answers, and a turn of
 * 30-75 ms is one operator doing one thing: a hash table growing, a trace
 * merging, a sort, a callback. A watchdog that reports the stall, or a
 * trace that shows the turn, should name it; but the operators that do
 * those things (rowhash.c, trace.c, batch_sort.c) know neither their node
 * nor their unit, and operators/ reaches neither runtime/ nor units/.
 *
 * How. The word is caller storage (struct sc__doing), owned by whoever
 * runs turns (a unit keeps it in its figures, where a monitor thread can
 * read it). sc__doing_begin makes it the thread's current word; while it
 * is, the circuit names each node as its step reaches it
 * (sc__doing_node) and the deep operators mark what they do around the
 * expensive part (sc__doing_act ... sc__doing_back), keeping the node.
 * sc__doing_end clears it. Outside a begin/end pair every mark is a
 * thread-local load and a branch: no clock, no lock, no allocation.
 * Inside, a mark is one relaxed load and one relaxed store of the word,
 * which any thread may read (sc__doing_read) and decode into a node id
 * and an activity name.
 *
 * Timed phases. A begin with `timed` also reads the clock at every mark
 * (two reads per node and per deep mark: too dear for every turn, fine
 * for a turn a timeline records) and keeps the longest phase, the longest
 * stretch of time the word held one value, for the owner to read at the
 * end (struct sc__doing's long_*). A phase is a stretch, not a sum: a
 * step that a growth interrupts counts as two phases of the step.
 *
 * Threads: the word (atomic) is read from any thread; everything else is
 * the owner's, the thread between begin and end. A turn that panics
 * never reaches its end: the panic's jump calls sc__doing_drop, so that
 * the thread keeps no pointer to a dead unit's word.
 */
#ifndef SC_DOING_INT_H
#define SC_DOING_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a turn does. The values are the low byte of a word. */
enum sc__act {
	SC__ACT_NONE = 0,   /* nothing published (outside a turn) */
	SC__ACT_STEP = 1,   /* an operator's step: its own computation */
	SC__ACT_GROW = 2,   /* a hash table grows (rowhash reserve) */
	SC__ACT_MERGE = 3,  /* a trace's runs merge (merge work) */
	SC__ACT_SORT = 4,   /* a batch is sorted and consolidated */
	SC__ACT_OUTPUT = 5, /* output: a delta callback, or a unit sending */
	SC__ACT_COUNT = 6   /* how many there are */
};

/* A word: (node id + 1) << 8 | activity; node id -1 is none (the unit's
 * own work, outside any operator); 0 is nothing at all. */
#define SC__DOING_ACT_MASK ((uint64_t)0xff)

struct sc__doing {
	_Atomic uint64_t word; /* published: what the thread does now */
	/* The owner's, between begin and end: */
	bool timed;	     /* marks read the clock */
	uint32_t seen;	     /* timed: 1 << activity of every mark */
	uint64_t since;	     /* timed: when the word took its value */
	uint64_t long_word;  /* timed: the longest phase's word; 0: none */
	uint64_t long_start; /* timed: when it began (sc_clock_ns) */
	uint64_t long_ns;    /* timed: how long it lasted */
};

/* The thread's current word, or NULL outside a turn that publishes one.
 * initial-exec: one load off the thread pointer, as sc__locks_held. */
extern __attribute__((
    tls_model("initial-exec"))) _Thread_local struct sc__doing *sc__doing_now;

/* The word of `node` (a graph node id, or -1 for none) doing `act`. */
static inline uint64_t
sc__doing_word(int node, enum sc__act act)
{
	return ((uint64_t)(uint32_t)(node + 1) << 8) | (uint64_t)act;
}

/* The node id a word names, or -1 for none. */
static inline int
sc__doing_word_node(uint64_t w)
{
	return (int)(uint32_t)(w >> 8) - 1;
}

/* The activity a word names. */
static inline enum sc__act
sc__doing_word_act(uint64_t w)
{
	return (enum sc__act)(w & SC__DOING_ACT_MASK);
}

/* "step", "grow", "merge", "sort", "output"; "none" for SC__ACT_NONE and
 * anything unknown (static). */
const char *sc__doing_act_name(enum sc__act act);

/* Out of line: a timed mark (clock, longest phase, then the store). */
void sc__doing_timed(struct sc__doing *d, uint64_t w);

static inline void
sc__doing_store(struct sc__doing *d, uint64_t w)
{
	if (__builtin_expect(d->timed, 0))
		sc__doing_timed(d, w);
	else
		atomic_store_explicit(&d->word, w, memory_order_relaxed);
}

/*
 * sc__doing_begin - make d the thread's current word for a turn, with
 * the value w (sc__doing_word; 0 for nothing yet). `timed`: keep the
 * longest phase (see the top), its clock starting at now_ns (sc_clock_ns).
 * The owner's thread; there is one current word per thread (no nesting).
 */
void sc__doing_begin(struct sc__doing *d, uint64_t w, bool timed,
		     uint64_t now_ns);

/*
 * sc__doing_end - close the turn: a timed one counts its last phase; the
 * word goes back to 0 and the thread has no current word. The owner's
 * thread, after its begin.
 */
void sc__doing_end(struct sc__doing *d);

/* Forget the thread's current word without touching it (a panic's jump:
 * the word may belong to a unit about to die). Async-signal-safe. */
static inline void
sc__doing_drop(void)
{
	sc__doing_now = NULL;
}

/* The circuit: node `node` begins `act`. A no-op outside a turn. */
static inline void
sc__doing_node(int node, enum sc__act act)
{
	struct sc__doing *d = sc__doing_now;

	if (d)
		sc__doing_store(d, sc__doing_word(node, act));
}

/*
 * sc__doing_act - an operator begins `act` for the node the word names.
 * Returns the word to give back to sc__doing_back when it is done (0
 * outside a turn). A no-op outside a turn.
 */
static inline uint64_t
sc__doing_act(enum sc__act act)
{
	struct sc__doing *d = sc__doing_now;
	uint64_t was;

	if (!d)
		return 0;
	was = atomic_load_explicit(&d->word, memory_order_relaxed);
	sc__doing_store(d, (was & ~SC__DOING_ACT_MASK) | (uint64_t)act);
	return was;
}

/* Back to what sc__doing_act returned. */
static inline void
sc__doing_back(uint64_t was)
{
	struct sc__doing *d = sc__doing_now;

	if (d && was)
		sc__doing_store(d, was);
}

/* What d's word says now. Any thread (a relaxed load). */
static inline uint64_t
sc__doing_read(const struct sc__doing *d)
{
	return atomic_load_explicit(&d->word, memory_order_relaxed);
}

#endif /* SC_DOING_INT_H */
