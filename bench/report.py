#!/usr/bin/python3
"""report: the arithmetic of bench/run, with the standard library only.

  report.py lat SUBMITTED STAMPDIR   latency of one run: p50_ms, p99_ms, n
  report.py md WORK OUT.md PLOTDIR   RESULTS.md and the gnuplot data, from
                                     WORK/raw.tsv and the WORK/meta files
                                     (and WORK/fleet.tsv: the Fleet section)
  report.py fleet TSV                the Fleet section (markdown) of one
                                     bench/fleet/run.sh TSV
  report.py pressure TSV PLOTDIR [RESULTS.md]
                                     the Pressure section (markdown) of one
                                     bench/fleet/pressure.sh run (TSV and its
                                     -seconds.tsv), its plot data into PLOTDIR
                                     for bench/pressure.gp; with RESULTS.md, the
                                     section is also put into that file

raw.tsv has one "KEY<TAB>ROUND<TAB>VALUE" line per measurement."""
import os
import re
import statistics
import sys

LEAD_BEGIN = "<!-- lead: what limits chute now (kept across runs) -->"
LEAD_END = "<!-- end of the lead's section -->"


def pct(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(p / 100.0 * (len(v) - 1) + 0.5))]


def cmd_lat(subfile, stampdir):
    sent = {}
    with open(subfile) as f:
        for line in f:
            name, t = line.split()
            sent[name] = float(t)
    lat = []
    for name, t0 in sent.items():
        try:
            with open(os.path.join(stampdir, name)) as f:
                lat.append((float(f.read().split()[0]) - t0) * 1e3)
        except FileNotFoundError:
            pass
    if len(lat) < len(sent):
        sys.exit("report: %d of %d jobs have no stamp" % (len(sent) - len(lat), len(sent)))
    print("p50_ms %.3f\np99_ms %.3f\nn %d" % (pct(lat, 50), pct(lat, 99), len(lat)))


def load_raw(work):
    raw = {}
    path = os.path.join(work, "raw.tsv")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                key, rnd, val = line.rstrip("\n").split("\t")
                raw.setdefault(key, {})[int(rnd)] = float(val)
    return raw


def read(work, name, default=""):
    try:
        with open(os.path.join(work, "meta", name)) as f:
            return f.read()
    except FileNotFoundError:
        return default


def params(work):
    p = {}
    for line in read(work, "params").splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            p[k] = v
    return p


def n(p, key):
    return "{:,}".format(int(p[key]))


def figures(p):
    """(key, section, label, unit, format) in the order of the table."""
    jobs = n(p, "JOBS")
    f = [
        ("lim.syscall_ns", "limits", "one trivial system call (getppid)", "ns", "%.0f"),
        ("lim.spawn_j1_per_s", "limits", "posix_spawn+waitpid of /bin/true, 1 at a time", "/s", "%.0f"),
        ("lim.spawn_j2_per_s", "limits", "posix_spawn+waitpid of /bin/true, 2 in flight from one parent", "/s", "%.0f"),
        ("lim.spawn_2proc_per_s", "limits", "posix_spawn+waitpid of /bin/true, 2 parents with 1 each", "/s", "%.0f"),
        ("lim.spawn_j1_parent_cpu_us", "limits", "the parent's own CPU per posix_spawn+waitpid, 1 at a time", "us", "%.0f"),
        ("lim.spawn_j2_parent_cpu_us", "limits", "the parent's own CPU per posix_spawn+waitpid, 2 in flight", "us", "%.0f"),
        ("lim.vfork_j1_per_s", "limits", "vfork+execve+waitpid of /bin/true (chute's way), 1 at a time", "/s", "%.0f"),
        ("lim.vfork_j2_per_s", "limits", "vfork+execve+waitpid of /bin/true, 2 in flight from one parent", "/s", "%.0f"),
        ("lim.vfork_j1_parent_cpu_us", "limits", "the parent's own CPU per vfork+execve+waitpid, 1 at a time", "us", "%.0f"),
        ("lim.vfork_j2_parent_cpu_us", "limits", "the parent's own CPU per vfork+execve+waitpid, 2 in flight", "us", "%.0f"),
        ("lim.spawn_wait_ms", "limits", "one posix_spawn+waitpid of /bin/true (1 / rate at 1)", "ms", "%.2f"),
        ("lim.spawn_start_ms_p50", "limits", "posix_spawn to the child's first instruction, p50", "ms", "%.2f"),
        ("lim.spawn_start_ms_p99", "limits", "posix_spawn to the child's first instruction, p99", "ms", "%.2f"),
        ("lim.durable_fsync_each_per_s", "limits", "durable create, dir fsync per rename", "/s", "%.0f"),
        ("lim.durable_fsync_64_per_s", "limits", "durable create, dir fsync per 64 renames", "/s", "%.0f"),
        ("lim.rename_per_s", "limits", "rename(2) between two directories", "/s", "%.0f"),
        ("lim.inotify_us_p50", "limits", "rename to inotify event, p50", "us", "%.0f"),
        ("lim.inotify_us_p99", "limits", "rename to inotify event, p99", "us", "%.0f"),
    ]
    for key, label in E2E:
        if key == "nq":
            label = "nq true, %s jobs (submission included)" % n(p, "NQ_JOBS")
        f.append(("e2e." + key, "end to end, %s no-op jobs" % jobs, label, "jobs/s", "%.0f"))
    for key, label in E2E:
        if key.startswith("chute"):
            f.append(("cpu." + key, "owner CPU per job (utime+stime from /proc/PID/stat)",
                      label, "us/job", "%.0f"))
    for key, label in E2E:
        if key.startswith("chute"):
            f.append(("cpusched." + key, "owner CPU per job (/proc/PID/schedstat, ns resolution)",
                      label, "us/job", "%.0f"))
    for key, label in LAT:
        sec = "latency, %s jobs %s ms apart: rename into new/ to handler start" % (
            n(p, "LAT_JOBS"), p["LAT_GAP_MS"])
        f.append(("lat.%s_p50" % key, sec, label + ", p50", "ms", "%.2f"))
        f.append(("lat.%s_p99" % key, sec, label + ", p99", "ms", "%.2f"))
    sub = n(p, "SUBMIT_JOBS")
    f += [
        ("sub.chute_each", "submission", "`chute submit SPOOL FILE`, one process per file (%s)" % sub, "jobs/s", "%.0f"),
        ("sub.chute_batch", "submission", "`chute submit SPOOL FILE...`, %s files in one invocation" % sub, "jobs/s", "%.0f"),
        ("sub.nq", "submission", "`nq true`, one process per job (%s, during the end-to-end run)" % n(p, "NQ_JOBS"), "jobs/s", "%.0f"),
        ("sub.tsp_s1", "submission", "`tsp true`, 1 slot (%s, during the end-to-end run)" % jobs, "jobs/s", "%.0f"),
        ("sub.tsp_s2", "submission", "`tsp true`, 2 slots (%s, during the end-to-end run)" % jobs, "jobs/s", "%.0f"),
        ("sub.feed", "submission", "bench/feed tmp+mv from C, no fsync (%s; the e2e submitter)" % jobs, "jobs/s", "%.0f"),
    ]
    if "CHURN_JOBS" in p:
        sec = "churned disk (issue 12): %s no-op jobs, quiet and right after %s files were created and removed" % (
            n(p, "CHURN_JOBS"), n(p, "CHURN_FILES"))
        f += [(k, sec, label, unit, fm) for k, label, unit, fm in CHURN]
    small, big, huge, meas = n(p, "SCALE_SMALL"), n(p, "SCALE_BIG"), n(p, "SCALE_HUGE"), n(p, "SCALE_MEASURE")
    k1 = n(p, "SCALE_K1")
    f += [
        ("scale.small_steady", "scale (chute -j 2, /bin/true)",
         "%s queued: jobs %s to %s" % (small, k1, meas), "jobs/s", "%.0f"),
        ("scale.big_steady", "scale (chute -j 2, /bin/true)",
         "%s queued: jobs %s to %s" % (big, k1, meas), "jobs/s", "%.0f"),
        ("scale.small_e2e", "scale (chute -j 2, /bin/true)",
         "%s queued: owner start to job %s done" % (small, meas), "jobs/s", "%.0f"),
        ("scale.big_e2e", "scale (chute -j 2, /bin/true)",
         "%s queued: owner start to job %s done" % (big, meas), "jobs/s", "%.0f"),
        ("scale.small_first_done_s", "scale (chute -j 2, /bin/true)",
         "%s queued: owner start to first job done" % small, "s", "%.3f"),
        ("scale.big_first_done_s", "scale (chute -j 2, /bin/true)",
         "%s queued: owner start to first job done" % big, "s", "%.3f"),
        ("scale.huge_first_handler_s", "scale (chute -j 2, /bin/true)",
         "%s queued: owner start to first handler start" % huge, "s", "%.3f"),
        ("scale.huge_rss_mib", "scale (chute -j 2, /bin/true)",
         "%s queued: owner peak RSS (VmHWM)" % huge, "MiB", "%.1f"),
        ("scale.huge_create_per_s", "scale (chute -j 2, /bin/true)",
         "making the %s-job backlog (bench/mkqueue, context)" % huge, "files/s", "%.0f"),
    ]
    return f


