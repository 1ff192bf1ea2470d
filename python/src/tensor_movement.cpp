// bindings of the Tensor's [movement] methods (src/tg/tensor/tensor_movement.cpp, tensor_index.cpp), with
// tinygrad's Python signatures: x[1, ::-1, None, ..., idx], x.pad((1, 1), mode="reflect"), x.sort(descending=True)
#include "common.h"
#include "tensor_common.h"
#include "tg/tensor/tensor.h"

namespace tgpy {
using tg::Tensor;

namespace {

#define META(name) tg::MetadataScope tg_meta_(name)

[[noreturn]] void raise(PyObject* type, const std::string& msg) {
  PyErr_SetString(type, msg.c_str());
  throw py::error_already_set();
}
bool is_seq(py::handle h) { return py::isinstance<py::list>(h) || py::isinstance<py::tuple>(h); }
bool is_int(py::handle h) { return PyLong_Check(h.ptr()) || (!PyFloat_Check(h.ptr()) && PyIndex_Check(h.ptr())); }

// f(*ints) and f(ints): the reference's argfix
std::vector<int64_t> int_args(py::handle first, const py::args& rest) {
  if (rest.size() == 0) return to_ints(first);
  if (is_seq(first)) {  // a sequence, then more: the reference's argfix error
    py::list all;
    all.append(first);
    for (py::handle x : rest) all.append(x);
    raise(PyExc_ValueError, "bad arg " + std::string(py::repr(py::tuple(all))));
  }
  std::vector<int64_t> out{py_int(first)};
  for (py::handle x : rest) out.push_back(py_int(x));
  return out;
}

std::optional<int64_t> opt_int(py::handle h) {
  if (h.is_none()) return std::nullopt;
  if (!is_int(h)) raise(PyExc_TypeError, "slice " + std::string(py::repr(h)) + " is not supported");
  return py_int(h);
}
std::optional<tg::sint> opt_sint(py::handle h) {  // a slice's start or stop: an int, or a bound Variable's size
  if (py::isinstance<tg::UOpNode>(h)) return py_sint(h);
  return opt_int(h);
}

tg::Index to_index(const Tensor& self, py::handle h) {
  if (h.is_none()) return tg::None;
  if (h.ptr() == Py_Ellipsis) return tg::Ellipsis;
  if (py::isinstance<Tensor>(h)) return h.cast<Tensor>();
  if (PySlice_Check(h.ptr())) {
    tg::Slice s{opt_sint(h.attr("start")), opt_sint(h.attr("stop")), opt_int(h.attr("step"))};
    if (s.step == 0) raise(PyExc_ValueError, "index=" + std::string(py::repr(h)) + " cannot have 0 as step");
    return s;
  }
  if (is_int(h)) return py_int(h);
  if (is_seq(h)) {  // a (nested) list of ints: an index tensor on self's device
    py::dict kw;
    kw["device"] = self.device();
    return py::type::of<Tensor>()(h, **kw).cast<Tensor>();
  }
  raise(PyExc_IndexError, std::string(py::str(h.get_type().attr("__name__"))) + " indexing is not supported");
}

// as the reference: a tuple is several indices, a list of ints is one (an index list), other lists are several
std::vector<tg::Index> to_indices(const Tensor& self, py::handle indices) {
  bool all_int = true;
  if (py::isinstance<py::list>(indices))
    for (py::handle x : indices) all_int = all_int && is_int(x);
  std::vector<tg::Index> out;
  if (py::isinstance<py::tuple>(indices) || (py::isinstance<py::list>(indices) && !all_int)) {
    for (py::handle x : indices) out.push_back(to_index(self, x));
  } else {
    out.push_back(to_index(self, indices));
  }
  return out;
}

py::tuple to_tuple(const std::vector<Tensor>& ts) {
  py::tuple out(ts.size());
  for (size_t i = 0; i < ts.size(); i++) out[i] = py::cast(ts[i]);
  return out;
}

std::vector<Tensor> tensor_args(const py::args& args) {
  std::vector<Tensor> out;
  for (py::handle x : args) out.push_back(x.cast<Tensor>());
  return out;
}

}  // namespace

// padding: flat (left, right of the last dim, then the one before, ...) or one (before, after) or None per dim
tg::Mask pad_arg(const Tensor& t, py::handle padding) {
  size_t nd = static_cast<size_t>(t.ndim());
  std::vector<py::object> items;
  for (py::handle x : padding) items.push_back(py::reinterpret_borrow<py::object>(x));
  bool flat = true;
  for (auto& x : items) flat = flat && (is_int(x) || py::isinstance<tg::UOpNode>(x));
  tg::Mask m(nd, {0, 0});
  std::string improper =
      "padding length is improper, padding=" + std::string(py::repr(padding)) + " ndim=" + std::to_string(nd);
  if (flat) {
    if (items.size() % 2 != 0) raise(PyExc_ValueError, "Flat padding must have even number of pads");
    if (items.size() > 2 * nd) raise(PyExc_ValueError, improper);
    for (size_t k = 0; k < items.size() / 2; k++) m[nd - 1 - k] = {py_sint(items[2 * k]), py_sint(items[2 * k + 1])};
    return m;
  }
  if (items.size() != nd) raise(PyExc_ValueError, improper);
  for (size_t i = 0; i < nd; i++)
    if (!items[i].is_none()) m[i] = {py_sint(items[i][py::int_(0)]), py_sint(items[i][py::int_(1)])};
  return m;
}

void bind_tensor_movement(py::class_<Tensor>& cls) {
  // *** indexing ***
  cls.def(
      "__getitem__",
      [](const Tensor& t, py::handle indices) {
        META("__getitem__");
        std::vector<tg::Index> idx = to_indices(t, indices);
        return t.index(idx);
      },
      py::arg("indices"));
  cls.def(
      "__setitem__",
      [](Tensor& t, py::handle indices, py::handle v) {
        META("__setitem__");
        std::optional<Tensor> value;
        if (py::isinstance<Tensor>(v))
          value = v.cast<Tensor>();
        else if (t.device().starts_with("DISK") && !is_scalar(v))  // data written to a file (tinygrad's DISK assign)
          value = make_tensor(v, tg::TensorOptions{"CPU", t.dtype(), std::nullopt});
        else if (!is_scalar(v))
          raise(PyExc_TypeError, "can't set a " + std::string(py::str(v.get_type().attr("__name__"))) + " to a Tensor");
        const tg::ShapeTracker* st = tg::uop_st(t.uop());
        if (st == nullptr || !st->contiguous()) raise(PyExc_RuntimeError, "setitem target needs to be contiguous");
        if (t.requires_grad().value_or(false) || (value && value->requires_grad().value_or(false)))
          raise(PyExc_NotImplementedError, "setitem with requires_grad is not supported");
        std::vector<tg::Index> idx = to_indices(t, indices);
        value ? t.setitem(idx, *value) : t.setitem(idx, to_const(v));
      },
      py::arg("indices"), py::arg("v"));

  // *** padding, repeats, reshapes ***
  cls.def(
      "pad",
      [](const Tensor& t, py::handle padding, const std::string& mode, py::handle value) {
        META("pad");
        if (mode != "constant" && mode != "reflect" && mode != "replicate" && mode != "circular")
          raise(PyExc_NotImplementedError, "mode='" + mode + "' is not supported");
        tg::Mask p = pad_arg(t, padding);
        tg::ConstValue v = to_const(value);
        return t.pad(p, mode, v);
      },
      py::arg("padding"), py::arg("mode") = "constant", py::arg("value") = 0.0);
  cls.def(
      "repeat",
      [](const Tensor& t, py::handle repeats, py::args rest) {
        META("repeat");
        return t.repeat(int_args(repeats, rest));
      },
      py::arg("repeats"));
  cls.def(
      "repeat_interleave",
      [](const Tensor& t, int64_t repeats, std::optional<int64_t> dim) {
        META("repeat_interleave");
        return t.repeat_interleave(repeats, dim);
      },
      py::arg("repeats"), py::arg("dim") = py::none());
  cls.def(
      "unflatten",
      [](const Tensor& t, int64_t dim, py::handle sizes) {
        META("unflatten");
        return t.unflatten(dim, to_shape(sizes));
      },
      py::arg("dim"), py::arg("sizes"));
  cls.def(
      "roll",
      [](const Tensor& t, py::handle shifts, py::handle dims) {
        META("roll");
        return t.roll(to_ints(shifts), to_ints(dims));
      },
      py::arg("shifts"), py::arg("dims"));
  cls.def(
      "rearrange",
      [](const Tensor& t, const std::string& formula, py::kwargs sizes) {
        META("rearrange");
        std::vector<std::pair<std::string, tg::sint>> s;
        for (auto [k, v] : sizes) s.push_back({py::str(k), py_int(v)});
        return t.rearrange(formula, s);
      },
      py::arg("formula"));
  cls.def(
      "cat",
      [](const Tensor& t, py::args others, int64_t dim) {
        META("cat");
        return t.cat(tensor_args(others), dim);
      },
      py::arg("dim") = 0);
  cls.def(
      "stack",
      [](const Tensor& t, py::args others, int64_t dim) {
        META("stack");
        std::vector<Tensor> all{t};
        for (Tensor& o : tensor_args(others)) all.push_back(o);
        return Tensor::stack(all, dim);
      },
      py::arg("dim") = 0);

  // *** splitting ***
  cls.def(
      "split",
      [](const Tensor& t, py::handle sizes, int64_t dim) {
        META("split");
        return to_tuple(PyLong_Check(sizes.ptr()) ? t.split(py_int(sizes), dim) : t.split(to_ints(sizes), dim));
      },
      py::arg("sizes"), py::arg("dim") = 0);
  cls.def(
      "chunk",
      [](const Tensor& t, int64_t chunks, int64_t dim) {
        META("chunk");
        return t.chunk(chunks, dim);
      },
      py::arg("chunks"), py::arg("dim") = 0);
  cls.def(
      "unfold",
      [](const Tensor& t, int64_t dim, int64_t size, int64_t step) {
        META("unfold");
        return t.unfold(dim, size, step);
      },
      py::arg("dim"), py::arg("size"), py::arg("step"));
  cls.def(
      "meshgrid",
      [](const Tensor& t, py::args others, const std::string& indexing) {
        META("meshgrid");
        std::vector<Tensor> all{t};
        for (Tensor& o : tensor_args(others)) all.push_back(o);
        return to_tuple(Tensor::meshgrid(all, indexing));
      },
      py::arg("indexing") = "ij");

  // *** gather, scatter, select ***
  cls.def(
      "gather",
      [](const Tensor& t, int64_t dim, const Tensor& index) {
        META("gather");
        return t.gather(dim, index);
      },
      py::arg("dim"), py::arg("index"));
  cls.def(
      "scatter",
      [](const Tensor& t, int64_t dim, const Tensor& index, py::handle src, std::optional<std::string> reduce) {
        META("scatter");
        if (reduce && *reduce != "add" && *reduce != "multiply")
          raise(PyExc_TypeError, "reduce='" + *reduce + "' must be one of None, 'multiply', or 'add'");
        if (py::isinstance<Tensor>(src)) {
          if (reduce) raise(PyExc_TypeError, "Tensor src is not supported with reduce arg. see scatter_reduce");
          return t.scatter(dim, index, src.cast<Tensor>());
        }
        return t.scatter(dim, index, to_const(src), reduce.value_or(""));
      },
      py::arg("dim"), py::arg("index"), py::arg("src"), py::arg("reduce") = py::none());
  cls.def(
      "scatter_reduce",
      [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce,
         bool include_self) {
        META("scatter_reduce");
        return t.scatter_reduce(dim, index, src, reduce, include_self);
      },
      py::arg("dim"), py::arg("index"), py::arg("src"), py::arg("reduce"), py::arg("include_self") = true);
  cls.def(
      "masked_select",
      [](const Tensor& t, const Tensor& mask) {
        META("masked_select");
        return t.masked_select(mask);
      },
      py::arg("mask"));

  // *** sorting, triangles ***
  cls.def(
      "sort",
      [](const Tensor& t, int64_t dim, bool descending) {
        META("sort");
        auto [values, indices] = t.sort(dim, descending);
        return py::make_tuple(values, indices);
      },
      py::arg("dim") = -1, py::arg("descending") = false);
  cls.def(
      "topk",
      [](const Tensor& t, int64_t k, int64_t dim, bool largest, bool sorted) {
        META("topk");
        if (!sorted) raise(PyExc_NotImplementedError, "topk with sorted_=False is not supported");
        auto [values, indices] = t.topk(k, {.dim = dim, .largest = largest, .sorted = sorted});
        return py::make_tuple(values, indices);
      },
      py::arg("k"), py::arg("dim") = -1, py::arg("largest") = true, py::arg("sorted_") = true);
  cls.def(
      "triu",
      [](const Tensor& t, int64_t diagonal) {
        META("triu");
        return t.triu(diagonal);
      },
      py::arg("diagonal") = 0);
  cls.def(
      "tril",
      [](const Tensor& t, int64_t diagonal) {
        META("tril");
        return t.tril(diagonal);
      },
      py::arg("diagonal") = 0);
}

}  // namespace tgpy
