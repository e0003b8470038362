/*
 * subcircuit_int.h - library-internal: the storage of a unit's figures
 * (struct sc_subcircuit_stats), which the runtime keeps beside each unit
 * so that they can be read from any thread even after the unit died and
 * the executor freed it.
 */
#ifndef SC_UNITS_SUBCIRCUIT_INT_H
#define SC_UNITS_SUBCIRCUIT_INT_H

#include <stdatomic.h>
#include <stdint.h>

#include "units/subcircuit.h"

/* Written by the unit's turns alone (a relaxed load and store each, no
 * read-modify-write), read from any thread. */
struct sc__unit_figures {
	_Atomic uint64_t turns, frames_in, rows_in, frames_out, rows_out;
	_Atomic uint64_t busy_ns;
};

/* Read them into *out. */
void sc__unit_figures_read(const struct sc__unit_figures *f,
			   struct sc_subcircuit_stats *out);

#endif /* SC_UNITS_SUBCIRCUIT_INT_H */
