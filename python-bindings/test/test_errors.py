"""Every error path: a GradScaleError (or TypeError) naming the problem."""

import numpy as np
import pytest

import gradscale
from gradscale import GradScaleError
from conftest import SHAPES


@pytest.fixture
def trainer(mlp_path):
    return gradscale.compile(mlp_path, input_shapes=SHAPES, optimizer="sgd")


def test_error_is_a_runtime_error():
    assert issubclass(GradScaleError, RuntimeError)


def test_missing_model_file(tmp_path):
    with pytest.raises(GradScaleError, match="cannot read the model .*nope.onnx"):
        gradscale.compile(tmp_path / "nope.onnx")


def test_model_of_another_type():
    with pytest.raises(TypeError, match="path, bytes or an onnx.ModelProto"):
        gradscale.import_onnx(42)


def test_corrupt_model_bytes():
    with pytest.raises(GradScaleError, match="<bytes>"):
        gradscale.import_onnx(b"\x08\x07garbage, not a protobuf")


def test_unsupported_operator_names_the_node(tmp_path):
    model = tmp_path / "bad.onnxtext"
    model.write_text("""<ir_version: 8, opset_import: ["" : 17]>
bad (float[2] x) => (float[2] y) { y = NoSuchOp(x) }
""")
    with pytest.raises(GradScaleError, match="NoSuchOp"):
        gradscale.import_onnx(model)


def test_bad_input_shape(mlp_path):
    with pytest.raises(GradScaleError, match="input_shapes"):
        gradscale.import_onnx(mlp_path, input_shapes={"x": (4, -8)})


def test_unknown_optimizer_key(mlp_path):
    with pytest.raises(GradScaleError, match="unknown key 'rate'"):
        gradscale.import_onnx(mlp_path, optimizer={"name": "sgd", "rate": 1})


def test_unknown_optimizer(mlp_path):
    with pytest.raises(GradScaleError, match="optimizer"):
        gradscale.import_onnx(mlp_path, optimizer="rmsprop")


def test_unknown_scaling(mlp_path):
    with pytest.raises(GradScaleError, match="scaling: expected one of gs"):
        gradscale.compile(mlp_path, input_shapes=SHAPES, scaling="bf16")


def test_unsupported_target(mlp_path):
    with pytest.raises(GradScaleError, match="only 'cpu'"):
        gradscale.compile(mlp_path, input_shapes=SHAPES, target="cuda")


def test_unknown_scaling_option(mlp_path):
    with pytest.raises(GradScaleError, match="no_such_thing|no-such-thing"):
        gradscale.compile(mlp_path, input_shapes=SHAPES, no_such_thing=1)


def test_bad_scaling_option_value(mlp_path):
    with pytest.raises(GradScaleError, match="relu-mask"):
        gradscale.compile(mlp_path, input_shapes=SHAPES, relu_mask="sometimes")


def test_option_the_pass_refuses_carries_its_diagnostic(mlp_path):
    with pytest.raises(GradScaleError, match="threshold"):
        gradscale.compile(mlp_path, input_shapes=SHAPES, threshold=1.5)


def test_unknown_cpu(mlp_path):
    with pytest.raises(GradScaleError, match="cpu: .*no-such-cpu"):
        gradscale.compile(mlp_path, input_shapes=SHAPES, cpu="no-such-cpu")


def test_dynamic_shapes_are_an_error(mlp_path):
    with pytest.raises(GradScaleError,
                       match="(?s)dynamic dimensions.*input 'x': \\[batch, 8\\]"):
        gradscale.compile(mlp_path, optimizer="sgd")


@pytest.mark.parametrize("value,problem", [
    (None, "None is not a value"),
    ([], "an empty list"),
    ("a b", "'a b' is not a value"),
])
def test_option_values_the_parser_cannot_read(mlp_path, value, problem):
    with pytest.raises(GradScaleError, match=f"fp32_ops: {problem}"):
        gradscale.compile(mlp_path, input_shapes=SHAPES, optimizer="sgd",
                          fp32_ops=value)


def test_input_that_is_not_an_array(mlp_path):
    trainer = gradscale.compile(mlp_path, input_shapes=SHAPES, optimizer="sgd")
    with pytest.raises(GradScaleError, match="input 'x' is not an array"):
        trainer._compiled.run("train_step", [object(), np.zeros(4, np.int64)])


def test_module_with_import_options(mlp_path):
    module = gradscale.import_onnx(mlp_path, input_shapes=SHAPES)
    with pytest.raises(GradScaleError, match="pass them to import_onnx"):
        gradscale.compile(module, input_shapes=SHAPES)


