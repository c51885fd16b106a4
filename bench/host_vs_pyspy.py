#!/usr/bin/env python3
"""kernscope's sampled host stacks against py-spy's, function by function (issue 19's plausibility check).

Reads two collapsed-stack files (one stack per line, root first, frames joined by ';', then a count):
  - KERNSCOPE: `kernscope host --format collapsed TRACE`; each line's first frame names its group of steps
    ("measure:decode_step [decode]"); only groups matching --groups count;
  - PYSPY: `py-spy record --format raw` (frames "name (file:line)"); only stacks holding a frame matching
    --through count (e.g. the line of the workload that runs a decode step), so both files cover the same
    part of the program.
Each side's samples are split by their innermost frame (own time), and the top functions by kernscope's
share are printed beside py-spy's share of the same function, with the largest difference in points.

Functions are matched by (qualified name, file's base name): kernscope names frames "Class.method (file.py)"
(co_qualname); py-spy 0.4 does too on CPython 3.11+ ("Class.method (path/file.py:LINE)", seen when any of its
names holds a dot); older py-spy or CPython give "method (path/file.py:LINE)". With --resolve, those are given
their qualified name by parsing the file at that path with `ast` (the innermost def or lambda of that
name holding the line: CPython's co_qualname rules); where a file cannot be read (or --resolve is off),
both sides are compared by bare name instead (the last part of the qualified name), and the output says so.

usage: bench/host_vs_pyspy.py KERNSCOPE PYSPY [--groups REGEX] [--through REGEX] [--top N] [--resolve] [--by-name]
       [--max-diff POINTS]   (exit 1 when a top function's shares differ by more; default: report only)
Bad input (a missing file, a line without a count, nothing selected): one line on stderr, exit 2."""
import argparse
import ast
import collections
import os
import re
import sys

FRAME = re.compile(r"^(?P<name>.*?) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")


class BadInput(Exception):
    pass


def read_collapsed(path):
    """[(frames root first, count)] from a collapsed-stack file."""
    try:
        text = open(path, encoding="utf-8", errors="replace").read()
    except OSError as e:
        raise BadInput(f"cannot read {path}: {e.strerror}")
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        stack, _, count = line.rstrip().rpartition(" ")
        if count.isdigit() and not stack.strip():
            continue  # py-spy writes " N" for samples that caught no Python frame: no function to charge
        if not stack or not count.isdigit():
            raise BadInput(f"{path}:{number}: not a collapsed stack ('frame;frame;... COUNT')")
        out.append((stack.split(";"), int(count)))
    return out


def split_frame(frame):
    """(name, file or '', line or None) of 'name (file[:line])'; a frame without a file is its own name."""
    m = FRAME.match(frame)
    if not m:
        return frame, "", None
    return m["name"], m["file"], int(m["line"]) if m["line"] else None


class Qualnames:
    """A file's defs and lambdas with their CPython qualified names, to name a (file, line, name) frame."""

    def __init__(self):
        self.files = {}

    def _defs(self, path):
        if path not in self.files:
            try:
                tree = ast.parse(open(path, encoding="utf-8").read(), path)
            except (OSError, SyntaxError, ValueError):
                self.files[path] = None
                return None
            defs = []  # (first line, last line, name, qualname)

            def walk(node, prefix):
                for child in ast.iter_child_nodes(node):
                    if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                        name = "<lambda>" if isinstance(child, ast.Lambda) else child.name
                        qual = prefix + name
                        defs.append((child.lineno, child.end_lineno, name, qual))
                        walk(child, qual + ".<locals>.")
                    elif isinstance(child, ast.ClassDef):
                        walk(child, prefix + child.name + ".")
                    else:
                        walk(child, prefix)

            walk(tree, "")
            self.files[path] = defs
        return self.files[path]

    def resolve(self, name, path, line):
        """The qualified name, or None when it cannot be told."""
        if name == "<module>":
            return name
        defs = self._defs(path) if path and line else None
        if not defs:
            return None
        # The innermost (latest-starting) def of that name whose lines hold `line`.
        best = None
        for first, last, def_name, qual in defs:
            if def_name == name and first <= line <= last and (best is None or first >= best[0]):
                best = (first, qual)
        return best[1] if best else None


def own_counts(stacks, key):
    counts = collections.Counter()
    for frames, n in stacks:
        counts[key(frames[-1])] += n
    return counts


