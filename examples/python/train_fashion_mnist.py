"""Train a PyTorch model with GradScale's gradient scaling, then use it in
PyTorch again.

    python3 examples/python/train_fashion_mnist.py --steps 500

1. A torch MLP and its cross-entropy are exported with torch.onnx.export.
2. gradscale compiles the export into a mixed-precision train step (FP16
   activations and gradients, FP32 master weights, a power-of-two scale per
   gradient tensor) and trains it on Fashion-MNIST batches.
3. The trained weights go back into the torch model (by their ONNX names,
   which are the state_dict's), and torch evaluates it on the test set.

Needs torch, numpy and the gradscale package (pip install ./python-bindings);
the data is Debian's dataset-fashion-mnist (or --data-dir).
"""

import argparse
import gzip
import io
import os
import warnings

import numpy as np
import torch
from torch import nn

import gradscale

DATA = "/usr/share/datasets/fashion-mnist"


def read_idx(path, offset):
    with gzip.open(path) as f:
        return np.frombuffer(f.read(), np.uint8, offset=offset)


def load(data_dir, split):
    """Images as float32 in [0, 1] (N x 1 x 28 x 28) and int64 labels."""
    images = read_idx(os.path.join(data_dir, f"{split}-images-idx3-ubyte.gz"),
                      16)
    labels = read_idx(os.path.join(data_dir, f"{split}-labels-idx1-ubyte.gz"),
                      8)
    return (images.reshape(-1, 1, 28, 28).astype(np.float32) / 255,
            labels.astype(np.int64))


class WithLoss(nn.Module):
    """The model and its loss: what gradscale trains."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x, target):
        return nn.functional.cross_entropy(self.model(x), target)


def export(model, batch):
    """The model with its loss as ONNX bytes."""
    buffer = io.BytesIO()
    x = torch.zeros(batch, 1, 28, 28)
    target = torch.zeros(batch, dtype=torch.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(WithLoss(model), (x, target), buffer,
                          opset_version=17, do_constant_folding=False,
                          input_names=["x", "target"], output_names=["loss"],
                          training=torch.onnx.TrainingMode.TRAINING)
    return buffer.getvalue()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=DATA)
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--scaling", default="gs", choices=gradscale.SCALINGS)
    args = parser.parse_args()

    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(),
                          nn.Linear(128, 10))
    trainer = gradscale.compile(
        export(model, args.batch),
        optimizer={"name": "momentum", "lr": args.lr, "momentum": 0.9},
        scaling=args.scaling)

    images, labels = load(args.data_dir, "train")
    order = np.random.default_rng(0).permutation(len(images))
    for step in range(args.steps):
        start = step * args.batch % (len(images) - args.batch + 1)
        batch = order[start:start + args.batch]
        loss = trainer.step(x=images[batch], target=labels[batch])["loss"]
        if (step + 1) % 100 == 0 or step + 1 == args.steps:
            print(f"step {step + 1}: loss {float(loss):.4f}")
    print(f"skipped steps: {trainer.skipped_steps}")

    # Back into torch: the ONNX initializers are named after the state_dict.
    trained = trainer.parameters()
    state = {name.removeprefix("model."): torch.from_numpy(value.copy())
             for name, value in trained.items()}
    model.load_state_dict(state)
    test_images, test_labels = load(args.data_dir, "t10k")
    with torch.no_grad():
        logits = model(torch.from_numpy(test_images))
    accuracy = (logits.argmax(1).numpy() == test_labels).mean()
    print(f"torch test accuracy: {accuracy:.4f}")


if __name__ == "__main__":
    main()
