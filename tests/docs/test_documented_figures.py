"""Every figure the documentation states comes from a benchmark report or a tested command, within a stated tolerance.

A figure is tied to its source by an HTML comment right after it (invisible on the site and on GitHub)::

    SISOKR reaches an F1 of 44.21 <!-- fig: bibtex.json:results.SISOKR.f1 ±0.01 -->
    fit 0.77 s, predict 0.21 s <!-- fig: bibtex.json:results.SISOKR.fit_s ±50%; bibtex.json:x.predict_s ±50% -->

A marker holds one source per figure, separated by ``;``; its sources belong, in order, to the last numbers written
before it (since the previous marker of its paragraph, or of its row in a table). A source is one of

* ``FILE.json:key.path`` — a value of the report ``benchmarks/out/FILE.json`` (list items by index, keys holding dots
  or spaces in quotes: ``molecules.json:models."IOKR (exact)".top1``); ``A / B`` divides two such values (a speed-up);
  ``×100`` after it scales the value (a fraction written as a percentage);
* ``run above KEY`` / ``run below KEY`` — the documented code block just above / below the marker on the same page
  (``above:2``: the second one above) is run as ``tests/docs/test_docs.py`` runs it (same small data files; a block
  marked ``data`` or ``needs X`` is skipped without them; each block runs once per test session): for a shell block
  KEY is a key path in the ``--json`` output of its last command, for a Python block ``line N`` is the first number
  printed on the N-th line of its output;
* ``ref`` — a figure of a paper or of the authors' reference code measured once ("reference here"), quoted as
  published: it is stated, not recomputed, and takes no tolerance.

then the tolerance: ``±0.01`` (absolute) or ``±20%`` (relative to the source value); timings measured on a shared
machine take a generous relative one. The test fails when a figure drifts beyond its tolerance, when a marker names a
missing report or key, or is malformed, or stands after too few numbers.

**Tables of results** (rule checked on README.md and docs/*.md): a Markdown table is one of results when a cell of its
body, outside the first column (the row's label) and outside code spans, holds a *figure* — a number with a decimal
point, or a number followed by a unit (``s``, ``ms``, ``%``, ``×``, ``MB``, ``GB``). Every figure in such a table must
be covered by a marker in its cell. Prose figures are checked wherever they carry a marker; benchmarks/README.md, the
benchmark report itself (each of its sections names the script and the JSON it quotes), is checked for the markers it
carries but not held to the table rule.

**Command blocks** of README.md and docs/*.md (```` ```bash ````) have no line wider than 100 characters: long
commands continue on the next line after `` \\``, which ``tests/docs/test_docs.py`` joins before running them.
"""

from __future__ import annotations

import json
import math
import re
import shlex
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "benchmarks" / "out"
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
REPORT = ROOT / "benchmarks" / "README.md"
MAX_COMMAND_WIDTH = 100

MARKER = re.compile(r"<!--\s*fig:(?P<body>.*?)-->", re.S)
NUMBER = re.compile(r"(?<![\w.])[-−]?\d+(?:[  ]\d{3})*(?:\.\d+)?(?:e[-+]?\d+)?(?![\w])", re.I)
FIGURE = re.compile(r"(?<![\w.^])[-−]?(?:\d+(?:[  ]\d{3})*\.\d+|\d+(?:[  ]\d{3})*\s?(?:s|ms|%|×|MB|GB)(?![\w]))"
                    r"|×\s?\d+(?:\.\d+)?")
CODE_SPAN = re.compile(r"`[^`\n]*`")
FENCE = re.compile(r"```(?P<lang>[\w-]*)\n(?P<body>.*?)```", re.S)
SOURCE = re.compile(
    r"^\s*(?P<src>ref|run\s+(?:above|below)(?::\d+)?\s+[\w.\[\] ]+?|[\w.-]+\.json:[^;]+?)"
    r"(?:\s*×\s*(?P<scale>[-+\d.e]+))?"
    r"(?:\s*±\s*(?P<tol>[-+\d.e]+)(?P<pct>%)?)?\s*$"
)


