"""ParameterList and ParameterDict, PyTorch's: parameters held by position or by name,
registered on the container (state_dict names ``0``, ``1``, ... or the keys), tensors given
to them made Parameters, printed as PyTorch prints them."""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..engine.tensor import Tensor
from .module import Module
from .parameter import Parameter

_TYPENAMES = {  # torch.typename of a CPU tensor, by dtype: ParameterDict prints it
    "torch.float32": "torch.FloatTensor",
    "torch.float64": "torch.DoubleTensor",
    "torch.float16": "torch.HalfTensor",
    "torch.bfloat16": "torch.BFloat16Tensor",
    "torch.int64": "torch.LongTensor",
    "torch.int32": "torch.IntTensor",
    "torch.int16": "torch.ShortTensor",
    "torch.int8": "torch.CharTensor",
    "torch.uint8": "torch.ByteTensor",
    "torch.bool": "torch.BoolTensor",
}


def _as_parameter(value: Any) -> Any:
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _describe(value: Any, dtype_name: str) -> str:
    if not isinstance(value, Tensor):
        return f"Object of type: {type(value).__name__}"
    kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
    size = "x".join(str(n) for n in value.shape)
    return f"{kind} containing: [{dtype_name} of size {size}]"


class _Holder(Module):
    """Stores a value under a key: a Parameter registered, anything else an attribute."""

    def _put(self, key: str, value: Any) -> None:
        value = _as_parameter(value)
        if key in self._parameters and (isinstance(value, Parameter) or value is None):
            self._parameters[key] = value  # in place: the state_dict order is kept
        elif isinstance(value, Parameter) or value is None:
            self.__dict__.pop(key, None)
            self.register_parameter(key, value)
        else:
            self._forget(key)
            object.__setattr__(self, key, value)

    def _get(self, key: str) -> Any:
        return self._parameters[key] if key in self._parameters else self.__dict__[key]

    def _drop(self, key: str) -> None:
        self._forget(key)
        self.__dict__.pop(key, None)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{type(self).__name__} should not be called.")


class ParameterList(_Holder):
    """A list of parameters (or other values), registered as ``0``, ``1``, ..."""

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        object.__setattr__(self, "_size", 0)
        if values is not None:
            self += values

    def _index(self, idx: Any) -> str:
        i = operator.index(idx)
        if not -len(self) <= i < len(self):
            raise IndexError(f"index {i} is out of range")
        return str(i % len(self))

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, slice):
            return ParameterList(self._get(str(i)) for i in range(len(self))[idx])
        return self._get(self._index(idx))

    def __setitem__(self, idx: int, param: Any) -> None:
        self._put(self._index(idx), param)

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return (self._get(str(i)) for i in range(len(self)))

    def __iadd__(self, parameters: Iterable[Any]) -> ParameterList:
        return self.extend(parameters)

    def __dir__(self) -> list[str]:
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, value: Any) -> ParameterList:
        index = len(self)
        object.__setattr__(self, "_size", index + 1)
        self._put(str(index), value)
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError(
                "ParameterList.extend should be called with an iterable, but got "
                + type(values).__name__
            )
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(
            f"  ({i}): " + _describe(p, str(getattr(p, "dtype", ""))) for i, p in enumerate(self)
        )


class ParameterDict(_Holder):
    """A dict of parameters (or other values) by name; a plain dict given to it is taken
    in sorted key order, an OrderedDict or ParameterDict in its own (PyTorch's rule)."""

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        object.__setattr__(self, "_keys", {})
        if parameters is not None:
            self.update(parameters)

    def _key(self, key: Any) -> str:
        if not isinstance(key, str):
            raise TypeError(f"parameter name should be a string. Got {type(key).__name__}")
        return key

    def __getitem__(self, key: str) -> Any:
        if key not in self._keys:  # (PyTorch's error: its lookup is an attribute's)
            raise AttributeError(f"'ParameterDict' object has no attribute '{key}'")
        return self._get(key)

    def __setitem__(self, key: str, value: Any) -> None:
        self._keys[self._key(key)] = None
        self._put(key, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        self._drop(key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._keys))

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def keys(self) -> Any:
        return self._keys.keys()

    def items(self) -> Iterator[tuple[str, Any]]:
        return ((k, self._get(k)) for k in self._keys)

    def values(self) -> Iterator[Any]:
        return (self._get(k) for k in self._keys)

    def get(self, key: str, default: Any = None) -> Any:
        return self._get(key) if key in self._keys else default

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def pop(self, key: str) -> Any:
        value = self[key]
        del self[key]
        return value

    def popitem(self) -> tuple[str, Any]:
        key = next(reversed(list(self._keys)))
        return key, self.pop(key)

    def clear(self) -> None:
        for key in list(self._keys):
            del self[key]

    def copy(self) -> ParameterDict:
        return ParameterDict(OrderedDict(self.items()))

    def update(self, parameters: Any) -> None:
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            pairs = list(parameters.items())
        elif isinstance(parameters, Mapping):
            pairs = sorted(parameters.items())
        elif isinstance(parameters, Iterable):
            pairs = []
            for j, pair in enumerate(parameters):
                if not isinstance(pair, Iterable) or len(pair) != 2:
                    raise ValueError(
                        f"ParameterDict update sequence element #{j} has length "
                        f"{len(pair) if hasattr(pair, '__len__') else '?'}; 2 is required"
                    )
                pairs.append(tuple(pair))
        else:
            raise TypeError(
                "ParametersDict.update should be called with an iterable of key/value pairs, "
                f"but got {type(parameters).__name__}"
            )
        for key, value in pairs:
            self[key] = value

    def __or__(self, other: ParameterDict) -> ParameterDict:
        merged = self.copy()
        merged.update(other)
        return merged

    def __ior__(self, other: ParameterDict) -> ParameterDict:
        self.update(other)
        return self

    def extra_repr(self) -> str:
        return "\n".join(
            f"  ({k}): " + _describe(p, _TYPENAMES.get(str(getattr(p, "dtype", "")), "?"))
            for k, p in self.items()
        )
