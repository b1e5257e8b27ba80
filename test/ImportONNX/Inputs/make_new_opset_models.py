#!/usr/bin/env python3
"""Writes ONNX models of ai.onnx opsets 18 to 22 with a current `onnx`.

Usage: make_new_opset_models.py OUTDIR [MODEL.onnx ...]

Each MODEL.onnx (opset 17) is converted with onnx.version_converter to
opsets 18 to 22, as NAME_opsetN.onnx, with the IR version the ONNX release
that introduced the opset writes. Then one model is written by hand at
opset 22 (IR 10) with what changed after opset 17: reductions with axes
inputs, Split with num_outputs (an uneven split), Gelu in both forms and
Mish, as features_opset22.onnx. Every model passes onnx.checker's full
check.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, version_converter

# The IR version of the first ONNX release with each opset.
IR_VERSION_OF_OPSET = {18: 8, 19: 9, 20: 9, 21: 10, 22: 10}


def convert(path, out):
    model = onnx.load(path)
    name = os.path.splitext(os.path.basename(path))[0]
    for opset in range(18, 23):
        converted = version_converter.convert_version(model, opset)
        converted.ir_version = IR_VERSION_OF_OPSET[opset]
        onnx.checker.check_model(converted, full_check=True)
        onnx.save(converted, os.path.join(out, "%s_opset%d.onnx" % (name, opset)))


def features(out):
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(
        rng.standard_normal((10, 10)).astype(np.float32) * 0.5, "w")
    axes = numpy_helper.from_array(np.array([1], dtype=np.int64), "axes")
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"]),
        helper.make_node("Gelu", ["h"], ["g"]),
        helper.make_node("Gelu", ["h"], ["gt"], approximate="tanh"),
        helper.make_node("Mish", ["h"], ["m"]),
        helper.make_node("Split", ["g"], ["s0", "s1", "s2"], axis=1,
                         num_outputs=3),
        helper.make_node("ReduceMean", ["gt", "axes"], ["mean"]),
        helper.make_node("ReduceMax", ["m", "axes"], ["max"], keepdims=0),
        helper.make_node("Cast", ["s2"], ["c"], to=TensorProto.FLOAT,
                         saturate=1),
    ]
    graph = helper.make_graph(
        nodes, "features", [helper.make_tensor_value_info(
            "x", TensorProto.FLOAT, [4, 10])],
        [helper.make_tensor_value_info("s0", TensorProto.FLOAT, [4, 4]),
         helper.make_tensor_value_info("s1", TensorProto.FLOAT, [4, 4]),
         helper.make_tensor_value_info("c", TensorProto.FLOAT, [4, 2]),
         helper.make_tensor_value_info("mean", TensorProto.FLOAT, [4, 1]),
         helper.make_tensor_value_info("max", TensorProto.FLOAT, [4])],
        [w, axes])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    model.ir_version = 10
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, os.path.join(out, "features_opset22.onnx"))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for path in sys.argv[2:]:
        convert(path, out)
    features(out)


if __name__ == "__main__":
    main()
