"""The import architecture of skframe, checked on the source (no module is imported).

Every ``import`` and ``from ... import`` statement of skframe/ and plugins/ is read with :mod:`ast`, at module level
and inside functions and methods, relative imports resolved. Four rules:

a. layers: a module imports its own layer or lower ones only (``LAYERS`` below, bottom to top), and skframe never
   imports a built-in plugin (they are reached through the ``skframe`` entry points, as a third party's are);
b. no import circle among the modules of skframe/ and plugins/, module-level and in-function imports together;
c. an import inside a function is there for start-up time or an optional dependency: it carries a one-line
   ``# lazy: <reason>`` comment (same line or the line above), and what it loads is costly, i.e. it brings in a
   heavy or optional library that its module does not load already;
d. the built-in plugins import from skframe only the public plugin module and the public data types.
"""

import ast
import io
import sys
import tokenize
from collections import defaultdict
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# The layers, bottom to top. A module belongs to the layer of the longest prefix it matches (a package prefix
# covers its sub-modules). A module may import modules of its own layer or of lower layers only.
LAYERS = (
    ("ground", ("skframe._version", "skframe.exceptions", "skframe.options", "skframe.deps", "skframe.validation",
                "skframe.constraints", "skframe._validation")),
    # protocols, hook specifications, component specs, registry, entry-point loader, input collections, problems
    ("plugin", ("skframe.plugin",)),
    # the mathematics: sketch matrices and products, linear algebra, output bases and matrices, scaling
    ("core", ("skframe.core",)),
    # data in and out: they need the ground floor, the input collections of the plugin contract (graph and string
    # batches), the registry and specs (model files name their components) and core's scaling (data sets);
    # nothing above. Inside the layer: graphs and metrics < io < datasets and persistence.
    ("data", ("skframe.graphs", "skframe.metrics", "skframe.io", "skframe.datasets", "skframe.persistence")),
    # how the work runs: backends, engines, threads, memory, streaming, Dask
    ("compute", ("skframe.compute",)),
    # the one module plugin authors import, and their conformance kit: re-exports of plugin, core and compute
    ("facade", ("skframe.plugin.api", "skframe.plugin.checks")),
    ("models", ("skframe.models",)),
    ("model_selection", ("skframe.model_selection",)),
    ("cli", ("skframe.cli",)),
    ("top", ("skframe", "skframe.__main__")),
)

# What the built-in plugins may import from skframe (rule d).
PLUGIN_PUBLIC = ("skframe.plugin.api", "skframe.graphs", "skframe.exceptions")

# What an import inside a function may defer (rule c), when its module does not load it already:
# - anywhere: the optional dependencies, and numba (compiled code, which a small fit never loads);
# - anywhere: a sub-package of SciPy or scikit-learn (each costs its own import time: scipy.optimize, sklearn.metrics);
# - in the modules ``import skframe`` and the command line load before any work (START_UP): also NumPy, SciPy,
#   scikit-learn, rich and the entry-point metadata that plugin discovery reads.
OPTIONAL = frozenset({"numba", "torch", "cupy", "cupyx", "dask", "distributed", "rdkit", "networkx", "matplotlib",
                      "threadpoolctl"})
BY_SUBPACKAGE = frozenset({"scipy", "sklearn"})
COSTLY = OPTIONAL | BY_SUBPACKAGE | {"numpy", "rich", "importlib.metadata"}
START_UP = ("skframe", "skframe.cli", "skframe.__main__")

LAZY_TAG = "# lazy:"


class Module:
    """One source file: its dotted name, path and import statements."""

    def __init__(self, name, path, is_package):
        self.name = name
        self.path = path
        self.is_package = is_package
        self.source = path.read_text(encoding="utf-8")
        self.imports = []  # (target, line, in_function), filled by _collect


def _dotted(path):
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[0] == "plugins":
        parts = parts[1:]
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join(parts), is_package


