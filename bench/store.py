#!/usr/bin/env python3
"""The shared PostgreSQL store at the scale of an organisation (issue 19), through the real binary.

Generates a synthetic organisation once (`--dir`): `--repos` git repositories of synthetic
Python, half of them originals and half forks, each fork a clone of one original with
`--fork-changed` of its files rewritten (so it shares the rest of its blobs), and, with
`--history N`, N more commits in each original before it is forked, each appending a line to
5 of its files under a subject of 4 to 7 words of the vocabulary (the file histories that
`ask` ranks files by; without it every file's history is its first commit). With the
defaults (200 repositories of 100 files of 50 functions) that is ~1,000,000 chunks across
the repositories, ~550,000 of them unique. Then:

1. publishes every repository with `kasava index --store URL --name org/NAME` (each one's
   local index in DIR/indexes/, so the repositories stay clean), originals first, each fork
   after its original;
2. measures a publish's added time over a local index run: on the first original, `--runs`
   fresh local index runs alternating with fresh index-and-publish runs into an empty store
   (a scratch database with the schema), medians of each (the publish's own `seconds` from
   `--json` as well);
3. reports what a fork costs (blobs sent against the files it changed), the store's size per
   unique chunk against the local indexes' size per chunk, and the peak RSS of every kasava
   process;
4. when the binary's `kasava ask` has `--store`, asks `--queries` questions across all
   repositories and with one `--repo`: p50/p95 wall time (process start included).

PostgreSQL: `--store CONNINFO` (key=value, not a URI: the script appends dbname=) names a
server where it may create and drop the databases kasava_bench and kasava_bench_scratch;
without it the script starts its own (initdb and
pg_ctl from /usr/lib/postgresql/N/bin, as nobody when run as root, on a unix socket in a
temporary folder, default settings: fsync on) and stops it at the end.

    bench/store.py --small                   # 8 repositories, ~20,000 chunks: checks the script (~1 min)
    bench/store.py --small --history 40      # the same with 40 more commits of subjects in each original
    nice -n 10 bench/store.py                # the full organisation (hours on 2 busy cores)
    bench/store.py --repos 40 --files 50     # anything between
    bench/store.py --store postgresql://bench@db/kasava --binary build-perf/kasava

Prints a table and the same figures as one JSON line. Exits 1 when a publish fails or a fork
sends more blobs than it changed.
"""
import argparse
import glob
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

WORDS = ("parse request response header body token session user account order invoice payment "
         "retry timeout cache store index query search rank score vector buffer stream reader "
         "writer config option setting flag value key secret hash digest sign verify encode "
         "decode compress expand merge split join filter map reduce sort group count limit "
         "offset page cursor batch queue worker job task schedule event handler listener route "
         "path url host port socket client server proxy tunnel auth login logout role grant "
         "permission policy rule check validate sanitize escape render template view model "
         "record field column table schema migrate upgrade version commit branch tree blob "
         "file folder chunk line range span node edge graph walk visit build emit load save").split()

QUESTIONS = [
    "where is the session token validated", "retry the payment after a timeout",
    "parse the request header", "merge two sorted streams", "compress a blob before saving",
    "schedule a job on the worker queue", "render the invoice template", "grant a role permission",
    "escape a url path", "walk the graph edges", "verify a signed digest", "split a batch into pages",
    "load the config option", "encode the response body", "filter records by column",
    "upgrade the schema version", "count the events of a listener", "close the proxy socket",
    "rank the search results", "cache the query score",
]


def identifier(rng, parts=2):
    return "_".join(rng.choice(WORDS) for _ in range(parts))


def function_text(rng, name):
    """A synthetic Python function of 7-12 lines with a docstring and varied identifiers."""
    args = [identifier(rng, 1) for _ in range(rng.randint(1, 3))]
    lines = [f"def {name}({', '.join(dict.fromkeys(args))}):",
             f'    """{identifier(rng, 1).capitalize()} the {identifier(rng, 1)} of a {identifier(rng, 1)} '
             f'({rng.randint(0, 1 << 30)})."""']
    for _ in range(rng.randint(4, 9)):
        target = identifier(rng)
        call = identifier(rng)
        lines.append(f"    {target} = {call}({rng.choice(args)}, {rng.randint(0, 999)})")
    lines.append(f"    return {identifier(rng)}")
    return "\n".join(lines) + "\n"


