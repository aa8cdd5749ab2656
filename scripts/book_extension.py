"""A small Sphinx extension of the dpteach book (listed under ``sphinx.local_extensions`` in
book.yml): it removes what Thebe (the "live code" button) adds to every page.

The site has no live-code button (it works offline; launch buttons appear only when a repository
is configured), so Thebe's scripts are dead weight, and harmful: Jupyter Book 1 adds its
``const THEBE_JS_URL`` twice, a console error on every page ("Identifier 'THEBE_JS_URL' has
already been declared"), and each page carried a Thebe configuration naming a Binder repository
that is not ours.
"""

from __future__ import annotations


def _drop_thebe(app, pagename, templatename, context, doctree) -> None:
    def keep(asset) -> bool:
        text = f"{getattr(asset, 'filename', '') or ''} {asset.attributes.get('body', '')}"
        return "thebe" not in text.lower()

    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = [asset for asset in context[key] if keep(asset)]


def _drop_thebe_config(app, doctree, docname) -> None:
    from docutils import nodes

    for node in list(doctree.findall(nodes.raw)):
        if "x-thebe-config" in node.astext():
            node.parent.remove(node)


def setup(app):
    app.connect("doctree-resolved", _drop_thebe_config, priority=900)
    app.connect("html-page-context", _drop_thebe, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