E2E = [
    ("chute_j1", "chute -j 1, /bin/true"),
    ("chute_j2", "chute -j 2, /bin/true"),
    ("chute_j2_drain", "chute --drain -j 2, /bin/true, started after the jobs are queued"),
    ("chute_persist_j1", "chute --persistent -j 1, bench/worker (C)"),
    ("chute_persist_j2", "chute --persistent -j 2, bench/worker (C)"),
    ("chute_persist_sh_j1", "chute --persistent -j 1, bench/worker.sh"),
    ("shell", "inotifywait shell pattern"),
    ("incron", "incron, IN_MOVED_TO, /bin/true"),
    ("nq", "nq true (submission included)"),
    ("tsp_s1", "tsp true, 1 slot (submission included)"),
    ("tsp_s2", "tsp true, 2 slots (submission included)"),
    ("dirq", "Python dirq in-process (no exec)"),
    ("dirq_spawn", "Python dirq + posix_spawn /bin/true per job"),
]
CHURN = [
    ("e2e.chute_j2_quiet", "chute -j 2, /bin/true, quiet", "jobs/s", "%.0f"),
    ("e2e.chute_j2_churn", "chute -j 2, /bin/true, churned", "jobs/s", "%.0f"),
    ("e2e.shell_quiet", "inotifywait shell pattern, quiet", "jobs/s", "%.0f"),
    ("e2e.shell_churn", "inotifywait shell pattern, churned", "jobs/s", "%.0f"),
    ("cpusched.chute_j2_quiet", "chute -j 2 owner CPU per job (schedstat), quiet", "us/job", "%.0f"),
    ("cpusched.chute_j2_churn", "chute -j 2 owner CPU per job (schedstat), churned", "us/job", "%.0f"),
    ("lat.chute_churn_p50", "chute -j 2 latency (200 jobs 10 ms apart), churned, p50", "ms", "%.2f"),
    ("lat.chute_churn_p99", "chute -j 2 latency (200 jobs 10 ms apart), churned, p99", "ms", "%.2f"),
]
LAT = [("chute", "chute -j 2"), ("incron", "incron"), ("shell", "inotifywait shell pattern")]
PEERS = ["shell", "incron", "nq", "tsp_s1", "tsp_s2", "dirq_spawn"]


def stats(rounds):
    v = list(rounds.values())
    return statistics.median(v), min(v), max(v), len(v)


def ratio(raw, a, b, inverse=False):
    """Per-round a/b (b/a with inverse) where both were measured."""
    if a not in raw or b not in raw:
        return None
    r = {k: (raw[b][k] / raw[a][k] if inverse else raw[a][k] / raw[b][k])
         for k in raw[a] if k in raw[b] and raw[a][k] > 0 and raw[b][k] > 0}
    return r or None


def diff(raw, a, b):
    """Per-round a - b where both were measured."""
    if a not in raw or b not in raw:
        return None
    return {k: raw[a][k] - raw[b][k] for k in raw[a] if k in raw[b]} or None


def fmt_stats(rounds, f):
    if not rounds:
        return "n/a", "", "", ""
    med, lo, hi, cnt = stats(rounds)
    return f % med, f % lo, f % hi, str(cnt)


def targets(raw, p):
    """(target, what is compared, per-round values, required, test)."""
    ge = lambda lim: (lambda x: x >= lim)
    lt = lambda lim: (lambda x: x < lim)
    le = lambda lim: (lambda x: x <= lim)
    t = [
        ("exec-per-job, -j 2, vs raw spawn at 2", "e2e chute -j 2 / posix_spawn at 2",
         ratio(raw, "e2e.chute_j2", "lim.spawn_j2_per_s"), ">= 0.8", ge(0.8), "%.2fx"),
        ("exec-per-job, -j 2, vs two spawning processes (stricter)", "e2e chute -j 2 / 2 parents spawning",
         ratio(raw, "e2e.chute_j2", "lim.spawn_2proc_per_s"), ">= 0.8", ge(0.8), "%.2fx"),
        ("4x the shell pattern", "e2e chute -j 2 / inotifywait shell pattern",
         ratio(raw, "e2e.chute_j2", "e2e.shell"), ">= 4", ge(4), "%.2fx"),
    ]
    t.append(("4x the shell pattern", "e2e chute, faster of -j 1 and -j 2 / inotifywait shell pattern",
              ratio(raw, "e2e.chute_best", "e2e.shell"), ">= 4", ge(4), "%.2fx"))
    for peer in PEERS[1:]:
        label = dict(E2E)[peer]
        if peer == "nq":
            label = "nq true, %s jobs" % n(p, "NQ_JOBS")
        t.append(("ahead of every peer", "e2e chute -j 2 / " + label,
                  ratio(raw, "e2e.chute_j2", "e2e." + peer), "> 1", lambda x: x > 1, "%.2fx"))
        t.append(("ahead of every peer", "e2e chute, faster of -j 1 and -j 2 / " + label,
                  ratio(raw, "e2e.chute_best", "e2e." + peer), "> 1", lambda x: x > 1, "%.2fx"))
    best = "e2e.chute_persist_j2" if "e2e.chute_persist_j2" in raw else "e2e.chute_j2"
    t.append(("ahead of every peer (in-process reference)",
              "e2e %s / Python dirq in-process" % best.split(".", 1)[1],
              ratio(raw, best, "e2e.dirq"), "> 1", lambda x: x > 1, "%.2fx"))
    t += [
        ("latency p50 within 1.5x raw spawn", "chute p50 / one posix_spawn+waitpid",
         ratio(raw, "lat.chute_p50", "lim.spawn_wait_ms"), "<= 1.5", le(1.5), "%.2fx"),
        ("latency p50 (stricter reading)", "chute p50 / spawn to first instruction p50",
         ratio(raw, "lat.chute_p50", "lim.spawn_start_ms_p50"), "<= 1.5", le(1.5), "%.2fx"),
        ("latency p99 under 10 ms", "chute p99", raw.get("lat.chute_p99"), "< 10 ms", lt(10), "%.2f ms"),
        ("cost independent of backlog", "rate with %s queued / with %s queued (steady)" % (
            n(p, "SCALE_BIG"), n(p, "SCALE_SMALL")),
         ratio(raw, "scale.big_steady", "scale.small_steady"), ">= 0.9", ge(0.9), "%.2fx"),
        ("cost independent of backlog (incl. start-up)", "the same, owner start to job %s" % n(p, "SCALE_MEASURE"),
         ratio(raw, "scale.big_e2e", "scale.small_e2e"), ">= 0.9", ge(0.9), "%.2fx"),
        ("first handler within 2 s of start, %s queued" % n(p, "SCALE_HUGE"), "owner start to first handler",
         raw.get("scale.huge_first_handler_s"), "<= 2 s", le(2), "%.2f s"),
        ("peak RSS under 64 MiB, %s queued" % n(p, "SCALE_HUGE"), "owner VmHWM",
         raw.get("scale.huge_rss_mib"), "< 64 MiB", lt(64), "%.1f MiB"),
        ("owner CPU per job under 100 us", "chute -j 2 owner utime+stime / jobs",
         raw.get("cpu.chute_j2"), "< 100 us", lt(100), "%.0f us"),
        ("owner CPU per job under 100 us", "chute -j 1 owner utime+stime / jobs",
         raw.get("cpu.chute_j1"), "< 100 us", lt(100), "%.0f us"),
        ("owner CPU per job beyond a bare spawn (report)", "chute -j 2 owner CPU - a bare parent's CPU per vfork+exec at 2",
         diff(raw, "cpu.chute_j2", "lim.vfork_j2_parent_cpu_us"), "(report)", None, "%.0f us"),
        ("owner CPU per job beyond a bare spawn (report)", "chute -j 1 owner CPU - a bare parent's CPU per vfork+exec at 1",
         diff(raw, "cpu.chute_j1", "lim.vfork_j1_parent_cpu_us"), "(report)", None, "%.0f us"),
        ("owner CPU per job, persistent workers (report)", "chute --persistent -j 1 owner utime+stime / jobs",
         raw.get("cpu.chute_persist_j1"), "(report)", None, "%.0f us"),
        ("batch submission vs durable create", "chute submit FILE... / durable create, fsync per 64",
         ratio(raw, "sub.chute_batch", "lim.durable_fsync_64_per_s"), ">= 0.8", ge(0.8), "%.2fx"),
        ("persistent workers 10x exec", "e2e --persistent -j 2 / chute -j 2",
         ratio(raw, "e2e.chute_persist_j2", "e2e.chute_j2"), ">= 10", ge(10), "%.2fx"),
        ("persistent vs rename limit (report)", "e2e --persistent -j 2 / rename(2) rate",
         ratio(raw, "e2e.chute_persist_j2", "lim.rename_per_s"), "(report)", None, "%.3fx"),
        ("persistent vs durable limit (report)", "e2e --persistent -j 2 / durable create, fsync per 64",
         ratio(raw, "e2e.chute_persist_j2", "lim.durable_fsync_64_per_s"), "(report)", None, "%.2fx"),
    ]
    return t


