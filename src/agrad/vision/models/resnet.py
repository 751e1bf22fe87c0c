"""ResNet-18 and ResNet-34 with torchvision's architecture, parameter names and
initialisation (He et al., "Deep Residual Learning for Image Recognition", 2015).

Pretrained weights cannot be downloaded here (and agrad loads no pickles): build the model
with random weights and load converted ones from a ``.npz`` file, written on a machine
with torchvision by ``np.savez(path, **{k: v.numpy() for k, v in m.state_dict().items()})``::

    model = resnet18()
    model.load_state_dict("resnet18.npz")
"""

from __future__ import annotations

from typing import Any

from ... import nn
from ...engine.tensor import Tensor
from ...errors import AgradValueError


def _conv3x3(in_planes: int, out_planes: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False)


def _conv1x1(in_planes: int, out_planes: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    """Two 3x3 convolutions with batch norm, added to the (downsampled) input."""

    expansion = 1

    def __init__(
        self, inplanes: int, planes: int, stride: int = 1, downsample: nn.Module | None = None
    ) -> None:
        super().__init__()
        self.conv1 = _conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = _conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x: Tensor) -> Tensor:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out = out + identity
        return self.relu(out)


class ResNet(nn.Module):
    def __init__(
        self,
        block: type = BasicBlock,
        layers: tuple = (2, 2, 2, 2),
        num_classes: int = 1000,
        zero_init_residual: bool = False,
    ) -> None:
        super().__init__()
        self.inplanes = 64
        self.conv1 = nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], stride=2)
        self.layer3 = self._make_layer(block, 256, layers[2], stride=2)
        self.layer4 = self._make_layer(block, 512, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)
        for m in self.modules():  # torchvision's initialisation
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
        if zero_init_residual:
            for m in self.modules():
                if isinstance(m, BasicBlock):
                    nn.init.constant_(m.bn2.weight, 0)

    def _make_layer(self, block: type, planes: int, blocks: int, stride: int = 1):
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                _conv1x1(self.inplanes, planes * block.expansion, stride),
                nn.BatchNorm2d(planes * block.expansion),
            )
        layers = [block(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * block.expansion
        layers += [block(self.inplanes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x: Tensor) -> Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(self.avgpool(x).flatten(1))


def _no_download(name: str, weights: Any, pretrained: Any) -> None:
    if pretrained or weights not in (None, False):
        raise AgradValueError(
            f"{name}: pretrained weights cannot be downloaded here (agrad has no network "
            f"access and never loads a pickle); build {name}() with random weights, then "
            f"model.load_state_dict('weights.npz') with weights converted on a machine with "
            "torchvision: np.savez('weights.npz', **{k: v.numpy() for k, v in "
            "model.state_dict().items()})"
        )


def resnet18(
    *, weights: Any = None, progress: bool = True, pretrained: Any = None, **kwargs: Any
) -> ResNet:
    """ResNet-18 (11,689,512 parameters for 1000 classes) with random weights."""
    _no_download("resnet18", weights, pretrained)
    return ResNet(BasicBlock, (2, 2, 2, 2), **kwargs)


def resnet34(
    *, weights: Any = None, progress: bool = True, pretrained: Any = None, **kwargs: Any
) -> ResNet:
    """ResNet-34 (21,797,672 parameters for 1000 classes) with random weights."""
    _no_download("resnet34", weights, pretrained)
    return ResNet(BasicBlock, (3, 4, 6, 3), **kwargs)
