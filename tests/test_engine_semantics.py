"""agrad's Python API against PyTorch autograd's semantics (SPEC.md, "Engine semantics").

Most tests take the ``lib`` fixture and run twice: once on agrad, once on real
PyTorch (float64 default dtype; skipped when torch is not installed). The
expectations are written out by hand, so both libraries must meet them; where
a value is too long to write out, the agrad result is compared with PyTorch's.
"""

from __future__ import annotations

import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import agrad

SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture
def torch64():
    """Real PyTorch with float64 as its default dtype (restored afterwards)."""
    torch = pytest.importorskip("torch")
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield torch
    torch.set_default_dtype(old)


@pytest.fixture(params=["agrad", "torch"])
def lib(request):
    """The library under test: agrad, then PyTorch (float64 default) as the reference."""
    if request.param == "agrad":
        yield agrad
        return
    torch = pytest.importorskip("torch")
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield torch
    torch.set_default_dtype(old)


def arr(t):
    """A tensor of either library as a float64 NumPy array (None stays None)."""
    return None if t is None else np.asarray(t.detach().tolist(), dtype=np.float64)


def quiet_grad(t):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return t.grad


# =========================================================================================
# .grad: accumulation, assignment, zeroing, retain_grad, hooks
# =========================================================================================


def test_gradients_accumulate_across_backward_calls(lib):
    x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    assert arr(x.grad).tolist() == [2.0, -4.0, 6.0]
    (x * x).sum().backward()  # a new graph: its gradient is added
    assert arr(x.grad).tolist() == [4.0, -8.0, 12.0]
    (3 * x).sum().backward()
    assert arr(x.grad).tolist() == [7.0, -5.0, 15.0]


def test_accumulation_is_in_place_but_not_under_create_graph(lib):
    x = lib.tensor([1.0, -2.0], requires_grad=True)
    (x * x).sum().backward()
    held = x.grad
    (3 * x).sum().backward()  # added into the same tensor: the reference sees it
    assert held is x.grad and arr(held).tolist() == [5.0, -1.0]
    mine = lib.tensor([10.0, 20.0])
    x.grad = mine
    x.sum().backward()
    assert arr(mine).tolist() == [11.0, 21.0]
    (x * x).sum().backward(create_graph=True)  # a new tensor (recorded), the old one kept
    assert x.grad is not mine and arr(mine).tolist() == [11.0, 21.0]
    assert arr(x.grad).tolist() == [13.0, 17.0]


