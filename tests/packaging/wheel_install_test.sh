#!/usr/bin/env bash
# ctest's wheel_install (issue 32, "pip is an install path"): the wheel of `make wheel` installed into
# a fresh virtualenv by README's Install block, run as written, then checked: the report of the
# bundled trace, `record` finding the tracer inside the installed package, the Python quick start;
# and what the block does not show: the CLI and the tracer use the libraries bundled in the wheel,
# no CUDA library is bundled, exit codes pass through the `kernscope` command, and `kernscope fleet`
# runs the virtualenv's interpreter rather than the first python3 on PATH.
# Then every other wheel of DIST_DIR (one per CPython 3.10-3.13 found) in a virtualenv of its interpreter.
#   wheel_install_test.sh REPO_ROOT [DIST_DIR]     (DIST_DIR: REPO_ROOT/dist, where make wheel writes)
set -euo pipefail
root=$(realpath "$1")
dist=$(realpath "${2:-$root/dist}")
fail() { echo "FAIL: $*" >&2; exit 1; }

tag=$(python3 -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
shopt -s nullglob
wheels=("$dist"/kernscope-*-"$tag"-"$tag"-*.whl)
[ ${#wheels[@]} -eq 1 ] || fail "expected one $tag wheel in $dist (make wheel builds it), found ${#wheels[@]}"

# The block runs in a folder that looks like the repository to it (dist/ holding only this wheel,
# tests/ the fixtures), with HOME there too, so its ~/kernscope-venv is new and has nothing else.
# pip keeps its real download cache (numpy comes from it or from PyPI, as for a user).
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home" "$work/dist"
ln -s "${wheels[0]}" "$work/dist/"
ln -s "$root/tests" "$work/tests"
export PIP_CACHE_DIR=${PIP_CACHE_DIR:-$HOME/.cache/pip}
block=$(awk '/<!-- wheel_install_test/ {marked = 1; next}
             marked && /^```sh/ {inside = 1; next}
             inside && /^```/ {exit}
             inside' "$root/README.md")
[ -n "$block" ] || fail "README.md has no block after <!-- wheel_install_test -->"
echo "README's install block, run in $work with HOME=$work/home:"
echo "$block"
if ! (cd "$work" && env -u VIRTUAL_ENV -u PYTHONPATH -u KERNSCOPE_PYTHON -u KERNSCOPE_TRACER_LIB HOME="$work/home" \
      bash -euo pipefail -c "$block") >"$work/out.txt" 2>&1; then
  cat "$work/out.txt"
  fail "README's install block failed"
fi
out=$(cat "$work/out.txt")
venv=$work/home/kernscope-venv
site=$(ls -d "$venv"/lib/python3.*/site-packages)

# kernscope report on the bundled trace: its kernel count and a finding section.
grep -q "90287 kernels" <<<"$out" || { echo "$out"; fail "kernscope report did not describe the bundled trace"; }
grep -q "^Operation classes" <<<"$out" || { echo "$out"; fail "kernscope report printed no operation classes"; }
# record --help names the tracer it would inject: the one inside the installed package.
grep -qx "Tracer (--backend kernscope): $site/kernscope/lib/libkernscope_tracer.so" <<<"$out" ||
  { echo "$out"; fail "kernscope record does not find the installed tracer"; }
# The Python quick start printed the operation-class table.
grep -Eq "^ *gemv .*44\.7" <<<"$out" || { echo "$out"; fail "the Python quick start printed no table"; }

# The programs resolve the libraries bundled in the wheel, and every library they need but CUDA's
# is found (CUPTI is the user's: a machine whose tracer was built with .cuda-wheels/ has none on
# the loader's path).
tracer=$site/kernscope/lib/libkernscope_tracer.so
for elf in "$site/kernscope/bin/kernscope" "$tracer"; do
  deps=$(ldd "$elf")
  ! grep -v -E "lib(cupti|cuda|nvidia-ml)[.]" <<<"$deps" | grep -q "not found" ||
    { echo "$deps"; fail "$elf: a library is not found"; }
  grep -Eq "libsqlite3-[0-9a-f]+\.so[^ ]* => $site/[^ ]*kernscope\.libs/" <<<"$deps" ||
    { echo "$deps"; fail "$elf does not use the wheel's own libsqlite3"; }
done
# Where this machine has CUPTI, the tracer loads into a foreign process as libcuda would load it
# (every symbol bound now, its initializers run): what ldd cannot tell.
if ! ldd "$tracer" | grep -q "libcupti.*not found"; then
  "$venv/bin/python" -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1])' "$tracer" ||
    fail "the installed tracer does not load"
fi
# CUPTI is looked for where CUDA's wheels and toolkits put it, as a make-built tracer does.
runpath=$(readelf -d "$site/kernscope/lib/libkernscope_tracer.so" | grep -E "RUNPATH|RPATH")
for dir in '$ORIGIN/../../nvidia/cu13/lib' /usr/local/cuda/lib64 /usr/local/cuda/extras/CUPTI/lib64; do
  grep -qF "$dir" <<<"$runpath" || fail "the tracer's run path lacks $dir: $runpath"
done
bundled_cuda=$(find "$site" -name 'libcupti*' -o -name 'libcuda.so*' -o -name 'libnvidia-ml*')
[ -z "$bundled_cuda" ] || fail "CUDA libraries are bundled: $bundled_cuda"

# The console command passes the CLI's exit code through (2: bad input).
rc=0
"$venv/bin/kernscope" report "$work/no-such-trace.sqlite" 2>/dev/null || rc=$?
[ "$rc" -eq 2 ] || fail "kernscope report on a missing file exited $rc, not the CLI's 2"
# kernscope fleet with a PATH whose python3 (if any) lacks kernscope: it must run the venv's.
fleet=$(env -u KERNSCOPE_PYTHON PATH=/usr/bin:/bin "$venv/bin/kernscope" fleet --help 2>&1) ||
  { echo "$fleet"; fail "kernscope fleet did not run with the virtualenv's interpreter"; }
grep -q "kernscope fleet" <<<"$fleet" || { echo "$fleet"; fail "kernscope fleet --help printed no usage"; }
# docs/python.md's first block (load a trace, its kernels by operation class) in the installed package.
ln -s "$root/docs" "$work/docs"
quick=$(awk '/^```python/ {inside = 1; next} inside && /^```/ {exit} inside' "$root/docs/python.md")
[ -n "$quick" ] || fail "docs/python.md has no python block"
page=$(cd "$work" && env -u PYTHONPATH "$venv/bin/python" -c "$quick" 2>&1) || { echo "$page"; fail "docs/python.md's first block failed"; }
grep -q "nsys-sqlite NVIDIA H200" <<<"$page" && grep -q "^gemv " <<<"$page" ||
  { echo "$page"; fail "docs/python.md's first block printed no trace or classes"; }
echo "wheel_install: ${wheels[0]##*/} installed and used from a fresh virtualenv"

# Every other wheel make wheel built (one per CPython 3.10-3.13 the machine has,
# scripts/find-pythons.sh): installed into a fresh virtualenv of its own interpreter, its
# Requires-Python true, its CLI and Python package used on the bundled trace.
requires=$(unzip -p "${wheels[0]}" '*.dist-info/METADATA' | sed -n 's/^Requires-Python: //p')
[ "$requires" = ">=3.10" ] || fail "Requires-Python is '$requires', not >=3.10 (the wheels built are for 3.10-3.13)"
for python in $("$root/scripts/find-pythons.sh"); do
  other=$("$python" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
  [ "$other" != "$tag" ] || continue
  found=("$dist"/kernscope-*-"$other"-*.whl)
  [ ${#found[@]} -eq 1 ] || fail "expected one $other wheel in $dist for $python, found ${#found[@]}"
  "$python" -m venv "$work/venv-$other"
  "$work/venv-$other/bin/pip" install -q "${found[0]}" >"$work/pip-$other.txt" 2>&1 || { cat "$work/pip-$other.txt"; fail "pip refused ${found[0]##*/}"; }
  info=$(cd "$work" && env -u PYTHONPATH "$work/venv-$other/bin/kernscope" info tests/fixtures/nsys/llama_decode_h200/trace.sqlite.xz 2>&1) ||
    { echo "$info"; fail "$other: kernscope info failed"; }
  grep -q "90287" <<<"$info" || { echo "$info"; fail "$other: kernscope info did not describe the bundled trace"; }
  py=$(cd "$work" && env -u PYTHONPATH "$work/venv-$other/bin/python" -c '
import kernscope
t = kernscope.open("tests/fixtures/nsys/llama_decode_h200/trace.sqlite.xz")
print(kernscope.__version__, len(t.kernels()["start_ns"]))' 2>&1) || { echo "$py"; fail "$other: the Python package failed"; }
  grep -q " 90287$" <<<"$py" || { echo "$py"; fail "$other: the Python package read $py"; }
  echo "wheel_install: ${found[0]##*/} installed and used with $python"
done
