#!/usr/bin/env python3
"""Indexing through a remote embedding model over a slow, failing network, end to end.

Makes a git repository of N small source files (default 1,000), starts
bench/fake_embedding_server.py on 127.0.0.1 with added latency and a share of failed requests
(500, 503, 429 with Retry-After, connection resets), then runs the real binary:

  1. `kasava index --model openai:bench-embed` into an empty index: wall time, requests the
     server saw (and how many failed), chunks embedded, chunks left pending;
  2. `kasava index` again until nothing is pending (each run sends only what is pending);
  3. `kasava verify`: every chunk has its vector;
  4. `kasava index --rebuild`: everything comes from the vector cache (no request).

Prints a table and one JSON line. Nothing leaves the machine: the server listens on loopback.

    bench/remote.py                                  # 1,000 files, 50 ms, 5% errors
    bench/remote.py --files 2000 --latency-ms 100 --error-rate 0.1
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

WORDS = ["parse", "config", "request", "header", "token", "cache", "retry", "backoff", "user",
         "session", "route", "handler", "query", "index", "store", "vector", "batch", "stream"]


def make_repository(path, files):
    os.makedirs(path, exist_ok=True)
    for i in range(files):
        package = os.path.join(path, f"pkg{i // 100}")
        os.makedirs(package, exist_ok=True)
        a, b, c = WORDS[i % len(WORDS)], WORDS[(i * 7) % len(WORDS)], WORDS[(i * 13) % len(WORDS)]
        lines = [f'"""Module {i}: {a} and {b} helpers."""\n']
        for f in range(5):
            name = f"{a}_{b}_{c}_{f}_{i}"
            lines.append(f"\n\ndef {name}(value, options=None):\n"
                         f'    """Returns the {a} of the {b} for {c} number {f}."""\n'
                         f"    result = value * {f + 1}\n"
                         f"    if options:\n        result += len(options)\n    return result\n")
        with open(os.path.join(package, f"module_{i}.py"), "w") as out:
            out.write("".join(lines))
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    subprocess.run(["git", "init", "-q", path], check=True)
    subprocess.run(git + ["-C", path, "add", "-A"], check=True)
    subprocess.run(git + ["-C", path, "commit", "-qm", "bench"], check=True)


def stats(base_url):
    with urllib.request.urlopen(base_url + "/stats", timeout=10) as response:
        return json.load(response)


def run(binary, args, cwd, env):
    started = time.monotonic()
    result = subprocess.run([binary] + args, cwd=cwd, env=env, capture_output=True, text=True)
    return result, time.monotonic() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "kasava"))
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--error-rate", type=float, default=0.05)
    parser.add_argument("--parallel", type=int, default=4, help="KASAVA_PARALLEL_REQUESTS")
    options = parser.parse_args()

    work = tempfile.mkdtemp(prefix="kasava-remote-bench-")
    repo = os.path.join(work, "repo")
    make_repository(repo, options.files)
    server = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_embedding_server.py"),
                               "--latency-ms", str(options.latency_ms),
                               "--error-rate", str(options.error_rate)],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        base_url = server.stdout.readline().split()[-1]
        env = dict(os.environ)
        for name in list(env):
            if name.startswith("KASAVA_"):
                del env[name]
        env.update({"KASAVA_MODEL": "openai:bench-embed", "KASAVA_OPENAI_BASE_URL": base_url,
                    "KASAVA_PARALLEL_REQUESTS": str(options.parallel),
                    "XDG_CACHE_HOME": os.path.join(work, "cache")})
        env.pop("OPENAI_API_KEY", None)

        figures = {"files": options.files, "latency_ms": options.latency_ms,
                   "error_rate": options.error_rate, "parallel_requests": options.parallel}
        result, seconds = run(options.binary, ["index", "--json"], repo, env)
        if result.returncode != 0:
            sys.exit(f"bench: kasava index failed: {result.stderr.strip()}")
        summary = json.loads(result.stdout)
        seen = stats(base_url)
        figures.update({"chunks": summary["chunks"], "index_s": round(seconds, 2),
                        "requests": seen["requests"], "failed_requests": sum(seen["failures"].values()),
                        "failures": seen["failures"], "max_batch": seen["max_batch"],
                        "embedded": summary["embedding"]["sent"],
                        "pending_after_first_run": summary["embedding"]["pending"]})
        runs = 1
        pending = summary["embedding"]["pending"]
        while pending > 0 and runs < 5:
            result, seconds = run(options.binary, ["index", "--json"], repo, env)
            summary = json.loads(result.stdout)
            pending = summary["embedding"]["pending"]
            runs += 1
        figures["runs_until_nothing_pending"] = runs
        figures["pending_at_end"] = pending
        result, _ = run(options.binary, ["verify", "--json"], repo, env)
        figures["verify_exit"] = result.returncode
        status = json.loads(run(options.binary, ["status", "--json"], repo, env)[0].stdout)
        figures["vectors"] = status["vectors"]
        before = stats(base_url)["requests"]
        result, seconds = run(options.binary, ["index", "--rebuild", "--json"], repo, env)
        rebuilt = json.loads(result.stdout)
        figures.update({"rebuild_s": round(seconds, 2), "rebuild_cached": rebuilt["embedding"]["cached"],
                        "rebuild_requests": stats(base_url)["requests"] - before})
    finally:
        server.terminate()
        server.wait()

    rows = [("files", figures["files"]), ("chunks", figures["chunks"]),
            ("latency / error rate", f"{options.latency_ms:.0f} ms / {options.error_rate:.0%}"),
            ("full index (s)", figures["index_s"]),
            ("requests seen by the server", figures["requests"]),
            ("  of which failed", f"{figures['failed_requests']} {figures['failures']}"),
            ("largest batch", figures["max_batch"]),
            ("chunks embedded / pending", f"{figures['embedded']} / {figures['pending_after_first_run']}"),
            ("runs until nothing pending", figures["runs_until_nothing_pending"]),
            ("vectors / chunks", f"{figures['vectors']} / {figures['chunks']}"),
            ("verify exit", figures["verify_exit"]),
            ("rebuild from cache (s), requests", f"{figures['rebuild_s']}, {figures['rebuild_requests']}")]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
