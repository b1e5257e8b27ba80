"""Shared fixtures: the repository's example model and the built tools."""

import os
import pathlib

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
MLP = ROOT / "examples" / "mlp.onnxtext"
SHAPES = {"x": (4, 8), "labels": (4,)}


@pytest.fixture
def mlp_path():
    return str(MLP)


@pytest.fixture
def batch():
    """A batch of the example MLP (8 features, 3 classes)."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    labels = np.array([0, 2, 1, 2], dtype=np.int64)
    return x, labels


@pytest.fixture
def tool():
    """The path of a GradScale tool: $GS_BIN, else the build's bin/."""
    directory = pathlib.Path(os.environ.get("GS_BIN", ROOT / "build" / "bin"))

    def find(name):
        path = directory / name
        if not path.exists():
            pytest.fail(f"{path} is missing: build GradScale (make build) or "
                        f"set GS_BIN to its bin directory")
        return str(path)
    return find
