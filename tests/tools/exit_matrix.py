#!/usr/bin/env python3
"""The signal and exit matrix of the subcirc CLI (tools/README.md,
"Arguments and exit codes"): every command ends with its documented exit
code, its summary on the right stream, and every output file either
complete and valid or absent (never a 0-byte file, never a temporary file
left behind).

usage: exit_matrix.py --build DIR GROUP
  GROUP: grid | nexmark | nexmark_threads | nexmark_preload | nexmark_sink |
  workload | place | stress |
  stress_workload (one ctest each)

For each command: SIGINT, SIGTERM and SIGHUP sent once the command has
started its work (its first progress line), SIGINT to a command started
with SIGINT ignored (a background job), the report on stdout ('-') cut
by a closed pipe, each output file on a full disk (/dev/full), and the
same file named by two outputs.
"""
import argparse
import csv
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time

FAILS = []


def fail(case, why):
    FAILS.append(f"{case}: {why}")
    print(f"FAIL {case}: {why}", flush=True)


def start(exe, args, cwd, ignore_int=False, stdout=subprocess.PIPE):
    def pre():
        if ignore_int:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
    return subprocess.Popen([exe] + args, cwd=cwd, stdout=stdout,
                            stderr=subprocess.PIPE, preexec_fn=pre)


def wait_marker(p, stream, marker, timeout=20.0):
    """Read stream until a line holds marker; returns what was read."""
    got = b""
    end = time.monotonic() + timeout
    fd = stream.fileno()
    while marker.encode() not in got:
        left = end - time.monotonic()
        if left <= 0 or p.poll() is not None:
            break
        r, _, _ = select.select([fd], [], [], left)
        if r:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            got += chunk
    return got


def finish(p, before_out=b"", before_err=b"", timeout=60):
    out, err = p.communicate(timeout=timeout)
    return p.returncode, (before_out + (out or b"")).decode(
        errors="replace"), (before_err + (err or b"")).decode(errors="replace")


def check_files(case, d):
    """Every file under d complete and valid; no 0-byte or temporary one."""
    for root, _, files in os.walk(d):
        for name in files:
            path = os.path.join(root, name)
            if name.endswith(".tmp"):
                fail(case, f"temporary file left: {path}")
                continue
            if os.path.getsize(path) == 0:
                fail(case, f"0-byte file left: {path}")
                continue
            try:
                if name.endswith(".json") or name.endswith(".trace"):
                    with open(path) as f:
                        json.load(f)
                elif name.endswith(".csv"):
                    check_csv(path)
            except (ValueError, csv.Error) as e:
                fail(case, f"{path} is not whole: {e}")


def check_csv(path):
    with open(path, newline="") as f:
        data = f.read()
    if not data.endswith("\n"):
        raise ValueError("the last row is cut")
    rows = list(csv.reader(data.splitlines()))
    if not rows or not rows[0]:
        raise ValueError("no header")
    for i, r in enumerate(rows[1:], 2):
        if len(r) != len(rows[0]):
            raise ValueError(f"row {i} has {len(r)} fields, header "
                             f"{len(rows[0])}")


def expect(case, rc, want_rc, text, needle, where):
    if rc != want_rc:
        fail(case, f"exit {rc}, want {want_rc}")
    if needle and needle not in text:
        fail(case, f"'{needle}' not on {where}")


def check_report(case, path, sig):
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        fail(case, f"{path}: {e}")
        return
    if d.get("interrupted") is not True or d.get("signal") != sig:
        fail(case, f"{path}: interrupted {d.get('interrupted')}, "
             f"signal {d.get('signal')}, want true, {sig}")


