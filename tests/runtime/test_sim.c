/*
 * test_sim.c - the seeded scheduler: same seed, same run; kicks land on
 * running units; toy chains and rings deliver every token whatever the
 * order, for 10,000 seeds each (SC_SEEDS_SCALE scales, SC_SEED replays).
 *
 * SC_BOTH_EXECUTORS: every test here runs on each executor kind (ctest
 * registers NAME and NAME.queue, cmake/sc_helpers.cmake).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "operators/error.h"
#include "runtime/sim.h"
#include "tests/support/prop.h"
#include "tests/support/rt_toys.h"

/* One seeded case: a fresh executor and network, run by the sim. */
struct sim_case {
	bool ring;
	uint32_t units, cap, tokens, held;
	enum sc_exec_kind kind; /* what the executor turned out to be */
	uint64_t seed;
	struct sc_sim_result res;
	int rc;
	bool ok;
	char why[400];
};

static void
run_case(struct sim_case *k)
{
	struct sc_sim_opts o = {
	    .seed = k->seed, .held_max = k->held, .max_steps = 200000};
	struct sc_exec *ex = NULL;
	struct rt_net *net = NULL;
	int rc;

	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	k->kind = sc_exec_kind_of(ex);
	if (k->ring)
		rc = rt_ring_create(ex, k->units, k->cap, k->tokens, 12,
				    k->seed, &net);
	else
		rc = rt_chain_create(ex, k->units, k->cap, k->tokens, &net);
	cr_assert_eq(rc, 0);
	cr_assert_eq(rt_net_start(net, ex), 0);
	o.host = rt_net_host_step;
	o.host_ctx = net;
	k->rc = sc_sim_run(ex, &o, &k->res);
	k->ok = rt_net_check(net, k->why, sizeof(k->why));
	if (k->rc)
		(void)snprintf(k->why, sizeof(k->why), "%s", k->res.why);
	cr_assert_eq(sc_exec_destroy(ex), 0);
	rt_net_destroy(net);
}

/* The shape of seed s's case: sizes vary with the seed too. */
static struct sim_case
case_for(bool ring, uint64_t s)
{
	struct sim_case k = {.ring = ring, .seed = s};

	k.units = 1 + (uint32_t)(s % 4);
	k.cap = 1 + (uint32_t)((s / 4) % 3);
	k.held = 1 + (uint32_t)((s / 12) % 4);
	k.tokens = ring ? (k.units * k.cap) - 1 : 24;
	return k;
}

static void
deliver_for_seeds(bool ring, const char *test)
{
	uint64_t base = sc_prop_seed(ring ? 20000 : 10000);
	uint64_t n = sc_prop_count(10000), on_running = 0;

	for (uint64_t i = 0; i < n; i++) {
		struct sim_case k = case_for(ring, base + i);

		run_case(&k);
		SC_PROP_ASSERT(k.seed, "sim", test, k.rc == 0 && k.ok,
			       "%s: %s (%u units, edges of %u, %u held)",
			       ring ? "ring" : "chain", k.why, k.units, k.cap,
			       k.held);
		on_running += k.res.kicks_on_running;
	}
	if (n > 100)
		cr_expect_gt(on_running, 0,
			     "no kick ever landed on a held "
			     "unit");
}

Test(sim, toy_chain_delivers_every_token_for_10000_seeds, .timeout = 60)
{
	deliver_for_seeds(false,
			  "toy_chain_delivers_every_token_for_10000_seeds");
}

Test(sim, toy_ring_delivers_every_token_for_10000_seeds, .timeout = 60)
{
	deliver_for_seeds(true,
			  "toy_ring_delivers_every_token_for_10000_seeds");
}

Test(sim, same_seed_same_run, .timeout = 20)
{
	struct sim_case a = case_for(false, 1234), b = case_for(false, 1234);
	struct sim_case c = case_for(false, 1234 + 48);

	a.tokens = b.tokens = c.tokens = 40;
	run_case(&a);
	run_case(&b);
	run_case(&c);
	cr_assert_eq(a.rc, 0);
	cr_expect_eq(a.res.trace, b.res.trace);
	cr_expect_eq(a.res.steps, b.res.steps);
	cr_expect_eq(a.res.turns, b.res.turns);
	cr_expect_eq(a.res.host_calls, b.res.host_calls);
	cr_expect_neq(a.res.trace, c.res.trace, "another seed, another run");
}

Test(sim, kick_lands_on_a_running_unit, .timeout = 20)
{
	uint64_t landed = 0;

	for (uint64_t s = 0; s < 50; s++) {
		struct sim_case k = case_for(false, s);

		k.units = 3;
		k.held = 3;
		run_case(&k);
		cr_assert_eq(k.rc, 0, "%s", k.why);
		cr_assert(k.ok, "%s", k.why);
		landed += k.res.kicks_on_running;
		cr_expect_leq(k.res.max_held, 3);
	}
	cr_expect_gt(landed, 0);
}

/* On a STEAL executor the sim's workers steal from each other (schedules
 * that only stealing makes), and every token still arrives once; on the
 * one queue there is nothing to steal. */
