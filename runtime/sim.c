/*
 * sim.c - the seeded scheduler (see sim.h).
 */
#include "runtime/sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "operators/base.h"

#define SC_SIM_HELD_MAX	     64
#define SC_SIM_DEFAULT_STEPS 1000000ULL

enum sim_event { EV_CLAIM, EV_FINISH, EV_HOST };

struct sim {
	struct sc_exec *ex;
	const struct sc_sim_opts *o;
	struct sc_sim_result *r;
	uint64_t rng; /* sc_splitmix_next state: one word
		 is enough for a schedule */
	struct sc_claim held[SC_SIM_HELD_MAX]; /* units run and not finished */
	uint32_t nheld;
	bool busy[SC_SIM_HELD_MAX]; /* worker i holds a unit (held[].worker) */
	bool host_done;
};

static uint32_t
sim_below(struct sim *s, uint32_t n)
{
	return (uint32_t)(((sc_splitmix_next(&s->rng) >> 32) * (uint64_t)n) >>
			  32);
}

static void
trace_mix(struct sim *s, uint64_t a, uint64_t b)
{
	uint64_t h = s->r->trace ^ (a * 0x100000001b3ULL) ^ (b << 17);

	s->r->trace = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ULL;
}

/* Whether claim c holds a unit the executor sees running (for asserts: a
 * held unit has been claimed and not handed back). */
static inline bool
claimed_and_running(struct sim *s, const struct sc_claim *c)
{
	int st = sc_exec_unit_state(s->ex, c->id);

	return c->unit &&
	       (st == SC_UNIT_RUNNING || st == SC_UNIT_RUNNING_KICKED);
}

/* Kicks that landed on held units: a held unit in RUNNING_KICKED. */
static void
count_kicks_on_held(struct sim *s, const bool *was_kicked)
{
	for (uint32_t i = 0; i < s->nheld; i++)
		if (!was_kicked[i] &&
		    sc_exec_unit_state(s->ex, s->held[i].id) ==
			SC_UNIT_RUNNING_KICKED)
			s->r->kicks_on_running++;
}

static void
held_kicked(struct sim *s, bool *out)
{
	for (uint32_t i = 0; i < s->nheld; i++)
		out[i] = sc_exec_unit_state(s->ex, s->held[i].id) ==
			 SC_UNIT_RUNNING_KICKED;
}

/* Run the turn of the unit just claimed into held slot nheld, and hold
 * it. */
static void
run_and_hold(struct sim *s)
{
	struct sc_claim *c = &s->held[s->nheld];
	uint32_t budget =
	    s->o->budget ? s->o->budget : 1 + sim_below(s, SC_SIM_BUDGET_MAX);

	/* Just claimed, into the first free held slot. */
	SC_ASSERT(s->nheld < SC_SIM_HELD_MAX);
	SC_ASSERT(claimed_and_running(s, c));
	s->r->turns++;
	trace_mix(s, EV_CLAIM, c->id);
	if (sc_exec_run(s->ex, c, budget) != 0) {
		s->r->panics++; /* abandoned inside run; nothing held */
		trace_mix(s, 0xdead, 0);
		return;
	}
	s->busy[c->worker] = true;
	trace_mix(s, c->turn.progress, c->turn.more);
	s->nheld++;
	if (s->nheld > s->r->max_held)
		s->r->max_held = s->nheld;
}

/*
 * A free worker w claims. Where from is the seed's choice among the
 * queues that hold units: w's own claim (its queue, then the injection
 * queue: the executor's order) or a steal from another worker's queue
 * (STEAL; QUEUE has only the one queue, which a claim takes).
 */
static void
ev_claim(struct sim *s)
{
	int32_t from[SC_SIM_HELD_MAX + 1];
	uint32_t nfree = 0, nfrom = 0, pick;
	int32_t w = -1, v;
	int rc;

	for (uint32_t i = 0; i < s->o->held_max; i++)
		nfree += !s->busy[i];
	pick = sim_below(s, nfree);
	for (uint32_t i = 0; i < s->o->held_max; i++)
		if (!s->busy[i] && pick-- == 0) {
			w = (int32_t)i;
			break;
		}
	SC_ASSERT(w >= 0);
	if (sc_exec_queued(s->ex, -1) || sc_exec_queued(s->ex, w))
		from[nfrom++] = w;
	for (uint32_t i = 0; i < s->o->held_max; i++)
		if ((int32_t)i != w && sc_exec_queued(s->ex, (int32_t)i))
			from[nfrom++] = (int32_t)i;
	if (nfrom == 0) { /* only the executor knows where: let it find */
		rc = sc_exec_claim(s->ex, w, &s->held[s->nheld]);
	} else {
		v = from[sim_below(s, nfrom)];
		trace_mix(s, 0x57ea1 + (uint64_t)(v == w), (uint64_t)v);
		if (v == w)
			rc = sc_exec_claim(s->ex, w, &s->held[s->nheld]);
		else
			rc = sc_exec_steal(s->ex, w, v, &s->held[s->nheld]);
		if (rc == 0 && v != w)
			s->r->steals++;
	}
	if (rc != 0)
		return;
	run_and_hold(s);
}

/* Finish held unit i; half the time as the pool does when busy, finish
 * and claim the next unit in one call (then run and hold that one). */
