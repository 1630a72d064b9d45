#!/usr/bin/env python3
"""Retrieval quality of the real kasava binary on CoSQA (../shared/eval/cosqa).

Writes each of the 6,267 functions to its own file (<idx>.py) in a fresh git repository,
runs `kasava index`, then `kasava ask "<query>" --json --limit 100 --mode MODE` for every
query of a split, ranks files by their first hit, and prints MRR, Recall@1 and Recall@10.
Tune on the dev split only; report the test split.

usage: bench/quality.py [--split dev|test|both] [--mode lexical|hybrid|semantic] [--binary build/kasava]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EVAL = os.path.join(ROOT, "..", "shared", "eval", "cosqa")


def build_corpus(work, binary):
    with open(os.path.join(EVAL, "code_idx_map.txt")) as f:
        code_to_idx = json.load(f)
    repo = os.path.join(work, "cosqa")
    os.makedirs(repo)
    for code, idx in code_to_idx.items():
        with open(os.path.join(repo, f"{idx}.py"), "w") as out:
            out.write(code)
    subprocess.run(["git", "init", "-q", repo], check=True)
    started = time.time()
    summary = subprocess.run([binary, "index", "--json"], cwd=repo, check=True,
                             capture_output=True, text=True).stdout
    print(f"indexed {len(code_to_idx)} functions in {time.time() - started:.1f}s: "
          f"{json.loads(summary)['chunks']} chunks", file=sys.stderr)
    return repo


def evaluate(repo, binary, split, mode):
    with open(os.path.join(EVAL, f"cosqa-retrieval-{split}-500.json")) as f:
        items = json.load(f)
    reciprocal_ranks, hits_at_1, hits_at_10 = [], 0, 0
    for item in items:
        result = subprocess.run([binary, "ask", item["doc"], "--json", "--limit", "100",
                                 "--mode", mode, "--no-refresh"],
                                cwd=repo, capture_output=True, text=True)
        if result.returncode not in (0, 1):
            sys.exit(f"kasava ask failed ({result.returncode}): {result.stderr.strip()}")
        ranked = []
        for hit in json.loads(result.stdout)["results"]:
            name = os.path.splitext(os.path.basename(hit["path"]))[0]
            if name not in ranked:
                ranked.append(name)
        gold = str(item["retrieval_idx"])
        rank = ranked.index(gold) + 1 if gold in ranked else None
        reciprocal_ranks.append(1.0 / rank if rank else 0.0)
        hits_at_1 += rank == 1
        hits_at_10 += rank is not None and rank <= 10
    n = len(items)
    return sum(reciprocal_ranks) / n, hits_at_1 / n, hits_at_10 / n


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=["dev", "test", "both"], default="dev")
    parser.add_argument("--mode", default="lexical")
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "kasava"))
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    splits = ["dev", "test"] if args.split == "both" else [args.split]
    with tempfile.TemporaryDirectory(prefix="kasava-cosqa-") as work:
        repo = build_corpus(work, binary)
        rows = []
        for split in splits:
            mrr, r1, r10 = evaluate(repo, binary, split, args.mode)
            rows.append({"split": split, "mode": args.mode, "mrr": round(mrr, 4),
                         "recall@1": round(r1, 4), "recall@10": round(r10, 4)})
    print(f"{'split':<6} {'mode':<9} {'MRR':>6} {'R@1':>6} {'R@10':>6}")
    for row in rows:
        print(f"{row['split']:<6} {row['mode']:<9} {row['mrr']:>6.3f} {row['recall@1']:>6.3f} "
              f"{row['recall@10']:>6.3f}")
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
