#!/usr/bin/env bash
# Fetch the website's JavaScript from the npm registry into web_assets/ (git-ignored), so that the
# built book loads MathJax, require.js and the ipywidgets HTML manager locally, never from a CDN.
# Idempotent: does nothing when web_assets/ is complete. Works from any directory.
# Usage: bash scripts/fetch_web_assets.sh
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$root/web_assets"

# Loaded between require.js and embed-amd.js (see book.yml); rewritten on every run.
write_widget_setup() {
    cat >"$dest/jupyter-widgets/offline-setup.js" <<'JS'
// Written by scripts/fetch_web_assets.sh. Runs after require.js, before embed-amd.js.
(function () {
  "use strict";
  // embed-amd.js derives the URL of its Font Awesome fonts from its AMD module names: map those
  // names to this folder so that the fonts load from here.
  var src = document.currentScript.src;
  var dir = src.slice(0, src.lastIndexOf("/"));
  window.require.config({
    paths: { "@jupyter-widgets": dir, "@jupyter-widgets/html-manager/dist": dir },
  });
  // ipywidgets typesets LaTeX (HTMLMath, descriptions) with the MathJax 2 API; the book loads
  // MathJax 3, so provide MathJax.Hub.Queue on top of MathJax.typesetPromise.
  document.addEventListener("DOMContentLoaded", function () {
    var mj = window.MathJax;
    if (mj && mj.startup && mj.startup.promise && !mj.Hub) {
      mj.Hub = {
        Queue: function (job) {
          mj.startup.promise.then(function () { return mj.typesetPromise([job[2]]); });
        },
      };
    }
  });
})();
JS
}

if [ -f "$dest/VERSIONS" ]; then   # written last, so its presence means a complete fetch
    write_widget_setup
    exit 0
fi

command -v npm >/dev/null || { echo "fetch_web_assets: npm is needed (e.g. apt-get install npm)" >&2; exit 1; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "fetch_web_assets: npm pack mathjax@3 @jupyter-widgets/html-manager@1 requirejs@2"
(cd "$tmp" && npm pack --loglevel=error mathjax@3 @jupyter-widgets/html-manager@1 requirejs@2 >/dev/null)
for pkg in mathjax jupyter-widgets-html-manager requirejs; do
    mkdir "$tmp/$pkg"
    tar -xzf "$tmp/$pkg"-[0-9]*.tgz -C "$tmp/$pkg" --strip-components=1
done

out="$tmp/web_assets"
mkdir -p "$out/mathjax/output" "$out/requirejs" "$out/jupyter-widgets"
# MathJax: the tex-mml-chtml bundle plus what it loads on demand (TeX extensions, CHTML fonts,
# the accessibility menu's explorer and speech engine).
mj="$tmp/mathjax/es5"
cp "$mj/tex-mml-chtml.js" "$tmp/mathjax/LICENSE" "$out/mathjax/"
cp -R "$mj/input" "$mj/a11y" "$mj/sre" "$mj/ui" "$out/mathjax/"
cp -R "$mj/output/chtml" "$out/mathjax/output/"
cp "$tmp/requirejs/require.js" "$out/requirejs/"
# ipywidgets 8: embed-amd.js defines base, controls, output and the HTML manager itself (no lazy
# chunks); the fonts are Font Awesome for its icons (woff2/woff only: every current browser reads them).
hm="$tmp/jupyter-widgets-html-manager/dist"
cp "$hm/embed-amd.js" "$hm"/*.woff2 "$hm"/*.woff "$out/jupyter-widgets/"

for pkg in mathjax jupyter-widgets-html-manager requirejs; do
    node -e 'const p = require(process.argv[1]); console.log(p.name, p.version, p.license)' \
        "$tmp/$pkg/package.json"
done >"$out/VERSIONS"
rm -rf "$dest"
mv "$out" "$dest"
write_widget_setup
echo "fetch_web_assets: $(tr '\n' ';' <"$dest/VERSIONS") into $dest"
