"""Real third-party PyTorch autograd idioms (tests/idioms/), run on PyTorch and on agrad.

Each snippet runs on real PyTorch, the oracle, and on agrad, in float64, and the results must
agree: numbers to 1e-10 relative, everything else (strings of printed output, bools, ints,
None, shapes) exactly. A snippet that agrad cannot run today is listed in KNOWN_FAILING with the
first missing API or differing semantics; it is marked xfail(strict=True), so implementing the
feature turns it into an XPASS failure and its entry must then be removed. /work/notes/idioms.md
(from the measuring session) ranks these reasons; issue 11 is the work that removes them, issue 12
(agrad.nn) the ones marked "torch.nn".
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import pytest
from idioms import SNIPPETS, Snippet

import agrad

# The first missing API or differing semantics each failing idiom hits (one reason per idiom;
# an idiom may hit more further on). "torch.nn ..." reasons belong to issue 12, the rest to 11.
NN = "torch.nn is missing (issue 12)"
FUNCTION = "torch.autograd.Function (custom forward/backward with ctx) is missing"
DATA = "Tensor.data is the NumPy array, not a detached Tensor sharing storage"
GRAPH = "torch.autograd.graph is missing (Node, saved_tensors_hooks, save_on_cpu, multi-grad hooks)"
SAVED = "grad_fn._saved_self / _saved_other / _saved_result are missing"
NODE_HOOK = "grad_fn.register_hook calls hook(grad), PyTorch calls hook(grad_inputs, grad_outputs)"
NODE_API = "grad_fn.register_prehook and grad_fn.metadata are missing"
ACC_NAME = (
    "AccumulateGrad.name() is 'AccumulateGrad', PyTorch's is 'torch::autograd::AccumulateGrad'"
)
SIZE = "shape/size() are tuples, not torch.Size (prints (2, 3), PyTorch torch.Size([2, 3]))"
DTYPE_STR = "str(x.dtype) is 'float32', PyTorch prints 'torch.float32'"
PRINT_DTYPE = "repr shows dtype=agrad.float32, PyTorch dtype=torch.float32 (the name is to decide)"
PRINT_WRAP = "repr does not wrap at 80 columns in PyTorch's layout"
PRINT_SUMMARY = "repr of more than 1000 elements is not summarised as PyTorch's"
PRINTOPTIONS = "set_printoptions is missing"
INFERENCE = "inference_mode / is_inference_mode_enabled / Tensor.is_inference are missing"
GENERATOR = "torch.Generator (and generator=, multinomial) is missing; manual_seed returns None"
NORMAL = "torch.normal is missing"
KEYWORDS = "PyTorch keyword spellings are refused (size=, input=/other=, axis= on methods)"
OUT_KW = "out= keyword is refused (torch.add, torch.matmul)"
MOD = "% and // operators are missing"
NELEMENT = "Tensor.nelement is missing"
ALLCLOSE = "allclose / isclose are missing"
LOG10 = "log10 / log2 are missing"
HISTOGRAM = "torch.histogram is missing"
ROLL = "Tensor.roll is missing"
SORT = "sort / topk / argsort are missing"
CHUNK = "chunk / split / flip / roll / repeat / tile are missing"
MASKED = "masked_fill / where(cond) / nonzero are missing"
NEW_CTORS = "new_ones / new_zeros / new_tensor / new_full are missing"
TYPED_CTORS = "FloatTensor / DoubleTensor / LongTensor constructors are missing"
VARIABLE = "torch.autograd.Variable is missing"
GRAD_FLOAT = "assigning a float to .grad is accepted; PyTorch raises TypeError"
VJP_CG = "autograd.functional.vjp(create_graph=True): the function output does not require grad"
VHP = "autograd.functional.vhp / hvp are missing"
STRICT = "autograd.functional strict=True does not raise for an independent input"
ANOMALY = "detect_anomaly / set_detect_anomaly / is_anomaly_enabled are missing"
PROFILER = "torch.autograd.profiler is missing"
FORWARD_AD = "torch.autograd.forward_ad (dual numbers) is missing"
FUNC = "torch.func (grad, jacrev, hessian) is missing"
POST_ACC = "Tensor.register_post_accumulate_grad_hook is missing"
LR_SCHED = "torch.optim.lr_scheduler is missing"
ADAMW = "optim.AdamW (and RMSprop, Adagrad) are missing"
PARAM_GROUP = "Optimizer.add_param_group is missing"
ERR_TEXT = "error text differs from PyTorch's"

KNOWN_FAILING: dict[str, str] = {
    "basics_bce_with_logits": NN,
    "blitz_while_data_norm": DATA,
    "examples_grad_assigned_float": GRAD_FLOAT,
    "examples_legendre_custom_function": FUNCTION,
    "examples_two_layer_custom_relu": FUNCTION,
    "function_double_backward_intermediates": FUNCTION,
    "function_double_backward_nested": FUNCTION,
    "function_double_backward_square": FUNCTION,
    "function_exp_docstring": FUNCTION,
    "function_gradcheck_custom": FUNCTION,
    "function_linear_needs_input_grad": FUNCTION,
    "function_mark_dirty": FUNCTION,
    "function_mark_non_differentiable": FUNCTION,
    "function_mul_constant": FUNCTION,
    "function_once_differentiable": FUNCTION,
    "function_save_for_backward_docstring": FUNCTION,
    "function_set_materialize_grads": FUNCTION,
    "function_setup_context_style": FUNCTION,
    "functional_strict_independent_input": STRICT,
    "functional_vjp_create_graph": VJP_CG,
    "grads_forward_ad": FORWARD_AD,
    "grads_gradcheck_catches_wrong_backward": FUNCTION,
    "grads_torch_func": FUNC,
    "makemore_mlp_training": DATA,
    "makemore_neural_bigram_data_update": DATA,
    "makemore_update_ratio": DATA,  # p.data.std() is NumPy's (ddof=0): a different number
    "mechanics_data_vs_detach": DATA,
    "teaching_old_style_data_updates": DATA,
    "tensor_broadcast_error_message": ERR_TEXT,
    "tensor_dot_2d_refused": ERR_TEXT,
}


def run_on(module: Any, snippet: Snippet) -> dict[str, Any]:
    """Run a snippet on torch or agrad in float64, restoring the global state it may change."""
    previous = module.get_default_dtype()
    module.set_default_dtype(module.float64)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return snippet.run(module)
    finally:
        module.set_default_dtype(previous)
        module.set_grad_enabled(True)


def assert_same(expected: Any, actual: Any, where: str = "result") -> None:
    """PyTorch's result against agrad's: floats to 1e-10 relative, all else exactly (types too)."""
    if isinstance(expected, bool) or expected is None or isinstance(expected, str):
        assert type(actual) is type(expected) and actual == expected, (
            f"{where}: PyTorch {expected!r}, agrad {actual!r}"
        )
    elif isinstance(expected, int):
        assert type(actual) is int and actual == expected, (
            f"{where}: PyTorch {expected!r}, agrad {actual!r}"
        )
    elif isinstance(expected, float):
        assert type(actual) is float, f"{where}: PyTorch float {expected!r}, agrad {actual!r}"
        if math.isnan(expected):
            assert math.isnan(actual), f"{where}: PyTorch nan, agrad {actual!r}"
        else:
            assert math.isclose(expected, actual, rel_tol=1e-10, abs_tol=1e-300), (
                f"{where}: PyTorch {expected!r}, agrad {actual!r}"
            )
    elif isinstance(expected, (list, tuple)):
        assert isinstance(actual, (list, tuple)), f"{where}: PyTorch a sequence, agrad {actual!r}"
        assert len(actual) == len(expected), (
            f"{where}: PyTorch {len(expected)} items, agrad {len(actual)}"
        )
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            assert_same(e, a, f"{where}[{i}]")
    elif isinstance(expected, dict):
        assert isinstance(actual, dict) and list(actual) == list(expected), (
            f"{where}: PyTorch keys {list(expected)}, agrad {actual!r}"
        )
        for key in expected:
            assert_same(expected[key], actual[key], f"{where}[{key!r}]")
    else:
        raise TypeError(
            f"{where}: a snippet returned {type(expected).__name__}; return plain values"
        )


def params():
    for name, snippet in SNIPPETS.items():
        marks = []
        if name in KNOWN_FAILING:
            marks.append(pytest.mark.xfail(reason=KNOWN_FAILING[name], strict=True))
        yield pytest.param(snippet, id=name, marks=marks)


@pytest.fixture(scope="module")
def real_torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("snippet", [pytest.param(s, id=n) for n, s in SNIPPETS.items()])
def test_snippet_runs_on_pytorch(real_torch, snippet):
    """The oracle itself: every snippet is valid PyTorch code that returns plain values."""
    result = run_on(real_torch, snippet)
    assert isinstance(result, dict) and result
    assert_same(result, result)


@pytest.mark.parametrize("snippet", list(params()))
def test_snippet_matches_pytorch(real_torch, snippet):
    expected = run_on(real_torch, snippet)
    actual = run_on(agrad, snippet)
    assert_same(expected, actual)


def test_known_failing_names_snippets():
    assert sorted(set(KNOWN_FAILING) - set(SNIPPETS)) == []
    assert all(reason.strip() for reason in KNOWN_FAILING.values())


def test_every_snippet_names_what_it_mirrors():
    assert len(SNIPPETS) >= 130
    assert all(len(s.mirrors) > 20 for s in SNIPPETS.values())


def test_comparison_catches_differences():
    """assert_same is the whole test: it must reject what differs and accept what agrees."""
    assert_same({"a": [1.0, 2.0], "b": "x"}, {"a": [1.0 + 1e-12, 2.0], "b": "x"})
    for expected, actual in [
        (1.0, 1.0 + 1e-8),
        (1, 1.0),
        (True, 1),
        ("tensor(1.)", "tensor(1.0)"),
        ([1.0, 2.0], [1.0]),
        ({"a": 1}, {"b": 1}),
        (None, 0.0),
        (float("nan"), 1.0),
    ]:
        with pytest.raises(AssertionError):
            assert_same(expected, actual)
