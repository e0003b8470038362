#!/usr/bin/env python3
"""gen_sweep.py OUT.c HEADER... - the public API's contract sweep.

Reads the prototypes of the public headers given (CMake passes
SC_PUBLIC_HEADERS and, with MPI, SC_MPI_HEADERS, relative to the tree's top,
which is the working directory) and writes a Criterion suite, one Test per
header (api_sweep.<header>), whose cases call every function of that header
(tests/api/sweep.h says how):

  - once for each pointer argument, with that argument NULL: an int
    function must return SC_EINVAL (or the code the exception table below
    gives) and set sc_errmsg() to a message that names it; a function that
    returns a pointer must return NULL; any other must return;
  - once for each signed `int` argument (an id, a node, a count), with it
    -1, the pointers valid: an int function must return a negative code
    with a message that names it.

A new public function is swept by the next build without a new test. What
the contract allows instead (NULL that is documented as allowed, a negative
value that is in range) goes in EXCEPTIONS, each with the reason.
"""
import os
import re
import sys

# (function, argument) -> (want, reason). want: "anything" (NULL or the
# negative value is allowed by the header's contract: the call must only
# return), or an SC_E* name (the contract's code for that argument), or
# "skip" (the function is not called at all). An argument of "*" stands
# for every argument of the function.
A = "anything"
EXCEPTIONS = {
    # Format functions: a NULL format is printf's undefined behaviour, and
    # the arguments after it are the caller's to match.
    ("sc_errorf", "*"): ("skip", "printf-like: the format is the caller's"),
    # It aborts the process: that is its contract (operators/base.h).
    ("sc_assert_fail", "*"): ("skip", "reports a failed assertion, aborts"),
    # Blocking loops: worker -1 (the host) is valid, and they return only
    # at shutdown.
    ("sc_exec_work", "worker"): ("skip", "-1 is the host; runs until shutdown"),
    ("sc_exec_claim_blocking", "worker"): ("skip", "-1 is the host; waits"),
    # -1 is the host, the sim's free choice: SC_EEMPTY, nothing queued.
    ("sc_exec_claim", "worker"): (A, "-1 is the host"),
    ("sc_exec_steal", "thief"): (A, "-1 is the host"),
    # Negative values in range.
    ("sc_batch_scale", "k"): (A, "a negative factor negates"),
    ("sc_xsum_mean", "count"): (A, "a group of net negative weight"),
    # Optional pointers ("may be NULL", "NULL means ...").
    ("sc_batch_from_records", "weights"): (A, "NULL: every weight 1"),
    ("sc_distinct_step", "delta"): (A, "NULL means empty"),
    ("sc_join_step", "da"): (A, "NULL means empty"),
    ("sc_join_step", "db"): (A, "NULL means empty"),
    ("sc_antijoin_step", "da"): (A, "NULL means empty"),
    ("sc_antijoin_step", "db"): (A, "NULL means empty"),
    ("sc_graph_destroy", "g"): (A, "NULL is allowed (returns 0)"),
    ("sc_circuit_on_delta", "fn"): (A, "fn NULL removes the callback"),
    ("sc_runtime_on_delta", "fn"): (A, "fn NULL removes the callback"),
    ("sc_circuit_waterlines", "values"): (A, "values may be NULL"),
    ("sc_circuit_delta_waterline", "source"): (A, "source may be NULL"),
    ("sc_circuit_late", "admitted"): (A, "either pointer may be NULL"),
    ("sc_circuit_late", "refused"): (A, "either pointer may be NULL"),
    ("sc_runtime_late", "admitted"): (A, "either pointer may be NULL"),
    ("sc_runtime_late", "refused"): (A, "either pointer may be NULL"),
    ("sc_schema_init", "symbols"): (A, "symbols may be NULL"),
    ("sc_symtab_lookup", "len"): (A, "len may be NULL"),
    ("sc_trace_work", "done"): (A, "*done only if not NULL"),
    ("sc_batch_to_string", "s"): (A, "no schema: rows print as hex words"),
    ("sc_late_refuse", "name"): (A, "name may be NULL"),
    ("sc_late_submit", "name"): (A, "name may be NULL"),
    # who names the caller in the message: NULL names the function itself
    # (the sweep's row 1 of its one-row batch is refused as SC_EINVAL).
    ("sc_late_refuse", "who"): (A, "only named in a message"),
    ("sc_late_submit", "who"): (A, "only named in a message"),
    # Its messages name the caller given as `fn` (the graph call that
    # checks a spec), not itself.
    ("sc_topk_spec_check", "spec"): (A, "names the caller `fn`"),
    ("sc_multiagg_spec_check", "spec"): (A, "names the caller `who`"),
    ("sc_multiagg_spec_check", "who"): (A, "NULL names the function itself"),
    ("sc_multiagg_step", "delta"): (A, "NULL means empty"),
    ("sc_session_spec_check", "spec"): (A, "names the caller `who`"),
    ("sc_session_spec_check", "who"): (A, "NULL names the function itself"),
    ("sc_session_step", "delta"): (A, "NULL means empty"),
    ("sc_mpi_runtime_create", "opts"): (A, "opts may be NULL: defaults"),
    ("sc_exec_create", "opts"): (A, "opts may be NULL: the defaults"),
    ("sc_pool_create", "opts"): (A, "opts may be NULL: the defaults"),
    ("sc_timeline_create", "opts"): (A, "opts may be NULL: the defaults"),
    ("sc_watchdog_create", "opts"): (A, "opts may be NULL: the defaults"),
    ("sc_runtime_create", "opts"): (A, "opts may be NULL: the defaults"),
    ("sc_mpi_runtime_create", "lo"): (A, "NULL: the link's defaults"),
    ("sc_exec_destroy", "ex"): (A, "NULL is a no-op"),
    ("sc_pool_destroy", "pool"): (A, "NULL is a no-op"),
    ("sc_watchdog_destroy", "wd"): (A, "NULL is a no-op"),
    ("sc_exec_wait_idle", "first"): (A, "*first only if not NULL"),
    ("sc_pool_destroy", "first"): (A, "*first only if not NULL"),
    ("sc_runtime_wait_idle", "first"): (A, "*first only if not NULL"),
    ("sc_runtime_shutdown", "first"): (A, "*first only if not NULL"),
    ("sc_runtime_unit_stats", "name"): (A, "*name may be NULL"),
    ("sc_runtime_restart", "restarted"): (A, "*restarted may be NULL"),
    ("sc_runtime_tick", "closed"): (A, "*closed may be NULL"),
    ("sc_runtime_tick_try", "closed"): (A, "*closed may be NULL"),
    ("sc_wire_encode", "syms"): (A, "needed only for a symbol column"),
    ("sc_wire_rx_init", "syms"): (A, "may be NULL: no symbol frames"),
    # snprintf's convention: buf may be NULL when len is 0, and the
    # schema and row are read only as far as the text goes.
    ("sc_schema_format_row", "*"): (A, "snprintf-like, for messages"),
    # Value functions (a rank, a size, a name, a text into buf): no error
    # code to return; NULL reads as none.
    ("sc_mpi_link_rank", "l"): (A, "a value: -1 for none"),
    ("sc_mpi_link_size", "l"): (A, "a value: 0 for none"),
    ("sc_mpi_runtime_rank", "m"): (A, "a value: -1 for none"),
    ("sc_mpi_runtime_size", "m"): (A, "a value: 0 for none"),
    ("sc_placement_strategy", "p"): (A, "a name: a static string"),
    ("sc_sim_replay_line", "suite"): (A, "text into buf, which it returns"),
    ("sc_sim_replay_line", "test"): (A, "text into buf, which it returns"),
    ("sc_settle_replay_call", "p"): (A, "text into buf, which it returns"),
    ("sc_settle_replay_call", "opts"): (A, "text into buf, which it returns"),
}

