/*
 * cli_out.c - the basics every report of the CLI stands on (cli.h):
 * output files created before a run and checked when closed, the stream
 * of the human-readable text, a JSON string, the host's load.
 *
 * An output file is written under a hidden temporary name in its own
 * directory (".NAME.PID.tmp") and renamed onto its path when it is
 * closed whole, so its path holds a complete file or nothing: a failed
 * write, a run that wrote nothing and an exit before the close (an
 * argument refused after the opens: the atexit hook) remove the
 * temporary file. Only a signal the CLI does not catch (SIGKILL) can
 * leave a temporary file behind, never a partial file under the path.
 * A path that exists and is not a regular file (/dev/full, a FIFO) is
 * written in place. Two outputs given the same file are refused.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/cli.h"

/* stdout, until an output file takes it. */
static FILE *text_out;
static bool stdout_taken;

/* One output of the process: what the user named and where it goes. */
struct cli_out {
	FILE *f;		 /* the stream; NULL: claimed, not opened */
	const char *opt;	 /* the option that named it */
	char path[PATH_MAX];	 /* the path as given */
	char canon[PATH_MAX];	 /* its real path, to find a repeat */
	char tmp[PATH_MAX + 32]; /* the temporary name; "": in place */
};

#define CLI_OUTS 32
/* Allocated at the first output file: a command without one (and the
 * loader, under an address-space limit) carries none of it. */
static struct cli_out *outs;
static int nouts;
static bool hooked;

FILE *
cli_report_text(void)
{
	return text_out ? text_out : stdout;
}

/* Remove the temporary files of outputs never closed (an exit on a
 * refused argument or a failure on the way). */
static void
out_cleanup(void)
{
	for (int i = 0; i < nouts; i++)
		if (outs[i].tmp[0]) {
			(void)unlink(outs[i].tmp);
			outs[i].tmp[0] = '\0';
		}
}

/* The real path of path into canon: realpath of the file when it exists,
 * else of its directory with its name appended. */
static void
out_canon(const char *path, char *canon, size_t n)
{
	char dir[PATH_MAX], base[PATH_MAX], real[PATH_MAX];

	if (realpath(path, real)) {
		(void)snprintf(canon, n, "%s", real);
		return;
	}
	(void)snprintf(dir, sizeof(dir), "%s", path);
	(void)snprintf(base, sizeof(base), "%s", path);
	/* A path too long to hold whole keeps the one given. */
	if (!realpath(dirname(dir), real) ||
	    snprintf(canon, n, "%s/%s", real, basename(base)) >= (int)n)
		(void)snprintf(canon, n, "%s", path);
}

/* The registered output at canon, or NULL. */
static struct cli_out *
out_find(const char *canon)
{
	for (int i = 0; i < nouts; i++)
		if (!strcmp(outs[i].canon, canon))
			return &outs[i];
	return NULL;
}

/* Register path for opt, refusing (exit 2) a file another output
 * already names; a claim of the same option is taken over. */
static struct cli_out *
out_register(const char *cmd, const char *opt, const char *path)
{
	char canon[PATH_MAX];
	struct cli_out *o;

	out_canon(path, canon, sizeof(canon));
	if ((o = out_find(canon)) != NULL) {
		if (!o->f && !strcmp(o->opt, opt))
			return o;
		cli_die_usage(cmd, "%s and %s: both name '%s'", o->opt, opt,
			      path);
	}
	if (!outs && !(outs = calloc(CLI_OUTS, sizeof(*outs)))) {
		(void)fprintf(stderr, "subcirc %s: %s: no memory\n", cmd, opt);
		cli_exit(CLI_EXIT_LIBRARY);
	}
	if (nouts == CLI_OUTS)
		cli_die_usage(cmd, "%s: too many output files", opt);
	o = &outs[nouts++];
	memset(o, 0, sizeof(*o));
	o->opt = opt;
	(void)snprintf(o->path, sizeof(o->path), "%s", path);
	(void)snprintf(o->canon, sizeof(o->canon), "%s", canon);
	return o;
}

void
cli_claim_out(const char *cmd, const char *opt, const char *path)
{
	if (path && strcmp(path, "-") != 0)
		(void)out_register(cmd, opt, path);
}

