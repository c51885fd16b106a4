"""Checks a built kernscope wheel before it is handed out (scripts/build-wheel.sh runs it): it carries
the CLI (executable) and its console command, the tracer and the extension, and no CUDA library, which must come from the
user's driver and toolkit. Prints what it bundles. Exit 1 on the first thing missing."""
import os
import re
import stat
import sys
import zipfile

wheel = sys.argv[1]
with zipfile.ZipFile(wheel) as z:
    infos = {i.filename: i for i in z.infolist()}
names = list(infos)
problems = []

cli = infos.get("kernscope/bin/kernscope")
if cli is None:
    problems.append("no kernscope/bin/kernscope (the CLI)")
elif not (cli.external_attr >> 16) & stat.S_IXUSR:
    problems.append("kernscope/bin/kernscope is not executable")
if "kernscope/lib/libkernscope_tracer.so" not in infos:
    problems.append("no kernscope/lib/libkernscope_tracer.so (the tracer of `kernscope record`; was CUPTI found?)")
if not any(re.fullmatch(r"kernscope/_core\..*\.so", n) for n in names):
    problems.append("no kernscope/_core extension")
if "_kernscope_cli/__init__.py" not in infos:
    problems.append("no _kernscope_cli (the `kernscope` console command)")
entry_points = next((n for n in names if n.endswith(".dist-info/entry_points.txt")), None)
if entry_points is None or "kernscope = _kernscope_cli:main" not in zipfile.ZipFile(wheel).read(entry_points).decode():
    problems.append("no `kernscope` console script in the metadata")
cuda = [n for n in names if re.search(r"/lib(cupti|cuda|nvidia-ml)[-.]", n)]
if cuda:
    problems.append("CUDA libraries bundled: " + ", ".join(cuda))

bundled = sorted(os.path.basename(n) for n in names if n.startswith("kernscope.libs/"))
print(f"{wheel}: {os.path.getsize(wheel) / 1e6:.1f} MB; bundled libraries: {', '.join(bundled) or 'none'}")
for p in problems:
    print(f"check-wheel: {wheel}: {p}", file=sys.stderr)
sys.exit(1 if problems else 0)