def targets12(raw, p):
    """The targets of issue 12, each against its limit measured in the same round."""
    ge = lambda lim: (lambda x: x >= lim)
    le = lambda lim: (lambda x: x <= lim)
    cj = n(p, "CHURN_JOBS") if "CHURN_JOBS" in p else "?"
    return [
        ("latency p50 within 1.5x spawn to first instruction, quiet", "chute p50 / spawn to first instruction p50",
         ratio(raw, "lat.chute_p50", "lim.spawn_start_ms_p50"), "<= 1.5", le(1.5), "%.2fx"),
        ("the same, churned disk", "chute p50 after the churn / spawn to first instruction p50",
         ratio(raw, "lat.chute_churn_p50", "lim.spawn_start_ms_p50"), "<= 1.5", le(1.5), "%.2fx"),
        ("latency p99 within 3x, quiet", "chute p99 / spawn to first instruction p50",
         ratio(raw, "lat.chute_p99", "lim.spawn_start_ms_p50"), "<= 3", le(3), "%.2fx"),
        ("latency p99 within 3x, churned disk", "chute p99 after the churn / spawn to first instruction p50",
         ratio(raw, "lat.chute_churn_p99", "lim.spawn_start_ms_p50"), "<= 3", le(3), "%.2fx"),
        ("-j 2 near a bare parent's spawn", "e2e chute -j 2 / vfork+execve+waitpid, 2 in flight",
         ratio(raw, "e2e.chute_j2", "lim.vfork_j2_per_s"), ">= 0.9", ge(0.9), "%.2fx"),
        ("-j 1 near a bare parent's spawn", "e2e chute -j 1 / vfork+execve+waitpid, 1 at a time",
         ratio(raw, "e2e.chute_j1", "lim.vfork_j1_per_s"), ">= 0.9", ge(0.9), "%.2fx"),
        ("4x the shell pattern, %s jobs, quiet" % cj, "chute -j 2 / inotifywait shell pattern",
         ratio(raw, "e2e.chute_j2_quiet", "e2e.shell_quiet"), ">= 4", ge(4), "%.2fx"),
        ("4x the shell pattern, %s jobs, churned disk" % cj, "chute -j 2 / inotifywait shell pattern, each after a churn",
         ratio(raw, "e2e.chute_j2_churn", "e2e.shell_churn"), ">= 4", ge(4), "%.2fx"),
        ("churned / quiet (report)", "chute -j 2 after a churn / quiet",
         ratio(raw, "e2e.chute_j2_churn", "e2e.chute_j2_quiet"), "(report)", None, "%.2fx"),
        ("owner CPU per job beyond a bare spawn, -j 1", "schedstat CPU per job - a bare parent's CPU per vfork+exec at 1",
         diff(raw, "cpusched.chute_j1", "lim.vfork_j1_parent_cpu_us"), "<= 40 us", le(40), "%.0f us"),
        ("owner CPU per job beyond a bare spawn, -j 2", "schedstat CPU per job - a bare parent's CPU per vfork+exec at 2",
         diff(raw, "cpusched.chute_j2", "lim.vfork_j2_parent_cpu_us"), "<= 40 us", le(40), "%.0f us"),
        ("persistent -j 2, 2x Python dirq in-process", "e2e --persistent -j 2 / Python dirq in-process",
         ratio(raw, "e2e.chute_persist_j2", "e2e.dirq"), ">= 2", ge(2), "%.2fx"),
        ("persistent -j 2 vs the rename limit", "e2e --persistent -j 2 / rename(2) rate",
         ratio(raw, "e2e.chute_persist_j2", "lim.rename_per_s"), ">= 0.3", ge(0.3), "%.3fx"),
        ("owner CPU per persistent job", "chute --persistent -j 2 schedstat CPU / jobs",
         raw.get("cpusched.chute_persist_j2"), "<= 30 us", le(30), "%.0f us"),
        ("cost independent of backlog", "rate with %s queued / with %s queued (steady)" % (
            n(p, "SCALE_BIG"), n(p, "SCALE_SMALL")),
         ratio(raw, "scale.big_steady", "scale.small_steady"), ">= 0.95", ge(0.95), "%.2fx"),
        ("cost independent of backlog (incl. start-up)", "the same, owner start to job %s" % n(p, "SCALE_MEASURE"),
         ratio(raw, "scale.big_e2e", "scale.small_e2e"), ">= 0.9", ge(0.9), "%.2fx"),
    ]


def target_table(w, rows, skip_missing=False):
    w("| target | compared | median | min | max | required | met |")
    w("|---|---|---|---|---|---|---|")
    for name, what, rounds, req, test, f in rows:
        if not rounds and (skip_missing or "stricter" in name or "beyond a bare spawn" in name):
            continue
        if not rounds:
            w("| %s | %s | n/a | | | %s | not measured |" % (name, what, req))
            continue
        med, lo, hi, _ = stats(rounds)
        met = "" if test is None else ("yes" if test(med) else "**no**")
        w("| %s | %s | %s | %s | %s | %s | %s |" % (name, what, f % med, f % lo, f % hi, req, met))
    w("")


def derive(raw):
    for q in ("p50", "p99"):
        us = raw.get("lim.spawn_start_us_" + q)
        if us:
            raw["lim.spawn_start_ms_" + q] = {k: v / 1e3 for k, v in us.items()}
    if "e2e.chute_j1" in raw and "e2e.chute_j2" in raw:
        j1, j2 = raw["e2e.chute_j1"], raw["e2e.chute_j2"]
        raw["e2e.chute_best"] = {k: max(j1[k], j2[k]) for k in j1 if k in j2}
    if "lim.spawn_j1_per_s" in raw:
        raw["lim.spawn_wait_ms"] = {k: 1e3 / v for k, v in raw["lim.spawn_j1_per_s"].items() if v > 0}


def keep_lead_section(out):
    if os.path.exists(out):
        text = open(out).read()
        m = re.search(re.escape(LEAD_BEGIN) + r"\n(.*?)" + re.escape(LEAD_END), text, re.S)
        if m:
            return m.group(1)
    return ("**TO BE FILLED IN BY THE LEAD.** What dominates chute's cost per job now, read from the\n"
            "figures above and the profile below (bench/run keeps this section when it rewrites the file).\n\n")


PLOT_LABEL = {
    "chute_j1": "chute -j1", "chute_j2": "chute -j2", "chute_j2_drain": "chute -j2 --drain",
    "chute_persist_j1": "chute persistent -j1", "chute_persist_j2": "chute persistent -j2",
    "chute_persist_sh_j1": "chute persistent -j1 sh", "shell": "inotifywait | sh",
    "incron": "incron", "nq": "nq", "tsp_s1": "tsp 1 slot", "tsp_s2": "tsp 2 slots",
    "dirq": "dirq in-process", "dirq_spawn": "dirq + spawn",
}


def write_plot_data(raw, plotdir):
    with open(os.path.join(plotdir, "e2e.dat"), "w") as f:
        rows = [("lim.spawn_j1_per_s", "limit: spawn x1", 0), ("lim.spawn_j2_per_s", "limit: spawn x2", 0),
                ("lim.spawn_2proc_per_s", "limit: 2 x spawn x1", 0)]
        rows += [("e2e." + k, PLOT_LABEL[k], 1 if k.startswith("chute") else 2) for k, _ in E2E]
        for key, label, color in rows:
            if key in raw:
                med, lo, hi, _ = stats(raw[key])
                f.write('"%s" %g %g %g %d\n' % (label, med, lo, hi, color))
    with open(os.path.join(plotdir, "lat.dat"), "w") as f:
        for key, label in [("lim.spawn_start_ms", "limit: spawn to start")] + \
                [("lat." + k, PLOT_LABEL.get(k, k)) for k, _ in LAT]:
            a, b = key + "_p50", key + "_p99"
            if a in raw and b in raw:
                f.write('"%s" %g %g\n' % (label, stats(raw[a])[0], stats(raw[b])[0]))
        if "lim.spawn_wait_ms" in raw:
            w = stats(raw["lim.spawn_wait_ms"])[0]
            f.write('"limit: spawn+wait" %g %g\n' % (w, w))


