"""The documentation site builds with warnings as errors (MkDocs ``--strict``), renders the docstrings'
cross-reference roles as links, typesets its formulas and publishes none of its build hooks."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ROLE = re.compile(r":(?:py:)?(?:func|class|mod|meth|attr|data|exc|obj|const|term):`")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    pytest.importorskip("latex2mathml")
    out = tmp_path_factory.mktemp("docs") / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", PYTHONPATH=str(ROOT / "src"))
    res = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                          "-d", str(out)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-5000:]
    return out


def test_documentation_site_builds_strict(site):
    assert (site / "index.html").exists()
    assert (site / "reference" / "cli" / "index.html").exists()


def test_no_literal_sphinx_roles(site):
    literal = {str(page.relative_to(site)): sorted(set(ROLE.findall(page.read_text(encoding="utf-8"))))
               for page in site.rglob("*.html")}
    assert not {page: roles for page, roles in literal.items() if roles}


def test_roles_become_links_in_the_api_reference(site):
    api = (site / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    # a role the docstrings use, e.g. :class:`~skframe.models.SketchedKernelRidge`, points at its section
    assert re.search(r'<a class="autorefs autorefs-internal"[^>]*href="#skframe\.[\w.]+"[^>]*><code>', api)
    assert "<autoref" not in api


def test_the_machines_shared_parameters_stand_in_full_in_the_api_reference(site):
    api = (site / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    for name in ("SketchedKernelMachine", "SketchedKernelClassifier"):
        section = api[api.index(f'id="skframe.models.{name}"'):]
        section = section[:section.index('id="skframe.models.', 1)]
        for parameter in ("kernel_params", "sketch_size", "warm_start", "memory_budget", "backend"):
            assert f"<code>{parameter}</code>" in section, (name, parameter)
        assert "documented in full in the class" not in section


def test_formulas_are_typeset(site):
    page = (site / "losses_and_solvers" / "index.html").read_text(encoding="utf-8")
    assert '<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">' in page
    assert '<span class="arithmatex">\\(' not in page and '<div class="arithmatex">\\[' not in page


def test_build_hooks_are_not_published(site):
    assert not (site / "_hooks").exists()
    assert not list(site.rglob("*.py"))


def _crossrefs():
    import importlib.util

    spec = importlib.util.spec_from_file_location("crossrefs", ROOT / "docs" / "_hooks" / "crossrefs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_role_rewriting_forms():
    pytest.importorskip("griffe")
    rewrite = _crossrefs().rewrite
    paths = {"fit_curve": "skframe.model_selection.curves.fit_curve"}

    def resolve(target):
        return paths.get(target, target)

    out = rewrite("See :func:`fit_curve` and :class:`~skframe.models.SketchedKernelRidge`.", resolve)
    assert out == ('See <autoref identifier="skframe.model_selection.curves.fit_curve" optional><code>fit_curve'
                   '</code></autoref> and <autoref identifier="skframe.models.SketchedKernelRidge" optional>'
                   '<code>SketchedKernelRidge</code></autoref>.')
    explicit = rewrite(":meth:`the fit <skframe.models.SketchedKernelRidge.fit>`", resolve)
    assert explicit == '<autoref identifier="skframe.models.SketchedKernelRidge.fit" optional>the fit</autoref>'
    assert rewrite(":py:mod:`skframe.core`", resolve).startswith('<autoref identifier="skframe.core" optional>')
    assert rewrite("no role, ``code`` stays", resolve) == "no role, ``code`` stays"
