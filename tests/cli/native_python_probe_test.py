#!/usr/bin/env python3
"""The tracer's test for "this process runs Python" (src/tracer/native_recording.cpp: Py_IsInitialized found
and true), asked inside this real CPython through a test library: it must say yes, so that `record --sample
cpu` leaves a Python program to the Python hook and starts no native sampler there. (Its "no" in a program
that is not Python is checked by the native sampler's unit test.)
Usage: native_python_probe_test.py LIBRARY
"""
import ctypes
import sys

answer = ctypes.CDLL(sys.argv[1]).kernscope_process_runs_python()
print("process_runs_python in CPython %s: %d" % (sys.version.split()[0], answer))
sys.exit(0 if answer == 1 else 1)
