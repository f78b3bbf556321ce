"""The automatic model: every decision ``skframe fit`` makes on a table, as a library object.

:class:`TableModel` (a scikit-learn estimator) reads a DataFrame, a table file or arrays, chooses the task, the
target, the scaling, lambda and gamma, the calibration and the intervals as the command line does, and records each
decision with its reason in ``report_``. :func:`fit_table` fits one in a call. The command line's ``fit`` builds the
same object; ``predict`` and ``evaluate`` load it. The modules here hold the rules (:mod:`.task`, :mod:`.scaling`,
:mod:`.classification`, :mod:`.chosen`, :mod:`.intervals`, :mod:`.holdout`), the replay of a saved model's
preprocessing (:mod:`.replay`), the options with their names and defaults (:mod:`.options`), the readers of raw
tables, columns, molecules and files larger than memory (``_raw_tables``, ``_columns``, ``_fit_data``,
``_graph_data``, ``_streamed``) and the task modules that build the estimators (``_task_regression``,
``_task_machine``, ``_task_structured``). Nothing here imports the command line (:mod:`skframe.cli`), which sits on
top: it parses options into these, calls the model and prints.

Importing this package is light: the classes load on first use.
"""

from skframe.deps import lazy_exports

__all__ = ["TableModel", "fit_table", "load"]

_HOMES = {"TableModel": "skframe.automatic.table_model", "fit_table": "skframe.automatic.table_model",
          "load": "skframe.automatic.table_model"}


__getattr__, __dir__ = lazy_exports(__name__, _HOMES, __all__)
