"""Writes ONNX models that once crashed, hung or fooled the importer, one
per file in the directory given (run with Debian's Python and its onnx).

Each model is valid protobuf and passes ONNX's checker; what is wrong is a
value: a zero stride, a huge pad, an axis out of range, a huge shape, a NUL
byte in a name, an opset out of range, constant indices out of range, or
simply size (5,000 graph inputs).
"""

import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs,
                              initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", opset)], ir_version=8)


def tensor(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def unknown(name, rank):
    """A float tensor of `rank` dimensions with no sizes given."""
    return tensor(name, ["d%d" % i for i in range(rank)])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)

    def save(name, m):
        with open(os.path.join(out, name), "wb") as f:
            f.write(m.SerializeToString())

    x = tensor("x", [1, 1, 8, 8])
    weight = numpy_helper.from_array(np.ones((1, 1, 3, 3), np.float32), "w")
    # Window attributes that libonnx's shape inference divides by or adds.
    save("conv-zero-stride.onnx", model(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="conv",
                          strides=[0, 1])],
        [x], [unknown("y", 4)], [weight]))
    save("maxpool-zero-stride.onnx", model(
        [helper.make_node("MaxPool", ["x"], ["y"], name="pool",
                          kernel_shape=[2, 2], strides=[1, 0])],
        [x], [unknown("y", 4)]))
    save("avgpool-huge-pads.onnx", model(
        [helper.make_node("AveragePool", ["x"], ["y"], name="pool",
                          kernel_shape=[2, 2], pads=[2**62, 0, 2**62, 0])],
        [x], [unknown("y", 4)]))
    save("conv-zero-group.onnx", model(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="conv", group=0)],
        [x], [unknown("y", 4)], [weight]))
    save("conv-weight-rank.onnx", model(
        [helper.make_node("Conv", ["v", "w"], ["y"], name="conv")],
        [tensor("v", [1, 1, 8])], [unknown("y", 3)], [weight]))
    # The same with the input's rank known only from the ops before it.
    save("conv-weight-rank-inferred.onnx", model(
        [helper.make_node("Relu", ["v"], ["r"], name="relu"),
         helper.make_node("Add", ["r", "r"], ["s"], name="add"),
         helper.make_node("Conv", ["s", "w"], ["y"], name="conv")],
        [tensor("v", [1, 1, 8])], [unknown("y", 3)], [weight]))
    # The same with a rank only libonnx's inference knows (a reduction
    # that drops an axis).
    save("conv-weight-rank-reduced.onnx", model(
        [helper.make_node("ReduceMean", ["v"], ["r"], name="mean", axes=[3],
                          keepdims=0),
         helper.make_node("Conv", ["r", "w"], ["y"], name="conv")],
        [tensor("v", [1, 1, 8, 8])], [unknown("y", 3)], [weight]))
    # The same after a node libonnx cannot infer (a MatMul of mismatched
    # sizes): inference goes past it for the ranks of the others.
    save("conv-weight-rank-after-failure.onnx", model(
        [helper.make_node("MatMul", ["a", "b"], ["p"], name="matmul"),
         helper.make_node("ReduceMean", ["v"], ["r"], name="mean", axes=[3],
                          keepdims=0),
         helper.make_node("Conv", ["r", "w"], ["y"], name="conv")],
        [tensor("v", [1, 1, 8, 8]), tensor("a", [2, 3]), tensor("b", [5, 7])],
        [unknown("y", 3), unknown("p", 2)], [weight]))
    # A convolution in a branch, of a value from the outer scope: libonnx
    # infers subgraphs with the outer types, so nodes with one are refused.
    branch = helper.make_graph(
        [helper.make_node("Conv", ["v", "w"], ["t"], name="conv")], "then",
        [], [unknown("t", 3)])
    other = helper.make_graph(
        [helper.make_node("Identity", ["v"], ["e"], name="same")], "else",
        [], [unknown("e", 3)])
    save("conv-in-subgraph.onnx", model(
        [helper.make_node("If", ["c"], ["y"], name="branch",
                          then_branch=branch, else_branch=other)],
        [tensor("v", [1, 1, 8]), tensor("c", [], TensorProto.BOOL)],
        [unknown("y", 3)], [weight]))
    save("layernorm-axis-inferred.onnx", model(
        [helper.make_node("MatMul", ["v", "m"], ["p"], name="matmul"),
         helper.make_node("LayerNormalization", ["p", "scale"],
                          ["y", "mean", "inv_std"], name="norm", axis=2)],
        [tensor("v", [2, 3])], [unknown("y", 2)],
        [numpy_helper.from_array(np.ones((3, 3), np.float32), "m"),
         numpy_helper.from_array(np.ones(3, np.float32), "scale")]))
    # No axis attribute: the default -1 is out of range for a scalar.
    save("layernorm-scalar.onnx", model(
        [helper.make_node("LayerNormalization", ["v", "scale"],
                          ["y", "mean", "inv_std"], name="norm")],
        [tensor("v", [])], [unknown("y", 2)],
        [numpy_helper.from_array(np.ones(3, np.float32), "scale")]))
    save("layernorm-axis.onnx", model(
        [helper.make_node("LayerNormalization", ["v", "scale"],
                          ["y", "mean", "inv_std"], name="norm", axis=-5)],
        [tensor("v", [2, 3])], [unknown("y", 2)],
        [numpy_helper.from_array(np.ones(3, np.float32), "scale")]))

    # Shape computations that would materialize 2^40 elements.
    limits = [numpy_helper.from_array(np.array(v, np.int64), n)
              for n, v in (("start", 0), ("limit", 2**40), ("delta", 1))]
    save("range-huge.onnx", model(
        [helper.make_node("Range", ["start", "limit", "delta"], ["r"],
                          name="range"),
         helper.make_node("Shape", ["r"], ["s"], name="shape"),
         helper.make_node("Reshape", ["v", "s"], ["y"], name="reshape")],
        [tensor("v", [4])], [unknown("y", 1)], limits))
    shape = numpy_helper.from_array(np.array([2**20, 2**20], np.int64),
                                    "shape")
    save("constant-of-shape-huge.onnx", model(
        [helper.make_node("ConstantOfShape", ["shape"], ["c"], name="fill",
                          value=numpy_helper.from_array(
                              np.array([1.5], np.float32))),
         helper.make_node("Add", ["c", "v"], ["y"], name="add")],
        [tensor("v", [1])], [unknown("y", 2)], [shape]))

    # Shapes whose element counts overflow 64 bits.
    save("huge-input.onnx", model(
        [helper.make_node("Relu", ["v"], ["y"], name="relu")],
        [tensor("v", [2**40, 2**40])], [tensor("y", [2**40, 2**40])]))

    # A NUL byte in an initializer's name.
    save("nul-name.onnx", model(
        [helper.make_node("Add", ["v", "b\0c"], ["y"], name="add")],
        [tensor("v", [2])], [tensor("y", [2])],
        [numpy_helper.from_array(np.ones(2, np.float32), "b\0c")]))

    # Opsets that do not exist.
    relu = [helper.make_node("Relu", ["v"], ["y"], name="relu")]
    for name, version in (("99", 99), ("huge", 2**62 + 17), ("negative", -1)):
        save("opset-%s.onnx" % name, model(relu, [tensor("v", [2])],
                                           [tensor("y", [2])],
                                           opset=version))

    # Constant Gather indices out of range of their axis.
    save("gather-out-of-range.onnx", model(
        [helper.make_node("Gather", ["v", "i"], ["y"], name="gather",
                          axis=0)],
        [tensor("v", [3, 2])], [tensor("y", [2, 2])],
        [numpy_helper.from_array(np.array([0, 3], np.int64), "i")]))

    # No outputs at all.
    save("no-outputs.onnx", model(relu, [tensor("v", [2])], []))

    # A slice whose step is near INT64_MAX: one element, not none.
    steps = [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in
             (("starts", [0]), ("ends", [2**63 - 1]), ("axes", [1]),
              ("steps", [2**63 - 1]))]
    save("slice-huge-step.onnx", model(
        [helper.make_node("Slice", ["v", "starts", "ends", "axes", "steps"],
                          ["y"], name="slice")],
        [tensor("v", [2, 3])], [tensor("y", [2, 1])], steps))

    # Constant tensors whose data does not fit their shape, which libonnx's
    # data propagation reads out of bounds: raw data a byte short, typed
    # values one short (in an initializer, in a Constant's value).
    short = helper.make_tensor("start", TensorProto.INT64, [], [0])
    short.raw_data = b"\0" * 7
    short.ClearField("int64_data")
    limits = [numpy_helper.from_array(np.array(v, np.int64), n)
              for n, v in (("limit", 4), ("delta", 1))]
    save("range-short-raw-data.onnx", model(
        [helper.make_node("Range", ["start", "limit", "delta"], ["r"],
                          name="range"),
         helper.make_node("Reshape", ["r", "r"], ["y"], name="reshape")],
        [], [tensor("y", ["n"], TensorProto.INT64)], [short] + limits))
    bias = helper.make_tensor("b", TensorProto.FLOAT, [2, 2], [1, 2, 3, 4])
    bias.float_data.pop()
    save("initializer-few-values.onnx", model(
        [helper.make_node("Add", ["v", "b"], ["y"], name="add")],
        [tensor("v", [2, 2])], [tensor("y", [2, 2])], [bias]))
    few = helper.make_tensor("value", TensorProto.INT64, [3], [1, 2, 3])
    few.int64_data.pop()
    save("constant-few-values.onnx", model(
        [helper.make_node("Constant", [], ["shape"], name="shape",
                          value=few),
         helper.make_node("Reshape", ["v", "shape"], ["y"], name="reshape")],
        [tensor("v", [6])], [unknown("y", 3)]))

    # 5,000 graph inputs summed.
    count = 5000
    save("many-inputs.onnx", model(
        [helper.make_node("Sum", ["in%d" % i for i in range(count)], ["y"],
                          name="sum")],
        [tensor("in%d" % i, [1]) for i in range(count)], [tensor("y", [1])]))


if __name__ == "__main__":
    main()
