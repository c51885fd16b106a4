"""The `kernscope` console command of a pip install: runs the C++ CLI the wheel carries
(kernscope/bin/kernscope) in place of this process, so arguments, standard streams, signals and the
exit status are the CLI's own. Nothing of the CLI is reimplemented here.

A package of its own, beside `kernscope`, because an entry point inside `kernscope` would import
`kernscope/__init__.py` (numpy and the extension) first: about 0.3 s before every command."""
from __future__ import annotations

import importlib.util
import os
import sys


def main() -> int:
    # find_spec locates the package without importing it.
    spec = importlib.util.find_spec("kernscope")
    package = list(spec.submodule_search_locations or []) if spec else []
    if not package:  # never a path relative to the working folder: that could run anyone's program
        sys.stderr.write("kernscope: error: the kernscope package is not installed for this interpreter\n")
        return 2
    binary = os.path.join(package[0], "bin", "kernscope")
    if not os.access(binary, os.X_OK):
        # A package built without its programs (a plain `pip install .`, which builds the extension
        # alone): say so instead of a traceback.
        sys.stderr.write(f"kernscope: error: this install has no CLI ({binary} is missing); "
                         "install the wheel of `make wheel`\n")
        return 2
    # `kernscope fleet` runs the fleet tier with the interpreter this package is installed for,
    # not whichever python3 comes first on PATH (tools/kernscope/cmd_fleet.cpp honours it).
    os.environ.setdefault("KERNSCOPE_PYTHON", sys.executable)
    os.execv(binary, [binary] + sys.argv[1:])
    return 2  # not reached: execv replaces this process or raises


if __name__ == "__main__":
    sys.exit(main())
