"""Everything ``import agrad`` offers (``agrad.tensor``, ``agrad.exp``, ``agrad.float32``, ...).

`agrad/__init__.py` loads this module on the first use of any of these names, and copies
its namespace into the package: ``import agrad`` alone costs nothing, so the command line
starts without NumPy and the engine when a command needs neither (``agrad --version``).
"""

from __future__ import annotations

from . import autograd, func, linalg, nn, optim
from .autograd import inference_mode, is_anomaly_enabled, is_inference_mode_enabled
from .autograd import set_detect_anomaly as _set_detect_anomaly
from .engine import compat as _compat
from .engine import functions as _functions
from .engine import reorder as _reorder
from .engine.args import as_tensor
from .engine.creation import (
    arange,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    manual_seed,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    seed,
    tensor,
    zeros,
    zeros_like,
)  # fmt: skip
from .engine.dtypes import DTYPES as _DTYPES
from .engine.dtypes import DType as dtype
from .engine.dtypes import get_default_dtype, set_default_dtype
from .engine.functions import *  # noqa: F403 - agrad.exp, agrad.sum, ... (the op table's faces)
from .engine.generator import Generator, default_generator, initial_seed
from .engine.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .engine.printing import get_printoptions, set_printoptions
from .engine.sampling import multinomial, normal, randperm
from .engine.size import Size
from .engine.tensor import Tensor
from .errors import (
    AgradError,
    AgradLimitError,
    AgradNameError,
    AgradShapeError,
    AgradSyntaxError,
    AgradValueError,
)  # fmt: skip

set_anomaly_enabled = _set_detect_anomaly  # torch.set_anomaly_enabled(mode)
globals().update(_DTYPES)  # agrad.float32, agrad.float, agrad.double, agrad.int64, ...
globals().update(_reorder.FUNCTIONS)  # sort, topk, flip, ... (composites of the table's ops)
globals().update(_compat.FUNCTIONS)  # allclose, isclose, FloatTensor, ...
_EXTRA = (*_reorder.FUNCTIONS, *_compat.FUNCTIONS)

__all__ = [
    "AgradError", "AgradLimitError", "AgradNameError", "AgradShapeError", "AgradSyntaxError",
    "AgradValueError", "Generator", "Size", "Tensor", "default_generator", "initial_seed",
    "multinomial", "normal", "randperm", "inference_mode", "is_anomaly_enabled",
    "is_inference_mode_enabled", "set_anomaly_enabled", "dtype", "get_printoptions",
    "set_printoptions",
    "arange", "as_tensor", "autograd", "empty", "empty_like",
    "enable_grad", "eye", "from_numpy", "full", "full_like", "get_default_dtype",
    "is_grad_enabled", "linalg", "linspace", "manual_seed", "nn", "no_grad", "ones", "ones_like",
    "optim", "func",
    "rand", "rand_like", "randint", "randn", "randn_like", "seed", "set_default_dtype",
    "set_grad_enabled", "tensor", "zeros", "zeros_like", *_functions.PUBLIC, *_EXTRA,
]  # fmt: skip
# PyTorch's keyword spellings on every agrad.* function: torch.matmul(input=a, other=b),
# torch.add(a, b, out=c). (Internal calls use the unwrapped functions.)
globals().update(_compat.keyword_faces(_functions.PUBLIC, globals()))
