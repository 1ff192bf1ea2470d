// bindings of the device layer and the engine's schedule (tinygrad.device, tinygrad.engine.schedule/realize):
// Device["CPU"] is the opened Compiled (allocator, compiler, renderer, synchronize), Buffer is tg::Buffer, and
// Tensor.schedule_with_vars hands out ScheduleItems that run_schedule runs.
#include <cstring>

#include "common.h"
#include "tg/codegen/heuristic.h"
#include "tg/codegen/program.h"
#include "tg/engine/realize.h"
#include "tg/runtime/ops_python.h"
#include "tg/schedule/schedule.h"
#include "tg/tensor/tensor.h"

namespace tgpy {
using tg::Buffer;

namespace {

// a bytes-like object's contents (memoryview, bytes, bytearray, numpy array)
std::string buffer_bytes(py::handle src) {
  py::buffer_info info = py::reinterpret_borrow<py::buffer>(src).request();
  size_t n = static_cast<size_t>(info.size * info.itemsize);
  return std::string(static_cast<const char*>(info.ptr), n);
}

py::object as_memoryview(const std::vector<uint8_t>& b) {
  py::bytearray raw(reinterpret_cast<const char*>(b.data()), b.size());
  return py::module_::import("builtins").attr("memoryview")(raw);
}

py::list schedule_list(std::vector<tg::ScheduleItem>& s) {
  py::list out;
  for (tg::ScheduleItem& si : s) out.append(py::cast(std::move(si)));
  return out;
}

std::vector<tg::ScheduleItem> to_schedule(py::handle schedule) {
  std::vector<tg::ScheduleItem> s;
  for (py::handle si : schedule) s.push_back(si.cast<tg::ScheduleItem>());
  return s;
}

// PYTHON's host memory, handed to Python as a memoryview (the reference's PythonAllocator returns
// memoryview(bytearray(size))): zeroed, and given back to the engine's allocator with its last view
struct HostMemory {
  std::shared_ptr<tg::Allocator> allocator;
  tg::Opaque opaque;
  size_t nbytes;
  HostMemory(std::shared_ptr<tg::Allocator> a, size_t n)
      : allocator(std::move(a)), opaque(allocator->alloc(n)), nbytes(n) {
    if (allocator->host_ptr(opaque) == nullptr) {
      allocator->free(opaque, nbytes);
      throw py::value_error("PYTHON's allocator holds no host memory");
    }
    std::memset(allocator->host_ptr(opaque), 0, n);
  }
  HostMemory(const HostMemory&) = delete;
  HostMemory& operator=(const HostMemory&) = delete;
  ~HostMemory() { allocator->free(opaque, nbytes); }
};

// a C-contiguous writable buffer of a Python object (memoryview, bytearray, numpy array), held for one call
struct HeldBuffer {
  Py_buffer view{};
  explicit HeldBuffer(py::handle obj) {
    if (PyObject_GetBuffer(obj.ptr(), &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) == 0) return;
    py::error_already_set e;
    // a read-only or strided buffer: the TypeError the reference's stores into it raise
    if (e.matches(PyExc_BufferError)) throw py::type_error(tg::cat("PythonProgram: ", e.what()));
    throw e;
  }
  HeldBuffer(const HeldBuffer&) = delete;
  HeldBuffer& operator=(const HeldBuffer&) = delete;
  ~HeldBuffer() { PyBuffer_Release(&view); }
};

// an Opt as the Python record's fields (op name, axis, arg) and back: tinygrad.renderer.Opt is built in Python
py::tuple opt_fields(const tg::Opt& o) {
  std::string op = tg::optops_str(o.op).substr(7);  // "OptOps.UPCAST" -> "UPCAST"
  py::object axis = o.axis ? py::object(py::int_(*o.axis)) : py::object(py::none());
  py::object arg = py::none();
  if (auto* i = std::get_if<int>(&o.arg)) arg = py::int_(*i);
  if (auto* t = std::get_if<std::tuple<int, int, int>>(&o.arg))
    arg = py::make_tuple(std::get<0>(*t), std::get<1>(*t), std::get<2>(*t));
  return py::make_tuple(op, axis, arg);
}
tg::Opt to_opt(const std::string& op, py::object axis, py::object arg) {
  tg::Opt o{tg::OptOps::UPCAST, std::nullopt, std::monostate{}};
  bool found = false;  // the reference's OptOps, by name
  for (int v = static_cast<int>(tg::OptOps::TC); v <= static_cast<int>(tg::OptOps::SWAP); v++)
    if (tg::optops_str(static_cast<tg::OptOps>(v)) == "OptOps." + op) o.op = static_cast<tg::OptOps>(v), found = true;
  if (!found) throw py::value_error(tg::cat("Opt: unknown OptOps.", op));
  if (!axis.is_none()) o.axis = axis.cast<int>();
  if (py::isinstance<py::tuple>(arg)) {
    auto t = arg.cast<std::vector<int>>();
    if (t.size() != 3)
      throw py::value_error(
          tg::cat("Opt: a TC arg is (tc_select, tc_opt, use_tensor_cores), got ", t.size(), " values"));
    o.arg = std::make_tuple(t[0], t[1], t[2]);
  } else if (!arg.is_none()) {
    o.arg = arg.cast<int>();
  }
  return o;
}

tg::Program::Dims dims_arg(py::handle t, const char* what) {
  std::vector<int64_t> v = t.cast<std::vector<int64_t>>();
  if (v.size() != 3) throw py::value_error(tg::cat("PythonProgram: ", what, " takes 3 dims, got ", v.size()));
  return {v[0], v[1], v[2]};
}

}  // namespace

void bind_device(py::module_& m) {
  py::class_<HostMemory>(m, "HostMemory", py::buffer_protocol()).def_buffer([](HostMemory& h) {
    return py::buffer_info(h.allocator->host_ptr(h.opaque), 1, py::format_descriptor<uint8_t>::format(), 1,
                           {static_cast<py::ssize_t>(h.nbytes)}, {1}, false);
  });
  m.def(
      "python_host_alloc",
      [](int64_t nbytes) {
        if (nbytes <= 0) throw py::value_error(tg::cat("alloc size must be positive, getting ", nbytes));
        auto h = std::make_unique<HostMemory>(tg::Device::get("PYTHON").allocator, static_cast<size_t>(nbytes));
        return py::module_::import("builtins")
            .attr("memoryview")(py::cast(h.release(), py::return_value_policy::take_ownership));
      },
      py::arg("nbytes"));
  // tinygrad.runtime.ops_python.PythonProgram: a program of the PYTHON device from its text (PythonRenderer's render,
  // PythonCompiler's compile), run by the engine's interpreter on memoryviews (or any writable contiguous buffer)
  py::class_<tg::PythonProgram>(m, "PythonProgram")
      .def(py::init([](const std::string& name, py::object lib) {
             std::string text = py::isinstance<py::str>(lib) ? lib.cast<std::string>() : buffer_bytes(lib);
             return new tg::PythonProgram(name, std::string_view(text));
           }),
           py::arg("name"), py::arg("lib"))
      .def_readonly("name", &tg::PythonProgram::name)
      .def(
          "__call__",
          [](tg::PythonProgram& p, py::args bufs, py::object global_size, py::object local_size, py::object vals,
             bool wait) -> py::object {
            std::vector<std::unique_ptr<HeldBuffer>> held;
            std::vector<void*> ptrs;
            std::vector<size_t> sizes;
            for (py::handle b : bufs) {
              held.push_back(std::make_unique<HeldBuffer>(b));
              ptrs.push_back(held.back()->view.buf);
              sizes.push_back(static_cast<size_t>(held.back()->view.len));
            }
            std::vector<int64_t> vs = vals.cast<std::vector<int64_t>>();
            std::optional<double> t =
                p.run(ptrs, sizes, vs, wait, dims_arg(global_size, "global_size"), dims_arg(local_size, "local_size"));
            return t ? py::cast(*t) : py::none();
          },
          py::arg("global_size") = py::make_tuple(1, 1, 1), py::arg("local_size") = py::make_tuple(1, 1, 1),
          py::arg("vals") = py::tuple(), py::arg("wait") = false);

  py::class_<tg::Allocator, std::shared_ptr<tg::Allocator>>(m, "Allocator")
      .def("alloc", [](tg::Allocator& a, size_t n) { return reinterpret_cast<uintptr_t>(a.alloc(n)); })
      .def("free", [](tg::Allocator& a, uintptr_t p, size_t n) { a.free(reinterpret_cast<tg::Opaque>(p), n); })
      .def_property_readonly("supports_offset", &tg::Allocator::supports_offset);
  py::class_<tg::Compiler, std::shared_ptr<tg::Compiler>>(m, "Compiler")
      .def("compile", [](tg::Compiler& c, const std::string& src) { return py::bytes(c.compile(src)); })
      .def("compile_cached", [](tg::Compiler& c, const std::string& src) { return py::bytes(c.compile_cached(src)); })
      .def_readonly("cachekey", &tg::Compiler::cachekey);
  py::class_<tg::TensorCore>(m, "TensorCore")  // D = A * B + C over a warp (tinygrad's renderer.TensorCore)
      .def_property_readonly("dims",
                             [](const tg::TensorCore& t) { return py::make_tuple(t.dims[0], t.dims[1], t.dims[2]); })
      .def_readonly("threads", &tg::TensorCore::threads)
      .def_property_readonly("elements_per_thread",
                             [](const tg::TensorCore& t) {
                               const auto& e = t.elements_per_thread;
                               return py::make_tuple(e[0], e[1], e[2]);
                             })
      .def_readonly("dtype_in", &tg::TensorCore::dtype_in)
      .def_readonly("dtype_out", &tg::TensorCore::dtype_out)
      .def_property_readonly("opts", [](const tg::TensorCore& t) { return py::tuple(py::cast(t.opts)); })
      .def("__str__", &tg::TensorCore::str)
      .def("__repr__", [](const tg::TensorCore& t) { return tg::cat("<TensorCore ", t.str(), ">"); });
  py::class_<tg::Renderer>(m, "Renderer")
      .def_property_readonly("device", [](const tg::Renderer& r) { return r.device; })
      .def_property_readonly("suffix", [](const tg::Renderer& r) { return r.suffix; })
      .def_property_readonly("supports_float4", [](const tg::Renderer& r) { return r.supports_float4; })
      .def_property_readonly("has_local", [](const tg::Renderer& r) { return r.has_local; })
      .def_property_readonly("has_shared", [](const tg::Renderer& r) { return r.has_shared; })
      .def_property_readonly("global_max", [](const tg::Renderer& r) { return r.global_max; })
      .def_property_readonly("local_max", [](const tg::Renderer& r) { return r.local_max; })
      .def_property_readonly("shared_max", [](const tg::Renderer& r) { return r.shared_max; })
      .def_property_readonly("tensor_cores", [](const tg::Renderer& r) { return r.tensor_cores; })
      .def("render", [](tg::Renderer& r, const std::vector<tg::UOp>& uops) { return r.render(uops); })
      .def("__repr__", [](const tg::Renderer& r) { return tg::cat("<Renderer for ", r.device, ">"); });
  py::class_<tg::Compiled>(m, "Compiled")
      .def_readonly("device", &tg::Compiled::device)
      .def_property_readonly("allocator",
                             [](const tg::Compiled& d) -> py::object {
                               // PYTHON's is the reference's PythonAllocator: memoryviews over the engine's memory
                               if (d.device.rfind("PYTHON", 0) == 0)
                                 return py::module_::import("tinygrad.runtime.ops_python").attr("_allocator");
                               return py::cast(d.allocator);
                             })
      .def_readonly("compiler", &tg::Compiled::compiler)
      .def_property_readonly(
          "renderer", [](const tg::Compiled& d) { return d.renderer.get(); }, py::return_value_policy::reference)
      .def("synchronize", &tg::Compiled::synchronize)
      .def("supports_dtype", &tg::Compiled::supports_dtype)  // the device's own answer (ours, not tinygrad's)
      .def("__repr__", [](const tg::Compiled& d) { return tg::cat("<Compiled ", d.device, ">"); });
  m.def(
      "open_device", [](const std::string& d) { return &tg::Device::get(d); }, py::return_value_policy::reference);

  py::class_<tg::BufferSpec>(m, "BufferSpec")
      .def(py::init([](bool uncached, bool cpu_access, bool host, bool nolru) {
             return tg::BufferSpec{.host = host, .cpu_access = cpu_access, .uncached = uncached, .nolru = nolru};
           }),
           py::kw_only(), py::arg("uncached") = false, py::arg("cpu_access") = false, py::arg("host") = false,
           py::arg("nolru") = false)
      .def_readonly("uncached", &tg::BufferSpec::uncached)
      .def_readonly("cpu_access", &tg::BufferSpec::cpu_access)
      .def_readonly("host", &tg::BufferSpec::host)
      .def_readonly("nolru", &tg::BufferSpec::nolru)
      .def("__eq__", [](const tg::BufferSpec& a, const tg::BufferSpec& b) { return a == b; });
  py::class_<Buffer>(m, "Buffer")
      .def(py::init([](const std::string& device, int64_t size, tg::DType dtype, py::object opaque, py::object options,
                       py::object initial_value, bool preallocate) {
             tg::BufferSpec spec = options.is_none() ? tg::BufferSpec{} : options.cast<tg::BufferSpec>();
             Buffer b(tg::Device::canonicalize(device), size, dtype, spec, preallocate);
             if (!opaque.is_none()) throw py::value_error("Buffer: an external opaque handle is not supported yet");
             if (!initial_value.is_none()) {
               std::string bytes = buffer_bytes(initial_value);
               b.ensure_allocated().copyin(bytes.data(), bytes.size());
             }
             return b;
           }),
           py::arg("device"), py::arg("size"), py::arg("dtype"), py::arg("opaque") = py::none(),
           py::arg("options") = py::none(), py::arg("initial_value") = py::none(), py::arg("preallocate") = false)
      .def_property_readonly("device", &Buffer::device)
      .def_property_readonly("size", &Buffer::size)
      .def_property_readonly("dtype", &Buffer::dtype)
      .def_property_readonly("options", [](const Buffer& b) { return b.spec(); })
      .def_property_readonly("nbytes", &Buffer::nbytes)
      .def_property_readonly("offset", &Buffer::offset)
      .def_property_readonly("base", &Buffer::base)
      .def_property_readonly("lb_refcount", &Buffer::lb_refcount)
      .def("is_allocated", &Buffer::is_allocated)
      .def(
          "allocate", [](Buffer& b) -> Buffer& { return b.allocate(); }, py::return_value_policy::reference_internal)
      .def(
          "ensure_allocated", [](Buffer& b) -> Buffer& { return b.ensure_allocated(); },
          py::return_value_policy::reference_internal)
      .def("deallocate", &Buffer::deallocate)
      .def("view", &Buffer::view, py::arg("size"), py::arg("dtype"), py::arg("offset"))
      .def("as_buffer", [](const Buffer& b) { return as_memoryview(b.as_bytes()); })
      .def(
          "copyin",
          [](Buffer& b, py::handle mv) -> Buffer& {
            std::string bytes = buffer_bytes(mv);
            return b.copyin(bytes.data(), bytes.size());
          },
          py::return_value_policy::reference_internal)
      .def("copyout",
           [](const Buffer& b, py::handle mv) {
             py::buffer_info info = py::reinterpret_borrow<py::buffer>(mv).request(true);
             size_t n = static_cast<size_t>(info.size * info.itemsize);
             std::vector<uint8_t> bytes = b.as_bytes();
             if (n != bytes.size())
               throw py::value_error(tg::cat("copyout: ", n, " bytes into a ", bytes.size(), " byte buffer"));
             std::memcpy(info.ptr, bytes.data(), n);
             return mv;
           })
      .def("numpy", [](const Buffer& b) { return numpy_from_bytes(b.as_bytes(), b.dtype()); })
      .def("__repr__", &Buffer::repr)
      .def("__eq__", [](const Buffer& a, const Buffer& b) { return a == b; })
      .def("__hash__", [](const Buffer& b) { return std::hash<Buffer>()(b); });

  // tinygrad.engine.realize.CompiledRunner's engine side: a rendered ProgramSpec (its name, source and uops) built by
  // its device (compiled, loaded) and run on Buffers with the Variables' values
  py::class_<tg::CompiledRunner, std::shared_ptr<tg::CompiledRunner>>(m, "CompiledProgram")
      .def(
          py::init([](const std::string& name, const std::string& src, const std::string& device, const tg::UOp& ast,
                      const std::vector<tg::UOp>& uops, std::optional<tg::LaunchSize> global_size,
                      std::optional<tg::LaunchSize> local_size) {
            if (uops.empty())
              throw py::value_error(tg::cat("CompiledRunner: ProgramSpec '", name,
                                            "' needs its uops (the engine reads its buffers and variables from them)"));
            tg::ProgramSpec p = tg::ProgramSpec::from_uops(name, src, tg::Device::canonicalize(device), ast, uops,
                                                           global_size, local_size);
            return std::make_shared<tg::CompiledRunner>(std::move(p), name);
          }),
          py::arg("name"), py::arg("src"), py::arg("device"), py::arg("ast"), py::arg("uops"), py::arg("global_size"),
          py::arg("local_size"))
      .def_property_readonly("lib", [](const tg::CompiledRunner& r) { return py::bytes(r.lib); })
      .def(
          "__call__",
          [](tg::CompiledRunner& r, const std::vector<Buffer>& bufs, const tg::VarVals& vars, bool wait) {
            TG_CHECK(bufs.size() == r.p.globals.size(), "kernel ", r.p.name, " takes ", r.p.globals.size(),
                     " buffers, got ", bufs.size());
            for (const Buffer& b : bufs)
              TG_CHECK(b.is_allocated(), "kernel ", r.p.name, " got an unallocated ", b.repr());
            return r(bufs, vars, wait);
          },
          py::arg("bufs"), py::arg("var_vals"), py::arg("wait") = false);

  // tinygrad.codegen.kernel.Kernel's engine side: an AST with the opts applied to it, rendered by a renderer
  py::class_<tg::Kernel>(m, "KernelState")
      .def(py::init([](const tg::UOp& ast, tg::Renderer& r) { return tg::Kernel(ast, r); }), py::arg("ast"),
           py::arg("opts"))
      .def(
          "apply_opt",
          [](tg::Kernel& k, const std::string& op, py::object axis, py::object arg, bool append_opt) {
            try {
              k.apply_opt(to_opt(op, axis, arg), append_opt);
            } catch (const tg::KernelOptError& e) {
              PyErr_SetString(py::module_::import("tinygrad.codegen.kernel").attr("KernelOptError").ptr(), e.what());
              throw py::error_already_set();
            }
          },
          py::arg("op"), py::arg("axis"), py::arg("arg"), py::arg("append_opt") = true)
      .def("apply_default_opts", &tg::apply_default_opts)
      .def("hand_coded_optimizations",
           [](const tg::Kernel& k) {
             py::list out;
             for (const tg::Opt& o : tg::hand_coded_optimizations(k)) out.append(opt_fields(o));
             return out;
           })
      .def_property_readonly("applied_opts",
                             [](const tg::Kernel& k) {
                               py::list out;
                               for (const tg::Opt& o : k.applied_opts) out.append(opt_fields(o));
                               return out;
                             })
      .def_property_readonly("ast", [](const tg::Kernel& k) { return k.ast; })
      .def_property_readonly("sts",  // the ShapeTracker of each buffer, the output's first
                             [](const tg::Kernel& k) {
                               py::list out;
                               for (const tg::ShapeTracker& st : k.sts) out.append(from_arg(tg::st_arg(st)));
                               return out;
                             })
      .def_property_readonly("name", [](const tg::Kernel& k) { return k.name(); })
      .def_property_readonly("full_shape", [](const tg::Kernel& k) { return py::tuple(py::cast(k.full_shape())); })
      .def_property_readonly("output_shape", [](const tg::Kernel& k) { return py::tuple(py::cast(k.output_shape())); })
      .def_property_readonly("shape_len", &tg::Kernel::shape_len)
      .def_property_readonly("first_reduce", &tg::Kernel::first_reduce)
      .def_property_readonly("first_upcast", &tg::Kernel::first_upcast)
      .def_property_readonly("upcasted", [](const tg::Kernel& k) { return k.upcasted; })
      .def_property_readonly("local_dims", [](const tg::Kernel& k) { return k.local_dims; })
      .def("copy", &tg::Kernel::copy)
      // the kernel rendered (tinygrad's to_program): (name, src, device, uops, global_size, local_size, mem_estimate)
      .def(
          "render",
          [](const tg::Kernel& k, tg::Renderer& r) {
            tg::ProgramSpec p = tg::to_program(k, r, true);
            auto size = [](const std::optional<tg::LaunchSize>& l) -> py::object {
              if (!l) return py::none();
              return py::cast(std::vector<int64_t>(l->begin(), l->end()));
            };
            return py::make_tuple(p.name, p.src, p.device, py::cast(p.uops), size(p.global_size), size(p.local_size),
                                  p.mem_estimate);
          },
          py::arg("opts"));

  py::class_<tg::ScheduleItem>(m, "ScheduleItem")
      .def_readonly("ast", &tg::ScheduleItem::ast)
      .def_property_readonly("bufs", [](const tg::ScheduleItem& si) { return py::tuple(py::cast(si.bufs)); })
      .def_property_readonly("outputs",
                             [](const tg::ScheduleItem& si) {
                               py::list out;
                               if (!si.bufs.empty()) out.append(si.bufs[0]);
                               return py::tuple(out);
                             })
      .def_property_readonly("metadata",
                             [](const tg::ScheduleItem& si) {
                               py::list out;
                               for (const tg::Metadata* md : si.metadata) out.append(metadata_object(*md));
                               return py::tuple(out);
                             })
      .def("__repr__", [](const tg::ScheduleItem& si) {
        return tg::cat("ScheduleItem(ast=", tg::op_name(si.ast.op()), ", bufs=", si.bufs.size(), ")");
      });

  m.def(
      "schedule_with_vars",
      [](const std::vector<tg::Tensor>& ts) {
        // the values keyed by their Variables (unbound DEFINE_VARs), as the reference's: found in the graphs before
        // the schedule replaces them with buffers
        std::map<std::string, tg::UOp> defs;
        std::vector<tg::UOp> roots;
        for (const tg::Tensor& t : ts) roots.push_back(t.uop());
        for (const tg::UOp& x : tg::UOp::sink(roots).toposort())
          if (x.op() == tg::Ops::DEFINE_VAR)  // the Variable itself (a tensor graph's has a view of its device)
            defs.emplace(x.arg<tg::VarArg>().name, tg::UOp::make(tg::Ops::DEFINE_VAR, x.dtype(), {}, x.arg()));
        auto [s, vars] = tg::Tensor::schedule_with_vars(ts);
        py::dict var_vals;
        for (const auto& [name, v] : vars) {
          auto it = defs.find(name);
          if (it != defs.end())
            var_vals[py::cast(it->second)] = v;
          else
            var_vals[py::str(name)] = v;
        }
        return py::make_tuple(schedule_list(s), var_vals);
      },
      py::arg("tensors"));
  m.def(
      "run_schedule",
      [](py::handle schedule, const std::map<std::string, int64_t>& var_vals, bool do_update_stats) {
        tg::run_schedule(to_schedule(schedule), var_vals, do_update_stats);
      },
      py::arg("schedule"), py::arg("var_vals") = std::map<std::string, int64_t>{}, py::arg("do_update_stats") = true);
}

}  // namespace tgpy
