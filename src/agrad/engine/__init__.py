"""agrad.engine: a NumPy reverse-mode autograd engine with PyTorch's semantics.

Imports only NumPy (a test asserts it never pulls in the language or CLI stack).
"""

from . import tensor as _tensor  # noqa: F401 - defines Tensor, then installs its methods
from .autograd import backward, grad
from .tensor import Tensor

__all__ = ["Tensor", "backward", "grad"]
