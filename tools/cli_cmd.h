/*
 * cli_cmd.h - the commands that main (tools/subcirc.c) dispatches to, one
 * module each, and their usage texts. A command calls the core and the
 * helpers below it (cli.h lists the floors), never another command.
 */
#ifndef SC_TOOLS_CLI_CMD_H
#define SC_TOOLS_CLI_CMD_H

#include <stdbool.h>

/* Each takes the arguments after its name and returns the exit code
 * (cli.h): `subcirc run` (cli_run.c), `subcirc run --workload nexmark`
 * (cli_nexmark.c), `subcirc run --workload SPEC` for any other workload
 * (cli_wrun.c), `subcirc place` (cli_place.c), `subcirc stress`
 * (cli_stress.c; exe: this program, for the replay lines). */
int cli_cmd_run(int argc, char **argv);
int cli_cmd_run_nexmark(int argc, char **argv);
int cli_cmd_run_workload(int argc, char **argv);
int cli_cmd_place(int argc, char **argv);
int cli_cmd_stress(int argc, char **argv, const char *exe);

/* Whether run's arguments ask for --workload nexmark (cli_nexmark.c), or
 * for a workload other than grid and nexmark (cli_wrun.c; the last
 * --workload given decides). */
bool cli_run_is_nexmark(int argc, char **argv);
bool cli_run_is_workload(int argc, char **argv);

/* The usage texts (--help) of each command. */
extern const char cli_usage_run[], cli_usage_place[], cli_usage_stress[];

#endif /* SC_TOOLS_CLI_CMD_H */
