#pragma once
// runtime: the PYTHON device (tinygrad's ops_python.py): a UOp interpreter, and where Tensor(list) data lives before
// it is copied to a device. Its renderer has locals and shared memory, so the GPU code path (SPECIAL, LOCAL,
// GROUP/GROUPTOP, DEFINE_LOCAL, BARRIER) runs on any machine. A kernel runs one work-group at a time, its threads in
// lockstep: every uop is evaluated for every thread of the group before the next, which is what a barrier promises.
// Slow and simple on purpose: the readable definition of what each uop means, and the oracle for other devices.
#include <memory>
#include <string>
#include <vector>

#include "tg/renderer/renderer.h"
#include "tg/runtime/device.h"

namespace tg {

// the PYTHON renderer: has_local, has_shared, the ALUs the interpreter evaluates natively; its source is the program
// text load_python_program reads back (one uop a line: index, op, dtype, sources, arg; ops_python_source.cpp), which
// DEBUG=4 prints
class PythonRenderer : public Renderer {
 public:
  PythonRenderer();
  std::string render(const std::vector<UOp>& uops) override;
};

// runs a linearized uop list (what ProgramSpec::uops holds); the buffers come in DEFINE_GLOBAL order, the variables
// in ProgramSpec::vars order. A load or store out of a buffer's bounds is an IndexError naming the uop.
class PythonProgram : public Program {
 public:
  PythonProgram(std::string name, const std::vector<UOp>& uops, const std::vector<UOp>& vars);
  // the variables take their values in program order (the reference's PythonProgram), as from the renderer's text
  PythonProgram(std::string name, const std::vector<UOp>& uops);
  PythonProgram(std::string name, std::string_view lib);
  ~PythonProgram() override;
  const std::string name;

  // run on host memory of known sizes (the Python module's buffers, tinygrad's memoryviews): each access is checked
  // against its buffer's bytes rather than its pointer type; too few buffers is an IndexError
  std::optional<double> run(std::span<void* const> bufs, std::span<const size_t> nbytes, std::span<const int64_t> vals,
                            bool wait, Dims global_size, std::optional<Dims> local_size);

 protected:
  std::optional<double> call(std::span<const Opaque> bufs, std::span<const int64_t> vals, bool wait, Dims global_size,
                             std::optional<Dims> local_size) override;

 private:
  struct Inst;
  std::vector<Inst> prog_;
};

// the uops of a PYTHON program text (PythonRenderer::render's output), the same interned uops that were rendered;
// text that isn't a program is a ValueError naming the line, an arg with no text form a NotImplementedError
std::vector<UOp> load_python_program(const std::string& name, std::string_view src);

std::unique_ptr<Compiled> open_python_device(const std::string& device);

}  // namespace tg
