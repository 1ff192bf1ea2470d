# tinygrad.nn.state: state dicts (src/tg/nn/state.h); get_state_dict walks tensors, C++ layers, dicts, lists, tuples,
# namedtuples and objects' attributes, naming them with dots ("layers.0.weight"); safetensors files
from tinygrad._C.nn.state import get_state_dict, get_parameters, load_state_dict  # noqa: F401
from tinygrad._C.nn.state import safe_save, safe_load, safe_load_metadata, torch_load  # noqa: F401
