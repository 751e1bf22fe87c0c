"""The tutorials agrad was designed from (shared/seeds/*.txt), run with ``import agrad as torch``.

Each tutorial's code is written once, as a function of the module it runs on
(``run_000(torch)`` ...), so the very same statements run on agrad and, when it
is installed, on real PyTorch. Expectations come from two independent places:
the numbers the tutorials print or derive by hand, and PyTorch's own output.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import agrad

NON_LEAF_WARNING = re.escape(
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor."
)
RETAIN_GRAPH = re.escape("retain_graph=True")
SCALAR_ONLY = re.escape("grad can be implicitly created only for scalar outputs")


@pytest.fixture
def real_torch():
    return pytest.importorskip("torch")


def quiet_grad(t):
    """``t.grad`` without the non-leaf warning (for comparisons, not for the warning tests)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return t.grad


def value(t):
    """A tensor of either library (or None) as a float64 NumPy array."""
    if t is None:
        return None
    return np.asarray(t.detach().tolist(), dtype=np.float64)


# =========================================================================================
# Seed 000: "Tensor 如何实现自动求导" -- w*x + b on two data points, by hand and by autograd.
# =========================================================================================


def run_000(torch, backward=True):
    """The tutorial's statements, verbatim (Python's built-in ``sum``), on module ``torch``."""
    x = torch.tensor([1.0, 2.0])
    y = torch.tensor([5.0, 7.0])
    # 初始权重， w = 1.0, b = 0.0
    w = torch.tensor(1.0, requires_grad=True)
    b = torch.tensor(0.0, requires_grad=True)
    wx = w * x
    wx_b = wx + b
    loss = wx_b - y
    loss2 = loss**2
    loss2_sum = sum(loss2)
    if backward:
        loss2_sum.backward()
    return dict(x=x, y=y, w=w, b=b, wx=wx, wx_b=wx_b, loss=loss, loss2=loss2, loss2_sum=loss2_sum)


NON_LEAVES_000 = ["wx", "wx_b", "loss", "loss2", "loss2_sum"]
GRAD_FNS_000 = {
    "wx": "MulBackward0",
    "wx_b": "AddBackward0",
    "loss": "SubBackward0",
    "loss2": "PowBackward0",
    "loss2_sum": "AddBackward0",  # built-in sum() is 0 + l[0] + l[1]
}


def test_000_leaf_flags():
    ns = run_000(agrad, backward=False)
    x, y, w, b = ns["x"], ns["y"], ns["w"], ns["b"]
    # 输出：(None, None, True, None, None, True), twice
    assert (x.grad, x.grad_fn, x.is_leaf, y.grad, y.grad_fn, y.is_leaf) == (
        None,
        None,
        True,
        None,
        None,
        True,
    )
    assert (w.grad, w.grad_fn, w.is_leaf, b.grad, b.grad_fn, b.is_leaf) == (
        None,
        None,
        True,
        None,
        None,
        True,
    )
    assert (x.requires_grad, y.requires_grad, w.requires_grad, b.requires_grad) == (
        False,
        False,
        True,
        True,
    )


def test_000_intermediates_are_not_leaves():
    ns = run_000(agrad, backward=False)
    # 输出：(False, False, False, False, False)
    assert tuple(ns[k].is_leaf for k in NON_LEAVES_000) == (False,) * 5
    assert all(ns[k].requires_grad for k in NON_LEAVES_000)


@pytest.mark.parametrize("backward", [False, True], ids=["before", "after"])
@pytest.mark.parametrize("name", NON_LEAVES_000)
def test_000_non_leaf_grad_warns_and_is_none(name, backward):
    ns = run_000(agrad, backward=backward)
    with pytest.warns(UserWarning, match=NON_LEAF_WARNING):
        g = ns[name].grad
    assert g is None


@pytest.mark.parametrize("name", ["x", "y", "w", "b"])
def test_000_leaf_grad_read_does_not_warn(name):
    ns = run_000(agrad)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ns[name].grad  # noqa: B018 - the read is the test


@pytest.mark.parametrize("name,expected", GRAD_FNS_000.items())
def test_000_grad_fn_names(name, expected):
    fn = run_000(agrad, backward=False)[name].grad_fn
    assert fn.name() == expected
    assert re.fullmatch(rf"<{expected} (object )?at 0x[0-9a-f]+>", repr(fn))


