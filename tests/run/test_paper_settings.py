"""Each method's published settings per dataset (and backbone), applied by composition to every
cell of a run or sweep, overridable on the command line; and the KG a dataset brings."""

from __future__ import annotations

import mlflow
import pytest
import yaml

from kgx.core.paths import CONF_DIR
from kgx.run.spec import to_run_spec
from tests.inprocess import kgx_main

SETTINGS = sorted((CONF_DIR / "paper_settings").glob("*.yaml")) + sorted((CONF_DIR / "paper_backbone").glob("*.yaml"))
DATASETS = sorted(p.stem for p in (CONF_DIR / "dataset").glob("*.yaml"))
METHODS = sorted(p.stem for p in (CONF_DIR / "method").glob("*.yaml"))
LLMS = sorted(p.stem for p in (CONF_DIR / "llm").glob("*.yaml"))


def cell(path) -> list[str]:
    """The overrides that select ``path``: its stem is <method>_<dataset>[_<llm>]."""
    stem = path.stem
    method = max((m for m in METHODS if stem.startswith(m + "_")), key=len)
    rest = stem[len(method) + 1 :]
    if path.parent.name == "paper_backbone":
        llm = next(x for x in LLMS if rest.endswith("_" + x))
        return [f"method={method}", f"dataset={rest[: -len(llm) - 1]}", f"llm={llm}"]
    return [f"method={method}", f"dataset={rest}"]


