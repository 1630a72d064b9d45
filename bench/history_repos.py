#!/usr/bin/env python3
"""Real git histories for `bench/quality.py --repo`, taken from a Debian package.

The repo-level benchmark needs repositories with a real history (commit subjects written by
people, with the files they changed), and only Debian's packages and the npm registry are
reachable here. The Debian package golang-github-go-git-go-git-fixtures-dev (go-git's test
fixtures) embeds, gzip+base64 in one Go file, the histories of three real projects as they
were in 2015-2016:

  go-git     Go,                  247 commits (204 non-merge)  the .git folder, as a tar.gz
  spinnaker  shell, Python, YAML  906 commits (530 non-merge)  a pack file; head from fixtures.go
  rumprun    C, shell             555 commits (540 non-merge)  a pack file; no refs, so the
                                                               head is the newest commit without
                                                               children (the other tip is an
                                                               abandoned WIP branch)

This script extracts them into DIR/go-git, DIR/spinnaker and DIR/rumprun, each a git
repository with its head checked out (already-made ones are left alone):

    apt-get install golang-github-go-git-go-git-fixtures-dev
    bench/history_repos.py /tmp/history
    bench/quality.py --repo /tmp/history/go-git
"""
import base64
import gzip
import os
import re
import subprocess
import sys
import tarfile

PACKAGE = "golang-github-go-git-go-git-fixtures-dev"
DATA = "/usr/share/gocode/src/github.com/go-git/go-git-fixtures/data.go"

# name -> (file in data.go, commit to check out); a .tgz is a whole .git folder.
REPOS = {
    "go-git": ("git-174be6bd4292c18160542ae6dc6704b877b8a01a.tgz", None),
    "spinnaker": ("pack-f2e0a8889a746f7600e07d2246a2e29a72f696be",
                  "06ce06d0fc49646c4de733c45b7788aabad98a6f"),
    "rumprun": ("pack-7861f2632868833a35fe5e4ab94f99638ec5129b",
                "3b91e44996ea6ae1276bce1cc44f38701c53ee6f"),
}


def embedded_file(source, name):
    """The bytes of data/NAME in the esc-generated data.go."""
    match = re.search(r'\t"/data/' + re.escape(name) + r'": \{\n.*?compressed: `\n(.*?)`',
                      source, re.S)
    if not match:
        sys.exit(f"history_repos: {DATA} has no data/{name} (another package version?)")
    return gzip.decompress(base64.b64decode(match.group(1).replace("\n", "")))


def git(repo, *args):
    subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True)


def make_repo(source, target, embedded, head):
    if embedded.endswith(".tgz"):
        os.makedirs(target)
        archive = os.path.join(target, "git.tgz")
        with open(archive, "wb") as out:
            out.write(embedded_file(source, embedded))
        with tarfile.open(archive) as tar:
            safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            tar.extractall(os.path.join(target, ".git"), **safe)
        os.remove(archive)
        git(target, "config", "core.bare", "false")
        git(target, "checkout", "-q", "-f", "HEAD")
        return
    git(os.path.dirname(target), "init", "-q", target)
    pack_folder = os.path.join(target, ".git", "objects", "pack")
    for extension in (".pack", ".idx"):
        with open(os.path.join(pack_folder, embedded + extension), "wb") as out:
            out.write(embedded_file(source, embedded + extension))
    git(target, "update-ref", "refs/heads/master", head)
    git(target, "symbolic-ref", "HEAD", "refs/heads/master")
    git(target, "checkout", "-q", "-f", "master")


def main():
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__.strip())
    folder = os.path.abspath(sys.argv[1])
    if not os.path.exists(DATA):
        sys.exit(f"history_repos: {DATA} is missing: apt-get install {PACKAGE}")
    with open(DATA) as f:
        source = f.read()
    os.makedirs(folder, exist_ok=True)
    for name, (embedded, head) in REPOS.items():
        target = os.path.join(folder, name)
        if not os.path.exists(target):
            make_repo(source, target, embedded, head)
        count = subprocess.run(["git", "-C", target, "rev-list", "--count", "--no-merges", "HEAD"],
                               capture_output=True, text=True, check=True).stdout.strip()
        print(f"{target}: {count} non-merge commits")


if __name__ == "__main__":
    main()