Test(sim, workers_steal_from_each_other_on_the_steal_executor, .timeout = 30)
{
	uint64_t steals = 0;
	bool steal = false;

	for (uint64_t s = 0; s < 200; s++) {
		struct sim_case k = case_for(s % 2 == 1, s);

		k.units = 4;
		k.held = 2 + (uint32_t)(s % 3);
		if (k.ring)
			k.tokens = k.units * k.cap - 1;
		run_case(&k);
		SC_PROP_ASSERT(k.seed, "sim",
			       "workers_steal_from_each_other_on_the_steal_"
			       "executor",
			       k.rc == 0 && k.ok, "%s", k.why);
		steals += k.res.steals;
		steal = k.kind == SC_EXEC_STEAL;
	}
	if (steal)
		cr_expect_gt(steals, 0, "no claim ever stole");
	else
		cr_expect_eq(steals, 0);
}

/* A unit that always says more never settles: the sim gives up and names
 * the seed; the replay line names the command. */
Test(sim, a_run_that_never_settles_names_its_seed, .timeout = 20)
{
	struct sc_sim_opts o = {.seed = 42, .held_max = 2, .max_steps = 1000};
	struct sc_exec *ex = NULL;
	struct sc_sim_result res;
	struct rt_probe *p;
	char line[600];
	uint32_t id;

	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	p = rt_probe_add(ex, &id);
	p->result = (struct sc_turn){0, true};
	cr_assert_eq(sc_exec_kick(ex, id), 0);
	cr_expect_eq(sc_sim_run(ex, &o, &res), SC_ETIMEDOUT);
	cr_expect(strstr(res.why, "seed 42"), "%s", res.why);
	sc_sim_replay_line(line, sizeof(line), 42, "sim", "x");
	cr_expect(strstr(line, "SC_SEED=42"), "%s", line);
	cr_expect(strstr(line, "--filter sim/x"), "%s", line);
	cr_expect_eq(sc_exec_destroy(ex), 0, "the sim handed everything back");
}

Test(sim, a_panic_is_reported_once_settled, .timeout = 20)
{
	struct sc_sim_opts o = {.seed = 5, .held_max = 2};
	struct sc_exec *ex = NULL;
	struct sc_sim_result res;
	struct rt_net *net;

	cr_assert_eq(sc_exec_create(NULL, &ex), 0);
	cr_assert_eq(rt_chain_create(ex, 3, 16, 30, &net), 0);
	rt_net_faults(net, 2)->panic_at_turn = 2;
	o.host = rt_net_host_step;
	o.host_ctx = net;
	cr_expect_eq(sc_sim_run(ex, &o, &res), SC_EPANIC);
	cr_expect_eq(res.panics, 1);
	cr_expect(strstr(res.why, "chain2"), "%s", res.why);
	cr_expect_eq(sc_exec_unit_state(ex, rt_net_id(net, 2)), SC_UNIT_DEAD);
	sc_exec_destroy(ex);
	rt_net_destroy(net);
}

/* A unit that panics in a seeded turn of a ring: the sim still settles,
 * the dead unit never runs again, and no token is lost or duplicated
 * (each is retired once or still waits in an edge). */
Test(sim, a_dead_unit_loses_and_duplicates_nothing_for_1000_seeds,
     .timeout = 60)
{
	const char *test = "a_dead_unit_loses_and_duplicates_nothing_for_"
			   "1000_seeds";
	uint64_t base = sc_prop_seed(30000), n = sc_prop_count(1000);

	for (uint64_t i = 0; i < n; i++) {
		uint64_t seed = base + i;
		struct sc_sim_opts o = {.seed = seed,
					.held_max = 1 + (uint32_t)(seed % 3),
					.max_steps = 200000};
		uint32_t units = 2 + (uint32_t)(seed % 3), victim;
		uint64_t at = 1 + (seed / 3) % 6;
		struct sc_exec *ex = NULL;
		struct sc_sim_result res;
		struct rt_net *net;
		char why[160] = "";
		bool ok;
		int rc;

		cr_assert_eq(sc_exec_create(NULL, &ex), 0);
		cr_assert_eq(
		    rt_ring_create(ex, units, 3, units * 3 - 1, 9, seed, &net),
		    0);
		victim = (uint32_t)((seed / 7) % units);
		rt_net_faults(net, victim)->panic_at_turn = at;
		cr_assert_eq(rt_net_start(net, ex), 0);
		rc = sc_sim_run(ex, &o, &res);
		ok = rt_net_check_conserved(net, why, sizeof(why));
		SC_PROP_ASSERT(seed, "sim", test, rc == 0 || rc == SC_EPANIC,
			       "%s", res.why);
		SC_PROP_ASSERT(seed, "sim", test, ok, "%s", why);
		SC_PROP_ASSERT(seed, "sim", test,
			       rt_net_turns(net, victim) <= at,
			       "the dead unit ran %llu turns, died in %llu",
			       (unsigned long long)rt_net_turns(net, victim),
			       (unsigned long long)at);
		if (rc == SC_EPANIC)
			SC_PROP_ASSERT(
			    seed, "sim", test,
			    sc_exec_unit_state(ex, rt_net_id(net, victim)) ==
				SC_UNIT_DEAD,
			    "victim not dead");
		cr_assert_eq(sc_exec_destroy(ex), 0);
		rt_net_destroy(net);
	}
}
