"""One self-contained HTML page of runs: tables, figures and a browser of their questions.

MLflow's artifact viewer shows an HTML artifact as it is, in a frame, with nothing beside it,
so the page carries everything inline: its CSS, its figures as base64 PNG, and a few lines of
script for the status filter (without the script every question is simply shown). Every text
that comes from a run (questions, answers, evidence, names) is escaped: questions contain ``<``
and ``&``. The browser holds at most ``MAX_QUESTIONS`` questions and embeds at most
``MAX_PICTURES`` explanation pictures, so that a long run gives a page a browser can open.
"""

from __future__ import annotations

import base64
import html
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from kgx.core.paths import file_name
from kgx.diagnose.breakdown import CATEGORIES, describe
from kgx.report.render import NotedTable, html_table
from kgx.results.record import Record
from kgx.track.transcripts import command

MAX_QUESTIONS = 2000
MAX_PICTURES = 30
MAX_EVIDENCE = 20

# Read at 1,280 px and in MLflow's narrower artifact pane: a table wider than the page scrolls
# inside its own box (.scroll) with its first column held in view; captions, notes and question
# texts wrap; a figure is shown at its own size, or shrunk to the page's width, never wider.
STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1200px;padding:0 16px;color:#222}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd}
.sub,.note{color:#666;max-width:110ch;overflow-wrap:anywhere}nav a{margin-right:12px}
.scroll{max-width:100%;overflow-x:auto;margin:8px 0}
table{border-collapse:separate;border-spacing:0;margin:0}
caption{text-align:left;color:#666;padding-bottom:4px;max-width:calc(100vw - 48px);position:sticky;left:0}
th,td{border:1px solid #ddd;border-width:0 1px 1px 0;padding:3px 8px;white-space:nowrap}
tr:first-child>*{border-top-width:1px}tr>:first-child{border-left-width:1px}
td.num{text-align:right;font-variant-numeric:tabular-nums}th{background:#f4f4f4}
tr>:first-child{position:sticky;left:0;z-index:1;white-space:normal;min-width:6em;max-width:16em}
td.in{background:#dff3e2}td.out{background:#fbe0dc}
figure{display:block;margin:8px 0;max-width:100%}figure img{display:block;max-width:100%;height:auto}
figcaption{color:#666;font-size:12px}
details{border:1px solid #e3e3e3;border-radius:4px;margin:3px 0;padding:2px 8px}
details[open]{background:#fafafa}summary{cursor:pointer}summary code{color:#555}
.st{display:inline-block;min-width:56px;text-align:center;border-radius:3px;font-size:12px;padding:0 4px}
.ok{background:#d9f2dc}.fallback{background:#fdf0c8}.error{background:#f8d2d2}
.right{color:#1a7f37}.wrong{color:#b42318}.run{color:#666;font-size:12px}
dl{display:grid;grid-template-columns:110px minmax(0,1fr);gap:2px 12px;margin:6px 0}dt{color:#666}
dd{margin:0;overflow-wrap:anywhere}summary{overflow-wrap:anywhere}
dd ul{margin:0;padding-left:18px}.filters select{margin-right:12px}img.explain{max-width:100%;border:1px solid #ddd}
"""

# Hides the questions that do not match the chosen status, run and result.
SCRIPT = """
const pick = () => Object.fromEntries([...document.querySelectorAll('.filters select')].map(s => [s.name, s.value]));
function filter() {
  const want = pick();
  let shown = 0;
  for (const q of document.querySelectorAll('details.q')) {
    q.hidden = Object.entries(want).some(([k, v]) => v && q.dataset[k] !== v);
    shown += !q.hidden;
  }
  document.getElementById('shown').textContent = shown;
}
document.querySelectorAll('.filters select').forEach(s => s.addEventListener('change', filter));
"""


@dataclass
class RunQuestions:
    """One run's questions as its page shows them. ``link`` is the run's artifact root as an
    href (relative to the page, or absolute), where ``traces/`` and ``explanations/`` are."""

    run_id: str
    label: str
    records: list[Record]
    link: Optional[str]  # None: the page cannot point at the run's artifacts
    explained: set[str] = field(default_factory=set)  # question ids with an explanation picture
    pictures: dict[str, bytes] = field(default_factory=dict)  # question id -> PNG to embed


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def page(
    title: str,
    subtitle: str,
    tables: Sequence[tuple[str, object]],
    figures: Sequence[Path],
    runs: Sequence[RunQuestions],
    metric: str,
) -> str:
    """The whole document. ``tables`` are (section title, Grid or error text) pairs: a table the
    runs cannot fill says why in its place rather than leaving the page unwritten."""
    sections = [f'<section id="tables"><h2>{esc(name)}</h2>{_table(grid)}</section>' for name, grid in tables]
    if figures:
        sections.append('<section id="figures"><h2>Figures</h2>' + "".join(map(_figure, figures)) + "</section>")
    sections.append(questions(runs, metric))
    nav = " ".join(
        f'<a href="#{a}">{t}</a>'
        for a, t in (("tables", "Tables"), ("figures", "Figures"), ("questions", "Questions"))
        if a != "figures" or figures
    )
    return (
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
        f'<style>{STYLE}</style></head><body><h1>{esc(title)}</h1><p class="sub">{esc(subtitle)}</p>'
        f"<nav>{nav}</nav>{''.join(sections)}<script>{SCRIPT}</script></body></html>\n"
    )


def _table(grid: object) -> str:
    """A Grid or TextTable; a table with its notes (a paper's); or the reason there is none."""
    if isinstance(grid, str):
        return f'<p class="note">{esc(grid)}</p>'
    if isinstance(grid, NotedTable):
        return html_table(grid.table) + "".join(f'<p class="note">{esc(n)}</p>' for n in grid.notes)
    return html_table(grid)


def _figure(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode()
    return (
        f'<figure><img alt="{esc(path.stem)}" src="data:image/png;base64,{data}"><figcaption>'
        f"{esc(path.name)}</figcaption></figure>"
    )


def questions(runs: Sequence[RunQuestions], metric: str) -> str:
    """The browser: per-run counts, the filters, then one ``<details>`` per question, in the
    runs' order and each run's dataset order, up to ``MAX_QUESTIONS``."""
    total = sum(len(r.records) for r in runs)
    out = ['<section id="questions"><h2>Questions</h2>']
    if not total:
        return out[0] + '<p class="note">no per-question records (predictions.jsonl) for these runs</p></section>'
    out.append(
        '<div class="scroll"><table><tr><th>run</th><th>questions</th><th>ok</th><th>fallback</th><th>error</th>'
        f"<th>{esc(metric)} = 1</th><th>entities shown without a name</th></tr>"
    )
    for run in runs:
        status = Counter(r.status for r in run.records)
        right = sum(_right(r, metric) for r in run.records)
        out.append(
            f"<tr><td>{esc(run.label)}</td>"
            + "".join(
                f'<td class="num">{n}</td>'
                for n in (
                    len(run.records),
                    status["ok"],
                    status["fallback"],
                    status["error"],
                    right,
                    _unnamed(run.records),
                )
            )
            + "</tr>"
        )
    out.append("</table></div>")
    shown = min(total, MAX_QUESTIONS)
    out.append(_filters(runs, metric, shown))
    pairs = [(i, record) for i, run in enumerate(runs) for record in run.records]
    if len(runs) > 1:  # one question's answers by every run side by side
        order = {qid: n for n, qid in enumerate(dict.fromkeys(r.id for _, r in pairs))}
        pairs.sort(key=lambda p: (order[p[1].id], p[0]))
    out += [_question(record, runs[i], i, metric, len(runs) > 1) for i, record in pairs[:shown]]
    if shown < total:
        out.append(
            f'<p class="note">the first {shown} of {total} questions are shown; every record is in each '
            "run's predictions.jsonl artifact</p>"
        )
    return "".join(out) + "</section>"


def _unnamed(records: Sequence[Record]) -> str:
    """ "12.5% of 48" (entities shown to the model, kgx.kg.metered), or "-" when none was shown."""
    shown, unnamed = sum(r.kg.entities for r in records), sum(r.kg.unnamed for r in records)
    return f"{100 * unnamed / shown:.1f}% of {shown}" if shown else "-"


def _filters(runs: Sequence[RunQuestions], metric: str, shown: int) -> str:
    def select(name: str, label: str, options: Sequence[tuple[str, str]]) -> str:
        items = "".join(f'<option value="{esc(v)}">{esc(t)}</option>' for v, t in options)
        return f'<label>{esc(label)} <select name="{name}"><option value="">all</option>{items}</select></label>'

    parts = [
        select("status", "status", [(s, s) for s in ("ok", "fallback", "error")]),
        select("result", metric, [("right", "right"), ("wrong", "wrong")]),
    ]
    found = [c for c in CATEGORIES if any(r.breakdown == c for run in runs for r in run.records)]
    if found:
        parts.append(select("why", "why", [(c, c) for c in found]))
    if len(runs) > 1:
        parts.append(select("run", "run", [(str(i), r.label) for i, r in enumerate(runs)]))
    return f'<p class="filters">{"".join(parts)} shown: <span id="shown">{shown}</span></p>'


def _right(record: Record, metric: str) -> bool:
    return record.scores.get(metric, 0.0) >= 1.0


def _question(record: Record, run: RunQuestions, index: int, metric: str, several: bool) -> str:
    right = _right(record, metric)
    prediction = record.prediction
    mark = f'<b class="right">{esc(metric)} ✓</b>' if right else f'<b class="wrong">{esc(metric)} ✗</b>'
    head = (
        f'<summary><span class="st {esc(record.status)}">{esc(record.status)}</span> {mark} '
        f"<code>{esc(record.id)}</code> {esc(record.question)}"
        f"{f' <span class=run>{esc(run.label)}</span>' if several else ''}</summary>"
    )
    rows = [
        ("question", esc(record.question)),
        ("gold", esc(" ; ".join(" | ".join(aliases) for aliases in record.gold))),
        ("answer", esc(prediction.answer) or "<i>none</i>"),
        ("answers", esc(", ".join(prediction.answers)) or "<i>none</i>"),
        ("evidence", _evidence(prediction.evidence)),
    ]
    if prediction.reason:
        rows.append(("reason", esc(prediction.reason)))
    if record.error:
        rows.append(("error", esc(json.dumps(record.error.to_dict()))))
    if record.breakdown:
        rows.append(("why", _why(record)))
    rows.append(("scores", esc(", ".join(f"{k} {v:g}" for k, v in record.scores.items()))))
    kg = record.kg
    named = (
        f", {kg.entities} entities shown, {kg.unnamed} without a name ({kg.unnamed_share:.0%})" if kg.entities else ""
    )
    on_kg = f"; {kg.queries} KG calls{named}" if kg.queries else ""
    rows.append(("cost", esc(f"{record.calls:,} LLM calls, {record.tokens:,} tokens, {record.latency_s:.2f} s{on_kg}")))
    if record.trace:  # the shard that holds it, and the command that shows it in MLflow's trace view
        rows.append(("trace", _link(run.link, record.trace)))
        rows.append(("transcript", f"<code>{esc(command(run.run_id))} {esc(record.id)}</code>"))
    if record.id in run.explained:
        rows.append(("explanation", _picture(record, run)))
    body = "".join(f"<dt>{name}</dt><dd>{value}</dd>" for name, value in rows)
    return (
        f'<details class="q" data-status="{esc(record.status)}" data-run="{index}" '
        f'data-result="{"right" if right else "wrong"}" data-why="{esc(record.breakdown)}">'
        f"{head}<dl>{body}</dl></details>"
    )


def _why(record: Record) -> str:
    """The failure category, with what reachability found and where exploration left the gold path."""
    parts = [f"<b>{esc(record.breakdown)}</b>"]
    if record.reach is not None:
        parts.append(esc(describe(record.reach)))
    if record.left_at:
        parts.append(esc(f"{record.left_at['why']} (gold path: {record.left_at['path']})"))
    return "; ".join(parts)


def _evidence(evidence: list[str]) -> str:
    if not evidence:
        return "<i>none</i>"
    items = "".join(f"<li>{esc(e)}</li>" for e in evidence[:MAX_EVIDENCE])
    more = f"<li><i>and {len(evidence) - MAX_EVIDENCE} more</i></li>" if len(evidence) > MAX_EVIDENCE else ""
    return f"<ul>{items}{more}</ul>"


def explanation_path(qid: str) -> str:
    """Where kgx.run.execute logs a question's explanation picture, under the run's artifact root."""
    return f"explanations/{file_name(qid)}.png"


def _picture(record: Record, run: RunQuestions) -> str:
    path = explanation_path(record.id)
    link = _link(run.link, path)
    png = run.pictures.get(record.id)
    if png is None:
        return link
    return (
        f'{link}<br><img class="explain" loading="lazy" alt="explanation of {esc(record.id)}" '
        f'src="data:image/png;base64,{base64.b64encode(png).decode()}">'
    )


def _link(root: Optional[str], path: str) -> str:
    """``path`` (relative to the run's artifact root) as its artifact path, linked when the
    page knows where that root is."""
    return f'<a href="{esc(root + path)}">{esc(path)}</a>' if root is not None else f"<code>{esc(path)}</code>"
