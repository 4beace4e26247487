#!/usr/bin/env python3
"""bench/witness.py: the checker of the scheduling rows' witness (issue 36).

    witness.py FILE [--limit N] [--window-ms W] [--t0-us T] [--others PREFIX]

FILE holds one line "KEY START_US END_US" per job run, appended by every
handler (bench/witness.c for chute, bench/fleet/lib.js for the node peers),
times on CLOCK_MONOTONIC. Prints one line of key=value pairs:

  lines, keys          jobs and distinct keys seen ("-" is no key: not counted
                       against a limit)
  max_overlap, max_key the most jobs of one key running at once, and a key
                       that reached it (a run is [START, END): one that ends
                       at the very microsecond another starts does not overlap)
  keys_over            with --limit N: how many keys went above N at some time
  verdict              with --limit N: held or exceeded
  max_starts_window    with --window-ms W: the most starts of one key in any
                       window of W ms (sliding: every window that begins at a
                       start), and max_starts_window_all over all keys
  others_*             with --t0-us T --others PREFIX: the jobs whose key
                       starts with PREFIX: how many (others_n), their starts
                       after T (others_first_ms, others_p50_ms, others_last_ms)
                       and others_per_s = others_n / (last start - T)
Exit status 0, or 65 for a malformed line (named with its number).
"""
import argparse
import sys
from collections import defaultdict


def overlap(runs):
    """The most runs open at once: ends sort before starts at the same time."""
    ev = []
    for s, e in runs:
        ev.append((s, 1))
        ev.append((e, -1))
    ev.sort(key=lambda x: (x[0], x[1]))
    cur = best = 0
    for _, d in ev:
        cur += d
        best = max(best, cur)
    return best


def window_starts(starts, w_us):
    starts = sorted(starts)
    best = j = 0
    for i, s in enumerate(starts):
        while starts[j] <= s - w_us:
            j += 1
        best = max(best, i - j + 1)
    return best


def pct(v, p):
    v = sorted(v)
    i = max(0, min(len(v) - 1, -(-p * len(v) // 100) - 1))
    return v[i]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--window-ms", type=float)
    ap.add_argument("--t0-us", type=int)
    ap.add_argument("--others")
    a = ap.parse_args()
    runs = defaultdict(list)
    n = 0
    with open(a.file) as f:
        for no, line in enumerate(f, 1):
            p = line.split()
            try:
                if len(p) != 3:
                    raise ValueError
                s, e = int(p[1]), int(p[2])
                if e < s:
                    raise ValueError
            except ValueError:
                sys.stderr.write(f"witness.py: {a.file}:{no}: not 'KEY START_US END_US': {line.strip()[:80]}\n")
                return 65
            runs[p[0]].append((s, e))
            n += 1
    out = {"lines": n, "keys": len([k for k in runs if k != "-"])}
    best, best_key, over = 0, "-", 0
    for k, r in runs.items():
        if k == "-":
            continue
        o = overlap(r)
        if o > best:
            best, best_key = o, k
        if a.limit is not None and o > a.limit:
            over += 1
    out["max_overlap"] = best
    out["max_key"] = best_key
    if a.limit is not None:
        out["limit"] = a.limit
        out["keys_over"] = over
        out["verdict"] = "held" if over == 0 else "exceeded"
    if a.window_ms is not None:
        w = int(a.window_ms * 1000)
        out["max_starts_window"] = max([window_starts([s for s, _ in r], w) for k, r in runs.items() if k != "-"] or [0])
        out["max_starts_window_all"] = window_starts([s for r in runs.values() for s, _ in r], w) if n else 0
        out["window_ms"] = a.window_ms
    if a.t0_us is not None and a.others:
        st = [(s - a.t0_us) / 1000 for k, r in runs.items() if k.startswith(a.others) for s, _ in r]
        out["others_n"] = len(st)
        if st:
            out["others_first_ms"] = f"{min(st):.1f}"
            out["others_p50_ms"] = f"{pct(st, 50):.1f}"
            out["others_last_ms"] = f"{max(st):.1f}"
            out["others_per_s"] = f"{len(st) * 1000 / max(st):.0f}" if max(st) > 0 else "-"
    print(" ".join(f"{k}={v}" for k, v in out.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