# What each command runs: its arguments for a long run (signals) and a
# short one (pipes, full disk); the files it can write; where its text
# and its progress go when no output is '-'; its signal exit code.
CMDS = {
    "grid": dict(long=["run", "--seconds", "20"],
                 short=["run", "--events", "20000"],
                 files=["--json", "--csv", "--trace"],
                 text="out", progress="out", marker="ev/s",
                 said="interrupted by"),
    "nexmark": dict(long=["run", "--workload", "nexmark", "--query", "q0",
                          "--seconds", "20"],
                    short=["run", "--workload", "nexmark", "--query", "q0",
                           "--events", "20000"],
                    files=["--json", "--csv", "--trace", "--dump"],
                    text="out", progress="out", marker="ev/s",
                    said="interrupted by"),
    # The generator on threads of its own: a signal or a closed pipe
    # stops the threads as it stops the host.
    "nexmark_threads": dict(long=["run", "--workload", "nexmark", "--query",
                                  "q0", "--input-threads", "2",
                                  "--seconds", "20"],
                            short=["run", "--workload", "nexmark", "--query",
                                   "q0", "--input-threads", "2",
                                   "--events", "20000"],
                            files=["--json", "--csv", "--trace"],
                            text="out", progress="out", marker="ev/s",
                            said="interrupted by"),
    # The input made before the run: a signal while it is made ends the
    # command as its end would (nothing submitted, the summary and files
    # for that).
    "nexmark_preload": dict(long=["run", "--workload", "nexmark", "--query",
                                  "q0", "--preload", "--events", "30000000"],
                            short=["run", "--workload", "nexmark", "--query",
                                   "q0", "--preload", "--events", "20000"],
                            files=["--json", "--csv", "--trace"],
                            text="out", progress="out", marker="ev/s",
                            said="interrupted by"),
    # q10's file sink: a signal ends the run with every partition of what
    # ran committed whole (no temporary file left).
    "nexmark_sink": dict(long=["run", "--workload", "nexmark", "--query",
                               "q10", "--rate", "100000", "--seconds", "20"],
                         short=["run", "--workload", "nexmark", "--query",
                                "q10", "--events", "20000"],
                         files=["--json", "--sink"],
                         text="out", progress="out", marker="ev/s",
                         said="interrupted by"),
    "workload": dict(long=["run", "--workload", "nexmark:q0",
                           "--seconds", "20"],
                     short=["run", "--workload", "nexmark:q0",
                            "--events", "20000"],
                     files=["--json"],
                     text="out", progress="out", marker="ev/s",
                     said="interrupted by"),
    "place": dict(long=["place", "--placements", "single,chains",
                        "--workers", "1", "--budgets", "64",
                        "--reps", "20", "--time-per-case", "0.3"],
                  short=["place", "--placements", "single", "--workers",
                         "1", "--budgets", "64", "--reps", "1",
                         "--time-per-case", "0.05", "--warmup", "0"],
                  files=["--json", "--csv"],
                  text="out", progress="err", marker="case",
                  said="interrupted by"),
    "stress": dict(long=["stress", "--seeds", "1..1000000"],
                   short=["stress", "--seeds", "1..3"],
                   files=["--json"],
                   text="out", progress="err", marker="cases",
                   said="interrupted by"),
    # stress on one workload of the interface (--workload).
    "stress_workload": dict(long=["stress", "--workload", "random",
                                  "--seeds", "1..1000000", "--steps", "64"],
                            short=["stress", "--workload", "random",
                                   "--seeds", "1..3", "--steps", "8"],
                            files=["--json"],
                            text="out", progress="err", marker="cases",
                            said="interrupted by"),
}


def file_args(opts, d):
    args = []
    for o in opts:
        if o in ("--dump", "--sink"):
            args += [o, os.path.join(d, o[2:])]
        else:
            ext = {"--json": "json", "--csv": "csv", "--trace": "trace"}[o]
            args += [o, os.path.join(d, f"out.{ext}")]
    return args


