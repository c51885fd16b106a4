# Sourced by the GPU scripts, run from the repository root on the GPU machine: the kernscope binary
# and tracer copied under .gpu/ (with the libraries they need), and q, one SQL query through Python's
# sqlite3 (the GPU machines have no sqlite3 shell).
R=$PWD
export KERNSCOPE_TRACER_LIB=$R/.gpu/bin/libkernscope_tracer.so
K="env LD_LIBRARY_PATH=$R/.gpu/lib $R/.gpu/bin/kernscope"
q() { python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute(sys.argv[2]).fetchall())" "$@" 2>&1 | cut -c1-300; }
