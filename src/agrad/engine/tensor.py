"""`Tensor`: a NumPy array plus PyTorch's autograd metadata — the data model only.

Leaves, ``grad``, ``requires_grad``, ``grad_fn``, ``retain_grad``, hooks, the version
counter of in-place writes, and the array protocol. Operators and every method that
computes (``x.exp()``, ``x + y``, ``x[0]``, ``backward``, ``repr``) are installed on the
class in one place, `agrad.engine.methods`, from the op table's public faces; this
module imports nothing that computes.
"""

from __future__ import annotations

import copy
import numbers
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import AgradAutogradError
from .dtypes import get_default_dtype
from .escapes import escape
from .grad_attr import checked_grad, not_a_tensor, type_name
from .grad_mode import STATE
from .node import RemovableHandle

NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
    "instead. See github.com/pytorch/pytorch/pull/30531 for more informations."
)
INPLACE_LEAF_ERROR = "a leaf Variable that requires grad is being used in an in-place operation."
INPLACE_VIEW_ERROR = (
    "a view of a leaf Variable that requires grad is being used in an in-place operation."
)
FLOAT_ONLY_ERROR = "Only Tensors of floating point and complex dtype can require gradients"
COMPLEX_GRAD_ERROR = (
    "complex autograd is not supported: agrad differentiates real tensors only (its rules "
    "are not PyTorch's conjugate Wirtinger ones), so {what} cannot require grad. Keep the "
    "real and imaginary parts as two real tensors instead."
)

_new = object.__new__

# In-place writes are stamped from one global counter: a tensor's _version is the stamp
# of its last write, a node records the counter when it is made, so backward detects a
# saved input written since (x._version > node.stamp) and skips the check when nothing
# was written at all.
WRITES = [0]


def bump_version(t: Tensor) -> None:
    """Record an in-place write to ``t`` (and so to every tensor sharing its counter)."""
    WRITES[0] += 1
    box = t._vbox
    if box is None:
        t._vbox = [WRITES[0]]
    else:
        box[0] = WRITES[0]


def wrap(data: np.ndarray, requires_grad: bool = False, grad_fn: Any = None) -> Tensor:
    """The engine's fast constructor: no conversion, no checks."""
    t = _new(Tensor)
    t._array = data
    t._rg = requires_grad
    t.grad_fn = grad_fn
    return t


