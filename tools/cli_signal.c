/*
 * cli_signal.c - how SIGINT, SIGTERM and SIGHUP end a command of the CLI
 * (cli.h): the handler only records the signal; each command's loop reads
 * it between steps and ends as its end would, so its summary and files
 * are written for what ran.
 */
#include <signal.h>
#include <string.h>

#include "tools/cli.h"

/* The signal that asked the command to end (0: none); set by the
 * handler. */
static volatile sig_atomic_t caught;

static void
signal_on(int sig)
{
	caught = sig;
}

void
cli_signal_catch(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = signal_on;
	sa.sa_flags = SA_RESETHAND; /* no SA_RESTART: a sleep ends */
	(void)sigemptyset(&sa.sa_mask);
	/* Installed even over an inherited SIG_IGN: a shell starts a
	 * background job with SIGINT ignored, and `kill -INT` should still
	 * end it with its summary. */
	(void)sigaction(SIGINT, &sa, NULL);
	(void)sigaction(SIGTERM, &sa, NULL);
	(void)sigaction(SIGHUP, &sa, NULL);
	(void)signal(SIGPIPE, SIG_IGN);
}

int
cli_signal_caught(void)
{
	return caught;
}
