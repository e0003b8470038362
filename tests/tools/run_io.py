#!/usr/bin/env python3
"""CSV in and out of `subcirc run --workload SPEC` (tools/cli_io.h), one
case per ctest test: run_io.py SUBCIRC COUNTER_SO RUNNING_SO CASE.

COUNTER_SO is tests/tools/plugin_counter.c (input "keys", one i64 column;
outputs "all_keys", the keys with their counts, and "distinct_keys");
RUNNING_SO is the tick example tests/examples/running.c (input
"transfers": account, amount; outputs "balance" and "opening").

Each case states what it checks; every run has a time limit, so a hang is
a failure rather than a stuck suite.
"""
import collections
import os
import select
import signal
import subprocess
import sys
import tempfile
import time

LIMIT_S = 60


def run(args, **kw):
    p = subprocess.run([EXE] + args, capture_output=True, text=True,
                       timeout=LIMIT_S, **kw)
    print("$ subcirc", " ".join(args))
    print(p.stdout, p.stderr, "exit", p.returncode, sep="\n")
    return p


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def rows_of(path_or_text, is_text=False):
    """The CSV's rows after its header, as {row tuple: summed weight}."""
    text = path_or_text if is_text else open(path_or_text).read()
    lines = text.splitlines()
    assert lines and lines[0].endswith("weight"), lines[:1]
    out = collections.Counter()
    for ln in lines[1:]:
        *cols, w = ln.split(",")
        out[tuple(int(c) for c in cols)] += int(w)
    return {k: v for k, v in out.items() if v}


def keys_csv(d, keys, weights=None):
    body = "c1,weight\n" if weights else "c1\n"
    for i, k in enumerate(keys):
        body += f"{k},{weights[i]}\n" if weights else f"{k}\n"
    return write(os.path.join(d, "keys.csv"), body)


def expect(cond, what):
    if not cond:
        print("FAILED:", what)
        sys.exit(1)


def case_stream_output_adds_up_to_the_input(d):
    """Every step's change of all_keys, summed per key, is the input's
    weights summed per key; the run checks equal to the single circuit."""
    keys = [(i * 37) % 23 for i in range(500)]
    ws = [1 if i % 5 else -1 for i in range(500)]
    inp = keys_csv(d, keys, ws)
    out = os.path.join(d, "all.csv")
    p = run(["run", "--workload", COUNTER, "--workers", "2", "--check",
             "--batch-rows", "64", "--input", f"keys={inp}",
             "--output", f"all_keys={out}", "--quiet"])
    expect(p.returncode == 0, "exit 0")
    expect("every output equals the single circuit" in p.stdout, "check ok")
    expect("(the inputs' end)" in p.stdout, "stopped at the inputs' end")
    want = collections.Counter()
    for k, w in zip(keys, ws):
        want[(k,)] += w
    want = {k: v for k, v in want.items() if v}
    expect(rows_of(out) == want, f"stream sums {rows_of(out)} == {want}")


def case_integral_output_holds_the_final_rows(d):
    """--integral writes each row once with its multiplicity."""
    inp = keys_csv(d, [3, 1, 3, 3, 2, 1], [1, 1, 1, 1, 1, -1])
    out = os.path.join(d, "all.csv")
    p = run(["run", "--workload", COUNTER, "--workers", "2", "--input",
             f"keys={inp}", "--output", f"all_keys={out}", "--integral",
             "--quiet"])
    expect(p.returncode == 0, "exit 0")
    lines = open(out).read().splitlines()
    expect(lines == ["c1,weight", "2,1", "3,3"], f"integral lines {lines}")


def case_bad_row_names_file_line_column_and_keeps_the_rows_before(d):
    """A bad field stops the run, exit 2, naming file:line:column; the
    rows before it settled and are in the output."""
    inp = write(os.path.join(d, "bad.csv"), "c1\n1\n2\n2\n7x\n5\n")
    out = os.path.join(d, "all.csv")
    p = run(["run", "--workload", COUNTER, "--workers", "2", "--input",
             f"keys={inp}", "--output", f"all_keys={out}", "--integral",
             "--quiet"])
    expect(p.returncode == 2, "exit 2")
    expect(f"{inp}:5:1:" in p.stderr, "names file:5:1")
    expect("(a bad input row)" in p.stdout, "summary says where it stopped")
    expect(rows_of(out) == {(1,): 1, (2,): 2}, f"rows before: {rows_of(out)}")