class Tensor:
    """An n-dimensional array that records the operations applied to it.

    >>> w = agrad.tensor(1.0, requires_grad=True)
    >>> (w * 3).backward(); w.grad
    tensor(3.)
    """

    # Every op creates a Tensor: only data, _rg and grad_fn are set each time; the rest are
    # class-level defaults until first written (they then live in the instance __dict__).
    __slots__ = ("_array", "_rg", "grad_fn", "__dict__", "__weakref__")
    _grad: Tensor | None = None
    _acc: Any = None  # the leaf's AccumulateGrad, made on first request
    _retains = False
    _hooks: list | None = None
    _vbox: list | None = None  # [WRITES stamp of the last in-place write], shared by views
    _base: Tensor | None = None  # a view's root base (see `agrad.engine.views`)
    _chain: tuple = ()  # a view's (op, params) steps from its base
    _views: list | None = None  # a base's weak references to its views
    _output_nr = 0  # which output of its grad_fn (a custom Function may have several)
    __array_priority__ = 1000  # NumPy defers `ndarray * Tensor` to Tensor.__rmul__

    if TYPE_CHECKING:  # for type checkers: the methods `agrad.engine.methods` installs

        def __getattr__(self, name: str) -> Any: ...

    def __init__(self, *args: Any, requires_grad: bool = False) -> None:
        # torch.Tensor(data) or torch.Tensor(*sizes): default float dtype either way.
        if len(args) == 1 and not isinstance(args[0], numbers.Integral):
            data = np.array(to_data(args[0]), dtype=get_default_dtype())
        else:
            data = np.zeros(tuple(int(n) for n in args), dtype=get_default_dtype())
        self._array = data
        self._rg = False
        self.grad_fn = None
        if requires_grad:
            self.requires_grad = True

    # ---- autograd metadata --------------------------------------------------------------

    @property
    def requires_grad(self) -> bool:
        return self._rg

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        if self.grad_fn is not None:  # PyTorch refuses even True here (requires_grad_ not)
            msg = "you can only change requires_grad flags of leaf variables."
            if not flag:
                msg += (
                    " If you want to use a computed variable in a subgraph that doesn't "
                    "require differentiation use var_no_grad = var.detach()."
                )
            raise _autograd_error(msg)
        if flag and self._array.dtype.kind not in "fc":
            raise _autograd_error(FLOAT_ONLY_ERROR)
        if flag and self._array.dtype.kind == "c":
            raise _autograd_error(COMPLEX_GRAD_ERROR.format(what=f"a {self.dtype} tensor"))
        self._rg = bool(flag)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if requires_grad and self.grad_fn is not None:
            return self  # already requires grad: nothing to change (as PyTorch's)
        self.requires_grad = requires_grad
        return self

    @property
    def output_nr(self) -> int:
        """Which output of its grad_fn this tensor is (0 but for a custom Function's)."""
        return self._output_nr

    @property
    def _version(self) -> int:
        """The stamp of the last in-place write to this storage (0: never written)."""
        box = self._vbox
        return 0 if box is None else box[0]

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def grad(self) -> Tensor | None:
        if self.grad_fn is not None and not self._retains:
            warnings.warn(NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: Any) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise not_a_tensor(value)
            value = checked_grad(self, value)
        self._grad = value

    def __deepcopy__(self, memo: dict) -> Tensor:
        """Python's deep copy of every field, except that a Parameter's copy starts without
        ``.grad``, as PyTorch's (``deepcopy(model)`` for a target network or an EMA must
        not carry the original's accumulated gradients into the copy's next backward)."""
        new = Tensor.__new__(type(self))
        memo[id(self)] = new
        new._array = copy.deepcopy(self._array, memo)
        new._rg = self._rg
        new.grad_fn = copy.deepcopy(self.grad_fn, memo)
        new.__dict__.update(copy.deepcopy(self.__dict__, memo))
        if new.__dict__.get("_is_parameter"):
            new.__dict__.pop("_grad", None)
        return new

    @property
    def retains_grad(self) -> bool:
        return self._retains

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in ``.grad`` after backward."""
        if self.grad_fn is None:
            if not self._rg:
                raise _autograd_error("can't retain_grad on Tensor that has requires_grad=False")
            return
        self._retains = True
        self.grad_fn.retain_output(self)

    def register_hook(self, hook: Any) -> Any:
        """Call ``hook(grad)`` when this tensor's gradient is computed; a result replaces it."""
        if not self._rg:
            raise _autograd_error(
                "cannot register a hook on a tensor that doesn't require gradient"
            )
        if self.grad_fn is not None:
            return self.grad_fn.add_output_hook(self, hook)
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(hook)
        return RemovableHandle(self._hooks, hook)

    def detach(self) -> Tensor:
        """A new leaf sharing this data and its version counter, cut from the graph."""
        escape(self)
        t = wrap(self._array)
        box = self._vbox
        if box is None:
            box = self._vbox = [0]
        t._vbox = box
        if self.grad_fn is not None:  # so backward sees writes through t to a saved output
            self.grad_fn.out_box = box
        return t

    @property
    def data(self) -> Tensor:
        """PyTorch's ``.data``: the values as a detached tensor sharing storage.

        Unlike `detach`, it has a version counter of its own: in-place writes through it
        change this tensor but are not seen by autograd's saved-tensor check (as PyTorch).
        """
        escape(self)
        return wrap(self._array)

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type_name(value)}")
        if value._array is self._array:  # `x.data += y` writes back what it changed in place
            return
        if self._views and any(ref() is not None for ref in self._views):
            # Its views write through this storage: replacing it under them would
            # desynchronise them silently.
            raise RuntimeError(
                "agrad cannot replace .data of a tensor that has live views; write into it "
                "in place (x.data.copy_(y)) or make a fresh tensor instead"
            )
        if self._base is not None:  # a view given storage of its own is no longer a view
            views = self._base._views or []
            views[:] = [ref for ref in views if ref() is not self]
            self._base, self._chain = None, ()
            if self._vbox is not None:
                self._vbox = [self._vbox[0]]
        self._array = value._array

    def detach_(self) -> Tensor:
        escape(self)
        self.grad_fn = None
        self._rg = False
        return self

    # ---- array protocol -----------------------------------------------------------------

    @property
    def shape(self) -> tuple[int, ...]:
        return self._array.shape

    @property
    def dtype(self) -> np.dtype:
        return self._array.dtype

    @property
    def ndim(self) -> int:
        return self._array.ndim

    @property
    def device(self) -> str:
        return "cpu"

    def size(self, dim: int | None = None) -> Any:
        return self._array.shape if dim is None else self._array.shape[dim]

    def is_contiguous(self) -> bool:
        """Whether the elements are laid out in order in memory (a view may not be)."""
        return bool(self._array.flags.c_contiguous)

    def dim(self) -> int:
        return self._array.ndim

    def numel(self) -> int:
        return int(self._array.size)

    def item(self) -> Any:
        escape(self)
        if self._array.size != 1:
            raise _autograd_error(
                f"a Tensor with {self._array.size} elements cannot be converted to Scalar"
            )
        return self._array.item()

    def tolist(self) -> Any:
        escape(self)
        return self._array.tolist()

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The array itself (shared memory, as PyTorch's); ``force=True`` is
        ``detach().numpy()``, allowed on a tensor that requires grad."""
        escape(self)
        if self._rg and STATE.enabled and not force:  # (PyTorch allows it under no_grad)
            raise _autograd_error(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        return self._array

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        # np.array(t) asks for a copy (copy=True) and gets one; np.asarray(t) shares memory.
        escape(self)
        if dtype is None:
            return self._array.copy() if copy else self._array
        return self._array.astype(dtype, copy=bool(copy))

    def __len__(self) -> int:
        if self._array.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._array.shape[0]

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._array.dtype.kind not in "iub":
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self) -> bool:
        escape(self)
        if self._array.size != 1:
            what = "no values" if self._array.size == 0 else "more than one value"
            raise RuntimeError(f"Boolean value of Tensor with {what} is ambiguous")
        return bool(self._array)

    __hash__ = object.__hash__

    def __format__(self, spec: str) -> str:
        if self._array.ndim == 0:  # as PyTorch: a 0-d tensor formats as its number
            return format(self._array.item(), spec)
        return repr(self)


def mark_written(t: Tensor) -> None:
    """Record an in-place write to ``t``: its version, and its producer's saved output —
    and the saved outputs of the in-place ops written through views into its storage
    before (PyTorch's relu_ through a view saves the view: a later write spoils it)."""
    bump_version(t)
    if t.grad_fn is not None:
        t.grad_fn.out_written = True
    root = t._base if t._base is not None else t
    aliased = root.__dict__.pop("_aliased", None)  # (see `inplace.write_view`)
    if aliased:
        for node in aliased:
            node.out_written = True


def to_data(value: Any) -> Any:
    """Nested lists of tensors/numbers -> nested lists of numbers (for constructors)."""
    if isinstance(value, Tensor):
        escape(value)
        return value._array
    if isinstance(value, (list, tuple)):
        return [to_data(v) for v in value]
    return value


def _autograd_error(message: str) -> Exception:
    return AgradAutogradError(message)