def _resolve(module, level, name):
    """The absolute name of ``from <level dots><name> import ...`` written in ``module``."""
    base = module.name.split(".") if module.is_package else module.name.split(".")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def _collect(module, names):
    tree = ast.parse(module.source, filename=str(module.path))

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                for alias in child.names:
                    module.imports.append((alias.name, child.lineno, in_function))
            elif isinstance(child, ast.ImportFrom):
                base = _resolve(module, child.level, child.module) if child.level else child.module
                for alias in child.names:
                    sub = f"{base}.{alias.name}"
                    # a name of skframe that is no module is the package's; elsewhere it may be a sub-module
                    ours = sub in names or not _is_ours(base)
                    module.imports.append((sub if ours else base, child.lineno, in_function))
            else:
                visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(tree, False)
    module.imports = list(dict.fromkeys(module.imports))  # one entry per (target, line)


@lru_cache(maxsize=None)
def modules():
    paths = sorted((ROOT / "skframe").rglob("*.py")) + sorted((ROOT / "plugins").glob("skframe_*/**/*.py"))
    found = {}
    for path in paths:
        name, is_package = _dotted(path)
        found[name] = Module(name, path, is_package)
    for module in found.values():
        _collect(module, found)
    return found


def _is_ours(name):
    return name == "skframe" or name.startswith("skframe.") or _is_builtin_plugin(name)


def _is_builtin_plugin(name):
    return name.startswith("skframe_")


def _known(name):
    """The module of skframe/plugins that an imported name refers to (a name re-exported by a package: the package)."""
    mods = modules()
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def layer_of(name):
    """The index in LAYERS of a skframe module, or None when no layer lists it."""
    best, where = -1, None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > best:
                best, where = len(prefix), index
    return where


def _rel(module):
    return module.path.relative_to(ROOT).as_posix()


def _rooms():
    """skframe's rooms and the built-in plugins: the unit each check reports on."""
    rooms = defaultdict(list)
    for module in modules().values():
        parts = module.name.split(".")
        key = parts[0] if _is_builtin_plugin(parts[0]) else ".".join(parts[:2]) if len(parts) > 1 else parts[0]
        if key.startswith("skframe.") and not (ROOT / key.replace(".", "/")).is_dir():
            key = "skframe (top-level modules)"
        rooms[key].append(module)
    return dict(sorted(rooms.items()))


ROOMS = _rooms()


def test_every_module_is_in_a_layer():
    missing = [m.name for m in modules().values() if not _is_builtin_plugin(m.name) and layer_of(m.name) is None]
    assert not missing, f"modules in no layer: {missing}; add each to LAYERS in {Path(__file__).name}"


@pytest.mark.parametrize("room", [r for r in ROOMS if not _is_builtin_plugin(r)])
def test_imports_point_down(room):
    """a. A module imports its own layer or lower ones, never a built-in plugin."""
    bad = []
    for module in ROOMS[room]:
        own = layer_of(module.name)
        for target, line, in_function in module.imports:
            if _is_builtin_plugin(target.split(".")[0]):
                bad.append(f"{_rel(module)}:{line} imports the built-in plugin {target} (reach it through the registry)")
                continue
            if not _is_ours(target):
                continue
            known = _known(target)
            theirs = layer_of(known) if known else None
            if theirs is not None and own is not None and theirs > own:
                where = "inside a function" if in_function else "at module level"
                bad.append(f"{_rel(module)}:{line} ({LAYERS[own][0]}) imports {target} ({LAYERS[theirs][0]}) {where}")
    assert not bad, "imports pointing up:\n" + "\n".join(bad)


def _graph():
    graph = defaultdict(dict)
    for module in modules().values():
        for target, line, _ in module.imports:
            known = _known(target) if _is_ours(target) else None
            if known and known != module.name:
                graph[module.name].setdefault(known, f"{_rel(module)}:{line}")
    return graph


