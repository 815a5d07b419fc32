"""The HTML report of a paper sweep as a reader sees it: rendered by headless Chromium at 1,280 px,
measured by script in the page, and screenshot (``report.png`` beside the page, in the test's temp
folder). Nothing overflows the page: each table fits or scrolls inside its own box, with its row
labels held in view; every figure lies inside the window; the paper's in/out cells are coloured.

Skipped without Chromium, except in CI (tests/test_dashboard.py says how).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from kgx.report.sweep_summary import html_report
from tests.report.test_paper_tables import kgx, write_data
from tests.test_dashboard import chromium

pytestmark = pytest.mark.slow

WIDTH = 1280
# Run in the page once it has laid out: the page's own width, each table against its box, each figure
# against the window, and how the marked cells and the label columns are drawn.
MEASURE = """
<script>
addEventListener('load', () => {
  const W = window.innerWidth;
  const box = e => e.getBoundingClientRect();
  const tables = [...document.querySelectorAll('table')].map(t => {
    const holder = t.closest('.scroll');
    return {
      caption: (t.caption || {}).textContent || '',
      width: t.scrollWidth,
      holder: holder ? Math.round(box(holder).right) : null,
      scrolls: holder ? getComputedStyle(holder).overflowX : null,
      sticky: getComputedStyle(t.querySelector('tr>:first-child')).position,
    };
  });
  const figures = [...document.querySelectorAll('img, svg')].map(
    f => ({left: Math.round(box(f).left), right: Math.round(box(f).right), width: Math.round(box(f).width)}));
  const marked = cls => [...document.querySelectorAll('td.' + cls)].map(c => getComputedStyle(c).backgroundColor);
  const out = document.createElement('pre');
  out.id = 'measured';
  out.textContent = JSON.stringify({
    window: W, page: document.documentElement.scrollWidth, tables, figures, in: marked('in'), out: marked('out'),
  });
  document.body.appendChild(out);
});
</script>
"""


def chrome(browser: str, page: Path, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--window-size={WIDTH},2400",
            "--virtual-time-budget=10000",
            *args,
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done


@pytest.fixture(scope="module")
def report(tmp_path_factory, _mlflow_template) -> Path:
    """The page of a small scripted sweep of LMP Table 2 (twelve backbone x dataset columns):
    three CoT rows on two CWQ and two WebQSP questions, written as ``python -m kgx.report html``
    writes it."""
    cwd = tmp_path_factory.mktemp("browser")
    data = write_data(cwd / "data")
    rows = ("+paper/row=cot_gpt35,cot_gpt4,cot_llama3_8b", "dataset=webqsp,cwq", "kg=demo")
    done = kgx(cwd, data, "-m", "+paper=lmp_table2", "llm=scripted", *rows)
    assert done.returncode == 0, done.stderr
    page = cwd / "report.html"
    page.write_text(html_report(uri=f"sqlite:///{cwd / 'mlruns' / 'mlflow.db'}", parent="lmp_table2"))
    return page


def test_the_paper_sweeps_report_reads_at_1280_px(report):
    browser = chromium()
    measured = report.with_name("measured.html")
    measured.write_text(report.read_text().replace("</body>", MEASURE + "</body>"))
    dom = chrome(browser, measured, "--dump-dom").stdout
    found = json.loads(re.search(r'<pre id="measured">(.*?)</pre>', dom, re.S).group(1).replace("&quot;", '"'))
    assert found["window"] == WIDTH and found["page"] <= WIDTH  # nothing makes the page scroll sideways

    tables = {t["caption"].split(":")[0]: t for t in found["tables"]}
    paper = tables["lmp_table2"]
    assert paper["width"] > WIDTH - 100  # twelve columns: wider than the page's text, so it scrolls
    assert paper["scrolls"] == "auto" and paper["sticky"] == "sticky"  # in its box, the row labels held
    for table in found["tables"]:
        assert table["holder"] is not None and table["holder"] <= WIDTH, table
        assert table["scrolls"] == "auto", table

    assert len(found["figures"]) >= 2  # accuracy against cost, and why questions were missed
    for figure in found["figures"]:
        assert 0 <= figure["left"] and figure["right"] <= WIDTH and figure["width"] >= 600, figure

    # kgx's interval over two questions (0.0 [0.0, 65.8]) holds the paper's figures up to 65.8, not those above
    assert found["in"] and set(found["in"]) == {"rgb(223, 243, 226)"}
    assert found["out"] and set(found["out"]) == {"rgb(251, 224, 220)"}

    shot = report.with_name("report.png")
    chrome(browser, report, f"--screenshot={shot}")
    assert shot.read_bytes().startswith(b"\x89PNG")
