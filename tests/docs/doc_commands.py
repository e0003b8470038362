#!/usr/bin/env python3
"""Run the commands and C examples of a README, so that the docs cannot rot.

usage: doc_commands.py --build DIR [--list] README.md
       doc_commands.py --build DIR --program README.md

Commands mode (the default) takes every fenced ```sh block of the README,
splits it into commands (a line, with its backslash continuations; a for,
while, until or if with its body) and runs them in order, one bash per
block (so a variable a block sets holds for its later lines), each command
checked for exit status 0. The commands run in a scratch folder that
mirrors the repository's top: every top-level entry is a symlink to the
tree, and build/ is a symlink to the build directory given, so the docs'
paths (tools/..., build/tools/subcirc, units/runtime.c) mean what they
mean from the top, while the files the commands write (run.json, q.json)
land in the scratch folder, never in the tree. What it does with the
README's other blocks:

  ```c      a complete program (it has a main): written to the scratch
            folder under the name its `file` marker gives, so that a
            command can compile it; --program compiles it against the
            build's headers and libsubcirc, runs it and compares what it
            prints with the README's `output` block after it.
            A `copy FILE` block must be FILE whole, byte for byte (a
            source shown entire, which the tests build from the tree).
            An `excerpt FILE` block: its lines must appear in FILE in
            order (blanks collapsed), so the excerpt follows the test it
            is cut from. A `fragment` block: every sc_/SC_ name in it
            must be declared in a header of the tree or the build.
            A C block without one of these fails the test.
  ```       with an `output` marker: the output the command block above
            it shows; every line must appear, in order, in what that
            block's commands printed (with `output, numbers vary`, after
            every number is replaced by # and blanks are collapsed).

Markers are HTML comments on the lines just above a block's opening fence
(markdown renders nothing of them), one directive each:

  <!-- doc-test: skip: REASON -->          the block is not run
  <!-- doc-test: skip PREFIX: REASON -->   its commands that start with
                                           PREFIX are not run
  <!-- doc-test: needs PROG... -->         run only when every PROG is in
                                           PATH (or, with a /, a file
                                           under the scratch top): else
                                           skipped, saying which is missing
  <!-- doc-test: env VAR=VALUE... -->      environment for the block
  <!-- doc-test: sub OLD -> NEW -->        run with OLD replaced by NEW
  <!-- doc-test: before COMMAND -->        run COMMAND (in the block's
                                           bash) before its commands
  <!-- doc-test: file NAME -->             (```c) write the block to NAME
  <!-- doc-test: copy FILE -->             (```c) see above
  <!-- doc-test: excerpt FILE -->          (```c) see above
  <!-- doc-test: fragment -->              (```c) see above
  <!-- doc-test: output -->                (```) see above
  <!-- doc-test: output of COMMAND -->     the block is exactly what
                                           COMMAND prints (a --help)

A command that is skipped and names a script or program of the tree
(tools/test, tools/run, tools/bench, ...) is still checked: it must exist
and be executable, and a bash script must parse (bash -n). Besides the
markers, SHORTEN below shortens the long runs every README shows (more
events, seeds or seconds than a test can afford); every substitution made
is printed. Exit status: 0 when every command ran and passed (skips named
with their reasons), 1 otherwise.
"""

import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Long runs, shortened wherever they appear (pattern -> replacement), and
# what is not run again inside a test: the build (the build directory
# given is built), ctest (the suite runs every test itself: -N lists those
# the filter picks, so a filter that picks none still fails).
SHORTEN = [
    (r"^tools/build build && ", ""),
    (r"\bctest --test-dir build\b", "ctest -N --test-dir build"),
    (r"--seconds \d+", "--seconds 1"),
    (r"--events \d{6,}(?![\d,])", "--events 20000"),
    (r"--seeds 1\.\.\d{2,}", "--seeds 1..2"),
    (r"(subcirc place)(?! --reps| --replot)",
     r"\1 --reps 1 --warmup 0 --time-per-case 0.02 --budgets 64"),
    (r"/tmp/", "tmp/"),
]

SHELL_LANGS = {"sh"}
WRONG_SHELL_LANGS = {"bash", "console", "shell", "shell-session", "zsh"}
# Every command runs with these: the benchmarks in their quick mode
# (bench/harness.c).
ENV = {"SC_BENCH_QUICK": "1"}
MARK = re.compile(r"^\s*<!--\s*doc-test:\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)```\s*([\w+-]*)\s*$")


