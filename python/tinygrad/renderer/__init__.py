# tinygrad.renderer: each device's renderer is the engine's (src/tg/renderer/), read as Device[...].renderer
from tinygrad._C import Renderer  # noqa: F401
