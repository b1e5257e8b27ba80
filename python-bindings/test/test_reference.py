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
            # The CSV prints 9 digits of these f64 values.
            for field in ("estimated_underflow", "measured_underflow"):
                if row[f"{name}.{field}"]:
                    assert record[field] == pytest.approx(
                        float(row[f"{name}.{field}"]), rel=1e-8, abs=1e-300)
            assert record["overflow"] == int(row[f"{name}.overflow"])
    if scaling == "dynamic":
        assert trainer.parameters(state=True)["gs.loss_scale"] == \
            np.float32(rows[-1]["loss_scale"])


def test_trainer_resumes_the_executables_checkpoint(mlp_path, tool, tmp_path):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((12, 8)).astype(np.float32)
    labels = rng.integers(0, 3, 12).astype(np.int64)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "labels.npy", labels)
    exe = tmp_path / "train"
    subprocess.run([tool("gs-compile"), mlp_path, "--onnx-shape=x=4x8",
                    "--onnx-shape=labels=4", "--onnx-train=optimizer=adam lr=0.01",
                    "--cpu=native", "-o", str(exe)], check=True)
    data = [f"--train-data={tmp_path / 'x.npy'}",
            f"--train-labels={tmp_path / 'labels.npy'}", "--no-shuffle",
            "--progress=never"]
    checkpoint = tmp_path / "three.npz"
    subprocess.run([str(exe)] + data + ["--steps=3",
                                        f"--checkpoint={checkpoint}"],
                   check=True, capture_output=True)
    subprocess.run([str(exe)] + data + ["--steps=4", f"--resume={checkpoint}",
                                        f"--csv={tmp_path / 'curves.csv'}"],
                   check=True, capture_output=True)
    with open(tmp_path / "curves.csv") as f:
        fourth = [row for row in csv.DictReader(f) if row["step"] == "4"]

    trainer = gradscale.compile(mlp_path, input_shapes=SHAPES,
                                optimizer={"name": "adam", "lr": 0.01},
                                cpu="native")
    trainer.load_checkpoint(checkpoint)
    assert trainer.step_count == 3
    # Step 4 is the second epoch's first batch, in file order.
    loss = trainer.step(x=x[:4], labels=labels[:4])["loss"]
    assert loss == np.float32(fourth[0]["loss"])

    # And the executable resumes what the Trainer saves, continuing in its
    # own data order: step 5 is the second epoch's second batch.
    saved = tmp_path / "four.npz"
    trainer.save_checkpoint(saved)
    subprocess.run([str(exe)] + data + ["--steps=5", f"--resume={saved}",
                                        f"--csv={tmp_path / 'resumed.csv'}"],
                   check=True, capture_output=True)
    with open(tmp_path / "resumed.csv") as f:
        fifth = [row for row in csv.DictReader(f) if row["step"] == "5"]
    loss = trainer.step(x=x[4:8], labels=labels[4:8])["loss"]
    assert loss == np.float32(fifth[0]["loss"])


@pytest.mark.parametrize("flag,skipped", [([], 2),
                                          (["--skip-non-finite=false"], 0)])
def test_executable_skips_non_finite_fixed_steps(mlp_path, tool, tmp_path,
                                                 flag, skipped):
    x = np.random.default_rng(1).standard_normal((8, 8)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "labels.npy", np.arange(8, dtype=np.int64) % 3)
    exe = tmp_path / "train"
    # 2^40 overflows FP16 at the first cast of the loss gradient.
    subprocess.run([tool("gs-compile"), mlp_path, "--onnx-shape=x=4x8",
                    "--onnx-shape=labels=4", "--onnx-train=optimizer=sgd lr=0.1",
                    "--scaling=fixed", "--loss-scale=1099511627776",
                    "-o", str(exe)] + flag, check=True)
    out = subprocess.run([str(exe), f"--train-data={tmp_path / 'x.npy'}",
                          f"--train-labels={tmp_path / 'labels.npy'}",
                          "--steps=2", "--progress=never"], check=True,
                         capture_output=True, text=True).stdout
    assert f"skipped steps {skipped}," in out
