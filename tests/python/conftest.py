# shared by the python tests: `cpu_only` marks a test of the tutorial's CPU transcript (the reference's golden output,
# printed on CPU); the run on another device (DEV=PYTHON ...) skips it and says why
import os, pytest

ON_CPU = os.environ.get("DEV", "CPU").upper() in ("", "CPU")
cpu_only = pytest.mark.skipif(not ON_CPU, reason="the tutorial's CPU transcript (reference golden output)")