def cmd_md(work, out, plotdir):
    raw = load_raw(work)
    derive(raw)
    p = params(work)
    lead = keep_lead_section(out)
    pressure_kept = kept_pressure(out)
    L = []
    w = L.append
    mode = "quick smoke run (BENCH_QUICK=1)" if p.get("QUICK") == "1" else "full run"
    w("# chute benchmark results\n")
    w("Written by `make bench` (bench/run) on %s, %s: %s round(s); every figure below comes from this\n"
      "machine in this run. Figures are median, min and max over the rounds; ratios are computed per\n"
      "round (both sides measured in the same round) and then summarised the same way.\n"
      % (p.get("DATE", "?"), mode, p.get("ROUNDS", "?")))
    w("Load average at the start: %s; at the end: %s. The machine is shared; other work running at the\n"
      "same time lowers every figure, which is why the targets are ratios.\n"
      % (p.get("LOAD_START", "?"), p.get("LOAD_END", "?")))
    w("![end-to-end throughput and latency](results.png)\n")
    fails = read(work, "failures").strip()
    if fails:
        w("**Measurements that failed in this run** (no figure recorded for that round):\n")
        w("\n".join("- " + x for x in fails.splitlines()) + "\n")
    skipped = read(work, "skipped").strip()
    if skipped:
        w("**Skipped:**\n")
        w("\n".join("- " + x for x in skipped.splitlines()) + "\n")

    w("## Targets of issue 12\n")
    w("Every ratio is taken per round, both sides measured in that round; the churned rows each ran\n"
      "right after their own churn (Method).\n")
    target_table(w, targets12(raw, p), skip_missing=True)
    w("## Targets of issue 4\n")
    target_table(w, targets(raw, p))

    w("## Every figure\n")
    section = None
    for key, sec, label, unit, f in figures(p):
        if sec != section:
            if section is not None:
                w("")
            w("### " + sec[0].upper() + sec[1:] + "\n")
            w("| figure | unit | median | min | max | rounds |")
            w("|---|---|---|---|---|---|")
            section = sec
        if key not in raw and key.startswith("lim.") and key != "lim.spawn_j1_per_s":
            continue
        if key not in raw:
            note = "not supported by this build" if "persist" in key else "not measured"
            w("| %s | %s | %s | | | |" % (label, unit, note))
            continue
        w("| %s | %s | %s | %s | %s | %s |" % ((label, unit) + fmt_stats(raw[key], f)))
    w("")

    L.extend(spool_sched(raw, p))
    fleet = os.path.join(work, "fleet.tsv")
    if os.path.exists(fleet):
        spawn = raw.get("lim.spawn_wait_ms")
        L.extend(cmd_fleet(fleet, stats(spawn)[0] if spawn else None))
    elif read(work, "fleet").strip():
        w(FLEET_BEGIN + "\n")
        w(read(work, "fleet").strip() + "\n")

    press = os.path.join(work, "pressure.tsv")
    if os.path.exists(press):
        L.extend(cmd_pressure(press, None))
    elif pressure_kept:
        L.extend(pressure_kept)
    w("## What limits chute now\n")
    w(LEAD_BEGIN)
    w(lead.rstrip("\n") + "\n")
    w(LEAD_END + "\n")
    prof = read(work, "profile").strip()
    if prof:
        w("### Profile of the owner (not a measured run)\n")
        w(prof + "\n")

    w("## Method\n")
    w(read(work, "method").strip() + "\n")
    w("## Exact commands\n")
    w("Paths: `$B` is the directory of the compiled helpers (build/bench), `$S` a fresh spool under a\n"
      "temporary directory, `$CHUTE` the chute measured (`%s`).\n" % p.get("CHUTE", "?"))
    w("```sh\n" + read(work, "commands").strip() + "\n```\n")
    w("## Versions\n")
    w("```\n" + read(work, "versions").strip() + "\n```\n")
    w("## Machine\n")
    w("```\n" + read(work, "machine").strip() + "\n```\n")
    with open(out, "w") as f:
        f.write("\n".join(L))
    write_plot_data(raw, plotdir)


def spool_sched(raw, p):
    """The spool's Scheduling section (issue 36) from the sched.* records of bench/run."""
    L = []
    w = L.append
    if not any(k.startswith("sched.") for k in raw):
        return L
    w("## Scheduling on a spool (issue 36)\n")
    w("The owner (`chute run SPOOL -j 2`) with the witness (bench/witness.c, exec'd) as the handler,\n"
      "which appends `KEY START END` per job; bench/witness.py counts the most jobs of one key running\n"
      "at once. Keyed rows: names `NAME,p=P,k=kJ` (priorities -2..2, 100 keys, `chute limit SPOOL\n"
      "--default --max 1`); the hot key: names `,k=hot` at the same limit, then others of one key each.\n")
    ge = lambda lim: (lambda x: x >= lim)
    t = []
    for q in (p.get("SCALE_SMALL"), p.get("SCALE_BIG")):
        if not q:
            continue
        pre = "sched.q%s_" % q
        t.append(("claim rate, %s queued, priorities and keys in use >= 0.9x without" % "{:,}".format(int(q)),
                  "steady rate (jobs 10%-100% of the first ones, by their arrival in done/), keyed / plain",
                  ratio(raw, pre + "keyed_steady", pre + "plain_steady"), ">= 0.9", ge(0.9), "%.2fx"))
        t.append(("the same, from the owner's start (report)", "keyed / plain",
                  ratio(raw, pre + "keyed_e2e", pre + "plain_e2e"), "(report)", None, "%.2fx"))
    t.append(("hot key: the others' start rate beside it >= 0.9x without",
              "others started / time to the last one's start, with the hot key's backlog / without",
              ratio(raw, "sched.spool_hot_others_per_s", "sched.spool_hotbase_others_per_s"), ">= 0.9", ge(0.9), "%.2fx"))
    t.append(("hot key: first other job started after, ms (report)", "from the owner's start",
              raw.get("sched.spool_hot_others_first_ms"), "(report)", None, "%.1f"))
    target_table(w, t, skip_missing=True)
    rows = []
    for k in sorted(raw):
        m = re.match(r"sched\.(.+)_max_overlap$", k)
        if not m:
            continue
        lim = "1" if (m.group(1).endswith("keyed") or "hot" in m.group(1)) else None
        worst = max(raw[k].values())
        v = "-" if lim is None else ("limit held (max overlap %d of %s)" % (worst, lim) if worst <= int(lim)
                                     else "**exceeded: max overlap %d > %s**" % (worst, lim))
        rows.append("| %s | %s | %d |" % (m.group(1), v, len(raw[k])))
    if rows:
        w("| row | witness (the worst round) | rounds |")
        w("|---|---|---|")
        L.extend(rows)
        w("")
    return L


# ---------------------------------------------------------------- fleet (issue 9)

FLEET_BEGIN = "## Fleet: chute's PostgreSQL queue and its peers (issue 9)"
# Rows of a BENCH_FLEET_PIN=1 run (a pin=... note: server on CPU 0, workers on CPU 1) are
# keyed with this after their config, apart from the unpinned rows of the same config.
PIN_SFX = " pinned"
# Rows of a BENCH_FLEET_XMIN=1 run (an xmin=held note: a session held a transaction ID open
# through the measurement) are keyed with this after their config (and after PIN_SFX).
XMIN_SFX = " xmin"


def fleet_load(tsv):
    """rows[(system, config, jobs)][round] = dict, meta{key: value}. Claim rows are keyed
    with jobs "-": the jobs done when a worker is stopped vary by a few."""
    rows, meta = {}, {}
    with open(tsv) as f:
        head = f.readline().rstrip("\n").split("\t")
        for line in f:
            v = dict(zip(head, line.rstrip("\n").split("\t")))
            if v["system"] == "meta":
                meta[v["config"]] = v.get("notes", "")
                continue
            if v["system"] == "machine":
                meta[v["config"]] = v["jobs_per_s"]
                continue
            jobs = "-" if v["config"].startswith(("claim-", "sched-claim-")) else v["jobs"]
            notes = {}
            for kv in (v.get("notes") or "-").split(","):
                if "=" in kv:
                    k, x = kv.split("=", 1)
                    notes[k] = x
            v["n"] = notes
            if "pin" in notes:
                v["config"] += PIN_SFX
            if notes.get("xmin") == "held":
                v["config"] += XMIN_SFX
            rnd = int(v["round"]) if v["round"].isdigit() else 0
            rows.setdefault((v["system"], v["config"], jobs), {})[rnd] = v
    return rows, meta


def fleet_num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def fleet_get(rows, key, field):
    """{round: value} of one field (or notes key, "n:KEY") of one row."""
    out = {}
    for rnd, v in rows.get(key, {}).items():
        x = fleet_num(v["n"].get(field[2:]) if field.startswith("n:") else v.get(field))
        if x is not None:
            out[rnd] = x
    return out


def fleet_ratio(a, b):
    r = {k: a[k] / b[k] for k in a if k in b and b[k] > 0}
    return r or None


