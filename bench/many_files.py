#!/usr/bin/env python3
"""A soak of a repository with very many tiny files (issue 7: 100,000), through the real binary.

Makes a git repository of N tiny files (default 100,000; a few lines each, in 1,000 folders,
half of them Python, a quarter Go, a quarter plain text, with some empty files), then runs:
`kasava index` (wall time, peak RSS), a no-change `kasava index`, `kasava ask` with and
without the refresh, `kasava verify`, and `kasava status`, and checks that every file is
accounted for (indexed + skipped = listed) and that verify finds the index sound. Prints a
table and one JSON line; exits 1 when a check fails. The repository is made once per folder
and reused (`--dir`).

    bench/many_files.py                       # 100,000 files in a temporary folder
    bench/many_files.py --files 20000 --dir /tmp/many
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_repository(path, files):
    marker = os.path.join(path, ".made")
    if os.path.exists(marker):
        return
    os.makedirs(path, exist_ok=True)
    for i in range(files):
        folder = os.path.join(path, f"d{i % 1000:03d}")
        os.makedirs(folder, exist_ok=True)
        kind = i % 4
        if i % 97 == 0:
            name, text = f"empty_{i}.txt", ""
        elif kind in (0, 1):
            name, text = f"m{i}.py", f"def f{i}(x):\n    \"\"\"Tiny function {i}.\"\"\"\n    return x + {i}\n"
        elif kind == 2:
            name, text = f"m{i}.go", f"package d\n\n// F{i} is tiny number {i}.\nfunc F{i}() int {{ return {i} }}\n"
        else:
            name, text = f"n{i}.txt", f"note {i}: tiny text file\n"
        with open(os.path.join(folder, name), "w") as out:
            out.write(text)
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", "-C", path]
    subprocess.run(["git", "init", "-q", path], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-qm", "many files"], check=True)
    open(marker, "w").close()
    with open(os.path.join(path, ".git", "info", "exclude"), "a") as out:
        out.write(".made\n")


def run(binary, args, cwd):
    """Runs kasava; returns (result, seconds, peak RSS in MB of that process)."""
    with tempfile.TemporaryFile(mode="w+") as out, tempfile.TemporaryFile(mode="w+") as err:
        started = time.monotonic()
        process = subprocess.Popen([binary] + args, cwd=cwd, stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.monotonic() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        result = subprocess.CompletedProcess(process.args, process.returncode, out.read(), err.read())
    return result, seconds, usage.ru_maxrss / 1024.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "kasava"))
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--dir", help="where to make (or reuse) the repository")
    options = parser.parse_args()
    path = options.dir or os.path.join(tempfile.gettempdir(), f"kasava-many-{options.files}")
    started = time.monotonic()
    make_repository(path, options.files)
    made_s = time.monotonic() - started
    index_path = os.path.join(path, ".kasava", "index.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(index_path + suffix):
            os.remove(index_path + suffix)

    failures = []
    full, full_s, full_rss = run(options.binary, ["index", "--json"], path)
    if full.returncode != 0:
        sys.exit(f"many_files: kasava index failed: {full.stderr.strip()}")
    summary = json.loads(full.stdout)
    if summary["indexed"] + summary["skipped"] != summary["files"]:
        failures.append(f"indexed {summary['indexed']} + skipped {summary['skipped']} != listed {summary['files']}")
    refresh, refresh_s, _ = run(options.binary, ["index", "--json"], path)
    if json.loads(refresh.stdout)["parsed"] != 0:
        failures.append("a no-change run parsed files")
    target = next(i for i in range(options.files // 2, -1, -1) if i % 4 == 0 and i % 97 != 0)
    query, expected = f"f{target}", f"d{target % 1000:03d}/m{target}.py"
    ask, ask_s, ask_rss = run(options.binary, ["ask", query, "--json"], path)
    hits = json.loads(ask.stdout)["results"] if ask.returncode == 0 else []
    if not hits or hits[0]["path"] != expected:
        failures.append(f"ask {query} did not find {expected} first: {[h['path'] for h in hits[:3]]}")
    _, ask_no_refresh_s, _ = run(options.binary, ["ask", query, "--no-refresh", "--json"], path)
    verify, verify_s, _ = run(options.binary, ["verify", "--json"], path)
    if verify.returncode != 0:
        failures.append(f"verify exit {verify.returncode}: {verify.stdout[:300]}")
    status = json.loads(run(options.binary, ["status", "--json"], path)[0].stdout)

    figures = {"files": summary["files"], "indexed": summary["indexed"], "skipped": summary["skipped"],
               "chunks": summary["chunks"], "make_repository_s": round(made_s, 1),
               "full_index_s": round(full_s, 2), "index_peak_rss_mb": round(full_rss, 1),
               "no_change_refresh_s": round(refresh_s, 3), "ask_s": round(ask_s, 3),
               "ask_no_refresh_s": round(ask_no_refresh_s, 3), "ask_peak_rss_mb": round(ask_rss, 1),
               "verify_s": round(verify_s, 2), "verify_exit": verify.returncode,
               "index_mb": round(status["index_bytes"] / 1048576, 1), "failures": failures}
    width = max(len(key) for key in figures)
    for key, value in figures.items():
        print(f"{key:<{width}}  {value}")
    print(json.dumps(figures))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
