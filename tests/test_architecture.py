"""The import architecture of skframe, checked on the source (no module is imported).

Every ``import`` and ``from ... import`` statement under src/ (skframe and the built-in plugins) is read with
:mod:`ast`, at module level and inside functions and methods, relative imports resolved. Four rules:

a. layers: a module imports its own layer or lower ones only (``LAYERS`` below, bottom to top), and skframe never
   imports a built-in plugin (they are reached through the ``skframe`` entry points, as a third party's are);
b. no import circle among the modules under src/, module-level and in-function imports together;
c. an import inside a function is there for start-up time or an optional dependency: it carries a one-line
   ``# lazy: <reason>`` comment (same line or the line above), and what it loads is costly, i.e. it brings in a
   heavy or optional library that its module does not load already (``OPTIONAL``, ``BY_SUBPACKAGE``, ``COSTLY``)
   or an estimator family that skframe.models loads on first use (``FAMILIES``); an import under
   ``if TYPE_CHECKING:`` never runs and needs no reason;
d. the built-in plugins import from skframe only the public plugin modules (the API and the toolbox) and the public
   data types.

The contract package (``skframe.contract``) is the lowest layer above the ground floor: by rule a it imports nothing
above it, and it loads no costly library but NumPy (nor does the API, which re-exports it).

The checks run on every room of skframe and every built-in plugin, and on a small made-up tree that breaks each
rule once (so that a check that stopped seeing anything would fail too).
"""

import ast
import io
import tokenize
from collections import defaultdict, deque
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# The layers, bottom to top. A module belongs to the layer of the longest prefix it matches (a package prefix
# covers its sub-modules). A module may import modules of its own layer or of lower layers only.
LAYERS = (
    # the ground floor every room may use
    ("ground", ("skframe._version", "skframe.exceptions", "skframe.options", "skframe.deps", "skframe.validation",
                "skframe.constraints", "skframe.limits")),
    # the contract: the kinds table, protocols, tags, hook specifications, component specs, registry, entry-point
    # loader, input collections, problems; imports the ground floor only
    ("contract", ("skframe.contract",)),
    # the mathematics: sketch matrices and products, feature maps, leverage scores, linear algebra, output bases
    # and matrices, scaling; with the engine choice and the thread pool its numerical routines run on
    ("core", ("skframe.core",)),
    # data in and out: they need the ground floor, the input collections of the plugin contract (graph and string
    # batches), the registry and specs (model files name their components) and core's scaling (data sets);
    # nothing above. Inside the layer: graphs and metrics < io < datasets and persistence.
    ("data", ("skframe.graphs", "skframe.metrics", "skframe.io", "skframe.preprocessing", "skframe.datasets",
              "skframe.persistence")),
    # how the work runs: execution plan, array backends, chunk engines, memory, streaming, Dask
    ("compute", ("skframe.compute",)),
    # what plugin authors import: the API (re-exports of the contract), their toolbox (re-exports of core and
    # compute) and their conformance kit
    ("facade", ("skframe.plugin",)),
    ("models", ("skframe.models",)),
    ("model_selection", ("skframe.model_selection", "skframe.uncertainty")),
    # the automatic model: the library object both doors meet at (skframe.automatic.TableModel), with its readers,
    # task modules and options; it never imports the command line
    ("automatic", ("skframe.automatic",)),
    # the command line: parses options, calls the automatic model and prints
    ("cli", ("skframe.cli",)),
    ("top", ("skframe", "skframe.__main__")),
)

# What the built-in plugins may import from skframe (rule d).
PLUGIN_PUBLIC = ("skframe.plugin.api", "skframe.plugin.toolbox", "skframe.graphs", "skframe.exceptions")

# What an import inside a function may defer (rule c), when its module does not load it already:
# - anywhere: the optional dependencies, and numba (compiled code, which a small fit never loads);
# - anywhere: a sub-package of SciPy or scikit-learn (each costs its own import time: scipy.optimize, sklearn.metrics);
# - in the modules that ``import skframe`` and the command line load before any work (START_UP): also NumPy,
#   rich (typer.rich_utils, Typer's help printer, loads it) and the entry-point metadata that plugin discovery reads.
OPTIONAL = frozenset({"numba", "torch", "cupy", "cupyx", "dask", "distributed", "rdkit", "networkx", "matplotlib",
                      "threadpoolctl", "pytest", "pyarrow", "zstandard"})
BY_SUBPACKAGE = frozenset({"scipy", "sklearn"})
COSTLY = OPTIONAL | BY_SUBPACKAGE | {"numpy", "rich", "typer.rich_utils", "importlib.metadata"}
START_UP = ("skframe", "skframe.cli", "skframe.__main__")
# - anywhere: an estimator family that skframe.models loads on first use (its ``_HOMES``), when the module does not
#   load it already: a command that fits a ridge model does not pay for the others (tests/cli/test_cli_startup.py)
FAMILIES = ("skframe.models.machine", "skframe.models.structured")

LAZY_TAG = "# lazy:"