def cmd_fleet(tsv, spawn_ms=None):
    rows, meta = fleet_load(tsv)
    L = []
    w = L.append
    w(FLEET_BEGIN + "\n")
    w("Written by bench/fleet/run.sh (method: bench/fleet/README.md) on %s: %s round(s) on %s cores,\n"
      "PostgreSQL %s in a throwaway cluster on this machine, Node %s, chute %s. Load average at the\n"
      "start %s, at the end %s; 8 kB fdatasync'd writes on the cluster's disk: %s/s (every figure\n"
      "here is bound by commit latency; compare runs only where that is similar). Figures are\n"
      "medians over the rounds, ratios are taken per round and then summarised the same way.\n"
      % (meta.get("date", "?"), meta.get("rounds", "?"), meta.get("nproc", "?"), meta.get("postgres", "?"),
         meta.get("node", "?"), meta.get("chute", "?"), meta.get("load_start", "?").replace(",", " "),
         meta.get("load_end", "?").replace(",", " "), meta.get("fdatasync-8k", "?")))
    if meta.get("pin"):
        w("Pinned run (BENCH_FLEET_PIN=1, %s): the server on one CPU, every worker side on the other, for\n"
          "chute and its peers alike; its rows have configs `... pinned`.\n" % meta["pin"].replace(";", ", "))

    def targets(sfx):
        """The Targets rows of the rows whose config ends in sfx ("" or " pinned")."""
        t = []
        tput = lambda sysname, cfg, n: fleet_get(rows, (sysname, cfg + sfx, n), "jobs_per_s")
        lat = lambda sysname, cfg, q: fleet_get(rows, (sysname, "latency:" + cfg + sfx, "200"), q)
        ge = lambda lim: (lambda x: x >= lim)
        le = lambda lim: (lambda x: x <= lim)
        sizes = sorted({int(k[2]) for k in rows if k[0] == "chute" and k[1] == "persistent-2x2" + sfx})
        for n in sizes:
            c = tput("chute", "persistent-2x2", str(n))
            pre = "throughput, %s jobs: " % "{:,}".format(n)
            t.append((pre + ">= 1.5x graphile-worker defaults", "chute --persistent 2x2 / graphile-worker defaults",
                      fleet_ratio(c, tput("graphile-worker", "defaults", str(n))), ">= 1.5", ge(1.5), "%.2fx"))
            t.append((pre + ">= 1.5x pg-boss b1000, 0.5 s poll", "chute --persistent 2x2 / pg-boss b1000-p05",
                      fleet_ratio(c, tput("pg-boss", "b1000-p05", str(n))), ">= 1.5", ge(1.5), "%.2fx"))
            big = n >= 100000
            t.append((pre + ("aim: >= 1x graphile-worker batched" if big else "graphile-worker batched (target at 100,000)"),
                      "chute --persistent 2x2 / graphile-worker localQueue 100, completeJobBatchDelay 0",
                      fleet_ratio(c, tput("graphile-worker", "batched", str(n))),
                      ">= 1" if big else "(report)", ge(1) if big else None, "%.2fx"))
            if big:
                cpu = lambda sysname, cfg: {r: w_ + s_ for r, w_ in fleet_get(rows, (sysname, cfg + sfx, str(n)), "n:cpu_worker_us").items()
                                            for r2, s_ in fleet_get(rows, (sysname, cfg + sfx, str(n)), "n:cpu_server_us").items() if r2 == r}
                t.append((pre + "total CPU per job at or below graphile-worker batched's",
                          "chute (workers, handlers, server) / graphile-worker batched (workers, server), CPU us per job",
                          fleet_ratio(cpu("chute", "persistent-2x2"), cpu("graphile-worker", "batched")), "<= 1", le(1), "%.2fx"))
                t.append((pre + "chute's total CPU per job, us (report)", "workers + handlers + server",
                          cpu("chute", "persistent-2x2") or None, "(report)", None, "%.0f"))
                t.append((pre + "graphile-worker batched's total CPU per job, us (report)", "workers + server",
                          cpu("graphile-worker", "batched") or None, "(report)", None, "%.0f"))
            t.append((pre + "pg-boss b1000, 2 s poll (report)", "chute --persistent 2x2 / pg-boss b1000",
                      fleet_ratio(c, tput("pg-boss", "b1000", str(n))), "(report)", None, "%.2fx"))
            t.append((pre + "the database's limit at a batch of 100 (report)",
                      "chute --persistent 2x2 (claims of its rate's 100 ms, at most 256 + free slots) / raw claim+ack b100-c2",
                      fleet_ratio(c, tput("raw-claim-ack", "b100-c2", str(n))), "(report)", None, "%.2fx"))
            t.append((pre + "local copies in /tmp instead of the unit's RuntimeDirectory (report)",
                      "chute --persistent 2x2, /tmp / RuntimeDirectory on tmpfs",
                      fleet_ratio(tput("chute", "persistent-2x2-tmp", str(n)), c), "(report)", None, "%.2fx"))
        ex = sorted({k[2] for k in rows if k[0] == "chute-spool" and k[1] == "exec-true-j2" + sfx})
        for n in ex:
            sp = tput("chute-spool", "exec-true-j2", n)
            t.append(("exec per job (/bin/true), %s jobs: >= 0.8x the spool" % "{:,}".format(int(n)),
                      "chute URL, 2 processes x -j 2 / chute SPOOL -j 2",
                      fleet_ratio(tput("chute", "exec-true-2x2", n), sp), ">= 0.8", ge(0.8), "%.2fx"))
            t.append(("exec per job, one process (report)", "chute URL, 1 process x -j 2 / chute SPOOL -j 2",
                      fleet_ratio(tput("chute", "exec-true-1x2", n), sp), "(report)", None, "%.2fx"))
        for k in sorted(k for k in rows if k[0] == "chute-forward" and k[1].endswith(sfx) and
                        (sfx or not k[1].endswith((PIN_SFX, XMIN_SFX)))):
            raw = ("forward-raw-insert", k[1], k[2])
            t.append(("chute forward, %s jobs (%s): >= 0.8x a raw batched INSERT of the same batch" % (
                          "{:,}".format(int(k[2])), k[1]),
                      "chute forward SPOOL URL --drain / fwdraw: forward's statement, the same batches, from memory",
                      fleet_ratio(fleet_get(rows, k, "jobs_per_s"), fleet_get(rows, raw, "jobs_per_s")),
                      ">= 0.8", ge(0.8), "%.2fx"))
            t.append(("chute forward: client CPU per job, us (report)", "user+sys of chute forward / jobs",
                      fleet_get(rows, k, "n:cpu_client_us") or None, "(report)", None, "%.0f"))
            t.append(("raw batched INSERT: client CPU per job, us (report)", "user+sys of fwdraw / jobs",
                      fleet_get(rows, raw, "n:cpu_client_us") or None, "(report)", None, "%.0f"))
        gw50, gw99 = lat("graphile-worker", "defaults", "p50_ms"), lat("graphile-worker", "defaults", "p99_ms")
        t.append(("latency p50 no worse than graphile-worker's", "chute persistent worker, jobs over one connection / graphile-worker",
                  fleet_ratio(lat("chute", "persistent-conn", "p50_ms"), gw50), "<= 1", le(1), "%.2fx"))
        t.append(("latency p99 at most 2x graphile-worker's", "the same, p99",
                  fleet_ratio(lat("chute", "persistent-conn", "p99_ms"), gw99), "<= 2", le(2), "%.2fx"))
        ex50 = lat("chute", "exec-conn", "p50_ms")
        if spawn_ms:
            plus = {k: v + spawn_ms for k, v in gw50.items()}
            t.append(("latency p50, exec'd handler: no worse than graphile-worker's plus one spawn",
                      "chute exec'd bench/stamp / (graphile-worker p50 + one posix_spawn+waitpid, %.2f ms)" % spawn_ms,
                      fleet_ratio(ex50, plus), "<= 1", le(1), "%.2fx"))
        else:
            d = {k: ex50[k] - gw50[k] for k in ex50 if k in gw50}
            t.append(("latency p50, exec'd handler, beyond graphile-worker's (compare: one spawn)",
                      "chute exec'd bench/stamp p50 - graphile-worker p50", d or None, "(report)", None, "%.1f ms"))
        for cfg, what in (("persistent-cli", "persistent worker"), ("exec-cli", "exec'd handler")):
            t.append(("latency p50, one `chute submit` process per job (report)",
                      "chute %s, from each submit's end / graphile-worker" % what,
                      fleet_ratio(lat("chute", cfg, "p50_ms"), gw50), "(report)", None, "%.2fx"))
        plain, after = [], None
        for k in rows:
            m = re.match(r"claim-q(\d+)(-after-(\d+)-done)?%s$" % re.escape(sfx), k[1])
            if k[0] == "chute" and m:
                if m.group(2):
                    after = (k, int(m.group(3)))
                else:
                    plain.append((k, int(m.group(1))))
        plain.sort(key=lambda c: c[1])
        small = plain[0] if plain else None
        big = plain[-1] if len(plain) > 1 else None

        def steady(key):
            out = {}
            for rnd, v in rows.get(key, {}).items():
                x = [fleet_num(val) for kk, val in v["n"].items() if kk.startswith("steady_")]
                if x and x[0] is not None:
                    out[rnd] = x[0]
            return out
        if small and big:
            t.append(("claim rate with %s queued >= 0.9x with %s queued" % ("{:,}".format(big[1]), "{:,}".format(small[1])),
                      "one worker --persistent -j 2, local copies on a tmpfs (RuntimeDirectory), steady rate (jobs 10%-100% of those timed, by handler start)",
                      fleet_ratio(steady(big[0]), steady(small[0])), ">= 0.9", ge(0.9), "%.2fx"))
            t.append(("the same, start to exit (report)", "jobs done / (worker start to its exit)",
                      fleet_ratio(fleet_get(rows, big[0], "jobs_per_s"), fleet_get(rows, small[0], "jobs_per_s")),
                      "(report)", None, "%.2fx"))
        if small and after:
            t.append(("claim rate after %s finished >= 0.8x at the start" % "{:,}".format(after[1]),
                      "%s queued after %s finished / %s queued, steady rate" % (
                          "{:,}".format(small[1]), "{:,}".format(after[1]), "{:,}".format(small[1])),
                      fleet_ratio(steady(after[0]), steady(small[0])), ">= 0.8", ge(0.8), "%.2fx"))
            t.append(("the same, start to exit (report)", "jobs done / (worker start to its exit)",
                      fleet_ratio(fleet_get(rows, after[0], "jobs_per_s"), fleet_get(rows, small[0], "jobs_per_s")),
                      "(report)", None, "%.2fx"))
        for c in (big, after):
            if c:
                lbl = c[0][1]
                t.append(("dead tuples at the end (report)", "pg_stat_user_tables.n_dead_tup of chute.jobs, " + lbl,
                          fleet_get(rows, c[0], "n:n_dead_tup") or None, "(report)", None, "%.0f"))
                t.append(("jobs_due index at the end (report)", "pg_relation_size, KiB, " + lbl,
                          fleet_get(rows, c[0], "n:jobs_due_kib") or None, "(report)", None, "%.0f"))

        return t

    pin_text = ("The same comparisons between the rows of a pinned run (config `... pinned`): the PostgreSQL\n"
                "server (postmaster and every backend) pinned to CPU 0, every worker side (the peers' node\n"
                "driver and worker processes, chute's `chute run` workers and handlers, the helpers) to CPU 1,\n"
                "for chute and its peers alike; `pin=` in a row's notes is what a sampler saw during it.\n")
    xmin_text = ("The same comparisons under a held xmin (BENCH_FLEET_XMIN=1, config `... xmin`): a session of\n"
                 "the measured database held a transaction ID open, idle in transaction, from before the jobs\n"
                 "were added until the measurement ended, for chute and its peers alike: vacuum could remove\n"
                 "nothing meanwhile.\n")
    variants = []
    for sfx, head, text in (("", "### Targets\n", None),
                            (PIN_SFX, "### Targets, server on CPU 0 and workers on CPU 1 (BENCH_FLEET_PIN=1)\n", pin_text),
                            (XMIN_SFX, "### Targets under a held xmin (BENCH_FLEET_XMIN=1)\n", xmin_text),
                            (PIN_SFX + XMIN_SFX, "### Targets, pinned, under a held xmin\n", pin_text + xmin_text)):
        have = any(k[1].endswith(sfx) and not (sfx == "" and k[1].endswith((PIN_SFX, XMIN_SFX))) and
                   not (sfx == PIN_SFX and k[1].endswith(XMIN_SFX)) for k in rows)
        if have:
            variants.append((sfx, head, text))
    for sfx, head, text in variants:
        w(head)
        if text:
            w(text)
        target_table(w, targets(sfx))
    L.extend(fleet_sched(rows, meta))
    L.extend(fleet_uniq(rows, meta))
    w("### Every row\n")
    w("Throughput rows: jobs/s from the workers' start to the last job finished (peers: the database")
    w("says so; chute's persistent rows: the last outcome's commit, `exit_s` to both workers' exit;")
    w("chute's exec rows and the spool: to the exit). Latency rows: submit to handler start, 200 jobs")
    w("50 ms apart. notes: CPU per job of the workers and of the server and the share of the machine")
    w("other processes used meanwhile; for chute's claim rows the steady rate, dead tuples and sizes.\n")
    w("| system | config | jobs | seconds | jobs/s | p50 ms | p99 ms | notes | rounds |")
    w("|---|---|---|---|---|---|---|---|---|")
    for key in rows:
        rs = rows[key]
        cell = []
        for field, f in (("seconds", "%.3f"), ("jobs_per_s", "%.0f"), ("p50_ms", "%.1f"), ("p99_ms", "%.1f")):
            v = fleet_get(rows, key, field)
            cell.append(f % statistics.median(v.values()) if v else "-")
        last = rs[max(rs)]
        jobs = key[2] if key[2] != "-" else last["jobs"]
        notes = (last.get("notes") or "-").replace(",", ", ")
        if len(rs) > 1:
            notes += " (round %d)" % max(rs)
        w("| %s | %s | %s | %s | %s | %s | %s | %s | %d |" % ((key[0], key[1], jobs) + tuple(cell) + (notes, len(rs))))
    w("")
    return L