/* The temporary name of path: ".NAME.PID.tmp" in its directory. */
static void
out_tmp_name(const char *path, char *tmp, size_t n)
{
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0;

	(void)snprintf(tmp, n, "%.*s.%s.%ld.tmp", dirlen, path,
		       slash ? slash + 1 : path, (long)getpid());
}

FILE *
cli_open_out(const char *cmd, const char *opt, const char *path)
{
	struct cli_out *o;
	struct stat st;
	const char *at = path;
	FILE *f;

	if (!path)
		return NULL;
	/* A reader that goes away (a closed pipe) is a failed write, seen
	 * when the output is closed, not a silent death by SIGPIPE. */
	(void)signal(SIGPIPE, SIG_IGN);
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
	o = out_register(cmd, opt, path);
	if (!hooked) {
		hooked = true;
		(void)atexit(out_cleanup);
	}
	if (stat(path, &st) != 0 || S_ISREG(st.st_mode)) {
		out_tmp_name(path, o->tmp, sizeof(o->tmp));
		at = o->tmp;
	}
	if (!(f = fopen(at, "w"))) {
		char msg[128] = "";

		o->tmp[0] = '\0';
		(void)strerror_r(errno, msg, sizeof(msg));
		cli_die_usage(cmd, "%s: cannot create '%s': %s", opt, path,
			      msg);
	}
	o->f = f;
	return f;
}

/* The output of stream f, or NULL (stdout). */
static struct cli_out *
out_of(FILE *f)
{
	for (int i = 0; i < nouts; i++)
		if (outs[i].f == f)
			return &outs[i];
	return NULL;
}

/* Put a closed output's file in place: renamed onto its path when whole
 * and not empty, else removed. Returns err, or the rename's error. */
static int
out_commit(struct cli_out *o, int err, bool empty)
{
	if (!o || !o->tmp[0])
		return err;
	if (!err && !empty && rename(o->tmp, o->canon) != 0)
		err = errno;
	/* An empty file is one a failed run never wrote (its failure has
	 * said why), or a rank's other than the host's under mpirun: both
	 * go without a word. */
	if (err || empty)
		(void)unlink(o->tmp);
	o->tmp[0] = '\0';
	return err;
}

int
cli_close_out(const char *cmd, const char *path, FILE *f)
{
	struct cli_out *o;
	bool empty, removed;
	int err = 0;

	if (!f)
		return 0;
	o = f == stdout ? NULL : out_of(f);
	/* The writers' fprintf results are not checked one by one: a
	 * failed write sets the stream's error flag, read here, and most
	 * errors (a full disk, a closed pipe) only show when the buffer
	 * is flushed. */
	if (ferror(f))
		err = errno ? errno : EIO;
	if (fflush(f) != 0 && !err)
		err = errno;
	empty = f != stdout && ftell(f) == 0;
	if (f != stdout && fclose(f) != 0 && !err)
		err = errno;
	if (o)
		o->f = NULL;
	if (o)
		path = o->path;
	removed = o && o->tmp[0];
	if ((err = out_commit(o, err, empty)) != 0) {
		char msg[128] = "";

		(void)strerror_r(err, msg, sizeof(msg));
		(void)fprintf(stderr, "subcirc %s: writing '%s' failed: %s%s\n",
			      cmd, path, msg,
			      removed ? " (removed: no part of it is left)"
				      : "");
		return CLI_EXIT_LIBRARY;
	}
	return 0;
}

int
cli_text_end(const char *cmd, int rc)
{
	int err = ferror(stdout) ? (errno ? errno : EIO) : 0;
	char msg[128] = "";

	if (fflush(stdout) != 0 && !err)
		err = errno;
	/* An output "-" was checked when it was closed (and said so). */
	if (!err || rc != 0 || stdout_taken)
		return rc;
	(void)strerror_r(err, msg, sizeof(msg));
	(void)fprintf(stderr, "subcirc %s: writing to stdout failed: %s\n", cmd,
		      msg);
	return CLI_EXIT_LIBRARY;
}

void
cli_drop_out(FILE *f)
{
	struct cli_out *o;

	if (!f || f == stdout)
		return;
	o = out_of(f);
	(void)fclose(f);
	if (o) {
		o->f = NULL;
		if (o->tmp[0])
			(void)unlink(o->tmp);
		o->tmp[0] = '\0';
	}
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
