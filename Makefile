# kernscope: `make run` and `make test` do all set-up on a fresh Debian 12 machine: they install
# what is missing (apt-get, only when missing), configure and build in Release, then run the main
# job on the bundled real trace / every test. `make check` is the edit-test loop: an incremental
# build and the fast tests. Build times, as measured: README's set-up section, docs/building.md.

BUILD      ?= build
FUZZ_BUILD ?= build-fuzz
JOBS       ?= $(shell nproc)
TRACE      ?= tests/fixtures/nsys/llama_decode_h200/trace.sqlite.xz
KERNSCOPE  := $(BUILD)/tools/kernscope/kernscope
VENV       := $(BUILD)/venv
PY         := $(VENV)/bin/python
FUZZ_SECONDS ?= 0  # 0: the fixed, seeded run of `make test`; N: fuzz N seconds per target

# What building the CLI needs (`make run`); the tests need the rest. ninja-build and ccache make
# builds faster (cmake/build_speed.cmake); the build works without them.
RUN_PACKAGES := cmake make g++ pkg-config libsqlite3-dev libcli11-dev libfmt-dev zlib1g-dev liblzma-dev libsimdjson-dev libpcre2-dev \
                llvm-14-dev ninja-build ccache
APT_PACKAGES := $(RUN_PACKAGES) python3 gzip xz-utils libgtest-dev libbenchmark-dev python3-venv python3-dev chromium
# libFuzzer needs a clang whose C++ front end takes libstdc++'s <expected> (clang >= 16).
FUZZ_PACKAGES := clang-16 libclang-rt-16-dev

# The tracer needs CUPTI, the CUDA runtime and NVTX: from the CUDA toolkit where one is installed,
# else from NVIDIA's wheels on PyPI (scripts/fetch-cuda-wheels.sh, into .cuda-wheels/). Without
# them, configuring the tests fails unless KERNSCOPE_ALLOW_NO_TRACER=ON (then they are left out).
# (realpath: a file, not a link left dangling by a removed toolkit)
CUDA_TOOLKIT_CUPTI := $(realpath $(CUDA_HOME)/include/cupti.h /usr/local/cuda/include/cupti.h \
                      /usr/local/cuda/extras/CUPTI/include/cupti.h /usr/local/include/cupti.h /usr/include/cupti.h)
KERNSCOPE_ALLOW_NO_TRACER ?= OFF

# Every configuration of $(BUILD) (the CLI's and the tests') compiles the same objects: Release,
# position-independent so that the Python extension links them (KERNSCOPE_CORE_FROM) instead of
# compiling the core again. A new build folder gets Ninja where it is installed (these are expanded
# when a recipe runs, after `deps` has installed it); an existing one keeps its generator.
# KERNSCOPE_UNITY_BUILD=OFF (given to make) compiles every file on its own (cmake/build_speed.cmake).
UNITY_FLAG  = $(if $(KERNSCOPE_UNITY_BUILD),-DKERNSCOPE_UNITY_BUILD=$(KERNSCOPE_UNITY_BUILD))
CMAKE_FLAGS = -DCMAKE_BUILD_TYPE=Release -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
              -DKERNSCOPE_ALLOW_NO_TRACER=$(KERNSCOPE_ALLOW_NO_TRACER) $(UNITY_FLAG)
generator = $(if $(wildcard $(1)/CMakeCache.txt),,$(if $(shell command -v ninja),-G Ninja))
# `make run` configures a new build folder for the CLI alone and leaves a configured one as it is
# (`cmake --build` configures again when a CMake file changed); only the CLI is built either way.
CLI_ONLY := -DKERNSCOPE_BUILD_TESTS=OFF -DKERNSCOPE_BUILD_BENCH=OFF -DKERNSCOPE_BUILD_EXAMPLES=OFF \
            -DKERNSCOPE_BUILD_PEAKS=OFF
ALL_PARTS := -DKERNSCOPE_BUILD_TESTS=ON -DKERNSCOPE_BUILD_BENCH=ON -DKERNSCOPE_BUILD_EXAMPLES=ON \
             -DKERNSCOPE_BUILD_PEAKS=ON
# `make check`'s tests: every GoogleTest case (ctest names them Suite.Case) but the tracer's
# kill tests (30 s), and the layering checks; the whole suite is `make test`'s.
CHECK_TESTS ?= \.|^layers_
CHECK_SKIP  ?= ^TracerKill\.Killed

.PHONY: all deps deps-run fuzz-deps configure build cli run core test check fuzz-build fuzz-smoke fuzz bench clean \
        python python-test wheel

all: build

deps: deps-run
	@./scripts/install-deps.sh $(APT_PACKAGES)
ifeq ($(CUDA_TOOLKIT_CUPTI),)
	@./scripts/fetch-cuda-wheels.sh || [ "$(KERNSCOPE_ALLOW_NO_TRACER)" = ON ]
endif

deps-run:
	@./scripts/install-deps.sh $(RUN_PACKAGES)

fuzz-deps:
	@./scripts/install-deps.sh $(FUZZ_PACKAGES)

