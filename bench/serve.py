#!/usr/bin/env python3
"""`kasava serve` under load: /api/search at 1, 8 and 32 concurrent clients on loopback.

usage: bench/serve.py REPO [--binary build/kasava] [--seconds 10] [--clients 1,8,32]
       bench/serve.py --synthetic DIR [--files 10000] [--functions 10]
                      (generates DIR once with bench/run.py's generator and indexes it)

Starts `kasava serve` on a free port in REPO (whose index must exist, or is built first),
then for each level runs that many clients, each on its own keep-alive connection, asking
bench/run.py's 50 questions in turn for --seconds. Prints requests per second, p50 and p99
latency, errors (any reply but 200), the server's RSS (VmHWM: its peak so far) and its CPU
time per request (user + system: a figure that other load on the machine does not inflate),
as a table and as one JSON line. Targets of issue 22 (2-core machine): p50 <= 10 ms at 1 client,
>= 150 requests/s at 8, p99 <= 100 ms at 32, RSS <= 128 MB.
"""
import argparse
import http.client
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run  # noqa: E402  (bench/run.py: the synthetic repository and the questions)


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


def memory_of(pid):
    """(VmRSS, VmHWM) of a process in MB."""
    figures = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                figures[key] = int(value.split()[0]) / 1024
    return figures.get("VmRSS", 0.0), figures.get("VmHWM", 0.0)


def start_server(binary, repo):
    server = subprocess.Popen([binary, "serve", "--listen", "127.0.0.1:0", "--rate-limit", "0"],
                              cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = server.stdout.readline()
    found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    if not found:
        server.kill()
        sys.exit(f"serve.py: kasava serve did not print its address: {line!r}")
    return server, int(found.group(1))


def cpu_seconds(pid):
    """User + system CPU time of a process so far."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load(port, clients, seconds):
    """Runs `clients` threads for `seconds`; returns (latencies in ms, errors, requests)."""
    latencies, errors = [], [0]
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def client(number):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        mine, failed, i = [], 0, number
        while time.monotonic() < deadline:
            query = run.QUERIES[i % len(run.QUERIES)]
            i += 1
            target = "/api/search?" + urllib.parse.urlencode({"q": query, "limit": 10})
            started = time.perf_counter()
            try:
                connection.request("GET", target, headers={"Host": f"127.0.0.1:{port}"})
                reply = connection.getresponse()
                reply.read()
                if reply.status != 200:
                    failed += 1
            except (OSError, http.client.HTTPException):
                failed += 1
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                continue
            mine.append((time.perf_counter() - started) * 1000)
        connection.close()
        with lock:
            latencies.extend(mine)
            errors[0] += failed

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    return latencies, errors[0], (len(latencies) + errors[0]) / elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("repo", nargs="?", help="repository whose index to serve")
    parser.add_argument("--synthetic", metavar="DIR", help="generate a synthetic repository in DIR (once)")
    parser.add_argument("--files", type=int, default=10000)
    parser.add_argument("--functions", type=int, default=10)
    parser.add_argument("--binary", default=os.path.join(HERE, "..", "build", "kasava"))
    parser.add_argument("--seconds", type=float, default=10.0, help="per level")
    parser.add_argument("--clients", default="1,8,32")
    args = parser.parse_args()
    if args.synthetic:
        run.generate(os.path.abspath(args.synthetic), args.files, args.functions)
        args.repo = args.synthetic
    if not args.repo:
        parser.error("give REPO or --synthetic DIR")
    binary = os.path.abspath(args.binary)
    if not os.path.exists(os.path.join(args.repo, ".kasava", "index.db")):
        subprocess.run([binary, "index", "-q"], cwd=args.repo, check=True)
    chunks = json.loads(subprocess.run([binary, "status", "--json"], cwd=args.repo, check=True,
                                       capture_output=True, text=True).stdout)["chunks"]

    server, port = start_server(binary, args.repo)
    rows = []
    try:
        load(port, 1, 1.0)  # warm: the model and the page cache
        for clients in [int(c) for c in args.clients.split(",")]:
            cpu_before = cpu_seconds(server.pid)
            latencies, errors, rate = load(port, clients, args.seconds)
            cpu = cpu_seconds(server.pid) - cpu_before
            rss, peak = memory_of(server.pid)
            rows.append({"clients": clients, "requests_per_second": round(rate, 1),
                         "p50_ms": round(percentile(latencies, 0.50), 2),
                         "p99_ms": round(percentile(latencies, 0.99), 2),
                         "requests": len(latencies) + errors, "errors": errors,
                         "server_cpu_ms_per_request": round(1000 * cpu / max(1, len(latencies) + errors), 2),
                         "rss_mb": round(rss, 1), "peak_rss_mb": round(peak, 1)})
    finally:
        server.terminate()
        server.wait()

    print(f"kasava serve, /api/search, {chunks} chunks, {args.seconds:g} s per level")
    print(f"{'clients':>8} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7} {'RSS MB':>7} {'peak MB':>8}"
          f" {'CPU ms/req':>11}")
    for row in rows:
        print(f"{row['clients']:>8} {row['requests_per_second']:>8} {row['p50_ms']:>8} {row['p99_ms']:>8} "
              f"{row['errors']:>7} {row['rss_mb']:>7} {row['peak_rss_mb']:>8} {row['server_cpu_ms_per_request']:>11}")
    print(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(json.dumps({"chunks": chunks, "levels": rows}))


if __name__ == "__main__":
    main()
