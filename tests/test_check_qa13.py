"""QA round 13: wrong gradients that passed, each as a test of its class.

- An option about something else widened the comparison: gradcheck's ``nondet_tol`` (how
  far two backward passes may differ) loosened the tolerance itself, so a backward that
  returned 0 for 1e-3·x² passed. No option but atol/rtol may loosen the comparison.
- ``check_backward_ad=False`` / ``check_rev_over_rev=False`` returned True, having checked
  nothing; PyTorch refuses them.
- A NumPy function that writes into its arguments (``x -= x.mean()``, ``y /= y.sum()``)
  changed the point its hand gradient was then called at, and a wrong gradient passed.
  Every call of a user's NumPy function or gradient gets arrays of its own.
- A PyTorch function was evaluated for finite differences with grad mode off and inputs not
  requiring grad, unlike torch.autograd.gradcheck: code that branches on them was judged
  against the other branch (a wrong training branch passed, a right one failed).
- Golden values did not record hand-derived gradients (``expect =``, ``grad =`` beside
  autograd): their drift within the check's tolerance "matched"; under ``fast`` they
  recorded the random projections as the gradient.
- A function that raises a step away from the point (a domain check) ended the check
  (exit 2) where PyTorch's gradcheck passes; such points are outside its domain now.
- Integer labels in a .npy reached a --python function as floats.

The truth of each case is algebra (stated beside it) or PyTorch's own gradcheck.
"""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest
from conftest import require_torch

import agrad
from agrad.check import check_numpy


def _lost_small_gradient(T):
    class Sq(T.autograd.Function):  # y = 1e-3·x², whose backward forgets everything
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return 1e-3 * x**2

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 0 * x

    return Sq.apply


# Every option of gradcheck other than atol and rtol, set as far as it goes: none may turn
# a failure into a pass.
OPTIONS = [
    {"nondet_tol": 1e-2},
    {"nondet_tol": 1.0},
    {"check_undefined_grad": False},
    {"check_grad_dtypes": True},
    {"check_batched_grad": True},
    {"fast_mode": True},
    {"fast_mode": True, "nondet_tol": 1.0},
    {"eps": 1e-3},
]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in
                                                                    o.items()))  # fmt: skip
def test_no_option_but_the_tolerances_lets_a_lost_gradient_pass(options):
    x = agrad.tensor([0.5, -1.5, 2.0], dtype=agrad.float64, requires_grad=True)
    assert not agrad.autograd.gradcheck(_lost_small_gradient(agrad), (x,), raise_exception=False,
                                        **options)  # fmt: skip


