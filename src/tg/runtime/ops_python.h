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

// the PYTHON renderer: has_local, has_shared, the ALUs the interpreter evaluates natively; its "source" is the
// program listing (print_uops), which DEBUG=4 prints
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
  ~PythonProgram() override;
  const std::string name;

 protected:
  std::optional<double> call(std::span<const Opaque> bufs, std::span<const int64_t> vals, bool wait, Dims global_size,
                             std::optional<Dims> local_size) override;

 private:
  struct Inst;
  std::vector<Inst> prog_;
};

std::unique_ptr<Compiled> open_python_device(const std::string& device);

}  // namespace tg
