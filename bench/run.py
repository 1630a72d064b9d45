#!/usr/bin/env python3
"""kasava's speed and memory benchmark: the figures of issue 4 for one repository.

usage: bench/run.py REPO [--binary build/kasava] [--parse-limit build/bench/parse_limit]
       bench/run.py --synthetic DIR [--files 10000] [--functions 10]
                                                 (generates DIR once, then measures it)

Prints a table, then the same figures as one JSON line. See bench/README.md for what each
figure means. Every process is timed from the outside (process start included); peak RSS is
each child's own ru_maxrss (os.wait4), not the benchmark's.
"""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# 50 different questions of the kind people ask a code base; all lexical today.
QUERIES = [
    "open the index file", "parse configuration file", "http request handler", "read all bytes",
    "write buffer to file", "error handling for timeouts", "retry with backoff", "compare strings",
    "hash table lookup", "sort a list", "create temporary directory", "encode json", "decode base64",
    "tokenize input", "connection pool", "close the socket", "lock mutex", "thread start",
    "format date and time", "environment variable", "command line arguments", "logging setup",
    "unicode normalization", "regular expression match", "walk directory tree", "compress data",
    "checksum crc32", "random number generator", "signal handler", "process exit code",
    "memory allocation", "garbage collector", "test helper", "benchmark timer", "url parsing",
    "cookie jar", "tls certificate verify", "dns lookup", "path join", "file permissions",
    "read line from stdin", "iterate over map", "binary search", "linked list node", "cache eviction",
    "schedule task", "cancel context", "stack trace", "version string", "deprecated function",
]


