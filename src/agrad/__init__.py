"""agrad: autograd with PyTorch's semantics on NumPy, and a command-line gradient checker.

``import agrad as torch`` runs PyTorch autograd tutorials unchanged::

    w = agrad.tensor(1.0, requires_grad=True)
    loss = ((w * agrad.tensor([1., 2.]) - agrad.tensor([5., 7.])) ** 2).sum()
    loss.backward()            # w.grad == tensor(-28.)

The names load on first use (`agrad._api`): ``import agrad`` itself imports nothing, so
the command line imports only what its command needs (``agrad --version`` no NumPy).
"""

import importlib

__version__ = "0.1.0"


def _load() -> None:
    """Copy the public namespace (`agrad._api`) into the package, once."""
    api = importlib.import_module("agrad._api")
    namespace = vars(api)
    globals().update(
        {k: v for k, v in namespace.items() if not (k.startswith("__") and k.endswith("__"))}
    )
    globals()["__all__"] = namespace["__all__"]


def __getattr__(name: str) -> object:
    # A submodule (agrad.cli, agrad.nn, `from agrad import errors`) imports on its own;
    # any other name loads the whole namespace.
    if name.startswith("__") and name.endswith("__") and name != "__all__":
        raise AttributeError(f"module 'agrad' has no attribute {name!r}")
    if name.isidentifier():
        try:
            return importlib.import_module(f"agrad.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"agrad.{name}":  # the submodule exists but needs a missing one
                raise
    if "__all__" not in globals():
        _load()
        if name in globals():
            return globals()[name]
    raise AttributeError(f"module 'agrad' has no attribute {name!r}")


def __dir__() -> list[str]:
    if "__all__" not in globals():
        _load()
    return sorted(globals())
