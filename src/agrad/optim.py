"""agrad.optim: torch.optim's SGD, Adam, AdamW, RMSprop, Adagrad and lr_scheduler."""

from .engine import lr_scheduler
from .engine.optim import SGD, Adam, AdamW, Optimizer
from .engine.optim_more import Adagrad, RMSprop

__all__ = ["SGD", "Adam", "AdamW", "Adagrad", "Optimizer", "RMSprop", "lr_scheduler"]