@pytest.mark.parametrize("path", SETTINGS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_settings_file_reaches_its_cell(path, compose_cfg):
    overrides = cell(path)
    assert overrides[1].removeprefix("dataset=") in DATASETS
    spec = to_run_spec(compose_cfg(*overrides))
    written = yaml.safe_load(path.read_text())
    for key, value in written["method"].items():
        assert getattr(spec.method, key) == value, (path.name, key)
    assert spec.settings.source == written["settings"]["source"]
    assert spec.settings.published is written["settings"]["published"]


@pytest.mark.parametrize(
    "overrides, expected",
    [
        # LMP App. C.2 Table 7: ChatGPT/GPT-4 rows, then the Llama-3-70B rows where they differ.
        (["method=lmp", "dataset=webqsp", "llm=gpt4"], {"width": 5, "depth": 2}),
        (["method=lmp", "dataset=cwq", "llm=gpt35"], {"width": 5, "depth": 4}),
        (["method=lmp", "dataset=grailqa", "llm=gpt4"], {"width": 5, "depth": 3}),
        (["method=lmp", "dataset=simpleqa", "llm=gpt4"], {"width": 5, "depth": 1}),
        (["method=lmp", "dataset=webquestions", "llm=gpt35"], {"width": 5, "depth": 2}),
        (["method=lmp", "dataset=cwq", "llm=llama3_70b"], {"width": 3, "depth": 4}),
        (["method=lmp", "dataset=grailqa", "llm=llama3_70b"], {"width": 3, "depth": 3}),
        (["method=lmp", "dataset=webqsp", "llm=llama3_70b"], {"width": 5, "depth": 2}),
        # Table 7 has no Llama-3-8B row: the Llama-2/3-70B rows' setting, not published (below).
        (["method=lmp", "dataset=cwq", "llm=llama3_8b"], {"width": 3, "depth": 4}),
        (["method=lmp", "dataset=webqsp", "llm=llama3_8b"], {"width": 5, "depth": 2}),
        # KnowPath Sec. 3.3, 4.4, App. F.2-F.4: D_max 3, 15 triples, 0.4; "up to 7 ... (length up to 5)";
        # answering at 0 as its released code sends it.
        (
            ["method=knowpath", "dataset=cwq"],
            {
                "depth": 3,
                "triples": 15,
                "temperature_explore": 0.4,
                "temperature_answer": 0.0,
                "width": 7,
                "entity_width": 7,
                "list_length": 5,
            },
        ),
        # ToG Sec. 4.1, run as its released code runs it; PoG's released run; StructGPT's released WebQSP run.
        (
            ["method=tog", "dataset=grailqa"],
            {"width": 3, "depth": 3, "temperature_explore": 0.4, "fallback": "cot", "score_per": "relation"},
        ),
        (["method=tog_r", "dataset=cwq"], {"fallback": "cot"}),
        # The papers' IO and CoT figures are ToG's: its released prompts' six exemplars.
        (["method=cot", "dataset=cwq"], {"shots": 6, "exemplars": "tog"}),
        (["method=io", "dataset=webquestions"], {"shots": 6, "exemplars": "tog"}),
        # ToG as CGPE ran it (Sec. 4.1-4.2), and its TOG*; kgx's own ToG where no paper ran one.
        (
            ["+experiment=cgpe_tog", "dataset=metaqa_1hop"],
            {"temperature_explore": 0.0, "topics": "clues", "max_calls": 30, "fallback": "cot", "width": 3},
        ),
        (["+experiment=cgpe_tog_star", "dataset=metaqa_2hop"], {"fallback": "paths", "max_calls": 30}),
        (["method=tog", "dataset=metaqa_1hop"], {"fallback": "paths", "score_per": "entity", "topics": "gold"}),
        (["method=pog", "dataset=webqsp"], {"depth": 4, "temperature_explore": 0.3, "temperature_reason": 0.3}),
        (["method=structgpt", "dataset=webqsp"], {"depth": 2, "width": 1, "max_triples_per_relation": 60}),
        # No published setting on MetaQA: kgx walks the dataset's hops (LMP's default depth is 1).
        (["method=lmp", "dataset=metaqa_3hop"], {"depth": 3}),
    ],
)
def test_a_cell_gets_the_papers_values(overrides, expected, compose_cfg):
    method = to_run_spec(compose_cfg(*overrides)).method
    assert {key: getattr(method, key) for key in expected} == expected


@pytest.mark.parametrize("llm", ["llama3_8b", "o1_mini"])
@pytest.mark.parametrize("dataset", ["webqsp", "cwq"])
def test_a_backbone_table_7_has_no_row_for_claims_no_published_setting(compose_cfg, llm, dataset):
    settings = to_run_spec(compose_cfg("method=lmp", f"dataset={dataset}", f"llm={llm}")).settings
    assert settings.published is False and "Table 7" in settings.source


def test_the_command_line_wins_and_can_drop_them(compose_cfg):
    spec = to_run_spec(compose_cfg("method=lmp", "dataset=cwq", "llm=gpt4", "method.width=2"))
    assert (spec.method.width, spec.method.depth) == (2, 4)
    spec = to_run_spec(compose_cfg("method=lmp", "dataset=cwq", "~paper_settings"))
    assert (spec.method.width, spec.method.depth, spec.settings.source) == (3, 1, None)


def test_a_sweep_cell_gets_its_settings(compose_cfg):
    """A backbones sweep on WebQSP gets LMP's Table 7 settings, not its defaults (3, 1)."""
    cfg = compose_cfg("+sweeps=lmp_backbones", "method=lmp", "dataset=webqsp", "kg=freebase", "llm=gpt4")
    assert (cfg.method.width, cfg.method.depth) == (5, 2)
    assert cfg.settings.source.startswith("LMP Table 7 (WebQSP")


@pytest.mark.parametrize(
    "overrides, width_depth, source",
    [
        # The README's example, then a backbones sweep's cell, as a user types them.
        (("method=lmp", "dataset=cwq", "llm=gpt4"), (5, 4), "LMP Table 7 (CWQ, ChatGPT/GPT-4): K=5, L=4"),
        (
            ("+sweeps=lmp_backbones", "method=lmp", "dataset=webqsp", "kg=freebase", "llm=gpt4"),
            (5, 2),
            "LMP Table 7 (WebQSP, ChatGPT/GPT-4): K=5, L=2",
        ),
    ],
)
def test_cfg_job_shows_the_settings_and_where_they_came_from(overrides, width_depth, source, in_tmp):
    done = kgx_main(in_tmp, *overrides, "--cfg", "job")
    assert done.returncode == 0, done.stderr
    job = yaml.safe_load(done.stdout)
    assert (job["method"]["width"], job["method"]["depth"]) == width_depth
    assert job["settings"] == {"source": source, "published": True}


def test_the_tag_says_where_the_settings_came_from(compose_cfg):
    def describe(*overrides: str) -> str:
        spec = to_run_spec(compose_cfg(*overrides))
        return spec.settings.describe(spec.method.name, spec.dataset.name)

    assert describe("method=io", "dataset=metaqa_1hop") == "defaults: no published setting for io on metaqa_1hop"
    assert describe("method=lmp", "dataset=cwq") == "LMP Table 7 (CWQ, ChatGPT/GPT-4): K=5, L=4"
    assert describe("method=lmp", "dataset=metaqa_2hop") == (
        "not published: kgx (no published setting): L = 2 hop(s) of metaqa_2hop"
    )


def test_a_run_logs_the_settings_tag(run, in_tmp):
    outcome = run("dataset.limit=2")
    client = mlflow.MlflowClient(tracking_uri=f"sqlite:///{in_tmp}/mlruns/mlflow.db")
    assert client.get_run(outcome.run_id).data.tags["settings"] == "defaults: no published setting for cot on demo"


@pytest.mark.parametrize("dataset", DATASETS)
def test_a_dataset_brings_its_own_kg(dataset, compose_cfg):
    cfg = compose_cfg(f"dataset={dataset}")
    assert cfg.kg.name == (cfg.dataset.kg or "demo")


def test_an_explicit_kg_still_wins(compose_cfg):
    assert compose_cfg("dataset=metaqa_1hop").kg.name == "metaqa"
    assert compose_cfg("dataset=metaqa_1hop", "kg=demo").kg.name == "demo"
    assert compose_cfg("+experiment=lmp_webqsp").kg.name == "freebase"


def test_a_method_that_reads_no_kg_needs_no_server_for_its_datasets_kg(run):
    """dataset=cwq brings kg=freebase (a server on localhost:8890): cot never queries it, so it is
    not pinged and the run needs none."""
    import os
    from pathlib import Path

    if not (Path(os.environ.get("KGX_DATA_DIR", "/nonexistent")) / "freebase_qa" / "cwq.json").exists():
        pytest.skip("needs $KGX_DATA_DIR/freebase_qa/cwq.json")
    outcome = run("dataset=cwq", "dataset.limit=2")
    assert outcome.status == "FINISHED" and outcome.summary["n_questions"] == 2