# --------------------------------------------------------------------------------------------------------- parsing
def _to_float(text):
    return float(text.replace("−", "-").replace(" ", "").replace(" ", ""))


def _mask_fences(text):
    """The text with fenced code blocks blanked (same length): figures inside code are not prose figures."""
    return FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def parse_sources(body):
    """The sources of one marker body: a list of dicts (``src``, ``scale``, ``tol``, ``relative``)."""
    sources = []
    for part in body.split(";"):
        m = SOURCE.match(part)
        if not m:
            raise ValueError(f"unreadable figure source {part.strip()!r}")
        src = m.group("src").strip()
        if src != "ref" and m.group("tol") is None:
            raise ValueError(f"figure source {src!r} states no tolerance (±0.01 or ±20%)")
        sources.append({"src": src, "scale": float(m.group("scale") or 1.0),
                        "tol": float(m.group("tol") or 0.0), "relative": bool(m.group("pct"))})
    return sources


def markers(text):
    """Every marker of a page: (line number, numbers it covers, sources), in order.

    The numbers a marker covers are the last ``len(sources)`` numbers written between it and the previous marker of
    its paragraph (of its row, in a table).
    """
    masked = _mask_fences(text)
    found = []
    previous_end = 0
    for m in MARKER.finditer(masked):
        line_start = masked.rfind("\n", 0, m.start()) + 1
        paragraph_start = masked.rfind("\n\n", 0, m.start()) + 1
        row = masked[line_start:].lstrip().startswith("|")
        start = max(previous_end, line_start if row else paragraph_start)
        previous_end = m.end()
        lineno = masked.count("\n", 0, m.start()) + 1
        try:
            sources = parse_sources(m.group("body"))
        except ValueError as exc:
            found.append((lineno, [], exc))
            continue
        numbers = [_to_float(n) for n in NUMBER.findall(CODE_SPAN.sub(" ", masked[start:m.start()]))]
        if len(numbers) < len(sources):
            found.append((lineno, [], ValueError(f"marker with {len(sources)} source(s) follows only "
                                                  f"{len(numbers)} number(s)")))
            continue
        found.append((lineno, numbers[len(numbers) - len(sources):], sources))
    return found


def _split_row(line):
    cells = line.strip().strip("|").split("|")
    return [c.strip() for c in cells]


def unmarked_table_figures(text):
    """(line number, figure) of every figure in a table of results that no marker covers (see the module doc)."""
    lines = _mask_fences(text).splitlines()
    missing = []
    in_table, header_seen = False, False
    table_rows = []

    def flush():
        figures_rows = []
        for lineno, line in table_rows:
            for cell in _split_row(line)[1:]:  # markers hold no '|'; the first cell is the row's label
                plain = CODE_SPAN.sub(" ", MARKER.sub(" ", cell))
                figs = FIGURE.findall(plain)
                if figs:
                    figures_rows.append((lineno, cell, figs))
        if not figures_rows:
            return
        for lineno, cell, figs in figures_rows:
            covered = []
            for _, numbers, sources in markers(cell):
                if isinstance(sources, Exception):
                    continue
                covered.extend(numbers)
            for fig in figs:
                value = _to_float(NUMBER.search(fig).group(0))
                if value in covered:
                    covered.remove(value)
                else:
                    missing.append((lineno, fig.strip()))

    for i, line in enumerate(lines, 1):
        if line.lstrip().startswith("|"):
            if not in_table:
                in_table, header_seen, table_rows = True, False, []
                continue  # header row
            if re.fullmatch(r"\s*\|?[\s:|-]+\|?\s*", line):
                header_seen = True
                continue
            if header_seen:
                table_rows.append((i, line))
        else:
            if in_table:
                flush()
            in_table = False
    if in_table:
        flush()
    return missing


# ------------------------------------------------------------------------------------------------------ the sources
def _key_parts(path):
    parts = []
    for m in re.finditer(r'"([^"]*)"|([^."]+)', path):
        parts.append(m.group(1) if m.group(1) is not None else m.group(2).strip())
    return parts