class Block:
    def __init__(self, lang, line, text, marks):
        self.lang = lang
        self.line = line  # of the opening fence, 1-based
        self.text = text
        self.marks = marks

    def marked(self, word):
        return [m[len(word):].strip() for m in self.marks
                if m == word or m.startswith(word + " ")
                or m.startswith(word + ":") or m.startswith(word + ",")]


def parse(path):
    blocks = []
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        marks = []
        j = i - 1
        while j >= 0 and MARK.match(lines[j]):
            marks.insert(0, MARK.match(lines[j]).group(1))
            j -= 1
        indent = len(m.group(1))
        body = []
        k = i + 1
        while k < len(lines) and not re.match(r"^\s*```\s*$", lines[k]):
            body.append(lines[k][indent:] if lines[k][:indent].isspace()
                        else lines[k])
            k += 1
        blocks.append(Block(m.group(2), i + 1, "\n".join(body), marks))
        i = k + 1
    return blocks


def split_commands(text):
    """Logical commands: continuation lines joined, compound commands
    (for/while/until ... done, if ... fi, name() { ... }) kept whole;
    comment-only lines dropped."""
    cmds, cur, depth = [], [], 0
    opens = re.compile(
        r"(^\s*|[;&|]\s*|\bdo\s+|\bthen\s+)(for|while|until|if)\b")
    for raw in text.split("\n"):
        line = raw.rstrip()
        if not cur and (not line.strip() or line.strip().startswith("#")):
            continue
        cur.append(line)
        code = re.sub(r"(^|\s)#.*$", "", line)
        if code.endswith("\\"):
            continue
        depth += len(opens.findall(code))
        depth -= len(re.findall(r"(?:^|[;&|]|\s)(done|fi)\b", code))
        depth += code.count("{") - code.count("}") if "()" in code or depth else 0
        if depth <= 0:
            cmds.append("\n".join(cur))
            cur, depth = [], 0
    if cur:
        cmds.append("\n".join(cur))
    return cmds


def shorten(cmd, subs):
    notes = []
    for old, new in subs:
        pat = rf"(?<![\w.-]){re.escape(old)}(?![\w.])"
        if re.search(pat, cmd):
            cmd = re.sub(pat, lambda m: new, cmd)
            notes.append(f"'{old}' -> '{new}'")
    for pat, rep in SHORTEN:
        found = re.findall(pat, cmd)
        if found:
            new = re.sub(pat, rep, cmd)
            if new != cmd:
                notes.append(f"'{re.search(pat, cmd).group(0)}' -> "
                             f"'{re.sub(pat, rep, re.search(pat, cmd).group(0))}'")
                cmd = new
    return cmd, notes


def first_program(cmd):
    for word in cmd.split():
        if re.match(r"^[A-Za-z_]\w*=", word):
            continue
        return word
    return ""


def check_program(top, cmd):
    """A skipped command that names a file of the tree: it must exist, be
    executable and, for a bash script, parse."""
    prog = first_program(cmd)
    if "/" not in prog or prog.startswith("$"):
        return True, None
    path = os.path.join(top, prog)
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        return False, f"{prog}: not an executable file"
    with open(path, "rb") as f:
        head = f.readline()
    if b"bash" in head or head.startswith(b"#!/bin/sh"):
        r = subprocess.run(["bash", "-n", path], capture_output=True,
                           text=True)
        if r.returncode != 0:
            return False, f"{prog}: bash -n: {r.stderr.strip()}"
        return True, "exists, executable, bash -n clean"
    return True, "exists, executable"


def mirror(top, build):
    scratch = tempfile.mkdtemp(prefix="sc-doc-")
    for name in os.listdir(top):
        if name == "build":
            continue
        os.symlink(os.path.join(top, name), os.path.join(scratch, name))
    os.symlink(os.path.abspath(build), os.path.join(scratch, "build"))
    os.mkdir(os.path.join(scratch, "tmp"))
    return scratch


def normalize(line, numbers):
    if numbers:
        line = re.sub(r"\d+(\.\d+)?", "#", line)
    return " ".join(line.split())