def test_000_gradients_by_hand():
    ns = run_000(agrad)
    # The tutorial's hand derivation, (x, y) = (1, 5) and (2, 7):
    w_grad = 2 * (1 * 1 + 0 - 5) * 1 + 2 * (1 * 2 + 0 - 7) * 2
    b_grad = 2 * (1 * 1 + 0 - 5) + 2 * (1 * 2 + 0 - 7)
    assert (w_grad, b_grad) == (-28, -18)
    assert ns["w"].grad.item() == w_grad
    assert ns["b"].grad.item() == b_grad
    assert ns["w"].grad.shape == () and ns["b"].grad.shape == ()
    # x, y 不支持求导，仍为None; 中间变量的梯度不对外暴露
    assert ns["x"].grad is None and ns["y"].grad is None
    assert all(quiet_grad(ns[k]) is None for k in NON_LEAVES_000)
    assert ns["loss2_sum"].item() == (1 - 5) ** 2 + (2 - 7) ** 2


def test_000_printed_gradients():
    ns = run_000(agrad)
    # 输出：(tensor(-28.), tensor(-18.), None, None)
    assert repr(ns["w"].grad) == "tensor(-28.)"
    assert repr((ns["w"].grad, ns["b"].grad, ns["x"].grad, ns["y"].grad)) == (
        "(tensor(-28.), tensor(-18.), None, None)"
    )
    assert repr(ns["loss2_sum"]) == "tensor(41., grad_fn=<AddBackward0>)"


def test_000_matches_pytorch(real_torch):
    ours, theirs = run_000(agrad), run_000(real_torch)
    for k in ["x", "y", "w", "b"]:
        assert ours[k].is_leaf is theirs[k].is_leaf is True
        np.testing.assert_array_equal(value(ours[k].grad), value(theirs[k].grad))
    for k in NON_LEAVES_000:
        assert ours[k].is_leaf == theirs[k].is_leaf
        assert ours[k].grad_fn.name() == theirs[k].grad_fn.name()
        assert quiet_grad(ours[k]) is None and quiet_grad(theirs[k]) is None
        np.testing.assert_array_equal(value(ours[k]), value(theirs[k]))
    assert repr(ours["w"].grad) == repr(theirs["w"].grad) == "tensor(-28.)"
    assert repr(ours["b"].grad) == repr(theirs["b"].grad) == "tensor(-18.)"


def test_000_warning_text_matches_pytorch(real_torch):
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        run_000(real_torch)["wx"].grad  # noqa: B018
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        run_000(agrad)["wx"].grad  # noqa: B018
    assert [w.category for w in ours] == [w.category for w in theirs] == [UserWarning]
    # PyTorch appends "(Triggered internally at ...)"; the sentences before the link agree.
    head = str(theirs[0].message).split(" See github.com")[0]
    assert str(ours[0].message).startswith(head)


# =========================================================================================
# Seed 001: "自动求导要点 / 计算图 / 非标量反向传播" -- z = w*x + b, retain_graph, Jacobian.
# =========================================================================================


def build_001(torch, seed=0):
    torch.manual_seed(seed)
    # 定义输入张量x
    x = torch.Tensor([2])
    # 初始化权重参数w,偏移量b、并设置require_grad属性为True，为自动求导
    w = torch.randn(1, requires_grad=True)
    b = torch.randn(1, requires_grad=True)
    # 实现前向传播
    y = torch.mul(w, x)
    z = torch.add(y, b)
    return x, w, b, y, z


def test_001_forward_flags():
    x, w, b, y, z = build_001(agrad)
    assert (x.requires_grad, w.requires_grad, b.requires_grad) == (False, True, True)
    assert (y.requires_grad, z.requires_grad) == (True, True)
    assert (x.is_leaf, w.is_leaf, b.is_leaf, y.is_leaf, z.is_leaf) == (
        True,
        True,
        True,
        False,
        False,
    )
    assert (x.grad_fn, w.grad_fn, b.grad_fn) == (None, None, None)
    assert (y.grad_fn.name(), z.grad_fn.name()) == ("MulBackward0", "AddBackward0")
    assert x.dtype == agrad.get_default_dtype() and x.shape == (1,) and x.item() == 2.0
    np.testing.assert_array_equal(value(z), value(w) * 2 + value(b))


