"""A Trainer is the compiled training executable, in Python: the same
losses and telemetry on the same batches, bit for bit."""

import csv
import subprocess

import numpy as np
import pytest

import gradscale
from conftest import SHAPES


@pytest.mark.parametrize("scaling,flags,options", [
    ("gs", [], {}),
    ("dynamic", ["--scaling=dynamic"], {}),
    ("fixed", ["--scaling=fixed", "--loss-scale=1024"], {"loss_scale": 1024}),
])
def test_trainer_matches_the_executable(mlp_path, tool, tmp_path, scaling,
                                        flags, options):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((12, 8)).astype(np.float32)
    labels = rng.integers(0, 3, 12).astype(np.int64)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "labels.npy", labels)
    exe = tmp_path / "train"
    subprocess.run([tool("gs-compile"), mlp_path, "--onnx-shape=x=4x8",
                    "--onnx-shape=labels=4", "--onnx-train=optimizer=sgd lr=0.1",
                    "--cpu=native", "-o", str(exe)] + flags, check=True)
    subprocess.run([str(exe), f"--train-data={tmp_path / 'x.npy'}",
                    f"--train-labels={tmp_path / 'labels.npy'}", "--no-shuffle",
                    "--steps=3", f"--csv={tmp_path / 'curves.csv'}",
                    "--progress=never"], check=True, capture_output=True)
    with open(tmp_path / "curves.csv") as f:
        rows = list(csv.DictReader(f))

    trainer = gradscale.compile(mlp_path, input_shapes=SHAPES,
                                optimizer={"name": "sgd", "lr": 0.1},
                                scaling=scaling, cpu="native", **options)
    assert len(rows) == 3
    for step, row in enumerate(rows):
        batch = slice(4 * step, 4 * step + 4)
        loss = trainer.step(x=x[batch], labels=labels[batch])["loss"]
        # The CSV prints 9 significant digits: a float32 exactly.
        assert loss == np.float32(row["loss"]), f"step {step + 1}"
        for record in trainer.telemetry():
            name = record["name"]
            assert record["scale"] == float(row[f"{name}.scale"])
            if row[f"{name}.estimated_underflow"]:
                assert record["estimated_underflow"] == pytest.approx(
                    float(row[f"{name}.estimated_underflow"]), rel=1e-8)
    if scaling == "dynamic":
        assert trainer.parameters(state=True)["gs.loss_scale"] == \
            np.float32(rows[-1]["loss_scale"])