def lines_in_order(want, got, numbers):
    got = [normalize(g, numbers) for g in got.split("\n")]
    i = 0
    for w in want.split("\n"):
        w = normalize(w, numbers)
        if not w:
            continue
        while i < len(got) and got[i] != w:
            i += 1
        if i == len(got):
            return w
        i += 1
    return None


def run_block(scratch, block, env, timeout, before):
    """Run the commands of one block in one bash; returns a list of
    (command, status, output) for those run, in order."""
    d = tempfile.mkdtemp(dir=scratch, prefix=".cmd-")
    script = ["set -o pipefail", f"cd {scratch}"]
    for i, cmd in enumerate(before):
        script.append(f"{{\n{cmd}\n}} >{d}/before{i}.out 2>&1 </dev/null "
                      f"|| {{ cat {d}/before{i}.out; echo 'doc-test: a "
                      f"before command failed'; exit 1; }}")
    for i, (cmd, _) in enumerate(block):
        out = os.path.join(d, f"{i}.out")
        script.append(f"__t=$EPOCHREALTIME; {{\n{cmd}\n}} >{out} 2>&1 "
                      f"</dev/null; __rc=$?; "
                      f"echo $__rc $__t $EPOCHREALTIME >{d}/{i}.rc; "
                      f"[ $__rc = 0 ] || exit 1")
    try:
        subprocess.run(["bash", "-c", "\n".join(script)], env=env,
                       timeout=timeout, cwd=scratch)
    except subprocess.TimeoutExpired:
        pass
    results = []
    for i, (cmd, _) in enumerate(block):
        rcf = os.path.join(d, f"{i}.rc")
        outf = os.path.join(d, f"{i}.out")
        out = open(outf, errors="replace").read() if os.path.exists(outf) \
            else ""
        if not os.path.exists(rcf):
            if os.path.exists(outf):
                results.append((cmd, f"timed out after {timeout} s", out,
                                timeout))
            break
        words = open(rcf).read().split() or ["1", "0", "0"]
        rc = int(words[0])
        secs = float(words[2]) - float(words[1])
        results.append((cmd, rc, out, secs))
        if rc != 0:
            break
    return results


def missing(scratch, needs):
    gone = []
    for prog in needs.split():
        if "/" in prog:
            if not os.path.exists(os.path.join(scratch, prog)):
                gone.append(prog)
        elif shutil.which(prog) is None:
            gone.append(prog)
    return gone


def write_files(scratch, blocks):
    for b in blocks:
        for name in b.marked("file"):
            with open(os.path.join(scratch, name), "w") as f:
                f.write(b.text + "\n")


def check_c_blocks(top, build, readme, blocks, failures):
    decl = None
    for b in blocks:
        if b.lang != "c":
            continue
        where = f"{readme}:{b.line}"
        if b.marked("copy"):
            src = b.marked("copy")[0]
            text = open(os.path.join(top, src), encoding="utf-8").read()
            if b.text + "\n" != text:
                diff = difflib.unified_diff(
                    text.splitlines(), b.text.splitlines(), src, where,
                    lineterm="", n=0)
                failures.append(f"{where}: not {src} whole:\n" +
                                "\n".join(list(diff)[:12]))
            else:
                print(f"ok   {where}: {src} whole")
        elif b.marked("excerpt"):
            src = b.marked("excerpt")[0]
            text = open(os.path.join(top, src), encoding="utf-8").read()
            miss = lines_in_order(b.text, text, False)
            if miss:
                failures.append(f"{where}: excerpt of {src}: '{miss}' is "
                                f"not there (in this order)")
            else:
                print(f"ok   {where}: excerpt, every line in {src}")
        elif b.marked("fragment"):
            if decl is None:
                decl = headers_text(top, build)
            names = sorted(set(re.findall(r"\b(?:sc|SC)_\w+", b.text)))
            unknown = [n for n in names if not re.search(rf"\b{n}\b", decl)]
            if unknown:
                failures.append(f"{where}: fragment names what no header "
                                f"declares: {', '.join(unknown)}")
            else:
                print(f"ok   {where}: fragment, its {len(names)} sc_ names "
                      f"declared")
        elif re.search(r"^\s*(int\s+)?main\s*\(", b.text, re.M) and \
                b.marked("file"):
            print(f"ok   {where}: a program, {b.marked('file')[0]} "
                  f"(--program compiles and runs it)")
        else:
            failures.append(f"{where}: a ```c block that is neither a "
                            f"complete program with a `file` marker, a "
                            f"`copy FILE`, an `excerpt FILE` nor a "
                            f"`fragment`")