def test_001_printed_lines():
    x, w, b, y, z = build_001(agrad)
    line = (
        f"x, w, b的require_grad属性分别为：{x.requires_grad}, {w.requires_grad}, {b.requires_grad}"
    )
    assert line == "x, w, b的require_grad属性分别为：False, True, True"
    line = f"x, w, b的grad_fn属性: {x.grad_fn}, {w.grad_fn}, {b.grad_fn}"
    assert line == "x, w, b的grad_fn属性: None, None, None"
    line = f"y, z的是否为叶子节点：{y.grad_fn}, {z.grad_fn}"
    assert re.fullmatch(
        r"y, z的是否为叶子节点：<MulBackward0 object at 0x[0-9a-f]+>, "
        r"<AddBackward0 object at 0x[0-9a-f]+>",
        line,
    )
    z.backward()
    line = f"参数w, b的梯度分别为：{w.grad}, {b.grad}, {x.grad}"
    assert line == "参数w, b的梯度分别为：tensor([2.]), tensor([1.]), None"
    # The tutorial prints the (bound) retain_grad methods themselves; that must still work.
    line = f"非叶子节点y, z的梯度分别为:{y.retain_grad}, {z.retain_grad}"
    assert line.count("retain_grad") == 2


def test_001_backward_gradients():
    x, w, b, y, z = build_001(agrad)
    z.backward()
    # dz/dw = x = 2, dz/db = 1; x is a leaf that does not require grad
    np.testing.assert_array_equal(value(w.grad), value(x))
    assert w.grad.tolist() == [2.0] and b.grad.tolist() == [1.0]
    assert x.grad is None
    assert quiet_grad(y) is None and quiet_grad(z) is None


def test_001_second_backward_needs_retain_graph():
    _, w, b, _, z = build_001(agrad)
    z.backward()
    with pytest.raises(RuntimeError, match=RETAIN_GRAPH):
        z.backward()


def test_001_retain_graph_accumulates():
    _, w, b, _, z = build_001(agrad, seed=1)
    z.backward(retain_graph=True)
    z.backward(retain_graph=True)
    assert w.grad.tolist() == [4.0]
    assert b.grad.tolist() == [2.0]
    z.backward()  # the graph was retained, so a third pass works (and frees it)
    assert w.grad.tolist() == [6.0] and b.grad.tolist() == [3.0]


def test_001_matches_pytorch(real_torch):
    ours, theirs = build_001(agrad), build_001(real_torch)
    for o, t in zip(ours, theirs, strict=True):
        assert (o.requires_grad, o.is_leaf) == (t.requires_grad, t.is_leaf)
        assert (o.grad_fn is None) == (t.grad_fn is None)
        if o.grad_fn is not None:
            assert o.grad_fn.name() == t.grad_fn.name()
    ours[-1].backward()
    theirs[-1].backward()
    for o, t in zip(ours[:3], theirs[:3], strict=True):
        np.testing.assert_array_equal(value(o.grad), value(t.grad))


def build_jacobian_001(torch):
    """Part 2 of seed 001, verbatim up to the first backward."""
    # 定义叶子节点张量x,形状为1*2
    x = torch.tensor([[2, 3]], dtype=torch.float, requires_grad=True)
    # 初始化Jacobian矩阵
    J = torch.zeros(2, 2)
    # 初始化目标张量，形状为1*2
    y = torch.zeros(1, 2)
    # 定义y与x之间的映射关系
    y[0, 0] = x[0, 0] ** 2 + 3 * x[0, 1]
    y[0, 1] = x[0, 1] ** 2 + 2 * x[0, 0]
    return x, J, y


def run_jacobian_001(torch):
    x, J, y = build_jacobian_001(torch)
    # 生成y1对x的梯度
    y.backward(torch.Tensor([[1, 0]]), retain_graph=True)
    J[0] = x.grad
    # 梯度是累加的，故需要对x的梯度清零
    x.grad = torch.zeros_like(x.grad)
    # 生成y2对x的梯度
    y.backward(torch.Tensor([[0, 1]]))
    J[1] = x.grad
    return x, J, y


def test_001_jacobian_graph():
    x, _, y = build_jacobian_001(agrad)
    assert x.dtype == agrad.float32
    assert y.requires_grad and not y.is_leaf
    assert y.grad_fn.name() == "CopySlices"
    assert y.tolist() == [[2**2 + 3 * 3, 3**2 + 2 * 2]]


def test_001_jacobian_by_hand():
    x, J, _ = run_jacobian_001(agrad)
    x1, x2 = 2.0, 3.0
    by_hand = [[2 * x1, 3.0], [2.0, 2 * x2]]  # J = [[2x1, 3], [2, 2x2]]
    assert by_hand == [[4, 3], [2, 6]]
    assert J.tolist() == by_hand
    assert x.grad.tolist() == [[2.0, 6.0]]
    # 打印: tensor([[4., 3.], [2., 6.]])
    assert repr(J) == "tensor([[4., 3.],\n        [2., 6.]])"


