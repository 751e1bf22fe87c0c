"""Regression tests for bugs found by reviewing agrad as a demanding user would.
Each states PyTorch's (or the contract's) behaviour; torch is used where it is the oracle."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import agrad


@pytest.fixture
def torch64():
    torch = pytest.importorskip("torch")
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield torch
    torch.set_default_dtype(previous)


# ---- in-place semantics ------------------------------------------------------------------


def test_manual_sgd_step_under_no_grad_keeps_the_leaf():
    w = agrad.tensor(0.5, requires_grad=True)
    x = agrad.tensor([1.0, 2.0])
    same = w
    for _ in range(2):
        loss = ((w * x - 2 * x) ** 2).sum()
        loss.backward()
        with agrad.no_grad():
            w -= 0.05 * w.grad
        w.grad.zero_()
    assert w is same and w.is_leaf and w.requires_grad
    # by hand: d/dw sum((w-2)^2 x^2) = 10 (w - 2); w <- w - 0.5 (w - 2), twice from 0.5
    assert w.item() == pytest.approx(2 - 1.5 * 0.5 * 0.5)


def test_inplace_arithmetic_on_a_leaf_that_requires_grad_raises():
    w = agrad.tensor(1.0, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w -= 1


def test_inplace_on_a_non_leaf_matches_torch(torch64):
    results = []
    for lib in (agrad, torch64):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        before = y
        y += 1
        y.mul_(3)
        assert y is before
        (y * x).sum().backward()
        results.append(np.asarray(x.grad.detach() if lib is torch64 else x.grad.data))
    np.testing.assert_allclose(results[0], results[1])


@pytest.mark.parametrize("fn", ["exp", "tanh", "sigmoid", "sqrt"])
def test_writing_a_saved_output_is_detected(fn):
    x = agrad.tensor([0.5, 2.0], requires_grad=True)
    z = getattr(agrad, fn)(x)
    z.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_fill_on_a_non_leaf_cuts_its_gradient(torch64):
    grads = []
    for lib in (agrad, torch64):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.fill_(3)
        (y * x).sum().backward()
        grads.append(np.asarray(x.grad.tolist()))
    np.testing.assert_allclose(grads[0], grads[1])


# ---- hooks -------------------------------------------------------------------------------


def test_leaf_hook_runs_once_on_the_summed_gradient():
    x = agrad.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: g + 1)
    (x * x).sum().backward()  # 2x, plus 1 once
    assert x.grad.tolist() == [3.0, 5.0]
    y = agrad.tensor([1.0, 2.0], requires_grad=True)
    y.register_hook(lambda g: g * 0 + 7)
    (y + y).sum().backward()
    assert y.grad.tolist() == [7.0, 7.0]


def test_hook_handles_remove_the_hook():
    x = agrad.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: g * 100).remove()
    y = x * 2
    y.register_hook(lambda g: g * 10).remove()
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


# ---- functional with create_graph, 0**x ---------------------------------------------------


def test_functional_results_with_create_graph_reach_the_inputs():
    F = agrad.autograd.functional
    x = agrad.tensor([1.0, 2.0], requires_grad=True)
    F.jacobian(lambda v: v**3, x, create_graph=True).sum().backward()
    assert x.grad.tolist() == [6.0, 12.0]  # d/dx sum(diag(3x^2)) = 6x
    x = agrad.tensor([1.0, 2.0], requires_grad=True)
    F.hessian(lambda v: (v**4).sum(), x, create_graph=True).sum().backward()
    assert x.grad.tolist() == [24.0, 48.0]  # d/dx 12x^2 = 24x


def test_gradient_of_zero_to_the_x_is_masked_like_torch():
    x = agrad.tensor([1.0, 2.0, 0.0], requires_grad=True)
    (0**x).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


# ---- the checker never passes NaN; option and suite validation -----------------------------


def test_check_fails_when_the_gradient_is_nan(cli):
    result = cli(["check", "sum(where(x > 0, x, sqrt(-x)))", "--set", "x=[2,3]", "--wrt", "x"])
    assert result.code == 1, result.out
    assert "FAILED" in result.out


def test_gradcheck_fails_when_the_gradient_is_nan():
    x = agrad.tensor([2.0, 3.0], requires_grad=True)
    f = lambda v: agrad.where(v > 0, v, agrad.sqrt(-v)).sum()  # noqa: E731
    with np.errstate(invalid="ignore"):  # sqrt(-v) of the branch not taken
        assert agrad.autograd.gradcheck(f, (x,), raise_exception=False) is False


@pytest.mark.parametrize(
    "argv, words",
    [
        (["check", "sum(x**2)", "--set", "x=[1,2]", "--wrt", "x", "--eps", "-1"], "--eps"),
        (["check", "sum(x**2)", "--set", "x=[1,2]", "--wrt", "x", "--eps", "nan"], "--eps"),
        (["check", "sum(x**2)", "--set", "x=[1,2]", "--wrt", "x", "--atol", "-1"], "--atol"),
        (["eval", "randn(2)", "--seed", "-1"], "--seed"),
        (["jacobian", "x*2", "--set", "x=zeros(20000)", "--wrt", "x"], "--max-elements"),
        (["fit", "sum(x**2)", "--wrt", "x", "--set", "x=1", "--optimizer", "adam",
          "--momentum", "0.9"], "--momentum"),
        (["check", "sum(x**2)", "--set", "x=[1,2]", "--expect", "y=2*x"], "--expect y"),
        (["eval", "x", "--set", "x=1", "--set", "x=2"], "twice"),
        (["eval", "x", "--set", "x=1", "--wrt", ",x"], "empty name"),
        (["eval", "x = [1.,2.]; x[0] = 5; sum(x**2)", "--wrt", "x"], "assign into a copy"),
    ],
)  # fmt: skip
def test_bad_options_are_refused_clearly(cli, argv, words):
    result = cli(argv)
    assert result.code == 2
    assert result.err.startswith("error: ") and words in result.err
    assert "internal error" not in result.err


def test_a_set_value_error_is_prefixed_once(cli):
    result = cli(["eval", "x", "--set", "x=y"])
    assert result.code == 2 and result.err.count("--set x") == 1


@pytest.mark.parametrize(
    "extra, words",
    [('method = "nope"', "method must be one of"), ('seed = "a"', "seed"),
     ("order = 3", "order must be one of 1, 2"), ('dtype = "float16"', "dtype"),
     ('fast = "yes"', "fast"), ("eps = -1", "eps must be a positive number")],
)  # fmt: skip
def test_suite_keys_are_validated(cli, tmp_path, extra, words):
    suite = tmp_path / "s.toml"
    suite.write_text(f'[[case]]\nname = "a"\nprogram = "sum(x**2)"\nwrt = ["x"]\n'
                     f'set = {{ x = "[1,2]" }}\n{extra}\n')  # fmt: skip
    result = cli(["check", "--suite", str(suite), "--format", "json"])
    # a bad case is an error case of the run (issue 13), not an error of the command
    assert result.code == 1 and result.err == ""
    (case,) = json.loads(result.out)["cases"]
    assert case["outcome"] == "error" and words in case["error"] and "case 1" in case["error"]


def test_suite_rejects_program_options_and_bad_golden_values(cli, tmp_path):
    suite = tmp_path / "g.toml"
    suite.write_text(
        '[[case]]\nname = "a"\nprogram = "sum(x**2)"\nwrt = ["x"]\nset = { x = "[1,2]" }\n'
    )
    result = cli(["check", "--suite", str(suite), "--wrt", "x"])
    assert result.code == 2 and "--wrt" in result.err
    (tmp_path / "g.golden.json").write_text(json.dumps({"a": {"value": "x"}}))
    result = cli(["check", "--suite", str(suite), "--format", "json"])
    assert result.code == 1 and "--update-golden" in json.loads(result.out)["cases"][0]["error"]


def test_check_of_an_empty_input_compares_nothing(cli):
    result = cli(["check", "sum(x**3)", "--set", "x=zeros(0)", "--wrt", "x", "--format", "json"])
    assert result.code == 0
    assert json.loads(result.out)["variables"]["x"]["compared"] == 0


# ---- files and output ----------------------------------------------------------------------


def test_file_contents_are_named_precisely(cli, tmp_path):
    (tmp_path / "bad.npy").write_bytes(b"garbage")
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "null.json").write_text("[1, null]")
    for name, words in [("bad.npy", "not a .npy file"), ("empty.csv", "no numbers"),
                        ("null.json", "null")]:  # fmt: skip
        result = cli(["eval", "x", "--set", f"x=@{tmp_path / name}"])
        assert result.code == 2 and words in result.err, result.err
        assert "Warning" not in result.err


def test_explain_json_carries_shape_and_unused(cli):
    result = cli(["eval", "z = 3; sum(w*x)", "--set", "x=[1,2]", "--set", "w=[3,4]",
                  "--wrt", "w,z", "--explain", "--format", "json"])  # fmt: skip
    payload = json.loads(result.out)
    assert payload["shape"] == [] and payload["unused"] == ["z"]
    assert payload["grads"]["w"] == [1, 2]


def test_constructor_signatures_show_their_sizes(cli):
    result = cli(["functions", "--format", "csv"])
    assert "zeros(size, ...)" in result.out and "(, ...)" not in result.out


def test_grad_fn_class_names_are_pytorchs(torch64):
    def build(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor(1.0, requires_grad=True)
        m = lib.tensor([[1.0, 2.0], [3.0, 4.0]])
        return [w * x, w * x + 1, x - 1, x**2, (x**2).sum(), x.sum(0), m @ x, x[0], x[0:1]]

    ours = [type(t.grad_fn).__name__ for t in build(agrad)]
    theirs = [type(t.grad_fn).__name__ for t in build(torch64)]
    assert ours == theirs


# ---- second review ---------------------------------------------------------------------


def test_check_with_an_intermediate_in_wrt_moves_what_depends_on_the_input(cli):
    argv = ["check", "h = x**2; sum(h*h)", "--set", "x=[1.,2]", "--wrt", "x,h"]
    assert cli(argv).code == 0
    assert cli([*argv, "--fast"]).code == 0


def test_expect_is_refused_with_fast_and_order_two(cli):
    for extra in (["--fast"], ["--order", "2"]):
        result = cli(["check", "sum(x**3)", "--set", "x=[1.,2]", "--wrt", "x",
                      "--expect", "x=3*x", *extra])  # fmt: skip
        assert result.code == 2 and "--expect" in result.err


def test_second_order_check_in_float32_passes_a_correct_hessian(cli):
    argv = ["check", "sum(x**3)", "--set", "x=[1.,2,3]", "--wrt", "x", "--order", "2",
            "--dtype", "float32"]  # fmt: skip
    assert cli(argv).code == 0


def test_failing_nan_elements_are_listed(cli):
    result = cli(["check", "sum(sqrt(x))", "--set", "x=[0.,1]", "--wrt", "x", "--format", "json"])
    worst = json.loads(result.out)["variables"]["x"]["worst"]
    assert result.code == 1 and worst[0]["input_index"] == [0]


def test_comparison_masks_index_as_masks(cli):
    def value(program):
        return json.loads(cli(["eval", program, "--format", "json"]).out)["value"]

    assert value("x = [1., 2, 3]; x[x > 1]") == [2, 3]
    assert value("x = [1., 2]; x[x > 1] = 0; x") == [1, 0]
    assert value("x = [1., 2, 3]; x[[true, false, true]]") == [1, 3]
    assert value("x = [1., 2, 3]; (x > 1) + (x > 2)") == [0, 1, 2]
    assert value("x = [1., 2, 3]; x[[0, 2]]") == [1, 3]  # integer indices stay integers


def test_prod_hessian_at_zeros_matches_torch(torch64):
    for point in ([1.0, 0.0, 3.0], [2.0, 0.0, 0.0, 3.0]):
        ours = agrad.autograd.functional.hessian(lambda v: v.prod(), agrad.tensor(point))
        theirs = torch64.autograd.functional.hessian(lambda v: v.prod(), torch64.tensor(point))
        np.testing.assert_allclose(ours.data, theirs.numpy())


def test_std_and_var_at_degenerate_points_match_torch(torch64):
    for fn, point in (("std", [2.0, 2.0, 2.0]), ("var", [2.0])):
        x = agrad.tensor(point, requires_grad=True)
        xt = torch64.tensor(point, requires_grad=True)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # both warn that n <= correction: that is the point
            getattr(x, fn)().backward()
            getattr(xt, fn)().backward()
        np.testing.assert_allclose(x.grad.data, xt.grad.numpy())


@pytest.mark.parametrize(
    "program, words",
    [("x=[1.,2]; x[0] = [1.,2]; x", "cannot be assigned"),
     ("x=[[1.,2],[3,4]]; x[:, 0] = [7.,8,9]; x", "cannot be assigned"),
     ("x=[1.,2]; x[5] = 1; x", "out of bounds"),
     ("[[1.,2],[3]]", "same length")],
)  # fmt: skip
def test_bad_assignments_and_literals_are_located(cli, program, words):
    result = cli(["eval", program])
    assert result.code == 2 and words in result.err and "line 1, column" in result.err


# ---- third review: Python API parity --------------------------------------------------------


def test_python_api_details_match_torch(torch64):
    for lib in (agrad, torch64):
        x = lib.tensor([1.5, 2.5], requires_grad=True)
        (x.int().float() * x).sum().backward()  # integer casts carry no gradient
        assert x.grad.tolist() == [1.0, 2.0]
        assert tuple(lib.arange(24.0).reshape(2, 3, 4).mT.shape) == (2, 4, 3)
        assert lib.equal(lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.0])) is True
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            lib.zeros(2, 3).t().view(6)
        assert str(lib.full((2,), 7).dtype).endswith("int64")
        assert str(lib.full((2,), True).dtype).endswith("bool")
        assert f"{lib.tensor(3)} {lib.tensor(2.5):.2f}" == "3 2.50"
        with pytest.raises(TypeError):
            lib.optim.SGD(lib.tensor([1.0], requires_grad=True), lr=1)
        with pytest.raises(RuntimeError):
            lib.tensor([1, 2]).mean()
        with pytest.raises(RuntimeError):
            lib.tensor([1.0, 2.0]).item()


def test_optimizer_closure_runs_with_grad_enabled():
    w = agrad.tensor([1.0, 2.0], requires_grad=True)
    opt = agrad.optim.SGD([w], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (w**2).sum()
        loss.backward()
        return loss

    assert float(opt.step(closure)) == 5.0
    assert w.data.tolist() == pytest.approx([0.8, 1.6])  # w - 0.1 * 2w


def test_grad_mode_decorators_without_parentheses_and_requires_grad_noop():
    @agrad.no_grad
    def double(z):
        return z * 2

    w = agrad.tensor([1.0], requires_grad=True)
    assert double(w).requires_grad is False
    y = (w * 2).requires_grad_(True)  # already requires grad: a no-op, as in PyTorch
    assert y.requires_grad and not y.is_leaf
    with pytest.raises(RuntimeError, match="cannot be empty"):
        (w * 2).sum().backward(inputs=[])


def test_flatten_dims_alpha_any_all_randint_match_torch(torch64):
    for lib in (agrad, torch64):
        x = lib.arange(24.0).reshape(2, 3, 4)
        assert tuple(x.flatten(1).shape) == (2, 12)
        assert tuple(x.flatten(0, 1).shape) == (6, 4)
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        y = a.add(b, alpha=2)  # a + 2b
        y.sum().backward()
        assert y.tolist() == [7.0, 10.0] and b.grad.tolist() == [2.0, 2.0]
        assert bool(lib.tensor([0.0, 1.0]).any()) and not bool(lib.tensor([0.0, 1.0]).all())
        r = lib.randint(0, 5, (50,))
        assert str(r.dtype).endswith("int64") and int(r.min()) >= 0 and int(r.max()) < 5
