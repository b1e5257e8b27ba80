#!/usr/bin/env python3
"""Exports PyTorch models with their loss, in training mode, at opset 17.

Usage: export_torch_models.py [--eval] OUTDIR [mlp] [cnn] [upsample] [clamped]
                              [grouped] [resnet18]

Each model is wrapped with nn.CrossEntropyLoss so that the export holds one
SoftmaxCrossEntropyLoss whose scalar output is the loss. With --eval, the
bare models are exported in evaluation mode instead (input x, output
logits), as NAME_eval.onnx. The batch dimension is dynamic, as users export
it; the importer pins it.
"""

import os
import sys
import warnings

import torch
import torch.nn as nn


class WithLoss(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model
        self.loss = nn.CrossEntropyLoss()

    def forward(self, x, target):
        return self.loss(self.model(x), target)


def mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(),
                         nn.Linear(128, 10)), (1, 28, 28)


def cnn():
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10)), (1, 28, 28)


def upsample():
    """Nearest and bilinear resizing (both corner conventions, up and
    down) and reflection, replication and zero padding, as segmentation
    decoders use them, before a classifier head."""
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Upsample(scale_factor=2, mode="nearest"),
        nn.ReflectionPad2d(1), nn.Conv2d(4, 8, 3), nn.ReLU(),
        nn.Upsample(scale_factor=0.5, mode="bilinear", align_corners=False),
        nn.ReplicationPad2d((1, 0, 1, 0)), nn.ZeroPad2d((0, 1, 0, 1)),
        nn.Upsample(size=(21, 21), mode="bilinear", align_corners=True),
        nn.Conv2d(8, 8, 3, stride=2), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10)), (1, 28, 28)


class Clamped(nn.Module):
    """Strided convolutions (whose weight gradients are dilated and whose
    input gradients are strided transposed convolutions) and the clamps
    users write: ReLU6 (MobileNet), Hardtanh and a one-sided torch.clamp,
    exported as Clip."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.conv3 = nn.Conv2d(16, 16, 1, stride=2)
        self.fc = nn.Linear(16 * 4 * 4, 10)

    def forward(self, x):
        x = nn.functional.relu6(self.conv1(x) * 8)
        x = nn.functional.hardtanh(self.conv2(x), -0.5, 0.5)
        x = torch.clamp(self.conv3(x), min=-0.25)
        return self.fc(x.flatten(1))


def clamped():
    return Clamped(), (1, 28, 28)


def grouped():
    """Grouped convolutions as ResNeXt and MobileNet have them: groups of 8
    channels and filters; depthwise (a channel a group), strided; dilated
    groups of 4 channels and 8 filters; strided groups; a depth multiplier
    of 2 (a channel and two filters a group)."""
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(),
        nn.Conv2d(32, 32, 3, padding=1, groups=4), nn.ReLU(),
        nn.Conv2d(32, 32, 3, stride=2, padding=1, groups=32), nn.ReLU(),
        nn.Conv2d(32, 64, 3, padding=2, dilation=2, groups=8), nn.ReLU(),
        nn.Conv2d(64, 128, 3, stride=2, padding=1, groups=16), nn.ReLU(),
        nn.Conv2d(128, 256, 3, padding=1, groups=128), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(256, 10)), (1, 28, 28)


def resnet18():
    import torchvision
    return torchvision.models.resnet18(num_classes=10), (3, 224, 224)


def export(name, builder, out):
    torch.manual_seed(0)
    model, shape = builder()
    wrapped = WithLoss(model).train()
    x = torch.randn(2, *shape)
    target = torch.randint(0, 10, (2,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            wrapped, (x, target), os.path.join(out, name + ".onnx"),
            opset_version=17, training=torch.onnx.TrainingMode.TRAINING,
            do_constant_folding=False, input_names=["x", "target"],
            output_names=["loss"],
            dynamic_axes={"x": {0: "batch"}, "target": {0: "batch"}})


def export_eval(name, builder, out):
    torch.manual_seed(0)
    model, shape = builder()
    model.eval()
    x = torch.randn(2, *shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model, (x,), os.path.join(out, name + "_eval.onnx"),
            opset_version=17, do_constant_folding=False, input_names=["x"],
            output_names=["logits"], dynamic_axes={"x": {0: "batch"}})


def main():
    args = sys.argv[1:]
    evaluation = "--eval" in args
    if evaluation:
        args.remove("--eval")
    out = args[0]
    os.makedirs(out, exist_ok=True)
    builders = {"mlp": mlp, "cnn": cnn, "upsample": upsample,
                "clamped": clamped, "grouped": grouped, "resnet18": resnet18}
    for name in args[1:] or builders:
        (export_eval if evaluation else export)(name, builders[name], out)


if __name__ == "__main__":
    main()
