# Installed by `kernscope record` for traced Python programs (a temporary folder first on
# PYTHONPATH). Python's multiprocessing workers, vLLM's and SGLang's included, end with os._exit,
# which skips the exit handlers where kernscope's tracer writes the rest of its trace: os._exit is
# wrapped to let the tracer finish first. Then the sitecustomize this one shadows, if any, runs.
import os
import sys


def _kernscope_wrap_exit():
    import ctypes

    library = os.environ.get("KERNSCOPE_TRACER_PATH", "")
    real_exit = os._exit

    def _exit(code):
        try:
            # RTLD_NOLOAD: only when the tracer is already in the process (CUDA was started).
            ctypes.CDLL(library, mode=os.RTLD_NOLOAD | os.RTLD_NOW).kernscope_tracer_finish()
        except (OSError, AttributeError):
            pass
        real_exit(code)

    if library:
        os._exit = _exit


def _kernscope_chain():
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        folder = os.path.abspath(entry or ".")
        if folder == here:
            continue
        candidate = os.path.join(folder, "sitecustomize.py")
        if os.path.isfile(candidate):
            spec = importlib.util.spec_from_file_location("_kernscope_shadowed_sitecustomize", candidate)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return


_kernscope_wrap_exit()
_kernscope_chain()
