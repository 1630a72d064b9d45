#!/usr/bin/env python3
"""Retrieval quality of the real kasava binary: the commit set, CoSQA, a repository's history, exact identifiers.

Every figure comes from the binary: each query is one `kasava ask QUERY --json --limit N
--mode MODE --no-refresh` process, and files are ranked by their first hit in its results.
Indexes are built in a work folder (temporary unless --work); no repository you name is
ever changed (the ones that must be checked out elsewhere are cloned first).

Query sets:
  --commit-set         ../shared/eval/commits (see its README): commit subjects of 8 real
                       repositories -> the source files the commit changed. Each query is
                       asked at its commit's parent (checked out in a clone, the index
                       refreshed there), files ranked from `ask --limit 50`. --repos picks
                       the repositories: the tuning part (httpx, cobra, fastify, fd, jq) unless
                       --check or --repos all|checking|NAME,... asks for gson, sinatra, fmt.
  (default)            CoSQA (../shared/eval/cosqa, see its README): 6,267 Python functions,
                       each in its own file <idx>.py; 500 web queries per split, one gold file.
  --repo PATH          "commit subject -> files it changed", from the repository's history
                       (non-merge commits, generic subjects dropped, 1-5 source files that
                       still exist at HEAD); HEAD is indexed from a temporary clone.
  --identifiers PATH   bare symbol names (functions, methods, types) defined in exactly one
                       file of PATH; the gold file is that file. Also counts the queries where
                       hybrid ranks the gold file worse than lexical (the target is none).
  --all                one table: the commit set (tuning part; --check adds the checking
                       part), CoSQA (--split, dev by default) and identifiers on kasava's own
                       tree and on CPython's Lib.

Figures: MRR (mean of 1/rank of the first gold file, 0 when it is not in the ranked files:
top 100, top 50 for the commit set), MRR no-id (the commit set: MRR over the queries that
name no identifier), and Recall@k (share of a query's gold files within the top k files,
averaged over queries; with one gold file per query it is "found within the top k").

Tuning: `--weights 0.5,0.6,0.7` sweeps the hybrid blend (KASAVA_HYBRID_WEIGHT, the ranker's
weight on the semantic feature, 1 - W on the lexical one) and prints hybrid figures per
weight. On CoSQA it runs on the dev split only: tuning on the test split is refused. On the
commit set, tune on the tuning part. `--ranker FILE` ranks with another ranker file
(KASAVA_RANKER); `--features FILE` (commit set) writes every hybrid query's candidates with
their ranking features (KASAVA_RANK_FEATURES), which tools/rank/fit-ranker fits.

examples:
  bench/quality.py --commit-set                            # tuning part, at parents, 3 modes
  bench/quality.py --commit-set --at head --mode hybrid    # quick: indexed once, at the head
  bench/quality.py --commit-set --repos all --json --list  # all 8, every query's ranked files
  bench/quality.py --commit-set --at head --mode hybrid --store postgresql:///kasava
                                                           # local index against the store
  bench/quality.py --all                                   # commit set, CoSQA dev, identifiers
  bench/quality.py --split both --mode all                 # the CoSQA table, dev and test
  bench/quality.py --split dev --weights 0.3,0.5,0.7,0.9   # tune the blend on dev
  bench/quality.py --split test --mode all --weight 0.7    # report test with the chosen weight
  bench/quality.py --repo ~/src/project --commits 200
  bench/quality.py --identifiers ~/src/project --count 200
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COSQA = os.path.normpath(os.path.join(ROOT, "..", "shared", "eval", "cosqa"))
MODES = ("lexical", "semantic", "hybrid")
LIMIT = 100
WEIGHT_ENV = "KASAVA_HYBRID_WEIGHT"
FEATURES_ENV = "KASAVA_RANK_FEATURES"
RANKER_ENV = "KASAVA_RANKER"

# Languages of grammars/languages.tsv that hold code (the rest are documents and configuration).
SOURCE_LANGUAGES = {"python", "javascript", "typescript", "tsx", "go", "rust", "java", "c", "cpp",
                    "csharp", "ruby", "php", "kotlin", "swift", "scala", "lua", "bash", "sql"}


def progress(message):
    print(f"quality: {message}", file=sys.stderr, flush=True)


class Failure(Exception):
    """A fatal problem: printed as `quality: error: ...`, exit status 2."""


# ---------------------------------------------------------------------------------------------
# Running the binary


class Kasava:
    """The kasava binary, with the index, model and hybrid weight every call should use."""

    def __init__(self, binary, index, model=None, jobs=2, limit=LIMIT):
        self.binary = binary
        self.index = index
        self.jobs = jobs
        self.limit = limit
        self.features = False  # --features: ask each hybrid query for its candidates' features
        self.last_features = []
        self.features_by_query = {}
        self.store = None  # --store: the URL asked by the "+store" and "+store-all" runs
        self.store_name = None  # and the name this repository is published under
        self.store_ref = None  # and the ref: one per query at parents, else the default
        if not os.access(binary, os.X_OK):
            raise Failure(f"kasava binary {binary}: not found or not executable (build it, or pass --binary)")
        ask_help = self._help("ask")
        if "--mode" not in ask_help:
            raise Failure(f"{binary}: `ask` has no --mode option (too old a build?)")
        # --model may be a global option or an option of `index` and `ask`: use it where it is.
        self.global_args, self.index_args, self.ask_args = [], [], []
        if model:
            model = os.path.abspath(model)
            if "--model" in self._help(None):
                self.global_args = ["--model", model]
            elif "--model" in ask_help:
                self.ask_args = ["--model", model]
                if "--model" in self._help("index"):
                    self.index_args = ["--model", model]
            else:
                raise Failure(f"{binary}: no --model option (too old a build?)")

    def _help(self, command):
        args = [self.binary] + ([command] if command else []) + ["--help"]
        return subprocess.run(args, capture_output=True, text=True).stdout

    def _base(self):
        return [self.binary, "--index", self.index] + self.global_args

    def build_index(self, target, rebuild=False, quiet=False, publish=False):
        """`kasava index TARGET --json` into self.index (and, with PUBLISH, into self.store
        under self.store_name); returns its summary."""
        started = time.time()
        command = self._base() + ["index", target, "--json"] + self.index_args
        if publish:
            command += ["--store", self.store, "--name", self.store_name]
            command += ["--ref", self.store_ref] if self.store_ref else []
        if rebuild:
            command.append("--rebuild")
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise Failure(f"kasava index {target} failed ({result.returncode}): {result.stderr.strip()}")
        summary = json.loads(result.stdout)
        summary["seconds"] = round(time.time() - started, 1)
        if not quiet:
                progress(f"indexed {target} in {summary['seconds']}s: {summary.get('files')} files, "
                     f"{summary.get('chunks')} chunks")
        return summary

    def ask(self, repo, query, mode, weight=None):
        """The files of `kasava ask` for QUERY, best first (each file at its first hit), and the
        process's (wall, CPU) seconds. CPU time (user + system, from wait4) is the steadier
        figure on a loaded machine."""
        env = dict(os.environ)
        if weight is not None:
            env[WEIGHT_ENV] = str(weight)
        features = None
        if self.features and mode == "hybrid":
            features = tempfile.NamedTemporaryFile(prefix="kasava-features-", delete=False)
            features.close()
            env[FEATURES_ENV] = features.name
        # "MODE+store" asks self.store for this repository alone, "MODE+store-all" across it all.
        mode, _, where = mode.partition("+")
        if where:
            command = ([self.binary] + self.global_args + ["ask", "--json", "--limit", str(self.limit),
                        "--mode", mode, "--store", self.store] +
                       (["--repo", self.store_name] if where == "store" else []) +
                       (["--ref", self.store_ref] if self.store_ref else []) + self.ask_args +
                       ["--", query])
        else:
            command = self._base() + ["ask", "--json", "--limit", str(self.limit), "--mode", mode,
                                      "--no-refresh"] + self.ask_args + ["--", query]
        # Output to files, not pipes, so the process can be reaped with wait4 for its CPU time.
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            started = time.perf_counter()
            process = subprocess.Popen(command, cwd=repo, env=env, stdout=out, stderr=err,
                                       stdin=subprocess.DEVNULL)
            _, status, usage = os.wait4(process.pid, 0)
            seconds = time.perf_counter() - started
            process.returncode = os.waitstatus_to_exitcode(status)
            out.seek(0)
            err.seek(0)
            stdout, stderr = out.read().decode(), err.read().decode(errors="replace")
        cpu = usage.ru_utime + usage.ru_stime
        if features is not None:
            with open(features.name) as lines:
                found = [json.loads(line) for line in lines if line.strip()]
            self.last_features = found
            self.features_by_query[query] = found
            os.unlink(features.name)
        if process.returncode not in (0, 1):  # 1: nothing found
            raise Failure(f"kasava ask --mode {mode} failed ({process.returncode}): "
                          f"{stderr.strip()}")
        files = []
        seen = set()
        for hit in json.loads(stdout)["results"] if stdout.strip() else []:
            # Across a store, another repository's file takes its rank and matches no gold file.
            path = hit["path"] if hit.get("repository", self.store_name) == self.store_name \
                else f"{hit['repository']}:{hit['path']}"
            if path not in seen:
                seen.add(path)
                files.append(path)
        return files, (seconds, cpu)

    def ask_all(self, repo, queries, mode, weight=None):
        """ask() for every query, self.jobs processes at a time: (rankings in query order,
        (wall, CPU) seconds of each)."""
        if not queries:
            return [], []
        first = [self.ask(repo, queries[0], mode, weight)]  # fails fast when the mode is missing
        with concurrent.futures.ThreadPoolExecutor(max_workers=self.jobs) as pool:
            answers = first + list(pool.map(lambda q: self.ask(repo, q, mode, weight), queries[1:]))
        return [files for files, _ in answers], [seconds for _, seconds in answers]


# ---------------------------------------------------------------------------------------------
# Figures


def gold_ranks(ranked, gold):
    """1-based ranks of the gold files in RANKED (files not found are left out)."""
    position = {path: rank for rank, path in enumerate(ranked, 1)}
    return sorted(position[g] for g in gold if g in position)


def score(rankings, golds, ks):
    """MRR and Recall@k over queries: rankings[i] is the ranked file list for golds[i]."""
    n = len(golds)
    figures = {"queries": n, "mrr": 0.0}
    figures.update({f"recall@{k}": 0.0 for k in ks})
    if n == 0:
        return figures
    for ranked, gold in zip(rankings, golds):
        ranks = gold_ranks(ranked, gold)
        figures["mrr"] += 1.0 / ranks[0] if ranks else 0.0
        for k in ks:
            figures[f"recall@{k}"] += sum(r <= k for r in ranks) / len(gold)
    for key in list(figures):
        if key != "queries":
            figures[key] = round(figures[key] / n, 4)
    return figures


def first_rank(ranked, gold):
    ranks = gold_ranks(ranked, gold)
    return ranks[0] if ranks else None


class Evaluation:
    """Runs one query set through every requested mode (and weight), collecting result rows."""

    def __init__(self, kasava, repo, ks, weight=None):
        self.kasava, self.repo, self.ks, self.weight = kasava, repo, ks, weight
        self.rows = []
        self.rankings = {}  # (label, mode, weight) -> rankings, for per-query comparisons

    def run(self, label, queries, golds, mode, weight=None, **extra):
        weight = self.weight if weight is None and mode == "hybrid" else weight
        started = time.time()
        row = {"set": label, "mode": mode}
        if mode == "hybrid" and weight is not None:
            row["weight"] = weight
        row.update(extra)
        try:
            rankings, times = self.kasava.ask_all(self.repo, queries, mode, weight)
        except Failure as error:
            # One mode may be missing from a build (no model yet): report it, go on with the rest.
            row["error"] = str(error)
            progress(f"{label} {mode}: unavailable: {error}")
            self.rows.append(row)
            return None
        row.update(score(rankings, golds, self.ks))
        row["seconds"] = round(time.time() - started, 1)
        if times:
            row["ask_p50_ms"] = round(1000 * sorted(wall for wall, _ in times)[len(times) // 2])
            row["ask_cpu_p50_ms"] = round(1000 * sorted(cpu for _, cpu in times)[len(times) // 2])
        self.rankings[(label, mode, weight)] = rankings
        progress(f"{label} {mode}{'' if weight is None else f' w={weight}'}: "
                 f"MRR {row['mrr']:.3f} ({len(queries)} queries, {row['seconds']}s)")
        self.rows.append(row)
        return rankings


def print_table(rows, ks):
    columns = ["set", "mode", "weight", "queries", "mrr", "mrr_no_ident"] + \
              [f"recall@{k}" for k in ks] + ["ask_p50_ms", "ask_cpu_p50_ms"]
    # Columns no row has are left out (a weight only when one was set, MRR without
    # identifiers only for the commit set).
    columns = [c for c in columns if c in ("set", "mode") or any(c in row for row in rows)]
    heads = {"mrr": "MRR", "mrr_no_ident": "MRR no-id", "queries": "n",
             "ask_p50_ms": "ask p50 ms", "ask_cpu_p50_ms": "cpu ms"}
    heads.update({f"recall@{k}": f"R@{k}" for k in ks})
    cells = [{c: _cell(c, row.get(c)) for c in columns} for row in rows]
    widths = {c: max([len(heads.get(c, c))] + [len(r[c]) for r in cells]) for c in columns}
    print("  ".join(heads.get(c, c).ljust(widths[c]) for c in columns).rstrip())
    for row, cell in zip(rows, cells):
        if "error" in row:
            print("  ".join(cell[c].ljust(widths[c]) for c in columns[:2]) +
                  f"  unavailable: {row['error'][:100]}")
            continue
        print("  ".join(cell[c].ljust(widths[c]) for c in columns).rstrip())


def _cell(column, value):
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:g}" if column == "weight" else f"{value:.3f}"
    return str(value)


def parse_modes(text):
    modes = list(MODES) if text == "all" else [m.strip() for m in text.split(",")]
    for mode in modes:
        if mode not in MODES:
            raise Failure(f"--mode {text}: expected lexical, semantic, hybrid, a comma list or all")
    return modes


def parse_weights(text):
    try:
        weights = [float(w) for w in text.split(",") if w.strip()]
    except ValueError:
        raise Failure(f"--weights {text}: expected numbers separated by commas, e.g. 0.5,0.6,0.7")
    if not weights or any(not 0.0 <= w <= 1.0 for w in weights):
        raise Failure(f"--weights {text}: each weight must be between 0 and 1")
    return weights


def stable_order(key):
    """A deterministic pseudo-random sort key (the same sample on every machine and run)."""
    return hashlib.sha1(key.encode("utf-8", "surrogateescape")).hexdigest()


def read_files_table(index):
    """{path: language} of the files the index holds (skipped files left out)."""
    connection = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
    try:
        return dict(connection.execute("SELECT path, language FROM files WHERE skip_reason = ''"))
    finally:
        connection.close()


# ---------------------------------------------------------------------------------------------
# CoSQA


def cosqa_corpus(work, kasava, rebuild):
    """Writes <idx>.py per function into WORK/cosqa (a git repository) and indexes it."""
    with open(os.path.join(COSQA, "code_idx_map.txt")) as f:
        code_to_idx = json.load(f)
    repo = os.path.join(work, "cosqa")
    if not os.path.isdir(os.path.join(repo, ".git")):
        os.makedirs(repo, exist_ok=True)
        for code, idx in code_to_idx.items():
            with open(os.path.join(repo, f"{idx}.py"), "w") as out:
                out.write(code)
        subprocess.run(["git", "init", "-q", repo], check=True)
    summary = kasava.build_index(repo, rebuild)
    return repo, {"functions": len(code_to_idx), "chunks": summary.get("chunks"),
                  "index_seconds": summary["seconds"]}


def run_cosqa(args, kasava_for, work):
    splits = ["dev", "test"] if args.split == "both" else [args.split]
    if args.weights and splits != ["dev"]:
        raise Failure("--weights tunes the hybrid blend: tuning is done on the dev split only "
                      "(use --split dev; report test once with --weight W)")
    kasava = kasava_for(os.path.join(work, "cosqa.db"))
    repo, corpus = cosqa_corpus(work, kasava, args.rebuild)
    ks = (1, 5, 10)
    evaluation = Evaluation(kasava, repo, ks, args.weight)
    if args.features:
        if splits != ["dev"]:
            raise Failure("--features is for fitting: CoSQA's dev split only (--split dev)")
        kasava.features = True
    listed = []
    for split in splits:
        with open(os.path.join(COSQA, f"cosqa-retrieval-{split}-500.json")) as f:
            items = json.load(f)
        queries = [item["doc"] for item in items]
        golds = [[f"{item['retrieval_idx']}.py"] for item in items]
        label = f"cosqa-{split}"
        if args.weights:
            for weight in args.weights:
                evaluation.run(label, queries, golds, "hybrid", weight)
        else:
            for mode in args.modes:
                evaluation.run(label, queries, golds, mode)
        if args.features:
            with open(args.features, "a") as out:
                for position, (query, gold) in enumerate(zip(queries, golds)):
                    for search in kasava.features_by_query.get(query, []):
                        out.write(json.dumps({"repository": label, "position": position, "query": query,
                                              "gold": gold, "identifiers": has_identifier(query),
                                              "candidates": search["candidates"]}) + "\n")
        if args.list:
            sample = [{"split": split, "query": q, "gold": g} for q, g in zip(queries, golds)]
            listed += _per_query(evaluation, sample, label)
    result = {"benchmark": "cosqa", "corpus": corpus, "rows": evaluation.rows}
    if args.list:
        result["queries"] = listed
    return result, ks


# ---------------------------------------------------------------------------------------------
# Repository history: "commit subject -> files it changed"

# Words that say nothing about where a change is; a subject needs two other words to be a query.
GENERIC_WORDS = {
    "fix", "fixes", "fixed", "fixing", "wip", "update", "updates", "updated", "bump", "bumped",
    "release", "released", "version", "versions", "merge", "merged", "typo", "typos", "cleanup",
    "clean", "minor", "misc", "small", "change", "changes", "changelog", "readme", "doc", "docs",
    "lint", "format", "formatting", "style", "refactor", "refactoring", "test", "tests",
    "initial", "commit", "revert", "tweak", "tweaks", "stuff", "more", "some", "and", "the",
    "for", "to", "of", "in", "on", "a", "an", "add", "added", "remove", "removed", "again",
    "prepare", "dev", "bugfix", "patch", "todo", "comment", "comments", "whitespace", "ci",
}
VERSION_BUMP = re.compile(r"\b(bump|release|version|prepare)\b.*\bv?\d+(\.\d+)+|^v?\d+(\.\d+)+",
                          re.IGNORECASE)
PULL_REQUEST_SUFFIX = re.compile(r"\s*\((#|gh-|GH-)\d+\)\s*$")


def usable_subject(subject):
    """The subject as a query, or None when it is too short or generic to name a place."""
    subject = PULL_REQUEST_SUFFIX.sub("", subject).strip()
    if len(subject) < 12 or subject.lower().startswith(("merge ", "revert ")):
        return None
    if VERSION_BUMP.search(subject):
        return None
    words = [w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9_]*", subject)]
    if sum(len(w) >= 3 and w not in GENERIC_WORDS for w in words) < 2:
        return None
    return subject


def history_queries(clone, sources, count):
    """Deterministic sample of (subject, [changed source files existing at HEAD]) of CLONE."""
    log = subprocess.run(
        ["git", "-c", "core.quotepath=off", "log", "--no-merges", "--format=%x1e%H%x1f%s",
         "--name-only", "HEAD"],
        cwd=clone, capture_output=True, text=True, check=True, errors="surrogateescape").stdout
    extensions = {os.path.splitext(p)[1] for p in sources if os.path.splitext(p)[1]}
    candidates, commits, generic = [], 0, 0
    for record in log.split("\x1e")[1:]:
        header, _, names = record.partition("\n")
        commit, _, subject = header.partition("\x1f")
        commits += 1
        changed = [n for n in names.splitlines() if n.strip()]
        query = usable_subject(subject)
        if query is None:
            generic += 1
            continue
        # Source-looking paths, deleted ones included: a commit that touched many is too broad.
        touched = [p for p in changed if p in sources or
                   (os.path.splitext(p)[1] in extensions and p not in sources)]
        gold = sorted(p for p in changed if p in sources)
        if 1 <= len(gold) <= 5 and len(touched) <= 5:
            candidates.append({"commit": commit, "query": query, "gold": gold})
    candidates.sort(key=lambda c: stable_order(c["commit"]))
    stats = {"commits": commits, "generic_subjects": generic, "usable": len(candidates)}
    return candidates[:count], stats


def run_repo(args, kasava_for, work):
    source = os.path.abspath(args.repo)
    if subprocess.run(["git", "-C", source, "rev-parse", "--verify", "-q", "HEAD"],
                      capture_output=True).returncode != 0:
        raise Failure(f"--repo {source}: not a git repository with commits")
    clone = os.path.join(work, "repo")
    if not os.path.isdir(clone):
        progress(f"cloning {source} (HEAD) into {clone}")
    # Checked out at the source's HEAD even when a run at parents was cut short in --work.
    prepare_clone(source, clone, git(source, "rev-parse", "HEAD").strip())
    kasava = kasava_for(os.path.join(work, "repo.db"))
    summary = kasava.build_index(clone, args.rebuild)
    sources = {p for p, language in read_files_table(kasava.index).items()
               if language in SOURCE_LANGUAGES}
    sample, stats = history_queries(clone, sources, args.commits)
    progress(f"{stats['commits']} non-merge commits, {stats['generic_subjects']} generic "
             f"subjects, {stats['usable']} usable; sampled {len(sample)}")
    ks = (1, 5, 10)
    if args.at == "parents":
        rows, listed = repo_at_parents(args, source, clone, sample, work)
        result = {"benchmark": "repo", "repository": source, "head": _head(clone), "at": "parents",
                  "source_files": len(sources), **stats, "sampled": len(sample), "rows": rows}
        if args.list:
            result["queries"] = listed
        return result, ks
    evaluation = Evaluation(kasava, clone, ks, args.weight)
    queries = [c["query"] for c in sample]
    golds = [c["gold"] for c in sample]
    label = "repo"
    modes = ["hybrid"] if args.weights else args.modes
    for weight in (args.weights or [None]):
        for mode in modes:
            evaluation.run(label, queries, golds, mode, weight)
    result = {"benchmark": "repo", "repository": source, "head": _head(clone), "at": "head",
              "source_files": len(sources), "chunks": summary.get("chunks"), **stats,
              "sampled": len(sample), "rows": evaluation.rows}
    if args.list:
        result["queries"] = _per_query(evaluation, sample, "repo")
    return result, ks


def repo_at_parents(args, source, clone, sample, work):
    """--repo at parents: each sampled commit asked at its parent, as the commit set is; gold
    files the commit added (absent at the parent) are dropped, and so are queries left with none."""
    head = _head(clone)
    dates = commit_dates(clone, [c["commit"] for c in sample])
    items = []
    for position, candidate in enumerate(sample):
        when, parent = dates.get(candidate["commit"], (0, None))
        if parent is None:
            continue
        present = set(git(clone, "ls-tree", "-r", "--name-only", parent, "--",
                          *candidate["gold"]).splitlines())
        files = [g for g in candidate["gold"] if g in present]
        if files:
            items.append({"query": candidate["query"], "files": files, "commit": candidate["commit"],
                          "parent": parent, "time": when, "position": position,
                          "identifiers": has_identifier(candidate["query"])})
    items.sort(key=lambda item: (item["time"], item["position"]))
    progress(f"{len(items)} of {len(sample)} queries keep a gold file at their parent")
    clones = [clone] + [os.path.join(work, f"repo-{i}") for i in range(1, max(1, args.jobs))]
    for extra in clones[1:]:
        prepare_clone(source, extra, head)
    runs = [("hybrid", w) for w in args.weights] if args.weights else \
        [(mode, args.weight if mode == "hybrid" else None) for mode in args.modes]
    ranked_of, times, errors, _ = ask_commit_queries(args, "repo", clones, items, runs, LIMIT)
    checkout(clone, head)
    rows = commit_rows("repo", "repo", "parents", items, runs, ranked_of, times, errors)
    return rows, commit_listing("repo", items, runs, ranked_of)


def _head(repo):
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True,
                          text=True).stdout.strip()


def _per_query(evaluation, sample, label):
    """Each query with the first gold rank per mode (for --list)."""
    out = []
    for i, item in enumerate(sample):
        ranks = {}
        for (set_label, mode, weight), rankings in evaluation.rankings.items():
            if set_label == label:
                key = mode if weight is None else f"{mode}@{weight}"
                ranks[key] = first_rank(rankings[i], item["gold"])
        out.append({**item, "ranks": ranks})
    return out


# ---------------------------------------------------------------------------------------------
# Exact identifiers

DEFINITION_KINDS = ("function", "method", "class", "struct", "interface", "type", "enum",
                    "trait", "module", "macro", "constructor", "impl", "record", "object")
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Code nobody searches by name in this repository: vendored copies and test inputs.
FOREIGN_FOLDERS = re.compile(r"(^|/)(vendor|third_party|node_modules|testdata)/")


def identifier_queries(index, count, min_length):
    """Deterministic sample of symbols (case-insensitively) defined in exactly one file."""
    connection = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
    try:
        rows = connection.execute(
            "SELECT chunks.symbol, files.path, files.language FROM chunks "
            "JOIN files ON files.id = chunks.file_id "
            f"WHERE chunks.kind IN ({','.join('?' * len(DEFINITION_KINDS))}) "
            "AND chunks.symbol != ''", DEFINITION_KINDS).fetchall()
    finally:
        connection.close()
    files_of, spelling = {}, {}
    for symbol, path, language in rows:
        key = symbol.lower()
        files_of.setdefault(key, set()).add(path)
        if language in SOURCE_LANGUAGES and IDENTIFIER.match(symbol) and \
                len(symbol) >= min_length and not FOREIGN_FOLDERS.search(path):
            spelling.setdefault(key, symbol)
    unique = [{"query": spelling[key], "gold": sorted(paths)}
              for key, paths in files_of.items() if len(paths) == 1 and key in spelling]
    unique.sort(key=lambda q: stable_order(q["query"] + "\0" + q["gold"][0]))
    return unique[:count], {"definitions": len(rows), "unique_symbols": len(unique)}


def run_identifiers(args, kasava_for, work):
    repo = os.path.abspath(args.identifiers)
    if not os.path.isdir(repo):
        raise Failure(f"--identifiers {repo}: not a folder")
    kasava = kasava_for(os.path.join(work, "identifiers.db"))
    summary = kasava.build_index(repo, args.rebuild)
    sample, stats = identifier_queries(kasava.index, args.count, args.min_length)
    progress(f"{stats['unique_symbols']} symbols defined in exactly one file; sampled {len(sample)}")
    ks = (1, 10)
    evaluation = Evaluation(kasava, repo, ks, args.weight)
    queries = [q["query"] for q in sample]
    golds = [q["gold"] for q in sample]
    label = "identifiers"
    modes = list(args.modes)
    if args.weights:
        modes = ["lexical", "hybrid"]
    for mode in modes:
        for weight in (args.weights if args.weights and mode == "hybrid" else [None]):
            evaluation.run(label, queries, golds, mode, weight)
    result = {"benchmark": "identifiers", "repository": repo, "chunks": summary.get("chunks"),
              **stats, "sampled": len(sample), "rows": evaluation.rows}
    # The target: hybrid never ranks the gold file worse than lexical.
    lexical = evaluation.rankings.get((label, "lexical", None))
    comparisons = []
    for (set_label, mode, weight), rankings in evaluation.rankings.items():
        if mode == "lexical" or lexical is None:
            continue
        worse = []
        for i, item in enumerate(sample):
            before, after = first_rank(lexical[i], item["gold"]), first_rank(rankings[i], item["gold"])
            if before is not None and (after is None or after > before):
                worse.append({"query": item["query"], "gold": item["gold"][0],
                              "lexical_rank": before, f"{mode}_rank": after})
        comparisons.append({"mode": mode, "weight": weight, "worse_than_lexical": len(worse),
                            "queries": worse})
    result["worse_than_lexical"] = comparisons
    if args.list:
        result["queries"] = _per_query(evaluation, sample, label)
    return result, ks


def print_comparisons(comparisons, listed_modes=None):
    """The queries each mode ranks worse than lexical; only counted for modes not in
    LISTED_MODES (None: list every mode's)."""
    for comparison in comparisons:
        name = comparison["mode"] + ("" if comparison["weight"] is None
                                     else f" (weight {comparison['weight']})")
        listed = listed_modes is None or comparison["mode"] in listed_modes
        print(f"\n{name} ranks the gold file worse than lexical for "
              f"{comparison['worse_than_lexical']} queries" +
              (":" if comparison["queries"] and listed else " (target: 0)"
               if comparison["mode"] == "hybrid" else ""))
        for q in comparison["queries"] if listed else []:
            other = q[f"{comparison['mode']}_rank"]
            print(f"  {q['query']:<40} {q['gold']}  lexical #{q['lexical_rank']}, "
                  f"{comparison['mode']} {'#' + str(other) if other else 'not in top 100'}")


# ---------------------------------------------------------------------------------------------
# The commit set: ../shared/eval/commits, "which files do I change for X?" in 8 repositories

COMMITS = os.path.normpath(os.path.join(ROOT, "..", "shared", "eval", "commits"))
# Where the clones of the 8 repositories are looked for by default (one folder per name).
SOURCES = os.path.normpath(os.path.join(ROOT, "..", "eval-repos"))
TUNING = ("httpx", "cobra", "fastify", "fd", "jq")
CHECKING = ("gson", "sinatra", "fmt")
COMMIT_LIMIT = 50  # the protocol ranks the files of `ask --limit 50`; a gold file beyond is 0
# A query "with identifiers" names code: camelCase (a lower-case letter then an upper-case
# one: parseConfig, RouterGroup), snake_case (a letter or digit, '_', a letter or digit), a dot,
# a parenthesis or a backtick anywhere. The README's "MRR without identifiers" is over the rest.
IDENTIFIER_IN_QUERY = re.compile(r"[a-z][A-Z]|[A-Za-z0-9]_[A-Za-z0-9]|[.()`]")


def has_identifier(query):
    return IDENTIFIER_IN_QUERY.search(query) is not None


def read_commit_set():
    """[(name, owner/name, head, query count)] of repos.txt, in its order."""
    path = os.path.join(COMMITS, "repos.txt")
    try:
        with open(path) as f:
            lines = [line.split() for line in f if line.strip()]
    except OSError as error:
        raise Failure(f"{path}: {error.strerror}")
    return [(full.split("/")[1], full, head, int(count)) for full, head, count in lines]


def choose_repos(text, check, known):
    """The names --repos asks for: tuning (default), checking, all, or a comma list."""
    if text is None:
        text = "tuning"
    names = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        if part == "tuning":
            names += TUNING
        elif part == "checking":
            names += CHECKING
        elif part == "all":
            names += TUNING + CHECKING
        elif part in known:
            names.append(part)
        else:
            raise Failure(f"--repos {text}: unknown repository \"{part}\" "
                          f"(expected tuning, checking, all or names of {', '.join(known)})")
    if check:
        names += CHECKING
    return list(dict.fromkeys(names))


def git(repo, *args, check=True):
    result = subprocess.run(["git", "-C", repo] + list(args), capture_output=True, text=True,
                            errors="surrogateescape")
    if check and result.returncode != 0:
        raise Failure(f"git {' '.join(args[:3])} in {repo}: {result.stderr.strip() or result.returncode}")
    return result.stdout


def prepare_clone(source, clone, head):
    """A clone of SOURCE (never written to) in CLONE, checked out at HEAD."""
    if not os.path.isdir(os.path.join(clone, ".git")):
        subprocess.run(["git", "clone", "-q", "--no-checkout", source, clone], check=True)
    elif git(clone, "cat-file", "-t", head, check=False).strip() != "commit":
        git(clone, "fetch", "-q", "origin", check=False)  # the source moved on since
    if git(clone, "cat-file", "-t", head, check=False).strip() != "commit":
        raise Failure(f"{source}: has no commit {head} (clone it and fetch that commit)")
    checkout(clone, head)


def checkout(clone, commit):
    git(clone, "checkout", "-q", "-f", "--detach", commit)
    git(clone, "clean", "-q", "-ffdx")


def commit_queries(name, clone):
    """The queries of NAME.jsonl, each with its parent and commit time, oldest first."""
    path = os.path.join(COMMITS, f"{name}.jsonl")
    with open(path) as f:
        items = [json.loads(line) for line in f if line.strip()]
    dates = commit_dates(clone, [item["commit"] for item in items])
    for position, item in enumerate(items):
        if not dates.get(item["commit"], (0, None))[1]:
            raise Failure(f"{clone}: no parent of {item['commit']} (a query of {path})")
        when, parent = dates[item["commit"]]
        item.update({"parent": parent, "time": when, "position": position,
                     "identifiers": has_identifier(item["query"])})
    # Oldest first: consecutive parents are close, so each refresh reads a small difference.
    return sorted(items, key=lambda item: (item["time"], item["position"]))


def commit_dates(clone, commits):
    """{commit: (committer time, first parent or None)} of COMMITS, in one git call."""
    out = {}
    for line in git(clone, "show", "-s", "--format=%H %ct %P", *commits).splitlines():
        fields = line.split()
        if len(fields) >= 2:
            out[fields[0]] = (int(fields[1]), fields[2] if len(fields) > 2 else None)
    return out


def shard(items, parts):
    """ITEMS (in order) cut into PARTS contiguous runs of near-equal length."""
    parts = max(1, min(parts, len(items)))
    size, extra = divmod(len(items), parts)
    runs, start = [], 0
    for i in range(parts):
        end = start + size + (i < extra)
        runs.append(items[start:end])
        start = end
    return runs


def commit_figures(items, ranked_of, run_key):
    """MRR, MRR over queries without identifiers, Recall@5 (and R@1, R@10) for one run."""
    rankings = [ranked_of[(item["position"], run_key)] for item in items]
    golds = [item["files"] for item in items]
    figures = score(rankings, golds, (1, 5, 10))
    plain = [(r, g) for r, g, item in zip(rankings, golds, items) if not item["identifiers"]]
    # None when every query names an identifier (shown as "-", left out of means).
    figures["mrr_no_ident"] = score([r for r, _ in plain], [g for _, g in plain], ())["mrr"] \
        if plain else None
    figures["queries_no_ident"] = len(plain)
    return figures


def ask_commit_queries(args, name, clones, items, runs, limit):
    """Asks every item's query for every (mode, weight) of RUNS, each at its commit's parent
    (checked out in one of CLONES, whose index is refreshed first), or all at the head as the
    clones stand when args.at is "head". Returns ({(position, run): ranked files}, [(run,
    (wall, cpu))], {run: error}, [refresh seconds])."""
    ranked_of, times, errors = {}, [], {}
    refresh_seconds = []
    features_of = {}

    def kasava_at(clone):
        kasava = Kasava(args.binary, clone + ".db", args.model, 1, limit)
        kasava.features = bool(args.features)
        kasava.store, kasava.store_name = args.store, name
        return kasava

    def ask_runs(kasava, clone, item):
        for mode, weight in runs:
            if (mode, weight) in errors:
                continue
            try:
                files, spent = kasava.ask(clone, item["query"], mode, weight)
            except Failure as error:
                errors[(mode, weight)] = str(error)
                progress(f"{name} {mode}: unavailable: {error}")
                continue
            ranked_of[(item["position"], (mode, weight))] = files
            if kasava.features and mode == "hybrid":
                features_of[item["position"]] = kasava.last_features
            times.append(((mode, weight), spent))

    if args.at == "head":
        kasava = kasava_at(clones[0])
        kasava.jobs = max(1, args.jobs)
        summary = kasava.build_index(clones[0], args.rebuild, quiet=True)
        refresh_seconds.append(summary["seconds"])
        with concurrent.futures.ThreadPoolExecutor(max_workers=kasava.jobs) as pool:
            list(pool.map(lambda item: ask_runs(kasava, clones[0], item), items))
    else:
        def walk(clone, run):
            kasava = kasava_at(clone)
            first = True
            for item in run:
                checkout(clone, item["parent"])
                # With --store, each parent is published as a ref of its own and asked there.
                kasava.store_ref = f"parent-{item['parent'][:12]}" if args.store else None
                summary = kasava.build_index(clone, args.rebuild and first, quiet=True,
                                             publish=bool(args.store))
                first = False
                refresh_seconds.append(summary["seconds"])
                ask_runs(kasava, clone, item)

        with concurrent.futures.ThreadPoolExecutor(max_workers=len(clones)) as pool:
            for future in [pool.submit(walk, clone, run)
                           for clone, run in zip(clones, shard(items, len(clones)))]:
                future.result()
    if args.features:
        with open(args.features, "a") as out:
            for item in sorted(items, key=lambda i: i["position"]):
                for search in features_of.get(item["position"], []):
                    out.write(json.dumps({"repository": name, "position": item["position"],
                                          "query": item["query"], "gold": item["files"],
                                          "identifiers": item["identifiers"],
                                          "candidates": search["candidates"]}) + "\n")
    return ranked_of, times, errors, refresh_seconds


def run_commit_repo(args, name, head, sources, work, runs):
    """Every query of one repository through every (mode, weight) of RUNS; per-run rows."""
    source = os.path.join(sources, name)
    if not os.path.isdir(source):
        raise Failure(f"{source}: no clone of {name} (git clone it and check out {head[:12]}, "
                      f"or pass --sources DIR)")
    parts = 1 if args.at == "head" else max(1, args.jobs)
    clones = [os.path.join(work, f"{name}-{i}") for i in range(parts)]
    for clone in clones:
        prepare_clone(source, clone, head)
    items = commit_queries(name, clones[0])
    started = time.time()
    ranked_of, times, errors, refresh_seconds = ask_commit_queries(
        args, name, clones, items, runs, COMMIT_LIMIT)
    seconds = round(time.time() - started, 1)
    rows = commit_rows(f"commits:{name}", name, args.at, items, runs, ranked_of, times, errors)
    refresh_seconds.sort()
    progress(f"{name} at {args.at}: {len(items)} queries in {seconds}s "
             f"(refresh p50 {refresh_seconds[len(refresh_seconds) // 2]:.2f}s); " +
             ", ".join(f"{r['mode']}{'' if r.get('weight') is None else '@' + str(r['weight'])} "
                       f"MRR {r['mrr']:.3f}" for r in rows if "error" not in r))
    listed = commit_listing(name, items, runs, ranked_of) if args.list else []
    return rows, listed, seconds


def commit_rows(label, name, at, items, runs, ranked_of, times, errors):
    """One row of figures per (mode, weight) of RUNS."""
    rows = []
    for mode, weight in runs:
        row = {"set": label, "repository": name, "mode": mode, "at": at}
        if weight is not None:
            row["weight"] = weight
        if (mode, weight) in errors:
            row["error"] = errors[(mode, weight)]
            rows.append(row)
            continue
        row.update(commit_figures(items, ranked_of, (mode, weight)))
        spent = [s for key, s in times if key == (mode, weight)]
        if spent:
            row["ask_p50_ms"] = round(1000 * sorted(w for w, _ in spent)[len(spent) // 2])
            row["ask_cpu_p50_ms"] = round(1000 * sorted(c for _, c in spent)[len(spent) // 2])
        rows.append(row)
    return rows


def commit_listing(name, items, runs, ranked_of):
    """--list: every query with its gold files, first gold rank and ranked files per run."""
    listed = []
    for item in sorted(items, key=lambda i: i["position"]):
        entry = {"repository": name, "query": item["query"], "gold": item["files"],
                 "commit": item["commit"], "parent": item["parent"],
                 "identifiers": item["identifiers"], "ranks": {}, "ranked": {}}
        for mode, weight in runs:
            key = mode if weight is None else f"{mode}@{weight}"
            files = ranked_of.get((item["position"], (mode, weight)))
            if files is not None:
                entry["ranks"][key] = first_rank(files, item["files"])
                entry["ranked"][key] = files
        listed.append(entry)
    return listed


def mean_rows(rows, names, label, runs):
    """Means over repositories (each repository counts once) of each run, when all ran."""
    out = []
    for mode, weight in runs:
        mine = [r for r in rows if r.get("repository") in names and r["mode"] == mode and
                r.get("weight") == weight and "error" not in r]
        if len(mine) != len(names) or not names:
            continue
        row = {"set": f"commits:{label}", "mode": mode, "at": mine[0]["at"],
               "repositories": len(mine), "queries": sum(r["queries"] for r in mine)}
        if weight is not None:
            row["weight"] = weight
        for key in ("mrr", "mrr_no_ident", "recall@1", "recall@5", "recall@10"):
            values = [r[key] for r in mine if r.get(key) is not None]
            row[key] = round(sum(values) / len(values), 4) if values else None
        row["queries_no_ident"] = sum(r["queries_no_ident"] for r in mine)
        out.append(row)
    return out


def run_commit_set(args, work):
    known = read_commit_set()
    by_name = {name: (full, head, count) for name, full, head, count in known}
    names = choose_repos(args.repos, args.check, list(by_name))
    if args.weights:
        runs = [("hybrid", w) for w in args.weights]
    else:
        runs = [(mode, args.weight if mode == "hybrid" else None) for mode in args.modes]
    sources = os.path.abspath(args.sources or SOURCES)
    rows, listed, started = [], [], time.time()
    if args.store and args.at == "parents":
        runs += [(f"{mode}+store", weight) for mode, weight in list(runs)]
    elif args.store:
        # Every repository is in the store before the first question across all of them.
        runs += [(f"{mode}+{where}", weight) for where in ("store", "store-all")
                 for mode, weight in list(runs)]
        for name in names:
            full, head, _ = by_name[name]
            clone = os.path.join(work, f"{name}-0")
            prepare_clone(os.path.join(sources, name), clone, head)
            kasava = Kasava(args.binary, clone + ".db", args.model)
            kasava.store, kasava.store_name = args.store, name
            summary = kasava.build_index(clone, args.rebuild, quiet=True, publish=True)
            progress(f"{name}: indexed and published in {summary['seconds']}s "
                     f"({summary.get('chunks')} chunks)")
    for name in names:
        full, head, count = by_name[name]
        progress(f"{name} ({full} at {head[:12]}): {count} queries at "
                 f"{'each parent' if args.at == 'parents' else 'the head'}")
        repo_rows, repo_listed, _ = run_commit_repo(args, name, head, sources, work, runs)
        rows += repo_rows
        listed += repo_listed
    ordered = []
    for mode, weight in runs:
        ordered += [r for r in rows if r["mode"] == mode and r.get("weight") == weight]
    for label, part in (("tuning", [n for n in TUNING if n in names]),
                        ("checking", [n for n in CHECKING if n in names]),
                        ("all", names)):
        if label == "all" and (len(names) != len(TUNING) + len(CHECKING)):
            continue
        if label != "all" and len(part) != len(TUNING if label == "tuning" else CHECKING):
            continue
        ordered += mean_rows(rows, part, label, runs)
    whole_parts = (list(TUNING), list(CHECKING), list(TUNING + CHECKING))
    if len(names) > 1 and sorted(names) not in [sorted(p) for p in whole_parts]:
        ordered += mean_rows(rows, names, "mean", runs)  # a subset: its own mean, labelled so
    result = {"benchmark": "commits", "at": args.at, "sources": sources, "repositories": names,
              "seconds": round(time.time() - started, 1), "rows": ordered}
    if args.list:
        result["queries"] = listed
    return result, (1, 5, 10)


# ---------------------------------------------------------------------------------------------
# Everything in one table


def newest_cpython_lib():
    found = []
    for name in os.listdir("/usr/lib"):
        match = re.fullmatch(r"python3\.(\d+)", name)
        if match and os.path.isfile(os.path.join("/usr/lib", name, "os.py")):
            found.append((int(match.group(1)), os.path.join("/usr/lib", name)))
    if not found:
        raise Failure("no CPython Lib in /usr/lib/python3.N (pass --cpython PATH)")
    return max(found)[1]


def run_everything(args, kasava_for, work):
    """--all: the commit set, CoSQA and exact identifiers, each in its own work folder."""
    rows, parts = [], []

    def folder(name):
        path = os.path.join(work, name)
        os.makedirs(path, exist_ok=True)
        return path

    result, _ = run_commit_set(args, folder("commits"))
    rows += result.pop("rows")
    parts.append({"label": "commits", **result})
    result, _ = run_cosqa(args, kasava_for, folder("cosqa"))
    rows += result.pop("rows")
    parts.append({"label": "cosqa", **result})
    for label, path in (("kasava", ROOT), ("cpython-lib", args.cpython or newest_cpython_lib())):
        progress(f"identifiers of {path}")
        args.identifiers = path
        result, _ = run_identifiers(args, kasava_for, folder(f"identifiers-{label}"))
        args.identifiers = None
        for row in result.pop("rows"):
            row["set"] = f"identifiers:{label}"
            rows.append(row)
        parts.append({"label": f"identifiers:{label}", **result})
    return {"benchmark": "all", "rows": rows, "parts": parts}, (1, 5, 10)


# ---------------------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--repo", metavar="PATH", help="commit subject -> changed files of PATH's history")
    target.add_argument("--identifiers", metavar="PATH", help="exact-identifier queries built from PATH")
    target.add_argument("--commit-set", action="store_true",
                        help="the commit set of ../shared/eval/commits (tuning part unless --check/--repos)")
    target.add_argument("--all", action="store_true",
                        help="one table: the commit set, CoSQA (--split) and exact identifiers on "
                             "kasava's tree and CPython's Lib")
    parser.add_argument("--repos", metavar="NAMES",
                        help="commit set: tuning (default), checking, all, or a comma list of names")
    parser.add_argument("--check", action="store_true",
                        help="commit set: add the checking part (gson, sinatra, fmt); read it rarely")
    parser.add_argument("--sources", metavar="DIR",
                        help="commit set: clones of the repositories, DIR/<name> (default: ../eval-repos "
                             "beside this checkout); only read, cloned again into the work folder")
    parser.add_argument("--at", choices=["parents", "head"], default="parents",
                        help="commit set and --repo: index each query at its commit's parent "
                             "(the protocol, default) or once at the head (faster; leaks the "
                             "query's own commit)")
    parser.add_argument("--store", metavar="URL",
                        help="commit set: publish each repository into this PostgreSQL store "
                             "too (under its short name) and add runs asking it: MODE+store "
                             "(--repo NAME) and, at the head, MODE+store-all (every repository); "
                             "at parents each parent is published and asked as a ref of its own")
    parser.add_argument("--cpython", metavar="PATH",
                        help="--all: CPython's Lib for the identifiers (default: the newest /usr/lib/python3.N)")
    parser.add_argument("--split", choices=["dev", "test", "both"], default="dev",
                        help="CoSQA split (default: dev)")
    parser.add_argument("--mode", default="all",
                        help="lexical, semantic, hybrid, a comma list, or all (default: all)")
    parser.add_argument("--weights", metavar="W,W,...",
                        help="sweep KASAVA_HYBRID_WEIGHT and report hybrid per weight (CoSQA: dev only)")
    parser.add_argument("--weight", type=float, metavar="W",
                        help="set KASAVA_HYBRID_WEIGHT for the hybrid runs (a weight chosen on dev)")
    parser.add_argument("--commits", type=int, default=200, help="--repo: queries to sample (default 200)")
    parser.add_argument("--count", type=int, default=200, help="--identifiers: queries to sample (default 200)")
    parser.add_argument("--min-length", type=int, default=4,
                        help="--identifiers: shortest symbol to use (default 4)")
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "kasava"),
                        help="the kasava binary to measure (default: build/kasava)")
    parser.add_argument("--model", metavar="PATH", help="passed through to kasava as --model PATH")
    parser.add_argument("--jobs", type=int, default=2,
                        help="kasava processes at a time (default 2); at parents, the queries "
                             "are cut into JOBS runs, each walked in its own clone")
    parser.add_argument("--work", metavar="DIR",
                        help="keep the corpus, clone and index in DIR and reuse them (default: a temporary folder)")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the index in --work from scratch")
    parser.add_argument("--features", metavar="FILE",
                        help="commit set or CoSQA dev: write every hybrid query's candidates with "
                             "their ranking features to FILE (JSON lines, for tools/rank/fit-ranker)")
    parser.add_argument("--ranker", metavar="FILE",
                        help="rank hybrid queries with FILE's weights (models/ranker.tsv's format)")
    parser.add_argument("--list", action="store_true", help="JSON: include every query with its ranks")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of a table")
    args = parser.parse_args()
    try:
        args.modes = parse_modes(args.mode)
        if args.ranker:
            if not os.path.isfile(args.ranker):
                raise Failure(f"--ranker {args.ranker}: no such file")
            os.environ[RANKER_ENV] = os.path.abspath(args.ranker)
        if args.features:
            args.features = os.path.abspath(args.features)
            open(args.features, "w").close()
        args.weights = parse_weights(args.weights) if args.weights else None
        if args.store and not args.commit_set:
            raise Failure("--store: only with --commit-set")
        if args.weight is not None and not 0.0 <= args.weight <= 1.0:
            raise Failure(f"--weight {args.weight}: must be between 0 and 1")
        if args.weights and args.weight is not None:
            raise Failure("--weights and --weight: choose one")
        if args.weight is not None and os.environ.get(WEIGHT_ENV):
            progress(f"note: --weight {args.weight} overrides {WEIGHT_ENV}={os.environ[WEIGHT_ENV]}")
        if args.weights is None and os.environ.get(WEIGHT_ENV):
            progress(f"note: {WEIGHT_ENV}={os.environ[WEIGHT_ENV]} is set and used by hybrid runs")
            if not args.repo and not args.identifiers and args.split != "dev":
                progress("note: make sure that weight was chosen on the dev split")
        binary = os.path.abspath(args.binary)
        args.binary = binary
        if args.all and args.weights:
            raise Failure("--all and --weights: sweep the blend on one set at a time")
        if args.jobs < 1:
            raise Failure(f"--jobs {args.jobs}: must be at least 1")

        def kasava_for(index):
            return Kasava(binary, index, args.model, args.jobs)

        def run(work):
            if args.all:
                return run_everything(args, kasava_for, work)
            if args.commit_set:
                return run_commit_set(args, work)
            if args.repo:
                return run_repo(args, kasava_for, work)
            if args.identifiers:
                return run_identifiers(args, kasava_for, work)
            return run_cosqa(args, kasava_for, work)

        if args.work:
            os.makedirs(args.work, exist_ok=True)
            result, ks = run(os.path.abspath(args.work))
        else:
            with tempfile.TemporaryDirectory(prefix="kasava-quality-") as work:
                result, ks = run(work)
    except Failure as error:
        print(f"quality: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    result["binary"] = binary
    if args.model:
        result["model"] = os.path.abspath(args.model)
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print_table(result["rows"], ks)
    if "worse_than_lexical" in result:
        print_comparisons(result["worse_than_lexical"])
    for part in result.get("parts", []):
        if "worse_than_lexical" in part:
            print(f"\n{part['label']}:", end="")
            print_comparisons(part["worse_than_lexical"], ("hybrid",))
    return 0


if __name__ == "__main__":
    sys.exit(main())
