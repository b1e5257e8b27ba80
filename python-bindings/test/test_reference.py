"""A Trainer is the compiled training executable, in Python: the same
losses and telemetry on the same batches, bit for bit."""

import csv
import subprocess

import numpy as np
import pytest

import gradscale
from conftest import SHAPES


def write_data(directory, seed, examples=12):
    """x.npy and labels.npy for the example MLP in `directory`."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((examples, 8)).astype(np.float32)
    labels = rng.integers(0, 3, examples).astype(np.int64)
    np.save(directory / "x.npy", x)
    np.save(directory / "labels.npy", labels)
    return x, labels


def compile_executable(tool, mlp_path, directory, optimizer, flags=()):
    """The example MLP's training executable, batches of 4."""
    exe = directory / "train"
    subprocess.run([tool("gs-compile"), mlp_path, "--onnx-shape=x=4x8",
                    "--onnx-shape=labels=4", f"--onnx-train={optimizer}",
                    "--cpu=native", "-o", str(exe)] + list(flags), check=True)
    return str(exe)


def data_flags(directory):
    return [f"--train-data={directory / 'x.npy'}",
            f"--train-labels={directory / 'labels.npy'}", "--progress=never"]


@pytest.mark.parametrize("scaling,flags,options", [
    ("gs", [], {}),
    ("dynamic", ["--scaling=dynamic"], {}),
    ("fixed", ["--scaling=fixed", "--loss-scale=1024"], {"loss_scale": 1024}),
])
def test_trainer_matches_the_executable(mlp_path, tool, tmp_path, scaling,
                                        flags, options):
    x, labels = write_data(tmp_path, seed=3)
    exe = compile_executable(tool, mlp_path, tmp_path, "optimizer=sgd lr=0.1",
                             flags)
    subprocess.run([exe] + data_flags(tmp_path) +
                   ["--no-shuffle", "--steps=3",
                    f"--csv={tmp_path / 'curves.csv'}"],
                   check=True, capture_output=True)
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
    x, labels = write_data(tmp_path, seed=5)
    exe = compile_executable(tool, mlp_path, tmp_path,
                             "optimizer=adam lr=0.01")
    data = data_flags(tmp_path) + ["--no-shuffle"]
    checkpoint = tmp_path / "three.npz"
    subprocess.run([exe] + data + ["--steps=3",
                                        f"--checkpoint={checkpoint}"],
                   check=True, capture_output=True)
    subprocess.run([exe] + data + ["--steps=4", f"--resume={checkpoint}",
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
    subprocess.run([exe] + data + ["--steps=5", f"--resume={saved}",
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
    write_data(tmp_path, seed=1, examples=8)
    # 2^40 overflows FP16 at the first cast of the loss gradient.
    exe = compile_executable(tool, mlp_path, tmp_path, "optimizer=sgd lr=0.1",
                             ["--scaling=fixed", "--loss-scale=1099511627776"]
                             + flag)
    out = subprocess.run([exe] + data_flags(tmp_path) + ["--steps=2"],
                         check=True, capture_output=True, text=True).stdout
    assert f"skipped steps {skipped}," in out