def test_grad_assign_none_and_zeros_like(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    (x * 5).sum().backward()
    x.grad = None
    assert x.grad is None
    (x * 5).sum().backward()
    assert arr(x.grad).tolist() == [5.0, 5.0]
    x.grad = lib.zeros_like(x.grad)
    (x * x).sum().backward()
    assert arr(x.grad).tolist() == [2.0, 4.0]


def test_grad_zero_in_place(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    (x**3).sum().backward()
    g = x.grad
    assert arr(g).tolist() == [3.0, 12.0]
    x.grad.zero_()
    assert x.grad is g and arr(x.grad).tolist() == [0.0, 0.0]
    (x * 2).sum().backward()
    assert arr(x.grad).tolist() == [2.0, 2.0]


def test_retain_grad_on_non_leaf(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    h = x * x
    assert h.retains_grad is False and x.retains_grad is False
    h.retain_grad()
    assert h.retains_grad is True
    (3 * h).sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a retained grad is read without a warning
        assert arr(h.grad).tolist() == [3.0, 3.0]
    assert arr(x.grad).tolist() == [6.0, 12.0]
    x.retain_grad()  # a no-op on a leaf
    assert x.retains_grad is False


def test_non_retained_non_leaf_grad_is_none_and_warns(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    h = x * x
    h.sum().backward()
    with pytest.warns(UserWarning, match=r"\.retain_grad\(\)"):
        assert h.grad is None


def test_register_hook_on_leaf_and_non_leaf(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: g * 2)  # leaf: changes what is accumulated
    h = x * 3
    h.register_hook(lambda g: g + 1)  # non-leaf: changes what flows on
    h.register_hook(lambda g: seen.append(arr(g)))  # None keeps the gradient
    (h * lib.tensor([1.0, 10.0])).sum().backward()
    # dL/dh = [1, 10] -> +1 -> [2, 11] -> *3 -> [6, 33] -> leaf hook *2 -> [12, 66]
    assert [s.tolist() for s in seen] == [[2.0, 11.0]]
    assert arr(x.grad).tolist() == [12.0, 66.0]


def test_register_hook_needs_requires_grad(lib):
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        lib.tensor([1.0]).register_hook(lambda g: g)


# =========================================================================================
# Frozen parameters, detach, requires_grad_, grad modes
# =========================================================================================


def test_frozen_parameter_gets_no_grad(lib):
    x = lib.tensor([1.0, 2.0])
    frozen = lib.tensor([3.0, 4.0], requires_grad=False)
    trained = lib.tensor([0.5, -1.0], requires_grad=True)
    hidden = frozen * x
    assert hidden.requires_grad is False and hidden.is_leaf and hidden.grad_fn is None
    loss = (trained * hidden).sum()
    loss.backward()
    assert frozen.grad is None
    assert arr(trained.grad).tolist() == [3.0, 8.0]


def test_only_frozen_inputs_cut_the_chain(lib):
    frozen = lib.tensor([3.0, 4.0])
    loss = (frozen * 2).sum()
    assert loss.requires_grad is False and loss.grad_fn is None
    with pytest.raises(RuntimeError, match="does not require grad"):
        loss.backward()


def test_detach(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    d = y.detach()
    assert (d.requires_grad, d.is_leaf, d.grad_fn) == (False, True, None)
    assert arr(d).tolist() == [2.0, 4.0]
    assert (d * 3).requires_grad is False
    # detach() shares the data: an in-place change shows through the original
    d.add_(1)
    assert arr(y).tolist() == [3.0, 5.0]
    xd = x.detach()
    assert xd.requires_grad is False and arr(xd).tolist() == [1.0, 2.0]


def test_requires_grad_(lib):
    t = lib.tensor([1.0, 2.0])
    assert t.requires_grad_() is t and t.requires_grad is True
    (t * t).sum().backward()
    assert arr(t.grad).tolist() == [2.0, 4.0]
    t.requires_grad_(False)
    assert t.requires_grad is False
    nonleaf = lib.tensor([1.0], requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf variables"):
        nonleaf.requires_grad_(False)


def test_no_grad_context(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with lib.no_grad():
        assert lib.is_grad_enabled() is False
        y = x * 2
        x.add_(1)  # in-place on a leaf is allowed without grad mode (an optimizer's update)
    assert lib.is_grad_enabled() is True
    assert (y.requires_grad, y.is_leaf, y.grad_fn) == (False, True, None)
    assert arr(x).tolist() == [2.0, 3.0] and x.requires_grad


def test_enable_grad_inside_no_grad(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with lib.no_grad():
        with lib.enable_grad():
            y = x * 2
        z = x * 2
    assert y.requires_grad and not y.is_leaf and y.grad_fn.name() == "MulBackward0"
    assert not z.requires_grad
    y.sum().backward()
    assert arr(x.grad).tolist() == [2.0, 2.0]


def test_set_grad_enabled_context_and_call(lib):
    x = lib.tensor([1.0], requires_grad=True)
    with lib.set_grad_enabled(False):
        assert (x * 2).requires_grad is False
    assert lib.is_grad_enabled() and (x * 2).requires_grad
    try:
        lib.set_grad_enabled(False)  # a plain call switches the mode until switched back
        assert lib.is_grad_enabled() is False
        assert (x * 2).requires_grad is False
    finally:
        lib.set_grad_enabled(True)
    assert lib.is_grad_enabled() and (x * 2).requires_grad


def test_grad_mode_decorators(lib):
    x = lib.tensor([1.0], requires_grad=True)

    @lib.no_grad()
    def frozen(t):
        return t * 2

    @lib.enable_grad()
    def tracked(t):
        return t * 2

    @lib.set_grad_enabled(False)
    def also_frozen(t):
        return t * 2

    assert lib.is_grad_enabled()  # decorating does not change the mode
    assert frozen(x).requires_grad is False
    assert also_frozen(x).requires_grad is False
    with lib.no_grad():
        assert tracked(x).requires_grad is True
        assert lib.is_grad_enabled() is False
    assert lib.is_grad_enabled()


# =========================================================================================
# Errors, with PyTorch's texts, all RuntimeError
# =========================================================================================


def _non_scalar(lib):
    (lib.tensor([1.0, 2.0], requires_grad=True) * 2).backward()


def _second_backward(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    y.backward()


def _setitem_leaf(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    x[0] = 1.0


def _add_leaf(lib):
    lib.tensor([1.0, 2.0], requires_grad=True).add_(1)


def _int_requires_grad(lib):
    lib.tensor([1, 2], requires_grad=True)


def _backward_no_grad(lib):
    lib.tensor([1.0, 2.0]).sum().backward()


def _grad_unused(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    u = lib.tensor([3.0], requires_grad=True)
    lib.autograd.grad((x * 2).sum(), [x, u])


def _grad_of_non_requiring(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    lib.autograd.grad((x * 2).sum(), [lib.tensor([1.0])])


ERRORS = {
    "non-scalar backward": (_non_scalar, "grad can be implicitly created only for scalar outputs"),
    "second backward": (_second_backward, "Specify retain_graph=True"),
    "setitem on leaf": (
        _setitem_leaf,
        "leaf Variable that requires grad is being used in an in-place operation",
    ),
    "add_ on leaf": (
        _add_leaf,
        "a leaf Variable that requires grad is being used in an in-place operation.",
    ),
    "int requires grad": (
        _int_requires_grad,
        "Only Tensors of floating point and complex dtype can require gradients",
    ),
    "backward without grad": (
        _backward_no_grad,
        "element 0 of tensors does not require grad and does not have a grad_fn",
    ),
    "grad of unused input": (
        _grad_unused,
        "appears to not have been used in the graph. Set allow_unused=True",
    ),
    "grad wrt non-requiring": (
        _grad_of_non_requiring,
        "One of the differentiated Tensors does not require grad",
    ),
}


@pytest.mark.parametrize("case", ERRORS, ids=list(ERRORS))
def test_errors_are_runtime_errors_with_pytorch_text(lib, case):
    fn, text = ERRORS[case]
    with pytest.raises(RuntimeError, match=re.escape(text)):
        fn(lib)


@pytest.mark.parametrize("shape", [(3,), (2, 2), (1,), ()], ids=str)
def test_backward_gradient_of_wrong_shape(lib, shape):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * 2).backward(lib.ones(shape))
    assert x.grad is None


def test_grad_allow_unused_and_materialize(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    u = lib.tensor([3.0], requires_grad=True)
    gx, gu = lib.autograd.grad((x * 2).sum(), [x, u], allow_unused=True, retain_graph=True)
    assert arr(gx).tolist() == [2.0, 2.0] and gu is None
    _, gu = lib.autograd.grad((x * 2).sum(), [x, u], materialize_grads=True)
    assert arr(gu).tolist() == [0.0]
    assert x.grad is None  # autograd.grad does not touch .grad


def test_in_place_change_of_a_saved_tensor_is_detected(lib):
    # PyTorch's version counter: y*y saved y, which then changed; backward must refuse
    # rather than differentiate at the new value.
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    p = y * y
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        p.sum().backward()


# =========================================================================================
# Graph structure: grad_fn, next_functions, CopySlices
# =========================================================================================


def test_next_functions_of_mul(lib):
    w = lib.tensor(2.0, requires_grad=True)
    x = lib.tensor(3.0)
    fns = (w * x).grad_fn.next_functions
    assert [(type(f).__name__, i) for f, i in fns] == [("AccumulateGrad", 0), ("NoneType", 0)]
    assert fns[0][0].variable is w
    fns = (x * w).grad_fn.next_functions
    assert [(type(f).__name__, i) for f, i in fns] == [("NoneType", 0), ("AccumulateGrad", 0)]
    assert fns[1][0].variable is w


def test_next_functions_chain(lib):
    w = lib.tensor(2.0, requires_grad=True)
    b = lib.tensor(1.0, requires_grad=True)
    m = w * 3
    z = m + b
    assert z.grad_fn.name() == "AddBackward0"
    (first, _), (second, _) = z.grad_fn.next_functions
    assert first is m.grad_fn and first.name() == "MulBackward0"
    assert type(second).__name__ == "AccumulateGrad" and second.variable is b
    assert first.next_functions[0][0].variable is w


@pytest.mark.parametrize(
    "expr,name",
    [
        (lambda a, b: a - b, "SubBackward0"),
        (lambda a, b: a / b, "DivBackward0"),
        (lambda a, b: a**2, "PowBackward0"),
        (lambda a, b: a**b, "PowBackward1"),
        (lambda a, b: (a * b).sum(), "SumBackward0"),
        (lambda a, b: a.exp(), "ExpBackward0"),
        (lambda a, b: -a, "NegBackward0"),
        (lambda a, b: a @ b, "DotBackward0"),
    ],
)
def test_grad_fn_names(lib, expr, name):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    assert expr(a, b).grad_fn.name() == name


def _copy_slices_program(lib):
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = lib.tensor([0.5, -1.0], requires_grad=True)
    M = lib.zeros(2, 3)
    M[0, :] = a * 2
    M[:, 1] = b**2  # overwrites M[0, 1], written from a just before
    M[1, 1:] = M[0, :2].clone() * b  # reads values written by the two lines above
    M[0, 0] = M[0, 0] + a[2]
    out = (M * lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum()
    out.backward()
    return a, b, M, out


def test_setitem_records_copy_slices(lib):
    a, b, M, out = _copy_slices_program(lib)
    assert not M.is_leaf and M.requires_grad
    assert type(M.grad_fn).__name__ == "CopySlices" or M.grad_fn.name() == "CopySlices"
    # M = [[2a0 + a2, b0^2, 2a2], [0, 2a0 b0, b0^2 b1]]
    a0, a2 = 1.0, 3.0
    b0, b1 = 0.5, -1.0
    assert arr(M).tolist() == [[2 * a0 + a2, b0**2, 2 * a2], [0.0, 2 * a0 * b0, b0**2 * b1]]
    # out = (2a0 + a2) + 2 b0^2 + 6 a2 + 10 a0 b0 + 6 b0^2 b1
    assert arr(a.grad).tolist() == [2 + 10 * b0, 0.0, 1 + 6]
    assert arr(b.grad).tolist() == [4 * b0 + 10 * a0 + 12 * b0 * b1, 6 * b0**2]


def test_setitem_matches_pytorch(torch64):
    ours = _copy_slices_program(agrad)
    theirs = _copy_slices_program(torch64)
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(arr(o), arr(t), rtol=0, atol=1e-12)
    for o, t in zip(ours[:2], theirs[:2], strict=True):
        np.testing.assert_allclose(arr(o.grad), arr(t.grad), rtol=0, atol=1e-12)
    assert ours[2].grad_fn.name() == type(theirs[2].grad_fn).__name__ == "CopySlices"


def test_setitem_without_grad_is_plain_assignment(lib):
    c = lib.zeros(3)
    c[1] = 5.0
    assert (c.requires_grad, c.grad_fn, c.is_leaf) == (False, None, True)
    assert arr(c).tolist() == [0.0, 5.0, 0.0]


# =========================================================================================
# Iteration, sum(), len()
# =========================================================================================


def test_iteration_gives_0d_tensors(lib):
    v = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    items = list(v)
    assert len(items) == 3 and all(tuple(e.shape) == () for e in items)
    assert [e.item() for e in items] == [1.0, 2.0, 3.0]
    assert all(e.requires_grad and not e.is_leaf for e in items)
    rows = list(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert [tuple(r.shape) for r in rows] == [(2,), (2,)]


def test_builtin_sum_and_len(lib):
    v = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    assert len(v) == 3 and len(lib.zeros(4, 2)) == 4
    s = sum(v * v)
    assert s.item() == 14.0 and s.grad_fn.name() == "AddBackward0"
    s.backward()
    assert arr(v.grad).tolist() == [2.0, 4.0, 6.0]
    assert arr(sum(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))).tolist() == [4.0, 6.0]
    with pytest.raises(TypeError):
        len(lib.tensor(1.0))
    with pytest.raises(TypeError):
        iter(lib.tensor(1.0))


def test_iteration_grad_fn_name_matches_pytorch(torch64):
    ours = next(iter(agrad.tensor([1.0, 2.0], requires_grad=True)))
    theirs = next(iter(torch64.tensor([1.0, 2.0], requires_grad=True)))
    assert ours.grad_fn.name() == theirs.grad_fn.name()  # UnbindBackward0


# =========================================================================================
# repr
# =========================================================================================

REPRS = {
    "scalar": (lambda m: m.tensor(-28.0), "tensor(-28.)"),
    "requires_grad": (
        lambda m: m.tensor([1.0, 2.0], requires_grad=True),
        "tensor([1., 2.], requires_grad=True)",
    ),
    "grad_fn": (
        lambda m: m.tensor([1.0, 2.0], requires_grad=True) * 2,
        "tensor([2., 4.], grad_fn=<MulBackward0>)",
    ),
    "scalar grad_fn": (
        lambda m: (m.tensor([1.0, 2.0], requires_grad=True) ** 2).sum(),
        "tensor(5., grad_fn=<SumBackward0>)",
    ),
    "matrix": (
        lambda m: m.tensor([[1.0, 2.0], [3.0, 4.5]]),
        "tensor([[1.0000, 2.0000],\n        [3.0000, 4.5000]])",
    ),
    "fixed": (lambda m: m.tensor([1.5, 2.25]), "tensor([1.5000, 2.2500])"),
    "scientific": (lambda m: m.tensor([1e-5, 1.0]), "tensor([1.0000e-05, 1.0000e+00])"),
    "negative": (lambda m: m.tensor([-1.5, 2.0]), "tensor([-1.5000,  2.0000])"),
    "bool": (lambda m: m.tensor([1.0, 2.0]) == m.tensor([1.0, 3.0]), "tensor([ True, False])"),
    "int64": (lambda m: m.tensor([1, 2, 30]), "tensor([ 1,  2, 30])"),
    "nan": (lambda m: m.tensor([float("nan"), 1.0]), "tensor([nan, 1.])"),
    "inf": (lambda m: m.tensor([float("inf"), 1.5]), "tensor([   inf, 1.5000])"),
}


@pytest.mark.parametrize("case", REPRS, ids=list(REPRS))
def test_repr(lib, case):
    make, expected = REPRS[case]
    assert repr(make(lib)) == expected


# =========================================================================================
# Double backward, Hessians, autograd.functional, gradcheck
# =========================================================================================

RNG = np.random.default_rng(7)
A_MAT = RNG.standard_normal((3, 3))
X0 = RNG.standard_normal(3)


def _softmax(z):
    e = np.exp(z - z.max())
    return e / e.sum()


# Each: the function on a library, and its gradient written out in NumPy.
HESSIAN_CASES = {
    "x3_sin": (
        lambda m: lambda x: (x**3 * m.sin(x)).sum(),
        lambda x: 3 * x**2 * np.sin(x) + x**3 * np.cos(x),
    ),
    "tanh_Ax": (
        lambda m: lambda x: m.tanh(m.tensor(A_MAT) @ x).sum(),
        lambda x: A_MAT.T @ (1 - np.tanh(A_MAT @ x) ** 2),
    ),
    "logsumexp": (
        lambda m: lambda x: m.logsumexp(m.tensor(A_MAT) @ x, 0),
        lambda x: A_MAT.T @ _softmax(A_MAT @ x),
    ),
}


def central_difference_hessian(grad_fn, x, h=1e-5):
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        cols.append((grad_fn(x + e) - grad_fn(x - e)) / (2 * h))
    return np.stack(cols, axis=1)


@pytest.mark.parametrize("case", HESSIAN_CASES, ids=list(HESSIAN_CASES))
def test_hessian_matches_finite_differences(case):
    make, numpy_grad = HESSIAN_CASES[case]
    H = agrad.autograd.functional.hessian(make(agrad), agrad.tensor(X0))
    assert tuple(H.shape) == (3, 3)
    expected = central_difference_hessian(numpy_grad, X0.copy())
    np.testing.assert_allclose(arr(H), expected, rtol=0, atol=1e-6)
    np.testing.assert_allclose(arr(H), arr(H).T, rtol=0, atol=1e-12)


@pytest.mark.parametrize("case", HESSIAN_CASES, ids=list(HESSIAN_CASES))
def test_hessian_matches_pytorch(torch64, case):
    make, _ = HESSIAN_CASES[case]
    ours = agrad.autograd.functional.hessian(make(agrad), agrad.tensor(X0))
    theirs = torch64.autograd.functional.hessian(make(torch64), torch64.tensor(X0))
    np.testing.assert_allclose(arr(ours), arr(theirs), rtol=0, atol=1e-10)


def test_grad_create_graph_second_derivative(lib):
    x = lib.tensor([1.5, -2.0, 0.25], requires_grad=True)
    (g,) = lib.autograd.grad((x**3).sum(), x, create_graph=True)
    assert g.requires_grad
    np.testing.assert_allclose(arr(g), 3 * np.array([1.5, -2.0, 0.25]) ** 2, atol=1e-15)
    (gg,) = lib.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(arr(gg), 6 * np.array([1.5, -2.0, 0.25]), atol=1e-15)


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_backward_create_graph_double_backward(lib):
    x = lib.tensor([1.5, -2.0], requires_grad=True)
    (x**3).sum().backward(create_graph=True)
    first = x.grad
    assert first.requires_grad
    assert arr(first).tolist() == [6.75, 12.0]
    x.grad = None
    first.sum().backward()
    assert arr(x.grad).tolist() == [9.0, -12.0]


def _f_single(m):
    return lambda x: m.sin(x) * x[0] + x**2


def _f_tuple(m):
    return lambda x, y: (x * y.sum(), m.exp(x[:2]) - y[:2] ** 2)


XA = np.array([0.3, -0.7, 1.1])
YA = np.array([2.0, 0.5, -1.0])
V_OUT = (np.array([1.0, 2.0, 3.0]), np.array([1.0, -1.0]))
V_IN = (np.array([0.5, 2.0, -3.0]), np.array([1.0, -1.0, 0.5]))


def _tup(m, arrays):
    return tuple(m.tensor(a) for a in arrays)


def _flatten(result):
    if isinstance(result, (tuple, list)):
        return [y for r in result for y in _flatten(r)]
    return [arr(result)]


FUNCTIONAL_CASES = {
    "jacobian single": lambda m: m.autograd.functional.jacobian(_f_single(m), m.tensor(XA)),
    "jacobian tuple": lambda m: m.autograd.functional.jacobian(_f_tuple(m), _tup(m, (XA, YA))),
    "vjp single": lambda m: m.autograd.functional.vjp(
        _f_single(m), m.tensor(XA), m.tensor(V_OUT[0])
    ),
    "vjp tuple": lambda m: m.autograd.functional.vjp(
        _f_tuple(m), _tup(m, (XA, YA)), _tup(m, V_OUT)
    ),
    "jvp single": lambda m: m.autograd.functional.jvp(
        _f_single(m), m.tensor(XA), m.tensor(V_IN[0])
    ),
    "jvp tuple": lambda m: m.autograd.functional.jvp(_f_tuple(m), _tup(m, (XA, YA)), _tup(m, V_IN)),
    "hessian tuple": lambda m: m.autograd.functional.hessian(
        lambda x, y: (x * x * y).sum() + (m.sin(x) * y).sum(), _tup(m, (XA, YA))
    ),
}


@pytest.mark.parametrize("case", FUNCTIONAL_CASES, ids=list(FUNCTIONAL_CASES))
def test_functional_matches_pytorch(torch64, case):
    ours = FUNCTIONAL_CASES[case](agrad)
    theirs = FUNCTIONAL_CASES[case](torch64)
    assert type(ours) is type(theirs) or not isinstance(theirs, tuple)
    ours, theirs = _flatten(ours), _flatten(theirs)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs, strict=True):
        assert o.shape == t.shape
        np.testing.assert_allclose(o, t, rtol=0, atol=1e-10)


def test_functional_jacobian_by_hand():
    J = agrad.autograd.functional.jacobian(_f_single(agrad), agrad.tensor(XA))
    # d/dx_j [sin(x_i) x_0 + x_i^2] = cos(x_i) x_0 [i==j] + sin(x_i) [j==0] + 2 x_i [i==j]
    expected = np.diag(np.cos(XA) * XA[0] + 2 * XA)
    expected[:, 0] += np.sin(XA)
    np.testing.assert_allclose(arr(J), expected, rtol=0, atol=1e-14)


def _good(x):
    return (x**3 * agrad.sin(x)).sum()


def _grad_doubled(x):
    h = x * agrad.sin(x)
    if h.requires_grad:  # (gradcheck's finite differences run without grad mode)
        h.register_hook(lambda g: g * 2)  # the gradient through h is now twice the truth
    return h.sum()


def _second_derivative_wrong(x):
    h = x * agrad.sin(x)
    # value-neutral (x - x.detach() == 0), so first derivatives stay right; but the
    # backward graph gains a term, so second derivatives are off
    if h.requires_grad:
        h.register_hook(lambda g: g * (1 + (x - x.detach())))
    return h.sum()


def _x_check():
    return agrad.tensor([0.3, -1.2, 0.8], requires_grad=True)


def test_gradcheck_and_gradgradcheck_pass_on_correct_functions():
    assert agrad.autograd.gradcheck(_good, (_x_check(),)) is True
    assert agrad.autograd.gradgradcheck(_good, (_x_check(),)) is True
    A = agrad.tensor(A_MAT, requires_grad=True)
    assert agrad.autograd.gradcheck(lambda a, x: agrad.tanh(a @ x), (A, _x_check())) is True
    assert agrad.autograd.gradgradcheck(lambda a, x: agrad.tanh(a @ x), (A, _x_check())) is True


def test_gradcheck_fails_on_wrong_gradient():
    assert agrad.autograd.gradcheck(_grad_doubled, (_x_check(),), raise_exception=False) is False
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        agrad.autograd.gradcheck(_grad_doubled, (_x_check(),))


def test_gradgradcheck_fails_on_wrong_second_derivative():
    assert agrad.autograd.gradcheck(_second_derivative_wrong, (_x_check(),)) is True
    assert (
        agrad.autograd.gradgradcheck(_second_derivative_wrong, (_x_check(),), raise_exception=False)
        is False
    )
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        agrad.autograd.gradgradcheck(_second_derivative_wrong, (_x_check(),))


# =========================================================================================
# Optimizers
# =========================================================================================

OPT_A = RNG.standard_normal((5, 3))
OPT_T = RNG.standard_normal(5)
OPT_W0 = RNG.standard_normal(3)
OPT_B0 = 0.3

OPTIMIZERS = {
    "sgd plain": ("SGD", dict(lr=0.05)),
    "sgd momentum": ("SGD", dict(lr=0.05, momentum=0.9)),
    "sgd dampening+wd": ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    "sgd nesterov": ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.02)),
    "adam": ("Adam", dict(lr=0.05)),
    "adam betas+wd": ("Adam", dict(lr=0.05, betas=(0.8, 0.9), weight_decay=0.05)),
    "adam amsgrad": ("Adam", dict(lr=0.05, amsgrad=True, weight_decay=0.01)),
}


def _optimize(m, name, kwargs, steps=10):
    w = m.tensor(OPT_W0.copy(), requires_grad=True)
    b = m.tensor(OPT_B0, requires_grad=True)
    A, t = m.tensor(OPT_A), m.tensor(OPT_T)
    opt = getattr(m.optim, name)([w, b], **kwargs)
    trajectory = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((A @ w + b - t) ** 2).mean() + 0.1 * (w**4).sum()
        loss.backward()
        opt.step()
        trajectory.append(np.concatenate([arr(w), [b.item()]]))
    return np.array(trajectory)


@pytest.mark.parametrize("case", OPTIMIZERS, ids=list(OPTIMIZERS))
def test_optimizer_trajectory_matches_pytorch(torch64, case):
    name, kwargs = OPTIMIZERS[case]
    ours = _optimize(agrad, name, kwargs)
    theirs = _optimize(torch64, name, kwargs)
    assert np.abs(theirs[-1] - theirs[0]).max() > 1e-3
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-10)


def test_sgd_first_step_by_hand():
    w = agrad.tensor([1.0, -2.0], requires_grad=True)
    opt = agrad.optim.SGD([w], lr=0.1, momentum=0.9, weight_decay=0.5)
    (w * w).sum().backward()  # g = 2w = [2, -4]; + 0.5 w = [2.5, -5]
    opt.step()
    np.testing.assert_allclose(arr(w), [1 - 0.25, -2 + 0.5], atol=1e-15)


def test_zero_grad_sets_grads_to_none(lib):
    w = lib.tensor([1.0], requires_grad=True)
    b = lib.tensor([2.0], requires_grad=True)
    for cls in (lib.optim.SGD, lib.optim.Adam):
        opt = cls([w, b], lr=0.1)
        (w * b).sum().backward()
        assert w.grad is not None and b.grad is not None
        opt.zero_grad()
        assert w.grad is None and b.grad is None


# =========================================================================================
# Deep graphs
# =========================================================================================

N_DEEP = 100_000


@pytest.mark.slow
def test_deep_multiplicative_chain():
    x = agrad.tensor(1.5, requires_grad=True)
    y = x
    for _ in range(N_DEEP):
        y = y * 1.0000001
    y.backward()
    # y = x c^N  =>  dy/dx = c^N
    assert x.grad.item() == pytest.approx(1.0000001**N_DEEP, rel=1e-12)
    assert y.item() == pytest.approx(1.5 * 1.0000001**N_DEEP, rel=1e-12)


@pytest.mark.slow
def test_deep_additive_chain():
    x = agrad.tensor([1.5, -0.5], requires_grad=True)
    y = x
    for _ in range(N_DEEP):
        y = y + 1e-6
    (y * y).sum().backward()
    # y = x + N 1e-6 = x + 0.1  =>  d/dx sum(y^2) = 2 (x + 0.1)
    np.testing.assert_allclose(arr(x.grad), 2 * (np.array([1.5, -0.5]) + 0.1), rtol=1e-9)


# =========================================================================================
# dtypes
# =========================================================================================


def test_default_dtype_is_float64():
    assert agrad.get_default_dtype() == agrad.float64
    assert agrad.tensor([1.0]).dtype == agrad.float64
    assert agrad.zeros(2).dtype == agrad.float64
    assert agrad.Tensor([1]).dtype == agrad.float64
    assert agrad.tensor([1, 2]).dtype == agrad.int64


def test_set_default_dtype_float32():
    old = agrad.get_default_dtype()
    try:
        agrad.set_default_dtype(agrad.float32)
        assert agrad.get_default_dtype() == agrad.float32
        assert agrad.tensor([1.0]).dtype == agrad.float32
        assert agrad.tensor(1.0).dtype == agrad.float32
        assert agrad.zeros(2).dtype == agrad.float32
        assert agrad.randn(2).dtype == agrad.float32
    finally:
        agrad.set_default_dtype(old)
    assert agrad.tensor([1.0]).dtype == agrad.float64


@pytest.mark.parametrize(
    "expr",
    [
        lambda m, f: f * 2.0,
        lambda m, f: 2.0 * f,
        lambda m, f: f + 1,
        lambda m, f: f / 3,
        lambda m, f: f**2,
        lambda m, f: f * m.tensor(2.0),  # a 0-d tensor does not promote a 1-d operand
    ],
    ids=["f*2.0", "2.0*f", "f+1", "f/3", "f**2", "f*tensor(2.0)"],
)
def test_float32_stays_float32(lib, expr):
    f = lib.tensor([1.0, 2.0], dtype=lib.float32)
    assert expr(lib, f).dtype == lib.float32


def test_grad_dtype_matches_leaf_dtype(lib):
    # a float32 leaf reached through a float64 computation still gets a float32 .grad
    x = lib.tensor([1.0, 2.0], dtype=lib.float32, requires_grad=True)
    for _ in range(2):
        y = lib.zeros(2)  # float64
        y[0] = x[0] * 3
        y.sum().backward()
        assert x.grad.dtype == lib.float32
    assert arr(x.grad).tolist() == [6.0, 0.0]
    (g,) = lib.autograd.grad((lib.zeros(2) + x).sum(), x)
    assert g.dtype == lib.float32


# =========================================================================================
# Dependencies
# =========================================================================================


def test_engine_imports_only_numpy():
    code = (
        "import agrad.engine, sys; "
        "print(sorted(m for m in sys.modules "
        "if m.split('.')[0] in ('lark','typer','rich','click')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
        check=True,
    )
    assert out.stdout.strip() == "[]"


def test_leaf_gradients_never_share_memory():
    """add's VJP hands the same array to both inputs; each leaf must still own its .grad,
    and an intermediate's retained grad must not alias a leaf's."""
    import agrad

    a = agrad.tensor([1.0, 2.0], requires_grad=True)
    b = agrad.tensor([3.0, 4.0], requires_grad=True)
    c = a + b
    c.retain_grad()
    (c.reshape(2, 1) + 0).sum().backward()
    a.grad.data[0] = 99.0
    assert b.grad.data.tolist() == [1.0, 1.0]
    assert c.grad.data.tolist() == [1.0, 1.0]
    seed = np.ones(2)
    d = a * 1.0
    d.backward(agrad.tensor(seed))
    seed[0] = -5.0
    assert a.grad.data.tolist() == [100.0, 2.0]


# ---- a gradient array held in two places must not be added into in place ----------------
# A leaf's .grad takes a fresh gradient array as it is and later contributions are added
# into it in place (as PyTorch's AccumulateGrad steals an unshared buffer). An array that
# another node still reads (add's VJP sends the same one to both operands; identity-like
# rules pass on what arrived) must be copied instead, or a later addition changes a
# gradient still on its way: x + 3x + 7x once gave 32 instead of 11 (issue 15's review).

_ALIASING_GRAPHS = {
    "fan-out of add, inner first": lambda m, x: (x + x * 3.0) + x * 7.0,
    "fan-out of add, inner last": lambda m, x: x * 7.0 + (x + x * 3.0),
    "nested adds": lambda m, x: ((x + x * 2.0) + x * 3.0) + (x * 5.0 + x),
    "sub and neg": lambda m, x: (x - x * 3.0) - (x * 7.0 - x),
    "through a clone": lambda m, x: (x.clone() + x * 3.0) + x.clone() * 7.0,
    "through sum": lambda m, x: (x + (x * 3.0).sum()) + x * 7.0,
    "broadcast": lambda m, x: ((x + x * 3.0) + m.ones(3, dtype=m.float64) * x * 7.0).sum(),
}


@pytest.mark.parametrize("name", sorted(_ALIASING_GRAPHS))
@pytest.mark.parametrize("shape", [(), (1,)])
def test_gradients_sent_to_several_places_are_not_corrupted_by_accumulation(name, shape):
    torch = pytest.importorskip("torch")
    build = _ALIASING_GRAPHS[name]
    grads = []
    for m in (agrad, torch):
        x = m.tensor(np.full(shape, 2.0), requires_grad=True)
        out = build(m, x)
        (out if out.ndim == 0 else out.sum()).backward()  # (0-d: the seed itself fans out)
        grads.append(x.grad.detach().numpy().copy())
    assert np.allclose(grads[0], grads[1], rtol=1e-12, atol=0), (name, grads)


def test_a_custom_backward_returning_its_own_tensor_leaves_that_tensor_alone():
    kept = agrad.tensor([1.0, 2.0])

    class Passes(agrad.autograd.Function):  # mirrors a user Function whose backward
        @staticmethod  # returns a tensor it holds, not a fresh one
        def forward(ctx, x):
            return x * 1.0

        @staticmethod
        def backward(ctx, grad):
            return kept

    x = agrad.tensor([0.5, 0.5], requires_grad=True)
    (Passes.apply(x).sum() + (x * 3.0).sum()).backward()
    assert np.array_equal(kept.numpy(), [1.0, 2.0])  # still what the user made
    assert np.array_equal(x.grad.numpy(), [4.0, 5.0])


def test_a_leaf_hook_returning_its_own_array_leaves_that_array_alone():
    kept = agrad.tensor([1.0, 2.0])
    x = agrad.tensor([0.5, 0.5], requires_grad=True)
    x.register_hook(lambda g: kept)
    (x * 3.0).sum().backward()
    (x * 3.0).sum().backward()  # the second pass adds into x.grad in place
    assert np.array_equal(kept.numpy(), [1.0, 2.0])
    assert np.array_equal(x.grad.numpy(), [2.0, 4.0])