def case_short_line_is_refused_by_line(d):
    """A record with fewer fields than the header is refused by line."""
    inp = write(os.path.join(d, "short.csv"),
                "c1,c2\n1,5\n2\n")
    p = run(["run", "--workload", RUNNING, "--input",
             f"transfers={inp}", "--quiet"])
    expect(p.returncode == 2, "exit 2")
    expect(f"{inp}:3:" in p.stderr, "names line 3")


def case_unknown_input_name_is_refused_listing_the_inputs(d):
    inp = keys_csv(d, [1])
    p = run(["run", "--workload", COUNTER, "--input", f"nokeys={inp}"])
    expect(p.returncode == 2, "exit 2")
    expect("nokeys" in p.stderr and "keys" in p.stderr.split("nokeys", 1)[1],
           "names the wrong input and lists the graph's")


def case_unknown_output_name_is_refused(d):
    p = run(["run", "--workload", COUNTER, "--output",
             f"no_out={os.path.join(d, 'o.csv')}"])
    expect(p.returncode == 2 and "no_out" in p.stderr, "exit 2 naming it")
    expect(not os.path.exists(os.path.join(d, "o.csv")), "no file left")


def case_missing_input_file_is_refused(d):
    missing = os.path.join(d, "missing.csv")
    p = run(["run", "--workload", COUNTER, "--input", f"keys={missing}"])
    expect(p.returncode == 2, "exit 2")
    expect(missing in p.stderr and "No such file" in p.stderr,
           "names the file and the reason")


def case_directory_input_is_refused(d):
    p = run(["run", "--workload", COUNTER, "--input", f"keys={d}"])
    expect(p.returncode == 2, "exit 2")
    expect("directory" in p.stderr, "says it is a directory")


