# tinygrad.engine.grouper: kernelize's rewrites of the tensor graph (which ops fuse into one kernel) are the engine's
# (src/tg/schedule/grouper.cpp, grouper_rules.cpp); Tensor.kernelize runs them
from tinygrad._unsupported import UnsupportedValue, unsupported_class, unsupported_function

_WHY = "kernelize's rewrites are C++ (src/tg/schedule/grouper.cpp) and not bound to Python; use Tensor.kernelize"
Kernel = unsupported_class("tinygrad.engine.grouper.Kernel", _WHY)
create_ast = unsupported_function("tinygrad.engine.grouper.create_ast", _WHY)
create_kernels = unsupported_function("tinygrad.engine.grouper.create_kernels", _WHY)
fix_kernel_ops = unsupported_function("tinygrad.engine.grouper.fix_kernel_ops", _WHY)
get_kernelize_map = unsupported_function("tinygrad.engine.grouper.get_kernelize_map", _WHY)
merge_views = UnsupportedValue("tinygrad.engine.grouper.merge_views", _WHY)
sym = UnsupportedValue("tinygrad.engine.grouper.sym", _WHY)
view_left = UnsupportedValue("tinygrad.engine.grouper.view_left", _WHY)
view_right = UnsupportedValue("tinygrad.engine.grouper.view_right", _WHY)
