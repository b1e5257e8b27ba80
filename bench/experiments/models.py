#!/usr/bin/env python3
"""The experiments' models and data (bench/experiments/README.md).

Usage: models.py OUTDIR [--quick]

Writes, for each model, NAME.onnx (a PyTorch module and its loss exported
in training mode, opset 17, batch dimension dynamic) and NAME_train.npz /
NAME_eval.npz (the inputs of its train step by name, from Debian's
Fashion-MNIST), and models.json (per model: its compiled batch, input
shapes, optimizer, metric and step count). --quick takes fewer examples.

  mlp        784-256-256-10 ReLU MLP, Fashion-MNIST classes
  deep_tanh  784-64x7-10 tanh MLP with small weights and wide biases
             (N(0, 0.08), N(0, 1)): each layer's backward gain is below 1,
             so its first layer's gradients lie about 200x below its
             head's, yet it trains in FP32
  detector   SSD-like: one Fashion-MNIST item on a 64x64 canvas; a strided
             conv trunk shared by a classifier head (cross-entropy) and a
             box head regressing the item's corners in raw pixels with a
             squared error summed over the batch, as SSD implementations
             sum their localization loss over matched boxes: gradients in
             the thousands beside the classifier's small ones. Adam (SGD
             at a rate the box head survives leaves the classifier at
             chance)
  segnet     SegNet-like encoder-decoder (BatchNorm, max pooling, nearest
             upsampling) on 64x64 canvases of two items, pixel-wise softmax
             over 11 classes (background and the 10 items)
  resnet     a small ResNet (three BatchNorm basic blocks, 16-32-64
             channels) on the 28x28 images

Run with Debian's Python (torch 1.13); everything is seeded.
"""

import gzip
import json
import os
import pathlib
import sys
import warnings

import numpy as np
import torch
import torch.nn as nn

# The classifiers' loss wrapper the tests export with (WithLoss).
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "test" /
                       "ImportONNX" / "Inputs"))
from export_torch_models import WithLoss  # noqa: E402

FASHION = "/usr/share/datasets/fashion-mnist"
CANVAS = 64


def read_idx(name):
    path = os.path.join(FASHION, name)
    try:
        with gzip.open(path) as f:
            data = f.read()
    except OSError as e:
        sys.exit(f"models.py: cannot read '{path}': {e} (Debian's "
                 "dataset-fashion-mnist package)")
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big")
             for i in range(dims)]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * dims).reshape(shape)


def fashion(split):
    prefix = "train" if split == "train" else "t10k"
    return (read_idx(f"{prefix}-images-idx3-ubyte.gz"),
            read_idx(f"{prefix}-labels-idx1-ubyte.gz").astype(np.int64))


def mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(),
                         nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))


def deep_tanh(depth=7, width=64):
    layers = [nn.Flatten(), nn.Linear(784, width), nn.Tanh()]
    for _ in range(depth - 1):
        layers += [nn.Linear(width, width), nn.Tanh()]
    layers.append(nn.Linear(width, 10))
    model = nn.Sequential(*layers)
    with torch.no_grad():
        for layer in model:
            if isinstance(layer, nn.Linear) and layer.out_features == width:
                layer.weight.normal_(0.0, 0.08)
                layer.bias.normal_(0.0, 1.0)
    return model


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(
            nn.Conv2d(1, 16, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU())
        self.classes = nn.Sequential(
            nn.Conv2d(32, 32, 3, stride=2, padding=1), nn.ReLU(),
            nn.AdaptiveMaxPool2d(1), nn.Flatten(), nn.Linear(32, 10))
        self.box = nn.Sequential(
            nn.Conv2d(32, 32, 3, stride=2, padding=1), nn.ReLU(),
            nn.Flatten(), nn.Linear(32 * 8 * 8, 4))
        self.ce = nn.CrossEntropyLoss()

    def forward(self, image, label, box):
        features = self.trunk(image)
        class_loss = self.ce(self.classes(features), label)
        box_loss = ((self.box(features) - box) ** 2).sum()
        return class_loss + box_loss, class_loss, box_loss


def conv_bn(cin, cout):
    return [nn.Conv2d(cin, cout, 3, padding=1, bias=False),
            nn.BatchNorm2d(cout), nn.ReLU()]


def segnet():
    return nn.Sequential(
        *conv_bn(1, 16), nn.MaxPool2d(2),
        *conv_bn(16, 32), nn.MaxPool2d(2),
        *conv_bn(32, 32),
        nn.Upsample(scale_factor=2, mode="nearest"), *conv_bn(32, 16),
        nn.Upsample(scale_factor=2, mode="nearest"), *conv_bn(16, 16),
        nn.Conv2d(16, 11, 1))


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False),
                nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(y)) + self.shortcut(x))


def resnet():
    return nn.Sequential(
        *conv_bn(1, 16), Block(16, 16, 1), Block(16, 32, 2),
        Block(32, 64, 2), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        nn.Linear(64, 10))


def export(module, inputs, names, outputs, path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module.train(), inputs, path, opset_version=17,
            training=torch.onnx.TrainingMode.TRAINING,
            do_constant_folding=False, input_names=names,
            output_names=outputs,
            dynamic_axes={n: {0: "batch"} for n in names})


