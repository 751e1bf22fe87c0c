"""agrad.optim: torch.optim's SGD and Adam."""

from .engine.optim import SGD, Adam, Optimizer

__all__ = ["SGD", "Adam", "Optimizer"]