def run_measured(argv, cwd=None):
    """Runs argv; returns (seconds, its own peak RSS in MiB via wait4, stdout, stderr, exit code)."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return seconds, usage.ru_maxrss / 1024, out.read().decode(), err.read().decode(), proc.returncode


def percentile(values, fraction):
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, int(round(fraction * (len(ordered) - 1)))))
    return ordered[index]


# --- synthetic repository ---------------------------------------------------------------------

WORDS = ("buffer cache index token parse render query store fetch merge split scan match "
         "encode decode frame packet stream socket client server session config option value "
         "record entry table column layout widget event signal handler worker thread queue lock "
         "timer clock budget limit range window vector matrix graph node edge path route filter "
         "sort search rank score weight model batch commit rollback journal snapshot segment "
         "block page file folder archive image pixel color font glyph shape point line circle").split()


def name(rng, parts=2, camel=False):
    words = [rng.choice(WORDS) for _ in range(parts)]
    if camel:
        return words[0] + "".join(w.capitalize() for w in words[1:])
    return "_".join(words)


def python_file(rng, functions):
    out = [f'"""Module for {name(rng, 3).replace("_", " ")}."""', "import os", ""]
    for _ in range(functions):
        fn, a, b = name(rng), name(rng, 1), name(rng, 1) + "_count"
        out += ["", f"def {fn}({a}, {b}=3):", f'    """Return the {a} {name(rng, 2).replace("_", " ")}."""',
                f"    total = 0", f"    for item in range({b}):",
                f"        total += len(str({a})) + item", f"        if total > {rng.randint(10, 999)}:",
                f"            return {name(rng, 1)}_{name(rng, 1)}(total)", f"    return total", ""]
    return "\n".join(out) + "\n"


def go_file(rng, functions):
    out = [f"// Package {name(rng, 1)} handles {name(rng, 2).replace('_', ' ')}.", "package synth", ""]
    for _ in range(functions):
        fn, a = name(rng, 2, camel=True), name(rng, 1)
        out += [f"// {fn.capitalize()} computes the {name(rng, 2).replace('_', ' ')}.",
                f"func {fn.capitalize()}({a} []byte, limit int) (int, error) {{",
                f"\ttotal := 0", f"\tfor i := 0; i < limit; i++ {{",
                f"\t\ttotal += len({a}) + i", f"\t\tif total > {rng.randint(10, 999)} {{",
                f"\t\t\treturn {name(rng, 2, camel=True)}(total), nil", "\t\t}", "\t}",
                "\treturn total, nil", "}", ""]
    return "\n".join(out) + "\n"


def c_file(rng, functions):
    out = ["#include <stdio.h>", "#include <string.h>", ""]
    for _ in range(functions):
        fn, a = name(rng, 2), name(rng, 1)
        out += [f"/* {fn}: the {name(rng, 2).replace('_', ' ')} of {a}. */",
                f"int {fn}(const char *{a}, int limit) {{", "  int total = 0;",
                "  for (int i = 0; i < limit; i++) {", f"    total += (int)strlen({a}) + i;",
                f"    if (total > {rng.randint(10, 999)}) return {name(rng, 2)}(total);", "  }",
                "  return total;", "}", ""]
    return "\n".join(out) + "\n"


def generate(directory, files, functions=10, seed=4):
    """A git repository of `files` files with `functions` definitions each (one chunk each)."""
    if os.path.isdir(os.path.join(directory, ".git")):
        return
    rng = random.Random(seed)
    makers = [(".py", python_file), (".go", go_file), (".c", c_file)]
    for i in range(files):
        folder = os.path.join(directory, f"pkg{i // 100:03d}", f"mod{(i // 10) % 10}")
        os.makedirs(folder, exist_ok=True)
        ext, make = makers[i % len(makers)]
        with open(os.path.join(folder, f"{name(rng)}_{i}{ext}"), "w") as f:
            f.write(make(rng, functions))
    env = dict(os.environ, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.com",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.com")
    for argv in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-q", "-m", "synthetic"]):
        subprocess.run(argv, cwd=directory, check=True, env=env)


# --- measurements -------------------------------------------------------------------------------

def measure(repo, binary, parse_limit, repeats, queries):
    work = tempfile.mkdtemp(prefix="kasava-bench-")
    index = os.path.join(work, "index.db")
    k = [binary, "--index", index]
    figures = {"repository": repo}
    try:
        seconds, rss, out, err, code = run_measured(k + ["index", repo, "--json"])
        if code != 0:
            sys.exit(f"bench: kasava index failed: {err.strip()}")
        summary = json.loads(out)
        _, _, status_out, _, _ = run_measured(k + ["status", "--json"])
        status = json.loads(status_out)
        source_bytes = status["source_bytes"]
        figures.update(files=summary["files"], indexed=summary["indexed"], chunks=summary["chunks"],
                       skipped=summary["skipped"], source_mb=round(source_bytes / 1e6, 2),
                       full_index_s=round(seconds, 3),
                       files_per_s=round(summary["files"] / seconds, 1),
                       mb_per_s=round(source_bytes / seconds / 1e6, 2),
                       index_peak_rss_mb=round(rss, 1))

        if parse_limit and os.path.exists(parse_limit):
            _, _, out, err, code = run_measured([parse_limit, repo])
            if code == 0:
                limit = json.loads(out)
                figures["parse_limit_s"] = round(limit["parse_seconds"], 3)
                figures["parse_limit_mb_per_s"] = round(limit["bytes"] / limit["parse_seconds"] / 1e6, 2)
                figures["index_over_parse_limit"] = round(seconds / limit["parse_seconds"], 2)

        refresh = [run_measured(k + ["index", repo])[0] for _ in range(repeats)]
        figures["no_change_refresh_s"] = round(statistics.median(refresh), 4)

        # One changed file: append a comment line, refresh, put the file back, refresh.
        changed = pick_file(repo)
        if changed:
            original = open(changed, "rb").read()
            times = []
            try:
                for i in range(repeats):
                    with open(changed, "ab") as f:
                        f.write(f"\n# bench edit {i}\n".encode())
                    times.append(run_measured(k + ["index", repo])[0])
                    with open(changed, "wb") as f:
                        f.write(original)
                    run_measured(k + ["index", repo])
            finally:
                with open(changed, "wb") as f:
                    f.write(original)
            figures["one_change_refresh_s"] = round(statistics.median(times), 4)

        asks, rsses, lean = [], [], []
        for q in QUERIES[:queries]:
            s, r, _, err, code = run_measured(k + ["ask", q, "--json"], cwd=repo)
            if code not in (0, 1):
                sys.exit(f"bench: kasava ask failed: {err.strip()}")
            asks.append(s)
            rsses.append(r)
            lean.append(run_measured(k + ["ask", q, "--json", "--no-refresh"], cwd=repo)[0])
        figures.update(ask_queries=len(asks), ask_p50_ms=round(1000 * statistics.median(asks), 1),
                       ask_p95_ms=round(1000 * percentile(asks, 0.95), 1),
                       ask_no_refresh_p50_ms=round(1000 * statistics.median(lean), 1),
                       ask_peak_rss_mb=round(max(rsses), 1))

        index_bytes = sum(os.path.getsize(os.path.join(work, f)) for f in os.listdir(work))
        figures.update(index_mb=round(index_bytes / 1e6, 2),
                       index_to_source=round(index_bytes / source_bytes, 2) if source_bytes else None)
        figures["load_average"] = round(os.getloadavg()[0], 2)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return figures


def pick_file(repo):
    """A tracked source file of middling size to edit for the one-change refresh."""
    try:
        listed = subprocess.run(["git", "ls-files"], cwd=repo, capture_output=True, text=True,
                                check=True).stdout.split("\n")
    except (subprocess.CalledProcessError, FileNotFoundError):
        return None
    for path in listed:
        if path.endswith((".py", ".go", ".c")):
            return os.path.join(repo, path)
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("repo", nargs="?", help="repository or directory to measure")
    parser.add_argument("--synthetic", metavar="DIR",
                        help="generate a synthetic repository in DIR (once) and measure it")
    parser.add_argument("--files", type=int, default=10000, help="files of the synthetic repository")
    parser.add_argument("--functions", type=int, default=10,
                        help="definitions per synthetic file (3600: files of nearly 1 MiB, the "
                             "largest kasava indexes by default)")
    parser.add_argument("--binary", default=os.path.join(HERE, "..", "build", "kasava"))
    parser.add_argument("--parse-limit", default=None,
                        help="the parse_limit binary (default: next to --binary, in bench/)")
    parser.add_argument("--repeats", type=int, default=11,
                        help="runs per refresh figure (median; runs vary by 10-15%% on a VM)")
    parser.add_argument("--queries", type=int, default=50, help="ask queries (at most 50)")
    args = parser.parse_args()
    if args.synthetic:
        generate(os.path.abspath(args.synthetic), args.files, args.functions)
        args.repo = args.synthetic
    if not args.repo:
        parser.error("give REPO or --synthetic DIR")
    binary = os.path.abspath(args.binary)
    parse_limit = args.parse_limit or os.path.join(os.path.dirname(binary), "bench", "parse_limit")
    figures = measure(os.path.abspath(args.repo), binary, parse_limit, args.repeats, args.queries)
    for key, value in figures.items():
        print(f"{key:<24} {value}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
