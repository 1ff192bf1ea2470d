#pragma once
// Many processes and machines, over MPI (Open MPI from Debian, found at build time). Each process (an MPI rank) drives
// its own devices, as one process does; what crosses processes is an allreduce of tensors, through MPI_Allreduce
// (host buffers directly, device buffers staged through the host). That is all data-parallel training needs: each rank
// takes its slice of the global batch, and the gradients are averaged before the optimizer step.
//
//   const distributed::World& w = distributed::world();   // rank 0 of 1 unless started by mpirun
//   Tensor x = distributed::rank_slice(X_global);          // this rank's rows of the global batch
//   ...loss.backward();
//   distributed::allreduce_grads(params);                  // each grad averaged over the ranks
//   opt.step();
//
// An allreduce runs as a step of the schedule of its own (an ExecItem whose runner calls MPI), so TinyJit captures it
// with the kernels around it and replays it. A rank that dies stops the job (mpirun kills the others); when a rank
// hangs, the others' watchdogs print an error naming it once MPI_TIMEOUT seconds have passed and abort the job (a
// collective left pending can't be taken back); an allreduce whose size or dtype differs across the ranks is a
// RuntimeError on every rank, naming both.
#include <string>
#include <vector>

#include "tg/tensor/tensor.h"

namespace tg::distributed {

struct World {
  int rank = 0, size = 1;
  bool mpi = false;  // MPI is initialized: this process was started by an MPI launcher
};

// The MPI world this process was started in. On the first call MPI is initialized when the launcher's environment
// says the process is one of several (Open MPI's OMPI_COMM_WORLD_SIZE, PMI_SIZE of others) and DP is not 0; it is
// finalized at exit. A process started alone is rank 0 of 1. Built without MPI, a process started by mpirun raises
// RuntimeError saying why (the library builds without MPI; distributed runs are then unavailable).
const World& world();
bool built_with_mpi();
std::string mpi_library_version();  // MPI_Get_library_version's first line, or why there is none

// t summed (Ops::ADD), multiplied (MUL) or maxed (MAX) over the ranks: realized into a new buffer on t's device (not
// differentiable: all-reduce gradients after backward, allreduce_grads). Rank 0 of 1: t itself.
Tensor allreduce(const Tensor& t, Ops op = Ops::ADD);
// several at once: realized in one schedule (what they share is computed once), then one allreduce each
std::vector<Tensor> allreduce(const std::vector<Tensor>& ts, Ops op = Ops::ADD);
// this rank's part of a global batch: its equal slice along `axis` (the size must divide by the world's size)
Tensor rank_slice(const Tensor& global, int64_t axis = 0);
// each parameter's gradient replaced by its mean over the ranks (a data-parallel step, before the optimizer's)
void allreduce_grads(const std::vector<Tensor>& params);

}  // namespace tg::distributed
