/*
 * plugin_host.c - a program of a user's that hosts a workload plugin
 * (units/workload.h), built outside the tree against an installed subcirc
 * and linked with libsubcirc.so (tests/install/check.sh): the plugin's
 * references then bind to the same library the host uses.
 *
 *   plugin_host PLUGIN.so [KEY=VALUE...]
 *
 * loads the plugin, runs every submission through a runtime on two
 * workers placed `chains` (in ticks when the workload says so), and checks
 * each output's integral against the plugin's reference (verify). Exit
 * status 0 only when the load, the run and every check pass; a failure
 * prints sc_errmsg().
 */
#include <stdio.h>
#include <stdlib.h>

#include <subcirc/subcirc.h>

/* Every submission, fed as it comes; returns how many in *n. */
static int
feed(struct sc_workload *w, struct sc_runtime *rt, size_t *n)
{
	struct sc_settle_step s;
	int rc;

	while ((rc = sc_workload_next(w, &s)) == 0) {
		if (s.input == SC_SETTLE_TICK)
			rc = sc_runtime_tick(rt, 0, NULL);
		else
			rc = sc_runtime_submit_wait(rt, s.input, s.batch, 0);
		sc_batch_release(s.batch);
		if (rc != 0)
			return rc;
	}
	*n = sc_workload_count(w);
	return rc == SC_EEMPTY ? 0 : rc;
}

/* Every materialized output against the reference; the count in *checked. */
static int
check(struct sc_workload *w, struct sc_runtime *rt, size_t n, int *checked)
{
	struct sc_graph *g = sc_workload_graph(w);

	for (size_t id = 0; id < sc_graph_node_count(g); id++) {
		struct sc_node_info ni;
		struct sc_batch *b = NULL;
		size_t rows = 0;
		int rc = sc_graph_node_info(g, (int)id, &ni);

		if (rc != 0 || ni.kind != SC_NODE_OUTPUT)
			continue;
		if ((rc = sc_runtime_integral(rt, (int)id, &b)) == 0) {
			rows = sc_batch_count(b);
			rc = sc_workload_verify(w, (int)id, n, b);
		}
		sc_batch_release(b);
		if (rc != 0)
			return rc;
		(void)printf(
		    "plugin_host: %s: %zu rows, as the reference says\n",
		    ni.name, rows);
		(*checked)++;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct sc_workload_arg args[SC_WORKLOAD_MAX_ARGS];
	char bufs[SC_WORKLOAD_MAX_ARGS][128];
	struct sc_workload_env env = {.seed = 1, .args = args};
	struct sc_workload *w = NULL;
	struct sc_placement *p = NULL;
	struct sc_runtime *rt = NULL;
	size_t n = 0;
	int checked = 0, rc = 0;

	if (argc < 2 || argc - 2 > SC_WORKLOAD_MAX_ARGS) {
		(void)fprintf(stderr,
			      "usage: plugin_host PLUGIN.so [KEY=VALUE...]\n");
		return 2;
	}
	for (int i = 2; i < argc && rc == 0; i++, env.nargs++)
		rc = sc_workload_parse_arg(argv[i], bufs[env.nargs], 128,
					   &args[env.nargs]);
	if (rc == 0)
		rc = sc_workload_load(argv[1], &env, &w);
	if (rc == 0) {
		struct sc_runtime_opts o = {.workers = 2,
					    .ticks = sc_workload_def(w)->flags &
						     SC_WORKLOAD_TICKS};
		rc = sc_placement_parse(sc_workload_graph(w), "chains", 2, &p);
		if (rc == 0)
			rc =
			    sc_runtime_create(sc_workload_graph(w), p, &o, &rt);
	}
	if (rc == 0)
		rc = feed(w, rt, &n);
	if (rc == 0)
		rc = sc_runtime_wait_idle(rt, 0, NULL);
	if (rc == 0)
		rc = check(w, rt, n, &checked);
	if (rc == 0 && checked == 0)
		rc = sc_errorf(SC_ENOENT, "plugin_host: no output checked");
	if (rc != 0)
		(void)fprintf(stderr, "plugin_host: %s\n", sc_errmsg());
	else
		(void)printf(
		    "plugin_host: %s: %zu submissions, %d outputs right\n",
		    sc_workload_name(w), n, checked);
	if (rt && sc_runtime_shutdown(rt, NULL) != 0 && rc == 0)
		rc = SC_ESTATE;
	sc_runtime_destroy(rt);
	sc_placement_destroy(p);
	sc_workload_destroy(w);
	return rc == 0 ? 0 : 1;
}