# ---------------------------------------------------------------- unique keys, dependencies (issue 37)

UNIQ_ROWS = [
    ("chute", "statement", "chute, its statement (usubmit: open connections, no process)"),
    ("chute", "cli-queue", "chute, `chute submit URL` processes (what a user runs; process-bound)"),
    ("chute-spool", "cli", "chute spool, `chute submit SPOOL` processes"),
    ("graphile-worker", "", "graphile-worker, addJob with jobKey"),
    ("pg-boss", "", "pg-boss 10, send with singletonKey (policy short)"),
    ("pg-boss-12", "", "pg-boss 12, send with singletonKey (policy short)"),
]


def fleet_uniq(rows, meta):
    """Issue 37's section: submit throughput with a distinct unique key per job against
    without (uniq:plain[:VIA] / uniq:keyed[:VIA]), per system, the aim >= 0.8x; and the
    cost of waking dependents (after:wake-K)."""
    L = []
    w = L.append
    keys = {k[1]: k for k in rows}
    uniq = [(sysname, via, lbl) for sysname, via, lbl in UNIQ_ROWS
            if any(k[0] == sysname and k[1].startswith("uniq:") for k in rows)]
    after = sorted(k for k in rows if k[1].startswith("after:"))
    skips = sorted((c[len("skip:"):], t) for c, t in meta.items() if c.startswith("skip:")
                   and re.search(r":(uniq|after)", c))
    if not uniq and not after and not skips:
        return L
    w("### Unique keys and dependencies (issue 37)\n")
    w("Submit throughput: the same number of single-job submits, 4 at a time (`BENCH_FLEET_UNIQ_PROCS`),")
    w("each job with a distinct unique key against none, every run checked for exactly that many jobs.")
    w("chute's `statement` rows are the cost of its submit statements over open connections (as the")
    w("peers' one pool); its `cli` rows are what a user runs, one process pair and connection per")
    w("submit, and on a queue dominated by that. Aim: keyed >= 0.8x plain.\n")
    for what, why in skips:
        w("- skipped: %s: %s" % (what, why))
    if skips:
        w("")
    t = []
    for sysname, via, lbl in uniq:
        sfx = ":" + via if via else ""
        pl = next((k for k in rows if k[0] == sysname and k[1] == "uniq:plain" + sfx), None)
        kd = next((k for k in rows if k[0] == sysname and k[1] == "uniq:keyed" + sfx), None)
        if pl is None or kd is None:
            continue
        rp, rk = fleet_get(rows, pl, "jobs_per_s"), fleet_get(rows, kd, "jobs_per_s")
        t.append(("%s: keyed >= 0.8x plain" % lbl,
                  "jobs/s keyed %s / plain %s (medians)" % (
                      "%.0f" % statistics.median(rk.values()) if rk else "?",
                      "%.0f" % statistics.median(rp.values()) if rp else "?"),
                  fleet_ratio(rk, rp), ">= 0.8", lambda x: x >= 0.8, "%.2fx"))
    if after:
        base = next((k for k in after if k[0] == "chute" and k[1] == "after:wake-0"), None)
        for k in after:
            if k == base:
                continue
            ms = fleet_get(rows, k, "p50_ms")
            n = k[1].split(":")[1].split("-")[-1]
            if k[0] == "chute":
                t.append(("queue: waking %s dependents, ms (report)" % n,
                          "the execute of the one outcome that wakes them (server log)", ms or None, "(report)", None, "%.1f"))
                if base:
                    t.append(("queue: the same outcome waking none, ms (report)", "baseline",
                              fleet_get(rows, base, "p50_ms") or None, "(report)", None, "%.2f"))
            elif k[0] != "chute-spool":
                t.append(("%s: waking %s dependents, %s, ms (report)" % (k[0], n, k[1].split(":")[-1]),
                          "from complete()'s return to none blocked (polled every 5 ms)", ms or None,
                          "(report)", None, "%.1f"))
            else:
                t.append(("spool: waking %s dependents, ms (report)" % n,
                          "the job's rename into done/ to the last woken one's into new/ (ctimes)", ms or None,
                          "(report)", None, "%.1f"))
    if t:
        target_table(w, t)
    return L


# ---------------------------------------------------------------- scheduling (issue 36)

SCHED_SYS = {"graphile-worker": "graphile-worker", "pg-boss-12": "pg-boss 12", "chute": "chute"}


