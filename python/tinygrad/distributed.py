# tinygrad.distributed: data parallelism over MPI ranks (beyond tinygrad; src/tg/distributed), run by the C++ engine.
# Started by mpirun, each process is one rank of the job, driving its own devices:
#   w = world()                                  # World(rank=0, size=2, mpi=True); rank 0 of 1 when run alone
#   x = rank_slice(X_global)                     # this rank's rows of the global batch
#   loss.backward(); allreduce_grads(params)     # each gradient averaged over the ranks
#   total = allreduce(t, "sum")                  # also "max", "prod": realized, replayed by TinyJit
# A module of functions, not a device naming scheme: each rank's tensors stay on its own devices, and what crosses
# processes is one explicit collective, so nothing lazy waits on another machine unseen.
from tinygrad._C.distributed import (World, allreduce, allreduce_grads, built_with_mpi,  # noqa: F401
                                    mpi_library_version, rank_slice, world)
