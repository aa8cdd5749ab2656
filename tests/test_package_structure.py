"""The package's structure (issue 27): matplotlib's public API only, imports in one direction.

* No private matplotlib name anywhere in ``dpteach/``: every ``obj._name`` the package reads is a
  name the package itself defines (a function, class, method or attribute of ours), no object's
  ``__dict__`` or ``vars()`` is read, and no attribute a matplotlib class has is assigned on
  anything but our own ``self`` (an instance-level override of a matplotlib method). The scanner
  is shown to catch each of these on a snippet.
* The modules import each other at module level only (no import inside a function to dodge a
  loop), and those imports form no cycle: the drawing layers sit above the mathematics, and the
  live widgets above the drawing (``viz`` imports nothing from ``widgets``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import matplotlib.animation
import matplotlib.artist
import matplotlib.axes
import matplotlib.axis
import matplotlib.backends.backend_agg
import matplotlib.figure
import matplotlib.legend
import matplotlib.lines
import matplotlib.offsetbox
import matplotlib.text
import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "dpteach"
MODULES = {p.stem: ast.parse(p.read_text(), filename=str(p)) for p in sorted(PACKAGE.glob("*.py"))}

#: Every attribute of the matplotlib classes a figure is made of: assigning one of these on an
#: object is overriding matplotlib's method (or state) for that instance.
MATPLOTLIB_ATTRIBUTES = {
    name
    for cls in (
        matplotlib.figure.Figure,
        matplotlib.backends.backend_agg.FigureCanvasAgg,
        matplotlib.axes.Axes,
        matplotlib.axis.XAxis,
        matplotlib.axis.YAxis,
        matplotlib.axis.XTick,
        matplotlib.lines.Line2D,
        matplotlib.text.Text,
        matplotlib.legend.Legend,
        matplotlib.offsetbox.VPacker,
        matplotlib.animation.FuncAnimation,
        matplotlib.artist.Artist,
    )
    for name in dir(cls)
}


def _own_names(trees) -> set[str]:
    """Every name the package defines: functions, classes, methods, module-level names and the
    attributes it assigns (``self._x = ...``)."""
    names = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.alias):
                names.add(node.asname or node.name.split(".")[0])
    return names


def private_uses(tree: ast.AST, own: set[str]) -> list[str]:
    """What in ``tree`` reaches past a library's public API (see the module docstring)."""
    found = []
    for node in ast.walk(tree):
        where = f"line {getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Attribute):
            name = node.attr
            dunder = name.startswith("__") and name.endswith("__")
            if name == "__dict__" or (name.startswith("_") and not dunder and name not in own):
                found.append(f"{where}: .{name}")
            on_self = isinstance(node.value, ast.Name) and node.value.id == "self"
            if isinstance(node.ctx, ast.Store) and name in MATPLOTLIB_ATTRIBUTES and not on_self:
                found.append(f"{where}: assigns .{name}, a matplotlib attribute")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "vars":
                found.append(f"{where}: vars()")
            if node.func.id in ("getattr", "hasattr") and len(node.args) >= 2:
                name = node.args[1].value if isinstance(node.args[1], ast.Constant) else ""
                if str(name).startswith("_") and not str(name).endswith("__") and name not in own:
                    found.append(f"{where}: {node.func.id}() of {name}")
            if node.func.id in ("setattr", "delattr") and len(node.args) >= 2:
                target = node.args[1]
                name = target.value if isinstance(target, ast.Constant) else "_"
                if str(name).startswith("_") or name in MATPLOTLIB_ATTRIBUTES:
                    found.append(f"{where}: {node.func.id}() of {ast.unparse(target)}")
    return found


def test_the_package_uses_only_public_matplotlib_api():
    own = _own_names(MODULES.values())
    found = {name: private_uses(tree, own) for name, tree in MODULES.items()}
    assert {name: uses for name, uses in found.items() if uses} == {}


@pytest.mark.parametrize(
    "snippet",
    [
        "axis._update_ticks()",
        "ticks = axis.__dict__['majorTicks']",
        "fig.canvas.draw_idle = lambda *args: None",
        "setattr(axis, name, remembered)",
        "setattr(box, 'get_bbox', remembered)",
        "state = vars(legend)",
        "ticks = getattr(axis, '_get_ticklabel_bboxes')",
    ],
)
def test_the_scanner_catches_private_api(snippet):
    assert private_uses(ast.parse(snippet), _own_names(MODULES.values()))


def test_the_scanner_accepts_our_own_private_names_and_public_calls():
    snippet = "workload._answer(p)\nself.figure.set_layout_engine('none')\nself.draw = draw"
    assert private_uses(ast.parse(snippet), _own_names(MODULES.values())) == []


def _imports(tree: ast.Module) -> tuple[set[str], list[str]]:
    """The package's modules ``tree`` imports at module level, and its imports of package
    modules inside a function or class (where they would dodge a loop)."""
    top, nested = set(), []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or node.level != 1:
            continue
        names = [node.module] if node.module else [a.name for a in node.names]
        names = [n.split(".")[0] for n in names if n.split(".")[0] in MODULES]
        if node in tree.body:
            top.update(names)
        else:
            nested += [f"line {node.lineno}: {n}" for n in names]
    return top, nested


def test_no_module_imports_another_inside_a_function():
    nested = {name: _imports(tree)[1] for name, tree in MODULES.items()}
    assert {name: found for name, found in nested.items() if found} == {}


def _dependency_order() -> list[str]:
    """The modules, each after every module it imports; fails on a cycle."""
    graph = {name: _imports(tree)[0] - {name} for name, tree in MODULES.items()}
    order, done, visiting = [], set(), []

    def visit(name):
        if name in done:
            return
        assert name not in visiting, f"import cycle: {' -> '.join([*visiting, name])}"
        visiting.append(name)
        for dependency in sorted(graph[name]):
            visit(dependency)
        visiting.pop()
        done.add(name)
        order.append(name)

    for name in sorted(graph):
        visit(name)
    return order


def test_the_imports_form_no_cycle_and_the_layers_point_one_way():
    order = _dependency_order()
    graph = {name: _imports(tree)[0] for name, tree in MODULES.items()}
    assert graph["_validate"] == set()  # plain values only
    assert "widgets" not in graph["viz"] and "widgets" not in graph["static"]
    assert {"viz", "static", "widgets"}.isdisjoint(graph["frames"])
    assert order.index("viz") < order.index("widgets")