def lookup(ref, out_dir=OUT):
    """The value of ``FILE.json:key.path`` in ``out_dir``; raises ``LookupError`` naming what is missing."""
    file, _, path = ref.partition(":")
    report = out_dir / file.strip()
    if not report.exists():
        raise LookupError(f"no report {report.relative_to(ROOT) if report.is_relative_to(ROOT) else report}")
    value = json.loads(report.read_text(encoding="utf-8"))
    for part in _key_parts(path.strip()):
        if isinstance(value, list):
            try:
                value = value[int(part)]
            except (ValueError, IndexError):
                raise LookupError(f"{file}: no item {part!r} in {path!r}") from None
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            raise LookupError(f"{file}: no key {part!r} in {path!r}")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise LookupError(f"{file}:{path} is not a number: {value!r}")
    return float(value)


def json_value(src, out_dir=OUT):
    """A source's value: one report value, or the ratio ``A / B`` (B may omit its file: the same report)."""
    if " / " not in src:
        return lookup(src, out_dir)
    left, right = (s.strip() for s in src.split(" / ", 1))
    if ".json:" not in right:
        right = left.split(":", 1)[0] + ":" + right
    return lookup(left, out_dir) / lookup(right, out_dir)


def within(documented, source, scale, tol, relative):
    expected = source * scale
    bound = tol / 100 * abs(expected) if relative else tol
    return math.isfinite(expected) and abs(documented - expected) <= bound + 1e-12 * max(1.0, abs(expected))


# ---------------------------------------------------------------------------------------------------- command runs
def _docs_runner():
    """tests/docs/test_docs.py, whose helpers run documented blocks (small data files, environment, commands)."""
    from tests.docs import test_docs

    return test_docs


def _code_blocks(text):
    """(start offset, end offset, lang, body, docs-test options) of each fenced block of a page."""
    runner = _docs_runner()
    for m in runner.FENCE.finditer(text):
        marker = m.group("pre").strip()
        opts = marker[len("<!-- docs-test:"): -len("-->")].strip() if marker.startswith("<!-- docs-test:") else ""
        yield m.start(), m.end(), m.group("lang"), m.group("body"), opts


_RUNS = {}  # (page, block offset) -> output of the block: each block runs once per session


def run_block(page, text, offset, where, key, tmp_path):
    """The figure a ``run above[:N]|below[:N] KEY`` source names: run the block, read KEY from its output."""
    runner = _docs_runner()
    blocks = list(_code_blocks(text))
    direction, _, nth = where.partition(":")
    nth = int(nth or 1)
    candidates = ([b for b in blocks if b[1] <= offset][::-1] if direction == "above"
                  else [b for b in blocks if b[0] >= offset])
    if len(candidates) < nth:
        raise LookupError(f"no code block {where} the marker")
    start, _, lang, body, opts = candidates[nth - 1]
    if "skip" in opts:
        raise LookupError("the block is marked skip: it is not run")
    if "data" in opts and not runner._have_data():
        pytest.skip("needs the benchmark data")
    if runner._missing_module(opts):
        pytest.skip(f"needs {runner._missing_module(opts)}")
    if (page, start) not in _RUNS:
        # tests/docs/test_docs.py has run every block of the page already when it ran first in this session
        index = [m.start() for m in runner.FENCE.finditer(text)].index(start)
        earlier = runner.OUTPUTS.get((page, index))
        _RUNS[page, start] = earlier if earlier is not None else _run(lang, body, tmp_path)
    out = _RUNS[page, start]
    if lang == "bash":
        value = json.loads(out[out.find("{"):])
        for part in _key_parts(key):
            value = value[int(part)] if isinstance(value, list) else value[part]
        return float(value)
    m = re.fullmatch(r"line\s+(\d+)", key.strip())
    if not m:
        raise LookupError(f"a Python block's key is 'line N', not {key!r}")
    line = out.splitlines()[int(m.group(1)) - 1]
    return _to_float(NUMBER.search(line).group(0))


