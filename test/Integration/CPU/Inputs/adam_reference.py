#!/usr/bin/env python3
"""Makes a backend test directory for test_adam_multiple with outputs that
ONNX's own reference (onnx.backend.test.case.node.adam.apply_adam) gives
for the model as written, i.e. with Adam's default epsilon.

Usage: adam_reference.py TESTDATA_DIR OUT_DIR

The shipped expected outputs were computed with epsilon 1e-2, an attribute
the model does not set (its generator, export_adam_multiple in ONNX's
backend/test/case/node/adam.py, passes epsilon=1e-2 to apply_adam but not
to the node). This script prints whether each
epsilon reproduces the shipped outputs, then writes OUT_DIR/model.onnx and
OUT_DIR/test_data_set_0 with the shipped inputs and the corrected outputs.
"""

import os
import shutil
import sys

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.backend.test.case.node.adam import apply_adam
from onnx.defs import AI_ONNX_PREVIEW_TRAINING_DOMAIN


def main():
    source, out = sys.argv[1], sys.argv[2]
    model = onnx.load(os.path.join(source, "model.onnx"))
    (node,) = model.graph.node
    schema = onnx.defs.get_schema("Adam", 1, AI_ONNX_PREVIEW_TRAINING_DOMAIN)
    attributes = {name: a.default_value.f for name, a in schema.attributes.items()}
    attributes.update({a.name: a.f for a in node.attribute})

    data = os.path.join(source, "test_data_set_0")
    inputs = [numpy_helper.to_array(onnx.load_tensor(
        os.path.join(data, "input_%d.pb" % i))) for i in range(10)]
    shipped = [numpy_helper.to_array(onnx.load_tensor(
        os.path.join(data, "output_%d.pb" % i))) for i in range(6)]
    r, t, x1, x2, g1, g2, v1, v2, h1, h2 = inputs

    def outputs(epsilon):
        common = (attributes["norm_coefficient"],
                  attributes["norm_coefficient_post"], attributes["alpha"],
                  attributes["beta"], epsilon)
        x1n, v1n, h1n = apply_adam(r, t, x1, g1, v1, h1, *common)
        x2n, v2n, h2n = apply_adam(r, t, x2, g2, v2, h2, *common)
        return [np.asarray(a, dtype=np.float32)
                for a in (x1n, x2n, v1n, v2n, h1n, h2n)]

    for label, epsilon in (("default epsilon %g" % attributes["epsilon"],
                            attributes["epsilon"]), ("epsilon 1e-2", 1e-2)):
        same = all(np.allclose(a, b, rtol=1e-6, atol=0)
                   for a, b in zip(outputs(epsilon), shipped))
        print("apply_adam with %s %s the shipped outputs" %
              (label, "reproduces" if same else "does not reproduce"))

    target = os.path.join(out, "test_data_set_0")
    os.makedirs(target, exist_ok=True)
    shutil.copy(os.path.join(source, "model.onnx"), out)
    for i in range(10):
        shutil.copy(os.path.join(data, "input_%d.pb" % i), target)
    for i, array in enumerate(outputs(attributes["epsilon"])):
        tensor = numpy_helper.from_array(array, model.graph.output[i].name)
        onnx.save_tensor(tensor, os.path.join(target, "output_%d.pb" % i))


if __name__ == "__main__":
    main()
