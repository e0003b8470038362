/*
 * panic.h - a panic kills the unit whose turn raised it, and nothing else.
 *
 * C has no unwinding, so a panic is a siglongjmp to a guard: the worker
 * runs each turn (and the neighbours call after it, and a dead unit's
 * destroy) through sc_panic_guard(), which sigsetjmps into a per-thread
 * slot. sc_panic() formats its message into that guard and jumps back; the
 * guard returns SC_EPANIC with the message, and the executor buries the
 * unit (sc_exec_abandon). A panic raised outside any guard prints its
 * message and aborts: there is nobody to hand it to.
 *
 * Why sigsetjmp(env, 0): saving the signal mask is a system call on every
 * turn. Instead the fault handler (below), before it jumps, sets the mask
 * back to the faulting code's own, less SIGSEGV, SIGBUS and SIGFPE (one
 * system call, only on a fault), so the handler stays armed for the next
 * turn's fault whatever ran it (a sanitizer's wrapper blocks signals
 * around a handler) and whatever the unit did to its mask.
 *
 * Hard faults (optional, sc_panic_catch_faults): SIGSEGV, SIGBUS and SIGFPE
 * made by the kernel for a fault of a turn (si_code > 0), on a thread that
 * enabled it, become a panic of that unit.
 * The handler runs on a per-thread alternate signal stack (sigaltstack), so
 * a stack overflow can be caught too, and siglongjmps to the guard. What it
 * cannot promise:
 *  - the unit's state is whatever the fault left: it is dead and only its
 *    destroy runs, which may itself fault (then it is leaked and recorded);
 *  - a lock the turn held stays held, and memory it allocated leaks; a fault
 *    inside malloc or stdio may leave those locked for the whole process;
 *  - a fault (or an sc_panic) while the thread holds a lock of subcirc
 *    itself (operators/base_int.h, sc__lock_depth) is not recovered, since
 *    the lock would hang its next taker: the process prints "fault inside
 *    subcirc while holding a lock: cannot recover" and dies by the signal
 *    (an sc_panic aborts). subcirc's locked code never touches the
 *    caller's memory, so only a bug of subcirc gets there;
 *  - the jump out of a signal handler is not async-signal-safe in general;
 *    it is sound only because the fault is synchronous and the handler
 *    touches nothing but the guard's own storage (no snprintf there);
 *  - a fault outside a guard, on a thread that did not enable catching, or
 *    any of the three signals sent rather than made by a fault (kill,
 *    raise, sigqueue: si_code <= 0, even inside a guard) is handed to the
 *    previous disposition, as if no handler were there: a previous handler
 *    is called; SIG_IGN ignores a sent signal; SIG_DFL (or SIG_IGN for a
 *    real fault) ends the process by that signal. The handler stays
 *    installed whenever the process goes on.
 *
 * Threads: every guard and every flag here is per thread.
 */
#ifndef SC_RUNTIME_PANIC_H
#define SC_RUNTIME_PANIC_H

#ifdef __cplusplus
extern "C" {
#endif

/* C11's _Noreturn is spelled [[noreturn]] in C++. */
#ifndef SC_NORETURN
#ifdef __cplusplus
#define SC_NORETURN [[noreturn]]
#else
#define SC_NORETURN _Noreturn
#endif
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/unit.h"

/* The longest panic message kept (including the NUL); longer is cut. */
#define SC_PANIC_MSG_MAX 256

/* What a panic left behind. The executor fills unit, name and worker. */
struct sc_panic_record {
	uint32_t unit;			/* the unit's id */
	char name[SC_UNIT_NAME_MAX];	/* the unit's name, copied */
	char message[SC_PANIC_MSG_MAX]; /* sc_panic's message, or the fault */
	int32_t worker;			/* the worker that ran it; -1 for the
					   host or the sim */
	int signo;			/* 0, or the signal of a caught fault */
	bool in_destroy;		/* the panic came from the destroy of an
					   already dead unit */
};

/*
 * sc_panic - abandon the current turn with a formatted message. Jumps to
 * the innermost guard on this thread; with no guard, prints the message to
 * stderr and aborts. Never returns.
 */
SC_NORETURN void sc_panic(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/*
 * SC_UNIT_ASSERT - inside a turn: panic with the condition, the place and a
 * formatted message when cond is false. Always on (not tied to NDEBUG).
 */
#define SC_UNIT_ASSERT(cond, ...)                                              \
	do {                                                                   \
		if (!(cond))                                                   \
			sc__assert_fail(#cond, __FILE__, __LINE__,             \
					__VA_ARGS__);                          \
	} while (0)

SC_NORETURN void sc__assert_fail(const char *cond, const char *file, int line,
				 const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/*
 * sc_xmalloc - malloc that panics instead of returning NULL. Inside a
 * guarded turn that kills the unit; outside any guard it aborts. Returns
 * memory the caller frees with free(). size 0 allocates 1 byte.
 */
void *sc_xmalloc(size_t size);

/*
 * sc_panic_guard - run fn(arg) under a guard on this thread. Returns 0 when
 * fn returned; SC_EPANIC when it panicked (or faulted, with catching on),
 * with the message in rec->message and rec->signo set, the other fields of
 * rec untouched. Guards nest: a panic goes to the innermost one.
 *
 * fn must not leave a lock held or a resource half made when it may panic;
 * in runtime/ only unit code runs under a guard, and no executor lock is
 * ever held there.
 */
int sc_panic_guard(void (*fn)(void *arg), void *arg,
		   struct sc_panic_record *rec);

/*
 * sc_panic_guarded - whether this thread is inside a guard now.
 */
bool sc_panic_guarded(void);

/*
 * sc_panic_catch_faults - turn hard faults inside a guard into panics on
 * this thread (on = true), or stop (on = false). The first call installs
 * the process-wide handlers for SIGSEGV, SIGBUS and SIGFPE (chaining to
 * whatever was there for faults outside a guard) and gives this thread an
 * alternate signal stack, which sc_panic_catch_faults(false) frees.
 * Returns 0, or SC_ENOMEM / SC_ESTATE (sigaction or sigaltstack refused)
 * with nothing changed.
 */
int sc_panic_catch_faults(bool on);

/*
 * sc__xmalloc_fail_after - test hook: the next `n` sc_xmalloc calls on this
 * thread succeed and the one after fails as if malloc returned NULL; a
 * negative n turns the hook off (the default).
 */
void sc__xmalloc_fail_after(int n);

#ifdef __cplusplus
}
#endif

#endif /* SC_RUNTIME_PANIC_H */
