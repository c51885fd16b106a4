"""`kernscope capture` against processes of a session without a GPU: each process is a Unix socket
this test serves with the tracer's protocol (one request line, one reply line), as the injected
tracer's control thread does. Checks the fan-out to every process of a session, the choice of one
process by pid, the default session, requests as sent, a process that is gone in the middle of a
session, and the exit codes."""
import os, socket, subprocess, sys, tempfile, threading

K = sys.argv[1]
failures = 0


def check(ok, text):
    global failures
    failures += not ok
    print(("ok   " if ok else "FAIL ") + text)


def serve(path, pid, seen):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(4)

    def loop():
        while True:
            try:
                c, _ = s.accept()
            except OSError:
                return
            line = c.makefile().readline().strip()
            seen.append((pid, line))
            c.sendall(f"ok pid {pid}: got {line}\n".encode())
            c.close()

    threading.Thread(target=loop, daemon=True).start()
    return s


def run(*args, env):
    p = subprocess.run([K, "capture", *args], capture_output=True, text=True, env=env, timeout=30)
    return p.returncode, p.stdout, p.stderr


with tempfile.TemporaryDirectory() as root:
    env = dict(os.environ, KERNSCOPE_RUNTIME_DIR=root)
    os.makedirs(f"{root}/serve")
    seen = []
    for pid in (101, 202):
        serve(f"{root}/serve/{pid}.sock", pid, seen)
    rc, out, err = run("start", "serve", env=env)
    check(rc == 0 and out.splitlines() == ["pid 101: got start", "pid 202: got start"], f"start reaches every process of the session: {out!r}")
    rc, out, err = run("window", "--duration", "500ms", env=env)
    check(rc == 0 and out.splitlines() == ["pid 101: got window duration=0.500000", "pid 202: got window duration=0.500000"],
          f"the only session is the default; 500ms sent as seconds: {out!r}")
    rc, out, err = run("window", "202", "--steps", "20", env=env)
    check(rc == 0 and out.strip() == "pid 202: got window steps=20", f"a pid names one process of any session: {out!r}")
    # A process killed without removing its socket: the file stays, nobody listens on it.
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(f"{root}/serve/404.sock")
    dead.close()
    rc, out, err = run("stop", "serve", env=env)
    check(rc == 0 and out.splitlines() == ["pid 101: got stop", "pid 202: got stop"] and "pid 404 is gone" in err,
          f"a process gone mid-session is said, the others answer: {out!r} {err!r}")
    check(not os.path.exists(f"{root}/serve/404.sock"), "the gone process's socket is removed")
    os.makedirs(f"{root}/other")
    serve(f"{root}/other/303.sock", 303, seen)
    rc, out, err = run("status", env=env)
    check(rc == 2 and "several sessions (other, serve)" in err, f"with several sessions one must be named: {err!r}")
    check(seen == [(101, "start"), (202, "start"), (101, "window duration=0.500000"), (202, "window duration=0.500000"),
                   (202, "window steps=20"), (101, "stop"), (202, "stop")], f"requests as sent: {seen}")

# record --paused says once, at start, what --cuda-graph-trace graph costs while paused (its whole-graph
# records stay on and slow eager launches); the default says nothing. The program needs no GPU: the
# note comes before it starts.
with tempfile.TemporaryDirectory() as root:
    env = dict(os.environ, KERNSCOPE_RUNTIME_DIR=root)
    note = "keeps whole-graph records on while paused"
    for graph_trace, expected in (("graph", True), ("node", False)):
        p = subprocess.run([K, "record", "--paused", "--cuda-graph-trace", graph_trace, "-o", f"{root}/t.sqlite", "--", "true"],
                           capture_output=True, text=True, env=env, timeout=60)
        check((note in p.stderr) == expected, f"record --paused --cuda-graph-trace {graph_trace}: cost note {'said' if expected else 'not said'}")
sys.exit(1 if failures else 0)
