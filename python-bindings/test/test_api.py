"""Every call of the gradscale API on the example MLP."""

import pathlib

import numpy as np
import onnx
import onnx.parser
import pytest
from onnx import numpy_helper

import gradscale
from conftest import SHAPES


def compile_mlp(path, **kwargs):
    kwargs.setdefault("optimizer", {"name": "sgd", "lr": 0.1})
    return gradscale.compile(path, input_shapes=SHAPES, **kwargs)


def test_import_onnx_gives_the_gs_module(mlp_path):
    module = gradscale.import_onnx(mlp_path, input_shapes=SHAPES,
                                   optimizer="adam")
    text = str(module)
    assert "gs.training @forward" in text
    assert "#gs.adam" in text
    assert "tensor<4x8xf32>" in text
    assert module.name == mlp_path


def test_run_pipeline_transforms_the_module(mlp_path):
    module = gradscale.import_onnx(mlp_path, input_shapes=SHAPES,
                                   optimizer="sgd")
    module.run_pipeline(
        "builtin.module(gs-train-step,gs-mixed-precision,gs-autodiff)")
    text = str(module)
    assert "func.func @train_step" in text
    assert "gs.backward" in text
    assert "tensor<4x4xf16>" in text
    # The list form, without the anchor, runs on the module too.
    module.run_pipeline("gs-inline-backward,canonicalize")
    assert "gs.backward" not in str(module)


def test_model_as_bytes_and_modelproto(mlp_path, batch):
    proto = onnx.parser.parse_model(open(mlp_path).read())
    from_proto = compile_mlp(proto)
    from_bytes = compile_mlp(proto.SerializeToString())
    x, labels = batch
    assert from_proto.step(x=x, labels=labels)["loss"] == \
        from_bytes.step(x=x, labels=labels)["loss"]


def test_compile_does_not_change_the_module(mlp_path):
    module = gradscale.import_onnx(mlp_path, input_shapes=SHAPES,
                                   optimizer="sgd")
    before = str(module)
    gradscale.compile(module)
    assert str(module) == before


def test_step_trains_and_counts(mlp_path, batch):
    trainer = compile_mlp(mlp_path)
    assert trainer.inputs() == [("x", "float32", [4, 8]),
                                ("labels", "int64", [4])]
    assert trainer.outputs() == [("loss", "float32", [])]
    x, labels = batch
    losses = [float(trainer.step(x=x, labels=labels)["loss"])
              for _ in range(5)]
    # Gradient descent on one batch: the loss falls every step.
    assert all(b < a for a, b in zip(losses, losses[1:]))
    assert trainer.step_count == 5
    assert trainer.skipped_steps == 0
    assert trainer.scaling == "gs"


def test_positional_inputs_and_conversions(mlp_path, batch):
    a, b = compile_mlp(mlp_path), compile_mlp(mlp_path)
    x, labels = batch
    # float64 and int32 arrays convert (same kind); lists too.
    first = a.step(x.astype(np.float64), labels.astype(np.int32))
    second = b.step(x=x.tolist(), labels=labels)
    assert first["loss"] == second["loss"]


def reference_forward(params, x, labels):
    """The example MLP in float64 NumPy: its logits and mean cross-entropy."""
    p = {k: v.astype(np.float64) for k, v in params.items()}
    hidden = np.maximum(x @ p["fc1_weight"].T + p["fc1_bias"], 0)
    logits = hidden @ p["fc2_weight"].T + p["fc2_bias"]
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return logits, -log_probs[np.arange(len(labels)), labels].mean()


def test_evaluate_matches_the_definition_and_changes_nothing(mlp_path, batch):
    trainer = compile_mlp(mlp_path)
    x, labels = batch
    for _ in range(2):
        trainer.step(x=x, labels=labels)
    before = trainer.parameters()
    out = trainer.evaluate(x=x, labels=labels)
    assert set(out) == {"loss", "scores", "targets"}
    assert out["scores"].shape == (4, 3) and out["scores"].dtype == np.float32
    np.testing.assert_array_equal(out["targets"], labels)
    after = trainer.parameters()
    assert all(np.array_equal(before[k], after[k]) for k in before)
    # eval_step is the FP32 forward: float32 rounding of a few dozen terms.
    logits, loss = reference_forward(before, x.astype(np.float64), labels)
    np.testing.assert_allclose(out["scores"], logits, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["loss"], loss, rtol=1e-5)


def test_parameters_and_load_parameters(mlp_path, batch):
    trainer = compile_mlp(mlp_path)
    params = trainer.parameters()
    assert list(params) == ["fc1_weight", "fc1_bias", "fc2_weight",
                            "fc2_bias"]
    assert params["fc1_weight"].shape == (4, 8)
    assert params["fc1_weight"][0, 2] == np.float32(0.3)
    state = trainer.parameters(state=True)
    assert "gs.step" in state and "gs.skipped_steps" in state
    x, labels = batch
    initial = trainer.step(x=x, labels=labels)["loss"]
    trainer.load_parameters(params)
    state_reset = {k: np.zeros_like(v) for k, v in state.items()
                   if k.startswith("gs.step")}
    trainer.load_parameters(state_reset)
    assert trainer.step(x=x, labels=labels)["loss"] == initial