def file_text(rng, functions, tag):
    return f"# {tag}\n\n" + "\n\n".join(function_text(rng, f"{identifier(rng)}_{i}") for i in range(functions))


def git(path, *args):
    subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", "-C", path] + list(args),
                   check=True, stdout=subprocess.DEVNULL)


def make_organisation(dir, repos, files, functions, fork_changed, history=0):
    """Makes (once per settings) the repositories; returns [(name, path, original or None)]."""
    settings = f"{repos} {files} {functions} {fork_changed}" + (f" {history}" if history else "")
    marker = os.path.join(dir, "made")
    originals = (repos + 1) // 2
    layout = []
    for i in range(originals):
        layout.append((f"service{i:03d}", os.path.join(dir, "repos", f"service{i:03d}"), None))
    for i in range(repos - originals):
        layout.append((f"fork{i:03d}", os.path.join(dir, "repos", f"fork{i:03d}"), f"service{i:03d}"))
    if os.path.exists(marker) and open(marker).read() == settings:
        return layout
    shutil.rmtree(os.path.join(dir, "repos"), ignore_errors=True)
    os.makedirs(os.path.join(dir, "repos"))
    for name, path, original in layout:
        rng = random.Random(name)
        if original is None:
            os.makedirs(path)
            subprocess.run(["git", "init", "-q", "-b", "main", path], check=True)
            for f in range(files):
                folder = os.path.join(path, f"pkg{f % 10}")
                os.makedirs(folder, exist_ok=True)
                with open(os.path.join(folder, f"module{f:03d}.py"), "w") as out:
                    out.write(file_text(rng, functions, f"{name} module {f}"))
            git(path, "add", "-A")
            git(path, "commit", "-qm", f"{name}: first version")
            for _ in range(history):
                subject = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 7)))
                for f in rng.sample(range(files), min(5, files)):
                    with open(os.path.join(path, f"pkg{f % 10}", f"module{f:03d}.py"), "a") as out:
                        out.write(f"# {subject}\n")
                git(path, "commit", "-qam", subject.capitalize())
        else:
            source = os.path.join(dir, "repos", original)
            subprocess.run(["git", "clone", "-q", source, path], check=True)
            git(path, "remote", "set-url", "origin", f"https://example.com/org/{name}.git")
            changed = sorted(rng.sample(range(files), max(1, round(files * fork_changed))))
            for f in changed:
                with open(os.path.join(path, f"pkg{f % 10}", f"module{f:03d}.py"), "w") as out:
                    out.write(file_text(rng, functions, f"{name} module {f}"))
            git(path, "commit", "-qam", f"{name}: forked")
    with open(marker, "w") as out:
        out.write(settings)
    return layout


def run(binary, args, cwd=None, env=None):
    """Runs kasava; returns (completed status, stdout, stderr, seconds, peak RSS MB)."""
    with tempfile.TemporaryFile(mode="w+") as out, tempfile.TemporaryFile(mode="w+") as err:
        started = time.monotonic()
        process = subprocess.Popen([binary] + args, cwd=cwd, stdout=out, stderr=err,
                                   env=dict(os.environ, **(env or {})))
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.monotonic() - started
        out.seek(0)
        err.seek(0)
        return os.waitstatus_to_exitcode(status), out.read(), err.read(), seconds, usage.ru_maxrss / 1024


class Server:
    """A PostgreSQL server of this run, in a temporary folder, stopped by stop()."""

    def __init__(self):
        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
        if not bins:
            sys.exit("bench/store.py: no PostgreSQL here (scripts/setup installs it), and no --store")
        self.bin = os.path.dirname(bins[-1])
        self.dir = tempfile.mkdtemp(prefix="kasava-bench-pg-")
        os.chmod(self.dir, 0o777)
        self.prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []
        data = os.path.join(self.dir, "data")
        subprocess.run(self.prefix + [f"{self.bin}/initdb", "-D", data, "-U", "bench", "--auth=trust"],
                       check=True, stdout=subprocess.DEVNULL, cwd=self.dir)
        subprocess.run(self.prefix + [f"{self.bin}/pg_ctl", "-D", data, "-l", os.path.join(self.dir, "log"), "-w",
                                      "-s", "-o", f"-k {self.dir} -c listen_addresses='' -p 5432", "start"],
                       check=True, cwd=self.dir)
        self.running = True

    def conninfo(self, database):
        return f"host={self.dir} port=5432 user=bench dbname={database}"

    def stop(self):
        if self.running:
            subprocess.run(self.prefix + [f"{self.bin}/pg_ctl", "-D", os.path.join(self.dir, "data"), "-s", "-m",
                                          "fast", "stop"], cwd=self.dir)
            self.running = False
            shutil.rmtree(self.dir, ignore_errors=True)


