"""Writes the inputs of test/Tools/gs-run/hostile.test: a backend-test
directory whose model has no outputs, one with an expected output the
model does not produce, one whose model sums 5,000 graph inputs, and
TensorProto files whose shapes claim more than they hold. Usage: make_hostile_runs.py DIR (Debian's Python and onnx).
"""

import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def save(path, message):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(message.SerializeToString())


def check_dir(root, outputs, expected):
    """A backend-test layout: model.onnx and test_data_set_0/."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")], "g", [x],
        [y] if outputs else [])
    save(os.path.join(root, "model.onnx"), helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8))
    data = os.path.join(root, "test_data_set_0")
    value = np.array([-1, 2], np.float32)
    save(os.path.join(data, "input_0.pb"), numpy_helper.from_array(value))
    for i in range(expected):
        save(os.path.join(data, "output_%d.pb" % i),
             numpy_helper.from_array(np.maximum(value, 0)))


def many_inputs_dir(root, count):
    """A backend-test layout for a Sum of `count` graph inputs."""
    names = ["in%d" % i for i in range(count)]
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [3])
              for n in names]
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])
    graph = helper.make_graph(
        [helper.make_node("Sum", names, ["y"], name="sum")], "g", inputs, [y])
    save(os.path.join(root, "model.onnx"), helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8))
    data = os.path.join(root, "test_data_set_0")
    # Positive terms: any float32 summation order is within
    # (count - 1) * 2^-24 = 3e-4 of the sum, inside --check's rtol of 1e-3.
    rng = np.random.default_rng(0)
    values = rng.random((count, 3)).astype(np.float32)
    for i, value in enumerate(values):
        save(os.path.join(data, "input_%d.pb" % i),
             numpy_helper.from_array(value))
    save(os.path.join(data, "output_0.pb"),
         numpy_helper.from_array(values.astype(np.float64).sum(0)
                                 .astype(np.float32)))


def main():
    out = sys.argv[1]
    check_dir(os.path.join(out, "no-outputs"), outputs=False, expected=0)
    check_dir(os.path.join(out, "extra-output"), outputs=True, expected=2)
    check_dir(os.path.join(out, "good"), outputs=True, expected=1)
    many_inputs_dir(os.path.join(out, "many-inputs"), 5000)
    # Shapes that claim more than the file holds: no buffer is allocated.
    for name, dims in (("claims", [2**30, 4]), ("overflow", [2**40, 2**40])):
        claim = TensorProto(name="x", data_type=TensorProto.FLOAT, dims=dims)
        save(os.path.join(out, name + ".pb"), claim)


if __name__ == "__main__":
    main()