def test_fp16_weight_copies_follow_loaded_weights(mlp_path, batch):
    # With fp16_weight_copies the step reads FP16 copies of the weights:
    # derived, so left out of parameters() and derived again when the
    # weights are loaded (else the step after the load would read the
    # copies of the trained weights).
    trainer = compile_mlp(mlp_path, fp16_weight_copies=True)
    params = trainer.parameters()
    state = trainer.parameters(state=True)
    assert not any(name.endswith(".fp16") for name in state)
    x, labels = batch
    initial = trainer.step(x=x, labels=labels)["loss"]
    trainer.step(x=x, labels=labels)
    trainer.load_parameters(params)
    trainer.load_parameters({k: np.zeros_like(v) for k, v in state.items()
                             if k.startswith("gs.step")})
    assert trainer.step(x=x, labels=labels)["loss"] == initial


def test_reset_restores_the_initial_values(mlp_path, batch):
    trainer = compile_mlp(mlp_path)
    x, labels = batch
    first = trainer.step(x=x, labels=labels)["loss"]
    trainer.step(x=x, labels=labels)
    trainer.reset()
    assert trainer.step_count == 0
    assert trainer.step(x=x, labels=labels)["loss"] == first


def test_telemetry_records_every_rounding(mlp_path, batch):
    trainer = compile_mlp(mlp_path)
    x, labels = batch
    trainer.step(x=x, labels=labels)
    records = trainer.telemetry()
    assert records, "the mixed-precision MLP rounds gradients to FP16"
    for record in records:
        assert record["name"].startswith("gs.scaling.cast")
        assert record["site"]
        # Scales are powers of two; the measured rate is flushed/nonzero.
        assert np.log2(record["site_scale"]) == int(np.log2(record["site_scale"]))
        assert record["nonzero"] > 0
        assert record["measured_underflow"] == \
            record["flushed"] / record["nonzero"]
        assert 0.0 <= record["estimated_underflow"] <= 1.0


@pytest.mark.parametrize("scaling,options", [
    ("fixed", {"loss_scale": 1024}),
    ("dynamic", {"init_scale": 4096}),
    ("none", {}),
    ("fp32", {}),
    ("gs", {"threshold": 1e-4, "interval": 2,
            "cast_model": "exponent_histogram"}),
])
def test_every_scaling_method_trains(mlp_path, batch, scaling, options):
    trainer = compile_mlp(mlp_path, scaling=scaling, **options)
    x, labels = batch
    losses = [float(trainer.step(x=x, labels=labels)["loss"])
              for _ in range(3)]
    assert losses[2] < losses[0]
    state = trainer.parameters(state=True)
    if scaling == "dynamic":
        assert state["gs.loss_scale"] == np.float32(4096)
    if scaling == "fp32":
        assert trainer.telemetry() == []
    expected = "fixed=1024" if scaling == "fixed" else scaling
    assert trainer.scaling == expected


def test_read_only_inputs(mlp_path, batch):
    a, b = compile_mlp(mlp_path), compile_mlp(mlp_path)
    x, labels = batch
    frozen = x.copy()
    frozen.setflags(write=False)
    broadcast = np.broadcast_to(labels, (4,))
    assert a.step(x=frozen, labels=broadcast)["loss"] == \
        b.step(x=x, labels=labels)["loss"]


def test_checkpoint_after_a_skipped_step(mlp_path, batch, tmp_path):
    # A loss scale past FP16's range: the first step overflows and is
    # skipped, and the checkpoint counts it.
    trainer = compile_mlp(mlp_path, scaling="dynamic", init_scale=2.0 ** 40)
    x, labels = batch
    for _ in range(3):
        trainer.step(x=x, labels=labels)
    skipped, taken = trainer.skipped_steps, trainer.step_count
    assert skipped >= 1 and skipped + taken == 3
    path = tmp_path / "skipped.ckpt"
    trainer.save_checkpoint(path)
    after = trainer.step(x=x, labels=labels)["loss"]
    trainer.load_checkpoint(path)
    assert (trainer.skipped_steps, trainer.step_count) == (skipped, taken)
    assert trainer.step(x=x, labels=labels)["loss"] == after


def test_checkpoint_round_trip(mlp_path, batch, tmp_path):
    trainer = compile_mlp(mlp_path)
    x, labels = batch
    trainer.step(x=x, labels=labels)
    path = tmp_path / "model.ckpt"
    trainer.save_checkpoint(path)
    after_save = trainer.step(x=x, labels=labels)["loss"]
    trainer.step(x=x, labels=labels)
    trainer.load_checkpoint(path)
    assert trainer.step_count == 1
    assert trainer.step(x=x, labels=labels)["loss"] == after_save


