#!/usr/bin/env bash
# Build the dpteach website into _build/html with Jupyter Book 1.x, offline.
# Notebooks are not executed: the book shows their saved outputs and widget state.
# Expects `jupyter-book` on PATH (the Makefile's `book` target puts .venv/bin first).
# Usage: bash scripts/build_book.sh   (from any directory)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
command -v jupyter-book >/dev/null || { echo "build_book: jupyter-book not on PATH (try: make book)" >&2; exit 1; }

bash "$root/scripts/fetch_web_assets.sh"
cd "$root"
# The --toc path must be absolute: a relative one is resolved against the book folder.
# --all re-reads every page, so that -W sees every warning and changed web_assets are copied
# (Sphinx skips copying static files when no page changed). -W turns warnings (broken
# references, unknown citation keys, missing pages) into errors; -n reports every broken reference.
jupyter-book build . --config book.yml --toc "$root/notebooks/_toc.yml" --builder html --all -n -W
test -f "$root/_build/html/index.html"

# Offline guarantee: no page may load a script, stylesheet, image or frame from the network
# (links such as the Binder and Colab buttons are fine). -z reads each file whole, so a tag that
# spans lines still matches.
net='="(https?:)?//'
rel='rel="(stylesheet|preload|modulepreload|icon)"'
if grep -rlzE --include='*.html' \
    "<(script|img|iframe)[^>]*[[:space:]]src${net}|<link[^>]*${rel}[^>]*href${net}|<link[^>]*href${net}[^>]*${rel}" \
    "$root/_build/html"; then
    echo "build_book: the pages above load resources from the network; the site must work offline" >&2
    exit 1
fi
echo "build_book: open $root/_build/html/index.html"
