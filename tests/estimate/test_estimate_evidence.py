"""``python -m kgx.estimate --precision``: equal pilot values are no evidence of precision.

CGPE on PathQuestion makes 5 calls on each of a 5-question pilot and 7.6 on average over the job;
taking the tokens' spread for the calls' would print 1,000 [940-1,060] "reached" against 1,522.
A figure the pilot saw equal on every question is never "reached": the pilot grows until it shows a
spread or covers every kind of a job of several kinds, and otherwise the estimate says the width is
unknown.
"""

from __future__ import annotations

import json

from kgx.estimate.model import no_spread, warnings
from kgx.estimate.pilot import main
from kgx.estimate.strata import Strata


def kinds_of(sizes: list[int]) -> Strata:
    """A job of ``sizes[h]`` questions of kind h."""
    return Strata("qtype", {f"k{h}-{i}": f"k{h}" for h, size in enumerate(sizes) for i in range(size)})


def test_equal_values_are_evidence_only_across_every_kind_of_several():
    fives, varied = [5.0] * 4, [10.0, 12.0, 9.0, 30.0]
    one_kind = Strata("", {f"q{i}": "" for i in range(200)})
    # One kind (PathQuestion has none): five calls on each of four questions say nothing of the other 196.
    assert no_spread(one_kind, [""] * 4, {"calls": fives, "tokens": varied}) == ["calls"]
    assert no_spread(one_kind, [""] * 4, {"calls": fives, "tokens": fives}) == ["calls", "tokens"]
    assert no_spread(one_kind, [""] * 4, {"calls": varied, "tokens": varied}) == []
    # Several kinds: equal across some of them is no evidence, across all of them it is.
    three = kinds_of([10, 10, 10])
    assert no_spread(three, ["k0", "k0", "k1", "k1"], {"calls": fives, "tokens": varied}) == ["calls"]
    assert no_spread(three, ["k0", "k1", "k2", "k2"], {"calls": fives, "tokens": varied}) == []
    # One question is open anyway (its own warning); a pilot of the whole job is exact.
    assert no_spread(one_kind, [""], {"calls": [5.0], "tokens": [9.0]}) == []
    assert no_spread(Strata("", {f"q{i}": "" for i in range(4)}), [""] * 4, {"calls": fives, "tokens": varied}) == []
    (said,) = warnings(one_kind, [""] * 4, {"calls": fives, "tokens": [10.0, 12.0, 9.0, 11.0]})
    assert said == (
        "calls 5 on every one of the 4 pilot questions: the pilot shows no spread, so the width of the interval is "
        "unknown (a prior stands in for it); --precision grows the pilot until it shows one"
    )


def estimate(capsys, *args: str) -> dict:
    assert main([*args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_pilot_of_equal_calls_is_never_reached_and_grows(capsys, in_tmp, pilot_rounds):
    # CoT makes one call a question: plain random (no kinds), equal calls on every pilot question
    # are never "reached", however narrow the tokens' prior makes the interval; the pilot doubles up
    # to --max-pilot and says its width is unknown.
    plain = ["method=cot", "llm=scripted", "--strata", "none", "--pilot", "3", "--precision", "0.5"]
    (job,) = estimate(capsys, *plain, "--max-pilot", "9")["jobs"]
    assert [len(ids) for ids in pilot_rounds] == [3, 3, 3]
    assert (job["pilot"], job["reached"], job["flat"]) == (9, False, ["calls"])
    assert "pilot stopped at --max-pilot 9 short of ±50%" in job["note"]
    assert job["warnings"][0].startswith("calls 1 on every one of the 9 pilot questions: the pilot shows no spread")
    # Spread over the demo's two kinds (hops), one call on every question of both is evidence: reached at once.
    pilot_rounds.clear()
    (job,) = estimate(capsys, "method=cot", "llm=scripted", "--pilot", "4", "--precision", "0.5")["jobs"]
    assert ([len(ids) for ids in pilot_rounds], job["reached"], job["flat"]) == ([4], True, [])