def place(images, labels, rng, items):
    """Canvases of `items` Fashion-MNIST items each at random positions
    (the brighter pixel wins): the 8-bit canvases, per-pixel classes (0
    background, 1 + the item's class where its pixel is above 64) and the
    first item's class and box (x0, y0, x1, y1 in pixels, of its nonzero
    pixels)."""
    n = len(images) // items
    canvas = np.zeros((n, 1, CANVAS, CANVAS), np.uint8)
    mask = np.zeros((n, CANVAS, CANVAS), np.uint8)
    box = np.zeros((n, 4), np.float32)
    first = np.zeros(n, np.int64)
    for i in range(n):
        for j in range(items):
            image = images[i * items + j]
            label = labels[i * items + j]
            y, x = rng.integers(0, CANVAS - 28 + 1, 2)
            region = canvas[i, 0, y:y + 28, x:x + 28]
            np.maximum(region, image, out=region)
            mask[i, y:y + 28, x:x + 28][image > 64] = 1 + label
            if j == 0:
                first[i] = label
                rows = np.nonzero(image.max(1) > 0)[0]
                cols = np.nonzero(image.max(0) > 0)[0]
                box[i] = (x + cols[0], y + rows[0], x + cols[-1] + 1,
                          y + rows[-1] + 1)
    return canvas, mask, first, box


def main():
    args = sys.argv[1:]
    quick = "--quick" in args
    args = [a for a in args if a != "--quick"]
    if len(args) != 1:
        sys.exit(__doc__)
    out = args[0]
    os.makedirs(out, exist_ok=True)
    train_x, train_t = fashion("train")
    eval_x, eval_t = fashion("eval")
    n_train = 8192 if quick else 60000
    n_eval = 1024 if quick else 10000
    images = {"train": (train_x[:n_train], train_t[:n_train]),
              "eval": (eval_x[:n_eval], eval_t[:n_eval])}
    table = {}

    # step_cost: about the milliseconds of one gs step on one core here,
    # which run.py orders the jobs by.
    def classifier(name, builder, batch, steps, lr, step_cost):
        torch.manual_seed(0)
        export(WithLoss(builder()), (torch.randn(2, 1, 28, 28),
                                     torch.randint(0, 10, (2,))),
               ["x", "target"], ["loss"], os.path.join(out, name + ".onnx"))
        for split, (x, t) in images.items():
            np.savez(os.path.join(out, f"{name}_{split}.npz"),
                     x=x.reshape(-1, 1, 28, 28), target=t)
        table[name] = {"batch": batch, "steps": steps, "metric": "accuracy",
                       "step_cost": step_cost,
                       "shapes": {"x": [1, 28, 28], "target": []},
                       "optimizer": f"optimizer=momentum lr={lr}"}

    quick_steps = 60
    # The MLPs are cheap, and the deep tanh MLP's loss starts falling only
    # after 100 steps or so.
    classifier("mlp", mlp, 64, 300 if quick else 1500, 0.05, 2)
    classifier("deep_tanh", deep_tanh, 64, 300 if quick else 1500, 0.05, 1)
    classifier("resnet", resnet, 64, quick_steps if quick else 200, 0.05,
               200)

    rng = np.random.default_rng(0)
    # One epoch of canvases at most: the larger images take memory.
    canvases = {split: place(x[:limit], t[:limit], rng, 1)
                for (split, (x, t)), limit in zip(images.items(),
                                                  (24000, 2000))}
    torch.manual_seed(0)
    export(Detector(), (torch.randn(2, 1, CANVAS, CANVAS),
                        torch.randint(0, 10, (2,)), torch.rand(2, 4) * 64),
           ["image", "label", "box"], ["loss", "class_loss", "box_loss"],
           os.path.join(out, "detector.onnx"))
    for split, (canvas, _, first, box) in canvases.items():
        np.savez(os.path.join(out, f"detector_{split}.npz"), image=canvas,
                 label=first, box=box)
    table["detector"] = {
        "batch": 32, "steps": quick_steps if quick else 600, "step_cost": 25,
        "metric": "accuracy",
        "shapes": {"image": [1, CANVAS, CANVAS], "label": [], "box": [4]},
        "optimizer": "optimizer=adam lr=0.001"}

    rng = np.random.default_rng(1)
    pairs = {split: place(x[:limit], t[:limit], rng, 2)
             for (split, (x, t)), limit in zip(images.items(), (24000, 4000))}
    torch.manual_seed(0)
    export(WithLoss(segnet()), (torch.randn(2, 1, CANVAS, CANVAS),
                                torch.randint(0, 11, (2, CANVAS, CANVAS))),
           ["image", "mask"], ["loss"], os.path.join(out, "segnet.onnx"))
    for split, (canvas, mask, _, _) in pairs.items():
        np.savez(os.path.join(out, f"segnet_{split}.npz"), image=canvas,
                 mask=mask)
    table["segnet"] = {
        "batch": 16, "steps": quick_steps if quick else 240,
        "step_cost": 160,
        "metric": "miou",
        "shapes": {"image": [1, CANVAS, CANVAS], "mask": [CANVAS, CANVAS]},
        "optimizer": "optimizer=momentum lr=0.05"}

    with open(os.path.join(out, "models.json"), "w") as f:
        json.dump(table, f, indent=1)


if __name__ == "__main__":
    main()