# Everything: the CLI, the tests, the benchmarks, the CUDA programs where nvcc is found.
configure: deps
	cmake -S . -B $(BUILD) $(call generator,$(BUILD)) $(CMAKE_FLAGS) $(ALL_PARTS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# The CLI alone, and what it links.
cli: deps-run
	@[ -f $(BUILD)/CMakeCache.txt ] || { set -x; cmake -S . -B $(BUILD) $(call generator,$(BUILD)) $(CMAKE_FLAGS) $(CLI_ONLY); }
	cmake --build $(BUILD) -j $(JOBS) --target kernscope

run: cli
	$(KERNSCOPE) info $(TRACE)
	$(KERNSCOPE) report $(TRACE)

# The core libraries the Python extension links, and the CLI and tracer the package carries
# (kernscope_programs, cmake/wheel_layout.cmake).
core: cli
	cmake --build $(BUILD) -j $(JOBS) --target kernscope_session kernscope_programs

# Every test: ctest (which replays the fuzz seeds and kept corpus through the Release build, and
# installs the wheel into a fresh virtualenv) and pytest (the report page's screenshots land in
# $(BUILD)/screenshots). Fuzzing with ASan/UBSan needs a second, clang build of the whole core
# (about 8 minutes on 2 cores): `make fuzz-smoke`, which CI runs after `make test` (.ci/run).
test: build python wheel
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	KERNSCOPE_CLI=$(abspath $(KERNSCOPE)) KERNSCOPE_SCREENSHOTS=$(abspath $(BUILD))/screenshots $(PY) -m pytest -q -n $(JOBS) python/tests

# The edit-test loop: rebuilds what changed (configuring the tests first where `make run` left them
# out), then runs the fast tests (CHECK_TESTS, less CHECK_SKIP: ctest name patterns).
check:
	@grep -qs '^KERNSCOPE_BUILD_TESTS:BOOL=ON' $(BUILD)/CMakeCache.txt || $(MAKE) --no-print-directory configure
	cmake --build $(BUILD) -j $(JOBS)
	cd $(BUILD) && ctest -j $(JOBS) --output-on-failure -R '$(CHECK_TESTS)' -E '$(CHECK_SKIP)'

# The Python package, built from this tree (scikit-build-core + nanobind) into a virtualenv.
$(PY): python/requirements-dev.txt
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r python/requirements-dev.txt
	touch $(PY)

# The extension links the core libraries of $(BUILD) (KERNSCOPE_CORE_FROM, cmake/core_from.cmake);
# a plain `pip install .` compiles its own.
python: deps $(PY) core
	$(PY) -m pip install -q --no-build-isolation -C cmake.define.KERNSCOPE_CORE_FROM=$(abspath $(BUILD)) .

python-test: python
	$(PY) -m pytest -q python/tests

# The pip wheel in $(DIST)/: the Python package with the CLI and the tracer of $(BUILD) (not
# compiled again) and the apt libraries they link, for `pip install` on glibc Linux without a
# compiler (scripts/build-wheel.sh). One wheel per interpreter of WHEEL_PYTHONS: by default every
# CPython 3.10-3.13 the machine has (scripts/find-pythons.sh), else python3's alone; e.g.
# make wheel WHEEL_PYTHONS="python3.10 python3.12". ctest's wheel_install installs each.
DIST          ?= dist
WHEEL_PYTHONS ?= $(or $(shell ./scripts/find-pythons.sh),python3)
wheel: core
	./scripts/build-wheel.sh $(BUILD) $(DIST) $(WHEEL_PYTHONS)

# The fuzz build: -O1 with line tables only (what a crash's stack needs), as libFuzzer's docs
# suggest; full -O2 -g debug information made it the slowest compile of `make test`.
FUZZ_FLAGS := -DCMAKE_BUILD_TYPE=RelWithDebInfo '-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG' \
              '-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG'

fuzz-build: fuzz-deps
	CC=clang-16 CXX=clang++-16 cmake -S . -B $(FUZZ_BUILD) $(call generator,$(FUZZ_BUILD)) $(FUZZ_FLAGS) \
	  -DKERNSCOPE_BUILD_FUZZ=ON -DKERNSCOPE_BUILD_TESTS=OFF -DKERNSCOPE_BUILD_BENCH=OFF -DKERNSCOPE_BUILD_EXAMPLES=OFF \
	  -DKERNSCOPE_BUILD_PEAKS=OFF $(UNITY_FLAG)
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_nsys_reader fuzz_filter_grammar fuzz_kineto_reader

# A short bounded run of each fuzz target, seeded with the fixtures; a crash fails the build.
fuzz-smoke: fuzz-build
	./scripts/fuzz-smoke.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

# Real fuzzing: each target FUZZ_TIME seconds on its kept corpus (tests/fuzz/corpus), which is then
# minimized and rewritten; executions are added to bench/fuzz-log.tsv. A crash fails it.
FUZZ_TIME ?= 3600
fuzz: fuzz-build
	./scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_TIME)

bench: build
	./scripts/bench.sh $(KERNSCOPE)

clean:
	rm -rf $(BUILD) $(FUZZ_BUILD)
