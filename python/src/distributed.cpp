// tinygrad._C.distributed: the MPI world and the allreduce across ranks (src/tg/distributed) for tinygrad.distributed
#include "tg/distributed/distributed.h"

#include "common.h"
#include "tg/tensor/tensor.h"

namespace tgpy {

namespace {
tg::Ops reduce_op(const std::string& op) {
  if (op == "sum") return tg::Ops::ADD;
  if (op == "max") return tg::Ops::MAX;
  if (op == "prod") return tg::Ops::MUL;
  throw tg::ValueError("allreduce: op must be 'sum', 'max' or 'prod', got '" + op + "'");
}
}  // namespace

void bind_distributed(py::module_& m) {
  namespace dist = tg::distributed;
  py::module_ d = m.def_submodule("distributed", "tinygrad.distributed: MPI ranks (src/tg/distributed)");
  py::class_<dist::World>(d, "World")
      .def_readonly("rank", &dist::World::rank)
      .def_readonly("size", &dist::World::size)
      .def_readonly("mpi", &dist::World::mpi)
      .def("__repr__", [](const dist::World& w) {
        return "World(rank=" + std::to_string(w.rank) + ", size=" + std::to_string(w.size) +
               ", mpi=" + (w.mpi ? "True" : "False") + ")";
      });
  d.def("world", &dist::world, py::return_value_policy::reference);
  d.def("built_with_mpi", &dist::built_with_mpi);
  d.def("mpi_library_version", &dist::mpi_library_version);
  d.def(
      "allreduce", [](const tg::Tensor& t, const std::string& op) { return dist::allreduce(t, reduce_op(op)); },
      py::arg("t"), py::arg("op") = "sum");
  d.def("rank_slice", &dist::rank_slice, py::arg("t"), py::arg("axis") = 0);
  d.def("allreduce_grads", &dist::allreduce_grads, py::arg("params"));
}

}  // namespace tgpy
