"""How fast the local model answers, by thread count and OpenMP wait policy, on a quiet machine
and with the other cores busy; and what kgx's crash probe costs. The figures behind the defaults
in kgx/llm/local_setup.py (``default_threads``, ``OMP_WAIT_POLICY=PASSIVE``).

    python benchmarks/local_model.py                      # every case, about 5-10 minutes
    python benchmarks/local_model.py --threads 2 --policies PASSIVE --busy 1 --requests 5
    python benchmarks/local_model.py --probe-only

Each case runs in a fresh process, because the OpenMP runtime reads OMP_WAIT_POLICY once, when
llama.cpp loads; a case that runs past ``--budget`` seconds is stopped and reported with the
requests it finished. "Busy" cases start that many busy-loop processes for the case's duration.
One request is what the provider does per call: reset the context, then a ~57-token chat
prompt answered with up to 20 tokens at temperature 0.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kgx.llm import local_probe, local_setup

MESSAGES = [
    {"role": "system", "content": "You answer questions about a knowledge graph in plain words."},
    {
        "role": "user",
        "content": "Question: Which rivers flow through the capital of France, and "
        "what country is it in? List a few short facts about the city and "
        "its rivers.",
    },
]
CHILD = """
import json, sys, time
from llama_cpp import Llama
kwargs, messages, requests = json.loads(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3])
start = time.perf_counter()
llama = Llama(**kwargs)
print(json.dumps({"load_s": time.perf_counter() - start}), flush=True)
for _ in range(requests):
    start = time.perf_counter()
    llama.reset()
    out = llama.create_chat_completion(messages=messages, max_tokens=20, temperature=0.0, seed=0)
    print(json.dumps({"latency_s": time.perf_counter() - start, **out["usage"]}), flush=True)
llama.close()
"""
BUSY = "while True: pass"


def run_case(threads: int, policy: str, busy: int, requests: int, budget: float) -> dict:
    """One fresh process with this wait policy and thread count, ``busy`` spinning neighbours."""
    kwargs = local_setup.llama_kwargs({"n_threads": threads})
    env = {**os.environ, "OMP_WAIT_POLICY": policy}
    load_before = os.getloadavg()[0]
    spinners = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(busy)]
    try:
        cmd = [sys.executable, "-c", CHILD, json.dumps(kwargs), json.dumps(MESSAGES), str(requests)]
        try:
            out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=budget).stdout
            timed_out = False
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
            timed_out = True
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    load = next((r["load_s"] for r in rows if "load_s" in r), None)
    done = [r for r in rows if "latency_s" in r]
    return {
        "threads": threads,
        "policy": policy,
        "busy": busy,
        "load_s": load,
        "timed_out": timed_out,
        "loadavg": load_before,
        "latencies": [r["latency_s"] for r in done],
        "tokens": (done[0]["prompt_tokens"], done[0]["completion_tokens"]) if done else None,
    }


def show(case: dict, budget: float) -> str:
    lat = case["latencies"]
    where = f"{case['busy']} busy" if case["busy"] else "quiet"
    if lat:
        figure = f"median {statistics.median(lat):6.2f} s  (min {min(lat):.2f}, max {max(lat):.2f})"
    else:
        figure = f"no reply within {budget:.0f} s"
    load = f"{case['load_s']:.2f} s" if case["load_s"] is not None else "-"
    tokens = "%d+%d tokens" % case["tokens"] if case["tokens"] else ""
    stopped = "  [stopped at the budget]" if case["timed_out"] else ""
    return (
        f"n_threads={case['threads']}  {case['policy']:7s}  {where:7s}  load {load:>7s}  "
        f"{len(lat)} req  {figure}  {tokens}  (load avg before {case['loadavg']:.1f}){stopped}"
    )


def probe_cost() -> str:
    """The crash probe with an empty marker directory (first run on a machine), then again."""
    kwargs = local_setup.llama_kwargs({})
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["KGX_LOCAL_PROBE_DIR"] = tmp
        start = time.perf_counter()
        local_probe.probe(kwargs)
        first = time.perf_counter() - start
        start = time.perf_counter()
        local_probe.probe(kwargs)
        cached = time.perf_counter() - start
        markers = len(list(Path(tmp).iterdir()))
    return f"probe: first {first:.2f} s, cached {cached * 1000:.1f} ms ({markers} marker file)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--policies", nargs="+", default=["ACTIVE", "PASSIVE"])
    parser.add_argument(
        "--busy",
        type=int,
        nargs="+",
        default=[0, max(1, local_setup.usable_cores() - 1)],
        help="busy-loop processes beside the model (default: none, and all cores but one)",
    )
    parser.add_argument("--requests", type=int, default=3)
    parser.add_argument("--budget", type=float, default=90.0, help="seconds per case at most")
    parser.add_argument("--probe-only", action="store_true")
    args = parser.parse_args()
    print(
        f"llama-cpp-python {local_probe.llama_cpp_version()}, {local_setup.usable_cores()} cores, "
        f"load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    print(probe_cost(), flush=True)
    if args.probe_only:
        return
    for busy in args.busy:
        for threads in args.threads:
            for policy in args.policies:
                print(show(run_case(threads, policy, busy, args.requests, args.budget), args.budget), flush=True)


if __name__ == "__main__":
    main()