def test_001_jacobian_non_scalar_backward_needs_gradient():
    _, _, y = build_jacobian_001(agrad)
    with pytest.raises(RuntimeError, match=SCALAR_ONLY):
        y.backward()


def test_001_jacobian_second_backward_needs_retain_graph():
    x, _, y = build_jacobian_001(agrad)
    y.backward(agrad.Tensor([[1, 0]]))
    with pytest.raises(RuntimeError, match=RETAIN_GRAPH):
        y.backward(agrad.Tensor([[0, 1]]))


def test_001_jacobian_matches_pytorch(real_torch):
    x, J, y = run_jacobian_001(agrad)
    tx, tJ, ty = run_jacobian_001(real_torch)
    np.testing.assert_array_equal(value(J), value(tJ))
    np.testing.assert_array_equal(value(x.grad), value(tx.grad))
    assert type(ty.grad_fn).__name__ == y.grad_fn.name() == "CopySlices"
    assert (y.is_leaf, y.requires_grad) == (ty.is_leaf, ty.requires_grad)
    with pytest.raises(RuntimeError, match=SCALAR_ONLY):
        build_jacobian_001(real_torch)[2].backward()


# =========================================================================================
# Seed 003: "torch.autograd 的学习" -- Q = 3a^3 - b^2, a model's backward, SGD with momentum.
# =========================================================================================


def build_003(torch):
    a = torch.tensor([2.0, 3.0], requires_grad=True)
    b = torch.tensor([6.0, 4.0], requires_grad=True)
    Q = 3 * a**3 - b**2
    return a, b, Q


def test_003_external_gradient():
    a, b, Q = build_003(agrad)
    external_grad = agrad.tensor([1.0, 1.0])
    Q.backward(gradient=external_grad)
    # print(9*a**2 == a.grad); print(-2*b == b.grad)
    assert (9 * a**2 == a.grad).tolist() == [True, True]
    assert (-2 * b == b.grad).tolist() == [True, True]
    assert repr(9 * a**2 == a.grad) == "tensor([True, True])"
    assert repr(-2 * b == b.grad) == "tensor([True, True])"
    # dQ/da = 9a^2 = [36, 81], dQ/db = -2b = [-12, -8]
    assert a.grad.tolist() == [36.0, 81.0] and b.grad.tolist() == [-12.0, -8.0]
    assert Q.grad_fn.name() == "SubBackward0"


def test_003_sum_backward_is_the_same():
    a, b, Q = build_003(agrad)
    Q.sum().backward()
    assert a.grad.tolist() == [36.0, 81.0] and b.grad.tolist() == [-12.0, -8.0]


def test_003_matches_pytorch(real_torch):
    a, b, Q = build_003(agrad)
    ta, tb, tQ = build_003(real_torch)
    Q.backward(gradient=agrad.tensor([1.0, 1.0]))
    tQ.backward(gradient=real_torch.tensor([1.0, 1.0]))
    np.testing.assert_array_equal(value(Q), value(tQ))
    np.testing.assert_array_equal(value(a.grad), value(ta.grad))
    np.testing.assert_array_equal(value(b.grad), value(tb.grad))
    assert repr(9 * a**2 == a.grad) == repr(9 * ta**2 == ta.grad)


class TinyLinear:
    """Stands in for the tutorial's resnet18: one weight matrix on the flattened image."""

    def __init__(self, torch, weight, bias):
        self.torch = torch
        self.weight = torch.tensor(weight, requires_grad=True)
        self.bias = torch.tensor(bias, requires_grad=True)

    def __call__(self, data):
        return data.reshape(data.shape[0], -1) @ self.weight + self.bias

    def parameters(self):
        return [self.weight, self.bias]


def tutorial_003_model(torch, data_np, labels_np, weight_np, bias_np, steps=1):
    """Sections 一 and 二 of seed 003 with the model replaced by `TinyLinear`."""
    model = TinyLinear(torch, weight_np, bias_np)
    data = torch.tensor(data_np)
    labels = torch.tensor(labels_np)
    optim = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    grads = []
    for _ in range(steps):
        optim.zero_grad()
        prediction = model(data)  # 正向传播
        loss = (prediction - labels).sum()
        loss.backward()  # 反向传播
        grads.append((value(model.weight.grad), value(model.bias.grad)))
        optim.step()  # 梯度下降
    return model, loss, grads


