# kernscope: `make run` and `make test` do all set-up on a fresh Debian 12 machine: they install
# what is missing (apt-get, only when missing), configure and build in Release, then run the main
# job on the bundled real trace / every test.

BUILD      ?= build
FUZZ_BUILD ?= build-fuzz
JOBS       ?= $(shell nproc)
TRACE      ?= tests/fixtures/nsys/llama_decode_h200/trace.sqlite.gz
KERNSCOPE  := $(BUILD)/tools/kernscope/kernscope
VENV       := $(BUILD)/venv
PY         := $(VENV)/bin/python
FUZZ_SECONDS ?= 0  # 0: the fixed, seeded run of `make test`; N: fuzz N seconds per target

APT_PACKAGES := cmake make g++ pkg-config python3 gzip libsqlite3-dev libcli11-dev libfmt-dev \
                zlib1g-dev libgtest-dev libbenchmark-dev libsimdjson-dev python3-venv python3-dev llvm-14-dev \
                chromium
# libFuzzer needs a clang whose C++ front end takes libstdc++'s <expected> (clang >= 16).
FUZZ_PACKAGES := clang-16 libclang-rt-16-dev

# The tracer needs CUPTI, the CUDA runtime and NVTX: from the CUDA toolkit where one is installed,
# else from NVIDIA's wheels on PyPI (scripts/fetch-cuda-wheels.sh, into .cuda-wheels/). Without
# them, configuring the tests fails unless KERNSCOPE_ALLOW_NO_TRACER=ON (then they are left out).
# (realpath: a file, not a link left dangling by a removed toolkit)
CUDA_TOOLKIT_CUPTI := $(realpath $(CUDA_HOME)/include/cupti.h /usr/local/cuda/include/cupti.h \
                      /usr/local/cuda/extras/CUPTI/include/cupti.h /usr/local/include/cupti.h /usr/include/cupti.h)
KERNSCOPE_ALLOW_NO_TRACER ?= OFF

.PHONY: all deps fuzz-deps build run test fuzz-build fuzz-smoke fuzz bench clean python python-test

all: build

deps:
	@./scripts/install-deps.sh $(APT_PACKAGES)
ifeq ($(CUDA_TOOLKIT_CUPTI),)
	@./scripts/fetch-cuda-wheels.sh || [ "$(KERNSCOPE_ALLOW_NO_TRACER)" = ON ]
endif

fuzz-deps:
	@./scripts/install-deps.sh $(FUZZ_PACKAGES)

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DKERNSCOPE_BUILD_TESTS=ON -DKERNSCOPE_BUILD_BENCH=ON \
	  -DKERNSCOPE_ALLOW_NO_TRACER=$(KERNSCOPE_ALLOW_NO_TRACER)
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(KERNSCOPE) info $(TRACE)
	$(KERNSCOPE) report $(TRACE)

test: build fuzz-smoke python
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	KERNSCOPE_CLI=$(abspath $(KERNSCOPE)) $(PY) -m pytest -q python/tests

# The Python package, built from this tree (scikit-build-core + nanobind) into a virtualenv.
$(PY): python/requirements-dev.txt
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r python/requirements-dev.txt
	touch $(PY)

python: deps $(PY)
	$(PY) -m pip install -q --no-build-isolation .

python-test: python
	$(PY) -m pytest -q python/tests

fuzz-build: fuzz-deps
	CC=clang-16 CXX=clang++-16 cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DKERNSCOPE_BUILD_FUZZ=ON -DKERNSCOPE_BUILD_TESTS=OFF -DKERNSCOPE_BUILD_BENCH=OFF -DKERNSCOPE_BUILD_EXAMPLES=OFF
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
