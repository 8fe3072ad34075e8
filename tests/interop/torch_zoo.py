# SPDX-License-Identifier: MIT
"""tests/interop/torch_zoo.py — ember's built-in models written in PyTorch, as a PyTorch user would.

Each class has the module attributes that give the state_dict the names
ember's model file gives its parameters (models/*.model), so a checkpoint
moves between the two with load_state_dict(strict=True). Used by
tests/interop/test_models_vs_torch.py (which proves it) and bench/torch_zoo_train.py
(the peer for docs/benchmarks.md). For 1x28x28 input.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SimpleCNN(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.fc = nn.Linear(16 * 14 * 14, classes)

    def forward(self, x):
        return self.fc(torch.flatten(F.max_pool2d(F.relu(self.conv1(x)), 2), 1))


class KerasCNN(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3)
        self.fc = nn.Linear(32 * 26 * 26, classes)

    def forward(self, x):
        return self.fc(torch.flatten(F.relu(self.conv1(x)), 1))


class FlatLinear(nn.Linear):
    def __init__(self, classes=10):
        super().__init__(28 * 28, classes)

    def forward(self, x):
        return super().forward(torch.flatten(x, 1))


class MLP(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(784, 256), nn.Linear(256, 128), nn.Linear(128, classes)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))))


class Tabular(nn.Module):
    def __init__(self, classes=10, features=784):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(features, 64), nn.Linear(64, 64), nn.Linear(64, classes)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))))


class LeNet5(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1, self.fc2, self.fc3 = nn.Linear(16 * 5 * 5, 120), nn.Linear(120, 84), nn.Linear(84, classes)

    def forward(self, x):
        x = F.avg_pool2d(torch.tanh(self.conv1(x)), 2)
        x = F.avg_pool2d(torch.tanh(self.conv2(x)), 2)
        x = torch.tanh(self.fc1(torch.flatten(x, 1)))
        return self.fc3(torch.tanh(self.fc2(x)))


class VGG8(nn.Module):
    """torchvision's VGG layout (make_layers with batch_norm=True) at 16, 32, 64 channels."""

    def __init__(self, classes=10):
        super().__init__()
        layers, c = [], 1
        for width in (16, 32, 64):
            for _ in range(2):
                layers += [nn.Conv2d(c, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU()]
                c = width
            layers.append(nn.MaxPool2d(2))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(0.5), nn.Linear(64 * 3 * 3, 256), nn.ReLU(), nn.Dropout(0.5),
                                        nn.Linear(256, classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


class BasicBlock(nn.Module):
    """torchvision's ResNet basic block."""

    def __init__(self, inplanes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride=stride, bias=False),
                                            nn.BatchNorm2d(planes))

    def forward(self, x):
        out = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        identity = self.downsample(x) if self.downsample is not None else x
        return F.relu(out + identity)


class ResNet8(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.layer1 = nn.Sequential(BasicBlock(16, 16))
        self.layer2 = nn.Sequential(BasicBlock(16, 32, 2))
        self.layer3 = nn.Sequential(BasicBlock(32, 64, 2))
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.layer3(self.layer2(self.layer1(x)))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


ZOO = {"simplecnn": SimpleCNN, "kerascnn": KerasCNN, "linear": FlatLinear, "mlp": MLP, "lenet5": LeNet5,
       "vgg8": VGG8, "resnet8": ResNet8, "tabular": Tabular}
HAS_DROPOUT = {"vgg8"}
