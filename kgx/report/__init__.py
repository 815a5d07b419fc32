"""Tables, figures and paired comparisons of kgx runs, read from MLflow (``python -m kgx.report``).

For a notebook: ``load_runs`` gives a polars frame of runs; ``metric_table``/``cost_table``
(and ``failure_table``, the failure breakdown)
lay it out as a ``Grid`` that ``render`` prints; ``plot_*`` write PNGs; ``compare_runs``
pairs two runs by question; ``log_summary`` puts a sweep's summary on its parent run;
``html_report`` is one HTML page of runs (``log_run_report`` logs a run's own);
``breakdown_table`` splits a metric by a question field (``QuestionFields`` reads the questions).
"""

from kgx.report.compare import (
    Comparison,
    compare_runs,
    compare_scores,
    describe,
    mcnemar_exact,
)
from kgx.report.failure_table import failure_table, plot_failures
from kgx.report.plots import plot_cost_accuracy, plot_param
from kgx.report.questions import QuestionFields, breakdown_table
from kgx.report.render import render
from kgx.report.runs import ReportError, load_runs
from kgx.report.sweep_summary import (
    html_report,
    log_run_report,
    log_summary,
    write_summary,
)
from kgx.report.tables import Grid, cost_table, metric_table

__all__ = [
    "Comparison",
    "Grid",
    "QuestionFields",
    "ReportError",
    "breakdown_table",
    "compare_runs",
    "compare_scores",
    "cost_table",
    "describe",
    "failure_table",
    "html_report",
    "load_runs",
    "log_run_report",
    "log_summary",
    "mcnemar_exact",
    "metric_table",
    "plot_cost_accuracy",
    "plot_failures",
    "plot_param",
    "render",
    "write_summary",
]
