#!/usr/bin/env bash
# Fetches the CUDA pieces the tracer builds against (CUPTI, the CUDA runtime, NVTX and the headers
# they include) from NVIDIA's wheels on PyPI, for machines without a CUDA toolkit, and unpacks them
# into DEST (default: .cuda-wheels/ in the project) laid out like a toolkit: DEST/include, DEST/lib.
# src/tracer/CMakeLists.txt looks there after the toolkit. `make deps` runs this when no toolkit is
# found. Nothing is installed into any Python environment: pip only downloads.
set -eu
cd "$(dirname "$0")/.."
DEST=${1:-.cuda-wheels}

# Pinned to CUDA 13.0, the toolkit and driver generation of the GPU hosts (driver 580), so a tracer
# built from wheels links against the same CUPTI and runtime as one built with the toolkit.
WHEELS=(
  nvidia-cuda-cupti==13.0.85        # cupti*.h, generated_nvtx_meta.h, libcupti.so.13
  nvidia-cuda-runtime==13.0.96      # cuda.h, cuda_runtime_api.h, driver_types.h, libcudart.so.13
  nvidia-cuda-crt==13.0.88          # crt/host_defines.h, included by the runtime headers
  nvidia-cuda-profiler-api==13.0.85 # cuda_profiler_api.h (kernscope/annotate.h)
  nvidia-nvtx==13.0.85              # nvtx3/ (header-only NVTX v3)
)
STAMP="$DEST/wheels.txt"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "${WHEELS[*]}" ]; then
  exit 0  # already unpacked, same versions
fi

# Debian's python3 has no pip module (python3-pip is not installed); python3-venv brings one.
PIP=(python3 -m pip)
if ! python3 -m pip --version >/dev/null 2>&1; then
  python3 -m venv "$DEST/.pip-venv"
  PIP=("$DEST/.pip-venv/bin/python" -m pip)
fi

echo "fetching CUDA 13.0 CUPTI, runtime and NVTX wheels from PyPI into $DEST/"
rm -rf "$DEST/include" "$DEST/lib" "$DEST/download" "$STAMP"
mkdir -p "$DEST/download"
"${PIP[@]}" download --quiet --no-deps --only-binary=:all: --dest "$DEST/download" "${WHEELS[@]}"

# A wheel is a zip holding nvidia/cu13/{include,lib}/...; unpack those two folders into DEST.
python3 - "$DEST" "$DEST"/download/*.whl <<'EOF'
import pathlib, re, sys, zipfile
dest = pathlib.Path(sys.argv[1])
for wheel in sys.argv[2:]:
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            m = re.match(r"nvidia/cu\d+/((?:include|lib)/.+)", name)
            if m and not name.endswith("/"):
                target = dest / m.group(1)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(z.read(name))
EOF

# Wheels ship only the versioned libraries (libcupti.so.13); the linker looks for libcupti.so.
shopt -s nullglob
for lib in "$DEST"/lib/lib*.so.[0-9]*; do
  link="${lib%%.so.*}.so"
  [ -e "$link" ] || ln -s "$(basename "$lib")" "$link"
done

for needed in include/cupti.h include/cuda_runtime_api.h include/crt/host_defines.h \
              include/cuda_profiler_api.h include/nvtx3/nvToolsExt.h lib/libcupti.so lib/libcudart.so; do
  [ -e "$DEST/$needed" ] || { echo "fetch-cuda-wheels: $needed missing from the wheels" >&2; exit 1; }
done
rm -rf "$DEST/download"
echo "${WHEELS[*]}" >"$STAMP"
echo "CUDA wheels unpacked: $DEST/include, $DEST/lib"
