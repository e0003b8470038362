/*
 * mpi_pingpong.h - Open MPI's own latency, the limit a remote edge is
 * held to: the baseline bench_mpi and bench_mpi_runtime measure beside
 * their frames. Built into those two programs only (it needs MPI, which
 * the rest of sc_bench does not).
 */
#ifndef SC_BENCH_MPI_PINGPONG_H
#define SC_BENCH_MPI_PINGPONG_H

#include <stddef.h>
#include <stdint.h>

/*
 * sc_bench_mpi_pingpong - n blocking ping-pongs of `bytes` (<= 512)
 * between ranks 0 and 1 of MPI_COMM_WORLD (MPI_Send, MPI_Recv; tag 9),
 * half of each round trip into ns[i]. Both ranks call it; others must
 * not.
 */
void sc_bench_mpi_pingpong(size_t n, size_t bytes, uint64_t *ns);

#endif /* SC_BENCH_MPI_PINGPONG_H */
