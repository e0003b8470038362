#!/usr/bin/env python3
"""bench/nexmark.py - every Nexmark query on the CLI's default stream.

Usage: bench/nexmark.py SUBCIRC [--quick] [--events N] [--queries q0,q4]
                        [--workers 1,2] [--margin N] [--no-callgrind]
                        [--scale] [--preload] [-- EXTRA ARGS]

For each query and worker count, one JSON line (bench/harness.h's
conventions: "unit", "better"):

  events_per_cpu_s  events over the CPU seconds of the whole process
                    (workers, the host and the generator's threads: the
                    input's cost is in the figure), the headline;
  events_per_s      events over wall seconds (moves with the load);
  sys_share         system time over CPU time (page faults, futexes);
  peak_rss_mib      the process's peak resident set;
  instr_per_event   callgrind's instructions per event at the margin:
                    (I(2n) - I(n)) / n for a short run of n events with
                    1 worker, so start-up cancels (n: --margin, 100,000;
                    20,000 with --quick); exact under any load;
  sustained_ips     instr_per_event x events_per_cpu_s: what this machine
                    retires per CPU second on this query;
  target, met       the standard-stream target of the query, 1 worker.

--scale is the scaling run for a many-core machine: 1, 2, 4, 8 and 16
workers (those above the machine's cores skipped), 1,000,000 events a run,
no callgrind: 105 runs, a few minutes in all. Every line of more than one
worker carries "speedup" (events/s over the same query's 1-worker run)
and "cpu_per_event_x" (CPU per event over the 1-worker run's; target
<= 1.1).

--preload passes `--preload` to every run (the input made before the
run's clock starts) and reads the figures from the run's report instead
of the whole process: events over the run's seconds and its CPU seconds
(the circuit's alone: no input is made during it), so no sys_share and
no target per query; a line of more than one worker then also gives the
speed-up's target (>= 1.8 on a quiet machine).

The runs use the CLI's defaults (the standard generator, its lateness,
the query's default placement), `--events N` and `--workers W`; EXTRA ARGS
go to every run. The load average is read before and after each run.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import time

QUERIES = ("q0 q1 q2 q3 q4 q5 q6 q7 q8 q9 q10 q11 q12 q13 q14 q15 q16 q17"
           " q18 q19 q20 q21 q22 q23".split())
# Events per CPU-second, 1 worker, standard generator and lateness.
TARGETS = {
    "q0": 2.0e6, "q1": 2.0e6, "q2": 2.0e6, "q3": 3.0e6, "q8": 3.0e6,
    "q4": 1.2e6, "q5": 0.8e6, "q7": 0.8e6, "q9": 0.6e6, "q18": 0.6e6,
    "q19": 0.6e6, "q20": 0.6e6,
    # The string functions' queries and q10 without its disk (no --sink):
    # 1.5M; joined ones: 0.5M.
    "q10": 1.5e6, "q14": 1.5e6, "q21": 1.5e6, "q22": 1.5e6,
    "q6": 0.5e6, "q23": 0.5e6,
    # The lookup join with the side input read once, and the windows of
    # processing time: 0.5M.
    "q13": 0.5e6, "q12": 0.5e6,
    # The per-day multi-aggregates (distinct counts among them): 0.5M.
    "q15": 0.5e6, "q16": 0.5e6, "q17": 0.5e6,
    # The session windows (every bidder's bids kept, no cleanup): 0.5M.
    "q11": 0.5e6,
}


def load():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def run(cmd):
    """Run cmd; return (wall s, user s, sys s, peak RSS KiB)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit("bench/nexmark.py: %s exited %d:\n%s"
                 % (" ".join(cmd), p.returncode, err))
    return wall, ru.ru_utime, ru.ru_stime, ru.ru_maxrss


def instructions(cmd, d):
    """Callgrind's total instructions for cmd (every thread)."""
    out = os.path.join(d, "cg.out")
    subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file="
                    + out] + cmd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    total = 0
    for name in os.listdir(d):
        if name.startswith("cg.out"):
            with open(os.path.join(d, name)) as f:
                for line in f:
                    m = re.match(r"(summary|totals):\s+(\d+)", line)
                    if m:
                        total += int(m.group(2))
                        break
            os.unlink(os.path.join(d, name))
    return total