def test_nondet_tol_in_gradgradcheck_does_not_pass_a_wrong_second_derivative():
    class Cos(agrad.autograd.Function):  # d/dx of 1e-3·sin(x) without its own derivative
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return 1e-3 * agrad.cos(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 0 * x  # wrong: -1e-3·sin(x)·g

    class Sin(agrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return 1e-3 * agrad.sin(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * Cos.apply(x)  # the first derivative is right

    x = agrad.tensor([0.5, -1.5, 2.0], dtype=agrad.float64, requires_grad=True)
    for tol in (0.0, 1e-5, 1e-2):
        assert not agrad.autograd.gradgradcheck(Sin.apply, (x,), nondet_tol=tol,
                                                raise_exception=False)  # fmt: skip


@pytest.mark.parametrize(
    ("check", "option", "message"),
    [
        ("gradcheck", "check_backward_ad", "check_forward_ad or check_backward_ad"),
        ("gradgradcheck", "check_rev_over_rev", "check_fwd_over_rev or check_rev_over_rev"),
    ],
)
def test_a_check_with_nothing_left_to_check_is_refused_as_pytorch_refuses_it(check, option,
                                                                             message):  # fmt: skip
    torch = require_torch()
    for T in (torch, agrad):
        x = T.tensor([0.5, -1.5, 2.0], dtype=T.float64, requires_grad=True)
        with pytest.raises(AssertionError, match=message):
            getattr(T.autograd, check)(lambda v: v**2, (x,), raise_exception=False,
                                       **{option: False})  # fmt: skip


def _centring(x):
    x -= x.mean()  # a common NumPy slip: the caller's array changes
    return np.sum(x**2)


def _normalising(x, y):
    y /= y.sum()  # the labels normalised in place
    m = x.max()
    log_softmax = x - m - np.log(np.sum(np.exp(x - m)))
    return -np.sum(y * log_softmax)


def _softmax(x):
    e = np.exp(x - x.max())
    return e / e.sum()


@pytest.mark.parametrize(
    ("func", "grad", "values", "right"),
    [
        # sum((x - mean x)²): gradient 2(x - mean x); 2x forgets the mean
        (_centring, lambda x: 2 * x, {"x": [1.0, 2.0, 4.0]}, False),
        (_centring, lambda x: 2 * (x - x.mean()), {"x": [1.0, 2.0, 4.0]}, True),
        # a gradient function that writes into its argument: it must not move the point
        (_centring, lambda x: 2 * (x - x.mean()) + 0 * x.__isub__(1.0), {"x": [1.0, 2.0, 4.0]},
         True),
        # cross-entropy with labels normalised in place: softmax(x) - y/Σy; - y forgets 1/Σy
        (_normalising, lambda x, y: _softmax(x) - y, {"x": [0.3, -1.2, 2.0], "y": [0.0, 1.0, 1.0]},
         False),
        (_normalising, lambda x, y: _softmax(x) - y / y.sum(),
         {"x": [0.3, -1.2, 2.0], "y": [0.0, 1.0, 1.0]}, True),
    ],
)  # fmt: skip
def test_a_numpy_function_that_writes_into_its_arguments(func, grad, values, right):
    given = {k: np.array(v) for k, v in values.items()}
    kept = {k: v.copy() for k, v in given.items()}

    def grad_x(**kw):  # the gradient with respect to x only
        return grad(**kw)

    report = check_numpy(func, grad_x, given, wrt=["x"])
    assert report.ok is right
    for k in given:  # the caller's arrays are left as they were
        np.testing.assert_array_equal(given[k], kept[k])


TORCH_BRANCHING = textwrap.dedent(
    """
    import torch

    class SoftplusFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.nn.functional.softplus(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * torch.sigmoid(x)

    class Cube(torch.autograd.Function):  # the training forward has an extra 0.5·x
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3 + 0.5 * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x**2  # wrong for that forward: it misses 0.5

    def act_right(x):  # training: the custom Function; inference: a cheaper approximation
        if torch.is_grad_enabled() and x.requires_grad:
            return SoftplusFn.apply(x).sum()
        return torch.relu(x).sum()

    def act_wrong(x):
        if torch.is_grad_enabled() and x.requires_grad:
            return Cube.apply(x).sum()
        return (x**3).sum()
    """
)


@pytest.mark.parametrize(("name", "code"), [("act_right", 0), ("act_wrong", 1)])
def test_a_torch_function_is_evaluated_as_gradcheck_calls_it(cli, tmp_path, name, code):
    torch = require_torch()
    path = tmp_path / "branching.py"
    path.write_text(TORCH_BRANCHING)
    r = cli(["check", "--python", f"{path}:{name}", "--set", "x=[0.5,-1.5,2.0]"])
    assert r.code == code, r.out + r.err
    # PyTorch's own gradcheck agrees
    namespace: dict = {}
    exec(compile(TORCH_BRANCHING, str(path), "exec"), namespace)  # noqa: S102 - the test's code
    x = torch.tensor([0.5, -1.5, 2.0], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(namespace[name], (x,), raise_exception=False) is (code == 0)


SUITE = """
[[case]]
name = "expect formula"
program = "sum(x**3)"
wrt = ["x"]
set = {{ x = "[0.5,-1.5,2]" }}
expect = {{ x = "3*x**2*(1+{drift})" }}

[[case]]
name = "three-way"
python = "fa.py:f"
grad = "hand.py:f_grad"
set = {{ x = "[0.5,-1.5,2]" }}
"""

HAND = """
import numpy as np
def f_grad(x):
    return (np.cos(x) * x + np.sin(x)) * (1 + {drift})
"""


def test_golden_values_keep_the_hand_derived_gradients(cli, tmp_path):
    (tmp_path / "fa.py").write_text(
        "import agrad as torch\ndef f(x): return (torch.sin(x) * x).sum()\n"
    )
    suite = tmp_path / "checks.toml"

    def write(drift: str) -> None:
        suite.write_text(SUITE.format(drift=drift))
        (tmp_path / "hand.py").write_text(HAND.format(drift=drift))

    write("0")
    assert cli(["check", "--suite", str(suite), "--update-golden"]).code == 0
    recorded = json.loads((tmp_path / "checks.golden.json").read_text())
    assert set(recorded["expect formula"]["hand"]) == {"x"}
    assert set(recorded["three-way"]["hand"]) == {"x"}
    assert cli(["check", "--suite", str(suite)]).code == 0
    write("1e-6")  # within the check's tolerance: only the golden values can see it
    r = cli(["check", "--suite", str(suite), "--format", "json"])
    assert r.code == 1, r.out
    cases = {c["name"]: c for c in json.loads(r.out)["cases"]}
    for name in ("expect formula", "three-way"):
        assert cases[name]["golden"] == "regression", cases[name]


DOMAIN = textwrap.dedent(
    """
    import numpy as np
    import agrad

    def _check(p):
        values = p.detach().numpy() if hasattr(p, "detach") else p
        if not ((values > 0) & (values < 1)).all():
            raise ValueError("all elements of input should be between 0 and 1")

    def bce_np(p):  # -log(p) for the label 1: the gradient is -1/p
        _check(p)
        return -np.sum(np.log(p))

    def bce_grad_right(p):
        return -1.0 / p

    def bce_grad_wrong(p):
        return -1.01 / p

    def bce_agrad(p):
        _check(p)
        return -agrad.log(p).sum()

    class Cube(agrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x**2 * 1.01  # wrong by 1%

    def cube_wrong(x):  # defined for |x| < 1.05 only: the diagnosis's steps leave that
        if not (x.detach().abs() < 1.05).all():
            raise ValueError("x out of domain")
        return Cube.apply(x).sum()
    """
)


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--python", "{f}:bce_np", "--grad", "{f}:bce_grad_right"], 0),
        (["--python", "{f}:bce_np", "--grad", "{f}:bce_grad_wrong"], 1),
        (["--python", "{f}:bce_agrad"], 0),
    ],
)
def test_a_domain_check_a_step_away_is_not_the_end_of_the_check(cli, tmp_path, args, code):
    # p = 0.9995: the ladder's first step (2^-10) leaves (0, 1); the user's function raises
    # there, as torch.distributions and binary_cross_entropy do. That point is outside the
    # function's domain (nan), not an error of the user's input.
    path = tmp_path / "domain.py"
    path.write_text(DOMAIN)
    r = cli(["check", *[a.format(f=path) for a in args], "--set", "p=[0.3,0.9995]"])
    assert r.code == code, r.out + r.err


def test_a_function_defined_at_the_point_alone_is_never_passed(tmp_path, cli):
    path = tmp_path / "pinned.py"
    path.write_text(textwrap.dedent("""
        import numpy as np
        def f(x):
            if not np.array_equal(x, [0.5, 2.0]):
                raise ValueError("only at the point")
            return np.sum(x**2)
        def g(x):
            return 7 * x  # wrong, and nothing around the point can say so
    """))  # fmt: skip
    argv = ["check", "--python", f"{path}:f", "--grad", f"{path}:g", "--set", "x=[0.5,2.0]"]
    # its error stands: defined nowhere the differences can go (undecided, it passed with
    # --allow-undecided, QA round 16)
    for more in ([], ["--allow-undecided"]):
        r = cli([*argv, *more])
        assert r.code == 2 and "only at the point" in r.err, r.out + r.err


def test_a_failure_whose_explanation_leaves_the_domain_is_still_a_failure(cli, tmp_path):
    path = tmp_path / "domain.py"
    path.write_text(DOMAIN)
    r = cli(["check", "--python", f"{path}:cube_wrong", "--set", "x=[1.0,-0.5]"])
    assert r.code == 1, r.out + r.err
    namespace: dict = {}
    exec(compile(DOMAIN, str(path), "exec"), namespace)  # noqa: S102 - the test's code
    x = agrad.tensor([1.0, -0.5], dtype=agrad.float64, requires_grad=True)
    assert agrad.autograd.gradcheck(namespace["cube_wrong"], (x,), raise_exception=False) is False


def test_golden_values_of_a_fast_case_are_the_gradient(cli, tmp_path):
    (tmp_path / "fns.py").write_text(textwrap.dedent("""
        import numpy as np
        def f(x): return np.sum(np.sin(x) * x)
        def f_grad(x): return np.cos(x) * x + np.sin(x)
    """))  # fmt: skip
    suite = tmp_path / "checks.toml"
    case = ('[[case]]\nname = "fast"\npython = "fns.py:f"\ngrad = "fns.py:f_grad"\n'
            'set = {{ x = "[0.5,-1.5,2,0.1,0.2]" }}\nfast = true\n{more}')  # fmt: skip
    suite.write_text(case.format(more=""))
    assert cli(["check", "--suite", str(suite), "--update-golden"]).code == 0
    recorded = json.loads((tmp_path / "checks.golden.json").read_text())["fast"]["grads"]["x"]
    x = np.array([0.5, -1.5, 2, 0.1, 0.2])
    np.testing.assert_allclose(recorded, np.cos(x) * x + np.sin(x), rtol=1e-12)  # algebra
    for more in ("directions = 4\n", "fast = false\n"):  # how it is checked is not what it is
        suite.write_text(
            case.format(more=more).replace("fast = true\nfast = false", "fast = false")
        )
        r = cli(["check", "--suite", str(suite)])
        assert r.code == 0, r.out + r.err


def test_integer_labels_from_a_npy_reach_a_python_function_as_integers(cli, tmp_path):
    np.save(tmp_path / "y.npy", np.array([2, 0]))
    (tmp_path / "ce.py").write_text(textwrap.dedent("""
        import agrad.nn.functional as F
        def ce(z, y):
            assert y.dtype.is_floating_point is False  # class indices, as saved
            return F.cross_entropy(z, y)
    """))  # fmt: skip
    r = cli(["check", "--python", f"{tmp_path / 'ce.py'}:ce", "--set",
             "z=[[0.3,-1.2,2.0],[0.1,0.4,-0.5]]", "--set", f"y=@{tmp_path / 'y.npy'}",
             "--wrt", "z"])  # fmt: skip
    assert r.code == 0, r.out + r.err
    # a program binds them in its dtype, as every value
    r = cli(["eval", "sum(y * w)", "--set", f"y=@{tmp_path / 'y.npy'}", "--set", "w=0.5",
             "--wrt", "w", "--format", "json"])  # fmt: skip
    assert r.code == 0 and json.loads(r.out)["value"] == 1.0
