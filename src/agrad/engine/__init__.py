"""agrad.engine: a NumPy reverse-mode autograd engine with PyTorch's semantics.

Imports only NumPy (a test asserts it never pulls in the language or CLI stack).
"""

from . import methods as _methods  # noqa: F401 - installs Tensor's operators and methods
from .autograd import backward, grad
from .tensor import Tensor

__all__ = ["Tensor", "backward", "grad"]
