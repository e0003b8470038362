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
};

extern __attribute__((
    tls_model("initial-exec"))) _Thread_local struct sc__guard *sc__guard_top;

/*
 * sc__fault_unblock - unblock SIGSEGV, SIGBUS and SIGFPE on this thread.
 * The guard calls it after a jump back from a caught fault, so that the
 * next fault in a guard reaches the handler even if the unit had blocked
 * them (a blocked fault signal kills the process). Not on the fast path.
 */
void sc__fault_unblock(void);

#endif /* SC_RUNTIME_PANIC_INT_H */
