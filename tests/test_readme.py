"""The README's commands as a new user types them, in order, in a fresh folder: the first five, then
the "Comparing methods" block, each printing no warning and no error about its own settings.

The commands are read from README.md, so the README cannot drift from what runs. Each runs in
process (tests/inprocess.py); a command that would call a model keeps its backbone's settings
(``llm=local``'s, ``llm=gpt4o_mini``'s: the defaults under test) and has the scripted double answer
in its place (``llm.model=``), so that they run in seconds, offline. The dashboard command
(``kgx.ui``, a server) is left to tests/test_dashboard.py.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from kgx.report.__main__ import main as report_main
from tests.inprocess import kgx_main

README = Path(__file__).resolve().parents[1] / "README.md"
DOUBLE = "llm.model=kgx-scripted/overlap"
FIRST = 5


def commands(section: str = "") -> list[list[str]]:
    """The ``python -m kgx...`` lines of the README's bash blocks (of ``section`` only, when given),
    as argument lists without their comments."""
    text = README.read_text()
    if section:
        text = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    lines = [line.strip() for block in blocks for line in block.splitlines()]
    return [shlex.split(line, comments=True)[2:] for line in lines if line.startswith("python -m kgx")]


def run(cwd: Path, argv: list[str], capsys) -> str:
    """One command's stdout and stderr; a failure is the test's failure, with what it printed."""
    module, *args = argv
    if module == "kgx.report":
        report_main(args)
        out = capsys.readouterr()
        return out.out + out.err
    assert module == "kgx", argv
    if "--help" not in args and "llm=scripted" not in args:
        args.append(DOUBLE)
    done = kgx_main(cwd, *args, env={"OPENAI_API_KEY": "unused-by-the-scripted-double"})
    assert done.returncode == 0, f"{' '.join(argv)}:\n{done.stderr[-3000:]}"
    return done.stdout + done.stderr


def test_the_readmes_first_commands_and_its_comparison_run_in_order_without_a_warning(tmp_path, capsys, monkeypatch):
    first = commands()[:FIRST]
    compare = [c for c in commands("Comparing methods") if c[0] != "kgx.ui"]
    assert [c[0] for c in first] == ["kgx"] * FIRST and len(compare) == 4
    assert first[2] == ["kgx"]  # the main job, with its own defaults
    monkeypatch.chdir(tmp_path)  # the reports read ./mlruns, where the runs wrote it
    printed = {" ".join(c): run(tmp_path, c, capsys) for c in [*first, *compare]}
    for command, text in printed.items():
        assert not re.search(r"warning|error:", text, re.I), f"{command}:\n{text[-3000:]}"
    main_job = printed["kgx"]
    assert "lmp on demo with local: " in main_job and "over 16 questions (0 errors)" in main_job
    table = printed[" ".join(compare[1])]
    assert re.search(r"^cot\s+0\.0 \+- 0\.0 \(n=3\)$", table, re.M)  # the named sweep's three seeds, one cell