def _cycles(graph):
    """The strongly connected components of more than one module (Tarjan), each as a sorted list."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(max(10000, sys.getrecursionlimit()))

    def strongconnect(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in list(graph):
        if v not in index:
            strongconnect(v)
    return found


def _one_circle(graph, component):
    """A shortest circle through the first module of a strongly connected component, with the import lines."""
    members = set(component)
    start = component[0]
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in graph[v]:
            if w == start:
                path = paths[v] + [start]
                steps = ", ".join(f"{a} -> {b} ({graph[a][b]})" for a, b in zip(path, path[1:]))
                return f"{steps}  [circle among: {', '.join(component)}]"
            if w in members and w not in paths:
                paths[w] = paths[v] + [w]
                queue.append(w)
    return ", ".join(component)


def test_no_import_circle():
    """b. No circle among skframe's and the built-in plugins' modules, in-function imports included."""
    graph = _graph()
    circles = [_one_circle(graph, component) for component in _cycles(graph)]
    assert not circles, "import circles:\n" + "\n".join(circles)


def _comments(source):
    """{line: comment text} of a source file."""
    found = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            found[tok.start[0]] = tok.string
    return found


@lru_cache(maxsize=None)
def _loads(name):
    """The costly libraries importing module ``name`` loads (its module-level imports, followed through skframe's
    modules and the packages above them)."""
    seen, todo, libraries = set(), [name], set()
    parts = name.split(".")
    todo += [".".join(parts[:i]) for i in range(1, len(parts))]
    mods = modules()
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        for target, _, in_function in mods[current].imports:
            if in_function:
                continue
            if _is_ours(target):
                known = _known(target)
                if known:
                    bits = known.split(".")
                    todo += [".".join(bits[:i]) for i in range(1, len(bits) + 1)]
            else:
                libraries |= _library(target)
    return frozenset(libraries)


def _library(target):
    """{the costly library (or sub-package) a third-party import loads}, or {}."""
    parts = target.split(".")
    for depth in range(1, len(parts) + 1):
        name = ".".join(parts[:depth])
        if name in COSTLY:
            return frozenset({".".join(parts[: depth + 1]) if name in BY_SUBPACKAGE else name})
    return frozenset()


@lru_cache(maxsize=None)
def _start_up():
    """The modules ``import skframe`` and ``import skframe.cli`` load (module-level imports followed)."""
    seen, todo = set(), list(START_UP)
    mods = modules()
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        for target, _, in_function in mods[current].imports:
            known = _known(target) if _is_ours(target) and not in_function else None
            if known:
                bits = known.split(".")
                todo += [".".join(bits[:i]) for i in range(1, len(bits) + 1)]
    return frozenset(seen)


def _target_loads(target):
    if _is_ours(target):
        known = _known(target)
        return _loads(known) if known else frozenset()
    return _library(target)


@pytest.mark.parametrize("room", list(ROOMS))
def test_imports_inside_functions_say_why(room):
    """c. Each import inside a function defers a costly library its module does not load, and says so."""
    bad = []
    for module in ROOMS[room]:
        comments = None
        for target, line, in_function in module.imports:
            if not in_function:
                continue
            if comments is None:
                comments = _comments(module.source)
            above = comments.get(line - 1, "")
            same = comments.get(line, "")
            lines = module.source.splitlines()
            above_alone = line >= 2 and lines[line - 2].strip().startswith("#")
            reason = same if LAZY_TAG in same else above if (above_alone and above.startswith(LAZY_TAG)) else ""
            if not reason or not reason.split(LAZY_TAG, 1)[1].strip():
                bad.append(f"{_rel(module)}:{line} imports {target} inside a function without a '{LAZY_TAG} <reason>'"
                           " comment (or move it to the top of the module)")
                continue
            deferred = _target_loads(target) - _loads(module.name)
            if module.name not in _start_up():
                deferred = {lib for lib in deferred if lib.split(".")[0] in OPTIONAL | BY_SUBPACKAGE}
            if not deferred:
                why = "costly library" if module.name in _start_up() else "optional library or SciPy/scikit-learn part"
                bad.append(f"{_rel(module)}:{line} imports {target} inside a function, but that loads no {why} "
                           f"{module.name} does not load already: move it to the top of the module")
    assert not bad, "\n".join(bad)


@pytest.mark.xfail(reason="built-in plugins are being moved to skframe.plugin.api", strict=False)
@pytest.mark.parametrize("room", [r for r in ROOMS if _is_builtin_plugin(r)])
def test_builtin_plugins_use_the_public_module(room):
    """d. The built-in plugins import from skframe only its public plugin module and public data types."""
    bad = []
    for module in ROOMS[room]:
        for target, line, _ in module.imports:
            if target == "skframe" or target.startswith("skframe."):
                if not any(target == p or target.startswith(p + ".") for p in PLUGIN_PUBLIC):
                    bad.append(f"{_rel(module)}:{line} imports {target}; use one of {', '.join(PLUGIN_PUBLIC)}")
    assert not bad, "\n".join(bad)
