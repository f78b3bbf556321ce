"""The fit options: one table of names, types and defaults in the library, the command line's options on top."""

import subprocess
import sys
import typing
from dataclasses import MISSING, fields

import pytest

from skframe.automatic.options import TableOptions
from skframe.exceptions import InvalidParameterError


def _table(cls):
    return [(f.name, f.default, f.default_factory is not MISSING) for f in fields(cls)]


def test_the_command_options_are_the_library_fields_with_the_same_defaults():
    from skframe.cli._options import CLI_OPTIONS, FitOptions, _is_cli

    assert issubclass(FitOptions, TableOptions)
    assert _table(FitOptions) == _table(TableOptions)  # same names, order and defaults
    hints = typing.get_type_hints(FitOptions, include_extras=True)
    plain = typing.get_type_hints(TableOptions)
    exposed = {f.name for f in fields(FitOptions) if _is_cli(hints[f.name])}
    assert exposed == set(CLI_OPTIONS)
    for name in exposed:  # the Typer option wraps the library's type, unchanged
        assert typing.get_args(hints[name])[0] == plain[name], name


def test_the_library_options_check_their_values_in_the_options_words():
    opts = TableOptions(task="Regression", kernel_param=["gamma=0.5"], quantiles="0.1,0.9", sketch_size="40")
    assert (opts.task, opts.kernel_params, opts.quantiles, opts.sketch_size) == ("regression", {"gamma": 0.5},
                                                                                 [0.1, 0.9], 40)
    with pytest.raises(InvalidParameterError, match="--task 'regresion' is not one of"):
        TableOptions(task="regresion")
    with pytest.raises(InvalidParameterError, match="--holdout 1.5"):
        TableOptions(holdout=1.5)


def test_the_automatic_model_does_not_load_the_command_line():
    code = ("import sys; from skframe.automatic import TableModel, options, pipeline, replay; "
            "bad = sorted(m for m in sys.modules if m == 'typer' or m.startswith(('skframe.cli', 'typer.'))); "
            "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""
