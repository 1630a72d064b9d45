#!/usr/bin/env python3
"""The history field's signal alone: files ranked by BM25 over the commits that touched them.

For each repository of the commit set (../shared/eval/commits: a commit subject as the query,
the source files that commit modified as the answer), a clone is checked out at each query's
commit's parent (`git checkout COMMIT^`), `kasava index` refreshes the index there
(incremental: only the commits new since the last run are read, or the history is read from
scratch when the parent does not descend from the last tip), and the files are ranked by
`Store::history_search` alone (bench program history_rank). The query's own commit is never in
the index: the script checks that the index's history tip is the parent. Queries run oldest
first so that most refreshes are incremental.

Prints MRR (1/rank of the first gold file, 0 beyond 50), MRR over the queries without
identifiers and Recall@5 per repository.

  bench/history_signal.py --kasava build/kasava --rank build/bench/history_rank \
      --repos httpx,cobra --sample 50
"""
import argparse
import json
import os
import re
import sqlite3
import subprocess
import sys
import time

EVAL = "/work/shared/eval/commits"
REPOS = "/work/eval-repos"
IDENTIFIER = re.compile(r"[a-z][A-Z]|[A-Za-z0-9]_[A-Za-z0-9]|\w\.\w|[()`]")


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def sample(queries, count):
    """Every k-th query in the file's order: deterministic, spread over the history."""
    if count <= 0 or count >= len(queries):
        return queries
    step = len(queries) / count
    return [queries[int(i * step)] for i in range(count)]


def evaluate(name, args):
    clone = os.path.join(args.work, name)
    if not os.path.isdir(clone):
        subprocess.run(["git", "clone", "-q", os.path.join(REPOS, name), clone], check=True)
    with open(os.path.join(EVAL, name + ".jsonl")) as handle:
        queries = sample([json.loads(line) for line in handle if line.strip()], args.sample)
    head = git(clone, "rev-parse", "HEAD") if not args.head else args.head
    order = {commit: i for i, commit in enumerate(git(clone, "rev-list", "--topo-order", head).split())}
    queries.sort(key=lambda q: -order.get(q["commit"], 0))  # oldest first
    index_db = os.path.join(clone, ".kasava", "index.db")
    ranks, plain, index_seconds = [], [], 0.0
    env = dict(os.environ)
    for query in queries:
        parent = git(clone, "rev-parse", query["commit"] + "^")
        git(clone, "checkout", "-q", "--detach", parent)
        started = time.monotonic()
        subprocess.run(["nice", "-n", "10", args.kasava, "index"], cwd=clone, check=True,
                       capture_output=True, env=env)
        index_seconds += time.monotonic() - started
        with sqlite3.connect(f"file:{index_db}?mode=ro", uri=True) as db:
            tip = db.execute("SELECT value FROM meta WHERE key = 'history_tip'").fetchone()
        if not tip or tip[0] != parent:
            sys.exit(f"history_signal: error: {name}: history tip {tip} is not the parent {parent}")
        ranked = subprocess.run([args.rank, index_db], input=query["query"] + "\n", check=True,
                                capture_output=True, text=True).stdout.rstrip("\n").split("\t")
        gold = set(query["files"])
        rank = next((i + 1 for i, path in enumerate(ranked) if path in gold), 0)
        ranks.append(rank)
        if not IDENTIFIER.search(query["query"]):
            plain.append(rank)
    mrr = lambda rs: sum(1.0 / r for r in rs if r) / len(rs) if rs else 0.0
    recall5 = sum(1 for r in ranks if 0 < r <= 5) / len(ranks)
    return {"repo": name, "queries": len(ranks), "mrr": mrr(ranks), "mrr_plain": mrr(plain),
            "plain": len(plain), "recall5": recall5, "index_seconds": index_seconds}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kasava", required=True)
    parser.add_argument("--rank", required=True, help="the history_rank bench program")
    parser.add_argument("--repos", default="httpx,cobra,fastify,fd,jq")
    parser.add_argument("--sample", type=int, default=50, help="queries per repository (0 = all)")
    parser.add_argument("--work", default="/tmp/kasava-history-signal")
    parser.add_argument("--head", default="", help="commit to order queries from (default HEAD)")
    args = parser.parse_args()
    args.kasava = os.path.abspath(args.kasava)
    args.rank = os.path.abspath(args.rank)
    os.makedirs(args.work, exist_ok=True)
    results = []
    print(f"{'repo':10} {'queries':>7} {'MRR':>6} {'MRR-noid':>8} {'R@5':>6} {'index s':>8}")
    for name in args.repos.split(","):
        r = evaluate(name, args)
        results.append(r)
        print(f"{r['repo']:10} {r['queries']:7d} {r['mrr']:6.3f} {r['mrr_plain']:8.3f} "
              f"{r['recall5']:6.3f} {r['index_seconds']:8.1f}", flush=True)
    n = len(results)
    print(f"{'mean':10} {'':7} {sum(r['mrr'] for r in results) / n:6.3f} "
          f"{sum(r['mrr_plain'] for r in results) / n:8.3f} {sum(r['recall5'] for r in results) / n:6.3f}")


if __name__ == "__main__":
    main()
