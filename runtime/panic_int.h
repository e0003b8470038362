/*
 * panic_int.h - the guard record shared by panic.c and the fault handler
 * (fault_posix.c). Internal to runtime/.
 */
#ifndef SC_RUNTIME_PANIC_INT_H
#define SC_RUNTIME_PANIC_INT_H

#include <setjmp.h>

#include "runtime/panic.h"

struct sc__guard {
	sigjmp_buf env;		     /* where a panic jumps */
	struct sc_panic_record *rec; /* where its message goes */
	struct sc__guard *outer;     /* the guard to restore (nesting) */
	const void *owner; /* the executor whose turn this guards, or NULL
			    * (executor.c's sc_exec_in_turn reads it) */
};

extern __attribute__((
    tls_model("initial-exec"))) _Thread_local struct sc__guard *sc__guard_top;

#endif /* SC_RUNTIME_PANIC_INT_H */
