"""A ResNet-18/34 written with torch.nn, the oracle for agrad.vision.models (torchvision is
not installed with the tests: its wheels pin other PyTorch builds). The architecture is
the one of He et al. (2015) as torchvision lays it out; parameter names and the count
11,689,512 are checked against agrad's, and weights are copied across by name."""

from __future__ import annotations

import numpy as np


def torch_resnet(torch, layers=(2, 2, 2, 2), num_classes=1000):
    nn = torch.nn

    class BasicBlock(nn.Module):
        def __init__(self, inplanes, planes, stride=1):
            super().__init__()
            self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.downsample = None
            if stride != 1 or inplanes != planes:
                self.downsample = nn.Sequential(
                    nn.Conv2d(inplanes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes)
                )

        def forward(self, x):
            identity = x if self.downsample is None else self.downsample(x)
            out = self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))
            return self.relu(out + identity)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            inplanes = 64
            for i, (planes, n) in enumerate(zip((64, 128, 256, 512), layers, strict=True)):
                blocks = []
                for j in range(n):
                    blocks.append(BasicBlock(inplanes, planes, 2 if (i and not j) else 1))
                    inplanes = planes
                setattr(self, f"layer{i + 1}", nn.Sequential(*blocks))
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(512, num_classes)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(torch.flatten(self.avgpool(x), 1))

    return Net()


def copy_state(torch, source, target):
    """Copy an agrad module's state into a torch module (same names), in place."""
    state = {k: torch.tensor(np.asarray(v)) for k, v in source.state_dict().items()}
    target.load_state_dict(state)
    return target