def headers_text(top, build):
    parts = []
    for root in [top, build]:
        for dirpath, dirnames, files in os.walk(root):
            dirnames[:] = [d for d in dirnames
                           if not d.startswith((".", "build"))
                           and d not in ("CMakeFiles", "Testing")]
            for f in files:
                if f.endswith(".h"):
                    parts.append(open(os.path.join(dirpath, f),
                                      errors="replace").read())
    return "\n".join(parts)


def commands_mode(top, build, readme, list_only, timeout):
    blocks = parse(os.path.join(top, readme))
    failures, counts = [], {"run": 0, "shortened": 0, "skipped": 0}
    scratch = mirror(top, build)
    env = dict(os.environ)
    env.pop("MAKEFLAGS", None)
    env.update(ENV)
    write_files(scratch, blocks)
    check_c_blocks(top, build, readme, blocks, failures)
    last_outputs = None
    for b in blocks:
        where = f"{readme}:{b.line}"
        if b.lang in WRONG_SHELL_LANGS:
            failures.append(f"{where}: ```{b.lang}: the READMEs mark "
                            f"commands ```sh")
            continue
        if b.marked("output") and b.marked("output")[0].startswith("of "):
            cmd = b.marked("output")[0][3:].strip()
            counts["run"] += 1
            if list_only:
                print(f"list {where}: {cmd} (the block is its output)")
                continue
            r = subprocess.run(["bash", "-c", cmd], cwd=scratch, env=env,
                               capture_output=True, text=True,
                               timeout=timeout)
            got = (r.stdout + r.stderr).strip("\n")
            if r.returncode != 0 or got != b.text.strip("\n"):
                diff = "\n".join(difflib.unified_diff(
                    b.text.strip("\n").split("\n"), got.split("\n"),
                    "the README", cmd, lineterm=""))
                failures.append(f"{where}: the block is not what `{cmd}` "
                                f"prints (exit {r.returncode}):\n{diff}")
            else:
                print(f"ok   {where}: the block is what `{cmd}` prints")
            continue
        if b.lang == "" and b.marked("output"):
            numbers = "numbers vary" in b.marked("output")[0]
            if last_outputs is None:
                print(f"skip {where}: output of a block that did not run")
                continue
            miss = lines_in_order(b.text, last_outputs, numbers)
            if miss:
                failures.append(f"{where}: the output shown has '{miss}', "
                                f"which the commands above did not print "
                                f"(in this order):\n{last_outputs}")
            else:
                print(f"ok   {where}: the output shown matches"
                      + (" (numbers aside)" if numbers else ""))
            continue
        if b.lang not in SHELL_LANGS:
            continue
        last_outputs = None
        cmds = split_commands(b.text)
        skip_all = [m for m in b.marked("skip") if m.startswith(":")]
        skip_pre = []
        for m in b.marked("skip"):
            if not m.startswith(":"):
                pre, _, why = m.partition(": ")
                skip_pre.append((pre.strip(), why.strip()))
        needs = " ".join(b.marked("needs"))
        gone = missing(scratch, needs) if needs else []
        subs = [tuple(s.split(" -> ", 1)) for s in b.marked("sub")]
        benv = dict(env)
        for e in b.marked("env"):
            for kv in e.split():
                k, _, v = kv.partition("=")
                benv[k] = v
        todo = []
        for c in cmds:
            one = " ".join(c.split())
            why = None
            if skip_all:
                why = skip_all[0][1:].strip()
            for pre, w in skip_pre:
                if one.startswith(pre):
                    why = w
            if why is None and gone:
                why = f"needs {' '.join(gone)}, not here"
            if why is not None:
                counts["skipped"] += 1
                good, checked = check_program(scratch, c) if not gone \
                    else (True, None)
                if not good:
                    failures.append(f"{where}: {checked}")
                print(f"skip {where}: {one}\n       why: {why}"
                      + (f"\n       checked: {checked}" if checked else ""))
                continue
            run, notes = shorten(c, subs)
            if notes:
                counts["shortened"] += 1
            counts["run"] += 1
            todo.append((run, notes))
        if list_only or not todo:
            for run, notes in todo:
                print(f"list {where}: {' '.join(run.split())}"
                      + (f"\n       shortened: {', '.join(notes)}"
                         if notes else ""))
            continue
        before = b.marked("before")
        for c in before:
            print(f"     {where}: before: {c}")
        results = run_block(scratch, todo, benv, timeout, before)
        outs = []
        for (run, notes), res in zip(todo, results + [None] * len(todo)):
            one = " ".join(run.split())
            if res is None:
                failures.append(f"{where}: not run (an earlier command of "
                                f"the block failed): {one}")
                continue
            _, rc, out, secs = res
            outs.append(out)
            tag = "ok  " if rc == 0 else "FAIL"
            print(f"{tag} {where}: ({secs:.1f} s) {one}"
                  + (f"\n       shortened: {', '.join(notes)}"
                     if notes else ""))
            if rc != 0:
                tail = "\n".join(out.rstrip().split("\n")[-15:])
                failures.append(f"{where}: exit {rc}: {one}\n{tail}")
        last_outputs = "".join(outs)
    shutil.rmtree(scratch, ignore_errors=True)
    print(f"{readme}: {counts['run']} commands run "
          f"({counts['shortened']} of them shortened), "
          f"{counts['skipped']} skipped")
    return failures


