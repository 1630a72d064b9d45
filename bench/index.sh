#!/usr/bin/env bash
# Indexing figures for one repository: full index (from scratch) wall time, files, chunks,
# files/s and MB/s, a no-change refresh, one `ask`, and the index size against the source.
# usage: bench/index.sh [REPO] [BINARY]   (defaults: this repository, build/kasava)
set -euo pipefail
repo=$(cd "${1:-$(dirname "$0")/..}" && pwd)
binary=$(realpath "${2:-$(dirname "$0")/../build/kasava}")
index=$(mktemp -d)/index.db
trap 'rm -rf "$(dirname "$index")"' EXIT

now() { date +%s.%N; }
t0=$(now)
full=$("$binary" --index "$index" index "$repo" --json)
t1=$(now)
"$binary" --index "$index" index "$repo" --json >/dev/null
t2=$(now)
"$binary" --index "$index" ask "open the index file" --no-refresh --json >/dev/null || true
t3=$(now)

python3 - "$full" "$t0" "$t1" "$t2" "$t3" "$index" <<'PY'
import json, os, sys
s = json.loads(sys.argv[1]); t0, t1, t2, t3 = map(float, sys.argv[2:6]); index = sys.argv[6]
status = {}
full, refresh, ask = t1 - t0, t2 - t1, t3 - t2
size = os.path.getsize(index)
src = int(os.popen(f"cd {s['root']} && git ls-files -z 2>/dev/null | xargs -0 cat 2>/dev/null | wc -c").read() or 0)
rows = {"repository": s["root"], "files": s["files"], "indexed": s["indexed"], "chunks": s["chunks"],
        "skipped": s["skipped"], "full_index_s": round(full, 3),
        "files_per_s": round(s["files"] / full, 1), "mb_per_s": round(src / full / 1e6, 2),
        "no_change_refresh_s": round(refresh, 3), "ask_s": round(ask, 3),
        "index_bytes": size, "source_bytes": src,
        "index_to_source": round(size / src, 2) if src else None}
for k, v in rows.items():
    print(f"{k:<22} {v}")
print(json.dumps(rows))
PY
