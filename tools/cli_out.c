/*
 * cli_out.c - the basics every report of the CLI stands on (cli.h):
 * output files created before a run and checked when closed, the stream
 * of the human-readable text, a JSON string, the host's load.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "tools/cli.h"

/* stdout, until an output file takes it. */
static FILE *text_out;
static bool stdout_taken;

FILE *
cli_report_text(void)
{
	return text_out ? text_out : stdout;
}

FILE *
cli_open_out(const char *cmd, const char *opt, const char *path)
{
	FILE *f;

	if (!path)
		return NULL;
	if (!strcmp(path, "-")) {
		if (stdout_taken)
			cli_die_usage(cmd,
				      "%s: '-': stdout is taken by another "
				      "output already",
				      opt);
		stdout_taken = true;
		text_out = stderr;
		return stdout;
	}
	if (!(f = fopen(path, "w"))) {
		char msg[128] = "";

		(void)strerror_r(errno, msg, sizeof(msg));
		cli_die_usage(cmd, "%s: cannot create '%s': %s", opt, path,
			      msg);
	}
	return f;
}

int
cli_close_out(const char *cmd, const char *path, FILE *f)
{
	int err = 0;

	if (!f)
		return 0;
	/* The writers' fprintf results are not checked one by one: a
	 * failed write sets the stream's error flag, read here, and most
	 * errors (a full disk) only show when the buffer is flushed. */
	if (ferror(f))
		err = errno ? errno : EIO;
	if (fflush(f) != 0 && !err)
		err = errno;
	if (f != stdout && fclose(f) != 0 && !err)
		err = errno;
	if (err) {
		char msg[128] = "";

		(void)strerror_r(err, msg, sizeof(msg));
		(void)fprintf(stderr, "subcirc %s: writing '%s' failed: %s\n",
			      cmd, path, msg);
		return CLI_EXIT_LIBRARY;
	}
	return 0;
}

void
cli_json_str(FILE *f, const char *v)
{
	(void)fputc('"', f);
	for (const unsigned char *c = (const unsigned char *)v; *c; c++) {
		if (*c == '"' || *c == '\\')
			(void)fprintf(f, "\\%c", *c);
		else if (*c < 0x20)
			(void)fprintf(f, "\\u%04x", *c);
		else
			(void)fputc(*c, f);
	}
	(void)fputc('"', f);
}

bool
cli_host_load(double load[3])
{
	/* getloadavg is not POSIX; Linux says the same in /proc. */
	FILE *f = fopen("/proc/loadavg", "r");
	double l[3];
	int n = f ? fscanf(f, "%lf %lf %lf", &l[0], &l[1], &l[2]) : 0;

	if (f)
		(void)fclose(f);
	if (n != 3)
		return false;
	load[0] = l[0];
	load[1] = l[1];
	load[2] = l[2];
	return true;
}
