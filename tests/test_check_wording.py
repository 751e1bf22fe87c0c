"""A check's advice names the options of the API that ran it: the CLI's flags
(--allow-undecided), a suite's keys (allow_undecided = true), the Python API's keywords
(CheckOptions, check_numpy, gradcheck: never a CLI flag). Every advice the report gives
(undecided, a forced step, a kink under strict, the time budget, the complex step) from
every API that can reach it.

The cases are algebra: exp(710) overflows float64 (undecided); central differences of
x**3 with h = 0.1 are off by h**2 = 0.01 (a forced step too large); abs has a kink at 0.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import agrad
from agrad.autograd import gradcheck
from agrad.check import CheckOptions, check_numpy

CLI_FLAG = re.compile(r"--[a-z]")

CASES = {  # advice: (program, --set, CLI options, check_numpy options, words in every API)
    "undecided": ("sum(exp(x))", "x=[710.0]", [], {}, "passes such a check"),
    "forced step": ("sum(x**3)", "x=[1.0, 2.0]", ["--eps", "0.1"], {"eps": 0.1}, "drop eps"),
    "strict kink": ("sum(abs(x))", "x=[0.0, 1.0]", ["--strict"], {"strict": True},
                    "counts kinks as failures"),
}  # fmt: skip
NUMPY = {
    "undecided": (lambda x: np.sum(np.exp(x)), lambda x: np.exp(x)),
    "forced step": (lambda x: np.sum(x**3), lambda x: 3 * x**2),
    "strict kink": (lambda x: np.sum(np.abs(x)), lambda x: np.sign(x)),
}
CLI_WORDS = {"undecided": "--allow-undecided", "forced step": "drop --eps / --method",
             "strict kink": "--strict counts"}  # fmt: skip
SUITE_WORDS = {"undecided": "allow_undecided = true", "forced step": "drop eps and method",
               "strict kink": "strict = true counts"}  # fmt: skip


def _value(text: str) -> np.ndarray:
    return np.array(json.loads(text.split("=", 1)[1]))


@pytest.mark.parametrize("case", list(CASES))
def test_the_cli_names_its_flags(cli, case):
    program, setting, options, _, _ = CASES[case]
    result = cli(["check", program, "--wrt", "x", "--set", setting, *options,
                  "--format", "json"])  # fmt: skip
    assert result.code == 1, result.err
    message = json.loads(result.out)["variables"]["x"]["diagnosis"]["message"]
    assert CLI_WORDS[case] in message, message


@pytest.mark.parametrize("case", list(CASES))
def test_a_suite_names_its_keys(cli, case, tmp_path, monkeypatch):
    program, setting, _, keywords, words = CASES[case]
    keys = "".join(f"{k} = {str(v).lower()}\n" for k, v in keywords.items())
    (tmp_path / "s.toml").write_text(
        f'[[case]]\nname = "c"\nprogram = "{program}"\nwrt = ["x"]\n'
        f'set = {{ x = "{setting.split("=", 1)[1]}" }}\ngolden = false\n{keys}'
    )
    monkeypatch.chdir(tmp_path)
    result = cli(["check", "--suite", "s.toml", "--format", "json"])
    assert result.code == 1, result.err
    check = json.loads(result.out)["cases"][0]["check"]
    message = check["variables"]["x"]["diagnosis"]["message"]
    assert SUITE_WORDS[case] in message and words in message and not CLI_FLAG.search(message)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("wording", ["python", "gradcheck"])
def test_the_python_api_names_keywords_never_cli_flags(case, wording):
    _, setting, _, keywords, words = CASES[case]
    func, grad = NUMPY[case]
    with np.errstate(all="ignore"):
        report = check_numpy(func, grad, {"x": _value(setting)}, wording=wording, **keywords)
    assert not report.ok
    message = report.variables["x"].diagnosis.message
    assert not CLI_FLAG.search(message), message
    assert words in message, message


@pytest.mark.parametrize(("setting", "eps"), [("x=[710.0]", None), ("x=[1.0, 2.0]", 0.1)])
def test_gradcheck_names_no_cli_flag(setting, eps):
    x = agrad.tensor(_value(setting), dtype=agrad.float64, requires_grad=True)
    func = (lambda t: agrad.exp(t).sum()) if eps is None else (lambda t: (t**3).sum())
    with np.errstate(all="ignore"), pytest.raises(agrad.autograd.GradcheckError) as info:
        gradcheck(func, (x,), eps=eps)
    text = str(info.value)
    assert not CLI_FLAG.search(text), text
    assert ("gradcheck has no option that passes" in text) if eps is None else ("drop eps=" in text)


BIG = np.linspace(0.1, 1.0, 400)


@pytest.mark.parametrize(
    ("wording", "words"),
    [("python", "fast=True"), ("gradcheck", "fast_mode=True"), ("suite", "fast = true")],
)
def test_the_time_budget_names_the_apis_options(wording, words):
    with pytest.raises(agrad.errors.AgradLimitError) as info:
        check_numpy(lambda x: np.sum(x**2), lambda x: 2 * x, {"x": BIG},
                    max_seconds=1e-9, wording=wording)  # fmt: skip
    assert words in str(info.value) and not CLI_FLAG.search(str(info.value))


def test_the_cli_time_budget_names_its_flags(cli):
    result = cli(["check", "sum(x**2)", "--wrt", "x", "--set", "x=linspace(0.1, 1, 400)",
                  "--max-seconds", "1e-9"])  # fmt: skip
    assert result.code == 2 and "--fast" in result.err and "--max-seconds" in result.err


def test_method_complex_names_the_apis_spelling():
    with pytest.raises(agrad.errors.AgradValueError, match='method="complex" needs'):
        check_numpy(lambda x: np.sum(x**2), lambda x: 2 * x, {"x": np.ones(2)}, method="complex")


def test_an_invalid_setting_is_named_as_the_api_names_it():
    with pytest.raises(agrad.errors.AgradValueError, match=r"^eps must be a positive"):
        CheckOptions(eps=-1.0)
    with pytest.raises(agrad.errors.AgradValueError, match=r"^--eps must be a positive"):
        CheckOptions(eps=-1.0, wording="cli")


def test_wording_is_not_a_suite_key():
    settings = CheckOptions.keys()
    assert "wording" not in settings


@pytest.mark.parametrize(
    "program, point, formula, words",
    [
        # (points where f's size swamps even steps of max(1, |x|): at [1e8, 3] and
        # [1e12, -1] those steps decide, since QA round 10)
        ("sum(1e3*x + relu(-x))", "[1e12,3]", "1e3-(x<0)",
         "the formula and autograd agree; finite differences cannot decide"),
        ("sum(relu(x))", "[1e15,-1]", "[1,0.01]",
         "the formula disagrees with autograd; finite differences cannot decide"),
    ],
)  # fmt: skip
def test_expect_says_undecided_not_disagree(program, point, formula, words, check_json):
    # where finite differences cannot decide (f's size swamps the steps), the summary must
    # not say they disagree (QA): an undecided element is no disagreement
    report = check_json(program, "--wrt", "x", "--set", f"x={point}", "--expect", f"x={formula}")
    verdict = report["variables"]["x"]["expect"]["verdict"]
    assert not report["ok"] and verdict.startswith(words), verdict
