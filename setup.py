# pip install . : builds the extension tinygrad._C with CMake (the library and python/), installs the package
# python/tinygrad beside it. Nothing is fetched: CMake, a C++20 compiler, pybind11 and the Python headers must be
# installed (Debian: cmake g++ pybind11-dev python3-dev).
import os, pathlib, shutil, subprocess, sys
from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).parent.resolve()

class CMakeExtension(Extension):
  def __init__(self, name): super().__init__(name, sources=[])

class CMakeBuild(build_ext):
  def build_extension(self, ext):
    build = pathlib.Path(self.build_temp).resolve() / "cmake"
    build.mkdir(parents=True, exist_ok=True)
    cfg = ["-DCMAKE_BUILD_TYPE=Release", f"-DPython_EXECUTABLE={sys.executable}", "-DTG_BUILD_PYTHON=ON",
           "-DTG_BUILD_TESTS=OFF", "-DTG_BUILD_BENCH=OFF", "-DTG_BUILD_EXAMPLES=OFF"]
    if shutil.which("ninja"): cfg += ["-G", "Ninja"]
    subprocess.check_call(["cmake", "-S", str(ROOT), "-B", str(build), *cfg])
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
    subprocess.check_call(["cmake", "--build", str(build), "--target", "tinygrad_python", "-j", jobs])
    so = next((build / "python" / "tinygrad").glob("_C*"))
    dest = pathlib.Path(self.get_ext_fullpath(ext.name))
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(so, dest)

setup(name="tinygrad", version="0.1.0", description="tinygrad's Python API on the tinygrad.cpp engine",
      package_dir={"": "python"}, packages=find_packages("python"), ext_modules=[CMakeExtension("tinygrad._C")],
      cmdclass={"build_ext": CMakeBuild}, python_requires=">=3.10", zip_safe=False,
      options={"build": {"build_base": "build-pip"}})