def _run(lang, body, tmp_path):
    """The output of a documented block (of its last command, for a shell block), run in ``tmp_path``."""
    runner = _docs_runner()
    runner._write_small_data(tmp_path)
    env = runner._env(tmp_path)
    if lang == "bash":
        out = None
        for cmd in runner._commands(body):
            out = runner._run_shell(cmd, tmp_path, env) or out
        return out
    script = tmp_path / "snippet.py"
    script.write_text(body, encoding="utf-8")
    res = runner._launch([sys.executable, str(script)], tmp_path, env)
    assert res.returncode == 0, res.stderr[-2000:]
    return res.stdout


# ------------------------------------------------------------------------------------------------------------ tests
def _page_id(page):
    return str(page.relative_to(ROOT))


def _check_page_markers(text, out_dir=OUT):
    """Problems of a page's report-backed markers (``run`` sources are left to :func:`test_run_figures`)."""
    problems = []
    for lineno, numbers, sources in markers(text):
        if isinstance(sources, Exception):
            problems.append(f"line {lineno}: {sources}")
            continue
        for number, s in zip(numbers, sources):
            if s["src"] == "ref" or s["src"].startswith("run "):
                continue
            try:
                value = json_value(s["src"], out_dir)
            except LookupError as exc:
                problems.append(f"line {lineno}: {exc}")
                continue
            if not within(number, value, s["scale"], s["tol"], s["relative"]):
                tol = f"±{s['tol']:g}{'%' if s['relative'] else ''}"
                problems.append(f"line {lineno}: documented {number:g}, {s['src']} gives "
                                f"{value * s['scale']:.6g} (tolerance {tol})")
    return problems


@pytest.mark.parametrize("page", PAGES + [REPORT], ids=_page_id)
def test_figures_match_their_reports(page):
    problems = _check_page_markers(page.read_text(encoding="utf-8"))
    assert not problems, f"{_page_id(page)}:\n" + "\n".join(problems)


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_tables_of_results_cite_their_figures(page):
    missing = unmarked_table_figures(page.read_text(encoding="utf-8"))
    assert not missing, (f"{_page_id(page)}: figures in tables of results without a source marker "
                         f"(<!-- fig: FILE.json:key ±tol -->): " + ", ".join(f"line {n}: {f}" for n, f in missing))


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_command_blocks_are_narrow(page):
    text = page.read_text(encoding="utf-8")
    wide = [(text.count("\n", 0, m.start()) + 1 + i, len(line))
            for m in FENCE.finditer(text) if m.group("lang") == "bash"
            for i, line in enumerate(m.group("body").splitlines(), 1) if len(line) > MAX_COMMAND_WIDTH]
    assert not wide, f"{_page_id(page)}: command lines wider than {MAX_COMMAND_WIDTH} (line, width): {wide}"


RUN_MARKERS = [(page, lineno, number, s) for page in PAGES
               for lineno, numbers, sources in markers(page.read_text(encoding="utf-8"))
               if not isinstance(sources, Exception)
               for number, s in zip(numbers, sources) if s["src"].startswith("run ")]


@pytest.mark.parametrize("page,lineno,number,source", RUN_MARKERS,
                         ids=[f"{_page_id(p)}:{n}" for p, n, _, _ in RUN_MARKERS])
def test_run_figures(page, lineno, number, source, tmp_path):
    text = page.read_text(encoding="utf-8")
    offset = sum(len(line) + 1 for line in text.split("\n")[: lineno - 1])
    _, where, key = source["src"].split(None, 2)
    value = run_block(page, text, offset, where, key, tmp_path)
    assert within(number, value, source["scale"], source["tol"], source["relative"]), (
        f"{_page_id(page)} line {lineno}: documented {number:g}, the block {where} gives {value:.6g}")


# ------------------------------------------------------------------------------------------------ self-test
MADE_UP = """# A made-up page

SISOKR reaches 44.21 <!-- fig: r.json:S.f1 ±0.01 --> in 0.77 s <!-- fig: r.json:S.fit_s ±50% -->.
That is 3.0 × <!-- fig: r.json:sk / r.json:S.fit_s ±5% -->; in percent 50 % <!-- fig: r.json:half ×100 ±0.5 -->.

| model | F1 | fit s | reference |
|---|---|---|---|
| SISOKR | 44.21 <!-- fig: r.json:S.f1 ±0.01 --> | 0.77 <!-- fig: r.json:S.fit_s ±50% --> | 44.12 <!-- fig: ref --> |
| IOKR | 44.9 | `1.5` | — |

```bash
skframe fit train.csv --test test.csv --kernel gaussian --kernel-param gamma=0.5 --sketch psr --sketch-size 200
```
"""


