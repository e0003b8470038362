/*
 * cli_exit.c - how the CLI's argument checks end the process (cli.h):
 * alone in its file so that the fuzzer's harness, which links
 * cli_args.c, can give cli_exit a definition of its own.
 */
#include <stdlib.h>

#include "tools/cli.h"

void
cli_exit(int code)
{
	/* The CLI checks its arguments before it starts any thread. */
	exit(code); // NOLINT(concurrency-mt-unsafe)
}
