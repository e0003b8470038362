/*
 * subcircuit_int.h - library-internal: the storage of a unit's figures
 * (struct sc_subcircuit_stats), which the runtime keeps beside each unit
 * so that they can be read from any thread even after the unit died and
 * the executor freed it.
 */
#ifndef SC_UNITS_SUBCIRCUIT_INT_H
#define SC_UNITS_SUBCIRCUIT_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "units/subcircuit.h"

/* Written by the unit's turns alone (a relaxed load and store each, no
 * read-modify-write), read from any thread. */
struct sc__unit_figures {
	_Atomic uint64_t turns, frames_in, rows_in, frames_out, rows_out;
	_Atomic uint64_t busy_ns;
	/* Tick mode: the tick the unit gathers, the first input edge whose
	 * frontier has not passed it (NULL: none) and that frontier, as the
	 * last turn left them (sc__unit_wait_read), for a watchdog. */
	_Atomic uint64_t wait_tick, wait_front;
	_Atomic(struct sc_edge *) wait_edge;
};

/* Read them into *out. */
void sc__unit_figures_read(const struct sc__unit_figures *f,
			   struct sc_subcircuit_stats *out);

/* The wait the unit's last turn published (tick mode): false when it
 * waits on no edge, or when the words were being rewritten (the tick read
 * before and after differ: look again later). Any thread. */
bool sc__unit_wait_read(const struct sc__unit_figures *f, uint64_t *tick,
			uint64_t *front, struct sc_edge **edge);

#endif /* SC_UNITS_SUBCIRCUIT_INT_H */
