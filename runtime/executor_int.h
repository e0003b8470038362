/*
 * executor_int.h - test hooks into the executor. Internal to runtime/ and
 * its tests.
 */
#ifndef SC_RUNTIME_EXECUTOR_INT_H
#define SC_RUNTIME_EXECUTOR_INT_H

#include "runtime/executor.h"

/*
 * sc__exec_wake_all - wake every parked worker with nothing queued: a
 * spurious wake-up on demand, to show that no worker leaves on one.
 */
void sc__exec_wake_all(struct sc_exec *ex);

#endif /* SC_RUNTIME_EXECUTOR_INT_H */
