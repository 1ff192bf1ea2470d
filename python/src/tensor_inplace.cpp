// bindings of the Tensor methods that write a tensor or give it another graph: assign and the in-place operators
// (tinygrad's x += y is x.assign(x.add(y)): the caller's object gets the values), replace, clone; beside them the
// shifts, from_blob (a tensor over the caller's memory), fuse, contiguous_backward and size
#include "tensor_common.h"
#include "tg/runtime/buffers.h"
#include "tg/runtime/device.h"
#include "tg/shape/uop_shape.h"

namespace tgpy {
using tg::Tensor;

namespace {

// lshift/rshift(x, reverse): as the reference, only an unsigned tensor shifted by an int >= 0, never reversed (x << t)
Tensor shift(const Tensor& a, py::handle x, bool reverse, bool left, const char* name) {
  tg::MetadataScope meta(name);
  bool is_int = PyLong_Check(x.ptr()) && !PyBool_Check(x.ptr());
  TG_CHECK_AS(AssertionError, is_int && !reverse, "not supported self.dtype=", a.dtype(),
              " x=", std::string(py::repr(x)), reverse ? " (a reversed shift)" : "");
  int64_t bits = x.cast<int64_t>();
  return left ? a.lshift(bits) : a.rshift(bits);
}

}  // namespace

void bind_tensor_inplace(py::class_<Tensor>& cls) {
  cls.def(
         "assign",
         [](py::object self, py::handle x) {
           META("assign");
           Tensor& t = self.cast<Tensor&>();
           // data for a DISK tensor is made on the CPU and written into the file (a new DISK buffer would be a file)
           std::string dev = t.device().starts_with("DISK") ? std::string("CPU") : t.device();
           t.assign(py::isinstance<Tensor>(x) ? x.cast<Tensor>()
                                              : make_tensor(x, tg::TensorOptions{dev, t.dtype(), std::nullopt}));
           return self;
         },
         py::arg("x"))
      .def(
          "replace",
          [](py::object self, py::handle x, bool allow_shape_mismatch) {
            META("replace");
            if (!py::isinstance<Tensor>(x))  // the reference reads x.shape, and fails as here
              throw py::attribute_error("'" + std::string(py::str(x.get_type().attr("__name__"))) +
                                        "' object has no attribute 'shape': replace takes a Tensor");
            self.cast<Tensor&>().replace(x.cast<Tensor>(), allow_shape_mismatch);
            return self;
          },
          py::arg("x"), py::arg("allow_shape_mismatch") = false)
      .def("clone",
           [](const Tensor& t) {
             META("clone");
             return t.clone();
           })
      .def("fuse",
           [](const Tensor& t) {
             META("fuse");
             return t.fuse();
           })
      .def("contiguous_backward",
           [](const Tensor& t) {
             META("contiguous_backward");
             return t.contiguous_backward();
           })
      .def(
          "size",
          [](const Tensor& t, py::object dim) -> py::object {
            py::tuple shape = shape_tuple(t.shape());
            return dim.is_none() ? py::object(shape) : shape[dim];  // python indexing: -1 is the last dim
          },
          py::arg("dim") = py::none())
      .def(
          "lshift", [](const Tensor& a, py::handle x, bool reverse) { return shift(a, x, reverse, true, "lshift"); },
          py::arg("x"), py::arg("reverse") = false)
      .def(
          "rshift", [](const Tensor& a, py::handle x, bool reverse) { return shift(a, x, reverse, false, "rshift"); },
          py::arg("x"), py::arg("reverse") = false)
      .def(
          "__lshift__", [](const Tensor& a, py::handle x) { return shift(a, x, false, true, "__lshift__"); },
          py::arg("x"))
      .def(
          "__rshift__", [](const Tensor& a, py::handle x) { return shift(a, x, false, false, "__rshift__"); },
          py::arg("x"))
      .def(
          "__rlshift__", [](const Tensor& a, py::handle x) { return shift(a, x, true, true, "__rlshift__"); },
          py::arg("x"))
      .def(
          "__rrshift__", [](const Tensor& a, py::handle x) { return shift(a, x, true, false, "__rrshift__"); },
          py::arg("x"))
      .def_static(
          "from_blob",
          [](uintptr_t ptr, py::handle shape, py::kwargs kw) {
            META("from_blob");
            // an empty tensor whose BUFFER is given the caller's memory: no copy, never freed here
            Tensor t = Tensor::empty(to_shape(shape), opts_from_kwargs(kw));
            tg::Buffer b(t.device(), t.numel(), t.dtype(),
                         tg::BufferSpec{.external_ptr = reinterpret_cast<tg::Opaque>(ptr)});
            b.allocate();
            tg::uop_set_buffer(tg::uop_base(t.uop()), std::move(b));
            return t;
          },
          py::arg("ptr"), py::arg("shape"));

  // in-place operators assign: tinygrad's `x += y` is x.assign(x.add(y)), so the tensor object the caller holds
  // (the same Python object) gets the new values, and a dtype or shape the result can't keep is an AssertionError
  using InplaceOp = Tensor (*)(const Tensor&, py::handle);
  auto inplace = [&cls](const char* name, InplaceOp op) {
    cls.def(
        name,
        [name, op](py::object self, py::handle x) {
          tg::MetadataScope meta(name);
          Tensor& t = self.cast<Tensor&>();
          t.assign(op(t, x));
          return self;
        },
        py::arg("x"));
  };
  inplace("__iadd__", [](const Tensor& a, py::handle x) { return a.add(operand(a, x)); });
  inplace("__isub__", [](const Tensor& a, py::handle x) { return a.sub(operand(a, x)); });
  inplace("__imul__", [](const Tensor& a, py::handle x) { return a.mul(operand(a, x)); });
  inplace("__ipow__", [](const Tensor& a, py::handle x) { return a.pow(operand(a, x)); });
  inplace("__itruediv__", [](const Tensor& a, py::handle x) { return a.div(operand(a, x)); });
  inplace("__ifloordiv__", [](const Tensor& a, py::handle x) { return a.div(operand(a, x), false, "floor"); });
  inplace("__imatmul__", [](const Tensor& a, py::handle x) { return a.dot(operand(a, x)); });
  inplace("__iand__", [](const Tensor& a, py::handle x) { return a.bitwise_and(operand(a, x)); });
  inplace("__ior__", [](const Tensor& a, py::handle x) { return a.bitwise_or(operand(a, x)); });
  inplace("__ixor__", [](const Tensor& a, py::handle x) { return a.bitwise_xor(operand(a, x)); });
  inplace("__ilshift__", [](const Tensor& a, py::handle x) { return shift(a, x, false, true, "lshift"); });
  inplace("__irshift__", [](const Tensor& a, py::handle x) { return shift(a, x, false, false, "rshift"); });
}

}  // namespace tgpy
