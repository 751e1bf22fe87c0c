"""Complex autograd: agrad's rules are not PyTorch's conjugate Wirtinger ones, so every
route to a complex tensor that requires grad either raises one clear error or gives
PyTorch's numbers — never a silent wrong gradient (qa6: |sum z**2| had the wrong one).
Complex values without gradients keep working.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import require_torch

import agrad

torch = require_torch()

MESSAGE = "complex autograd is not supported"
Z0 = [1 + 2j, 0.5 - 1j]
X0 = [0.3, -1.2]


def _leaf(lib):
    return lib.tensor(X0, dtype=lib.float64, requires_grad=True)


def _z(lib):
    return lib.tensor(Z0, dtype=lib.complex128)


def _fn(lib, a, b):
    class Rotate(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * (1 + 1j)

        @staticmethod
        def backward(ctx, g):
            return (g * (1 - 1j)).real

    return Rotate.apply(a)


def _setitem(lib, x):
    z = _z(lib)
    z[0] = x[0]
    return z


def _inplace(method):
    def route(lib, x):
        z = _z(lib)
        getattr(z, method)(x)
        return z

    return route


# Each route returns (a tensor, the leaves to differentiate): a complex tensor that
# requires grad, if the library allows one to be made that way.
ROUTES = {
    "tensor(requires_grad=True)": lambda lib: lib.tensor(Z0, requires_grad=True),
    "tensor(dtype=complex64)": lambda lib: lib.tensor(Z0, dtype=lib.complex64, requires_grad=True),
    "requires_grad_()": lambda lib: _z(lib).requires_grad_(),
    "requires_grad = True": lambda lib: (lambda z: (setattr(z, "requires_grad", True), z)[1])(
        _z(lib)
    ),
    "detach().requires_grad_()": lambda lib: _z(lib).detach().requires_grad_(),
    "zeros": lambda lib: lib.zeros(2, dtype=lib.complex128, requires_grad=True),
    "ones": lambda lib: lib.ones(2, dtype=lib.complex128, requires_grad=True),
    "full": lambda lib: lib.full((2,), 1 + 1j, dtype=lib.complex128, requires_grad=True),
    "empty": lambda lib: lib.empty(2, dtype=lib.complex128, requires_grad=True).fill_(1),
    "randn": lambda lib: lib.randn(2, dtype=lib.complex128, requires_grad=True),
    "zeros_like": lambda lib: lib.zeros_like(_z(lib), requires_grad=True),
    "ones_like": lambda lib: lib.ones_like(_z(lib), requires_grad=True),
    "logspace": lambda lib: lib.logspace(0, 1, 2, dtype=lib.complex128, requires_grad=True),
    "Parameter": lambda lib: lib.nn.Parameter(_z(lib)),
    "x * 1j": lambda lib: _leaf(lib) * 1j,
    "x + (1+2j)": lambda lib: _leaf(lib) + (1 + 2j),
    "x * z": lambda lib: _leaf(lib) * _z(lib),
    "z - x": lambda lib: _z(lib) - _leaf(lib),
    "z @ x": lambda lib: _z(lib) @ _leaf(lib).to(lib.complex128),
    "x.to(complex128)": lambda lib: _leaf(lib).to(lib.complex128),
    "exp(x * 1j)": lambda lib: (_leaf(lib) * 1j).exp(),
    "cat([x, z])": lambda lib: lib.cat([_leaf(lib).to(lib.complex128), _z(lib)]),
    "where(x > 0, x, z)": lambda lib: lib.where(_leaf(lib) > 0, _leaf(lib), _z(lib)),
    "custom Function": lambda lib: _fn(lib, _leaf(lib), None),
    "z[0] = x[0]": lambda lib: _setitem(lib, _leaf(lib)),
    "z.mul_(x)": _inplace("mul_"),
    "z.add_(x)": _inplace("add_"),
    "z.copy_(x)": _inplace("copy_"),
    "z[:1].mul_(x[:1]) (a view)": lambda lib: (lambda z: (z[:1].mul_(_leaf(lib)[:1]), z)[1])(
        _z(lib)
    ),
}


def _make(lib, name):
    route = ROUTES[name]
    if route.__code__.co_argcount == 2:
        return route(lib, _leaf(lib))
    return route(lib)


def _gradient(lib, name):
    """The route's tensor, the gradient of a real loss of it w.r.t. what requires grad."""
    lib.manual_seed(0)
    t = _make(lib, name)
    leaves = [t] if t.grad_fn is None else []
    loss = (t * t).sum().abs()
    if not leaves:
        return float(loss.detach()), None
    (g,) = lib.autograd.grad(loss, leaves)
    return float(loss.detach()), g.numpy()


@pytest.mark.parametrize("name", sorted(ROUTES))
def test_every_route_to_a_complex_tensor_requiring_grad_raises_or_matches_pytorch(name):
    try:
        ours = _gradient(agrad, name)
    except RuntimeError as exc:
        assert MESSAGE in str(exc), f"{name}: {exc}"
        assert "\n" not in str(exc)
        return
    theirs = _gradient(torch, name)  # agrad ran: it must be PyTorch's numbers
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12, err_msg=name)
    if theirs[1] is not None:
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12, err_msg=name)


def test_the_qa6_case_raises_instead_of_a_wrong_gradient():
    with pytest.raises(RuntimeError, match=MESSAGE):
        agrad.tensor([1 + 2j, 0.5 - 1j], requires_grad=True)


def test_complex_values_without_gradients_still_work_as_pytorch():
    for lib in (agrad, torch):
        x = _leaf(lib)
        z = _z(lib)
        w = (z * z + 1).exp()
        z.mul_(2)
        with lib.no_grad():
            u = x * 1j  # not recorded: allowed
        assert not u.requires_grad
        np.testing.assert_allclose(w.numpy(), np.exp(np.array(Z0) ** 2 + 1), rtol=1e-12)
        np.testing.assert_allclose(z.numpy(), 2 * np.array(Z0), rtol=1e-12)
        y = (x * 2).sum()  # real autograd is untouched
        y.backward()
        assert x.grad.tolist() == [2.0, 2.0]
