# GradScale: the two entry points of the README, and the build they share.
#
#   make demo    install what is missing, build, run the bundled example
#   make check   install what is missing, build, run every test (with the
#                Python package's, `make check-python`)
#   make bench   build, run the benchmarks in bench/ (see bench/README.md)
#   make experiments
#                build, train the public models of bench/experiments in every
#                gradient precision mode, write RESULTS.md and the plots in
#                bench/experiments/results (about 30 minutes on 2 cores);
#                `make check` runs it at its --quick size
#   make fuzz    build the libFuzzer targets (clang, ASan, UBSan) and run
#                each for FUZZ_SECONDS (default 600); `make check` runs them
#                for CHECK_FUZZ_RUNS executions each from a fixed seed (as
#                far on every machine), at most CHECK_FUZZ_SECONDS
#   make check-sanitizers
#                the whole unit and lit suite built with clang, ASan and
#                UBSan (in BUILD_FUZZ)
#
# Variables: BUILD (build directory), JOBS (parallel jobs), BUILD_TYPE,
# BUILD_FUZZ (the fuzzing build), FUZZ_SECONDS.

BUILD ?= build
JOBS ?= 2
BUILD_TYPE ?= Release
LLVM_PREFIX ?= /usr/lib/llvm-22
BUILD_FUZZ ?= build-fuzz
FUZZ_SECONDS ?= 600
CHECK_FUZZ_RUNS ?= 100000
CHECK_FUZZ_SECONDS ?= 300

CMAKE_FLAGS = -G Ninja \
  -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
  -DMLIR_DIR=$(LLVM_PREFIX)/lib/cmake/mlir \
  -DLLVM_EXTERNAL_LIT=$(LLVM_PREFIX)/bin/lit \
  -DLLVM_USE_LINKER=lld \
  -DCMAKE_C_COMPILER_LAUNCHER=ccache \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache

.PHONY: all deps configure build check check-python demo bench bench-pytorch bench-conv docs clean fuzz fuzz-build \
	gpu-check-prepare check-sanitizers experiments

all: build

deps:
	@utils/install-deps.sh

$(BUILD)/build.ninja: | deps
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

configure: $(BUILD)/build.ninja

build: deps configure
	ninja -C $(BUILD) -j$(JOBS)

check: build fuzz-build
	ninja -C $(BUILD) -j$(JOBS) check-gs
	$(MAKE) --no-print-directory check-python
	/usr/bin/python3 bench/experiments/run.py --build $(BUILD) --quick --jobs $(JOBS)
	FUZZ_SEED=1 FUZZ_RUNS=$(CHECK_FUZZ_RUNS) utils/run_fuzzers.sh \
	  $(BUILD_FUZZ) $(CHECK_FUZZ_SECONDS)

# The Python package as users install it (`pip install ./python-bindings`,
# which builds the extension in build/python-wheel), in a virtual
# environment of Debian's Python that also sees its NumPy, ONNX and PyTorch;
# then its tests, which compare against the tools in $(BUILD)/bin.
PYTHON_VENV = $(BUILD)/python-venv

check-python: build
	test -x $(PYTHON_VENV)/bin/python || \
	  /usr/bin/python3 -m venv --system-site-packages $(PYTHON_VENV)
	$(PYTHON_VENV)/bin/pip install --quiet --disable-pip-version-check \
	  "./python-bindings[test]"
	GS_BIN=$(abspath $(BUILD))/bin $(PYTHON_VENV)/bin/python -m pytest -q \
	  python-bindings/test

# The fuzzing build: clang, every target instrumented (GS_ENABLE_FUZZING).
$(BUILD_FUZZ)/build.ninja: | deps
	cmake -S . -B $(BUILD_FUZZ) $(CMAKE_FLAGS) -DCMAKE_C_COMPILER=clang \
	  -DCMAKE_CXX_COMPILER=clang++ -DGS_ENABLE_FUZZING=ON

fuzz-build: deps $(BUILD_FUZZ)/build.ninja
	ninja -C $(BUILD_FUZZ) -j$(JOBS) gs-fuzzers

fuzz: fuzz-build
	utils/run_fuzzers.sh $(BUILD_FUZZ) $(FUZZ_SECONDS)

# Every sanitizer report fails the run (UBSan does not recover, ASan halts
# on the first error and checks for leaks at exit). libMLIR.so is not
# instrumented: LLVM's headers poison allocator memory (BumpPtrAllocator,
# Recycler) in our instrumented code that libMLIR's code then hands out
# without unpoisoning, so manual poisoning is off.
SANITIZER_ENV = ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:allow_user_poisoning=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

check-sanitizers: fuzz-build
	ninja -C $(BUILD_FUZZ) -j$(JOBS) all gs-reference-python
	cd $(BUILD_FUZZ) && $(SANITIZER_ENV) ctest --output-on-failure \
	  --exclude-regex lit-x86-64-v3

experiments: build
	/usr/bin/python3 bench/experiments/run.py --build $(BUILD) --jobs $(JOBS)

demo: build
	@utils/demo.sh $(BUILD)

# The GPU kernels' check (bench/gpu/check.sh) runs where a GPU is; this
# builds what it loads: PTX and a manifest in $(BUILD)/gpu-check.
gpu-check-prepare: build
	python3 bench/gpu/prepare_kernels.py --gs-opt $(BUILD)/bin/gs-opt \
	  --out $(BUILD)/gpu-check
	cp $(BUILD)/bin/gs-gpu-info $(BUILD)/gpu-check/
	/usr/bin/python3 bench/gpu/prepare_train.py --bundle-openmpi \
	  --gs-compile $(BUILD)/bin/gs-compile --out $(BUILD)/gpu-check

bench: build
	ninja -C $(BUILD) gs-reference-python
	$(BUILD)/reference-python/bin/python3 bench/cpu_forward.py --build $(BUILD)
	python3 bench/import_resnet18.py --build $(BUILD)
	/usr/bin/python3 bench/train_step.py --build $(BUILD)
	/usr/bin/python3 bench/distributed.py --build $(BUILD)

# A current PyTorch from pip, the second baseline of bench/conv_net.py
# (about 5 GiB with the CUDA libraries its wheel depends on; the benchmark
# uses its CPU kernels). The stamp marks a finished install.
PYTORCH_CURRENT := $(BUILD)/pytorch-current
bench-pytorch: $(PYTORCH_CURRENT)/installed

$(PYTORCH_CURRENT)/installed:
	python3 -m venv $(PYTORCH_CURRENT)
	$(PYTORCH_CURRENT)/bin/pip install torch==2.15.0 torchvision==0.29.2 numpy
	touch $@

bench-conv: build bench-pytorch
	/usr/bin/python3 bench/conv_net.py --build $(BUILD) \
	  --pytorch-python $(PYTORCH_CURRENT)/bin/python3

docs: configure
	ninja -C $(BUILD) gs-doc

clean:
	rm -rf $(BUILD) $(BUILD_FUZZ)
