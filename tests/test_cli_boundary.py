"""The CLI's edges: the program found among the arguments (even when it starts with '-'),
`agrad` alone, completion, exit statuses (3 for a bug, 130 for Ctrl-C), closed and broken
streams, and --wrt defaulting to the leaves the program marks requires_grad=true.

Each run asserts stdout, stderr and the exit status separately (COLUMNS=80 NO_COLOR=1).
Expected numbers come from NumPy or hand derivation, not from agrad.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from conftest import agrad_executable

PROGRAM_WITH_LEAVES = (
    "x = [1., 2.]; y = [5., 7.]; w = tensor(1.0, requires_grad=true); "
    "b = tensor(0.0, requires_grad=true); sum((w*x + b - y)**2)"
)
# r = w*x + b - y = [-4, -5]: loss 41, d/dw = 2 sum(r x) = -28, d/db = 2 sum(r) = -18;
# d2/dw2 = 2 sum(x^2) = 10, d2/db2 = 2 * 2 = 4, d2/dwdb = 2 sum(x) = 6.


def ok_json(result) -> dict:
    assert result.code == 0, result.err
    assert result.err == ""
    return json.loads(result.out)


def bad(result, *words: str, code: int = 2) -> str:
    assert result.code == code, (result.code, result.out, result.err)
    assert result.out == ""
    assert result.err.startswith("error: "), result.err
    assert "Traceback" not in result.err
    for word in words:
        assert word in result.err, (word, result.err)
    return result.err


# ---- a program that starts with '-' -------------------------------------------------------

Z = np.array([[1.0, 2.0, 0.5], [0.1, -1.0, 3.0]])
Y = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
NLL = "-sum(log_softmax(z, axis=1)*y)"
SETS = ["--set", f"z={json.dumps(Z.tolist())}", "--set", f"y={json.dumps(Y.tolist())}"]


def nll_and_grad() -> tuple[float, np.ndarray]:
    log_p = Z - np.log(np.exp(Z).sum(axis=1, keepdims=True))
    return float(-(log_p * Y).sum()), np.exp(log_p) * Y.sum(axis=1, keepdims=True) - Y


def test_negative_log_likelihood_is_the_program(cli):
    value, grad = nll_and_grad()
    payload = ok_json(cli(["eval", NLL, *SETS, "--wrt", "z", "--format", "json"]))
    np.testing.assert_allclose(payload["value"], value, rtol=1e-12)
    np.testing.assert_allclose(payload["grads"]["z"], grad, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize(
    "argv, value",
    [
        (["eval", "-x", "--set", "x=2", "--format", "json"], -2),
        (["eval", "-x**2", "--set", "x=3", "--format", "json"], -9),
        (["eval", "-1", "--format", "json"], -1),
        (["eval", "--set", "x=2", "--format", "json", "-x * 4"], -8),
        (["eval", "--format", "json", "-x+1", "--set", "x=5"], -4),
        # '--' marks the program; options may come before and after it
        (["eval", "--set", "x=2", "--", "-x**2", "--format", "json"], -4),
        (["eval", "--", "-x", "--set", "x=7", "--format", "json"], -7),
        (["eval", "--", "--x", "--set", "x=7", "--format", "json"], 7),
    ],
)
def test_dash_programs(cli, argv, value):
    assert ok_json(cli(argv))["value"] == value


def test_option_values_that_start_with_a_minus_stay_values(cli):
    argv = ["eval", "x*2", "--set", "x=[1,2]", "--wrt", "x", "--grad-output", "-1"]
    payload = ok_json(cli([*argv, "--format", "json"]))
    assert payload["grads"]["x"] == [-2, -2]  # d(2x)/dx weighted by -1
    assert ok_json(cli(["eval", "x", "--set", "x=-3", "--format", "json"]))["value"] == -3


@pytest.mark.parametrize("command", ["eval", "jacobian", "hessian", "check", "graph", "fit"])
def test_every_program_command_takes_a_dash_program(cli, command):
    argv = [command, "-sum(x**2)", "--set", "x=[1,2]", "--wrt", "x"]
    if command == "fit":
        argv += ["--steps", "1", "--lr", "0.1"]
    if command != "graph":
        argv += ["--format", "json"]
    result = cli(argv)
    assert result.code == 0, result.err
    assert result.err == ""
    if command == "eval":
        assert json.loads(result.out)["grads"]["x"] == [-2, -4]
    elif command == "jacobian":
        assert json.loads(result.out)["jacobian"]["x"] == [-2, -4]
    elif command == "hessian":
        assert json.loads(result.out)["hessian"]["x"] == [[-2, 0], [0, -2]]
    elif command == "check":
        assert json.loads(result.out)["ok"] is True
    elif command == "fit":  # one SGD step on -sum(x^2): x <- x + 0.1 * 2x
        assert json.loads(result.out)["values"]["x"] == pytest.approx([1.2, 2.4])
    else:
        assert "NegBackward0" in result.out


def test_unknown_long_options_are_still_options(cli):
    bad(cli(["eval", "x", "--set", "x=1", "--bogus"]), "No such option: --bogus")


@pytest.mark.parametrize("command", ["fit", "check", "jacobian"])
def test_hint_for_a_stray_short_option_names_the_command(cli, command):
    err = bad(cli([command, "sum(x)", "--set", "x=1", "-q"]), "-q", f"agrad {command} --")
    assert "eval" not in err


def test_file_options_still_work(cli, tmp_path):
    (tmp_path / "p.ag").write_text("-sum(x)\n")
    for argv in (["-f", str(tmp_path / "p.ag")], [f"-f{tmp_path / 'p.ag'}"]):
        payload = ok_json(cli(["eval", *argv, "--set", "x=[1,2]", "--format", "json"]))
        assert payload["value"] == -3


def test_a_broken_dash_program_reports_its_syntax_error(cli):
    err = bad(cli(["eval", "-sum(x", "--set", "x=1"]), "expected ')'")
    assert err.splitlines()[1] == "-sum(x" and err.splitlines()[2].strip() == "^"


# ---- agrad alone, --help, completion ------------------------------------------------------


def test_agrad_alone_prints_the_help_as_a_usage_error(cli):
    result = cli([])
    assert result.code == 2
    assert result.out == ""
    assert result.err.startswith("Usage: agrad [OPTIONS] COMMAND")
    for command in ("eval", "jacobian", "hessian", "check", "graph", "fit", "functions"):
        assert f"  {command} " in result.err


def test_help_exits_0_on_stdout(cli):
    result = cli(["--help"])
    assert result.code == 0
    assert result.err == ""
    assert result.out.startswith("Usage: agrad [OPTIONS] COMMAND")
    assert "--install-completion" in result.out and "--show-completion" in result.out


def test_completion_script_and_completions(exe):
    # Typer detects the shell from the parent processes, as a user's shell would be: the
    # command runs under bash (which, given a command after it, does not exec it away),
    # since a suite run from a detached job has no shell among them ("Shell  not supported.").
    run = f'"{agrad_executable()}" --show-completion; status=$?; exit $status'
    script = exe(["-c", run], cmd=["bash"])
    assert script.code == 0, script.err
    assert "_AGRAD_COMPLETE=complete_bash" in script.out and script.err == ""
    env = {**os.environ, "_AGRAD_COMPLETE": "complete_bash", "COMP_CWORD": "1"}
    commands = exe([], env={**env, "COMP_WORDS": "agrad ja"})
    assert commands.code == 0 and commands.out.split() == ["jacobian"] and commands.err == ""
    options = exe([], env={**env, "COMP_WORDS": "agrad eval --gr", "COMP_CWORD": "2"})
    assert options.code == 0 and options.out.split() == ["--grad-output"]


# ---- exit statuses: 3 for a bug, clean messages for memory --------------------------------

MAIN = ["eval", "sum(x)", "--set", "x=[1,2]"]


def test_internal_error_exits_3_and_says_how_to_report(cli, monkeypatch):
    from agrad.cli import render

    monkeypatch.delenv("AGRAD_DEBUG", raising=False)
    monkeypatch.setattr(render, "evaluation", lambda *a: {}["missing"])
    err = bad(cli(MAIN), "internal error", "KeyError", "AGRAD_DEBUG=1", "report", code=3)
    assert len(err.splitlines()) == 1


def test_agrad_debug_shows_the_traceback(cli, monkeypatch):
    from agrad.cli import render

    monkeypatch.setenv("AGRAD_DEBUG", "1")
    monkeypatch.setattr(render, "evaluation", lambda *a: {}["missing"])
    with pytest.raises(KeyError):
        cli(MAIN)


def test_internal_error_exit_status_of_the_process(tmp_path):
    code = (
        "import agrad.cli.render as r\n"
        "r.evaluation = lambda *a: 1 / 0\n"
        "from agrad.cli import main\n"
        "main(['eval', 'sum(x)', '--set', 'x=1'])\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "AGRAD_DEBUG"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 3
    assert proc.stdout == ""
    assert proc.stderr.startswith("error: internal error") and "ZeroDivisionError" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_memory_error_is_the_limit_error(cli, monkeypatch):
    from agrad.cli import render

    def exhausted(*args):
        raise MemoryError

    monkeypatch.setattr(render, "evaluation", exhausted)
    err = bad(cli(MAIN), "out of memory", "--max-elements")
    assert "internal" not in err


# ---- streams: closed stdin, broken pipes, closed stdout ----------------------------------


def bash(script: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "80", "NO_COLOR": "1"}
    env["PATH"] = f"{os.path.dirname(agrad_executable())}:{env['PATH']}"
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env)


def test_closed_stdin_is_a_clean_error():
    proc = bash("agrad fit - --set x=1 <&-")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith("error: PROGRAM '-': standard input is closed")
    assert "agrad fit -" in proc.stderr and "Traceback" not in proc.stderr


def test_stdin_that_never_ends_is_bounded():
    proc = bash("agrad eval - < /dev/zero")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith("error: PROGRAM '-': standard input holds more than")


def test_non_utf8_stdin(cli):
    proc = bash("printf 'x\\xff' | agrad eval - --set x=1")
    assert proc.returncode == 2 and proc.stdout == ""
    assert "not UTF-8" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    "command, code",
    [
        ("agrad jacobian 'x*2' --set 'x=arange(400)' --wrt x --format csv", 0),
        ("agrad jacobian 'x*2' --set 'x=arange(400)' --wrt x --format json", 0),
        ("agrad eval 'x*1' --set 'x=arange(100000)'", 0),
        # a failing check keeps the status it earned: 1 means "check failed", not the pipe
        ("agrad check 'sum(x**2)' --set 'x=arange(300)' --wrt x --expect 'x=3*x'", 1),
    ],
)
def test_broken_pipe_exits_quietly_with_the_earned_status(command, code):
    proc = bash(f"{command} | head -c 20 > /dev/null; exit ${{PIPESTATUS[0]}}")
    assert proc.returncode == code, proc.stderr
    assert proc.stderr == ""


def test_closed_stdout_keeps_the_status():
    proc = bash("agrad eval 'sum(x)' --set 'x=[1,2]' >&-")
    assert proc.returncode == 0 and proc.stderr == ""
    proc = bash("agrad eval 'sum(x' >&-")
    assert proc.returncode == 2 and proc.stderr.startswith("error: ")


# ---- Ctrl-C -------------------------------------------------------------------------------


def test_ctrl_c_at_any_moment_of_a_run():
    """SIGINT sent at 16 moments through start-up and the run: 'error: interrupted' and 130,
    or the finished run's own result; never a traceback once agrad's code is running (the
    interpreter's own first ~20 ms, before any of it, are out of its reach)."""
    argv = [agrad_executable(), "eval", "sum((w*x+b-y)**2)", "--wrt", "w,b",
            "--set", "x=[1,2]", "--set", "y=[5,7]", "--set", "w=1", "--set", "b=0"]  # fmt: skip
    seen = set()
    for delay in np.linspace(0.03, 0.33, 16):
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        ours = "/agrad/" in err or "_agrad_entry" in err  # a frame of agrad's code
        if proc.returncode == -signal.SIGINT or ("Traceback" in err and not ours):
            continue  # before the interpreter ran any of agrad's code: its handler not yet in
        assert "Traceback" not in err and "Exception" not in err, (delay, err)
        if proc.returncode == 130:
            assert err == "error: interrupted\n", (delay, err)
        else:
            assert proc.returncode == 0 and err == "" and "-28" in out, (delay, err)
        seen.add(proc.returncode)
    assert 130 in seen  # the sweep did reach the run


def test_ctrl_c_in_fit_reports_the_state_reached(cli, monkeypatch):
    from agrad.lang import fit as fit_module

    real = fit_module.fit

    def interrupted_at_step_3(session, steps, lr, momentum, optimizer, on_step):
        def step(i, loss, values):
            on_step(i, loss, values)
            if i == 3:
                raise KeyboardInterrupt

        return real(session, steps, lr, momentum, optimizer, step)

    monkeypatch.setattr(fit_module, "fit", interrupted_at_step_3)
    argv = ["fit", "sum((w-3)**2)", "--set", "w=0", "--wrt", "w", "--lr", "0.25", "--steps", "50"]
    result = cli([*argv, "--format", "json"])
    assert result.code == 130
    assert result.err == (
        "error: interrupted at step 3 of 50; the values shown are the state reached so far\n"
    )
    payload = json.loads(result.out)
    # w <- w - 0.25 * 2 (w - 3): 0, 1.5, 2.25, 2.625
    assert payload["interrupted"] is True and payload["steps"] == 3
    assert payload["values"]["w"] == pytest.approx(2.625)
    assert payload["history"] == pytest.approx([9, 2.25, 0.5625, 0.140625])
    table = cli(argv)
    assert table.code == 130 and "interrupted at step 3" in table.out and "2.625" in table.out


def test_fit_refuses_a_run_beyond_its_time_budget(cli):
    argv = ["fit", "sum((w-3)**2)", "--set", "w=0", "--wrt", "w", "--steps", str(10**12)]
    bad(cli(argv), "1,000,000,000,000 steps", "--max-seconds", "--steps")
    payload = ok_json(cli([*argv[:-1], "30", "--max-seconds", "1000", "--format", "json"]))
    assert payload["steps"] == 30


# ---- --wrt defaults to the program's requires_grad leaves ---------------------------------


def test_every_command_defaults_wrt_to_the_requires_grad_leaves(cli):
    args = [PROGRAM_WITH_LEAVES, "--format", "json"]
    assert ok_json(cli(["eval", *args]))["grads"] == {"w": -28, "b": -18}
    assert ok_json(cli(["jacobian", *args]))["jacobian"] == {"w": -28, "b": -18}
    hessian = ok_json(cli(["hessian", *args]))
    assert hessian["hessian"] == {"w": 10, "b": 4} and hessian["mixed"] == {"w,b": 6}
    check = ok_json(cli(["check", *args]))
    assert check["ok"] is True and sorted(check["variables"]) == ["b", "w"]
    fit = ok_json(cli(["fit", *args, "--steps", "1", "--lr", "0.01"]))
    assert fit["values"] == pytest.approx({"w": 1.28, "b": 0.18})  # minus 0.01 * gradient


@pytest.mark.parametrize("command", ["jacobian", "hessian", "check", "fit"])
def test_no_variables_at_all_says_both_ways_to_name_them(cli, command):
    bad(cli([command, "sum(x**2)", "--set", "x=[1,2]"]), "--wrt", "requires_grad=true")


# ---- errors keep their context when prefixed ----------------------------------------------


def test_with_prefix_keeps_class_snippet_and_position():
    from agrad import errors
    from agrad.lang.parser import parse

    try:
        parse("sum(x,, 1)")
    except errors.AgradSyntaxError as exc:
        original = exc
    prefixed = original.with_prefix("--set x: in the value 'sum(x,, 1)'")
    assert type(prefixed) is errors.AgradSyntaxError
    assert (prefixed.line, prefixed.column, prefixed.snippet) == (
        original.line, original.column, original.snippet,
    )  # fmt: skip
    assert str(prefixed) == f"--set x: in the value 'sum(x,, 1)': {original}"
    for cls in (
        errors.AgradNameError,
        errors.AgradShapeError,
        errors.AgradValueError,
        errors.AgradLimitError,
        errors.AgradAutogradError,
        errors.AgradInterrupted,
    ):
        exc = cls("what")
        exc.snippet = "line\n^"
        again = exc.with_prefix("where")
        assert type(again) is cls and again.snippet == "line\n^" and str(again) == "where: what"
        assert again.exit_code == exc.exit_code and isinstance(again, errors.AgradError)
    assert str(original) == str(original.with_prefix("p"))[3:]  # the original is untouched


@pytest.mark.parametrize("option", ["--set", "--grad-output"])
def test_a_value_keeps_its_caret(cli, option):
    argv = ["eval", "x*2", "--set", "x=[1,2]", "--wrt", "x"]
    value = "[1, 2"
    argv += ["--set", f"y={value}"] if option == "--set" else ["--grad-output", value]
    if option == "--set":
        argv[1] = "x*2 + sum(y)"
    err = bad(cli(argv), f"{option}", "in the value '[1, 2'", "expected ']'")
    assert err.splitlines()[1:] == ["[1, 2", "     ^"]


@pytest.mark.parametrize(
    "route,argv",
    [("command", ["--version"]), ("command", [*MAIN, "--help"]), ("shape", MAIN)],
    ids=["typer app, --version", "typer app, eval --help", "direct, eval"],
)
def test_a_failure_while_starting_is_an_internal_error_too(cli, monkeypatch, route, argv):
    # Start-up builds Typer's command (app.command) or, for a plain command line, reads the
    # command's definition without Typer (direct.shape): a failure in either is a bug.
    from agrad.cli import app, direct

    monkeypatch.delenv("AGRAD_DEBUG", raising=False)
    failing = lambda *only: (_ for _ in ()).throw(ImportError("no typer"))  # noqa: E731
    monkeypatch.setattr(app if route == "command" else direct, route, failing)
    err = bad(cli(argv), "internal error", "ImportError: no typer", code=3)
    assert "Traceback" not in err
