/*
 * partsink.h - a sink that writes a stream's rows as CSV files partitioned
 * by time, each partition's file committed atomically once the stream's
 * waterline has passed the partition's end.
 *
 * A row goes to the partition of its time column t (i64 ms since the
 * epoch): [k * width, (k + 1) * width) for k = floor(t / width). The
 * partition's folder, under the sink's root, is strftime(format) of its
 * start in UTC ("dt=%Y-%m-%d/hm=%H:%M": a folder per day holding one per
 * minute, as Hive-style partitioned tables are laid out). Its rows are
 * CSV (csv.h: a header of the column names and a weight column, a row per
 * line with its weight: the deltas of a Z-set, so a retraction is a row of
 * weight -1 and a reader sums the weights).
 *
 * Commit. While a partition is open its rows gather in memory and, past
 * SC_PARTSINK_FLUSH bytes, in a hidden temporary file in its folder
 * (".part-kK.csv.tmp", K its key). Once it is closed it is committed:
 * flushed to disk (fsync) and given the first name "part-N.csv" (N = 0,
 * 1, ...) free in its folder, so a reader that lists the folders sees a
 * whole partition or none of it, and a committed file never changes nor
 * is replaced (by a partition opened again, one that shares its folder
 * under a coarse format, or an earlier run's). It closes when the
 * waterline of every source (below) has reached its end, since no row of
 * it can come after, or at sc_partsink_finish, the end of the stream. A
 * row that comes for a closed partition (a late row the stream admitted:
 * waterline.h's SC_LATE_ADMIT) opens it again, to be committed as another
 * file: no row is lost.
 *
 * Sources. The rows may come from several writers at once (the replicas of
 * a sharded output, each reporting its own share under its own waterline:
 * operators/circuit.h, sc_circuit_delta_waterline). A partition closes only
 * once `sources` distinct sources have reported and the least of their
 * waterlines has passed it. A source identity is any pointer the writer
 * keeps for its life. A stream with no waterline (no lateness declared)
 * closes its partitions at finish only, so every partition stays open (in
 * memory up to SC_PARTSINK_FLUSH bytes each) until then.
 *
 * Threads: every call may come from any thread; writes from several
 * threads serialize on the sink's lock.
 */
#ifndef SC_BENCH_WORKLOADS_PARTSINK_H
#define SC_BENCH_WORKLOADS_PARTSINK_H

#include <stdint.h>

#include "operators/batch.h"
#include "operators/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of an open partition held in memory before they go to its
 * temporary file. */
#define SC_PARTSINK_FLUSH ((size_t)64 * 1024)

struct sc_partsink;

struct sc_partsink_opts {
	const char *dir;		/* the root, made if missing */
	const struct sc_schema *schema; /* the rows' (symbols print as text) */
	const char *const *cols;	/* the header's names, schema->ncols */
	uint32_t time_col;		/* an i64 column: ms since the epoch */
	int64_t width_ms;		/* a partition's width, > 0 */
	const char *format; /* strftime of a partition's UTC start: its
			     * folder under dir, relative, no ".." */
	uint32_t sources;   /* writers whose waterlines close a
			     * partition, >= 1 */
};

/* What a sink wrote so far. */
struct sc_partsink_stats {
	uint64_t rows;	    /* rows written (each with its weight) */
	uint64_t committed; /* files committed */
	uint64_t open;	    /* partitions open now */
	uint64_t reopened;  /* partitions opened again after a commit */
	int64_t waterline;  /* the least of the sources' (the sink's) */
};

/*
 * sc_partsink_create - a sink as o says; nothing is written before the
 * first row but the root folder. The schema and cols are borrowed for the
 * sink's life. Returns
 *   0            *out is the sink
 *   SC_EINVAL    NULL o, dir, schema, cols, format or out; time_col not an
 *                i64 column of the schema; width_ms <= 0; sources 0; a
 *                format that is empty, absolute, names "..", or formats
 *                to nothing (each named in the message)
 *   SC_EIO       the root cannot be made (the message says why)
 *   SC_ENOMEM
 */
int sc_partsink_create(const struct sc_partsink_opts *o,
		       struct sc_partsink **out);

/*
 * sc_partsink_write - the rows of delta (any order, any weights; NULL or
 * empty: none) into their partitions, then, with `waterline` the source's
 * (SC_WATERLINE_NONE: nothing known), commit every partition that every
 * source has passed. A source's waterline never goes back (a lower one is
 * ignored). Returns
 *   0            written (and committed where due)
 *   SC_EINVAL    NULL s or source; a row of the wrong width
 *   SC_EIO       a folder or file cannot be made, written, synced or
 *                renamed (the message names the path and says why); the
 *                rows are kept and a later call or finish tries again
 *   SC_ENOENT    a symbol the schema's table does not know
 *   SC_ENOMEM
 * Rows are taken or the call fails before any is: a failure after they
 * were taken (a commit's) leaves them in their open partitions.
 */
int sc_partsink_write(struct sc_partsink *s, const struct sc_batch *delta,
		      const void *source, int64_t waterline);

/*
 * sc_partsink_finish - commit every open partition (the stream is over).
 * Returns 0, SC_EINVAL (NULL), SC_EIO (as write; the partitions not
 * committed stay open, and a second finish tries them again), SC_ENOMEM.
 */
int sc_partsink_finish(struct sc_partsink *s);

/* sc_partsink_stats - the figures above (zero for NULL s or out). */
void sc_partsink_stats(struct sc_partsink *s, struct sc_partsink_stats *out);

/*
 * sc_partsink_destroy - free the sink (NULL: nothing). Partitions still
 * open are not committed: their temporary files are removed, and what they
 * held is not written.
 */
void sc_partsink_destroy(struct sc_partsink *s);

#ifdef __cplusplus
}
#endif

#endif /* SC_BENCH_WORKLOADS_PARTSINK_H */
