"""No credential in a URL is ever written: user-info and credential-like query parameters in
``llm.api_base``, ``run.tracking_uri``, ``run.cache_url`` (``kg.endpoint`` refuses them) are masked in
every file, MLflow param, log, error and ``--cfg job`` output, while the request gets the real URL."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kgx.core.masking import masked_text, masked_url, url_secrets
from kgx.core.trace_store import readable
from tests.helpers import kgx_env
from tests.inprocess import kgx_main

PASSWORD = "hunter2-pass"
KEY = "azure-key-0123456789"
API_BASE = f"http://alice:{PASSWORD}@127.0.0.1:9/v1?api-version=2024-06-01&api-key={KEY}"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://user:password@host/v1", "http://user:***@host/v1"),
        ("http://token1234@host/v1", "http://***@host/v1"),
        ("https://h/v1?api-version=1&api-key=abc", "https://h/v1?api-version=1&api-key=***"),
        ("https://h/x?token=t&sig=s&se=2030", "https://h/x?token=***&sig=***&se=2030"),
        ("https://h/x?access_token=t&apikey=k&key=k2", "https://h/x?access_token=***&apikey=***&key=***"),
        ("redis://:pw@h:6379/0?password=p", "redis://:***@h:6379/0?password=***"),
        ("sqlite:///abs/mlruns/mlflow.db", "sqlite:///abs/mlruns/mlflow.db"),
        ("http://h:8890/sparql?default-graph-uri=g&monkey=1", "http://h:8890/sparql?default-graph-uri=g&monkey=1"),
    ],
)
def test_masked_url_hides_user_info_and_credential_parameters(url, shown):
    assert masked_url(url) == shown


def test_url_secrets_are_the_values_masked_url_hides():
    assert set(url_secrets(API_BASE)) == {PASSWORD, KEY}
    assert url_secrets("https://h/v1?api-version=2024") == []


def test_text_masks_urls_and_credential_lines_but_not_their_neighbours():
    text = f"llm:\n  api_base: {API_BASE}\n  api_key: sk-live-abcdef\n  api_key_env: OPENAI_API_KEY\n  max_tokens: 9\n"
    shown = masked_text(text)
    assert PASSWORD not in shown and KEY not in shown and "sk-live-abcdef" not in shown
    assert "api_key: '[secret api_key]'" in shown and "api_key_env: OPENAI_API_KEY" in shown
    assert "max_tokens: 9" in shown and "api-version=2024-06-01" in shown
    assert masked_text("(gpt at http://u:pw@h/v1): refused.") == "(gpt at http://u:***@h/v1): refused."


def files_holding(root: Path, *secrets: str) -> list[str]:
    """Every file under ``root`` (sqlite databases included, read as bytes; trace shards
    decompressed) that holds a secret."""
    found = []
    for path in root.rglob("*"):
        if path.is_file():
            data = readable(path)
            if any(s.encode() in data for s in secrets):
                found.append(str(path.relative_to(root)))
    return found


def test_a_run_with_credentials_in_its_api_base_writes_none_of_them(in_tmp):
    done = kgx_main(in_tmp, "llm=scripted", f'llm.api_base="{API_BASE}"', "dataset.limit=2", "run.progress=false")
    assert done.returncode == 0, done.stderr
    assert files_holding(in_tmp, PASSWORD, KEY) == []
    assert PASSWORD not in done.stdout + done.stderr and KEY not in done.stdout + done.stderr
    config = (next((in_tmp / "outputs" / "runs").glob("*")) / "config.json").read_text()
    assert "http://alice:***@127.0.0.1:9/v1?api-version=2024-06-01&api-key=***" in config
    from mlflow.tracking import MlflowClient

    (run,) = MlflowClient(f"sqlite:///{in_tmp / 'mlruns' / 'mlflow.db'}").search_runs(["1"])
    assert run.data.params["llm.api_base"] == "http://alice:***@127.0.0.1:9/v1?api-version=2024-06-01&api-key=***"


def test_a_preflight_error_names_the_server_without_its_credentials(in_tmp):
    done = kgx_main(
        in_tmp,
        "llm=gpt4o_mini",
        f'llm.api_base="{API_BASE}"',
        "llm.max_retries=0",
        "dataset.limit=1",
        env={"OPENAI_API_KEY": "sk-test-not-a-key"},
    )
    assert done.returncode == 1
    assert "kgx: error: pre-flight request failed" in done.stderr
    assert "at http://alice:***@127.0.0.1:9/v1?api-version=2024-06-01&api-key=***" in done.stderr
    assert PASSWORD not in done.stderr and KEY not in done.stderr
    assert files_holding(in_tmp, PASSWORD, KEY) == []


@pytest.mark.slow
def test_cfg_job_prints_no_credential(tmp_path):
    shown = subprocess.run(
        [sys.executable, "-m", "kgx", "--cfg", "job", f'llm.api_base="{API_BASE}"', "+llm.extra.api_key=sk-abcdefgh"],
        cwd=tmp_path,
        env=kgx_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    assert "api_base: http://alice:***@127.0.0.1:9/v1?api-version=2024-06-01&api-key=***" in shown.stdout
    assert "api_key: '[secret api_key]'" in shown.stdout
    assert PASSWORD not in shown.stdout and KEY not in shown.stdout and "sk-abcdefgh" not in shown.stdout
