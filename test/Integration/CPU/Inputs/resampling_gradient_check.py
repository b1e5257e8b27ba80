#!/usr/bin/env python3
"""Checks GradScale's gradient of Resize, Upsample and Pad against finite
differences of ONNX Runtime's forward pass.

Usage: resampling_gradient_check.py --gs-run PATH --work DIR

For each case a model computes loss = sum(OP(W) * C) with W a trainable
[1, 2, 3, 4] initializer and C a fixed random tensor of the output's shape.
gs-run trains one SGD step with learning rate 1, so the gradient is W before
minus W after (--dump-params). The loss is linear in W, so central
differences with step 1 are exact up to float32 rounding; ONNX Runtime
evaluates them. A case passes when every gradient element is within 1e-4
of the largest one. Prints one line per case; exits 1 on a mismatch.
"""

import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

SHAPE = (1, 2, 3, 4)

# (name, op, opset, attributes, scales, sizes)
CASES = [
    ("nearest_asymmetric_floor_x2", "Resize", 13,
     dict(mode="nearest", coordinate_transformation_mode="asymmetric",
          nearest_mode="floor"), [1, 1, 2, 2], None),
    ("nearest_half_pixel_sizes", "Resize", 13, dict(mode="nearest"), None,
     [1, 2, 5, 7]),
    ("linear_half_pixel_x2", "Resize", 13, dict(mode="linear"),
     [1, 1, 2, 2], None),
    ("linear_pytorch_half_pixel_down", "Resize", 13,
     dict(mode="linear", coordinate_transformation_mode="pytorch_half_pixel"),
     None, [1, 2, 2, 3]),
    # With sizes: for align_corners under scales whose product with the
    # input size is fractional, ONNX's reference (its backend test data)
    # divides by that product and ONNX Runtime by the rounded output size.
    ("linear_align_corners_down", "Resize", 13,
     dict(mode="linear", coordinate_transformation_mode="align_corners"),
     None, [1, 2, 2, 3]),
    ("cubic_x1.5", "Resize", 13, dict(mode="cubic"), [1, 1, 1.5, 1.5], None),
    ("cubic_exclude_outside", "Resize", 13,
     dict(mode="cubic", cubic_coeff_a=-0.5, exclude_outside=1), None,
     [1, 2, 4, 6]),
    ("upsample9_nearest_x3", "Upsample", 9, dict(mode="nearest"),
     [1, 1, 3, 2], None),
    # Pad: (mode, value) and pads; negative pads crop.
    ("pad_constant", "Pad", 13, dict(mode="constant"), 1.5,
     [0, 0, 1, 2, 0, 0, 2, 1]),
    ("pad_reflect", "Pad", 13, dict(mode="reflect"), None,
     [0, 1, 2, 3, 0, 0, 1, 2]),
    ("pad_edge_and_crop", "Pad", 13, dict(mode="edge"), None,
     [0, 0, 3, -1, 0, 0, -1, 2]),
    ("pad_wrap", "Pad", 19, dict(mode="wrap"), None,
     [0, 0, 2, 3, 0, 1, 1, 1]),
]


def make_model(name, op, opset, attributes, scales, sizes, rng):
    inputs = ["W"]
    initializers = [numpy_helper.from_array(
        rng.standard_normal(SHAPE).astype(np.float32), "W")]
    if op == "Pad":
        # `scales` is the constant value, `sizes` the pads.
        inputs.append("pads")
        initializers.append(numpy_helper.from_array(
            np.array(sizes, dtype=np.int64), "pads"))
        if scales is not None:
            inputs.append("value")
            initializers.append(numpy_helper.from_array(
                np.array(scales, dtype=np.float32), "value"))
    elif op == "Resize":
        inputs.append("")
    if op == "Pad":
        pass
    elif scales is not None:
        inputs.append("scales")
        initializers.append(numpy_helper.from_array(
            np.array(scales, dtype=np.float32), "scales"))
    else:
        inputs += ["", "sizes"]
        initializers.append(numpy_helper.from_array(
            np.array(sizes, dtype=np.int64), "sizes"))
    nodes = [helper.make_node(op, inputs, ["Y"], **attributes)]
    graph = helper.make_graph(nodes, name, [], [], initializers)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    shape = onnx.shape_inference.infer_shapes(model).graph.value_info[0]
    out = [d.dim_value for d in shape.type.tensor_type.shape.dim]
    c = numpy_helper.from_array(rng.standard_normal(out).astype(np.float32),
                                "C")
    graph = model.graph
    graph.initializer.append(c)
    graph.node.extend([helper.make_node("Mul", ["Y", "C"], ["P"]),
                       helper.make_node("ReduceSum", ["P"], ["loss"],
                                        keepdims=0)])
    graph.output.append(
        helper.make_tensor_value_info("loss", TensorProto.FLOAT, []))
    onnx.checker.check_model(model)
    return model


def ort_loss(model, w):
    model = onnx.ModelProto.FromString(model.SerializeToString())
    for init in model.graph.initializer:
        if init.name == "W":
            init.CopyFrom(numpy_helper.from_array(w.astype(np.float32), "W"))
    options = ort.SessionOptions()
    options.graph_optimization_level = \
        ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    return float(session.run(["loss"], {})[0])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gs-run", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    rng = np.random.default_rng(0)
    ok = True
    for name, op, opset, attributes, scales, sizes in CASES:
        model = make_model(name, op, opset, attributes, scales, sizes, rng)
        path = os.path.join(args.work, name + ".onnx")
        onnx.save(model, path)
        dump = os.path.join(args.work, name + "_params")
        subprocess.run(
            [args.gs_run, path, "--onnx-train=loss=loss optimizer=sgd lr=1",
             "--onnx-trainable=W", "--entry=train_step",
             "--dump-params=" + dump], check=True, stdout=subprocess.DEVNULL)
        w = numpy_helper.to_array(model.graph.initializer[0])
        ours = w - np.load(os.path.join(dump, "step_1", "W.npy"))
        reference = np.zeros_like(w, dtype=np.float64)
        for i in np.ndindex(*w.shape):
            e = np.zeros_like(w)
            e[i] = 1
            reference[i] = (ort_loss(model, w + e) - ort_loss(model, w - e)) / 2
        error = np.abs(ours - reference).max() / np.abs(reference).max()
        verdict = "match" if error <= 1e-4 else "MISMATCH"
        ok = ok and verdict == "match"
        print("%s: gradient relative difference %.1e, %s" %
              (name, error, verdict))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
