#!/usr/bin/env python3
"""kasava's speed and memory benchmark: the figures of issue 4 for one repository.

usage: bench/run.py REPO [--binary build/kasava] [--parse-limit build/bench/parse_limit]
       bench/run.py --synthetic DIR [--files 10000] [--functions 10]
                                                 (generates DIR once, then measures it)
       bench/run.py --kernel DIR [--kernel-git DIR] [--synthetic DIR] [--cpython DIR]
                                                 (three sizes side by side: the Linux kernel,
                                                  the 10k-file synthetic tree, CPython's Lib)

The kernel is not fetched: take Debian's source package (any mirror, no root needed),
    apt-get download linux-source-6.1
    dpkg-deb -x linux-source-6.1_*_all.deb kernel-src
    mkdir kernel && tar -xJf kernel-src/usr/src/linux-source-6.1.tar.xz -C kernel
and give --kernel kernel/linux-source-6.1 (a plain directory, ~78,500 files, 1.3 GB). For the
git work tree figures, a copy made a repository as git's guide for large trees says:
    cp -a kernel/linux-source-6.1 kernel-git && cd kernel-git && git init -q &&
    git config core.untrackedCache true && git config feature.manyFiles true &&
    git add -A -f && git commit -qm kernel
and give it as --kernel-git (-f: Debian's .gitignore ignores everything at the top level; no
core.splitIndex: libgit2 cannot read a split index, kasava stops at its 'link' extension).

Prints a table, then the same figures as one JSON line. See bench/README.md for what each
figure means. Every process is timed from the outside (process start included); peak RSS is
each child's own ru_maxrss (os.wait4), not the benchmark's.
"""
import argparse
import json
import os
import random
import re
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


# 20 questions someone new to the Linux kernel asks; --kernel asks them of all three trees, so
# the ask figures of the three sizes compare like with like.
KERNEL_QUERIES = [
    "how does the scheduler pick the next task", "allocate pages in the buddy allocator",
    "copy data from user space", "register a character device", "handle a page fault",
    "spinlock with interrupts disabled", "read a file from the page cache",
    "parse kernel command line parameters", "send a packet through a network device",
    "rcu read side critical section", "create a kernel thread", "ext4 journal commit",
    "map a dma buffer", "handle an interrupt request", "usb device probe",
    "timer expiry callback", "open a file descriptor", "mount a filesystem",
    "out of memory killer chooses a victim", "load a kernel module",
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
        if is_git_work_tree(repo):
            figures["git_status_s"] = git_status_median(repo, repeats)

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
            # The file just put back is younger than the index's racy margin (2 s): until a
            # refresh after that stores its stat data, every refresh reads it again and cannot
            # take the listing digest's shortcut. The asks below are of an index where nothing
            # changed, so that margin passes and one refresh settles it first.
            time.sleep(2.5)
            run_measured(k + ["index", repo])

        asks, rsses, lean, lean_rsses = [], [], [], []
        # An index named elsewhere (--index) is refreshed from the git repository around the
        # current folder, and a plain directory has none: there `ask` would not refresh at all.
        # So in a plain directory the refreshing asks use DIR/.kasava/index.db, removed after.
        in_tree = None
        if not is_git_work_tree(repo) and not os.path.exists(os.path.join(repo, ".kasava")):
            in_tree = os.path.join(repo, ".kasava")
            os.makedirs(in_tree)
            shutil.move(index, os.path.join(in_tree, "index.db"))
        try:
            for q in queries:
                argv = [binary, "ask", q, "--json"] if in_tree else k + ["ask", q, "--json"]
                s, r, _, err, code = run_measured(argv, cwd=repo)
                if code not in (0, 1):
                    sys.exit(f"bench: kasava ask failed: {err.strip()}")
                asks.append(s)
                rsses.append(r)
        finally:
            if in_tree:
                shutil.move(os.path.join(in_tree, "index.db"), index)
                shutil.rmtree(in_tree, ignore_errors=True)
        for q in queries:
            s, r, _, _, _ = run_measured(k + ["ask", q, "--json", "--no-refresh"], cwd=repo)
            lean.append(s)
            lean_rsses.append(r)
        figures.update(ask_queries=len(asks), ask_p50_ms=round(1000 * statistics.median(asks), 1),
                       ask_p95_ms=round(1000 * percentile(asks, 0.95), 1),
                       ask_no_refresh_p50_ms=round(1000 * statistics.median(lean), 1),
                       ask_no_refresh_p95_ms=round(1000 * percentile(lean, 0.95), 1),
                       ask_peak_rss_mb=round(max(rsses), 1),
                       ask_no_refresh_peak_rss_mb=round(max(lean_rsses), 1))

        index_bytes = sum(os.path.getsize(os.path.join(work, f)) for f in os.listdir(work))
        figures.update(index_mb=round(index_bytes / 1e6, 2),
                       index_to_source=round(index_bytes / source_bytes, 2) if source_bytes else None)
        figures["load_average"] = round(os.getloadavg()[0], 2)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return figures


def pick_file(repo):
    """A source file to edit for the one-change refresh: the first tracked .py/.go/.c file of a
    git work tree, else the first such file of a sorted walk of the directory."""
    if is_git_work_tree(repo):
        listed = subprocess.run(["git", "ls-files"], cwd=repo, capture_output=True, text=True,
                                check=True).stdout.split("\n")
    else:
        listed = []
        for folder, dirs, files in os.walk(repo):
            dirs.sort()
            listed += [os.path.relpath(os.path.join(folder, f), repo) for f in sorted(files)]
            if any(p.endswith((".py", ".go", ".c")) for p in listed):
                break
    for path in listed:
        if path.endswith((".py", ".go", ".c")):
            return os.path.join(repo, path)
    return None


def is_git_work_tree(repo):
    """True when `repo` is the top of a git work tree (kasava then lists it with git's help)."""
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=repo, capture_output=True,
                             text=True, check=True).stdout.strip()
    except (subprocess.CalledProcessError, FileNotFoundError):
        return False
    return os.path.realpath(top) == os.path.realpath(repo)


