#!/usr/bin/env python3
"""What one `kasava ask --no-refresh` costs per ranking mode: CPU, memory, instructions.

usage: bench/ask_cost.py REPO [--binary PATH] [--index FILE] [--rounds N] [--callgrind]

For each of `lexical`, `semantic` and `hybrid`, runs 20 fixed queries `--rounds` times (the
first round only warms the page cache) and prints the median and mean CPU time (user + sys,
from wait4, process start included), the median user time and the median peak RSS. CPU
times move with the machine's load; `--callgrind` adds what does not: the mean instruction
count of one ask per query under `valgrind --tool=callgrind` (needs valgrind), the figure to
compare before and after a change on a shared machine. REPO must be indexed already (or pass
--index). Nothing is written.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUERIES = [
    "read a csv file into a dict", "parse http request headers", "open a socket and listen",
    "compress data with gzip", "json encode object to string", "walk a directory tree recursively",
    "format a date as iso string", "retry on connection error", "email address validation regex",
    "thread pool executor submit", "sqlite cursor execute query", "url quote and unquote",
    "ZipFile", "urlopen", "hashlib sha256 digest", "temporary file that is deleted on close",
    "base64 decode", "parse command line arguments", "decimal rounding mode",
    "logging handler rotate file",
]
MODES = ["lexical", "semantic", "hybrid"]


def run(command, cwd):
    """Runs a command; returns its rusage and stderr."""
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    error = process.stderr.read()
    process.stderr.close()
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        sys.exit(f"ask_cost: {' '.join(command)}: {error.decode(errors='replace').strip()}")
    return usage, error


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo")
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "kasava"))
    parser.add_argument("--index", help="the index file (default: the repository's own)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of the 20 queries, the first a warm-up")
    parser.add_argument("--callgrind", action="store_true", help="also count instructions")
    options = parser.parse_args()
    prefix = [options.binary] + (["--index", options.index] if options.index else [])
    print(f"{'mode':9s} {'cpu ms p50':>10s} {'cpu ms mean':>11s} {'user ms p50':>11s} {'rss MB p50':>10s}"
          + (f" {'Minstr/ask':>10s}" if options.callgrind else ""))
    for mode in MODES:
        ask = lambda query: prefix + ["ask", query, "--no-refresh", "--mode", mode, "--limit", "10"]
        cpu, user, rss = [], [], []
        for round_ in range(max(2, options.rounds)):
            for query in QUERIES:
                usage, _ = run(ask(query), options.repo)
                if round_ == 0:
                    continue
                cpu.append((usage.ru_utime + usage.ru_stime) * 1000)
                user.append(usage.ru_utime * 1000)
                rss.append(usage.ru_maxrss / 1024)
        line = (f"{mode:9s} {statistics.median(cpu):10.1f} {statistics.mean(cpu):11.1f} "
                f"{statistics.median(user):11.1f} {statistics.median(rss):10.1f}")
        if options.callgrind:
            counts = []
            for query in QUERIES:
                _, error = run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
                               + ask(query), options.repo)
                found = re.search(rb"Collected : (\d+)", error)
                if not found:
                    sys.exit("ask_cost: no instruction count from valgrind")
                counts.append(int(found.group(1)))
            line += f" {statistics.mean(counts) / 1e6:10.1f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
