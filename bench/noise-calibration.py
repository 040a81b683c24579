#!/usr/bin/env python3
"""The figures the simulator's noise model (src/backend/sim/noise.c) is
calibrated from: every record with per-round samples saved under
bench/results/ (documents and journals), each counted once.

Usage: bench/noise-calibration.py [RESULTS_DIR]   (default: bench/results)

It prints, per kind of path:
  - jitter: the standard deviation of each round's deviation from its
    record's median (log scale; rounds within 1 % of the median, so that slow
    rounds are counted apart), and the triangular amplitude that has it
    (sd x sqrt 6);
  - slow rounds: the share of rounds more than 2 % (and 5 %) below the median;
  - drift: the standard deviation, over runs, of a figure's median, within
    one machine (one session directory) and across sessions;
  - start skew: the time lost from the shared window, (1 - overlap) x window,
    of concurrent measurements.
docs/method.md ("The simulator's noise") quotes its output; the run of
2026-12-06 is bench/results/noise-calibration-2026-12-06.txt.
Needs only Python 3's standard library; CI does not run it.
"""
import collections
import json
import math
import os
import re
import statistics as st
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "results")


def walk(o, f, out):
    if isinstance(o, dict):
        if "samples" in o and "test" in o and isinstance(o["samples"], list):
            out.append((f, o))
            return
        for v in o.values():
            walk(v, f, out)
    elif isinstance(o, list):
        for v in o:
            walk(v, f, out)


raw = []
for dp, _, fn in sorted(os.walk(root)):
    for n in sorted(fn):
        p = os.path.join(dp, n)
        if n.endswith(".json"):
            try:
                walk(json.load(open(p)), p, raw)
            except (ValueError, OSError):
                pass
        elif n.endswith(".jsonl"):
            for line in open(p):
                try:
                    walk(json.loads(line), p, raw)
                except ValueError:
                    pass
seen, recs = set(), []
for f, o in raw:  # a card's records are also in its journal: count each once
    k = (o["test"], o.get("src"), o.get("dst"), tuple(o["samples"]))
    if k not in seen:
        seen.add(k)
        recs.append((os.path.relpath(f, root), o))


def samples(o):
    return [x for x in o["samples"] if x and x > 0]


def kind(o):
    d, t = o.get("direction"), o["test"]
    if "latency" in t:
        return "latency-host" if d in ("h2d", "d2h") else "latency-gpu"
    if t.startswith("sweep"):
        return None
    if o.get("method") in ("staged", "driver_staged"):
        return "host-staged"  # GPU to GPU through host memory: two legs at once
    if d in ("h2d", "d2h"):
        if "bidirectional" in t:
            return "host-bidirectional"
        if o.get("overlap") is not None and "h200x2" in f_of[id(o)]:
            return "host-two-gpus"
        return "host-alone"
    if d == "local":
        return "local"
    return "nvlink"  # the only GPU pairs measured are 2 x H200's NV18


f_of = {id(o): f for f, o in recs}
print(f"{len(recs)} records with per-round samples under {root}\n")

print("jitter and slow rounds (per round, against the record's median)")
dev = collections.defaultdict(list)
for f, o in recs:
    s = samples(o)
    k = kind(o)
    if len(s) < 3 or k is None or o.get("aggregate") or o.get("sum"):
        continue
    if "contaminated" in (o.get("flags") or []):
        continue
    m, n = st.median(s), len(s)
    sign = -1 if k.startswith("latency") else 1  # a slow latency round is a larger one
    dev[k] += [sign * math.log(x / m) * math.sqrt(n / (n - 1)) for x in s if x != m]
for k in sorted(dev):
    v = dev[k]
    kept = [x for x in v if abs(x) < 0.01]
    sd = math.sqrt(sum(x * x for x in kept) / len(kept))
    n = len(v)
    print(f"  {k:20s} rounds {n:5d}  sd {sd * 100:.3f} %  amplitude {sd * math.sqrt(6) * 100:.2f} %  "
          f"slow >2 % {sum(x < -0.02 for x in v) / n * 100:5.2f} %  >5 % {sum(x < -0.05 for x in v) / n * 100:5.2f} %")


def machine(f):
    m = re.match(r"(gpu-proofs-h200x1-2026-12-01-final/call\d|gpu-proofs-h200x1-2026-12-0[12][^/]*|"
                 r"catalog-h200x2-s2-2026-11-30/call\d+[^/]*|[^/]+)", f)
    return m.group(1)


print("\ndrift (sd over runs of a figure's median, log scale; runs >= 3)")
within, across = collections.defaultdict(list), collections.defaultdict(list)
for f, o in recs:
    s = samples(o)
    k = kind(o)
    if len(s) < 3 or k is None or not o.get("valid", True) or "contaminated" in (o.get("flags") or []):
        continue
    key = (o["test"], o.get("src"), o.get("dst"), o.get("method"), o.get("bytes"), o.get("aggregate"),
           o.get("sum"))
    within[(k, machine(f)) + key].append(math.log(st.median(s)))
    across[(k, "h200x1" if "h200x1" in f else "h200x2") + key].append(math.log(st.median(s)))
for name, groups in (("within one session", within), ("across sessions", across)):
    by = collections.defaultdict(list)
    for key, v in groups.items():
        if len(v) >= 3:
            by[key[0]].append(st.stdev(v))
    print(f"  {name}:")
    for k in sorted(by):
        v = sorted(by[k])
        print(f"    {k:20s} figures {len(v):3d}  sd median {st.median(v) * 100:.2f} %  "
              f"range {v[0] * 100:.2f}-{v[-1] * 100:.2f} %")

print("\nstart skew: (1 - overlap) x window of concurrent measurements, microseconds")
lost = collections.defaultdict(list)
seen_ov = set()
for f, o in recs:
    ov, w = o.get("overlap"), o.get("window_s")
    if ov is None or not w:
        continue
    key = (os.path.dirname(f), o["test"], o.get("group"), ov)
    if key in seen_ov:
        continue
    seen_ov.add(key)
    lost[o["test"]].append((1 - ov) * w * 1e6)
for t in sorted(lost):
    v = sorted(lost[t])
    n = len(v)
    print(f"  {t:48s} n {n:3d}  p50 {v[n // 2]:9.1f}  p90 {v[int(n * 0.9)]:9.1f}  max {v[-1]:9.1f}")
