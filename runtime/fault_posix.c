/*
 * fault_posix.c - hard faults inside a guarded turn become panics
 * (sc_panic_catch_faults; what it cannot promise is in panic.h).
 *
 * The handler is process wide and installed once, with SA_ONSTACK (so it
 * runs on the thread's alternate stack, even after a stack overflow) and
 * SA_NODEFER (so the kernel does not block the signal on entry). Guards
 * sigsetjmp(env, 0), saving no mask, so before it jumps the handler puts
 * back the mask of the faulting code itself (the ucontext's uc_sigmask)
 * less the three fault signals: whoever ran the handler (a sanitizer's
 * wrapper blocks signals around it) leaves nothing blocked behind, and the
 * next fault of the thread reaches the handler again. It touches only
 * this thread's guard and fixed buffers: no stdio, no malloc.
 *
 * What it does with a signal, in order:
 *  1. not made by the kernel for a fault (si_code <= 0: kill, raise,
 *     sigqueue, tgkill), or outside a guard, or on a thread that did not
 *     enable catching: the previous disposition has it, as if this handler
 *     were not there. A previous handler is called; SIG_IGN ignores a sent
 *     signal; SIG_DFL, or SIG_IGN for a real fault (which would re-run the
 *     faulting instruction for ever), ends the process by that signal:
 *     default restored, signal unblocked, raised. This handler stays
 *     installed whenever the process survives.
 *  2. a real fault while this thread holds a lock of subcirc
 *     (sc__lock_depth, operators/base_int.h): recovering would leave the
 *     lock held and hang its next taker, so a message goes to stderr and
 *     the process dies by the signal.
 *  3. otherwise the fault becomes a panic of the guarded unit.
 */
/* sigaltstack, SA_ONSTACK and SA_NODEFER are XSI. */
#define _XOPEN_SOURCE 700

#include "runtime/panic.h"
#include "runtime/panic_int.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "operators/base_int.h"
#include "operators/doing_int.h"
#include "operators/error.h"

#define SC_ALTSTACK_SIZE ((size_t)64 * 1024)

static const int sc_fault_signals[] = {SIGSEGV, SIGBUS, SIGFPE};
#define SC_NFAULT (sizeof(sc_fault_signals) / sizeof(sc_fault_signals[0]))

static struct sigaction sc_fault_old[SC_NFAULT];
static pthread_mutex_t sc_fault_install_mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool sc_fault_installed;

static __attribute__((
    tls_model("initial-exec"))) _Thread_local bool sc_fault_catching;
static _Thread_local void *sc_fault_stack;

/* Append s to buf (length *n, room cap) without libc formatting. */
static void
msg_put(char *buf, size_t *n, size_t cap, const char *s)
{
	while (*s && *n + 1 < cap)
		buf[(*n)++] = *s++;
	buf[*n] = '\0';
}

static void
msg_put_hex(char *buf, size_t *n, size_t cap, uintptr_t v)
{
	char tmp[2 + 2 * sizeof(v) + 1];
	int i = (int)sizeof(tmp) - 1;

	tmp[i] = '\0';
	do {
		tmp[--i] = "0123456789abcdef"[v & 0xf];
		v >>= 4;
	} while (v && i > 2);
	tmp[--i] = 'x';
	tmp[--i] = '0';
	msg_put(buf, n, cap, tmp + i);
}

static const char *
signal_name(int signo)
{
	switch (signo) {
	case SIGSEGV:
		return "SIGSEGV";
	case SIGBUS:
		return "SIGBUS";
	case SIGFPE:
		return "SIGFPE";
	default:
		return "signal";
	}
}

/* End the process by signo, as its default action does: restore the
 * default, unblock the signal and raise it. The default action of all three
 * signals ends the process, so this does not return. */
static _Noreturn void
die_by(int signo)
{
	struct sigaction dfl;
	sigset_t set;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	(void)sigemptyset(&dfl.sa_mask);
	(void)sigaction(signo, &dfl, NULL);
	(void)sigemptyset(&set);
	(void)sigaddset(&set, signo);
	(void)pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	(void)raise(signo);
	_exit(128 + signo); /* not reached */
}

/* Whether the kernel made this signal for a fault of this thread (si_code
 * > 0: SEGV_MAPERR, BUS_ADRALN, FPE_INTDIV, SI_KERNEL...), rather than
 * someone sending it (SI_USER, SI_QUEUE, SI_TKILL: <= 0). */
static bool
from_kernel(const siginfo_t *info)
{
	return info && info->si_code > 0;
}

/* A signal nobody here catches: hand it to whoever was installed before
 * (step 1 of the note at the top). */
static void
chain(int slot, int signo, siginfo_t *info, void *uctx)
{
	const struct sigaction *old = &sc_fault_old[slot];

	/* SIG_DFL and SIG_IGN first: they may come with SA_SIGINFO set, and
	 * then sa_sigaction is no function to call. */
	if (old->sa_handler == SIG_IGN && !from_kernel(info))
		return;
	if (old->sa_handler == SIG_DFL || old->sa_handler == SIG_IGN)
		die_by(signo);
	if (old->sa_flags & SA_SIGINFO)
		old->sa_sigaction(signo, info, uctx);
	else
		old->sa_handler(signo);
}