def program_mode(top, build, readme):
    blocks = parse(os.path.join(top, readme))
    failures = []
    progs = [(i, b) for i, b in enumerate(blocks) if b.lang == "c"
             and re.search(r"^\s*(int\s+)?main\s*\(", b.text, re.M)]
    if not progs:
        return [f"{readme}: no C program (a ```c block with a main)"]
    scratch = tempfile.mkdtemp(prefix="sc-doc-prog-")
    cc = os.environ.get("CC", "cc")
    for i, b in progs:
        where = f"{readme}:{b.line}"
        name = (b.marked("file") or ["example.c"])[0]
        src = os.path.join(scratch, name)
        exe = os.path.join(scratch, os.path.splitext(name)[0])
        with open(src, "w") as f:
            f.write(b.text + "\n")
        lib = os.path.join(build, "libsubcirc.so")
        cmd = [cc, "-std=c11", "-Wall", "-Wextra", "-Werror", src,
               "-I" + os.path.join(build, "include"),
               "-I" + os.path.join(build, "include", "subcirc"),
               "-I" + top, lib, "-Wl,-rpath," + os.path.abspath(build),
               "-o", exe]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            failures.append(f"{where}: {' '.join(cmd)}\n{r.stderr}")
            continue
        r = subprocess.run([exe], capture_output=True, text=True,
                           timeout=60)
        print(f"{where}: {name} compiled against {lib}, ran: exit "
              f"{r.returncode}\n{r.stdout}{r.stderr}")
        if r.returncode != 0:
            failures.append(f"{where}: {name} exited {r.returncode}")
            continue
        shown = [o for o in blocks[i + 1:] if o.lang == ""
                 and o.marked("output")]
        if not shown:
            failures.append(f"{where}: no ``` block marked `output` after "
                            f"the program")
            continue
        numbers = "numbers vary" in shown[0].marked("output")[0]
        miss = lines_in_order(shown[0].text, r.stdout, numbers)
        if miss:
            failures.append(f"{readme}:{shown[0].line}: the README shows "
                            f"'{miss}', the program did not print it")
        else:
            print(f"ok   {readme}:{shown[0].line}: the output shown matches")
    shutil.rmtree(scratch, ignore_errors=True)
    return failures


def main():
    ap = argparse.ArgumentParser(
        description="Run a README's commands and C examples.")
    ap.add_argument("--build", required=True, help="the build directory")
    ap.add_argument("--list", action="store_true",
                    help="list what would run or be skipped, run nothing")
    ap.add_argument("--program", action="store_true",
                    help="compile and run the README's C programs")
    ap.add_argument("--timeout", type=int, default=300,
                    help="seconds for one block's commands (default 300)")
    ap.add_argument("readme", help="path from the top, e.g. tools/README.md")
    a = ap.parse_args()
    top = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    build = os.path.abspath(a.build)
    if a.program:
        failures = program_mode(top, build, a.readme)
    else:
        failures = commands_mode(top, build, a.readme, a.list, a.timeout)
    for f in failures:
        print(f"FAIL {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
