/*
 * cli_alloc.c - the CLI's allocation hook: `subcirc stress --faults
 * alloc` fails the Nth allocation of a run in-process.
 *
 * How: bench/faults/failalloc.h. The CLI is linked with ld --wrap for
 * the allocators the library calls (tools/CMakeLists.txt), and its hook
 * for units/settle.h arms and disarms that injector: armed for allocation
 * N, the Nth allocation of any thread from then on fails, and disarm says
 * whether one did.
 *
 * Not under TSan (which owns the allocator's symbols): the CLI is built
 * without the wrap there (SC_CLI_ALLOC_WRAP unset), installs no hook,
 * and the library refuses alloc by name.
 */
#include <stdbool.h>
#include <stdint.h>

#include "bench/faults/failalloc.h"
#include "tools/cli.h"
#include "units/settle.h"

#ifdef SC_CLI_ALLOC_WRAP

static void
hook_arm(void *ctx, uint64_t nth)
{
	(void)ctx;
	sc_failalloc_arm(nth ? nth : 1, false);
}

static bool
hook_disarm(void *ctx)
{
	(void)ctx;
	sc_failalloc_disarm();
	return sc_failalloc_failed() != 0;
}

void
cli_alloc_hook_install(void)
{
	struct sc_settle_alloc_hook h = {.arm = hook_arm,
					 .disarm = hook_disarm};

	sc_settle_alloc_hook_set(&h);
}

#else

void
cli_alloc_hook_install(void)
{
	/* Built without the wrap: no allocation can be failed in-process,
	 * so no hook, and sc_settle_fault_parse refuses alloc by name. */
}

#endif
