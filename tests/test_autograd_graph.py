"""torch.autograd.graph, anomaly mode, inference mode, vhp/hvp, post-accumulate hooks and the
profiler, against PyTorch's behaviour on the same code (and against algebra for the
products: the Hessian of sum(x³) is diag(6x))."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import require_torch

import agrad


def _both(fn):
    torch = require_torch()
    return fn(torch), fn(agrad)


def test_node_hooks_change_what_flows_and_can_be_removed():
    def run(t):
        a = t.tensor([1.0, -2.0, 3.0], dtype=t.float64, requires_grad=True)
        b = a * a
        c = b.sin()
        calls = []
        h1 = c.grad_fn.register_prehook(lambda gO: (gO[0] * 10,))
        h2 = b.grad_fn.register_hook(lambda gI, gO: calls.append(len(gI)) or (gI[0] + 1, gI[1]))
        c.sum().backward(retain_graph=True)
        first = a.grad.tolist()
        h1.remove()
        h2.remove()
        a.grad = None
        c.sum().backward()
        return first, a.grad.tolist(), calls

    expected, actual = _both(run)
    np.testing.assert_allclose(actual[0], expected[0], rtol=1e-12)
    np.testing.assert_allclose(actual[1], expected[1], rtol=1e-12)
    assert actual[2] == expected[2]


def test_hooks_off_again_cost_nothing():
    # Once every hook is removed (and nothing else is on), backward runs uninterrupted.
    from agrad.engine import autograd
    from agrad.engine.graph_hooks import FEATURES

    a = agrad.tensor([1.0], requires_grad=True)
    before = FEATURES.node_hooks
    handle = (a * 2).grad_fn.register_prehook(lambda g: None)
    assert autograd.GRAPH_HOOKS[0] is not None and FEATURES.node_hooks == before + 1
    handle.remove()
    handle.remove()  # twice: no double count
    assert FEATURES.node_hooks == before


def test_multi_grad_hooks_go_away_with_their_tensors():
    import gc

    from agrad.engine.graph_hooks import FEATURES

    a = agrad.tensor([1.0], requires_grad=True)
    agrad.autograd.graph.register_multi_grad_hook((a,), lambda gs: None)
    count = len(FEATURES.multi)
    del a
    gc.collect()
    (agrad.tensor([2.0], requires_grad=True) * 3).sum().backward()
    assert len(FEATURES.multi) == count - 1


def test_saved_attributes_match_pytorch():
    def run(t):
        x = t.tensor([0.5, 1.5], dtype=t.float64, requires_grad=True)
        y = t.tensor([2.0, -1.0], dtype=t.float64, requires_grad=True)
        m = x * y
        e = x.exp()
        return [
            m.grad_fn._saved_self is x,
            m.grad_fn._saved_other is y,
            e.grad_fn._saved_result.tolist(),
            e.grad_fn._saved_result is e,
            x.pow(3).grad_fn._saved_exponent,
        ]

    expected, actual = _both(run)
    assert actual == expected


def test_saved_values_after_backward_are_freed():
    x = agrad.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.sum().backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.grad_fn._saved_result  # noqa: B018


def test_saved_tensor_hooks_see_every_save_and_nested_blocks_use_the_innermost():
    def run(t):
        seen = []
        x = t.tensor([1.0, 2.0], dtype=t.float64, requires_grad=True)
        y = t.tensor([3.0, -1.0], dtype=t.float64, requires_grad=True)
        with t.autograd.graph.saved_tensors_hooks(lambda v: seen.append("outer") or v, lambda v: v):
            with t.autograd.graph.saved_tensors_hooks(
                lambda v: seen.append("inner") or v * 2, lambda v: v / 2
            ):
                inner = (x * x).sum()
            outer = (x * y).sum()
        (inner + outer).backward()
        return seen, x.grad.tolist(), y.grad.tolist()

    expected, actual = _both(run)
    assert actual == expected


def test_allow_mutation_on_saved_tensors_uses_the_saved_value():
    def run(t):
        with t.autograd.graph.allow_mutation_on_saved_tensors():
            a = t.tensor([1.0, 2.0, 3.0], dtype=t.float64, requires_grad=True)
            b = a.clone()
            out = (b**3).sum()
            b.mul_(10)
            out.backward()
            return a.grad.tolist()

    expected, actual = _both(run)
    assert actual == expected
    # Outside the block, the same mutation is still refused.
    a = agrad.tensor([1.0, 2.0], requires_grad=True)
    b = a.clone()
    out = (b**3).sum()
    b.mul_(10)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()


def test_anomaly_mode_names_the_node_and_restores_the_flag():
    x = agrad.tensor([0.0, 1.0], requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly Detection"), agrad.autograd.detect_anomaly():
        y = (x.sqrt() * 0.0).sum()
        with pytest.raises(RuntimeError, match="Function 'SqrtBackward0' returned nan values"):
            y.backward()
    assert not agrad.is_anomaly_enabled()
    (x.sqrt() * 0.0).sum().backward()  # off again: nan, no error (as PyTorch)
    assert np.isnan(x.grad.tolist()[0])
    agrad.autograd.set_detect_anomaly(True)
    assert agrad.is_anomaly_enabled()
    agrad.autograd.set_detect_anomaly(False)
    assert not agrad.is_anomaly_enabled()


def test_inference_mode_matches_pytorch():
    def run(t):
        w = t.tensor([1.0, 2.0], requires_grad=True)
        with t.inference_mode():
            made = t.ones(2)
            computed = w * 2
            inside = t.is_inference_mode_enabled()
        with t.inference_mode(False):
            normal = w * 2
        raised = False
        try:
            (w * made).sum().backward()
        except RuntimeError:
            raised = True
        fine = (w * made.clone()).sum()
        return [made.is_inference(), computed.is_inference(), computed.requires_grad, inside,
                normal.requires_grad, normal.is_inference(), raised, fine.requires_grad,
                t.is_inference_mode_enabled()]  # fmt: skip

    expected, actual = _both(run)
    assert actual == expected


def test_vhp_and_hvp_are_the_hessian_times_v():
    x = agrad.tensor([[0.5, -1.0], [2.0, 0.25]])
    v = agrad.tensor([[1.0, 2.0], [-1.0, 0.5]])
    for product in (agrad.autograd.functional.vhp, agrad.autograd.functional.hvp):
        out, hv = product(lambda t: (t**3).sum(), x, v)
        assert out.item() == pytest.approx(float((x.numpy() ** 3).sum()))
        np.testing.assert_allclose(hv.numpy(), 6 * x.numpy() * v.numpy(), rtol=1e-14)
    _, (hx, hy) = agrad.autograd.functional.vhp(
        lambda a, b: (a * a * b).sum(),
        (agrad.tensor([1.0, 2.0]), agrad.tensor([3.0, -1.0])),
        (agrad.tensor([1.0, 0.0]), agrad.tensor([0.0, 1.0])),
    )  # H = [[2b, 2a], [2a, 0]] per element
    np.testing.assert_allclose(hx.numpy(), [6.0, 4.0])
    np.testing.assert_allclose(hy.numpy(), [2.0, 0.0])
    _, h = agrad.autograd.functional.hvp(lambda t: (t**3).sum(), x, v, create_graph=True)
    assert h.requires_grad
    with pytest.raises(RuntimeError, match="single element"):
        agrad.autograd.functional.vhp(lambda t: t * 2, x, v)


def test_post_accumulate_hooks_match_pytorch():
    def run(t):
        seen = []
        p = t.tensor([1.0, 2.0], dtype=t.float64, requires_grad=True)
        handle = p.register_post_accumulate_grad_hook(lambda q: seen.append(q.grad.tolist()))
        (p * 3).sum().backward()
        (p * p).sum().backward()
        handle.remove()
        (p * 3).sum().backward()
        return seen, p.grad.tolist()

    expected, actual = _both(run)
    assert actual == expected
    with pytest.raises(RuntimeError, match="non-leaf"):
        (agrad.ones(1, requires_grad=True) * 2).register_post_accumulate_grad_hook(print)


def test_multi_grad_hook_reports_which_grads_were_computed():
    def run(t):
        calls = []
        a = t.tensor([1.0, 2.0], requires_grad=True)
        b = t.tensor([3.0, 4.0], requires_grad=True)
        c = a * b
        d = b * 2
        handle = t.autograd.graph.register_multi_grad_hook(
            (a, b, c, d), lambda gs: calls.append([g is not None for g in gs])
        )
        c.sum().backward(retain_graph=True)
        d.sum().backward(retain_graph=True)
        handle.remove()
        c.sum().backward()
        return calls

    expected, actual = _both(run)
    assert actual == expected


def test_profiler_counts_forward_and_backward_ops():
    x = agrad.tensor([1.0, 2.0], requires_grad=True)
    with agrad.autograd.profiler.profile() as prof:
        for _ in range(10):
            (x**2).sum().backward()
    counts = {e.key: e.count for e in prof.key_averages()}
    assert counts["aten::pow"] == 10 and counts["aten::sum"] == 10
    assert counts["PowBackward0"] == 10 and counts["SumBackward0"] == 10
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=2)
    assert "Name" in table and "# of Calls" in table and "Self CPU time total" in table
    assert (
        len([line for line in table.splitlines() if line.startswith(("aten::", "Pow", "Sum"))]) == 2
    )
    (x**2).sum().backward()  # after the block: not recorded
    assert {e.key: e.count for e in prof.key_averages()} == counts
