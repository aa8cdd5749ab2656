"""The order in which `make test`'s parallel workers take the test modules and notebooks.

pytest-xdist (``--dist loadscope --no-loadscope-reorder``) hands out whole modules in the order
collected. The few long ones (a browser driving JupyterLab through every chapter, the website
and the printed book, the longest notebooks) go first, so that the many short modules fill the
other worker's time instead of leaving one worker alone at the end: longest first.
"""

from __future__ import annotations

#: Modules (and notebooks) that take a minute or more, longest first.
LONGEST_FIRST = (
    "tests/test_live_widgets.py",
    "tests/test_site_render.py",
    "tests/test_pdf.py",
    "tests/test_browser.py",
    "notebooks/05_growing_databases.ipynb",
    "notebooks/04_private_multiplicative_weights.ipynb",
    "notebooks/A_privacy_auditing.ipynb",
    "tests/test_audit.py",
)


def pytest_collection_modifyitems(items: list) -> None:
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))