# ----------------------------------------------------------------------------- reading the imports
class Module:
    """One source file: its dotted name, where it is, and its import statements ``(target, line, in_function)``."""

    def __init__(self, name, source, *, is_package=False, where=None):
        self.name = name
        self.source = source
        self.is_package = is_package
        self.where = where or name
        self.imports = []


def _resolve(module, level, name):
    """The absolute name of ``from <level dots><name> import ...`` written in ``module``."""
    base = module.name.split(".") if module.is_package else module.name.split(".")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


#: the ``in_function`` mark of an import under ``if TYPE_CHECKING:``: not run at import time, no laziness to explain
TYPE_ONLY = "type checking"


def _is_type_checking(test):
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _is_builtin_plugin(name):
    return name.startswith("skframe_")


def _is_ours(name):
    return name == "skframe" or name.startswith("skframe.") or _is_builtin_plugin(name)


class Tree:
    """The modules of skframe and of the built-in plugins, and what their imports mean."""

    def __init__(self, modules):
        self.modules = modules
        for module in modules.values():
            self._collect(module)
        self._loads = {}

    @classmethod
    def from_disk(cls, root=ROOT):
        paths = sorted((root / "src" / "skframe").rglob("*.py")) + sorted((root / "src").glob("skframe_*/**/*.py"))
        modules = {}
        for path in paths:
            parts = list(path.relative_to(root).with_suffix("").parts)
            parts = parts[1:]  # under src/
            is_package = parts[-1] == "__init__"
            name = ".".join(parts[:-1] if is_package else parts)
            modules[name] = Module(name, path.read_text(encoding="utf-8"), is_package=is_package,
                                   where=path.relative_to(root).as_posix())
        return cls(modules)

    @classmethod
    def from_sources(cls, sources):
        """A made-up tree: ``{dotted name: source}``; a name ending in ``.__init__`` is a package."""
        modules = {}
        for name, source in sources.items():
            is_package = name.endswith(".__init__")
            name = name[: -len(".__init__")] if is_package else name
            modules[name] = Module(name, source, is_package=is_package)
        return cls(modules)

    def _collect(self, module):
        def visit(node, in_function):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.Import):
                    for alias in child.names:
                        module.imports.append((alias.name, child.lineno, in_function))
                elif isinstance(child, ast.ImportFrom):
                    base = _resolve(module, child.level, child.module) if child.level else child.module
                    for alias in child.names:
                        sub = f"{base}.{alias.name}"
                        # a name of skframe that is no module is its package's; elsewhere it may be a sub-module
                        target = sub if (sub in self.modules or not _is_ours(base)) else base
                        module.imports.append((target, child.lineno, in_function))
                elif isinstance(child, ast.If) and _is_type_checking(child.test):
                    # ``if TYPE_CHECKING:`` never runs: its imports load nothing (rule c) but count as edges (a, b)
                    for part in child.body:
                        visit(ast.Module(body=[part], type_ignores=[]), in_function or TYPE_ONLY)
                    for part in child.orelse:
                        visit(ast.Module(body=[part], type_ignores=[]), in_function)
                else:
                    function = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                    visit(child, in_function or function)

        visit(ast.parse(module.source), False)
        module.imports = list(dict.fromkeys(module.imports))  # one entry per (target, line)

    def known(self, name):
        """The module that an imported name of skframe refers to (a name a package re-exports: the package)."""
        while name and name not in self.modules:
            name = name.rpartition(".")[0]
        return name or None

    def _followed(self, name):
        """The modules importing ``name`` runs: its module-level imports of skframe, followed, with the packages
        above each."""
        seen, todo = set(), [".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 2)]
        while todo:
            current = todo.pop()
            if current in seen or current not in self.modules:
                continue
            seen.add(current)
            for target, _, in_function in self.modules[current].imports:
                known = self.known(target) if _is_ours(target) and not in_function else None
                if known:
                    todo += [".".join(known.split(".")[:i]) for i in range(1, known.count(".") + 2)]
        return seen

    def loads(self, name):
        """The costly libraries that importing the module ``name`` loads."""
        if name not in self._loads:
            libraries = set()
            for current in self._followed(name):
                for target, _, in_function in self.modules[current].imports:
                    if not in_function and not _is_ours(target):
                        libraries |= _library(target)
            self._loads[name] = frozenset(libraries)
        return self._loads[name]

    def start_up(self):
        """The modules that ``import skframe`` and the command line load before any work."""
        return set().union(*(self._followed(name) for name in START_UP if name in self.modules))

    def target_loads(self, target):
        if _is_ours(target):
            known = self.known(target)
            return self.loads(known) if known else frozenset()
        return _library(target)

    def families_deferred(self, target, name):
        """{the estimator family (``FAMILIES``) that importing ``target`` loads and module ``name`` does not}."""
        known = self.known(target) if _is_ours(target) else None
        followed = self._followed(name)
        return {family for family in FAMILIES if known and (known == family or known.startswith(family + "."))
                and not any(m == family or m.startswith(family + ".") for m in followed)}

    def graph(self):
        """{module: {imported module of skframe: where}}, module-level and in-function imports together."""
        graph = defaultdict(dict)
        for module in self.modules.values():
            for target, line, _ in module.imports:
                known = self.known(target) if _is_ours(target) else None
                if known and known != module.name:
                    graph[module.name].setdefault(known, f"{module.where}:{line}")
        return graph


def _library(target):
    """{the costly library (or sub-package) a third-party import loads}, or {}."""
    parts = target.split(".")
    for depth in range(1, len(parts) + 1):
        name = ".".join(parts[:depth])
        if name in COSTLY:
            return frozenset({".".join(parts[: depth + 1]) if name in BY_SUBPACKAGE else name})
    return frozenset()


def layer_of(name):
    """The index in LAYERS of a skframe module, or None when no layer lists it."""
    best, where = -1, None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > best:
                best, where = len(prefix), index
    return where


# ----------------------------------------------------------------------------- the rules
def upward_imports(tree, modules):
    """a. Imports of a higher layer, or of a built-in plugin, by the given modules of skframe."""
    bad = []
    for module in modules:
        own = layer_of(module.name)
        for target, line, in_function in module.imports:
            if _is_builtin_plugin(target):
                bad.append(f"{module.where}:{line} imports the built-in plugin {target} (reach it by the registry)")
                continue
            known = tree.known(target) if _is_ours(target) else None
            theirs = layer_of(known) if known else None
            if theirs is not None and own is not None and theirs > own:
                how = "inside a function" if in_function else "at module level"
                bad.append(f"{module.where}:{line} ({LAYERS[own][0]}) imports {target} ({LAYERS[theirs][0]}) {how}")
    return bad


def circles(tree):
    """b. One circle (with the import lines) per strongly connected component of the import graph."""
    graph = tree.graph()
    index, low, stack, on_stack, components = {}, {}, [], set(), []

    def connect(v):  # Tarjan's algorithm; the import graph is a few hundred modules deep at most
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while not component or component[-1] != v:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                components.append(sorted(component))

    for v in list(graph):
        if v not in index:
            connect(v)
    return [_shortest_circle(graph, component) for component in components]


def _shortest_circle(graph, component):
    members, start = set(component), component[0]
    paths, queue = {start: [start]}, deque([start])
    while queue:
        v = queue.popleft()
        for w in graph[v]:
            if w == start:
                path = paths[v] + [start]
                steps = ", ".join(f"{a} -> {b} ({graph[a][b]})" for a, b in zip(path, path[1:]))
                return f"{steps}  [circle among: {', '.join(component)}]"
            if w in members and w not in paths:
                paths[w] = paths[v] + [w]
                queue.append(w)
    return ", ".join(component)  # pragma: no cover - a component always has a circle through each member


def _comments(source):
    """{line: comment} of a source file."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return {tok.start[0]: tok.string for tok in tokens if tok.type == tokenize.COMMENT}


def unexplained_lazy_imports(tree, modules):
    """c. Imports inside functions without a ``# lazy:`` reason, or that defer nothing costly."""
    bad, start_up = [], tree.start_up()
    for module in modules:
        lines, comments = module.source.splitlines(), None
        for target, line, in_function in module.imports:
            if not in_function or in_function == TYPE_ONLY:
                continue
            comments = _comments(module.source) if comments is None else comments
            same, above = comments.get(line, ""), comments.get(line - 1, "")
            above_alone = line >= 2 and lines[line - 2].lstrip().startswith("#")
            reason = same if LAZY_TAG in same else above if above_alone and above.startswith(LAZY_TAG) else ""
            if not reason.partition(LAZY_TAG)[2].strip():
                bad.append(f"{module.where}:{line} imports {target} inside a function without a '{LAZY_TAG} <reason>'"
                           " comment on the line or the line above (or move it to the top of the module)")
                continue
            deferred = tree.target_loads(target) - tree.loads(module.name)
            if module.name not in start_up:
                deferred = {lib for lib in deferred if lib.split(".")[0] in OPTIONAL | BY_SUBPACKAGE}
            deferred |= tree.families_deferred(target, module.name)
            if not deferred:
                what = "costly library" if module.name in start_up else "optional library or SciPy/scikit-learn part"
                bad.append(f"{module.where}:{line} imports {target} inside a function, but that loads no {what} "
                           f"that {module.name} does not load already: move it to the top of the module")
    return bad


def private_imports_of_plugins(modules):
    """d. Imports of skframe's internals by built-in plugins."""
    bad = []
    for module in modules:
        for target, line, _ in module.imports:
            if target == "skframe" or target.startswith("skframe."):
                if not any(target == p or target.startswith(p + ".") for p in PLUGIN_PUBLIC):
                    bad.append(f"{module.where}:{line} imports {target}; use one of {', '.join(PLUGIN_PUBLIC)}")
    return bad


# ----------------------------------------------------------------------------- skframe, room by room
@lru_cache(maxsize=None)
def skframe_tree():
    return Tree.from_disk()


def _rooms():
    """skframe's rooms and the built-in plugins: the unit each check reports on."""
    rooms = defaultdict(list)
    for module in skframe_tree().modules.values():
        parts = module.name.split(".")
        key = parts[0] if _is_builtin_plugin(parts[0]) else ".".join(parts[:2])
        if not _is_builtin_plugin(key) and not (ROOT / key.replace(".", "/")).is_dir():
            key = "skframe (top-level modules)"
        rooms[key].append(module)
    return dict(sorted(rooms.items()))


ROOMS = _rooms()


def test_every_module_is_in_a_layer():
    names = [name for name in skframe_tree().modules if not _is_builtin_plugin(name)]
    missing = [name for name in names if layer_of(name) is None]
    assert not missing, f"modules in no layer: {missing}; add each to LAYERS in {Path(__file__).name}"


def test_every_layer_entry_exists():
    """The table of layers names modules and rooms of the tree (and so can be copied to the documentation)."""
    stale = [prefix for _, prefixes in LAYERS for prefix in prefixes if prefix not in skframe_tree().modules]
    assert not stale, f"LAYERS names modules that do not exist: {stale}; remove them from {Path(__file__).name}"


@pytest.mark.parametrize("room", [r for r in ROOMS if not _is_builtin_plugin(r)])
def test_imports_point_down(room):
    """a. A module imports its own layer or lower ones, never a built-in plugin."""
    bad = upward_imports(skframe_tree(), ROOMS[room])
    assert not bad, "imports pointing up:\n" + "\n".join(bad)


def test_no_import_circle():
    """b. No circle among skframe's and the built-in plugins' modules, in-function imports included."""
    found = circles(skframe_tree())
    assert not found, "import circles:\n" + "\n".join(found)


def test_the_contract_and_the_api_load_no_numerics():
    """Finding a plugin imports the contract and the API it imports: neither loads SciPy, scikit-learn, numba or
    any other costly library but NumPy and the entry-point metadata (``skframe --help`` with plugins installed)."""
    tree = skframe_tree()
    names = [n for n in tree.modules if layer_of(n) == layer_of("skframe.contract")] + ["skframe.plugin.api"]
    allowed = {"numpy", "importlib.metadata"}
    heavy = {name: sorted(tree.loads(name) - allowed) for name in names if tree.loads(name) - allowed}
    assert not heavy, f"the contract or the API loads costly libraries: {heavy}"


@pytest.mark.parametrize("room", list(ROOMS))
def test_imports_inside_functions_say_why(room):
    """c. Each import inside a function defers a costly library its module does not load, and says so."""
    bad = unexplained_lazy_imports(skframe_tree(), ROOMS[room])
    assert not bad, "imports inside functions:\n" + "\n".join(bad)


@pytest.mark.parametrize("room", [r for r in ROOMS if _is_builtin_plugin(r)])
def test_builtin_plugins_use_the_public_module(room):
    """d. The built-in plugins import from skframe only its public plugin module and public data types."""
    bad = private_imports_of_plugins(ROOMS[room])
    assert not bad, "imports of skframe's internals:\n" + "\n".join(bad)


# ----------------------------------------------------------------------------- the checks see what they check
MADE_UP = {
    "skframe.__init__": "from skframe.contract import hookspecs\n",
    "skframe.exceptions": "class SkframeError(Exception): ...\n",
    "skframe.contract.__init__": "",
    "skframe.contract.hookspecs": "import pluggy\n",
    "skframe.core.__init__": "",
    "skframe.core.linalg": (
        "import numpy as np\n"
        "from skframe.exceptions import SkframeError\n"
        "from skframe.models import ridge\n"  # up: core imports models
        "def spectrum(A):\n"
        "    from skframe.core import sketching\n"  # circle, inside a function; and no reason
        "    import torch  # lazy: PyTorch is optional (the deep extra)\n"
        "    # lazy: said, but NumPy is loaded already\n"
        "    import numpy\n"
        "    return sketching, torch, numpy\n"
    ),
    "skframe.core.sketching": "from . import linalg\nimport skframe_kernels\n",  # the built-in plugin: up
    "skframe.contract.registry": "from skframe.core.linalg import spectrum\n",  # up: the contract imports core
    "skframe.models.__init__": "",
    "skframe.models.ridge": "from ..exceptions import SkframeError\n",
    "skframe.cli.__init__": (
        "def main():\n"
        "    import numpy as np  # lazy: NumPy costs ~0.1 s at start-up\n"
        "    from skframe.exceptions import SkframeError  # lazy: light module\n"
        "    return np, SkframeError\n"
    ),
    "skframe_kernels.__init__": "from skframe.core.linalg import spectrum\nfrom skframe.plugin.api import Kernel\n",
}


@pytest.fixture(scope="module")
def made_up():
    return Tree.from_sources(MADE_UP)


def test_upward_imports_are_seen(made_up):
    found = "\n".join(upward_imports(made_up, made_up.modules.values()))
    assert "skframe.core.linalg:3 (core) imports skframe.models.ridge (models) at module level" in found
    assert "skframe.core.sketching:2 imports the built-in plugin skframe_kernels" in found
    assert "skframe.contract.registry:1 (contract) imports skframe.core.linalg (core) at module level" in found
    assert found.count("\n") == 2


def test_circles_are_seen_through_imports_inside_functions(made_up):
    (found,) = circles(made_up)
    assert "skframe.core.linalg -> skframe.core.sketching (skframe.core.linalg:5)" in found
    assert "skframe.core.sketching -> skframe.core.linalg (skframe.core.sketching:1)" in found


def test_lazy_imports_need_a_reason_and_a_cost(made_up):
    found = unexplained_lazy_imports(made_up, made_up.modules.values())
    assert [f.split(" inside")[0] for f in found] == [
        "skframe.core.linalg:5 imports skframe.core.sketching",  # no comment
        "skframe.core.linalg:8 imports numpy",  # a reason, but nothing is deferred
        "skframe.cli:3 imports skframe.exceptions",  # start-up module, light target
    ]


def test_builtin_plugins_are_held_to_the_public_module(made_up):
    (found,) = private_imports_of_plugins([made_up.modules["skframe_kernels"]])
    assert "skframe_kernels:1 imports skframe.core.linalg" in found


# ----------------------------------------------------------------------------- the fit's spine
# Model selection talks to a fit through skframe.models' Fit object: it calls no private method of an estimator,
# sets or deletes no private attribute on one, and imports no private name of skframe.models.
SPINE_ROOMS = ("skframe.models", "skframe.compute", "skframe.core", "skframe.model_selection")
MAX_PARAMETERS = 10


def _private(name):
    return name.startswith("_") and not name.startswith("__")


def private_estimator_methods(modules):
    """Names of the private methods that the classes of ``modules`` define."""
    names = set()
    for module in modules:
        for node in ast.walk(ast.parse(module.source)):
            if isinstance(node, ast.ClassDef):
                names |= {f.name for f in node.body
                          if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and _private(f.name)}
    return names


def private_uses(modules, methods, private_package="skframe.models"):
    """``module:line`` descriptions of private uses of another room: calls of ``methods`` on an object (not
    ``self``), private attributes set or deleted on an object, private names imported from ``private_package``."""
    found = []
    for module in modules:
        for node in ast.walk(ast.parse(module.source)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(private_package):
                found += [f"{module.name}:{node.lineno} imports {node.module}.{a.name}"
                          for a in node.names if _private(a.name)]
            if not isinstance(node, ast.Attribute) or not _private(node.attr):
                continue
            owner = node.value.id if isinstance(node.value, ast.Name) else None
            if owner in ("self", "cls"):
                continue
            if isinstance(node.ctx, (ast.Store, ast.Del)):
                found.append(f"{module.name}:{node.lineno} sets {owner or '...'}.{node.attr}")
            elif node.attr in methods:
                found.append(f"{module.name}:{node.lineno} uses {owner or '...'}.{node.attr}")
    return sorted(found, key=lambda f: (f.split(":")[0], int(f.split(":")[1].split()[0])))


def long_signatures(modules, limit=MAX_PARAMETERS):
    """Private functions of ``modules`` with more than ``limit`` parameters (``self``/``cls`` not counted)."""
    found = []
    for module in modules:
        for node in ast.walk(ast.parse(module.source)):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not _private(node.name):
                continue
            a = node.args
            names = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs] + [p.arg for p in (a.vararg, a.kwarg) if p]
            count = len([p for p in names if p not in ("self", "cls")])
            if count > limit:
                found.append(f"{module.name}:{node.lineno} {node.name} takes {count} parameters")
    return found


def _modules_of(prefix):
    return [m for m in skframe_tree().modules.values() if m.name == prefix or m.name.startswith(prefix + ".")]


def test_model_selection_uses_no_private_part_of_models():
    methods = private_estimator_methods(_modules_of("skframe.models"))
    assert "_new_fit" in methods  # the check sees the estimators' private methods
    found = private_uses(_modules_of("skframe.model_selection"), methods)
    assert not found, "model selection fits through skframe.models._fit.Fit only:\n" + "\n".join(found)


@pytest.mark.parametrize("room", SPINE_ROOMS)
def test_private_functions_take_at_most_ten_parameters(room):
    found = long_signatures(_modules_of(room))
    assert not found, "group the arguments (a plan, a recipe, a tuple of settings):\n" + "\n".join(found)


def test_private_uses_and_long_signatures_are_seen():
    tree = Tree.from_sources({
        "skframe.models.ridge": "class R:\n    def _fit_machine(self, a):\n        return self._other()\n",
        "skframe.model_selection.paths": (
            "from skframe.models._core import _hidden, visible\n"
            "def path(est):\n    est._fit_machine(1)\n    est._fit_input = None\n    est.public()\n"
            "def _wide(a, b, c, d, e, f, g, h, i, j, *, k):\n    return a\n"),
    })
    methods = private_estimator_methods([tree.modules["skframe.models.ridge"]])
    found = private_uses([tree.modules["skframe.model_selection.paths"]], methods)
    assert found == ["skframe.model_selection.paths:1 imports skframe.models._core._hidden",
                     "skframe.model_selection.paths:3 uses est._fit_machine",
                     "skframe.model_selection.paths:4 sets est._fit_input"]
    assert long_signatures([tree.modules["skframe.model_selection.paths"]]) == [
        "skframe.model_selection.paths:6 _wide takes 11 parameters"]


# ----------------------------------------------------------------------------- one decision point
# Every execution choice is the plan's: the engine rule, the executor, the thread counts. These modules hold the
# rules (and the description of the machine they read); code elsewhere passes on what they decided.
PLAN_MODULES = ("skframe.core.engine", "skframe.core.threads", "skframe.compute.plan", "skframe.compute.plan_rules",
                "skframe.compute.execution", "skframe.compute.machine")
#: calls that take a decision: the engine rule, its thresholds and the default plan's former name, the machine's
#: cores, the plan's rules, and creating threads or setting a library's thread count
DECIDING_CALLS = frozenset({"select_engine", "engine_rule", "choose_engine", "with_engine", "elementwise_engine",
                            "numba_enabled", "numba_min_work", "cpu_count", "sched_getaffinity", "available_cores",
                            "choose_executor", "choose_backend", "choose_blas_threads", "solver_blas_threads",
                            "fold_jobs", "choose_device", "choose_network_threads", "threadpool_limits",
                            "set_num_threads", "ThreadPoolExecutor"})
#: rooms held to one decision point
DECISION_ROOMS = SPINE_ROOMS + ("skframe.uncertainty", "skframe.cli")
#: modules of the fit that read the executor from the plan instead of looking at the data
EXECUTOR_FROM_PLAN = ("skframe.models._fit", "skframe.models._base", "skframe.models.ridge",
                      "skframe.models.machine", "skframe.compute.stream_fit.streamed_representation")


def _call_name(node):
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _reads_a_decision(arg):
    """An argument of ``serial_blas`` that passes a decision on: a constant, a name or attribute (``not`` one),
    a call of a plan rule, or an expression on the plan's ``blas_threads``."""
    if isinstance(arg, (ast.Constant, ast.Name, ast.Attribute)):
        return True
    if isinstance(arg, ast.UnaryOp) and isinstance(arg.op, ast.Not):
        return _reads_a_decision(arg.operand)
    if isinstance(arg, ast.Call):
        return _call_name(arg) in ("one_blas_thread", "fold_jobs")
    return "blas_threads" in ast.unparse(arg)


def local_decisions(modules):
    """``module:line`` of every engine, executor or thread decision taken outside :data:`PLAN_MODULES`."""
    found = []
    for module in modules:
        if module.name in PLAN_MODULES:
            continue
        tree = ast.parse(module.source)
        functions = {node: node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = _call_name(node)
            if name in DECIDING_CALLS:
                found.append(f"{module.name}:{node.lineno} calls {name}")
            elif name == "serial_blas" and node.args and not _reads_a_decision(node.args[0]):
                found.append(f"{module.name}:{node.lineno} decides BLAS threads: {ast.unparse(node.args[0])}")
        owners = [module.name] + [f"{module.name}.{name}" for name in functions.values()]
        if any(owner.startswith(EXECUTOR_FROM_PLAN) for owner in owners):
            for function in [tree] if module.name.startswith(EXECUTOR_FROM_PLAN) else [
                    f for f, name in functions.items() if f"{module.name}.{name}".startswith(EXECUTOR_FROM_PLAN)]:
                found += [f"{module.name}:{node.lineno} chooses the executor from the data"
                          for node in ast.walk(function)
                          if isinstance(node, ast.Call) and _call_name(node) == "is_dask_collection"]
    return sorted(set(found), key=lambda f: (f.split(":")[0], int(f.split(":")[1].split()[0])))


@pytest.mark.parametrize("room", DECISION_ROOMS)
def test_execution_choices_are_the_plans(room):
    """The plan hands out the decisions; no loop takes one.

    The rule: outside :data:`PLAN_MODULES` (the engine rule ``skframe.core.engine``, the thread pool
    ``skframe.core.threads``, the plan ``skframe.compute.plan``, ``plan_rules``, ``execution`` and ``machine``), no
    module of skframe's models, compute, core, model selection, uncertainty or command line calls a name of
    :data:`DECIDING_CALLS`: no engine rule (``select_engine``, ``engine_rule``, ``with_engine``, the numba
    thresholds), no core count (``os.cpu_count``, ``sched_getaffinity``, ``available_cores``), no plan rule, no
    thread creation or thread setting (``ThreadPoolExecutor(``, ``threadpool_limits(``, ``set_num_threads(``);
    ``serial_blas`` is given a decision to apply (a constant, a name, the plan's ``blas_threads``), never an
    expression of its own; the fit's modules read the executor from the plan, never from the data. A routine
    that is handed options naming an engine runs on it (:func:`skframe.core.engine.planned` returns them
    unchanged); a direct call without a plan gets the one default plan that ``planned`` builds.
    """
    found = local_decisions(_modules_of(room))
    assert not found, ("choose engines, executors and threads in the plan (skframe.compute.plan, plan_rules, "
                       "skframe.core.engine) and pass the decision on:\n" + "\n".join(found))


#: built-in plugins held to the plan's thread decisions: a solver applies the BLAS threads its problem carries
#: (``problem.blas_threads``, set from the plan), never its own rule. Their compiled-or-NumPy loops are still theirs
#: to pick when called with no engine (``numba_enabled``, ``select_engine``): a component called directly has no plan.
PLUGINS_FROM_PLAN = ("skframe_solvers", "skframe_kernels", "skframe_losses", "skframe_sketches", "skframe_decoders",
                     "skframe_graphs")
THREAD_CALLS = ("cpu_count", "sched_getaffinity", "choose_blas_threads", "solver_blas_threads")


def thread_decisions(modules):
    """The BLAS-thread and core-count decisions among :func:`local_decisions`."""
    return [f for f in local_decisions(modules)
            if "decides BLAS threads" in f or any(f.endswith(f"calls {name}") for name in THREAD_CALLS)]


@pytest.mark.parametrize("room", PLUGINS_FROM_PLAN)
def test_builtin_plugins_take_threads_from_the_plan(room):
    modules = _modules_of(room)
    assert modules, f"no module in {room}"
    found = thread_decisions(modules)
    assert not found, ("apply the plan's decision (e.g. serial_blas(problem.blas_threads == 1)), do not take one:\n"
                       + "\n".join(found))


def test_local_decisions_are_seen():
    tree = Tree.from_sources({
        "skframe.models._fit": "def represent(X):\n    return is_dask_collection(X)\n",
        "skframe.model_selection.paths": (
            "def fold(n, plan):\n    with serial_blas(n < 10):\n        pass\n"
            "    with serial_blas(plan.blas_threads == 1):\n        pass\n"
            "    return select_engine(None, n), os.cpu_count()\n"),
    })
    found = sorted(local_decisions(tree.modules.values()))
    assert thread_decisions(tree.modules.values()) == ["skframe.model_selection.paths:2 decides BLAS threads: n < 10",
                                                       "skframe.model_selection.paths:6 calls cpu_count"]
    assert found == ["skframe.model_selection.paths:2 decides BLAS threads: n < 10",
                     "skframe.model_selection.paths:6 calls cpu_count",
                     "skframe.model_selection.paths:6 calls select_engine",
                     "skframe.models._fit:2 chooses the executor from the data"]


#: engine decisions a loss may not take: its values and sub-gradients run on the engine of the plan's rule for
#: entry-by-entry formulas (``elementwise_engine``, the threshold ``LOSS_NUMBA_MIN_ENTRIES`` of skframe.core.engine)
LOSS_ENGINE_CALLS = ("numba_enabled", "numba_min_work", "select_engine", "engine_rule")


def test_losses_take_their_engine_from_the_plan():
    found = [f for f in local_decisions(_modules_of("skframe_losses"))
             if any(f.endswith(f"calls {name}") for name in LOSS_ENGINE_CALLS)]
    assert not found, "ask elementwise_engine(F.size) (the plan's rule) instead:\n" + "\n".join(found)


def test_local_thread_and_engine_decisions_are_seen():
    tree = Tree.from_sources({"skframe.core.loops": (
        "def run(func, items, options, torch):\n"
        "    options = with_engine(options, 10)\n"
        "    torch.set_num_threads(4)\n"
        "    with ThreadPoolExecutor(max_workers=2) as pool:\n        pass\n"
        "    with threadpool_limits(1):\n        pass\n"
        "    return available_cores(), planned(options, 10)\n")})
    assert local_decisions(tree.modules.values()) == [
        "skframe.core.loops:2 calls with_engine", "skframe.core.loops:3 calls set_num_threads",
        "skframe.core.loops:4 calls ThreadPoolExecutor", "skframe.core.loops:6 calls threadpool_limits",
        "skframe.core.loops:8 calls available_cores"]


def private_names_across_rooms(modules):
    """``module:line`` of every private name (``_x``) imported from another room of skframe."""
    found = []
    for module in modules:
        room = ".".join(module.name.split(".")[:2])
        for node in ast.walk(ast.parse(module.source)):
            if not isinstance(node, ast.ImportFrom) or node.level or not (node.module or "").startswith("skframe."):
                continue
            if ".".join(node.module.split(".")[:2]) == room:
                continue
            found += [f"{module.name}:{node.lineno} imports {node.module}.{a.name}" for a in node.names
                      if _private(a.name)]
    return found


@pytest.mark.parametrize("room", SPINE_ROOMS)
def test_no_private_name_crosses_rooms(room):
    """e.g. the block engine's products are public (skframe.core.block_engine), not a private of sketching."""
    found = private_names_across_rooms(_modules_of(room))
    assert not found, "\n".join(found)


# ----------------------------------------------------------------------------- module sizes
MAX_MODULE_LINES = 400
MAX_PACKAGE_INIT_LINES = 80
#: modules allowed over MAX_MODULE_LINES (none: split a module by concern instead of adding it here)
OVER_THE_LIMIT = frozenset()
#: what a package ``__init__`` may define besides imports and names: the module hooks of a lazy re-export
LAZY_HOOKS = frozenset({"__getattr__", "__dir__"})


def _source_modules(root=ROOT / "src"):
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        yield ".".join(parts), path


def long_modules(sources, limit=MAX_MODULE_LINES):
    """``module: n lines`` of every module over ``limit`` lines; ``sources`` maps module names to text."""
    return [f"{name}: {len(text.splitlines())} lines" for name, text in sources.items()
            if len(text.splitlines()) > limit and name not in OVER_THE_LIMIT]


def implementation_in_inits(sources, limit=MAX_PACKAGE_INIT_LINES):
    """What a package ``__init__`` holds beyond re-exports: too many lines, or a class or function of its own."""
    found = []
    for name, text in sources.items():
        if not name.endswith("__init__"):
            continue
        if len(text.splitlines()) > limit:
            found.append(f"{name}: {len(text.splitlines())} lines")
        found += [f"{name}:{node.lineno} defines {node.name}" for node in ast.parse(text).body
                  if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.name not in LAZY_HOOKS]
    return found


def test_no_module_is_over_400_lines():
    sources = {name: path.read_text(encoding="utf-8") for name, path in _source_modules()}
    found = long_modules(sources)
    assert not found, f"split these modules by concern (at most {MAX_MODULE_LINES} lines):\n" + "\n".join(found)
    assert OVER_THE_LIMIT <= set(sources), "the allowlist names modules that no longer exist"


def test_package_inits_only_publish():
    sources = {name: path.read_text(encoding="utf-8") for name, path in _source_modules()}
    found = implementation_in_inits(sources)
    assert not found, ("a package __init__ publishes names (imports, __all__, a lazy __getattr__); move code into "
                       "a module of the package:\n" + "\n".join(found))


def test_sizes_are_seen():
    sources = {"skframe.big": "x = 1\n" * 401, "skframe.small": "x = 1\n" * 400,
               "skframe.pkg.__init__": "from skframe.pkg.a import b\n\n\ndef helper():\n    return b\n",
               "skframe.lazy.__init__": "def __getattr__(name):\n    raise AttributeError(name)\n",
               "skframe.long.__init__": "import os\n" * 81}
    assert long_modules(sources) == ["skframe.big: 401 lines"]
    assert implementation_in_inits(sources) == ["skframe.pkg.__init__:4 defines helper",
                                                "skframe.long.__init__: 81 lines"]


# ----------------------------------------------------------------------------- capabilities, not types and names
DISPATCH_ROOMS = ("skframe.models", "skframe.model_selection", "skframe.uncertainty")
_NAME_ATTRIBUTES = frozenset({"__name__", "__qualname__", "__module__", "__class__"})
_TEXT_TESTS = frozenset({"startswith", "endswith"})


def _is_type_call(node):
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type"
            and len(node.args) == 1 and not node.keywords)


def _names_a_class(node):
    """``type(x)``, or an attribute chain that ends in ``__name__``/``__qualname__``/``__module__``/``__class__``."""
    return _is_type_call(node) or (isinstance(node, ast.Attribute) and node.attr in _NAME_ATTRIBUTES)


def dispatch_on_class(modules):
    """``module:line`` of every decision taken on an object's class or its name instead of its capabilities.

    The rule: in the modules of :data:`DISPATCH_ROOMS`, no comparison (``is``, ``is not``, ``==``, ``!=``, ``in``,
    ``not in``) has ``type(x)`` or an attribute ``__name__``, ``__qualname__``, ``__module__`` or ``__class__`` on
    either side, and no ``startswith``/``endswith`` is asked of such an attribute. Model selection, the intervals
    and the models ask what an estimator or a component can do: its :class:`skframe.contract.model_tags.ModelTags`,
    the tags of its components (:func:`skframe.contract.tags.get_tags`), a field of the fit's ``Recipe`` or a
    method the component offers (e.g. a solver's ``solve_batch``). ``isinstance`` and messages that print a class
    name are allowed; a subclass inherits its parent's capabilities.
    """
    found = []
    for module in modules:
        for node in ast.walk(ast.parse(module.source)):
            if isinstance(node, ast.Compare) and any(_names_a_class(side) for side in [node.left, *node.comparators]):
                found.append(f"{module.name}:{node.lineno} compares a class or its name")
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _TEXT_TESTS
                  and _names_a_class(node.func.value)):
                found.append(f"{module.name}:{node.lineno} reads a class's name or module")
    return found


@pytest.mark.parametrize("room", DISPATCH_ROOMS)
def test_dispatch_is_by_capability(room):
    found = dispatch_on_class(_modules_of(room))
    assert not found, ("ask what the object can do (ModelTags, component tags, a Recipe field, a method it offers), "
                       "not its class or name:\n" + "\n".join(found))


def test_dispatch_on_class_is_seen():
    tree = Tree.from_sources({"skframe.models.paths": (
        "def f(est, solver):\n"
        "    if type(est) is Ridge:\n        return 1\n"
        "    if type(est).__name__ != 'Ridge':\n        return 2\n"
        "    if est.__class__.__name__ in ('A', 'B'):\n        return 3\n"
        "    if type(solver).__module__.startswith('skframe_solvers.'):\n        return 4\n"
        "    if isinstance(est, Ridge) or model_tags(est).posterior:\n        return 5\n"
        "    raise ValueError(f'{type(est).__name__} has no path')\n")})
    assert dispatch_on_class([tree.modules["skframe.models.paths"]]) == [
        "skframe.models.paths:2 compares a class or its name",
        "skframe.models.paths:4 compares a class or its name",
        "skframe.models.paths:6 compares a class or its name",
        "skframe.models.paths:8 reads a class's name or module"]
