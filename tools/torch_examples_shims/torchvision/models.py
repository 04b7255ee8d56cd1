"""``resnet18`` and ``vgg16`` with random weights (``weights=`` is accepted and ignored)."""

from __future__ import annotations

from typing import Any

import torch.nn as nn


class _Weights:
    """Stand-in for a torchvision weights enum; only its attribute names matter."""

    IMAGENET1K_V1 = "IMAGENET1K_V1"
    DEFAULT = "IMAGENET1K_V1"


VGG16_Weights = _Weights
ResNet18_Weights = _Weights


class _Block(nn.Module):
    """Two 3x3 convolutions with a skip connection (ResNet's basic block)."""

    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)
            )

    def forward(self, x: Any) -> Any:
        skip = x if self.downsample is None else self.downsample(x)
        y = self.relu(self.bn1(self.conv1(x)))
        return self.relu(self.bn2(self.conv2(y)) + skip)


class ResNet(nn.Module):
    """ResNet-18's layout: stem, four stages of two basic blocks, pooling, classifier."""

    def __init__(self, num_classes: int = 1000) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        widths = [(64, 64, 1), (64, 128, 2), (128, 256, 2), (256, 512, 2)]
        for k, (cin, cout, stride) in enumerate(widths, 1):
            setattr(
                self, f"layer{k}", nn.Sequential(_Block(cin, cout, stride), _Block(cout, cout, 1))
            )
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512, num_classes)

    def forward(self, x: Any) -> Any:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(self.avgpool(x).flatten(1))


def resnet18(weights: Any = None, num_classes: int = 1000, **_: Any) -> ResNet:
    """A randomly initialised ResNet-18."""
    return ResNet(num_classes)


class VGG(nn.Module):
    """VGG-16's convolutional ``features`` (torchvision's layer indices) and a small head."""

    def __init__(self) -> None:
        super().__init__()
        cfg = [
            64,
            64,
            "M",
            128,
            128,
            "M",
            256,
            256,
            256,
            "M",
            512,
            512,
            512,
            "M",
            512,
            512,
            512,
            "M",
        ]
        layers: list[nn.Module] = []
        cin = 3
        for v in cfg:
            if v == "M":
                layers.append(nn.MaxPool2d(2, 2))
            else:
                layers += [nn.Conv2d(cin, int(v), 3, padding=1), nn.ReLU(inplace=True)]
                cin = int(v)
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))  # a small head: only features are used
        self.classifier = nn.Linear(512, 1000)

    def forward(self, x: Any) -> Any:
        return self.classifier(self.avgpool(self.features(x)).flatten(1))


def vgg16(weights: Any = None, **_: Any) -> VGG:
    """A randomly initialised VGG-16."""
    return VGG()