def git_status_median(repo, repeats):
    """The anchor of a no-change refresh in a work tree: `git status` on the same tree."""
    return round(statistics.median(
        run_measured(["git", "status", "--porcelain"], cwd=repo)[0] for _ in range(repeats)), 4)


def refresh_only(repo, binary, repeats):
    """The other form of a tree (git work tree or plain directory): a full index, untimed, then
    the median no-change refresh, and `git status` beside it in a work tree."""
    work = tempfile.mkdtemp(prefix="kasava-bench-")
    k = [binary, "--index", os.path.join(work, "index.db")]
    try:
        _, _, _, err, code = run_measured(k + ["index", repo])
        if code != 0:  # reported in its column; the other trees are still measured
            print(f"bench: kasava index of {repo} failed: {err.strip()}", file=sys.stderr)
            return {"no_change_refresh_s": "failed"}
        figures = {"no_change_refresh_s": round(statistics.median(
            run_measured(k + ["index", repo])[0] for _ in range(repeats)), 4)}
        if is_git_work_tree(repo):
            figures["git_status_s"] = git_status_median(repo, repeats)
        return figures
    finally:
        shutil.rmtree(work, ignore_errors=True)


def other_form(repo, scratch):
    """A copy of `repo` in its other form under `scratch`: a plain directory (no .git) of a work
    tree, or a fresh one-commit repository of a plain directory. For the small trees only."""
    target = os.path.join(scratch, os.path.basename(repo.rstrip("/")) + "-other")
    if os.path.isdir(target):
        return target
    if is_git_work_tree(repo):
        shutil.copytree(repo, target, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        return target
    shutil.copytree(repo, target, symlinks=True)
    env = dict(os.environ, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.com",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.com")
    for argv in (["git", "init", "-q"], ["git", "config", "core.untrackedCache", "true"],
                 ["git", "config", "feature.manyFiles", "true"], ["git", "add", "-A"],
                 ["git", "commit", "-q", "-m", "bench"]):
        subprocess.run(argv, cwd=target, check=True, env=env, stdout=subprocess.DEVNULL)
    return target


def newest_cpython_lib():
    """CPython's Lib as Debian installs it: the newest /usr/lib/python3.N."""
    found = [d for d in os.listdir("/usr/lib") if re.fullmatch(r"python3\.\d+", d)]
    if not found:
        return None
    return os.path.join("/usr/lib", max(found, key=lambda d: int(d.split(".")[1])))


def measure_sizes(args, binary, parse_limit):
    """--kernel: the figures of the kernel, the synthetic tree and CPython's Lib, each with its
    no-change refresh in both forms (git work tree and plain directory)."""
    trees = [("kernel", os.path.abspath(args.kernel))]
    synthetic = os.path.abspath(args.synthetic or os.path.join(tempfile.gettempdir(),
                                                               "kasava-bench-synthetic"))
    generate(synthetic, args.files, args.functions)
    trees.append(("synthetic", synthetic))
    cpython = args.cpython or newest_cpython_lib()
    scratch = tempfile.mkdtemp(prefix="kasava-bench-forms-")
    columns = {}
    try:
        if cpython:  # a copy: the one-change refresh edits a file, and this one is the system's
            copy = os.path.join(scratch, "Lib")
            shutil.copytree(cpython, copy, symlinks=True)
            trees.append(("cpython_lib", copy))
        for label, tree in trees:
            print(f"bench: measuring {label} ({tree})", file=sys.stderr)
            figures = measure(tree, binary, parse_limit, args.repeats, KERNEL_QUERIES)
            form = "git" if is_git_work_tree(tree) else "plain"
            figures[f"no_change_refresh_{form}_s"] = figures.pop("no_change_refresh_s")
            if label == "kernel":
                other = os.path.abspath(args.kernel_git) if args.kernel_git else None
            else:
                other = other_form(tree, scratch)
            if other:
                more = refresh_only(other, binary, args.repeats)
                other_kind = "git" if form == "plain" else "plain"
                figures[f"no_change_refresh_{other_kind}_s"] = more["no_change_refresh_s"]
                if "git_status_s" in more:
                    figures["git_status_s"] = more["git_status_s"]
            columns[label] = figures
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return columns


def print_columns(columns):
    keys = []
    for figures in columns.values():
        keys += [key for key in figures if key not in keys]
    # The refresh figures together, after the full index's.
    refresh = ["no_change_refresh_git_s", "git_status_s", "no_change_refresh_plain_s"]
    keys = [key for key in keys if key not in refresh]
    at = keys.index("one_change_refresh_s") if "one_change_refresh_s" in keys else len(keys)
    keys[at:at] = refresh
    labels = list(columns)
    print(f"{'figure':<28}" + "".join(f"{label:>22}" for label in labels))
    for key in keys:
        if key == "repository":
            continue
        print(f"{key:<28}" + "".join(f"{str(columns[l].get(key, '-')):>22}" for l in labels))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
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
    parser.add_argument("--kernel", metavar="DIR",
                        help="the unpacked Linux kernel tree (see above for how to get it): "
                             "measures it, the synthetic tree (--synthetic, default "
                             "$TMPDIR/kasava-bench-synthetic) and CPython's Lib, side by side, "
                             "with 20 fixed kernel questions")
    parser.add_argument("--kernel-git", metavar="DIR",
                        help="the same kernel files as a git work tree, for its no-change refresh")
    parser.add_argument("--cpython", metavar="DIR",
                        help="CPython's Lib for --kernel (default: the newest /usr/lib/python3.N)")
    args = parser.parse_args()
    if args.kernel:
        binary = os.path.abspath(args.binary)
        parse_limit = args.parse_limit or os.path.join(os.path.dirname(binary), "bench",
                                                       "parse_limit")
        columns = measure_sizes(args, binary, parse_limit)
        print_columns(columns)
        print(json.dumps(columns))
        return
    if args.synthetic:
        generate(os.path.abspath(args.synthetic), args.files, args.functions)
        args.repo = args.synthetic
    if not args.repo:
        parser.error("give REPO or --synthetic DIR")
    binary = os.path.abspath(args.binary)
    parse_limit = args.parse_limit or os.path.join(os.path.dirname(binary), "bench", "parse_limit")
    figures = measure(os.path.abspath(args.repo), binary, parse_limit, args.repeats,
                      QUERIES[:args.queries])
    for key, value in figures.items():
        print(f"{key:<24} {value}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
