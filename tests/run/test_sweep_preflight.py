"""A sweep checks what its jobs need before it spends: keys, dataset files, KGs that answer and
hold the dataset's topics, in one message with each way out; nothing is launched and no parent
run is left (kgx.run.sweep_preflight). ``--no-preflight`` launches anyway."""

from __future__ import annotations

from kgx.kg.serve import free_port
from tests.inprocess import kgx_main


def test_a_keyless_sweep_stops_before_any_job_naming_the_key_and_the_jobs(in_tmp):
    done = kgx_main(in_tmp, "-m", "method=io,cot", "llm=gpt4o_mini", "dataset.limit=2")
    assert done.returncode == 1
    assert (
        "the sweep's pre-flight found what its 2 jobs need and this machine lacks; no job was launched" in done.stderr
    )
    assert "OPENAI_API_KEY is not set (llm 'gpt4o_mini', gpt-4o-mini) (2 jobs: method=io, method=cot)" in done.stderr
    assert "export OPENAI_API_KEY=..., or choose a backbone this machine has" in done.stderr
    assert not (in_tmp / "mlruns").exists()  # no store, so no empty parent run
    assert not list(in_tmp.glob("outputs/runs/*"))


def test_an_endpoint_that_does_not_answer_is_named_once_with_the_ways_out(in_tmp):
    endpoint = f"http://127.0.0.1:{free_port()}/sparql"
    done = kgx_main(
        in_tmp, "-m", "method=tog,cgpe,io", "llm=scripted", "kg=sparql", f"kg.endpoint={endpoint}", "dataset.limit=2"
    )
    assert done.returncode == 1
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("  - kg 'sparql'")]
    assert f"kg 'sparql' at {endpoint}: SPARQL endpoint {endpoint} unreachable" in line
    assert "(2 jobs: method=tog, method=cgpe)" in line  # io reads no KG
    assert f"start the endpoint at {endpoint} (python -m kgx.kg serve" in line
    assert not (in_tmp / "mlruns").exists()


def test_no_preflight_launches_and_each_job_stops_on_its_own(in_tmp):
    done = kgx_main(in_tmp, "-m", "method=io,cot", "llm=gpt4o_mini", "dataset.limit=2", "--no-preflight")
    assert done.returncode == 1
    assert "pre-flight found" not in done.stderr
    assert "sweep" in done.stdout and "0 finished, 2 failed" in done.stdout
    assert "needs an API key: set the environment variable OPENAI_API_KEY" in done.stderr


def test_a_single_run_whose_kg_does_not_open_names_the_ways_out(in_tmp):
    endpoint = f"http://127.0.0.1:{free_port()}/sparql"
    done = kgx_main(in_tmp, "method=tog", "llm=scripted", "kg=sparql", f"kg.endpoint={endpoint}", "kg.retries=0")
    assert done.returncode == 1
    assert f"SPARQL endpoint {endpoint} unreachable" in done.stderr
    assert f"Ways out: start the endpoint at {endpoint} (python -m kgx.kg serve" in done.stderr


def test_the_ways_out_of_freebase_datasets_include_subgraphs_and_replay(compose_cfg):
    from kgx.run.spec import to_run_spec
    from kgx.run.sweep_preflight import kg_fix

    fix = kg_fix(to_run_spec(compose_cfg("method=tog", "dataset=cwq", "llm=scripted")))
    assert "start the endpoint at http://localhost:8890/sparql" in fix
    assert "dataset=webqsp_rog,cwq_rog kg=subgraph" in fix and "kg=replay" in fix
    assert "kg=subgraph" not in kg_fix(to_run_spec(compose_cfg("method=tog", "dataset=grailqa", "llm=scripted")))


def test_a_sweep_on_the_local_model_says_how_long_it_expects_before_it_starts(compose_cfg):
    from kgx.run.spec import to_run_spec
    from kgx.run.sweep_preflight import local_time

    def specs(*jobs: tuple[str, ...]) -> list:
        return [(" ".join(job), to_run_spec(compose_cfg(*job))) for job in jobs]

    grid = specs(*[(f"method={m}", f"run.seed={s}") for m in ("io", "cot") for s in (0, 1, 2)])
    said = local_time(grid)  # 6 jobs x 16 demo questions x 24 s: 38.4 min
    assert said.startswith(
        "kgx: 6 jobs of this sweep run the local CPU model on 96 questions in all: expect about 38 min"
    )
    # ToG's call bound (2ND + D + 1 = 22 at N = D = 3) x 4.5 s a call, on 4 questions: 6.6 min
    assert "on 4 questions in all: expect about 7 min" in local_time(specs(("method=tog", "dataset.limit=4")))
    assert local_time(specs(("method=io", "dataset.limit=2"))) == ""  # half a minute: nothing to announce
    assert local_time(specs(("method=io", "llm=scripted"))) == ""  # no local model
