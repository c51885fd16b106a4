#!/usr/bin/env python3
"""The progress line on standard error (issue 32, item 4): shown for work that runs long when standard error is
a terminal, never otherwise, never with --quiet, and erased when the work ends.

Each case runs `kernscope` with standard error on a pseudo-terminal (pty) or on a pipe.
KERNSCOPE_PROGRESS_AFTER_MS=0 makes any work "long" (the real threshold is 2 s, so the short commands of a
test would show nothing): that is the only thing the environment variable changes.
  - report on an nsys export, under a pty: "kernscope: reading FILE: N rows", and the line ends erased;
  - the same with -q (before or after the subcommand): nothing on stderr;
  - the same with stderr on a pipe: no progress line;
  - a threshold the command does not reach (10 minutes), under a pty: nothing;
  - a Kineto trace: bytes read; `compare` of two traces: "reading traces: ... of 2 traces" (the outer meter
    only; each reader's own meter stays quiet inside it).
usage: progress_test.py KERNSCOPE FIXTURES_DIR"""
import os
import pathlib
import pty
import select
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
from compressed import plain_copy  # noqa: E402

failures = []


def check(ok, what, got=b""):
    print(f"{'ok  ' if ok else 'FAIL'} {what}" + ("" if ok else f": {got[:300]!r}"))
    if not ok:
        failures.append(what)


def stderr_of(args, on_pty, after_ms="0"):
    env = dict(os.environ)
    if after_ms is None:
        env.pop("KERNSCOPE_PROGRESS_AFTER_MS", None)
    else:
        env["KERNSCOPE_PROGRESS_AFTER_MS"] = after_ms
    if not on_pty:
        r = subprocess.run([KERNSCOPE, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, timeout=300)
        return r.returncode, r.stderr
    master, slave = pty.openpty()
    p = subprocess.Popen([KERNSCOPE, *args], stdout=subprocess.DEVNULL, stderr=slave, env=env)
    os.close(slave)
    out = b""
    while True:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the pty closes when the program exits
                break
            if not chunk:
                break
            out += chunk
        elif p.poll() is not None:
            break
    rc = p.wait(timeout=300)
    os.close(master)
    return rc, out


def main():
    global KERNSCOPE
    KERNSCOPE, fixtures = sys.argv[1], pathlib.Path(sys.argv[2])
    nsys = plain_copy(fixtures / "nsys" / "llama_decode_h200" / "trace.sqlite.xz")
    kineto = plain_copy(fixtures / "kineto" / "llama_decode_h200_gen16.json.xz")
    rc, err = stderr_of(["report", nsys], True)
    check(rc == 0 and b"kernscope: reading " in err and b" rows" in err and err.endswith(b"\r\x1b[K"),
          "report under a pty: the reading line, erased at the end", err)
    for args in (["-q", "report", nsys], ["report", "-q", nsys], ["--quiet", "report", nsys]):
        rc, err = stderr_of(args, True)
        check(rc == 0 and err == b"", f"{' '.join(args[:2])} under a pty: nothing on stderr", err)
    rc, err = stderr_of(["report", nsys], False)
    check(rc == 0 and b"kernscope: reading" not in err and b"\x1b[K" not in err, "stderr on a pipe: no progress line", err)
    rc, err = stderr_of(["info", nsys], True, after_ms="600000")
    check(rc == 0 and err == b"", "work shorter than the threshold shows nothing under a pty", err)
    rc, err = stderr_of(["info", kineto], True)
    check(rc == 0 and b"kernscope: reading " in err and b" MB" in err, "a Kineto trace: bytes read", err)
    rc, err = stderr_of(["compare", nsys, kineto], True)
    check(rc == 0 and b"reading traces: " in err and b"of 2 traces" in err and b" rows" not in err,
          "compare: the outer meter (traces) only", err)
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    main()