def verdict(rows, key):
    """The witness's verdict over the rounds of one row: the worst round's."""
    worst = None
    for v in rows.get(key, {}).values():
        n = v["n"]
        if "limit" not in n:
            continue
        m, lim = int(n.get("max_overlap", 0)), int(n["limit"])
        if worst is None or m - lim > worst[0] - worst[1]:
            worst = (m, lim)
    if worst is None:
        return "-"
    m, lim = worst
    return "limit held (max overlap %d of %d)" % (m, lim) if m <= lim else "**exceeded: max overlap %d > %d**" % (m, lim)


def fleet_sched(rows, meta):
    """The Scheduling section of the fleet TSV: chute's claim rate with priorities and keys
    against without (sched-claim-*), and the sched:MIX:CONFIG rows of chute and its peers,
    each with the witness's verdict."""
    L = []
    w = L.append
    claim = {}
    for k in rows:
        m = re.match(r"sched-claim-q(\d+)(-keyed)?$", k[1])
        if k[0] == "chute" and m:
            claim.setdefault(int(m.group(1)), {})[bool(m.group(2))] = k
    sched = {}
    for k in rows:
        m = re.match(r"sched:([^:]+):(.+)$", k[1])
        if m:
            sched.setdefault(m.group(1), {})[(k[0], m.group(2))] = k
    skips = sorted((c[len("skip:"):], t) for c, t in meta.items() if c.startswith("skip:")
                   and not re.search(r":(uniq|after)", c))
    if not claim and not sched and not skips:
        return L
    w("### Scheduling (issue 36): priorities, per-key limits, a hot key\n")
    w("Each handler of these rows is the witness (bench/witness.c for chute, lib.js's for the peers): it\n"
      "appends `KEY START END` per job, and bench/witness.py counts the most jobs of one key running at\n"
      "once against the row's limit. Jobs hold %s us each in the `sched:` rows (none in the claim rows).\n"
      % (next((v["n"].get("hold_us") for r in rows.values() for v in r.values() if "hold_us" in v["n"]), "?")))
    for what, why in skips:
        w("- skipped: %s: %s" % (what, why))
    if skips:
        w("")
    ge = lambda lim: (lambda x: x >= lim)
    t = []

    def steady(key):
        out = {}
        for rnd, v in rows.get(key, {}).items():
            x = [fleet_num(val) for kk, val in v["n"].items() if kk.startswith("steady_")]
            if x and x[0] is not None:
                out[rnd] = x[0]
        return out
    for q in sorted(claim):
        if True in claim[q] and False in claim[q]:
            kd, pl = claim[q][True], claim[q][False]
            t.append(("chute's claim rate, %s queued, priorities and keys in use >= 0.9x without" % "{:,}".format(q),
                      "one worker --persistent -j 2; priorities -2..2 and 100 keys at limit 1 / none; steady rate by handler start",
                      fleet_ratio(steady(kd), steady(pl)), ">= 0.9", ge(0.9), "%.2fx"))
            t.append(("the same, start to exit (report)", "jobs done / (worker start to its exit)",
                      fleet_ratio(fleet_get(rows, kd, "jobs_per_s"), fleet_get(rows, pl, "jobs_per_s")),
                      "(report)", None, "%.2fx"))
    for (sysname, cfg), hk in sorted(sched.get("hot", {}).items()):
        base = sched.get("hotbase", {}).get((sysname, cfg))
        lbl = "%s %s" % (SCHED_SYS.get(sysname, sysname), cfg)
        req, test = (">= 0.9", ge(0.9)) if sysname == "chute" else ("(report)", None)
        if base:
            t.append(("hot key: the others' start rate beside it, %s" % lbl,
                      "others started / time to the last one's start, with the hot key's backlog / without",
                      fleet_ratio(fleet_get(rows, hk, "n:others_per_s"), fleet_get(rows, base, "n:others_per_s")),
                      req, test, "%.2fx"))
        t.append(("hot key: first other job started after, ms (report), %s" % lbl, "from the workers' go",
                  fleet_get(rows, hk, "n:others_first_ms") or None, "(report)", None, "%.1f"))
    if t:
        target_table(w, t)
    if sched:
        w("Every `sched:` row: jobs/s (the hot rows: the others' jobs / time until they all ran), CPU per")
        w("job (workers + server, us), jobs/s against the same system's `plain` row, chute's jobs/s against")
        w("the row's, and the witness's verdict (the worst round).\n")
        w("| mix | system | config | jobs/s | CPU us/job | / own plain | chute / it | witness | rounds |")
        w("|---|---|---|---|---|---|---|---|---|")
        order = ["plain", "prio"] + sorted(m for m in sched if m.startswith("keys")) + ["hotbase", "hot"]
        for mix in [m for m in order if m in sched] + sorted(m for m in sched if m not in order):
            chute_k = next((k for (sysname, _), k in sched[mix].items() if sysname == "chute"), None)
            for (sysname, cfg), k in sorted(sched[mix].items()):
                rate = fleet_get(rows, k, "jobs_per_s")
                cpu = {r: a + b for r, a in fleet_get(rows, k, "n:cpu_worker_us").items()
                       for r2, b in fleet_get(rows, k, "n:cpu_server_us").items() if r2 == r}
                plain = sched.get("plain", {}).get((sysname, cfg))
                own = fleet_ratio(rate, fleet_get(rows, plain, "jobs_per_s")) if plain and mix not in ("plain", "hot", "hotbase") else None
                vs = fleet_ratio(fleet_get(rows, chute_k, "jobs_per_s"), rate) if chute_k and sysname != "chute" else None
                med = lambda d, f: f % statistics.median(d.values()) if d else "-"
                w("| %s | %s | %s | %s | %s | %s | %s | %s | %d |" % (
                    mix, SCHED_SYS.get(sysname, sysname), cfg, med(rate, "%.0f"), med(cpu, "%.0f"),
                    med(own or {}, "%.2fx"), med(vs or {}, "%.2fx"), verdict(rows, k), len(rows[k])))
        w("")
    return L


# ---------------------------------------------------------------- pressure (issue 24)

PRESSURE_BEGIN = "<!-- pressure (issue 24): bench/fleet/pressure.sh; kept across runs without BENCH_PRESSURE=1 -->"
PRESSURE_END = "<!-- end of the pressure section -->"
PRESSURE_CELLS = [("xmin", "a held xmin (one session idle in transaction, holding an XID)"),
                  ("readers", "four REPEATABLE READ readers scanning the queue's tables"),
                  ("high", "1.5x the baseline's offered load"),
                  ("kill", "pg_terminate_backend of the system's sessions, 3 times a second"),
                  ("idle", "300 idle connections held open"),
                  ("none", "no pressure (control)")]
PRESSURE_SHORT = {"xmin": "held xmin", "readers": "4 RR readers", "high": "1.5x load", "kill": "backend kills 3/s",
                  "idle": "300 idle connections", "none": "no pressure"}
PRESSURE_LABEL = {("chute", "-"): "chute", ("graphile-worker", "defaults"): "gw-defaults",
                  ("graphile-worker", "batched"): "gw-batched", ("pg-boss", "b1000-p05"): "pg-boss"}


def pressure_load(tsv):
    """cells[(label, cell)] = row dict (numbers as float where they parse), meta, order of labels."""
    cells, meta, order = {}, {}, []
    with open(tsv) as f:
        head = f.readline().rstrip("\n").split("\t")
        for line in f:
            v = line.rstrip("\n").split("\t")
            if v[0] == "meta":
                meta[v[1]] = v[2] if len(v) > 2 else ""
                continue
            r = dict(zip(head, v))
            for k, x in list(r.items()):
                n = fleet_num(x)
                if n is not None and k not in ("system", "config", "cell"):
                    r[k] = n
            lbl = PRESSURE_LABEL.get((r["system"], r["config"]), r["system"] + "-" + r["config"])
            if lbl not in order:
                order.append(lbl)
            cells[(lbl, r["cell"])] = r
    return cells, meta, order


def pressure_plot_data(seconds, plotdir, meta):
    """One file per cell and system: t handled/s p50 p99 depth dead MiB; and vars.gp."""
    os.makedirs(plotdir, exist_ok=True)
    files, cells, labels = {}, [], []
    with open(seconds) as f:
        head = f.readline().rstrip("\n").split("\t")
        for line in f:
            r = dict(zip(head, line.rstrip("\n").split("\t")))
            lbl = PRESSURE_LABEL.get((r["system"], r["config"]), r["system"] + "-" + r["config"])
            if r["cell"] not in cells:
                cells.append(r["cell"])
            if lbl not in labels:
                labels.append(lbl)
            key = (r["cell"], lbl)
            if key not in files:
                files[key] = open(os.path.join(plotdir, "%s.%s.dat" % key), "w")
            size = "-"
            if r["table_bytes"] != "-" and r["index_bytes"] != "-":
                size = "%.3f" % ((float(r["table_bytes"]) + float(r["index_bytes"])) / 2 ** 20)
            files[key].write(" ".join([r["t"], r["handled"], r["p50_ms"], r["p99_ms"], r["depth"], r["dead_tup"], size]) + "\n")
    for f in files.values():
        f.close()
    # A system with no seconds in a cell (it failed) still gets a file, so that the plot's loop runs.
    for c in cells:
        for lbl in labels:
            if (c, lbl) not in files:
                open(os.path.join(plotdir, "%s.%s.dat" % (c, lbl)), "w").write("0 - - - - - -\n")
    ph = dict(kv.split("=", 1) for kv in meta.get("phases", "").split() if "=" in kv)
    ps = float(ph.get("warm", 0)) + float(ph.get("base", 0))
    with open(os.path.join(plotdir, "vars.gp"), "w") as f:
        f.write('cells = "%s"\nsystems = "%s"\nps = %g\npe = %g\n' % (" ".join(cells), " ".join(labels), ps,
                                                                   ps + float(ph.get("stress", 0))))
        for i, c in enumerate(cells):
            f.write('t%d = "%s"\n' % (i + 1, PRESSURE_SHORT.get(c, c)))


