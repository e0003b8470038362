/*
 * mpi_pingpong.c - Open MPI's ping-pong latency (mpi_pingpong.h).
 */
#include "bench/mpi_pingpong.h"

#include <mpi.h>

#include "bench/harness.h"

void
sc_bench_mpi_pingpong(size_t n, size_t bytes, uint64_t *ns)
{
	uint8_t msg[512] = {0};
	int me = 0;

	if (bytes > sizeof(msg))
		sc_bench_fail("ping-pong of more than 512 bytes");
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	for (size_t i = 0; i < n; i++) {
		uint64_t t0 = sc_bench_now_ns();

		if (me == 0) {
			MPI_Send(msg, (int)bytes, MPI_BYTE, 1, 9,
				 MPI_COMM_WORLD);
			MPI_Recv(msg, (int)bytes, MPI_BYTE, 1, 9,
				 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(msg, (int)bytes, MPI_BYTE, 0, 9,
				 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(msg, (int)bytes, MPI_BYTE, 0, 9,
				 MPI_COMM_WORLD);
		}
		ns[i] = (sc_bench_now_ns() - t0) / 2;
	}
}