def case_fifo_closing_mid_line_keeps_the_rows_before(d):
    """A FIFO whose writer stops in the middle of a line: the whole lines
    before it run; the cut line is refused by line, exit 2."""
    fifo = os.path.join(d, "in.fifo")
    os.mkfifo(fifo)
    out = os.path.join(d, "all.csv")
    p = subprocess.Popen([EXE, "run", "--workload", COUNTER, "--input",
                          f"keys={fifo}", "--output", f"all_keys={out}",
                          "--integral", "--quiet"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    with open(fifo, "w") as w:
        w.write("c1\n4\n4\n9")
    so, se = p.communicate(timeout=LIMIT_S)
    print(so, se, "exit", p.returncode)
    expect(p.returncode == 2, "exit 2")
    expect(f"{fifo}:4:" in se, "names line 4")
    expect(rows_of(out) == {(4,): 2}, f"rows before: {rows_of(out)}")


def wait_line(stream, deadline):
    """One line from stream, or None once the deadline passed."""
    while time.monotonic() < deadline:
        r, _, _ = select.select([stream], [], [], 0.2)
        if r:
            return stream.readline()
    return None


def case_pipe_output_appears_before_the_writer_closes(d):
    """A pipe is a live source: rows written to stdin come out of the
    output on stdout while the writer still holds the pipe open."""
    p = subprocess.Popen([EXE, "run", "--workload", COUNTER, "--workers",
                          "2", "--input", "keys=-", "--output",
                          "all_keys=-", "--quiet"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, bufsize=1)
    try:
        p.stdin.write("c1\n11\n")
        p.stdin.flush()
        deadline = time.monotonic() + 30
        got = [wait_line(p.stdout, deadline), wait_line(p.stdout, deadline)]
        expect(got == ["c1,weight\n", "11,1\n"],
               f"header and the first row before the close: {got}")
        expect(p.poll() is None, "still running: the pipe is open")
        p.stdin.write("12\n")
        p.stdin.flush()
        got = wait_line(p.stdout, deadline)
        expect(got == "12,1\n", f"the second row, as it came: {got}")
        p.stdin.close()
        rest, err = p.stdout.read(), p.stderr.read()
        p.wait(timeout=LIMIT_S)
        print(rest, err, "exit", p.returncode)
        expect(p.returncode == 0, "exit 0 at the pipe's end")
        expect("(the inputs' end)" in err, "the summary on stderr")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def case_sigint_while_reading_a_pipe_settles_what_came(d):
    """SIGINT while the pipe is still open: what came is written, the
    summary says interrupted, exit 0."""
    p = subprocess.Popen([EXE, "run", "--workload", COUNTER, "--input",
                          "keys=-", "--output", "all_keys=-", "--quiet"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, bufsize=1)
    try:
        p.stdin.write("c1\n8\n8\n")
        p.stdin.flush()
        deadline = time.monotonic() + 30
        got = [wait_line(p.stdout, deadline), wait_line(p.stdout, deadline)]
        expect(got == ["c1,weight\n", "8,2\n"], f"what came: {got}")
        p.send_signal(signal.SIGINT)
        so, se = p.communicate(timeout=LIMIT_S)
        print(so, se, "exit", p.returncode)
        expect(p.returncode == 0, "exit 0")
        expect("interrupted by SIGINT" in se, "says interrupted")
        expect(so == "", f"nothing more came: {so!r}")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def case_output_to_a_full_disk_is_a_library_error(d):
    inp = keys_csv(d, [1, 2])
    p = run(["run", "--workload", COUNTER, "--input", f"keys={inp}",
             "--output", "all_keys=/dev/full", "--quiet"])
    expect(p.returncode == 3, "exit 3")
    expect("/dev/full" in p.stderr, "names the file")


def case_closed_pipe_on_the_output_stops_the_run(d):
    """A reader that closes the output's pipe ends an endless run at once,
    exit 3, naming standard output and the system's reason."""
    p = subprocess.Popen([EXE, "run", "--workload", COUNTER,
                          "--workload-arg", "steps=0", "--seconds", "60",
                          "--output", "all_keys=-", "--quiet"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    first = wait_line(p.stdout, time.monotonic() + 30)
    p.stdout.close()
    t0 = time.monotonic()
    try:
        err = p.stderr.read()
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    print(first, err, "exit", p.returncode, f"{time.monotonic() - t0:.1f} s")
    expect(first == "c1,weight\n", f"the header came first: {first!r}")
    expect(p.returncode == 3, "exit 3")
    expect("writing standard output failed: Broken pipe" in err, "says why")


def case_tick_workload_closes_a_tick_per_submission(d):
    """A tick workload fed from CSV: each submission its own tick, checked
    equal to the single circuit stepped per tick."""
    body = "c1,c2\n" + "".join(f"{i % 4},{i * 3 - 50}\n" for i in range(40))
    inp = write(os.path.join(d, "tr.csv"), body)
    out = os.path.join(d, "bal.csv")
    p = run(["run", "--workload", RUNNING, "--workers", "2", "--check",
             "--batch-rows", "10", "--input", f"transfers={inp}",
             "--output", f"balance={out}", "--integral", "--quiet"])
    expect(p.returncode == 0, "exit 0")
    expect("ticks 4" in p.stdout, "one tick a submission of 10 rows")
    expect("every output equals the single circuit" in p.stdout, "check")
    want = collections.Counter()
    for i in range(40):
        want[i % 4] += i * 3 - 50
    expect(rows_of(out) == {(a, v): 1 for a, v in want.items()},
           f"balances {rows_of(out)}")


if __name__ == "__main__":
    EXE, COUNTER, RUNNING, name = sys.argv[1:5]
    fn = globals().get("case_" + name)
    if not fn:
        sys.exit(f"run_io.py: no case '{name}'")
    with tempfile.TemporaryDirectory() as tmp:
        fn(tmp)
    print("ok")