# Arguments NULL by convention everywhere: a user's context pointer is
# handed back to the user's callback, never dereferenced by the library.
CTX_NAMES = {"ctx", "arg", "user", "cookie"}


def strip(text):
    """The header's declarations: no comments, no preprocessor lines, no
    bodies (of structs, enums, inline functions)."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"#ifdef __cplusplus.*?#endif", "", text, flags=re.S)
    text = re.sub(r"^\s*#(?:[^\n]*\\\n)*[^\n]*", "", text, flags=re.M)
    out, depth = [], 0
    for ch in text:
        if ch == "{":
            depth += 1
            if depth == 1:
                out.append("{}")
        elif ch == "}":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def plain_structs(texts):
    """struct names whose definition is in a public header."""
    names = set()
    for t in texts:
        names.update(re.findall(r"\bstruct\s+(sc_\w+)\s*\{", t))
    return names


def fn_typedefs(texts):
    """typedef names of function pointers (sc_map_fn ...)."""
    names = set()
    for t in texts:
        names.update(re.findall(r"typedef[^;]*?\(\s*\*\s*(\w+)\s*\)", t))
    return names


def split_args(args):
    parts, depth, cur = [], 0, ""
    for ch in args:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    parts.append(cur.strip())
    return [p for p in parts if p and p != "void"]


def prototypes(text):
    """(return type, name, [argument declarations]) of each extern
    function declared in a header."""
    res = []
    for stmt in strip(text).split(";"):
        st = " ".join(stmt.split())
        st = re.sub(r"__attribute__\s*\(\(.*\)\)\s*$", "", st).strip()
        m = re.match(r"^(?:extern\s+)?(.*?)\b(sc_\w+)\s*\((.*)\)$", st)
        if not m or "typedef" in st or "{}" in st:
            continue
        ret = m.group(1).replace("SC_NORETURN", "").strip()
        if "static" in ret or "(" in ret:
            continue
        res.append((ret, m.group(2), split_args(m.group(3))))
    return res


def arg_of(decl, i):
    """(kind, C type, name) of one argument. kind: ptr, fn, int, sint,
    float, bool, enum, varargs."""
    if decl == "...":
        return ("varargs", None, "...")
    m = re.match(r"^(.*)\(\s*\*\s*(\w+)\s*\)\s*\(.*\)$", decl)
    if m:
        return ("fn", None, m.group(2))
    m = re.match(r"^(.*?)\s*\b(\w+)$", decl)
    ctype, name = (m.group(1), m.group(2)) if m else (decl, "arg%d" % i)
    if not ctype:  # an unnamed argument
        ctype, name = decl, "arg%d" % i
    return (classify(ctype), ctype.strip(), name)


FN_TYPEDEFS = set()


def classify(ctype):
    bare = ctype.replace("const", "").strip()
    if "*" in ctype:
        return "ptr"
    if bare in FN_TYPEDEFS:
        return "fn"
    if bare in ("int", "int32_t", "int64_t"):
        return "sint"
    if bare in ("double", "float"):
        return "float"
    if bare == "bool":
        return "bool"
    if bare.startswith("enum "):
        return "enum"
    return "int"


def norm(ctype):
    t = re.sub(r"\bconst\b", "", ctype)
    t = re.sub(r"\s+", " ", t).strip()
    return re.sub(r"\s*\*\s*", "*", t)


def exception(fn, param):
    return EXCEPTIONS.get((fn, param)) or EXCEPTIONS.get((fn, "*"))


def gen_function(ret, fn, args, plain, idx):
    """The C function that calls `fn` for one case, and its cases."""
    kinds = [arg_of(a, i) for i, a in enumerate(args)]
    if any(k == "varargs" for k, _, _ in kinds):
        return None, []
    ex = exception(fn, "*")
    if (ex and ex[0] == "skip") or fn.startswith("sc__"):
        # sc__ names are the library's own, exported for its layers:
        # no contract with a user.
        return None, []
    lines = ["static void", "call_%d(const struct sw_case *c)" % idx, "{"]
    for i, (kind, ctype, name) in enumerate(kinds):
        if kind == "ptr":
            t = norm(ctype)
            m = re.match(r"^struct (\w+)\*$", t)
            is_plain = bool(m and m.group(1) in plain)
            lines.append(
                "\t%s a%d = c->null_arg == %d ? NULL : (%s)sw_ptr(\"%s\", "
                "%s, %s);" % (ctype, i, i, ctype, t,
                              "true" if "const" in ctype else "false",
                              "true" if is_plain else "false"))
        elif kind == "fn":
            pass  # a callback: NULL in every case (see the call)
        elif kind == "sint":
            lines.append("\t%s a%d = c->neg_arg == %d ? -1 : 0;" %
                         (ctype, i, i))
        elif kind == "float":
            lines.append("\t%s a%d = 0;" % (ctype, i))
        elif kind == "bool":
            lines.append("\tbool a%d = false;" % i)
        elif kind == "enum":
            lines.append("\t%s a%d = (%s)0;" % (ctype, i, ctype))
        else:  # unsigned: a count or width of 1, a timeout of 1 ns
            lines.append("\t%s a%d = 1;" % (ctype, i))
    call = "%s(%s)" % (fn, ", ".join(
        "NULL" if k == "fn" else "a%d" % i
        for i, (k, _, _) in enumerate(kinds)))
    lines.append("\tsc_error_clear();")
    r = ret.strip()
    if r == "int":
        lines.append("\tsw_check_int(c, %s);" % call)
    elif r.endswith("*"):
        lines.append("\tsw_check_ptr(c, %s);" % call)
    elif r == "void":
        lines.append("\t%s;" % call)
        lines.append("\tsw_check_none(c);")
    else:
        lines.append("\t(void)%s;" % call)
        lines.append("\tsw_check_none(c);")
    lines.append("}")

    cases = []
    for i, (kind, ctype, name) in enumerate(kinds):
        null = kind in ("ptr", "fn")
        neg = kind == "sint" and r == "int"
        if not (null or neg):
            continue
        ex = exception(fn, name)
        if ex and ex[0] == "skip":
            continue
        if ex:
            want = ("SW_WANT_ANYTHING", "0") if ex[0] == "anything" \
                else ("SW_WANT_CODE", ex[0])
        elif null and (name in CTX_NAMES and "void" in (ctype or "")):
            want = ("SW_WANT_ANYTHING", "0")
        elif kind == "fn":
            want = ("SW_WANT_ERROR", "0")
        elif null:
            want = ("SW_WANT_CODE", "SC_EINVAL")
        else:
            want = ("SW_WANT_ERROR", "0")
        cases.append("\t{\"%s\", \"%s\", %d, %d, %s, %s, call_%d}," %
                     (fn, name, i if null else -1, -1 if null else i,
                      want[0], want[1], idx))
    if not cases:  # no pointer, no signed argument: nothing to sweep
        return "", []
    return "\n".join(lines), cases


def main():
    out, headers = sys.argv[1], sys.argv[2:]
    texts = {h: open(h).read() for h in headers}
    plain = plain_structs(texts.values())
    FN_TYPEDEFS.update(fn_typedefs(texts.values()))
    body, tests = [], []
    idx = nfn = ncase = nskip = nnone = 0
    for h in headers:
        cases = []
        for ret, fn, args in prototypes(texts[h]):
            code, cs = gen_function(ret, fn, args, plain, idx)
            idx += 1
            if code is None:
                nskip += 1
                continue
            if not cs:
                nnone += 1
                continue
            nfn += 1
            ncase += len(cs)
            body.append(code)
            cases.extend(cs)
        tname = re.sub(r"\W", "_", h)
        tests.append((h, tname, cases))
    summary = ("%d functions swept in %d cases; %d without a pointer or "
               "signed argument; %d skipped (EXCEPTIONS)"
               % (nfn, ncase, nnone, nskip))
    with open(out + ".tmp", "w") as f:
        f.write("/* Generated by tests/api/gen_sweep.py from the public "
                "headers: do not edit.\n * %s */\n" % summary)
        f.write("#include <criterion/criterion.h>\n#include <stdbool.h>\n"
                "#include <stdio.h>\n\n#include \"tests/api/sweep.h\"\n")
        for h in headers:
            f.write("#include \"%s\"\n" % h)
        f.write("\n")
        f.write("\n\n".join(body))
        f.write("\n")
        for h, tname, cases in tests:
            f.write("\nstatic const struct sw_case cases_%s[] = {\n" % tname)
            f.write("\n".join(cases) if cases else
                    "\t{\"\", \"\", -1, -1, SW_WANT_ANYTHING, 0, NULL},")
            f.write("\n};\n\nTest(api_sweep, %s)\n{\n" % tname)
            f.write("\tsize_t n = %d;\n" % len(cases))
            f.write("\tsize_t bad = sw_run(cases_%s, n);\n\n" % tname)
            f.write("\t(void)printf(\"%s: %%zu cases, %%zu failed\\n\", n, "
                    "bad);\n" % h)
            f.write("\tcr_assert_eq(bad, 0, \"%%zu of %%zu cases of %s "
                    "failed (stderr names them)\", bad, n);\n}\n" % h)
    os.replace(out + ".tmp", out)
    print("gen_sweep: " + summary)


if __name__ == "__main__":
    main()
