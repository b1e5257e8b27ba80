#!/usr/bin/env python3
"""Writes two models that are not plain classifiers, with .npz data.

Usage: make_dense_tasks.py OUTDIR

- segmentation.onnx: a SegNet-style net (two convolutions, max pooling,
  nearest upsampling, a 1x1 classifier) with PyTorch's CrossEntropyLoss
  over every pixel, exported in training mode (inputs image [16, 1, 16, 16],
  mask [16, 16, 16]). The data: images of noise with a bright square
  (class 1) and a dark one (class 2) on background (class 0), whose masks
  mark them; segmentation_{train,eval}.npz hold `image` and `mask`.
- two_head.onnx: a trunk with a classifier head and a count regression
  head in raw units (counts near 200), their losses summed, returning the
  sum, both parts and the prediction (inputs x [32, 8], labels [32],
  count [32, 1]); two_head_{train,eval}.npz hold `x`, `labels` and `count`.

Run with Debian's Python (torch 1.13); the data are seeded.
"""

import os
import sys
import warnings

import numpy as np
import torch
import torch.nn as nn


class Segmenter(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(),
            nn.Upsample(scale_factor=2, mode="nearest"),
            nn.Conv2d(8, 3, 1))
        self.loss = nn.CrossEntropyLoss()

    def forward(self, image, mask):
        return self.loss(self.net(image), mask)


class TwoHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.classes = nn.Linear(16, 3)
        self.count = nn.Linear(16, 1)
        self.ce = nn.CrossEntropyLoss()

    def forward(self, x, labels, count):
        features = self.trunk(x)
        class_loss = self.ce(self.classes(features), labels)
        predicted = self.count(features)
        count_loss = ((predicted - count) ** 2).mean()
        return class_loss + count_loss, class_loss, count_loss, predicted


def squares(rng, n, size=16):
    image = rng.normal(0.0, 0.3, (n, 1, size, size)).astype(np.float32)
    mask = np.zeros((n, size, size), dtype=np.int64)
    for i in range(n):
        for cls, value in ((1, 2.0), (2, -2.0)):
            side = rng.integers(3, 7)
            r, c = rng.integers(0, size - side, 2)
            image[i, 0, r:r + side, c:c + side] += value
            mask[i, r:r + side, c:c + side] = cls
    return image, mask


def counts(rng, n):
    x = rng.standard_normal((n, 8)).astype(np.float32)
    labels = np.argmax(x[:, :3], axis=1).astype(np.int64)
    count = (200 + 20 * x[:, 3:4] - 10 * x[:, 4:5]).astype(np.float32)
    return x, labels, count


def export(model, args, path, inputs, outputs):
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model.train(), args, path, opset_version=17,
                          training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False, input_names=inputs,
                          output_names=outputs)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)
    torch.manual_seed(0)
    image, mask = squares(rng, 16)
    export(Segmenter(), (torch.from_numpy(image), torch.from_numpy(mask)),
           os.path.join(out, "segmentation.onnx"), ["image", "mask"],
           ["loss"])
    for name, n in (("train", 640), ("eval", 160)):
        image, mask = squares(rng, n)
        np.savez(os.path.join(out, "segmentation_%s.npz" % name),
                 image=image, mask=mask)
    torch.manual_seed(0)
    x, labels, count = counts(rng, 32)
    export(TwoHead(), (torch.from_numpy(x), torch.from_numpy(labels),
                       torch.from_numpy(count)),
           os.path.join(out, "two_head.onnx"), ["x", "labels", "count"],
           ["loss", "class_loss", "count_loss", "predicted"])
    for name, n in (("train", 3200), ("eval", 320)):
        x, labels, count = counts(rng, n)
        np.savez(os.path.join(out, "two_head_%s.npz" % name), x=x,
                 labels=labels, count=count)


if __name__ == "__main__":
    main()
