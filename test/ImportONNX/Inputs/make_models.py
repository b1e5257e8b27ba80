#!/usr/bin/env python3
"""Writes the binary ONNX models the importer tests need and ONNX's text
format cannot express: models with training information (valid, and broken
in each way the importer must catch) and models with external data.

Usage: make_models.py OUTDIR
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TRAINING = "ai.onnx.preview.training"
OPSETS = [helper.make_opsetid("", 17), helper.make_opsetid(TRAINING, 1)]


def inference_graph():
    """x -> Gemm(W, B) -> SoftmaxCrossEntropyLoss(labels) -> loss."""
    w = numpy_helper.from_array(
        np.arange(6, dtype=np.float32).reshape(2, 3) / 10, "W")
    b = numpy_helper.from_array(np.zeros(2, dtype=np.float32), "B")
    nodes = [
        helper.make_node("Gemm", ["X", "W", "B"], ["Y"], transB=1, name="fc"),
        helper.make_node("SoftmaxCrossEntropyLoss", ["Y", "L"], ["loss"],
                         name="xent"),
    ]
    return helper.make_graph(
        nodes, "net",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [4, 3]),
         helper.make_tensor_value_info("L", TensorProto.INT64, [4])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        [w, b])


def algorithm(gradient_inputs=("W", "B"), xs=("W", "B"),
              momentum_inputs=None, extra_nodes=(), bindings=None,
              gradient_y="loss"):
    """The training step: gradients of the loss, Momentum, a step counter."""
    r = numpy_helper.from_array(np.array(0.1, dtype=np.float32), "R")
    t = numpy_helper.from_array(np.array(0, dtype=np.int64), "T")
    one = numpy_helper.from_array(np.array(1, dtype=np.int64), "One")
    vw = numpy_helper.from_array(np.zeros((2, 3), dtype=np.float32), "V_W")
    vb = numpy_helper.from_array(np.zeros(2, dtype=np.float32), "V_B")
    if momentum_inputs is None:
        momentum_inputs = ["R", "T", "W", "B", "G_W", "G_B", "V_W", "V_B"]
    nodes = [
        helper.make_node("Gradient", list(gradient_inputs), ["G_W", "G_B"],
                         domain=TRAINING, xs=list(xs), y=gradient_y,
                         name="grad"),
        helper.make_node("Momentum", momentum_inputs,
                         ["W_new", "B_new", "V_W_new", "V_B_new"],
                         domain=TRAINING, alpha=0.9, beta=1.0,
                         norm_coefficient=0.0, mode="standard",
                         name="momentum"),
        helper.make_node("Add", ["T", "One"], ["T_new"], name="count"),
        *extra_nodes,
    ]
    outputs = ["W_new", "B_new", "V_W_new", "V_B_new", "T_new"]
    graph = helper.make_graph(
        nodes, "step", [],
        [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None)
         for o in outputs],
        [r, t, one, vw, vb])
    if bindings is None:
        bindings = {"W": "W_new", "B": "B_new", "V_W": "V_W_new",
                    "V_B": "V_B_new", "T": "T_new"}
    return graph, bindings


def initialization():
    """Sets B to ones."""
    nodes = [helper.make_node(
        "Constant", [], ["B_init"],
        value=numpy_helper.from_array(np.ones(2, dtype=np.float32)))]
    graph = helper.make_graph(
        nodes, "init", [],
        [helper.make_tensor_value_info("B_init", TensorProto.FLOAT, [2])])
    return graph, {"B": "B_init"}


def training_model(init=True, **kwargs):
    graph, bindings = algorithm(**kwargs)
    info = onnx.TrainingInfoProto()
    info.algorithm.CopyFrom(graph)
    for key, value in bindings.items():
        entry = info.update_binding.add()
        entry.key, entry.value = key, value
    if init:
        init_graph, init_bindings = initialization()
        info.initialization.CopyFrom(init_graph)
        for key, value in init_bindings.items():
            entry = info.initialization_binding.add()
            entry.key, entry.value = key, value
    model = helper.make_model(inference_graph(), opset_imports=OPSETS)
    model.training_info.append(info)
    return model


def external_data_model(directory, name, location, offset=0, length=None,
                        size=32):
    """X plus a `size`-element initializer stored in `location`."""
    weight = TensorProto()
    weight.name = "Wext"
    weight.data_type = TensorProto.FLOAT
    weight.dims.extend([size])
    weight.data_location = TensorProto.EXTERNAL
    entries = {"location": location, "offset": str(offset)}
    if length is not None:
        entries["length"] = str(length)
    for key, value in entries.items():
        entry = weight.external_data.add()
        entry.key, entry.value = key, value
    graph = helper.make_graph(
        [helper.make_node("Add", ["X", "Wext"], ["Y"])], "ext",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [size])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [size])],
        [weight])
    model = helper.make_model(graph, opset_imports=OPSETS[:1])
    with open(os.path.join(directory, name), "wb") as f:
        f.write(model.SerializeToString())


def main():
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "models"), exist_ok=True)

    def save(name, model):
        with open(os.path.join(out, name), "wb") as f:
            f.write(model.SerializeToString())

    # Training information.
    save("training.onnx", training_model())
    save("training-unknown-op.onnx", training_model(extra_nodes=[
        helper.make_node("FancyStep", ["T"], ["Z"], name="fancy")]))
    save("training-unsupported-op.onnx", training_model(extra_nodes=[
        helper.make_node("Relu", ["loss"], ["Z"], name="extra")]))
    save("training-dangling.onnx", training_model(extra_nodes=[
        helper.make_node("Add", ["T", "Nowhere"], ["Z"], name="dangling")]))
    save("training-xs-input.onnx", training_model(
        gradient_inputs=("X", "B"), xs=("X", "B")))
    save("training-gradient-order.onnx", training_model(
        gradient_inputs=("B", "W")))
    save("training-wrong-order.onnx", training_model(
        momentum_inputs=["R", "T", "W", "B", "G_B", "G_W", "V_W", "V_B"]))
    save("training-binding-key.onnx", training_model(bindings={
        "W": "W_new", "B": "B_new", "V_W": "V_W_new", "V_B": "V_B_new",
        "Nope": "T_new"}))
    save("training-binding-value.onnx", training_model(bindings={
        "W": "W_new", "B": "Missing", "V_W": "V_W_new", "V_B": "V_B_new"}))
    save("training-binding-swap.onnx", training_model(bindings={
        "W": "V_W_new", "B": "B_new", "V_W": "W_new", "V_B": "V_B_new"}))
    save("training-unbound.onnx", training_model(bindings={
        "B": "B_new", "V_W": "V_W_new", "V_B": "V_B_new"}))
    save("training-y.onnx", training_model(gradient_y="nonexistent"))

    # External data: the tensor's bytes in a file beside the model.
    values = np.arange(32, dtype=np.float32)
    with open(os.path.join(out, "models", "weights.bin"), "wb") as f:
        f.write(b"\0" * 16 + values.tobytes())
    with open(os.path.join(out, "models", "large.bin"), "wb") as f:
        f.write(np.arange(1024, dtype=np.float32).tobytes())
    models = os.path.join(out, "models")
    external_data_model(models, "external.onnx", "weights.bin", offset=16,
                        length=128)
    external_data_model(models, "external-large.onnx", "large.bin",
                        offset=2048, size=512)
    external_data_model(models, "external-absolute.onnx",
                        os.path.join(os.path.abspath(models), "weights.bin"))
    external_data_model(models, "external-escape.onnx", "../outside.bin")
    external_data_model(models, "external-range.onnx", "weights.bin",
                        offset=64, length=128)
    external_data_model(models, "external-length.onnx", "weights.bin",
                        length=64)
    external_data_model(models, "external-missing.onnx", "absent.bin")
    with open(os.path.join(out, "outside.bin"), "wb") as f:
        f.write(values.tobytes())
    link = os.path.join(models, "link.bin")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(os.path.join(os.path.abspath(out), "outside.bin"), link)
    external_data_model(models, "external-symlink.onnx", "link.bin")


if __name__ == "__main__":
    main()