def _made_up(tmp_path, sisokr_f1=44.207, fit_s=0.77):
    tmp_path = tmp_path / f"{sisokr_f1}-{fit_s}"
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "r.json").write_text(json.dumps({"S": {"f1": sisokr_f1, "fit_s": fit_s}, "sk": 2.31, "half": 0.5}))
    return tmp_path


def test_self_test_on_a_made_up_page(tmp_path):
    out = _made_up(tmp_path)
    assert _check_page_markers(MADE_UP, out) == []
    # a drifted report value is caught, with the line, the documented figure and the source value
    drifted = _check_page_markers(MADE_UP, _made_up(tmp_path, sisokr_f1=44.16))
    assert len(drifted) == 2 and all("documented 44.21" in p and "44.16" in p for p in drifted)
    # a timing within its generous tolerance passes; beyond it, fails
    assert _check_page_markers(MADE_UP.replace("3.0 ×", "3.1 ×"), out) == []
    assert len(_check_page_markers(MADE_UP.replace("3.0 ×", "3.3 ×"), out)) == 1
    assert len(_check_page_markers(MADE_UP, _made_up(tmp_path, fit_s=2.0))) == 3  # two fit times and the speed-up
    # a missing report, a missing key, a malformed marker, a marker with no tolerance, a marker after no number
    broken = (MADE_UP.replace("r.json:half", "gone.json:half")
              .replace("S.f1 ±0.01 --> in", "S.f2 ±0.01 --> in")
              + "\nsee <!-- fig: r.json:sk ±1% -->\n"
              + "x 1.0 <!-- fig: r.json:sk -->\ny 2.0 <!-- fig: nonsense -->\n")
    problems = "\n".join(_check_page_markers(broken, out))
    for expected in ("no report", "no key 'f2'", "follows only 0 number", "states no tolerance",
                     "unreadable figure source"):
        assert expected in problems
    # the table rule: the IOKR row's 44.9 has no marker; code spans and the label column are not figures
    assert unmarked_table_figures(MADE_UP) == [(9, "44.9")]
    fixed = MADE_UP.replace("| 44.9 |", "| 44.9 <!-- fig: ref --> |")
    assert unmarked_table_figures(fixed) == []
    # a table of parameters (no decimal figure, no unit) is not a table of results
    assert unmarked_table_figures("| a | b |\n|---|---|\n| x | 200 |\n") == []
    # a cell with two figures needs both covered
    assert unmarked_table_figures("| a | b |\n|---|---|\n| x | 0.5 / 0.7 <!-- fig: ref --> |\n") == [(3, "0.5")]


def test_self_test_of_the_width_rule():
    wide = [line for m in FENCE.finditer(MADE_UP) for line in m.group("body").splitlines()
            if len(line) > MAX_COMMAND_WIDTH]
    assert len(wide) == 1
    joined = "skframe fit train.csv --test test.csv --kernel gaussian --kernel-param gamma=0.5 \\\n    --json"
    commands = list(_docs_runner()._commands(joined))
    assert len(commands) == 1 and shlex.split(commands[0]) == shlex.split(joined.replace("\\\n", ""))


def test_code_blocks_wrap_on_the_site():
    """The theme's extra style sheet makes code blocks wrap where a line cannot be broken."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    sheets = re.findall(r"^extra_css:\n((?:\s+-\s*\S+.*\n)+)", config, re.M)
    assert sheets, "mkdocs.yml names no extra_css"
    names = re.findall(r"-\s*(\S+)", sheets[0])
    css = "".join((ROOT / "docs" / name).read_text(encoding="utf-8") for name in names)
    assert re.search(r"pre\s*>\s*code\s*\{[^}]*white-space:\s*pre-wrap", css)
