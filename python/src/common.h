#pragma once
// shared by the binding files: UOps are bound as their nodes, one Python object per live node (pybind11's instance
// registry is keyed by the node pointer, and the holder keeps a tg::UOp handle), so `a is b` holds for deduped UOps.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "tg/dtype/dtype.h"
#include "tg/shape/view.h"
#include "tg/uop/uop.h"

namespace tgpy {

// the holder of a bound UOpNode: a tg::UOp handle (intrusive refcount, so it can be made from a raw pointer)
template <class T>
class NodeRef {
 public:
  NodeRef() = default;
  explicit NodeRef(T* p) : u_(tg::UOp::borrow(p)) {}
  explicit NodeRef(tg::UOp u) : u_(std::move(u)) {}
  T* get() const { return const_cast<T*>(u_.get()); }
  const tg::UOp& uop() const { return u_; }

 private:
  tg::UOp u_;
};

}  // namespace tgpy

PYBIND11_DECLARE_HOLDER_TYPE(T, tgpy::NodeRef<T>, true)

namespace tgpy {
PyObject* ops_member(tg::Ops op);  // the Ops enum's member object (borrowed), null while the enum is being made

// a device from Python: a name, or a tuple/list of names (a multi-device tensor's), as the engine's one name
inline std::string device_name(pybind11::handle h) {
  if (pybind11::isinstance<pybind11::tuple>(h) || pybind11::isinstance<pybind11::list>(h))
    return tg::multi_device_name(h.cast<std::vector<std::string>>());
  return h.cast<std::string>();
}
// a device to Python: the name, or the tuple of names
inline pybind11::object device_object(const std::string& d) {
  if (!tg::is_multi_device(d)) return pybind11::str(d);
  return pybind11::tuple(pybind11::cast(tg::device_names(d)));
}
}  // namespace tgpy

namespace pybind11::detail {
// Ops to python: always the enum's own member object, so `u.op is Ops.ADD` holds as in tinygrad
template <>
struct type_caster<tg::Ops> : type_caster_base<tg::Ops> {
  static handle cast(const tg::Ops& op, return_value_policy p, handle parent) {
    if (PyObject* o = tgpy::ops_member(op)) return handle(o).inc_ref();
    return type_caster_base<tg::Ops>::cast(op, p, parent);
  }
  static handle cast(const tg::Ops* op, return_value_policy p, handle parent) {
    if (op == nullptr) return none().release();
    return cast(*op, p, parent);
  }
};
// tg::UOp <-> the Python UOp (the bound node); a null UOp is None
template <>
struct type_caster<tg::UOp> {
  PYBIND11_TYPE_CASTER(tg::UOp, const_name("UOp"));
  bool load(handle src, bool convert) {
    if (src.is_none()) return false;
    make_caster<tg::UOpNode> c;
    if (!c.load(src, convert)) return false;
    value = tg::UOp::borrow(&cast_op<tg::UOpNode&>(c));
    return true;
  }
  static handle cast(const tg::UOp& u, return_value_policy, handle) {
    if (!u) return none().release();
    tgpy::NodeRef<tg::UOpNode> h(u);
    return type_caster_base<tg::UOpNode>::cast_holder(h.get(), &h);
  }
};
// tg::sint <-> a Python int or UOp (tinygrad's sint); a numpy integer loads as an int
template <>
struct type_caster<tg::sint> {
  PYBIND11_TYPE_CASTER(tg::sint, const_name("int | UOp"));
  bool load(handle src, bool convert) {
    if (isinstance<tg::UOpNode>(src)) {
      make_caster<tg::UOp> c;
      if (!c.load(src, convert)) return false;
      value = tg::sint(cast_op<tg::UOp&>(c));
      return true;
    }
    if (PyBool_Check(src.ptr()) || PyFloat_Check(src.ptr())) return false;
    if (!PyLong_Check(src.ptr()) && !(convert && PyIndex_Check(src.ptr()))) return false;
    make_caster<int64_t> c;
    if (!c.load(src, convert)) return false;
    value = tg::sint(cast_op<int64_t>(c));
    return true;
  }
  static handle cast(const tg::sint& s, return_value_policy p, handle parent) {
    if (s.is_int()) return PyLong_FromLongLong(s.as_int());
    return make_caster<tg::UOp>::cast(s.uop(), p, parent);
  }
};
}  // namespace pybind11::detail

namespace tgpy {
namespace py = pybind11;

// python scalars (and numpy scalars) <-> ConstValue
bool is_scalar(py::handle h);
tg::ConstValue to_const(py::handle h);
py::object from_const(const tg::ConstValue& v);

// Arg <-> python: None, 4, 'CPU', Ops.ADD, ('a', 1, 10), (Ops.ADD, (0,)), (1, 2), ((1, 1), (0, 0)), objects
py::object from_arg(const tg::Arg& a);
tg::Arg to_arg(py::handle h);

std::vector<int64_t> to_ints(py::handle h);  // an int or a sequence of ints
tg::Shape to_shape(py::handle h);            // an int or UOp, or a sequence of them
// bytes holding dtype d as a flat numpy array (a copy); ValueError for a dtype numpy lacks (bfloat16, the fp8s)
py::object numpy_from_bytes(const std::vector<uint8_t>& bytes, tg::DType d);
// a tg::Metadata as tinygrad.helpers.Metadata(name, caller, backward)
py::object metadata_object(const tg::Metadata& m);
inline int64_t py_int(py::handle h) { return py::int_(py::reinterpret_borrow<py::object>(h)).cast<int64_t>(); }
tg::sint py_sint(py::handle x);  // an int, or a UOp size (a bound Variable, an expression of them)

void bind_uop(py::module_& m);
void bind_tensor(py::module_& m);
void bind_nn(py::module_& m);           // python/src/nn.cpp
void bind_jit(py::module_& m);          // python/src/jit.cpp
void bind_device(py::module_& m);       // python/src/device.cpp
void bind_llm(py::module_& m);          // python/src/llm.cpp
void bind_onnx(py::module_& m);         // python/src/onnx.cpp
void bind_distributed(py::module_& m);  // python/src/distributed.cpp

}  // namespace tgpy