def cmd_pressure(tsv, plotdir):
    cells, meta, order = pressure_load(tsv)
    seconds = tsv[:-4] + "-seconds.tsv" if tsv.endswith(".tsv") else tsv + "-seconds"
    if plotdir and os.path.exists(seconds):
        pressure_plot_data(seconds, plotdir, meta)
    L = []
    w = L.append
    fmt = lambda x, f: "-" if not isinstance(x, float) else f % x
    ph = meta.get("phases", "?")
    w("## Pressure: the fleet under the pressures that break PostgreSQL queues (issue 24)\n")
    w(PRESSURE_BEGIN)
    w("Written by `%s` on %s (bench/fleet/README.md, \"Pressure\"): chute %s, PostgreSQL %s in a throwaway\n"
      "cluster on this machine (%s cores, shared with other work), Node %s. Every cell in a fresh database: 2\n"
      "worker processes x 2 slots, a producer at %s jobs/s (one call of the system's single-job API per job),\n"
      "phases %s seconds (the pressure between the baseline and the recovery). Load average at the start\n"
      "%s, at the end %s; the run took %s s. `other %%` is the share of the machine's CPU that processes outside\n"
      "the measured system, its server and the harness took during the cell.\n"
      % (meta.get("command", "bench/fleet/pressure.sh"), meta.get("date", "?"), meta.get("chute", "?"),
         meta.get("postgres", "?"), meta.get("nproc", "?"), meta.get("node", "?"), meta.get("rate", "?"), ph,
         meta.get("load_start", "?"), meta.get("load_end", "?"), meta.get("seconds", "?")))
    w("![the pressure cells, per second](pressure.png)\n")
    w("Claim latency: submit call to the handler's start, wall clock, of each job's first run. Completed:\n"
      "every submitted job ran and the system's table holds no unfinished job at the end (drain: at most\n"
      "60 s after the producer stopped). Not run: submitted jobs no handler started by then. Recovered: the\n"
      "first second after the pressure's end from which the queue depth stays at or under the baseline's\n"
      "p99 depth x 1.2 (at least +2) for 10 s; `>N` when not within the N s the cell waited.\n")

    ch = [(c, cells.get(("chute", c))) for c, _ in PRESSURE_CELLS if ("chute", c) in cells]
    if ch:
        w("### Goals for chute\n")
        w("| goal | figure | met |")
        w("|---|---|---|")
        bad = [c for c, r in ch if r.get("completed_all") != "true"]
        w("| completes every cell | %s | %s |" % ("all %d cells" % len(ch) if not bad else "not: " + ", ".join(bad),
                                                  "yes" if not bad else "**no**"))
        lost = sum(r.get("lost", 0) + r.get("extra_runs", 0) for _, r in ch if isinstance(r.get("lost"), float))
        dup = sum(r.get("dup_runs", 0) for _, r in ch if isinstance(r.get("dup_runs"), float))
        w("| loses nothing (handler runs per ID against the submitted IDs) | %d not run, %d duplicate runs | %s |"
          % (lost, dup, "yes" if lost == 0 and not bad else "**no**"))
        x = cells.get(("chute", "xmin"))
        if x and isinstance(x.get("stress_p99"), float) and isinstance(x.get("clean_p99"), float):
            r = x["stress_p99"] / x["clean_p99"]
            w("| claim p99 under a held xmin within 2x its clean p99 | %.1f ms / %.1f ms = %.2fx | %s |"
              % (x["stress_p99"], x["clean_p99"], r, "yes" if r <= 2 else "**no**"))
        recs = [(c, r.get("recovery_s"), r.get("recover_window_s")) for c, r in ch]
        worst = max((v if isinstance(v, float) else 1e9) for _, v, _ in recs)
        txt = ", ".join("%s %s" % (c, fmt(v, "%.0f s") if isinstance(v, float) else ">%s s" % fmt(win, "%.0f"))
                        for c, v, win in recs)
        w("| recovers within 60 s of the pressure's end | %s | %s |" % (txt, "yes" if worst <= 60 else "**no**"))
        w("")

    w("### Every cell\n")
    w("| cell | system | completed | not run | dup runs | left | clean p50/p99 ms | pressure p50/p99 ms | p99 ratio | "
      "recovery s | handled/s base, pressure | max depth | dead tuples base, max | MiB base, max | worker exits | "
      "server us/job | other % |")
    w("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for c, what in PRESSURE_CELLS:
        for lbl in order:
            r = cells.get((lbl, c))
            if not r:
                continue
            if not isinstance(r.get("submitted"), float):
                w("| %s | %s | **failed**: %s |||||||||||||||" % (c, lbl, r.get("first_error", "?")))
                continue
            ratio = (r["stress_p99"] / r["clean_p99"]) if isinstance(r.get("stress_p99"), float) and \
                isinstance(r.get("clean_p99"), float) and r["clean_p99"] > 0 else None
            rec = fmt(r.get("recovery_s"), "%.0f") if isinstance(r.get("recovery_s"), float) \
                else ">%s" % fmt(r.get("recover_window_s"), "%.0f")
            mib = lambda b: fmt(b / 2 ** 20 if isinstance(b, float) else None, "%.1f")
            w("| %s | %s | %s | %d | %d | %s | %s / %s | %s / %s | %s | %s | %s, %s | %s | %s, %s | %s, %s | %d | %s | %s |" % (
                c, lbl, "yes" if r.get("completed_all") == "true" else "**no**", r["lost"] + r.get("extra_runs", 0),
                r["dup_runs"], fmt(r.get("left_in_db"), "%.0f"), fmt(r.get("clean_p50"), "%.1f"),
                fmt(r.get("clean_p99"), "%.1f"), fmt(r.get("stress_p50"), "%.1f"), fmt(r.get("stress_p99"), "%.1f"),
                "-" if ratio is None else "%.2fx" % ratio, rec, fmt(r.get("base_rate"), "%.0f"),
                fmt(r.get("stress_rate_handled"), "%.0f"), fmt(r.get("max_depth"), "%.0f"), fmt(r.get("base_dead"), "%.0f"),
                fmt(r.get("max_dead"), "%.0f"), mib(r.get("base_bytes")), mib(r.get("max_bytes")), r.get("worker_exits", 0),
                fmt(r.get("cpu_server_us"), "%.0f"), fmt(r.get("other_load_pct"), "%.0f")))
    w("")
    notes = [(lbl, c, r["first_error"]) for (lbl, c), r in cells.items() if r.get("first_error") not in (None, "", "-")]
    if notes:
        w("Errors the harness saw (the first of each cell): " + "; ".join("%s %s: %s" % n for n in notes) + ".\n")
    w(PRESSURE_END + "\n")
    return L


def pressure_into(md, section):
    """Put the pressure section into the RESULTS.md at md: in place of the one there, else before
    "## What limits chute now", else at the end."""
    text = open(md).read() if os.path.exists(md) else ""
    new = "\n".join(section)
    m = re.search(r"## Pressure: [^\n]*\n\n?" + re.escape(PRESSURE_BEGIN) + r".*?" + re.escape(PRESSURE_END) + r"\n",
                  text, re.S)
    if m:
        text = text[:m.start()] + new + text[m.end():]
    elif "## What limits chute now" in text:
        i = text.index("## What limits chute now")
        text = text[:i] + new + "\n" + text[i:]
    else:
        text += "\n" + new
    with open(md, "w") as f:
        f.write(text)


def kept_pressure(out):
    """The pressure section of an earlier RESULTS.md, when this run has none."""
    if not os.path.exists(out):
        return None
    m = re.search(r"## Pressure: [^\n]*\n\n?" + re.escape(PRESSURE_BEGIN) + r".*?" + re.escape(PRESSURE_END) + r"\n",
                  open(out).read(), re.S)
    return m.group(0).rstrip("\n").split("\n") if m else None


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "lat":
        cmd_lat(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 5 and sys.argv[1] == "md":
        cmd_md(sys.argv[2], sys.argv[3], sys.argv[4])
    elif len(sys.argv) == 3 and sys.argv[1] == "fleet":
        print("\n".join(cmd_fleet(sys.argv[2])))
    elif len(sys.argv) in (4, 5) and sys.argv[1] == "pressure":
        section = cmd_pressure(sys.argv[2], sys.argv[3])
        if len(sys.argv) == 5:
            pressure_into(sys.argv[4], section)
        print("\n".join(section))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