def compare(kernscope_file, pyspy_file, groups=r"decode_step \[decode\]$", through=None, top=10, resolve=False, by_name=False):
    """The comparison as a dict (tested on synthetic files); raises BadInput."""
    group_re, through_re = re.compile(groups), re.compile(through) if through else None
    ks = [(frames[1:], n) for frames, n in read_collapsed(kernscope_file) if group_re.search(frames[0]) and len(frames) > 1]
    if not ks:
        raise BadInput(f"{kernscope_file}: no stacks in a group matching /{groups}/")
    ps = [(frames, n) for frames, n in read_collapsed(pyspy_file) if through_re is None or any(through_re.search(f) for f in frames)]
    if not ps:
        raise BadInput(f"{pyspy_file}: no stacks through a frame matching /{through}/")

    qualnames = Qualnames()
    unresolved = set()
    # py-spy 0.4 names frames by co_qualname on CPython 3.11+ ("A.forward"): then every name is qualified,
    # module-level functions' bare names included.
    qualified = any("." in split_frame(f)[0] for frames, _ in ps for f in frames if not f.startswith("<"))

    def pyspy_key(frame):
        name, path, line = split_frame(frame)
        qual = name if qualified or name.startswith(("[", "<")) else None
        if qual is None and resolve:
            qual = qualnames.resolve(name, path, line)
        if qual is None:
            unresolved.add(frame)
            qual = name
        return qual, os.path.basename(path)

    def kernscope_key(frame):
        name, path, _ = split_frame(frame)
        return name, os.path.basename(path)

    ks_own = own_counts(ks, kernscope_key)
    ps_own = own_counts(ps, pyspy_key)
    by_name = by_name or bool(unresolved)
    if by_name:  # compare bare names on both sides (see the module's docstring)
        def bare(key):
            qual, file = key
            return (qual if qual.startswith("[") else qual.rsplit(".", 1)[-1]), file

        def merge(counts):
            out = collections.Counter()
            for k, n in counts.items():
                out[bare(k)] += n
            return out

        ks_own, ps_own = merge(ks_own), merge(ps_own)
    ks_total, ps_total = sum(ks_own.values()), sum(ps_own.values())
    rows = []
    for key, n in sorted(ks_own.items(), key=lambda kv: (-kv[1], kv[0]))[:top]:
        a, b = n / ks_total, ps_own.get(key, 0) / ps_total
        rows.append({"function": key[0], "file": key[1], "kernscope": a, "pyspy": b, "diff_points": 100 * (a - b)})
    ps_top = [k for k, _ in sorted(ps_own.items(), key=lambda kv: (-kv[1], kv[0]))[:top]]
    ks_top = [(r["function"], r["file"]) for r in rows]
    return {"rows": rows, "kernscope_samples": ks_total, "pyspy_samples": ps_total, "matched_by": "name" if by_name else "qualname",
            "unresolved": sorted(unresolved), "common_in_top": len(set(ks_top) & set(ps_top)),
            "pyspy_only_in_top": [{"function": k[0], "file": k[1], "pyspy": ps_own[k] / ps_total} for k in ps_top if k not in ks_top],
            "max_diff_points": max((abs(r["diff_points"]) for r in rows), default=0.0)}


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("kernscope")
    p.add_argument("pyspy")
    p.add_argument("--groups", default=r"decode_step \[decode\]$", help="kernscope groups to count (regex on the root frame)")
    p.add_argument("--through", help="count py-spy stacks holding a frame matching this regex")
    p.add_argument("--top", type=int, default=10)
    p.add_argument("--resolve", action="store_true", help="name py-spy's frames by parsing their files (qualified names)")
    p.add_argument("--by-name", action="store_true", help="match bare names (kernscope traced on Python < 3.11 has no qualnames)")
    p.add_argument("--max-diff", type=float, help="exit 1 when a top function's shares differ by more points")
    args = p.parse_args(argv)
    try:
        r = compare(args.kernscope, args.pyspy, args.groups, args.through, args.top, args.resolve, args.by_name)
    except (BadInput, re.error) as e:
        print(f"host_vs_pyspy: {e}", file=sys.stderr)
        return 2
    print(f"own time by innermost Python frame: kernscope {r['kernscope_samples']} samples, py-spy {r['pyspy_samples']} samples; "
          f"functions matched by {r['matched_by']}")
    if r["unresolved"]:
        print(f"  ({len(r['unresolved'])} py-spy frames without a qualified name, e.g. {r['unresolved'][0]})")
    print(f"{'kernscope %':>11} {'py-spy %':>9} {'diff':>6}  function")
    for row in r["rows"]:
        print(f"{100 * row['kernscope']:11.1f} {100 * row['pyspy']:9.1f} {row['diff_points']:+6.1f}  {row['function']} ({row['file']})")
    print(f"largest difference {r['max_diff_points']:.1f} points; {r['common_in_top']} of the top {len(r['rows'])} are in py-spy's top too")
    for x in r["pyspy_only_in_top"]:
        print(f"  in py-spy's top only: {100 * x['pyspy']:.1f} % {x['function']} ({x['file']})")
    if args.max_diff is not None and r["max_diff_points"] > args.max_diff:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
