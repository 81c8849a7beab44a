#!/usr/bin/env python3
"""Tables and a plot for one policy set of e2e/peers/compare.sh: per trial, every configuration's latencies
through kube-apiserver, achieved rate, and the CPU and RSS of kube-apiserver and of the engine
process; then the pooled table (each figure the median of the trials' figures; "added" is a
run's p95 less the p95 of the same trial's `none` run) and the issue's ratios. Writes
OUT/SET.svg.

    e2e/peers/summary.py OUT SET "CONFIGS" TRIALS >> OUT/summary.md
"""
import json
import pathlib
import statistics
import sys

out, policy_set = pathlib.Path(sys.argv[1]), sys.argv[2]
configs, trials = sys.argv[3].split(), int(sys.argv[4])


def load(config, trial):
    f = out / f"{policy_set}-{config}-t{trial}.json"
    if not f.exists():
        return None
    d = json.loads(f.read_text())
    e = out / f"{policy_set}-{config}-t{trial}.celer.json"
    d["engine"] = json.loads(e.read_text()) if e.exists() else None
    return d


def measured(d):
    return d is not None and d.get("run") is not None


def figures(d, none):
    r = d["run"]
    f = {
        "p50": r["http"]["p50"], "p95": r["http"]["p95"], "p99": r["http"]["p99"],
        "scheduled_p95": r["scheduled"]["p95"], "queue_p95": r["queue"]["p95"],
        "rps": r["achieved_rps"], "successful": r["successful"], "requests": r["requests"],
    }
    res = r.get("resources")
    if res:
        f["api_cpu"], f["api_rss"] = res["cpu_cores"]["mean"], res["rss_mib"]["mean"]
    if d.get("engine"):
        f["engine_cpu"], f["engine_rss"] = d["engine"]["cpu_cores"]["mean"], d["engine"]["rss_mib"]["mean"]
    if measured(none):
        f["added_p95"] = r["http"]["p95"] - none["run"]["http"]["p95"]
    return f


def cell(f, key, fmt):
    return fmt.format(f[key]) if key in f else "-"


COLUMNS = [("p50 ms", "p50", "{:.3f}"), ("p95 ms", "p95", "{:.3f}"), ("p99 ms", "p99", "{:.3f}"),
           ("scheduled p95 ms", "scheduled_p95", "{:.3f}"), ("queue p95 ms", "queue_p95", "{:.3f}"),
           ("achieved RPS", "rps", "{:.1f}"), ("p95 added over none ms", "added_p95", "{:+.3f}"),
           ("kube-apiserver CPU cores", "api_cpu", "{:.3f}"), ("kube-apiserver RSS MiB", "api_rss", "{:.0f}"),
           ("engine CPU cores", "engine_cpu", "{:.3f}"), ("engine RSS MiB", "engine_rss", "{:.0f}")]


def header(first):
    print("| " + " | ".join([first, "correctness", "successful"] + [c[0] for c in COLUMNS]) + " |")
    print("|---|---|---:|" + "---:|" * len(COLUMNS))


per_config = {c: [] for c in configs}
print(f"### {policy_set} through kube-apiserver, per trial\n")
header("trial / configuration")
for t in range(1, trials + 1):
    none = load("none", t)
    for c in configs:
        d = load(c, t)
        if d is None:
            print(f"| {t} {c} | did not run | | " + " | ".join("" for _ in COLUMNS) + " |")
            continue
        corr = d.get("correctness")
        corr_s = f"{corr['passed']}/{corr['cases']}" if corr else "-"
        if not measured(d):
            print(f"| {t} {c} | {corr_s} | not measured (failed its cases) | " + " | ".join("" for _ in COLUMNS) + " |")
            continue
        f = figures(d, none)
        per_config[c].append(f)
        print(f"| {t} {c} | {corr_s} | {f['successful']} / {f['requests']} | "
              + " | ".join(cell(f, k, fmt) for _, k, fmt in COLUMNS) + " |")
print()

pooled = {}
for c, fs in per_config.items():
    if not fs:
        continue
    pooled[c] = {k: statistics.median(f[k] for f in fs) for k in fs[0] if all(k in f for f in fs)}
    pooled[c]["trials"] = len(fs)
print(f"### {policy_set}, pooled (median of the trials)\n")
print("| configuration | trials | " + " | ".join(c[0] for c in COLUMNS) + " |")
print("|---|---:|" + "---:|" * len(COLUMNS))
for c in configs:
    if c in pooled:
        p = pooled[c]
        print(f"| {c} | {p['trials']} | " + " | ".join(cell(p, k, fmt) for _, k, fmt in COLUMNS) + " |")
