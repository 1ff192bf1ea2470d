#pragma once
// argument conversions shared by the Tensor binding files (tensor*.cpp, nn.cpp, jit.cpp)
#include <optional>
#include <vector>

#include "common.h"
#include "tg/tensor/tensor.h"

namespace tgpy {

std::optional<tg::DType> to_dtype(py::handle h);  // None, a DType or its name
tg::TensorOptions make_opts(py::handle device, py::handle dtype, py::handle requires_grad);
tg::TensorOptions opts_from_kwargs(const py::kwargs& kw);  // device=, dtype=, requires_grad=; others are a TypeError
bool is_seq(py::handle h);                                 // a list or a tuple
tg::Tensor make_tensor(py::handle data, const tg::TensorOptions& o);  // Tensor(data): scalars, lists, numpy, bytes
// an operand of a binary op: a Tensor, a python scalar (a const of self's dtype), or data
tg::Tensor operand(const tg::Tensor& self, py::handle x);
std::vector<int64_t> axes(py::handle axis);  // None (all), an int or a sequence of ints
// f(*shape) and f(shape): ints, or one sequence of them; None keeps self's dim
tg::Shape shape_args(const py::args& args, const tg::Tensor* self = nullptr);
tg::Shape shape_args(py::handle first, const py::args& rest, const tg::Tensor* self = nullptr);  // f(shape, *args)
py::tuple shape_tuple(const tg::Shape& s);
tg::Mask pad_arg(const tg::Tensor& t, py::handle padding);  // tinygrad's padding forms (flat torch style or pairs)
tg::sint py_sint(py::handle x);                             // an int, or a UOp size (a bound Variable...)
tg::Mask shrink_arg(const tg::Tensor& t, py::handle arg);   // pairs, None keeps a dim

}  // namespace tgpy

// every bound Tensor method runs under its Python name (tinygrad's _metadata_wrapper)
#define META(name) tg::MetadataScope tg_meta_(name)
