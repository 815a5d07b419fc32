"""A misspelt option or key gets one line with the closest names: no ``base_*`` schemas, no search
path, no OmegaConf report (kgx.run.typos)."""

from __future__ import annotations

import pytest

from tests.inprocess import kgx_main


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["method=lmpp"], "kgx: error: method=lmpp: no such method; did you mean lmp? (options: "),
        (["dataset=webqps"], "kgx: error: dataset=webqps: no such dataset; did you mean webqsp or webqsp_rog"),
        (
            ["-m", "+sweeps=baselines_smok"],
            "kgx: error: +sweeps=baselines_smok: no such sweep; did you mean baselines_smoke?",
        ),
        (["+paper=knowpth_table1"], "kgx: error: +paper=knowpth_table1: no such paper; did you mean knowpath_table1"),
        (["hydra/launcher=jobli"], "kgx: error: hydra/launcher=jobli: no such launcher; did you mean joblib?"),
        (["method.dept=3"], "kgx: error: method.dept: lmp has no setting 'dept'; did you mean method.depth?"),
        (
            ["method=tog", "method.widht=2"],
            "kgx: error: method.widht: tog has no setting 'widht'; did you mean method.width?",
        ),
        (["run.sed=1"], "kgx: error: run.sed: run has no setting 'sed'; did you mean run.seed?"),
    ],
)
def test_a_typo_gets_one_line_with_the_closest_names(tmp_path, args, line):
    done = kgx_main(tmp_path, *args)
    assert done.returncode == 1
    assert done.stderr.startswith(line), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "base_" not in done.stderr and "search path" not in done.stderr and "HYDRA_FULL_ERROR" not in done.stderr