@pytest.fixture
def image_problem():
    agrad.manual_seed(3)
    data = agrad.rand(1, 3, 64, 64)  # the tutorial's input, created as it does
    assert data.shape == (1, 3, 64, 64) and data.min().item() >= 0 and data.max().item() < 1
    rng = np.random.default_rng(3)
    return dict(
        data_np=value(data),
        labels_np=rng.random((1, 10)),
        weight_np=rng.standard_normal((3 * 64 * 64, 10)) * 0.01,
        bias_np=rng.standard_normal(10) * 0.1,
    )


def test_003_model_backward_and_one_sgd_step(image_problem):
    p = image_problem
    model, loss, grads = tutorial_003_model(agrad, **p)
    flat = p["data_np"].reshape(1, -1)
    # loss = sum_j (flat @ W + b - labels)_j  =>  dL/dW = flat^T 1,  dL/db = 1
    expected_loss = (flat @ p["weight_np"] + p["bias_np"] - p["labels_np"]).sum()
    assert loss.item() == pytest.approx(expected_loss, rel=1e-12)
    gw, gb = grads[0]
    np.testing.assert_allclose(gw, np.repeat(flat.T, 10, axis=1), rtol=0, atol=0)
    np.testing.assert_array_equal(gb, np.ones(10))
    # First SGD step with momentum: buf = g, p -= lr * buf
    np.testing.assert_allclose(value(model.weight), p["weight_np"] - 1e-2 * gw, atol=1e-15)
    np.testing.assert_allclose(value(model.bias), p["bias_np"] - 1e-2 * gb, atol=1e-15)
    assert model.weight.is_leaf and model.weight.requires_grad and model.weight.grad_fn is None


def test_003_model_matches_pytorch(real_torch, image_problem):
    model, loss, _ = tutorial_003_model(agrad, steps=3, **image_problem)
    tmodel, tloss, _ = tutorial_003_model(real_torch, steps=3, **image_problem)
    assert loss.item() == pytest.approx(tloss.item(), rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(value(model.weight), value(tmodel.weight), rtol=0, atol=1e-12)
    np.testing.assert_allclose(value(model.bias), value(tmodel.bias), rtol=0, atol=1e-12)


# ---- SGD with momentum, 5 steps on a small quadratic model -------------------------------

X_SGD = np.array([[1.0, -0.5], [0.3, 2.0], [-1.2, 0.7], [0.4, 0.1]])
T_SGD = np.array([1.0, -2.0, 0.5, 3.0])
W0_SGD = np.array([0.2, -0.1])
B0_SGD = 0.05
LR, MOMENTUM, STEPS = 1e-2, 0.9, 5


def sgd_with_module(torch):
    w = torch.tensor(W0_SGD.copy(), requires_grad=True)
    b = torch.tensor(B0_SGD, requires_grad=True)
    X, t = torch.tensor(X_SGD), torch.tensor(T_SGD)
    optim = torch.optim.SGD([w, b], lr=LR, momentum=MOMENTUM)
    trajectory = []
    for _ in range(STEPS):
        optim.zero_grad()
        loss = ((X @ w + b - t) ** 2).sum()
        loss.backward()
        optim.step()
        trajectory.append(np.concatenate([value(w), [b.item()]]))
    return np.array(trajectory)


def sgd_by_hand():
    """torch.optim.SGD's rule: buf = g (first step), buf = 0.9 buf + g; p -= lr * buf,
    with the gradient of sum((Xw + b - t)^2) written out: 2 X^T r and 2 sum(r)."""
    w, b = W0_SGD.copy(), B0_SGD
    buf_w = buf_b = None
    trajectory = []
    for _ in range(STEPS):
        r = X_SGD @ w + b - T_SGD
        gw, gb = 2 * X_SGD.T @ r, 2 * r.sum()
        buf_w = gw.copy() if buf_w is None else MOMENTUM * buf_w + gw
        buf_b = gb if buf_b is None else MOMENTUM * buf_b + gb
        w = w - LR * buf_w
        b = b - LR * buf_b
        trajectory.append(np.concatenate([w, [b]]))
    return np.array(trajectory)


def test_003_sgd_momentum_matches_hand_formula():
    ours = sgd_with_module(agrad)
    expected = sgd_by_hand()
    assert not np.allclose(expected[0], expected[-1])  # the parameters really move
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-12)


def test_003_sgd_momentum_matches_pytorch(real_torch):
    dtype = real_torch.get_default_dtype()
    real_torch.set_default_dtype(real_torch.float64)
    try:
        theirs = sgd_with_module(real_torch)
    finally:
        real_torch.set_default_dtype(dtype)
    np.testing.assert_allclose(sgd_with_module(agrad), theirs, rtol=0, atol=1e-12)
