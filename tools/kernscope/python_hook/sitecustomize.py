# Installed by `kernscope record` for traced Python programs (a temporary folder first on
# PYTHONPATH). Python's multiprocessing workers, vLLM's and SGLang's included, end with os._exit,
# which skips the exit handlers where kernscope's tracer writes the rest of its trace: os._exit is
# wrapped to let the tracer finish first. The host side (garbage collections, and sampled stacks
# with --sample) is recorded by kernscope_host.py, beside this file. Then the sitecustomize this
# one shadows, if any, runs.
import os
import sys


def _kernscope_host():
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("kernscope_host", os.path.join(here, "kernscope_host.py"))
    if spec is None:
        return None
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        recording = module.HostRecording(os.environ)
    except (OSError, ValueError) as exc:
        sys.stderr.write("kernscope host: not recording the host side: %s\n" % exc)
        return None
    recording.start()
    return recording


def _kernscope_wrap_exit(host):
    import ctypes

    library = os.environ.get("KERNSCOPE_TRACER_PATH", "")
    real_exit = os._exit

    def _exit(code):
        if host is not None:
            host.finish()  # finishes the tracer first, then adds the host rows
        try:
            # RTLD_NOLOAD: only when the tracer is already in the process (CUDA was started).
            ctypes.CDLL(library, mode=os.RTLD_NOLOAD | os.RTLD_NOW).kernscope_tracer_finish()
        except (OSError, AttributeError):
            pass
        real_exit(code)

    if library or host is not None:
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


_kernscope_wrap_exit(_kernscope_host())
_kernscope_chain()
