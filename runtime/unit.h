/*
 * unit.h - what the executor schedules: a unit, behind a small vtable.
 *
 * A unit is a synchronous piece of work with edge ends around it (in
 * subcirc, a sub-circuit; in the tests, a toy counter). The executor never
 * looks inside: it calls turn() on a worker that owns the unit for that
 * turn, asks neighbours() whom the turn's traffic concerns, asks peers()
 * whom its death concerns, and calls destroy() once. runtime/ knows
 * nothing of Z-sets or of edges.
 *
 * Rules a turn must follow (README.md, "The unit protocol"), each pinned by a
 * test in tests/runtime/test_executor.c:
 *  - It takes at most `budget` frames from its input edges (see The
 *    budget) and returns how many frames it moved (progress). Progress is
 *    a count of frames, never "I ran", so two units that kick each other
 *    on progress stop once the frames are gone.
 *  - It says `more` when it stopped at its budget with input left that it
 *    could still handle: kicks coalesce into one queue entry, so a unit must
 *    drain what one kick announced.
 *  - A full output edge is NOT `more`: the sender would spin through the
 *    queue while its consumer is not running. The consumer's progress kicks
 *    the sender back instead.
 *
 * The budget. One meaning, in every mode and for every unit kind: a
 * turn's `budget` is the most frames it takes from its input edges in
 * that turn, where a frame is one pop of an edge (a delta, or in tick
 * mode a tick marker: units/edge.h, "Tick edges"). It bounds how long a
 * turn keeps its worker from the other units, and is what `more` is
 * measured against. A unit may count other work against the same
 * budget, never less than its frames:
 *  - a coalescing sub-circuit counts its frames only; it steps once for
 *    all of them (units/subcircuit.h, "A turn");
 *  - a tick-mode sub-circuit counts every tick it steps or skips as well,
 *    so frames and ticks together stay within the budget (units/tick_int.h),
 *    since one marker may complete many ticks;
 *  - a unit that takes no frame (another rank's proxy,
 *    units/runtime_remote.c) is within any budget.
 * When a caller's options say 0, the budget is SC_UNIT_BUDGET_DEFAULT
 * (sc_unit_budget): the runtime's, the pool's and the executor's turns
 * alike. The seeded scheduler (runtime/sim.h) draws small budgets instead,
 * to explore turns that stop at their budget.
 *
 * Death. A unit that dies (a panic, a condemned turn) is never run again,
 * so it cannot say whom its last turn touched; yet that turn may have sent
 * frames (an outbox flushed before the panic) or freed room. So the
 * executor asks peers() for every unit across any of its edges, runs
 * destroy() (which closes its input edges), and then kicks every peer: a
 * consumer takes what the dying turn sent, a producer sees its edge closed
 * and drops what waited for room. Death is handled there, in one place;
 * a unit holds no executor pointer and may be destroyed in any order.
 *
 * Threads: turn, neighbours, peers and destroy are called by whichever
 * thread owns the unit at that moment, one at a time, never concurrently
 * with each other. has_pending may be called at any time from another thread
 * (the watchdog's monitor), concurrently with a turn. name is called once, when
 * the unit is added.
 */
#ifndef SC_RUNTIME_UNIT_H
#define SC_RUNTIME_UNIT_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest unit name the executor keeps (including the NUL). */
#define SC_UNIT_NAME_MAX 48

/* A turn's budget when the caller's options say 0: frames taken from the
 * input edges per turn (see The budget). Large enough that a turn's fixed
 * costs (the claim, the flush, one step) are spread over many frames,
 * small enough that one unit's backlog does not hold a worker for long. */
#define SC_UNIT_BUDGET_DEFAULT 64

/* sc_unit_budget - `budget`, or SC_UNIT_BUDGET_DEFAULT for 0: the budget
 * every caller that runs turns gives them. */
static inline uint32_t
sc_unit_budget(uint32_t budget)
{
	return budget ? budget : SC_UNIT_BUDGET_DEFAULT;
}

/* What one turn did. */
struct sc_turn {
	uint32_t progress; /* frames moved in this turn (taken or sent) */
	bool more;	   /* stopped at the budget with input left it could
			      still handle: queue me again */
};

struct sc_unit;

struct sc_unit_ops {
	/*
	 * turn - take at most `budget` frames from the input edges
	 * (budget >= 1; see The budget). May panic
	 * (sc_panic, SC_UNIT_ASSERT, sc_xmalloc): the unit then dies and is
	 * never called again except for destroy.
	 */
	struct sc_turn (*turn)(struct sc_unit *self, uint32_t budget);

	/*
	 * neighbours - the ids of the units across every edge whose traffic
	 * moved in the turn just run, in either direction (a consumer that
	 * freed room names its producer; a producer that sent names its
	 * consumer). Listing a neighbour whose edge did not move is allowed
	 * (it costs a kick), missing one is a lost kick. The executor calls
	 * it right after a turn with progress > 0, on the same thread, before
	 * the unit is handed back; never after a turn with progress 0.
	 *
	 * Writes at most `max` ids into `out` and returns how many there are
	 * in total; if that is more than `max`, the executor grows its buffer
	 * and calls again (so the answer must not change between the two
	 * calls). Ids are the executor's (sc_exec_add); naming an id that
	 * does not exist kills the unit like a panic.
	 */
	size_t (*neighbours)(struct sc_unit *self, uint32_t *out, size_t max);

	/*
	 * has_pending - whether the unit holds input it could act on now
	 * (a turn now would report progress). For the lost-kick watchdog: an
	 * idle unit for which this stays true is a kick that was lost. It
	 * must be safe from any thread at any time while the unit is alive,
	 * concurrently with its own turn: it reads only atomics (an edge's
	 * counts), takes no lock, allocates nothing, never panics. A
	 * transient true is normal (a consumer just freed room and has not
	 * finished yet); only a true that persists while idle is a bug. May
	 * be NULL (then the unit never reports pending input).
	 */
	bool (*has_pending)(const struct sc_unit *self);

	/* name - a short name for logs and panics; copied at sc_exec_add. */
	const char *(*name)(const struct sc_unit *self);

	/*
	 * destroy - free the unit. Called once: by sc_exec_destroy for a live
	 * unit, or by the worker that abandoned a panicked one (inside a
	 * panic guard, so a destroy that panics does not kill the worker).
	 */
	void (*destroy)(struct sc_unit *self);

	/*
	 * peers - the ids of every unit across any edge of this one, in
	 * either direction, whether or not its traffic moved: the units whose
	 * edges this unit's death concerns. Asked only when the unit dies,
	 * before destroy, on the owner's thread, inside a panic guard; the
	 * executor kicks them all after destroy (see Death above). The unit
	 * may have panicked half-way through a turn, so the answer must come
	 * from what does not change after the unit is built. Same buffer
	 * protocol as neighbours: at most `max` ids into `out`, the total
	 * returned, asked again with a larger buffer if that is more than
	 * `max`. Naming itself, a dead unit or an id that does not exist is
	 * harmless (skipped). May be NULL, for a unit with no edges to other
	 * units: then its death kicks only the neighbours of a condemned turn
	 * (one that returned and said whom it touched).
	 */
	size_t (*peers)(struct sc_unit *self, uint32_t *out, size_t max);
};

/* Embed this as the first member of a unit (or find the unit from it with
 * container_of arithmetic). */
struct sc_unit {
	const struct sc_unit_ops *ops; /* never NULL; turn, neighbours, name and
					  destroy must be set (has_pending
					  and peers may be NULL) */
};

#ifdef __cplusplus
}
#endif

#endif /* SC_RUNTIME_UNIT_H */
