# -*- Python -*-
"""lit configuration of GradScale's regression tests."""

import glob
import os
import shutil
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "GradScale"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".onnxtext", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.gs_obj_root, "test")
# Unit: gtest; Fuzz: libFuzzer targets and their corpora (which hold copies
# of .onnxtext tests).
config.excludes = ["Unit", "Fuzz", "CMakeLists.txt", "lit.cfg.py",
                   "lit.site.cfg.py", "Inputs"]

# The CPU that gs-run and gs-compile generate code for (their --cpu
# default, through GS_CPU): the host's ("native") unless GS_TEST_CPU or
# `--param cpu=NAME` names another, e.g. x86-64-v3 to run the AVX2 kernel
# schedule on an AVX-512 host (`make check` does both there).
gs_cpu = lit_config.params.get("cpu", os.environ.get("GS_TEST_CPU", ""))
if gs_cpu and gs_cpu != "native":
    config.environment["GS_CPU"] = gs_cpu
    config.name += " (--cpu=%s)" % gs_cpu
    config.available_features.add("cpu-" + gs_cpu)
else:
    config.environment.pop("GS_CPU", None)

# gs-compile compiles every time in the tests (no cache of compiled models
# outlives or crosses a test); the cache's own test names its directory.
config.environment["GS_CACHE_DIR"] = "off"

# The sanitizer build's runtime is instrumented: gs-compile links
# executables with its compiler and sanitizer runtimes.
# `%link_cc` links C programs against the runtime library the same way.
if getattr(config, "gs_link_cxx", ""):
    config.environment["CXX"] = config.gs_link_cxx
    # UBSan's vptr checks in the C++ runtime library need its C++ part.
    config.substitutions.append(
        ("%link_cc", "clang -fsanitize=address,undefined "
         "-fsanitize-link-c++-runtime"))
    config.available_features.add("sanitizers")
else:
    config.substitutions.append(("%link_cc", "cc"))

# `%limit_address_space KB` bounds a command's address space (ulimit -v)
# where the tests check that hostile inputs allocate nothing; AddressSanitizer
# reserves terabytes of shadow, so under it the bound is left out (its own
# allocation checks stand in).
if getattr(config, "gs_link_cxx", ""):
    config.substitutions.append(("%limit_address_space", "true"))
else:
    config.substitutions.append(("%limit_address_space", "ulimit -v"))

# ptxas (the CUDA toolkit's) gates the GPU kernels' registers, spills and
# shared memory; without it those tests are reported unsupported. MLIR's
# NVVM target finds the toolkit (libdevice, which the kernels' math calls
# link) through CUDA_HOME.
gs_ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
if os.access(gs_ptxas, os.X_OK):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", gs_ptxas))
    config.environment["CUDA_HOME"] = os.path.dirname(
        os.path.dirname(os.path.realpath(gs_ptxas)))
    # The toolkit's stub libcuda, which links GPU code but runs nothing.
    gs_cuda_stub = os.path.join(config.environment["CUDA_HOME"], "lib64",
                                "stubs", "libcuda.so")
    if os.path.exists(gs_cuda_stub):
        config.available_features.add("cuda-stub")
        config.substitutions.append(("%cuda_stub", gs_cuda_stub))

# cuobjdump (the toolkit's, or the reference environment's pip wheel, the
# toolkit here having none) lists the kernels' SASS for the static counts
# of epilogue-sass.test; without it that test is reported unsupported.
gs_cuobjdump = shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump"
if not os.access(gs_cuobjdump, os.X_OK) and config.gs_reference_python:
    gs_cuobjdump = next(iter(glob.glob(os.path.join(
        os.path.dirname(os.path.dirname(config.gs_reference_python)), "lib",
        "python3*", "site-packages", "nvidia", "cu*", "bin", "cuobjdump"))),
        "")
if gs_cuobjdump and os.access(gs_cuobjdump, os.X_OK):
    config.available_features.add("cuobjdump")
    config.substitutions.append(("%cuobjdump", gs_cuobjdump))

# An NVIDIA driver: bench/gpu/check.sh then runs its checks instead of
# reporting that it skipped them.
try:
    import ctypes
    ctypes.CDLL("libcuda.so.1")
    config.available_features.add("cuda-driver")
except OSError:
    pass

# Open MPI's mpirun (utils/install-deps.sh installs it) runs the
# data-parallel tests; as root, Open MPI asks for consent. Ranks may
# outnumber the cores (--oversubscribe).
gs_mpirun = shutil.which("mpirun")
if gs_mpirun:
    config.available_features.add("mpi")
    config.substitutions.append(("%mpirun", gs_mpirun + " --oversubscribe"))
    config.environment["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    config.environment["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"

# A libcuda stand-in for the GPU runtime's host side (test/CMakeLists.txt).
config.substitutions.append(("%fake_libcuda", os.path.join(
    config.gs_obj_root, "test", "lib", "libgs-fake-cuda.so")))

# Its libnccl stand-in over MPI, where MPI is (test/CMakeLists.txt).
config.substitutions.append(("%fake_libnccl", os.path.join(
    config.gs_obj_root, "test", "lib", "libgs-fake-nccl.so")))

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%python", sys.executable))
# Debian's python3-onnx (and python3-torch) belong to the system Python.
config.substitutions.append(("%onnx_python", config.gs_onnx_python))
# ONNX Runtime and NumPy from pip, in the build's reference environment;
# without it (GS_REFERENCE_TESTS=OFF, or `--param reference_python=`) the
# tests that need it (REQUIRES: reference-python) are reported unsupported.
gs_reference_python = lit_config.params.get("reference_python",
                                            config.gs_reference_python)
if gs_reference_python:
    config.available_features.add("reference-python")
config.substitutions.append(("%ref_python", gs_reference_python or "false"))
# lit itself, for the test of what the suite reports.
config.substitutions.append(("%lit", "%s %s" % (sys.executable,
                                                os.path.abspath(sys.argv[0]))))
config.substitutions.append(("%gs_onnx_testdata", config.gs_onnx_testdata))
config.substitutions.append(("%gs_src_root", config.gs_src_root))
config.substitutions.append(("%gs_obj_root", config.gs_obj_root))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tools = ["gs-compile", "gs-gpu-info", "gs-opt", "gs-run"]
llvm_config.add_tool_substitutions(tools, [config.gs_tools_dir])