/* The mask the guard's code runs on after the jump: the faulting code's
 * own (sigsetjmp(env, 0) restores none), never blocking a fault signal
 * (a blocked fault signal kills the process at the next fault). */
static void
mask_for_jump(void *uctx)
{
	sigset_t set = ((ucontext_t *)uctx)->uc_sigmask;

	for (size_t i = 0; i < SC_NFAULT; i++)
		(void)sigdelset(&set, sc_fault_signals[i]);
	(void)pthread_sigmask(SIG_SETMASK, &set, NULL);
}

/* Describe the fault: "SIGSEGV at address 0x8". */
static void
msg_fault(char *buf, size_t *n, size_t cap, int signo, const siginfo_t *info)
{
	msg_put(buf, n, cap, signal_name(signo));
	msg_put(buf, n, cap, " at address ");
	msg_put_hex(buf, n, cap, (uintptr_t)info->si_addr);
}

/* Step 2: a fault under a lock of subcirc cannot become a panic. */
static _Noreturn void
die_holding_lock(int signo, const siginfo_t *info)
{
	char buf[160];
	size_t n = 0;

	msg_put(buf, &n, sizeof(buf),
		"subcirc: fault inside subcirc while "
		"holding a lock: cannot recover (");
	msg_fault(buf, &n, sizeof(buf), signo, info);
	msg_put(buf, &n, sizeof(buf), ")\n");
	/* Nothing to do if stderr is gone: the signal says enough. */
	if (write(STDERR_FILENO, buf, n) < 0)
		n = 0;
	die_by(signo);
}

static void
fault_handler(int signo, siginfo_t *info, void *uctx)
{
	struct sc__guard *g = sc__guard_top;
	size_t n = 0;
	int slot = 0;

	for (size_t i = 0; i < SC_NFAULT; i++)
		if (sc_fault_signals[i] == signo)
			slot = (int)i;
	if (!from_kernel(info) || !g || !sc_fault_catching) {
		chain(slot, signo, info, uctx);
		return;
	}
	if (sc__lock_depth() > 0)
		die_holding_lock(signo, info);
	msg_put(g->rec->message, &n, sizeof(g->rec->message), "fault: ");
	msg_fault(g->rec->message, &n, sizeof(g->rec->message), signo, info);
	g->rec->signo = signo;
	sc__guard_top = g->outer;
	sc__doing_drop(); /* as a panic's jump (panic.c) */
	mask_for_jump(uctx);
	siglongjmp(g->env, 1);
}

static int
install_handlers(void)
{
	struct sigaction sa;
	size_t i;

	pthread_mutex_lock(&sc_fault_install_mu);
	if (atomic_load(&sc_fault_installed))
		goto out_unlock;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fault_handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < SC_NFAULT; i++)
		if (sigaction(sc_fault_signals[i], &sa, &sc_fault_old[i]) != 0)
			goto undo_installed;
	atomic_store(&sc_fault_installed, true);
out_unlock:
	pthread_mutex_unlock(&sc_fault_install_mu);
	return 0;
undo_installed:
	while (i-- > 0)
		(void)sigaction(sc_fault_signals[i], &sc_fault_old[i], NULL);
	pthread_mutex_unlock(&sc_fault_install_mu);
	return sc__fail(SC_ESTATE, "sc_panic_catch_faults: sigaction refused");
}

static int
altstack_on(void)
{
	stack_t ss;

	if (sc_fault_stack)
		return 0;
	ss.ss_sp = malloc(SC_ALTSTACK_SIZE);
	if (!ss.ss_sp)
		return sc__fail(SC_ENOMEM, "sc_panic_catch_faults: no memory "
					   "for the alternate signal stack");
	ss.ss_size = SC_ALTSTACK_SIZE;
	ss.ss_flags = 0;
	if (sigaltstack(&ss, NULL) != 0) {
		free(ss.ss_sp);
		return sc__fail(SC_ESTATE,
				"sc_panic_catch_faults: sigaltstack refused");
	}
	sc_fault_stack = ss.ss_sp;
	return 0;
}

static void
altstack_off(void)
{
	stack_t ss;

	if (!sc_fault_stack)
		return;
	memset(&ss, 0, sizeof(ss));
	ss.ss_flags = SS_DISABLE;
	(void)sigaltstack(&ss, NULL);
	free(sc_fault_stack);
	sc_fault_stack = NULL;
}

int
sc_panic_catch_faults(bool on)
{
	int rc;

	if (!on) {
		sc_fault_catching = false;
		altstack_off();
		return 0;
	}
	rc = install_handlers();
	if (rc)
		return rc;
	rc = altstack_on();
	if (rc)
		return rc;
	sc_fault_catching = true;
	return 0;
}
