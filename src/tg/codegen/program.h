#pragma once
// to_program: a Kernel rendered into a ProgramSpec, not built (tinygrad's Kernel.to_program); the engine builds and
// runs it (engine/realize.h: compile_kernel, get_runner)
#include <string>

#include "tg/codegen/kernel.h"
#include "tg/renderer/renderer.h"

namespace tg {

// the kernel with its opts applied, rendered with r (vector ALUs for a CPU tile): its source, launch sizes and
// parameters. quiet: no DEBUG output (BEAM's candidates); device: where it runs (default: the renderer's device)
ProgramSpec to_program(const Kernel& k, Renderer& r, bool quiet, const std::string& device = "");

}  // namespace tg
