#!/usr/bin/env bash
# Checks that the README, CONTRIBUTING.md, ARCHITECTURE.md and docs/*.md point at things that exist:
#   - every relative Markdown link `[text](path)` resolves (from the file's own folder), and its
#     `#anchor`, when it has one, names a heading of the target;
#   - every path in backticks that names a file or folder of the repository (`src/...`,
#     `docs/...`, `tests/...`, `scripts/...`, `benches/...`, `examples/...`, `ffi/...`,
#     `include/...`, `kernels/...`, `fuzz/...`, `packaging/...`, `contrib/...`) exists.
# Prints one line per broken reference (FILE:LINE: what) and exits 1 if there is any.
# Usage, from the repository root: bash scripts/check-doc-links.sh [FILE.md ...]
set -u
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then set -- README.md CONTRIBUTING.md ARCHITECTURE.md docs/*.md; fi
python3 - "$@" <<'EOF'
import os, re, sys

ROOTS = ("src/", "docs/", "tests/", "scripts/", "benches/", "examples/", "ffi/", "include/",
         "kernels/", "fuzz/", "packaging/", "contrib/")
link = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
code = re.compile(r"`([^`\s]+)`")

def anchors(path):
    out = set()
    try:
        for line in open(path, encoding="utf-8"):
            if line.startswith("#"):
                t = line.lstrip("#").strip().lower()
                t = re.sub(r"[^\w\- ]", "", t).replace(" ", "-")
                out.add(t)
    except OSError:
        pass
    return out

bad = 0
for md in sys.argv[1:]:
    base = os.path.dirname(md)
    in_fence = False
    for n, line in enumerate(open(md, encoding="utf-8"), 1):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        for target in link.findall(line):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            path, _, anchor = target.partition("#")
            full = os.path.normpath(os.path.join(base, path))
            if not os.path.exists(full):
                print(f"{md}:{n}: link to {target}: no such file")
                bad += 1
            elif anchor and full.endswith(".md") and anchor.lower() not in anchors(full):
                print(f"{md}:{n}: link to {target}: no such heading")
                bad += 1
        if in_fence:
            continue
        for p in code.findall(line):
            p = p.rstrip(".,:;")
            if not p.startswith(ROOTS) or any(c in p for c in "*?{}<>$|"):
                continue
            p = p.split(":", 1)[0]  # `file.rs:123`
            if not os.path.exists(p):
                print(f"{md}:{n}: `{p}`: no such file or folder")
                bad += 1
sys.exit(1 if bad else 0)
EOF
