/*
 * doing.c - the thread's current activity word (doing_int.h): its
 * thread-local pointer, begin and end, and the timed marks.
 */
#include "operators/doing_int.h"

#include "operators/base.h"

__attribute__((
    tls_model("initial-exec"))) _Thread_local struct sc__doing *sc__doing_now;

const char *
sc__doing_act_name(enum sc__act act)
{
	switch (act) {
	case SC__ACT_STEP:
		return "step";
	case SC__ACT_GROW:
		return "grow";
	case SC__ACT_MERGE:
		return "merge";
	case SC__ACT_SORT:
		return "sort";
	case SC__ACT_OUTPUT:
		return "output";
	case SC__ACT_NONE:
	case SC__ACT_COUNT:
		break;
	}
	return "none";
}

/* Close the phase the word holds now, at now_ns: keep it if it is the
 * longest so far. A word of 0 is no phase. */
static void
phase_close(struct sc__doing *d, uint64_t now_ns)
{
	uint64_t cur = atomic_load_explicit(&d->word, memory_order_relaxed);
	uint64_t len = now_ns > d->since ? now_ns - d->since : 0;

	if (cur && (!d->long_word || len > d->long_ns)) {
		d->long_word = cur;
		d->long_start = d->since;
		d->long_ns = len;
	}
	d->since = now_ns;
}

void
sc__doing_timed(struct sc__doing *d, uint64_t w)
{
	unsigned act = (unsigned)sc__doing_word_act(w);

	phase_close(d, sc_clock_ns());
	if (act < 32)
		d->seen |= 1u << act;
	atomic_store_explicit(&d->word, w, memory_order_relaxed);
}

void
sc__doing_begin(struct sc__doing *d, uint64_t w, bool timed, uint64_t now_ns)
{
	unsigned act = (unsigned)sc__doing_word_act(w);

	d->timed = timed;
	d->seen = w && act < 32 ? 1u << act : 0;
	d->since = now_ns;
	d->long_word = 0;
	d->long_start = 0;
	d->long_ns = 0;
	atomic_store_explicit(&d->word, w, memory_order_relaxed);
	sc__doing_now = d;
}

void
sc__doing_end(struct sc__doing *d)
{
	if (d->timed)
		phase_close(d, sc_clock_ns());
	atomic_store_explicit(&d->word, 0, memory_order_relaxed);
	if (sc__doing_now == d)
		sc__doing_now = NULL;
}