def signal_case(exe, name, c, sig, ignore_int=False, json_dash=False):
    case = f"{name} {sig.name}{' (SIGINT ignored)' if ignore_int else ''}"
    case += " --json -" if json_dash else ""
    with tempfile.TemporaryDirectory() as d:
        opts = [o for o in c["files"] if not (json_dash and o == "--json")]
        args = c["long"] + file_args(opts, d)
        if json_dash:
            args += ["--json", "-"]
        p = start(exe, args, d, ignore_int)
        prog = "err" if json_dash else c["progress"]
        stream = p.stderr if prog == "err" else p.stdout
        got = wait_marker(p, stream, c["marker"])
        if c["marker"].encode() not in got:
            p.kill()
            fail(case, "no progress line before the signal")
            p.communicate()
            return
        p.send_signal(sig)
        try:
            rc, out, err = finish(p, got if prog == "out" else b"",
                                  got if prog == "err" else b"")
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            fail(case, "did not end after the signal")
            return
        text = (err if json_dash or name in ("place", "stress",
                                             "stress_workload") else out)
        where = "stderr" if text is err else "stdout"
        expect(case, rc, 0, text, f"{c['said']} {sig.name}", where)
        if json_dash:
            try:
                d_ = json.loads(out)
                if d_.get("signal") != sig.name:
                    fail(case, f"stdout report signal {d_.get('signal')}")
            except ValueError as e:
                fail(case, f"stdout is not JSON: {e}")
        elif "--json" in opts:
            check_report(case, os.path.join(d, "out.json"), sig.name)
        check_files(case, d)


def pipe_case(exe, name, c, opt):
    """The output '-' (or the text alone) into a pipe closed at once."""
    case = f"{name} closed pipe {opt or 'text'}"
    with tempfile.TemporaryDirectory() as d:
        args = c["short"] + ([opt, "-"] if opt else [])
        r, w = os.pipe()
        os.close(r)
        p = start(exe, args, d, stdout=w)
        os.close(w)
        rc, _, err = finish(p)
        expect(case, rc, 3, err, "failed", "stderr")
        check_files(case, d)


def full_case(exe, name, c, opt):
    case = f"{name} {opt} /dev/full"
    with tempfile.TemporaryDirectory() as d:
        others = [o for o in c["files"] if o not in (opt, "--dump",
                                                      "--sink")]
        args = c["short"] + file_args(others, d) + [opt, "/dev/full"]
        p = start(exe, args, d)
        rc, _, err = finish(p)
        expect(case, rc, 3, err, "'/dev/full' failed", "stderr")
        check_files(case, d)


def same_case(exe, name, c, a, b, path_a="X", path_b="X", mkdir=None):
    case = f"{name} {a} {path_a} {b} {path_b}"
    with tempfile.TemporaryDirectory() as d:
        if mkdir:
            os.mkdir(os.path.join(d, mkdir))
        p = start(exe, c["short"] + [a, path_a, b, path_b], d)
        rc, _, err = finish(p)
        expect(case, rc, 2, err, a, "stderr")
        expect(case, rc, 2, err, b, "stderr")
        check_files(case, d)
        left = [f for f in os.listdir(d) if f != mkdir]
        if left:
            fail(case, f"files made although refused: {left}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("group", choices=sorted(CMDS))
    a = ap.parse_args()
    exe = os.path.join(os.path.abspath(a.build), "tools", "subcirc")
    name, c = a.group, CMDS[a.group]
    t0 = time.monotonic()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal_case(exe, name, c, sig)
    signal_case(exe, name, c, signal.SIGINT, ignore_int=True)
    if "--json" in c["files"]:
        signal_case(exe, name, c, signal.SIGTERM, json_dash=True)
    pipe_case(exe, name, c, None)
    folders = ("--dump", "--sink")
    for opt in c["files"]:
        if opt not in folders and opt != "--trace":
            pipe_case(exe, name, c, opt)
        if opt not in folders:
            full_case(exe, name, c, opt)
    files = [o for o in c["files"] if o not in folders]
    for i, x in enumerate(files):
        for y in files[i + 1:]:
            same_case(exe, name, c, x, y)
    if len(files) > 1:
        same_case(exe, name, c, files[0], files[1], "X", "./X")
    if "--dump" in c["files"]:
        same_case(exe, name, c, "--json", "--dump", "D/q0.csv", "D",
                  mkdir="D")
        same_case(exe, name, c, "--csv", "--dump", "D/bid.csv", "D",
                  mkdir="D")
    print(f"exit matrix {name}: {len(FAILS)} failures in "
          f"{time.monotonic() - t0:.1f} s")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
