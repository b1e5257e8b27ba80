# GradScale: the two entry points of the README, and the build they share.
#
#   make demo    install what is missing, build, run the bundled example
#   make check   install what is missing, build, run every test
#   make bench   build, run the benchmarks in bench/ (see bench/README.md)
#
# Variables: BUILD (build directory), JOBS (parallel jobs), BUILD_TYPE.

BUILD ?= build
JOBS ?= 2
BUILD_TYPE ?= Release
LLVM_PREFIX ?= /usr/lib/llvm-22

CMAKE_FLAGS = -G Ninja \
  -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
  -DMLIR_DIR=$(LLVM_PREFIX)/lib/cmake/mlir \
  -DLLVM_EXTERNAL_LIT=$(LLVM_PREFIX)/bin/lit \
  -DLLVM_USE_LINKER=lld \
  -DCMAKE_C_COMPILER_LAUNCHER=ccache \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache

.PHONY: all deps configure build check demo bench docs clean

all: build

deps:
	@utils/install-deps.sh

$(BUILD)/build.ninja: | deps
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

configure: $(BUILD)/build.ninja

build: deps configure
	ninja -C $(BUILD) -j$(JOBS)

check: build
	ninja -C $(BUILD) -j$(JOBS) check-gs

demo: build
	@utils/demo.sh $(BUILD)

bench: build
	ninja -C $(BUILD) gs-reference-python
	$(BUILD)/reference-python/bin/python3 bench/cpu_forward.py --build $(BUILD)
	python3 bench/import_resnet18.py --build $(BUILD)
	/usr/bin/python3 bench/train_step.py --build $(BUILD)

docs: configure
	ninja -C $(BUILD) gs-doc

clean:
	rm -rf $(BUILD)
