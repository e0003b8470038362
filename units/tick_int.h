/*
 * tick_int.h - library-internal: tick mode, the host's side and the
 * unit's, in one place (units/tick.c).
 *
 * # Design
 *
 * What a tick is. In tick mode (sc_runtime_opts.ticks; units/runtime.h,
 * Modes) the placed circuit computes exactly what the single circuit
 * (operators/circuit.h) computes step by step: tick t of the runtime is
 * step t of the single circuit. The host's submissions between two closes
 * are that step's input; each unit steps its part once per tick, with
 * every frame of that tick and none of another, so integrate,
 * differentiate and delay (the per-tick nodes) see the same sequence of
 * steps they would in one circuit.
 *
 * How ticks travel. Every edge is a tick edge (units/edge.h, "Tick
 * edges"): its producer stamps each frame with its tick and sends a
 * marker t when every tick below t is sent (sc_edge_advance). A
 * consumer's frontier on an edge is the last marker it read.
 *
 * How the host closes a tick (sc_runtime_tick, sc_runtime_tick_try; and
 * sc_runtime_wait_idle, which closes a tick that holds submissions). The
 * open tick is host_tick. A close holds every input's lock, so no submit
 * can slip a frame of the open tick behind its marker, and is all or
 * nothing: SC_EFULL unless every live host edge has room for the marker.
 * Then it raises the horizon to host_tick + 1 (no unit steps a tick the
 * host has not closed), sends marker host_tick + 1 on every host edge and
 * kicks each replica fed, and kicks every unit fed through an ahead port
 * (it may wait on the horizon alone). A full input is waited out as a
 * full submit is (sc__rt_wait_room with workers, the host's own turns
 * without).
 *
 * How a unit takes a tick (the tick turn). A unit gathers tick `cur`: it
 * reads each input up to its next marker, round-robin, feeding the frames
 * (all of tick cur: a frame of another tick is a panic). Once every
 * input's frontier has passed cur and the horizon has too, the tick is
 * complete: the unit announces cur on every output edge (a marker: every
 * earlier tick is sent, so the outputs of the step are stamped cur), steps
 * once, sends its outputs and gathers cur + 1. An output edge that cannot
 * take the marker (its outbox or ring full) holds the step back without
 * `more`: the consumer's pop kicks the unit, so an outbox holds one tick
 * at most. A part with no per-tick node (quiet) gives nothing for an
 * empty tick, so it skips the empty ticks up to its inputs' frontier and
 * passes them on as one marker. A delay's output stream leaves a tick
 * ahead (units/subcircuit.h, "Ahead ports"): that is what lets a loop
 * through a delay cross units.
 *
 * A tick turn's budget (runtime/unit.h) bounds the frames it takes, data
 * and markers, and every tick it steps or skips counts against the same
 * budget: at most `budget` of the two together.
 *
 * The watchdog (runtime/watchdog.h) asks sc_runtime_waits what a unit
 * waits for: every turn publishes its tick and the first input short of
 * it (sc__unit_wait_read).
 *
 * Threads: the host side runs on host threads, holding every input's lock
 * where it writes host_tick; the unit side runs in the unit's turns.
 */
#ifndef SC_UNITS_TICK_INT_H
#define SC_UNITS_TICK_INT_H

#include <stdint.h>

#include "runtime/unit.h"
#include "units/subcircuit.h"

struct sc_runtime;

/* --- the host's side ------------------------------------------------------ */

/* sc__rt_horizon - the ticks the host has closed (subcircuit_desc.horizon,
 * ctx the runtime). Any thread (an acquire load). */
uint64_t sc__rt_horizon(const void *ctx);

/* sc__rt_tick_check - SC_EINVAL when tick mode meets restart policies (a
 * rebuilt unit would not know its tick); else 0. Create. */
int sc__rt_tick_check(struct sc_runtime *rt);

/*
 * sc__rt_tick_close - close the open tick, waiting for room in the host
 * edges until `deadline` (sc_clock_ns; UINT64_MAX: for ever). Returns 0
 * with the closed tick in *closed (if not NULL); SC_ETIMEDOUT; or
 * SC_ESHUTDOWN. A host thread outside any turn.
 */
int sc__rt_tick_close(struct sc_runtime *rt, uint64_t deadline,
		      uint64_t *closed);

/* --- the unit's side ------------------------------------------------------ */

/* sc__sub_tick_init - a tick-mode unit's set-up at create (every edge a
 * tick edge, tick 0 of each ahead port announced, quiet or not); nothing
 * in coalescing mode. 0 or SC_EINVAL. */
int sc__sub_tick_init(struct sc_subcircuit *s,
		      const struct sc_subcircuit_desc *d);

/* sc__sub_tick_turn - the tick turn, a sub-circuit's unit_ops.turn in
 * tick mode (see the top). */
struct sc_turn sc__sub_tick_turn(struct sc_unit *self, uint32_t budget);

#endif /* SC_UNITS_TICK_INT_H */