def test_invalid_pipeline(mlp_path):
    module = gradscale.import_onnx(mlp_path, input_shapes=SHAPES)
    with pytest.raises(GradScaleError, match="invalid pass pipeline"):
        module.run_pipeline("builtin.module(no-such-pass)")


def test_pipeline_on_another_op(mlp_path):
    module = gradscale.import_onnx(mlp_path, input_shapes=SHAPES)
    with pytest.raises(GradScaleError, match="runs on 'func.func'"):
        module.run_pipeline("func.func(canonicalize)")


def test_failing_pipeline_carries_the_diagnostic(mlp_path):
    module = gradscale.import_onnx(mlp_path, input_shapes=SHAPES,
                                   optimizer="sgd")
    module.run_pipeline("builtin.module(gs-train-step,gs-autodiff)")
    with pytest.raises(GradScaleError,
                       match="(?s)failed.*error: 'gs.backward' op is "
                             "differentiated already"):
        module.run_pipeline("builtin.module(gs-mixed-precision)")


def test_missing_input(trainer, batch):
    x, _ = batch
    with pytest.raises(GradScaleError, match="missing input 'labels'"):
        trainer.step(x=x)


def test_unknown_input(trainer, batch):
    x, labels = batch
    with pytest.raises(GradScaleError, match="no input 'y'"):
        trainer.step(x=x, labels=labels, y=x)


def test_input_given_twice(trainer, batch):
    x, labels = batch
    with pytest.raises(GradScaleError, match="'x' is given twice"):
        trainer.step(x, labels, x=x)


def test_too_many_inputs(trainer, batch):
    x, labels = batch
    with pytest.raises(GradScaleError, match="takes 2 inputs"):
        trainer.step(x, labels, labels)


def test_wrong_shape(trainer, batch):
    _, labels = batch
    with pytest.raises(GradScaleError,
                       match=r"input 'x' must be .*float32\[4x8\]"):
        trainer.step(x=np.zeros((5, 8), np.float32), labels=labels)


def test_wrong_kind(trainer, batch):
    x, _ = batch
    with pytest.raises(GradScaleError,
                       match="'labels' is float32, which does not convert "
                             "to int64"):
        trainer.step(x=x, labels=np.zeros(4, np.float32))


def test_load_unknown_parameter(trainer):
    with pytest.raises(GradScaleError, match="no parameter 'fc3_weight'"):
        trainer.load_parameters({"fc3_weight": np.zeros(3, np.float32)})


def test_load_fp16_weight_copy(mlp_path):
    # The step's FP16 copy of a weight is derived from the weight.
    trainer = gradscale.compile(mlp_path, input_shapes=SHAPES,
                                optimizer="sgd", fp16_weight_copies=True)
    with pytest.raises(GradScaleError,
                       match="'fc1_weight.fp16' is the FP16 copy of "
                             "'fc1_weight', which the runtime derives"):
        trainer.load_parameters(
            {"fc1_weight.fp16": np.zeros((4, 8), np.float16)})


def test_load_parameter_of_wrong_shape_changes_nothing(trainer):
    before = trainer.parameters()
    with pytest.raises(GradScaleError, match="parameter 'fc1_bias' must be"):
        trainer.load_parameters({"fc1_weight": np.ones((4, 8), np.float32),
                                 "fc1_bias": np.zeros(5, np.float32)})
    after = trainer.parameters()
    assert all(np.array_equal(before[k], after[k]) for k in before)


def test_missing_checkpoint(trainer, tmp_path):
    with pytest.raises(GradScaleError, match="missing.ckpt"):
        trainer.load_checkpoint(tmp_path / "missing.ckpt")


def test_checkpoint_to_unwritable_path(trainer, tmp_path):
    with pytest.raises(GradScaleError, match="no-such-dir"):
        trainer.save_checkpoint(tmp_path / "no-such-dir" / "model.ckpt")


def test_evaluate_a_regression(tmp_path):
    # Every model has an eval step: the forward outputs, nothing written.
    model = tmp_path / "regression.onnxtext"
    model.write_text("""<ir_version: 8, opset_import: ["" : 17]>
regression (float[4,2] x) => (float loss, float[4,2] y)
  <float[2] w = {0.5, -0.5}>
{
  y = Mul(x, w)
  loss = ReduceSum<keepdims = 0>(y)
}
""")
    trainer = gradscale.compile(model, optimizer={"name": "sgd",
                                                  "loss": "loss"})
    x = np.array([[1, 2], [3, 4], [5, 6], [7, 8]], np.float32)
    out = trainer.evaluate(x=x)
    assert set(out) == {"loss", "y"}
    np.testing.assert_array_equal(out["y"], x * np.array([0.5, -0.5]))
    assert out["loss"] == -2.0
    step = trainer.step(x=x)
    assert step["loss"] == -2.0 and trainer._loss_name == "loss"
