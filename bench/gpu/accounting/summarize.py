# Summarise `kernscope account --format json` for one program of run.sh: the expected bottleneck beside
# the accounting's, for the steady-state group (GROUP if given, else the group with the most steps),
# the category shares and their largest parts, and whether the six categories sum to each step's wall.
#
# usage: python3 summarize.py NAME EXPECTED ACCOUNT.json [GROUP]
#   EXPECTED: category or category/part, e.g. copy/copy.h2d, blocked/blocked.cudaStreamSynchronize,
#   host/host.framework, host/host.launch, gpu, host/host.launch|host.framework
import json, sys

CATS = ["gpu", "communication", "copy", "host", "blocked", "idle"]


def pct(a, b):
    return 100.0 * a / b if b else 0.0


def main():
    name, expected, path = sys.argv[1:4]
    want_group = sys.argv[4] if len(sys.argv) > 4 else ""
    d = json.load(open(path))
    rows = d.get("account") or []
    groups = [g for g in (d.get("account_groups") or []) if g.get("Scope") == "group"]
    if not groups:
        print(f"[{name}] no steps found (notes: {(d.get('accounting') or {}).get('notes')})")
        print(f"SUMMARY {name}\texpected={expected}\tmeasured=none\tno_first=-\tverdict=DISAGREES")
        return
    print(f"[{name}] groups: " + "; ".join(f"{g['Name']}/{g['Phase']} x{g['Steps']} -> {g['Bottleneck']}"
                                        for g in groups))
    if want_group and any(g["Name"] == want_group for g in groups):
        cands = [g for g in groups if g["Name"] == want_group]
    else:
        cands = groups
    g = max(cands, key=lambda g: (g["Steps"], g["Wall (ns)"]))
    steps = [r for r in rows if r["Group"] == g["Name"] and r["Phase"] == g["Phase"]]
    wall = sum(r["Wall (ns)"] for r in steps)
    tot = {}
    for r in steps:
        for k, v in r.items():
            if k.endswith(" (ns)") and k not in ("Start (ns)",):
                tot[k[:-5]] = tot.get(k[:-5], 0) + v
    cat_share = {c: pct(tot.get(c, 0), wall) for c in CATS}
    bott = g["Bottleneck"]
    # Steady state without the group's first step (start-up effects: module load, cuBLAS handles).
    later = sorted(steps, key=lambda r: r["Start (ns)"])[1:]
    later_tot = {c: sum(r[f"{c} (ns)"] for r in later) for c in CATS}
    later_bott = max(CATS, key=lambda c: (later_tot[c], -CATS.index(c))) if later else "-"
    per_step = {}
    for r in steps:
        per_step[r["Bottleneck"]] = per_step.get(r["Bottleneck"], 0) + 1
    # Parts: the largest part of each category present.
    parts = sorted(((k, v) for k, v in tot.items() if "." in k and v > 0), key=lambda kv: -kv[1])
    part_share = [(k, pct(v, wall)) for k, v in parts]
    top_part = part_share[0][0] if part_share else "-"
    host_parts = [(k, s) for k, s in part_share if k.startswith("host.")]
    pageable = tot.get("copy pageable", 0)
    # Sums: every step of the whole trace, six categories against its wall.
    bad, worst = 0, 0.0
    for r in rows:
        s = sum(r[f"{c} (ns)"] for c in CATS)
        dev = abs(s - r["Wall (ns)"]) / r["Wall (ns)"] if r["Wall (ns)"] else 0.0
        worst = max(worst, dev)
        if dev > 0.01:
            bad += 1
    exp_cat, _, exp_part = expected.partition("/")
    ok_cat = bott == exp_cat
    part_ok = True
    if exp_part:
        alts = exp_part.split("|")
        cat_parts = [(k, s) for k, s in part_share if k.startswith(exp_cat + ".")]
        part_ok = bool(cat_parts) and any(cat_parts[0][0].startswith(a) for a in alts)
    verdict = "AGREES" if ok_cat and part_ok else "DISAGREES"
    print(f"[{name}] steady-state group '{g['Name']}' ({g['Phase']}, {g['Steps']} steps, wall {wall / 1e6:.2f} ms, "
          f"{wall / 1e6 / max(1, len(steps)):.3f} ms/step)")
    print(f"[{name}] expected {expected}; accounting: {bott} (without the first step: {later_bott}; "
          f"per-step bottlenecks {per_step}) -> {verdict}")
    print(f"[{name}] shares %: " + "  ".join(f"{c} {cat_share[c]:.1f}" for c in CATS))
    print(f"[{name}] parts %: " + "  ".join(f"{k} {s:.1f}" for k, s in part_share[:8]))
    if host_parts:
        print(f"[{name}] host parts %: " + "  ".join(f"{k} {s:.1f}" for k, s in host_parts))
    if tot.get("copy", 0):
        print(f"[{name}] copy pageable: {pct(pageable, tot['copy']):.1f} % of copy time")
    print(f"[{name}] sums: {len(rows) - bad}/{len(rows)} steps within 1 % (largest deviation {100 * worst:.4f} %)")
    summary = (f"{name}\texpected={expected}\tmeasured={bott}\tno_first={later_bott}\tverdict={verdict}\t"
               + " ".join(f"{c}={cat_share[c]:.1f}" for c in CATS)
               + f"\ttop_part={top_part}\tsums={len(rows) - bad}/{len(rows)}")
    print("SUMMARY " + summary)
    if later:  # the middle step of the group, for a look at what happened inside it
        mid = later[len(later) // 2]
        print(f"MIDSTEP {mid['Start (ns)']} {mid['Wall (ns)']} {mid['Step']}")


main()
