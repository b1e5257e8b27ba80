#!/usr/bin/env python3
"""Writes ONNX models on integer tensors of every width and signedness.

Usage: make_integer_models.py OUTDIR

- image_pipeline.onnx: what an image model fed uint8 pixels does: MaxPool
  on the uint8 image, Cast to float, scale to [0, 1], a convolution.
- unsigned_ops.onnx: uint32 and uint64 arithmetic, ordering and casts,
  with values above the signed range where the reading matters.
- pixels_classifier.onnx: an MLP classifier taking uint8 images
  (64x1x28x28) that it casts and scales itself, and unit_classifier.onnx,
  the same model with the same weights taking float images in [0, 1].
- div_edges.onnx and its inputs div_x.npy, div_y.npy, div_u.npy,
  div_v.npy: integer division by zero and INT32_MIN / -1, which ONNX leaves
  undefined and ONNX Runtime traps on.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(model, path):
    model.ir_version = 8  # what ONNX 1.12-1.13 write for opset 17
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, path)


def image_pipeline(out):
    rng = np.random.default_rng(1)
    weight = rng.standard_normal((3, 1, 3, 3)).astype(np.float32)
    bias = rng.standard_normal(3).astype(np.float32)
    nodes = [
        helper.make_node("MaxPool", ["img"], ["pooled"], kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Cast", ["pooled"], ["pooled_f"],
                         to=TensorProto.FLOAT),
        helper.make_node("Div", ["pooled_f", "full_scale"], ["unit"]),
        helper.make_node("Conv", ["unit", "w", "b"], ["conv"], pads=[1] * 4),
        helper.make_node("Relu", ["conv"], ["feat"]),
    ]
    graph = helper.make_graph(
        nodes, "image_pipeline",
        [helper.make_tensor_value_info("img", TensorProto.UINT8,
                                       [2, 1, 8, 8])],
        [helper.make_tensor_value_info("pooled", TensorProto.UINT8,
                                       [2, 1, 4, 4]),
         helper.make_tensor_value_info("feat", TensorProto.FLOAT,
                                       [2, 3, 4, 4])],
        [numpy_helper.from_array(weight, "w"),
         numpy_helper.from_array(bias, "b"),
         numpy_helper.from_array(np.array(255, np.float32), "full_scale")])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
         os.path.join(out, "image_pipeline.onnx"))


def unsigned_ops(out):
    u32 = lambda name: helper.make_tensor_value_info(name, TensorProto.UINT32,
                                                     [16])
    u64 = lambda name: helper.make_tensor_value_info(name, TensorProto.UINT64,
                                                     [16])
    nodes = [
        helper.make_node("Div", ["a", "b"], ["quotient32"]),
        helper.make_node("Max", ["a", "b"], ["max32"]),
        helper.make_node("Sub", ["a", "b"], ["difference32"]),
        helper.make_node("Mul", ["a", "b"], ["product32"]),
        helper.make_node("Cast", ["a"], ["a_float"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["a"], ["a_int64"], to=TensorProto.INT64),
        helper.make_node("Div", ["c", "d"], ["quotient64"]),
        helper.make_node("Min", ["c", "d"], ["min64"]),
        helper.make_node("Cast", ["c"], ["c_double"], to=TensorProto.DOUBLE),
        helper.make_node("Cast", ["a"], ["a_uint64"], to=TensorProto.UINT64),
        helper.make_node("Add", ["a_uint64", "d"], ["sum64"]),
    ]
    graph = helper.make_graph(
        nodes, "unsigned_ops", [u32("a"), u32("b"), u64("c"), u64("d")],
        [u32("quotient32"), u32("max32"), u32("difference32"),
         u32("product32"),
         helper.make_tensor_value_info("a_float", TensorProto.FLOAT, [16]),
         helper.make_tensor_value_info("a_int64", TensorProto.INT64, [16]),
         u64("quotient64"), u64("min64"),
         helper.make_tensor_value_info("c_double", TensorProto.DOUBLE, [16]),
         u64("sum64")])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
         os.path.join(out, "unsigned_ops.onnx"))


def classifiers(out):
    rng = np.random.default_rng(2)
    weights = [
        numpy_helper.from_array(
            (rng.standard_normal((784, 64)) * 0.05).astype(np.float32), "w1"),
        numpy_helper.from_array(np.zeros(64, np.float32), "b1"),
        numpy_helper.from_array(
            (rng.standard_normal((64, 10)) * 0.1).astype(np.float32), "w2"),
        numpy_helper.from_array(np.zeros(10, np.float32), "b2"),
    ]
    mlp = [
        helper.make_node("Flatten", ["unit"], ["flat"]),
        helper.make_node("MatMul", ["flat", "w1"], ["h0"]),
        helper.make_node("Add", ["h0", "b1"], ["h1"]),
        helper.make_node("Relu", ["h1"], ["h"]),
        helper.make_node("MatMul", ["h", "w2"], ["s0"]),
        helper.make_node("Add", ["s0", "b2"], ["scores"]),
        helper.make_node("SoftmaxCrossEntropyLoss", ["scores", "target"],
                         ["loss"]),
    ]
    target = helper.make_tensor_value_info("target", TensorProto.INT64, [64])
    loss = helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])
    scaling = [
        helper.make_node("Cast", ["pixels"], ["pixels_f"],
                         to=TensorProto.FLOAT),
        helper.make_node("Div", ["pixels_f", "full_scale"], ["unit"]),
    ]
    graph = helper.make_graph(
        scaling + mlp, "pixels_classifier",
        [helper.make_tensor_value_info("pixels", TensorProto.UINT8,
                                       [64, 1, 28, 28]), target],
        [loss],
        weights + [numpy_helper.from_array(np.array(255, np.float32),
                                           "full_scale")])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
         os.path.join(out, "pixels_classifier.onnx"))
    graph = helper.make_graph(
        mlp, "unit_classifier",
        [helper.make_tensor_value_info("unit", TensorProto.FLOAT,
                                       [64, 1, 28, 28]), target],
        [loss], weights)
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
         os.path.join(out, "unit_classifier.onnx"))


def div_edges(out):
    nodes = [helper.make_node("Div", ["x", "y"], ["signed"]),
             helper.make_node("Div", ["u", "v"], ["unsigned"])]
    graph = helper.make_graph(
        nodes, "div_edges",
        [helper.make_tensor_value_info("x", TensorProto.INT32, [4]),
         helper.make_tensor_value_info("y", TensorProto.INT32, [4]),
         helper.make_tensor_value_info("u", TensorProto.UINT8, [3]),
         helper.make_tensor_value_info("v", TensorProto.UINT8, [3])],
        [helper.make_tensor_value_info("signed", TensorProto.INT32, [4]),
         helper.make_tensor_value_info("unsigned", TensorProto.UINT8, [3])])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
         os.path.join(out, "div_edges.onnx"))
    np.save(os.path.join(out, "div_x.npy"),
            np.array([7, -7, -2**31, 5], np.int32))
    np.save(os.path.join(out, "div_y.npy"), np.array([2, 2, -1, 0], np.int32))
    np.save(os.path.join(out, "div_u.npy"), np.array([200, 255, 9], np.uint8))
    np.save(os.path.join(out, "div_v.npy"), np.array([3, 0, 255], np.uint8))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    image_pipeline(out)
    unsigned_ops(out)
    classifiers(out)
    div_edges(out)


if __name__ == "__main__":
    main()
