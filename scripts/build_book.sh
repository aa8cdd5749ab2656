#!/usr/bin/env bash
# Build the dpteach website into _build/html with Jupyter Book 1.x, offline.
# Notebooks are not executed: the book shows their saved outputs and widget state.
# Expects `jupyter-book` on PATH (the Makefile's `book` target puts .venv/bin first).
# Usage: bash scripts/build_book.sh   (from any directory)
#
# Repository address: set DPTEACH_REPOSITORY_URL (e.g. https://github.com/<owner>/<repo>) to add
# the repository and issue buttons, and, for a GitHub address, the Binder and Colab launch
# buttons. Unset (the default), the site links no repository at all.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
command -v jupyter-book >/dev/null || { echo "build_book: jupyter-book not on PATH (try: make book)" >&2; exit 1; }

bash "$root/scripts/fetch_web_assets.sh"
cd "$root"

# book.yml, plus the repository settings when DPTEACH_REPOSITORY_URL is set. The copy lives beside
# book.yml (Jupyter Book resolves local_extensions from the config's folder) and is removed after.
config="$root/book.yml"
repo="${DPTEACH_REPOSITORY_URL:-}"
if [ -n "$repo" ]; then
    config="$root/.book.repository.yml"
    trap 'rm -f "$root/.book.repository.yml"' EXIT
    python3 - "$root/book.yml" "$config" "$repo" <<'PY'
import re
import sys

source, target, url = sys.argv[1], sys.argv[2], sys.argv[3].rstrip("/")
if not re.fullmatch(r"https://[A-Za-z0-9.-]+/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", url):
    sys.exit(f"build_book: DPTEACH_REPOSITORY_URL={url!r} is not https://<host>/<owner>/<repo>")
text = open(source).read()
buttons = "  use_repository_button: true\n  use_issues_button: true\n"
text = text.replace("\nhtml:\n", "\nhtml:\n" + buttons, 1)
text += f'\nrepository:\n  url: {url}\n  path_to_book: ""\n  branch: main\n'
if url.startswith("https://github.com/"):  # Binder and Colab open GitHub repositories
    text += (
        "\nlaunch_buttons:\n  notebook_interface: jupyterlab\n"
        "  binderhub_url: https://mybinder.org\n"
        "  colab_url: https://colab.research.google.com\n"
    )
open(target, "w").write(text)
PY
    echo "build_book: repository buttons for $repo"
fi

# The --toc path must be absolute: a relative one is resolved against the book folder.
# --all re-reads every page, so that -W sees every warning and changed web_assets are copied
# (Sphinx skips copying static files when no page changed). -W turns warnings (broken
# references, unknown citation keys, missing pages) into errors; -n reports every broken reference.
jupyter-book build . --config "$config" --toc "$root/notebooks/_toc.yml" --builder html --all -n -W
test -f "$root/_build/html/index.html"
touch "$root/_build/html/index.html"  # its time stamp is the build's: tests rebuild when older
printf '%s' "$repo" >"$root/_build/html/.repository"  # and when built for another repository

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
