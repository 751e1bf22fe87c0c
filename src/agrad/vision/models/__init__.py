"""agrad.vision.models: torchvision's ResNet-18 and ResNet-34 (random initialisation)."""

from .resnet import BasicBlock, ResNet, resnet18, resnet34

__all__ = ["BasicBlock", "ResNet", "resnet18", "resnet34"]
