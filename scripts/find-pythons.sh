#!/usr/bin/env bash
# Prints every CPython 3.10-3.13 this machine has, one path per version, oldest first: `make wheel`
# builds one wheel for each. An interpreter is taken from PATH (python3.X), else from pyenv's versions
# folder (PYENV_ROOT, default ~/.pyenv), where its shim may not be active; it must run and have its
# headers (the extension compiles against them) and venv.
set -u
root=${PYENV_ROOT:-$HOME/.pyenv}
for v in 3.10 3.11 3.12 3.13; do
  for candidate in "$(command -v "python$v" 2>/dev/null)" "$root"/versions/"$v".*/bin/python"$v"; do
    [ -n "$candidate" ] && [ -x "$candidate" ] || continue
    if "$candidate" -c 'import sys, os, sysconfig, venv; sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")) else 1)' 2>/dev/null; then
      echo "$candidate"
      break
    fi
  done
done