def test_export_onnx_holds_the_trained_weights(mlp_path, batch, tmp_path):
    trainer = compile_mlp(mlp_path)
    x, labels = batch
    for _ in range(3):
        trainer.step(x=x, labels=labels)
    path = tmp_path / "trained.onnx"
    trainer.export_onnx(path)
    exported = {i.name: numpy_helper.to_array(i)
                for i in onnx.load(str(path)).graph.initializer}
    for name, value in trainer.parameters().items():
        assert np.array_equal(exported[name], value), name


def test_trainers_of_different_models_keep_their_own_state(mlp_path, batch,
                                                            tmp_path):
    # Trainers come and go; a new one (possibly where an old one's code
    # was) starts from its own initial values.
    x, labels = batch
    first = compile_mlp(mlp_path)
    expected = first.step(x=x, labels=labels)["loss"]
    del first
    other = tmp_path / "other.onnxtext"
    other.write_text("""<ir_version: 8, opset_import: ["" : 17]>
other (float[4,8] x, int64[4] labels) => (float loss)
  <float[3,8] w = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8,
                   0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8,
                   0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8}>
{
  logits = Gemm <transB = 1> (x, w)
  loss = SoftmaxCrossEntropyLoss(logits, labels)
}
""")
    for _ in range(3):
        trainer = gradscale.compile(other, optimizer="sgd")
        trainer.step(x=x, labels=labels)
        trainer.reset()
        assert trainer.step_count == 0
        del trainer
    again = compile_mlp(mlp_path)
    again.reset()
    assert again.step(x=x, labels=labels)["loss"] == expected


def test_the_package_is_typed():
    root = pathlib.Path(gradscale.__file__).parent
    assert (root / "py.typed").exists()
    stub = (root / "_gradscale.pyi").read_text()
    assert "class _Trainer" in stub
    assert "def _compile(" in stub
    assert "class GradScaleError(RuntimeError)" in stub


@pytest.mark.parametrize("scaling", ["fixed", "none"])
def test_non_finite_steps_are_skipped(mlp_path, batch, scaling):
    # A loss scale past FP16's range (fixed), or an input that overflows
    # the FP16 activations (none): every gradient is inf or NaN.
    x, labels = batch
    if scaling == "fixed":
        options = {"loss_scale": 2.0 ** 40}
    else:
        options = {}
        x = np.full_like(x, 1e30)
    guarded = compile_mlp(mlp_path, scaling=scaling, **options)
    before = guarded.parameters()
    guarded.step(x=x, labels=labels)
    assert (guarded.skipped_steps, guarded.step_count) == (1, 0)
    after = guarded.parameters()
    assert all(np.array_equal(before[k], after[k]) for k in before)
    unguarded = compile_mlp(mlp_path, scaling=scaling,
                            skip_non_finite=False, **options)
    unguarded.step(x=x, labels=labels)
    assert unguarded.step_count == 1
    assert not np.isfinite(unguarded.parameters()["fc2_weight"]).all()


def test_checkpoint_with_non_finite_running_statistics(tmp_path, batch):
    # Inputs near 1e25: the batch variance overflows FP32, so the running
    # variance the forward pass writes is inf while the normalized values
    # and every gradient stay finite. The checkpoint of such a model, which
    # skips non-finite steps, loads with a warning, not as corrupt.
    model = tmp_path / "bn.onnxtext"
    model.write_text("""<ir_version: 8, opset_import: ["" : 17]>
bn (float[4,8] x, int64[4] labels) => (float loss)
  <float[8] scale = {1, 1, 1, 1, 1, 1, 1, 1}, float[8] bias = {0, 0, 0, 0, 0, 0, 0, 0},
   float[8] mean = {0, 0, 0, 0, 0, 0, 0, 0}, float[8] var = {1, 1, 1, 1, 1, 1, 1, 1},
   float[3,8] w = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8,
                   0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8,
                   0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8}>
{
  normalized, running_mean, running_var = BatchNormalization <training_mode = 1> (x, scale, bias, mean, var)
  logits = Gemm <transB = 1> (normalized, w)
  loss = SoftmaxCrossEntropyLoss(logits, labels)
}
""")
    trainer = gradscale.compile(model, optimizer="sgd", scaling="none")
    x, labels = batch
    trainer.step(x=x * np.float32(1e25), labels=labels)
    assert (trainer.skipped_steps, trainer.step_count) == (0, 1)
    state = trainer.parameters()
    assert not np.isfinite(state["var"]).all()
    assert np.isfinite(state["w"]).all()
    path = tmp_path / "bn.ckpt"
    trainer.save_checkpoint(path)
    with pytest.warns(RuntimeWarning,
                      match="parameter 'var' holds a non-finite value"):
        trainer.load_checkpoint(path)
