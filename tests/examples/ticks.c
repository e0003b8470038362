/*
 * ticks.c - a runtime in tick mode (units/runtime.h, "Modes" and "Host
 * ticks"): per-tick operators, integrate, delay and differentiate, run on
 * units and workers and step in ticks, as the single circuit does.
 *
 * A row is an item and its weight the units of it; the input holds each
 * tick's changes of stock. The graph computes, per tick:
 *
 *   stock    = integrate(in)       the stock after this tick
 *   previous = delay(stock)        the stock after the tick before
 *   change   = differentiate(stock) = stock - previous, i.e. in again
 *
 * The host submits a tick's batches, then closes the tick with
 * sc_runtime_tick; units step tick t once they have all of tick t's
 * input. A delta callback on each output learns the tick it reports with
 * sc_runtime_delta_tick. (The default, coalescing, mode refuses these
 * three operators: there a unit groups what it finds into steps, so a
 * per-tick result would depend on the schedule.)
 *
 * Build against an installed subcirc, and run:
 *   cc ticks.c $(pkg-config --cflags --libs subcirc) -o ticks
 *   ./ticks [PLACEMENT]    (default per-node)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <subcirc/subcirc.h>

#define NTICKS 4

static const char *const names[3] = {"stock", "previous", "change"};

/* Each output's delta per tick. Only the unit holding an output runs its
 * callback, one turn at a time, and the host reads once idle, so no lock
 * is needed (a sharded output would report one delta per replica). */
struct seen {
	int out[3];
	struct sc_batch *d[3][NTICKS];
};

static int
on_delta(void *ctx, int node, const struct sc_batch *delta)
{
	struct seen *s = ctx;
	uint64_t t = sc_runtime_delta_tick();
	int k = node == s->out[0] ? 0 : node == s->out[1] ? 1 : 2;

	if (t >= NTICKS || s->d[k][t])
		return SC_ESTATE; /* fails the step: the unit panics */
	s->d[k][t] = sc_batch_retain((struct sc_batch *)delta);
	return 0;
}

/* Returns the input's id, or the first error. */
static int
build(struct sc_graph *g, struct seen *s)
{
	enum sc_type item = SC_TYPE_I64;
	struct sc_schema sch;
	int in, stock, rc = sc_schema_init(&sch, 1, &item, NULL);

	if (rc != 0)
		return rc;
	in = sc_graph_input(g, "in", &sch);
	stock = sc_graph_integrate(g, in);
	s->out[0] = sc_graph_output_stream(g, names[0], stock);
	s->out[1] =
	    sc_graph_output_stream(g, names[1], sc_graph_delay(g, stock));
	s->out[2] = sc_graph_output_stream(g, names[2],
					   sc_graph_differentiate(g, stock));
	for (int k = 0; k < 3; k++)
		if (s->out[k] < 0)
			return s->out[k];
	return in;
}

/* Tick t's changes: {item, units}; units 0 ends a list (tick 2: none). */
static const int64_t changes[NTICKS][3][2] = {
    {{1, 3}, {2, 2}}, {{1, 1}}, {{0}}, {{2, -2}}};

static int
run(struct sc_graph *g, const char *spec, struct seen *s)
{
	struct sc_runtime_opts opts = {.workers = 2, .ticks = true};
	struct sc_placement *p = NULL;
	struct sc_runtime *rt = NULL;
	int in = build(g, s);
	int rc = in < 0 ? in : sc_placement_parse(g, spec, 1, &p);

	if (rc == 0)
		rc = sc_runtime_create(g, p, &opts, &rt);
	for (int k = 0; rc == 0 && k < 3; k++) /* before the first submit */
		rc = sc_runtime_on_delta(rt, s->out[k], on_delta, s);
	for (int t = 0; rc == 0 && t < NTICKS; t++) {
		for (int i = 0; rc == 0 && changes[t][i][1] != 0; i++) {
			uint64_t row = sc_enc_i64(changes[t][i][0]);
			struct sc_batch *b = NULL;

			rc = sc_batch_from_records(1, &row, &changes[t][i][1],
						   1, &b);
			if (rc == 0)
				rc = sc_runtime_submit_wait(rt, in, b, 0);
			sc_batch_release(b);
		}
		if (rc == 0) /* closes tick t; an empty tick too */
			rc = sc_runtime_tick(rt, 0, NULL);
	}
	if (rc == 0)
		rc = sc_runtime_wait_idle(rt, 0, NULL);
	if (rc == 0)
		rc = sc_runtime_shutdown(rt, NULL);
	sc_runtime_destroy(rt); /* before the placement it uses */
	sc_placement_destroy(p);
	return rc;
}

/* Prints a Z-set of items as {item x weight, ...}; NULL is {}. */
static void
print_zset(const char *name, const struct sc_batch *d)
{
	(void)printf("  %-8s = {", name);
	for (size_t i = 0; d && i < sc_batch_count(d); i++)
		(void)printf("%s%" PRId64 " x%" PRId64, i ? ", " : "",
			     sc_dec_i64(sc_batch_row(d, i)[0]),
			     sc_batch_weight(d, i));
	(void)printf("}\n");
}

int
main(int argc, char **argv)
{
	struct seen s = {0};
	struct sc_graph *g = NULL;
	int rc = sc_graph_create(&g);

	if (rc == 0)
		rc = run(g, argc > 1 ? argv[1] : "per-node", &s);
	if (rc != 0)
		(void)fprintf(stderr, "ticks: %s: %s\n", sc_strerror(rc),
			      sc_errmsg());
	for (int t = 0; t < NTICKS; t++) {
		if (rc == 0)
			(void)printf("tick %d\n", t);
		for (int k = 0; k < 3; k++) {
			if (rc == 0)
				print_zset(names[k], s.d[k][t]);
			sc_batch_release(s.d[k][t]);
		}
	}
	if (sc_graph_destroy(g) != 0 && rc == 0)
		rc = SC_EBUSY;
	return rc == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