static void
ev_finish(struct sim *s)
{
	bool kicked[SC_SIM_HELD_MAX] = {false};
	uint32_t i = sim_below(s, s->nheld);
	bool chain = sc_splitmix_next(&s->rng) & 1;
	struct sc_claim tmp;
	int rc = SC_EEMPTY;

	SC_ASSERT(s->nheld > 0 && i < s->nheld);
	SC_ASSERT(claimed_and_running(s, &s->held[i]));
	trace_mix(s, EV_FINISH + 16 * chain, s->held[i].id);
	s->busy[s->held[i].worker] = false;
	held_kicked(s, kicked);
	/* Keep the claims dense: swap the finishing one to the end. */
	s->nheld--;
	tmp = s->held[i];
	s->held[i] = s->held[s->nheld];
	s->held[s->nheld] = tmp;
	kicked[i] = kicked[s->nheld];
	if (chain)
		rc = sc_exec_finish_claim(s->ex, &s->held[s->nheld],
					  s->held[s->nheld].worker);
	else
		(void)sc_exec_finish(s->ex, &s->held[s->nheld]);
	count_kicks_on_held(s, kicked);
	if (rc == 0)
		run_and_hold(s);
}

static void
ev_host(struct sim *s)
{
	bool kicked[SC_SIM_HELD_MAX] = {false};

	trace_mix(s, EV_HOST, s->r->host_calls);
	s->r->host_calls++;
	held_kicked(s, kicked);
	if (!s->o->host(s->o->host_ctx, s->ex, sc_splitmix_next(&s->rng)))
		s->host_done = true;
	count_kicks_on_held(s, kicked);
}

/* One step: pick an enabled event at random. False when none is. */
static bool
sim_step(struct sim *s)
{
	enum sim_event ev[3];
	struct sc_exec_info info;
	uint32_t n = 0;

	sc_exec_info(s->ex, &info);
	if (s->nheld < s->o->held_max && info.queue_len > 0)
		ev[n++] = EV_CLAIM;
	if (s->nheld > 0)
		ev[n++] = EV_FINISH;
	if (!s->host_done)
		ev[n++] = EV_HOST;
	if (n == 0)
		return false;
	switch (ev[sim_below(s, n)]) {
	case EV_CLAIM:
		ev_claim(s);
		break;
	case EV_FINISH:
		ev_finish(s);
		break;
	case EV_HOST:
		ev_host(s);
		break;
	}
	s->r->steps++;
	return true;
}

static int
sim_validate(struct sc_exec *ex, const struct sc_sim_opts *o)
{
	if (!ex || !o)
		return sc__fail(SC_EINVAL, "sc_sim_run: NULL argument");
	if (o->held_max > SC_SIM_HELD_MAX)
		return sc__fail(SC_EINVAL, "sc_sim_run: held_max %u > %d",
				o->held_max, SC_SIM_HELD_MAX);
	return 0;
}

/* Hand back whatever is still held, so that the executor is consistent
 * after a run that gave up. */
static void
sim_release(struct sim *s)
{
	while (s->nheld > 0)
		(void)sc_exec_finish(s->ex, &s->held[--s->nheld]);
	for (uint32_t i = 0; i < SC_SIM_HELD_MAX; i++)
		sc_claim_fini(&s->held[i]);
}

int
sc_sim_run(struct sc_exec *ex, const struct sc_sim_opts *opts,
	   struct sc_sim_result *res)
{
	struct sc_sim_opts o;
	struct sim *s;
	int rc = 0;

	if (!res)
		return sc__fail(SC_EINVAL, "sc_sim_run: res is NULL");
	rc = sim_validate(ex, opts);
	if (rc)
		return rc;
	o = *opts;
	o.held_max = o.held_max ? o.held_max : 1;
	o.max_steps = o.max_steps ? o.max_steps : SC_SIM_DEFAULT_STEPS;
	s = calloc(1, sizeof(*s));
	if (!s)
		return sc__fail(SC_ENOMEM, "sc_sim_run: no memory");
	memset(res, 0, sizeof(*res));
	s->ex = ex;
	s->o = &o;
	s->r = res;
	s->rng = o.seed;
	s->host_done = o.host == NULL;
	for (uint32_t i = 0; i < SC_SIM_HELD_MAX; i++)
		sc_claim_init(&s->held[i]);
	if (sc_exec_is_shutdown(ex)) {
		rc = SC_ESHUTDOWN;
		(void)snprintf(res->why, sizeof(res->why),
			       "seed %llu: the executor is shut down",
			       (unsigned long long)o.seed);
		goto out_release;
	}
	while (sim_step(s)) {
		if (res->steps >= o.max_steps) {
			rc = SC_ETIMEDOUT;
			(void)snprintf(
			    res->why, sizeof(res->why),
			    "seed %llu: not settled after %llu steps "
			    "(%llu turns, %u held)",
			    (unsigned long long)o.seed,
			    (unsigned long long)res->steps,
			    (unsigned long long)res->turns, s->nheld);
			goto out_release;
		}
	}
	if (res->panics > 0) {
		struct sc_panic_record p;

		(void)sc_exec_panic(ex, 0, &p);
		rc = SC_EPANIC;
		(void)snprintf(res->why, sizeof(res->why),
			       "seed %llu: unit %u (%s) panicked: %.160s",
			       (unsigned long long)o.seed, p.unit, p.name,
			       p.message);
	}
out_release:
	sim_release(s);
	free(s);
	return rc;
}

const char *
sc_sim_replay_line(char *buf, size_t len, uint64_t seed, const char *suite,
		   const char *test)
{
	char self[512];
	const char *exe = getenv("SC_TEST_EXE");
	ssize_t n;

	if (!buf || !len)
		return buf;
	if (!exe || !*exe) {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		self[n > 0 ? n : 0] = '\0';
		exe = n > 0 ? self : "<test program>";
	}
	(void)snprintf(buf, len,
		       "seed %llu: replay with SC_SEED=%llu %s --filter %s/%s",
		       (unsigned long long)seed, (unsigned long long)seed, exe,
		       suite ? suite : "?", test ? test : "?");
	return buf;
}
