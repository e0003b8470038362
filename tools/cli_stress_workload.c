/*
 * cli_stress_workload.c - one workload of the interface under stress
 * (cli_stress_workload.h).
 */
#include "tools/cli_stress_workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/base.h"
#include "operators/error.h"

int
cli_stress_wl_probe(struct cli_stress_wl *c, uint64_t seed)
{
	struct sc_workload *w = NULL;
	int rc = cli_workload_open("stress", c->spec, c->args, seed, 0, 0, &w);

	if (rc)
		return rc;
	c->tick_workload = (sc_workload_def(w)->flags & SC_WORKLOAD_TICKS) != 0;
	c->has_verify = sc_workload_def(w)->verify != NULL;
	sc_workload_destroy(w);
	return 0;
}

/* An instance for seed, with the library's message left for the case's
 * report rather than printed: the spec was probed already, so what fails
 * here is this seed's. */
static int
wl_open(const struct cli_stress_wl *c, uint64_t seed, struct sc_workload **out)
{
	/* No promise (flags 0): a seed's batches are taken before any case
	 * runs them, and the cases read the integral. */
	return cli_workload_create(c->spec, c->args, seed, 0, 0, out);
}

void
cli_stress_wl_drop(struct cli_stress_wl *c)
{
	/* The work borrows the instance's graph: it goes first. */
	sc_settle_work_destroy(c->work);
	sc_workload_destroy(c->inst);
	c->work = NULL;
	c->inst = NULL;
	c->taken = 0;
}

/* The first `steps` steps of c->inst into st (the batches then the
 * caller's); *n how many there were. Host ticks draw a boundary one step
 * in three from the seed. */
static int
wl_take(struct cli_stress_wl *c, struct sc_settle_step *st, size_t steps,
	size_t *n)
{
	uint64_t rng = c->seed ^ 0x7a1c5ULL;
	bool draw = c->host_ticks && !c->tick_workload;
	int rc = 0;

	*n = 0;
	while (*n < steps) {
		if (draw && sc_splitmix_next(&rng) % 3 == 0) {
			st[(*n)++] =
			    (struct sc_settle_step){SC_SETTLE_TICK, NULL};
			continue;
		}
		rc = sc_workload_next(c->inst, &st[*n]);
		if (rc == SC_EEMPTY)
			return 0;
		if (rc)
			return rc;
		(*n)++;
	}
	return 0;
}

static int
wl_build(struct cli_stress_wl *c, size_t steps)
{
	struct sc_settle_step *st = calloc(steps ? steps : 1, sizeof(*st));
	unsigned flags =
	    c->tick_workload || c->host_ticks ? SC_SETTLE_TICKS : 0;
	size_t n = 0;
	int rc;

	if (!st)
		return sc_errorf(SC_ENOMEM, "stress: %zu steps", steps);
	rc = wl_open(c, c->seed, &c->inst);
	if (!rc)
		rc = wl_take(c, st, steps, &n);
	if (!rc)
		rc = sc_settle_work_create(sc_workload_graph(c->inst), st, n,
					   flags, &c->work);
	/* The work holds its own references to the batches. */
	for (size_t i = 0; i < n; i++)
		sc_batch_release(st[i].batch);
	free(st);
	if (!rc)
		c->taken = sc_workload_count(c->inst);
	return rc;
}

int
cli_stress_wl_work(struct cli_stress_wl *c, uint64_t seed, size_t steps,
		   bool host_ticks, struct sc_settle_work **out, bool *fresh)
{
	int rc;

	if (c->work && c->seed == seed && c->steps == steps &&
	    c->host_ticks == host_ticks) {
		*out = c->work;
		*fresh = false;
		return 0;
	}
	cli_stress_wl_drop(c);
	c->seed = seed;
	c->steps = steps;
	c->host_ticks = host_ticks;
	if ((rc = wl_build(c, steps)) != 0) {
		cli_stress_wl_drop(c);
		return rc;
	}
	*out = c->work;
	*fresh = true;
	return 0;
}

int
cli_stress_wl_verify(void *ctx, int output, const struct sc_batch *got)
{
	struct cli_stress_wl *c = ctx;
	int rc;

	if (!c->has_verify)
		return 0;
	rc = sc_workload_verify(c->inst, output, c->taken, got);
	c->references += rc == 0;
	return rc;
}

/* word, quoted for a POSIX shell when it holds anything but the
 * characters that never need it, appended to buf at *at. */
static void
wl_word(char *buf, size_t size, size_t *at, const char *word)
{
	const char *safe = "abcdefghijklmnopqrstuvwxyz"
			   "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			   "_-+=:,./@%";
	bool plain = word[0] && strspn(word, safe) == strlen(word);
	int k;

	if (*at >= size)
		return;
	if (plain) {
		k = snprintf(buf + *at, size - *at, " %s", word);
		*at += k > 0 ? (size_t)k : 0;
		return;
	}
	k = snprintf(buf + *at, size - *at, " '");
	*at += k > 0 ? (size_t)k : 0;
	for (const char *p = word; *p && *at < size; p++) {
		k = *p == '\'' ? snprintf(buf + *at, size - *at, "'\\''")
			       : snprintf(buf + *at, size - *at, "%c", *p);
		*at += k > 0 ? (size_t)k : 0;
	}
	if (*at < size) {
		k = snprintf(buf + *at, size - *at, "'");
		*at += k > 0 ? (size_t)k : 0;
	}
}

void
cli_stress_wl_command(const struct cli_stress_wl *c, char *buf, size_t size)
{
	char kv[600];
	size_t at = 0;

	if (!size)
		return;
	buf[0] = 0;
	wl_word(buf, size, &at, "--workload");
	wl_word(buf, size, &at, c->spec);
	for (size_t i = 0; c->args && i < c->args->n; i++) {
		(void)snprintf(kv, sizeof(kv), "%s=%s", c->args->args[i].key,
			       c->args->args[i].value);
		wl_word(buf, size, &at, "--workload-arg");
		wl_word(buf, size, &at, kv);
	}
}

void
cli_stress_wl_fini(struct cli_stress_wl *c)
{
	cli_stress_wl_drop(c);
}