def psql(conninfo, sql, database=None):
    """Runs SQL with psql (found beside initdb) and returns its unaligned output."""
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"), key=lambda p: int(p.split("/")[4]))
    target = conninfo if database is None else f"{conninfo} dbname={database}"
    return subprocess.run([bins[-1] if bins else "psql", "-qAtX", "-d", target, "-c", sql],
                          check=True, capture_output=True, text=True).stdout.strip()


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))] if values else 0.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "kasava"))
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "kasava-bench-store"))
    parser.add_argument("--store", help="a PostgreSQL server (libpq key=value string of a database the "
                                        "script may drop and create databases beside); default: its own")
    parser.add_argument("--repos", type=int, default=200)
    parser.add_argument("--files", type=int, default=100, help="files per original repository")
    parser.add_argument("--functions", type=int, default=50, help="functions (chunks) per file")
    parser.add_argument("--fork-changed", type=float, default=0.1, help="share of a fork's files it rewrote")
    parser.add_argument("--history", type=int, default=0,
                        help="commits after the first in each original, 5 files each (file histories)")
    parser.add_argument("--runs", type=int, default=3, help="alternating runs for the added time")
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--small", action="store_true", help="8 repositories of 50 files of 50 functions")
    options = parser.parse_args()
    if options.small:
        options.repos, options.files, options.functions, options.runs = 8, 50, 50, 3
        options.dir = options.dir.rstrip("/") + "-small"
    binary = os.path.abspath(options.binary)
    os.makedirs(options.dir, exist_ok=True)
    started = time.monotonic()
    layout = make_organisation(options.dir, options.repos, options.files, options.functions, options.fork_changed,
                               options.history)
    generated_s = time.monotonic() - started

    server = None if options.store else Server()
    try:
        if server is not None:
            admin = server.conninfo("postgres")
        else:
            admin = options.store
        for database in ("kasava_bench", "kasava_bench_scratch"):
            psql(admin, f"DROP DATABASE IF EXISTS {database}")
            psql(admin, f"CREATE DATABASE {database}")
        store = f"{admin} dbname=kasava_bench"
        scratch = f"{admin} dbname=kasava_bench_scratch"
        indexes = os.path.join(options.dir, "indexes")
        shutil.rmtree(indexes, ignore_errors=True)
        os.makedirs(indexes)
        failures = []
        peak_rss = 0.0

        # 1. Every repository published, originals first (forks after the blobs they share).
        published = {}
        for name, path, original in layout:
            index = os.path.join(indexes, f"{name}.db")
            code, out, err, seconds, rss = run(binary, ["--index", index, "-q", "index", "--json", "--store", store,
                                                        "--name", f"org/{name}", path])
            peak_rss = max(peak_rss, rss)
            if code != 0:
                failures.append(f"publishing {name}: exit {code}: {err.strip()}")
                continue
            summary = json.loads(out)
            published[name] = dict(summary["publish"], total_s=seconds, index_chunks=summary.get("chunks", 0),
                                   index_bytes=os.path.getsize(index), original=original)
            print(f"  {name}: {summary['publish']['chunks_sent']} chunks sent in "
                  f"{summary['publish']['seconds']:.1f} s ({seconds:.1f} s in all)", file=sys.stderr, flush=True)
        sent_chunks = sum(p["chunks_sent"] for p in published.values())
        publish_s = sum(p["seconds"] for p in published.values())

        # 2. Added time: fresh local runs alternating with fresh index-and-publish runs.
        local_s, with_publish_s, publish_only_s = [], [], []
        name, path = next((n, p) for n, p, o in layout if o is None)
        for _ in range(options.runs):
            for publish in (False, True):
                index = os.path.join(indexes, "added.db")
                for leftover in glob.glob(index + "*"):
                    os.remove(leftover)
                args = ["--index", index, "-q", "index", "--json", path]
                if publish:
                    # An empty store with its schema (as a store that CI publishes to has),
                    # so that the run times the publish, not the schema's creation.
                    psql(admin, "DROP DATABASE IF EXISTS kasava_bench_scratch")
                    psql(admin, "CREATE DATABASE kasava_bench_scratch")
                    run(binary, ["status", "--store", scratch])
                    args += ["--store", scratch, "--name", f"org/{name}"]
                code, out, err, seconds, rss = run(binary, args)
                peak_rss = max(peak_rss, rss)
                if code != 0:
                    failures.append(f"added-time run of {name}: exit {code}: {err.strip()}")
                    continue
                (with_publish_s if publish else local_s).append(seconds)
                if publish:
                    publish_only_s.append(json.loads(out)["publish"]["seconds"])
        local_median = statistics.median(local_s) if local_s else 0.0
        added_median = (statistics.median(with_publish_s) - local_median) if with_publish_s else 0.0

        # 3. Forks, size.
        forks = [p for p in published.values() if p["original"] is not None]
        changed_files = max(1, round(options.files * options.fork_changed))
        for name, p in published.items():
            if p["original"] is not None and p["blobs_sent"] > changed_files:
                failures.append(f"fork {name} sent {p['blobs_sent']} blobs, more than the {changed_files} it changed")
        code, out, err, _, rss = run(binary, ["status", "--store", store, "--json"])
        peak_rss = max(peak_rss, rss)
        status = json.loads(out) if code == 0 else {}
        unique_chunks = status.get("chunks", 0)
        store_bytes = status.get("bytes", 0)
        tables = psql(store, "SELECT relname || '=' || pg_total_relation_size(oid) FROM pg_class WHERE relkind = 'r' "
                             "AND relnamespace = 'public'::regnamespace ORDER BY pg_total_relation_size(oid) DESC LIMIT 6")
        local_bytes = sum(p["index_bytes"] for p in published.values())
        local_chunks = sum(p["index_chunks"] for p in published.values())

        # 4. Asking, when this kasava can ask the store.
        ask = {}
        _, help_text, _, _, _ = run(binary, ["ask", "--help"])
        if "--store" in help_text and published:
            one = f"org/{next(iter(published))}"
            for label, extra in (("all", []), ("one_repo", ["--repo", one])):
                times = []
                for question in (QUESTIONS * (options.queries // len(QUESTIONS) + 1))[: options.queries]:
                    code, out, err, seconds, rss = run(binary, ["ask", "--store", store, "--json", question] + extra)
                    peak_rss = max(peak_rss, rss)
                    if code != 0:
                        failures.append(f"ask {label}: exit {code}: {err.strip()}")
                        break
                    times.append(seconds * 1000)
                ask[f"ask_{label}_p50_ms"] = round(percentile(times, 50), 1)
                ask[f"ask_{label}_p95_ms"] = round(percentile(times, 95), 1)

        figures = {
            "repositories": len(published),
            "forks": len(forks),
            "history_commits": options.history,
            "chunks_across_repositories": sum(p["chunks"] for p in published.values()),
            "unique_chunks": unique_chunks,
            "generate_s": round(generated_s, 1),
            "publish_chunks_sent": sent_chunks,
            "publish_s": round(publish_s, 1),
            "publish_chunks_per_s": round(sent_chunks / publish_s) if publish_s else 0,
            "local_index_median_s": round(local_median, 2),
            "index_and_publish_median_s": round(statistics.median(with_publish_s), 2) if with_publish_s else 0,
            "publish_added_median_s": round(added_median, 2),
            "publish_added_pct": round(100 * added_median / local_median, 1) if local_median else 0,
            "publish_own_median_s": round(statistics.median(publish_only_s), 2) if publish_only_s else 0,
            "fork_blobs_sent_mean": round(statistics.mean(p["blobs_sent"] for p in forks), 1) if forks else 0,
            "fork_blobs_changed": changed_files,
            "fork_blobs_mean": round(statistics.mean(p["blobs"] for p in forks), 1) if forks else 0,
            "store_bytes": store_bytes,
            "store_bytes_per_unique_chunk": round(store_bytes / unique_chunks) if unique_chunks else 0,
            "local_bytes_per_chunk": round(local_bytes / local_chunks) if local_chunks else 0,
            "largest_tables": tables.replace("\n", " "),
            "peak_rss_mb": round(peak_rss, 1),
            **ask,
            "load_average": round(os.getloadavg()[0], 2),
        }
        width = max(len(k) for k in figures)
        for key, value in figures.items():
            print(f"{key:<{width}}  {value}")
        print(json.dumps(figures))
        for failure in failures:
            print(f"bench/store.py: {failure}", file=sys.stderr)
        return 1 if failures else 0
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    sys.exit(main())