print()


def ratio(a, b, key):
    if a in pooled and b in pooled and key in pooled[a] and key in pooled[b] and pooled[b][key] > 0:
        return pooled[a][key] / pooled[b][key]
    return None


print(f"### {policy_set}: celer against the others (pooled figures; the issue's targets)\n")
print("| measure | ratio | target |")
print("|---|---:|---|")
if policy_set == "contract":
    added = [("added_p95", "added p95, celer / native", "native", "at most 1"),
             ("added_p95", "added p95, celer / Gatekeeper", "gatekeeper", "at most 0.2"),
             ("added_p95", "added p95, celer / Kyverno", "kyverno", "at most 0.05")]
else:
    added = [("added_p95", f"added p95, celer / {o}", o, "at most 0.1")
             for o in ("native", "gatekeeper", "kyverno")]
for key, label, other, target in added + [
        ("engine_cpu", "process CPU, celer / Kyverno", "kyverno", "at most 0.1"),
        ("engine_cpu", "process CPU, celer / Gatekeeper", "gatekeeper", "at most 0.2"),
        ("engine_rss", "RSS, celer / Kyverno", "kyverno", "at most 0.33"),
        ("engine_rss", "RSS, celer / Gatekeeper", "gatekeeper", "at most 0.33")]:
    r = ratio("celer", other, key)
    print(f"| {label} | {'-' if r is None else f'{r:.3f}'} | {target} |")
print()

# The serving floor (a webhook with celer's TLS and HTTP stack and no engine, allowing
# everything): what any webhook built this way costs on this machine, against the same targets.
if "floor" in pooled:
    print(f"### {policy_set}: the serving floor (no engine) against the same measures\n")
    print("| measure | ratio | celer's target |")
    print("|---|---:|---|")
    for key, label, a, b, target in [
            ("added_p95", "added p95, floor / Kyverno", "floor", "kyverno", "celer: at most 0.05"),
            ("added_p95", "added p95, floor / native", "floor", "native", "celer: at most 1"),
            ("engine_cpu", "process CPU, floor / Kyverno", "floor", "kyverno", "celer: at most 0.1"),
            ("engine_cpu", "process CPU, floor / Gatekeeper", "floor", "gatekeeper", "celer: at most 0.2"),
            ("engine_cpu", "process CPU, celer / floor", "celer", "floor", "celer's own share is the excess over 1"),
            ("added_p95", "added p95, celer / floor", "celer", "floor", "-")]:
        r = ratio(a, b, key)
        if r is not None:
            print(f"| {label} | {r:.3f} | {target} |")
    print()

# A grouped bar chart: p50, p95, p99 of each configuration (pooled), log-free, in ms.
names = [c for c in configs if c in pooled]
if names:
    top = max(pooled[c]["p99"] for c in names) * 1.1 or 1.0
    w, h, left, bottom = 120 * len(names) + 80, 320, 60, 40
    bars = []
    for i, c in enumerate(names):
        for j, (k, colour) in enumerate([("p50", "#4c78a8"), ("p95", "#f58518"), ("p99", "#e45756")]):
            v = pooled[c][k]
            bh = (h - bottom - 20) * v / top
            x = left + i * 120 + j * 30
            y = h - bottom - bh
            bars.append(f'<rect x="{x}" y="{y:.1f}" width="26" height="{bh:.1f}" fill="{colour}"/>'
                        f'<text x="{x + 13}" y="{y - 3:.1f}" font-size="9" text-anchor="middle">{v:.2f}</text>')
        bars.append(f'<text x="{left + i * 120 + 43}" y="{h - bottom + 15}" font-size="12" text-anchor="middle">{c}</text>')
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif">'
           f'<rect width="{w}" height="{h}" fill="white"/>'
           f'<text x="{left}" y="14" font-size="12">{policy_set}: Pod CREATE (dry run) through kube-apiserver, ms: '
           f'p50 (blue), p95 (orange), p99 (red), median of {trials} trials</text>'
           f'<line x1="{left - 5}" y1="{h - bottom}" x2="{w - 10}" y2="{h - bottom}" stroke="black"/>'
           + "".join(bars) + "</svg>\n")
    (out / f"{policy_set}.svg").write_text(svg)
