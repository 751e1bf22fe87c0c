"""agrad.vision: torchvision's models, for ``from agrad import vision as torchvision``."""

from . import models

__all__ = ["models"]
