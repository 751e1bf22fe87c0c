"""`Module`: PyTorch's nn.Module — parameters, buffers and submodules registered by
attribute assignment, found in registration order, saved and loaded by dotted name.

Walks of the module tree are iterative (an explicit stack), as everything in agrad.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from ..engine.dtypes import DTYPES, as_dtype, to_dtype
from ..engine.tensor import Tensor
from . import state
from .parameter import Parameter, retype
from .state import RemovableHandle


def _indent(text: str, spaces: int) -> str:
    first, *rest = text.split("\n")
    return "\n".join([first] + [" " * spaces + line for line in rest])


class Module:
    """Base class of every layer and model (PyTorch's ``nn.Module``).

    >>> class Net(agrad.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = agrad.nn.Linear(2, 1)
    ...     def forward(self, x):
    ...         return self.fc(x)
    >>> [name for name, _ in Net().named_parameters()]
    ['fc.weight', 'fc.bias']
    """

    training: bool

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments")
        for name, value in (
            ("training", True),
            ("_parameters", {}),
            ("_buffers", {}),
            ("_non_persistent", set()),
            ("_modules", {}),
            ("_forward_hooks", {}),
            ("_forward_pre_hooks", {}),
        ):
            object.__setattr__(self, name, value)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        for hook in list(self._forward_pre_hooks.values()):
            changed = hook(self, args)
            if changed is not None:
                args = changed if isinstance(changed, tuple) else (changed,)
        out = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            changed = hook(self, args, out)
            if changed is not None:
                out = changed
        return out

    def register_forward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call ``hook(module, args, output)`` after each forward; a result replaces output."""
        handle = RemovableHandle(self._forward_hooks)
        self._forward_hooks[handle.id] = hook
        return handle

    def register_forward_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call ``hook(module, args)`` before each forward; a result replaces the args."""
        handle = RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[handle.id] = hook
        return handle

    # ---- registration --------------------------------------------------------------------

    def _check_name(self, name: Any, what: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{what} name should be a string. Got {type(name).__name__}")
        if not name or "." in name:
            raise KeyError(f'{what} name can\'t be empty string "" or contain "."')
        if name in self.__dict__ or (hasattr(type(self), name) and name not in self._stores()):
            raise KeyError(f"attribute '{name}' already exists")

    def _stores(self) -> dict:
        return {**self._parameters, **self._buffers, **self._modules}

    def _forget(self, name: str) -> None:
        for store in (self._parameters, self._buffers, self._modules):
            store.pop(name, None)
        self._non_persistent.discard(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                "(agrad.nn.Parameter or None required)"
            )
        if name not in self._parameters:
            self._check_name(name, "parameter")
        self._forget(name)
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                "(agrad.Tensor or None required)"
            )
        if name not in self._buffers:
            self._check_name(name, "buffer")
        self._forget(name)
        self._buffers[name] = tensor
        if not persistent:
            self._non_persistent.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        if name not in self._modules:
            self._check_name(name, "module")
        self._forget(name)
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        if isinstance(value, Parameter):
            self.__dict__.pop(name, None)
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if "_modules" not in d:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self.__dict__.pop(name, None)
            self._forget(name)
            self._modules[name] = value
        elif "_parameters" in d and name in self._parameters:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                    "(agrad.nn.Parameter or None expected)"
                )
            self._parameters[name] = None
        elif "_modules" in d and name in self._modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as child module "
                    f"'{name}' (agrad.nn.Module or None expected)"
                )
            self._modules[name] = None
        elif "_buffers" in d and name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                    "(agrad.Tensor or None expected)"
                )
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        if name in self._stores():
            self._forget(name)
        else:
            object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._stores()))

    # ---- the tree ------------------------------------------------------------------------

    def named_modules(
        self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        """Every module of the tree, this one first (pre-order), each once."""
        seen = memo if memo is not None else set()
        stack: list[tuple[str, Module]] = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if remove_duplicate:
                if id(module) in seen:
                    continue
                seen.add(id(module))
            yield name, module
            children = [(f"{name}.{k}" if name else k, m) for k, m in module._modules.items()]
            stack.extend(reversed([(k, m) for k, m in children if m is not None]))

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def _named(self, store: str, prefix: str, recurse: bool, remove_duplicate: bool = True):
        seen: set[int] = set()
        tree = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for path, module in tree:
            for name, value in getattr(module, store).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield (f"{path}.{name}" if path else name), value

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        yield from self._named("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        yield from self._named("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def get_submodule(self, target: str) -> Module:
        module: Module = self
        for part in target.split(".") if target else []:
            child = module._modules.get(part)
            if child is None:
                raise AttributeError(f"{type(module).__name__} has no attribute `{part}`")
            module = child
        return module

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """``fn`` on every submodule, children before parents (as PyTorch's apply)."""
        order, stack = [], [self]
        while stack:  # parents before children, right to left: reversed, a post-order walk
            module = stack.pop()
            order.append(module)
            stack.extend(module.children())
        for module in reversed(order):
            fn(module)
        return self

    # ---- modes and gradients -------------------------------------------------------------

    def train(self, mode: bool = True) -> Module:
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for module in self.modules():
            object.__setattr__(module, "training", mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                if p.grad.requires_grad:  # a graph built with create_graph: let it go
                    p.grad = p.grad.detach()
                p.grad.zero_()

    # ---- dtype ---------------------------------------------------------------------------

    def _apply(self, dtype: np.dtype) -> Module:
        """Every floating-point parameter and buffer converted to ``dtype``, as PyTorch's
        ``module.double()`` does: a parameter stays the same object (its values, and its
        ``.grad``'s, are replaced by converted copies, as ``p.data = p.double()``), so an
        optimizer, a hook or a list of parameters made before the call still holds the
        model's parameters; a buffer is replaced by a converted tensor (a new object, as
        in PyTorch). Tensors already of ``dtype``, and integer ones, are left alone."""
        if dtype.kind not in "fc":
            raise TypeError(
                "nn.Module.to only accepts floating point or complex dtypes, but got desired "
                f"dtype={as_dtype(dtype)}"
            )
        for module in self.modules():
            for p in module._parameters.values():
                if p is not None and p.dtype != dtype and p.dtype.kind == "f":
                    retype(p, dtype)
                    if p.grad is not None:
                        retype(p.grad, dtype)
            for name, b in module._buffers.items():
                if b is not None and b.dtype != dtype and b.dtype.kind == "f":
                    module._buffers[name] = b.to(dtype)
        return self

    def to(self, *args: Any, dtype: Any = None, **kwargs: Any) -> Module:
        """``to(dtype)``, ``to(tensor)``; devices (``'cpu'``) are accepted and change nothing."""
        for a in args:
            if isinstance(a, Tensor):
                dtype = a.dtype
            elif not isinstance(a, str) or a in DTYPES:
                dtype = a
        return self if dtype is None else self._apply(to_dtype(DTYPES.get(dtype, dtype)))

    def double(self) -> Module:
        return self._apply(np.dtype(np.float64))

    def float(self) -> Module:
        return self._apply(np.dtype(np.float32))

    def half(self) -> Module:
        return self._apply(np.dtype(np.float16))

    def cpu(self) -> Module:
        return self

    def type(self, dst_type: Any) -> Module:
        return self.to(dst_type)

    # ---- state ---------------------------------------------------------------------------

    def state_dict(
        self, destination: Any = None, prefix: str = "", keep_vars: bool = False
    ) -> OrderedDict:
        """Parameters and persistent buffers by dotted name (detached, sharing values)."""
        return state.state_dict(self, destination, prefix, keep_vars)

    def load_state_dict(
        self,
        state_dict: Mapping[str, Any] | str | os.PathLike,
        strict: bool = True,
        assign: bool = False,
    ) -> state.IncompatibleKeys:
        """Copy values into the parameters and buffers, by name. ``state_dict`` may be a
        mapping or the path of a ``.npz`` file (no pickle is ever loaded). A shape that
        does not match is an error; with ``strict``, so is a missing or unexpected key."""
        return state.load_state_dict(self, state_dict, strict)

    # ---- printing ------------------------------------------------------------------------

    def extra_repr(self) -> str:
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        extra = self.extra_repr()
        lines = extra.split("\n") if extra else []
        children = [f"({k}): " + _indent(repr(m), 2) for k, m in self._modules.items()]
        body = lines + children
        if not body:
            return self._get_name() + "()"
        if len(lines) == 1 and not children:
            return f"{self._get_name()}({lines[0]})"
        return self._get_name() + "(\n  " + "\n  ".join(body) + "\n)"


__all__ = ["Module"]
