/*
 * cli_stress_workload.h - one workload of the interface (units/workload.h)
 * under `subcirc stress --workload SPEC` (not an installed header).
 *
 * Why submissions are taken once per seed. An instance hands out its
 * submissions in order and only once (sc_workload_gen refuses any but the
 * next), while every case of a seed (modes x workers x placements) must
 * replay the same ones. So the seed's instance gives its first `steps`
 * submissions once, into a settle work (units/settle.h) that holds them
 * and the single circuit's reference; every case of the seed runs that
 * work. The instance stays open beside it: the work borrows its graph,
 * and the workload's reference (verify) reads the instance's state after
 * exactly those submissions.
 *
 * A workload whose input ends early (SC_EEMPTY) gives fewer submissions;
 * the work then holds what there was. A tick workload (SC_WORKLOAD_TICKS)
 * is checked in tick mode over its own boundaries; host ticks, asked for
 * one that is not, are boundaries drawn from the seed between its
 * submissions, one step in three, as stress draws them for its own
 * workloads.
 */
#ifndef SC_TOOLS_CLI_STRESS_WORKLOAD_H
#define SC_TOOLS_CLI_STRESS_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "operators/batch.h"
#include "tools/cli_workload.h"
#include "units/settle.h"
#include "units/workload.h"

/* The workload of a campaign and the work of the seed in hand. Caller
 * storage: zero it, set spec and args, and call cli_stress_wl_fini. */
struct cli_stress_wl {
	const char *spec;		      /* --workload, borrowed */
	const struct cli_workload_args *args; /* --workload-arg, borrowed */
	bool tick_workload;		      /* its definition's TICKS flag */
	bool has_verify;		      /* it has a reference */
	/* the work in hand (work NULL: none) and what it was built for */
	uint64_t seed;
	size_t steps;		  /* steps asked for */
	bool host_ticks;	  /* boundaries drawn between submissions */
	struct sc_workload *inst; /* the seed's instance */
	struct sc_settle_work *work;
	size_t taken;	     /* submissions the instance gave (its count) */
	uint64_t references; /* outputs its reference found right */
};

/*
 * cli_stress_wl_probe - open the workload once for seed, as the user
 * named it, to refuse a bad one before the campaign starts, and learn
 * tick_workload and has_verify. Returns 0, or the exit code after saying
 * what was wrong on stderr (cli_workload_open: CLI_EXIT_USAGE for an
 * unknown name, a plugin refused or a bad or unread argument;
 * CLI_EXIT_LIBRARY for SC_ENOMEM).
 */
int cli_stress_wl_probe(struct cli_stress_wl *c, uint64_t seed);

/*
 * cli_stress_wl_work - the work of seed's first `steps` steps (with
 * host_ticks, drawn boundaries counted among them), built now or the one
 * in hand when it was built for the same seed, steps and host_ticks.
 * *fresh says whether it was built by this call (a caller that changes
 * its reference does it then). The work is c's: valid until the next
 * call or cli_stress_wl_fini. Returns:
 *   0            *out (and *fresh)
 *   SC_ENOMEM
 *   other        what opening the instance, its next, or the single
 *                circuit returned (sc_errmsg() says what, naming the
 *                workload)
 * On failure nothing is in hand.
 */
int cli_stress_wl_work(struct cli_stress_wl *c, uint64_t seed, size_t steps,
		       bool host_ticks, struct sc_settle_work **out,
		       bool *fresh);

/* cli_stress_wl_drop - release the work and the instance in hand. */
void cli_stress_wl_drop(struct cli_stress_wl *c);

/*
 * cli_stress_wl_verify - an sc_settle_verify_fn (ctx: c): the workload's
 * reference for output `output` after the submissions of the work in
 * hand. 0 when right (counted in c->references) or when the workload
 * has no reference;
 * SC_ECALLBACK (or what verify returned) with sc_errmsg() naming the
 * wrong row otherwise.
 */
int cli_stress_wl_verify(void *ctx, int output, const struct sc_batch *got);

/*
 * cli_stress_wl_command - " --workload SPEC --workload-arg K=V ..." into
 * buf (cut to size, NUL-terminated), each word quoted for a POSIX shell
 * when it needs to be, so that the line replays as it reads.
 */
void cli_stress_wl_command(const struct cli_stress_wl *c, char *buf,
			   size_t size);

/* cli_stress_wl_fini - cli_stress_wl_drop. */
void cli_stress_wl_fini(struct cli_stress_wl *c);

#endif /* SC_TOOLS_CLI_STRESS_WORKLOAD_H */