def main(argv):
    exe, quick, events, queries = None, False, None, QUERIES
    workers, callgrind, extra, margin = [1], True, [], None
    scale, preload = False, False
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            extra = argv[i + 1:]
            break
        if a == "--quick":
            quick = True
        elif a == "--scale":
            scale = True
        elif a == "--preload":
            preload = True
        elif a == "--no-callgrind":
            callgrind = False
        elif a in ("--events", "--queries", "--workers", "--margin") and i + 1 < len(argv):
            i += 1
            v = argv[i]
            if a == "--events":
                events = int(v)
            elif a == "--margin":
                margin = int(v)
            elif a == "--queries":
                queries = v.split(",")
            else:
                workers = [int(w) for w in v.split(",")]
        elif exe is None:
            exe = a
        else:
            sys.exit("bench/nexmark.py: unknown argument '%s'" % a)
        i += 1
    if exe is None:
        sys.exit(__doc__)
    if scale:
        cores = os.cpu_count() or 1
        workers = [w for w in (1, 2, 4, 8, 16) if w <= cores]
        callgrind = False
        if events is None:
            events = 1_000_000
    if events is None:
        events = 1_000_000 if quick else 10_000_000
    if margin is None:
        margin = 20_000 if quick else 100_000
    if callgrind and subprocess.run(["sh", "-c", "command -v valgrind"],
                                    stdout=subprocess.DEVNULL).returncode:
        print("bench/nexmark.py: valgrind is not installed: no instruction "
              "counts (apt-get install valgrind)", file=sys.stderr)
        callgrind = False
    with tempfile.TemporaryDirectory() as d:
        for q in queries:
            ipe = None
            if callgrind:
                base = [exe, "run", "--workload", "nexmark", "--query", q,
                        "--workers", "1", "--quiet"] + extra
                i1 = instructions(base + ["--events", str(margin)], d)
                i2 = instructions(base + ["--events", str(2 * margin)], d)
                ipe = (i2 - i1) / margin
            one = None
            for w in workers:
                rep_path = os.path.join(d, "report.json")
                cmd = [exe, "run", "--workload", "nexmark", "--query", q,
                       "--workers", str(w), "--events", str(events),
                       "--quiet"] + extra
                if preload:
                    cmd += ["--preload", "--json", rep_path]
                before = load()
                wall, user, sys_s, rss = run(cmd)
                cpu = user + sys_s
                if preload:
                    with open(rep_path) as f:
                        r = json.load(f)["results"]
                    wall, cpu, sys_s = r["seconds"], r["cpu_s"], None
                eps_cpu = events / cpu if cpu > 0 else None
                line = {
                    "bench": "nexmark", "case": "%s, %d worker%s%s" % (
                        q, w, "" if w == 1 else "s",
                        ", preloaded" if preload else ""),
                    "preloaded": preload,
                    "query": q, "workers": w, "events": events,
                    "unit": "events per CPU-second", "better": "higher",
                    "events_per_cpu_s": round(eps_cpu) if eps_cpu else None,
                    "events_per_s": round(events / wall),
                    "cpu_s": round(cpu, 3), "sys_share": round(
                        sys_s / cpu, 3) if cpu > 0 and sys_s is not None
                    else None,
                    "peak_rss_mib": round(rss / 1024, 1),
                    "instr_per_event": round(ipe) if ipe else None,
                    "sustained_ips": round(ipe * eps_cpu) if ipe and eps_cpu
                    else None,
                    "load_before": before, "load_after": load(),
                    "command": " ".join(cmd[1:]),
                }
                if w == 1:
                    one = (events / wall, cpu)
                elif one:
                    line["speedup"] = round(events / wall / one[0], 2)
                    line["cpu_per_event_x"] = round(cpu / one[1], 2)
                    line["cpu_per_event_met"] = cpu / one[1] <= 1.1
                    if preload:
                        line["speedup_target"] = 1.8
                        line["speedup_met"] = events / wall / one[0] >= 1.8
                if w == 1 and q in TARGETS and not preload:
                    line["target"] = TARGETS[q]
                    line["met"] = bool(eps_cpu and eps_cpu >= TARGETS[q])
                print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
