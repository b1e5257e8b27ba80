#!/usr/bin/env python3
"""Adds the class scores of an ONNX training graph as a graph output.

Usage: expose_scores.py IN.onnx OUT.onnx

The scores are the first input of the graph's SoftmaxCrossEntropyLoss (or
NegativeLogLikelihoodLoss); ONNX Runtime then returns them beside the loss.
"""

import sys

import onnx


def main():
    source, target = sys.argv[1:3]
    model = onnx.load(source)
    losses = [n for n in model.graph.node
              if n.op_type in ("SoftmaxCrossEntropyLoss",
                               "NegativeLogLikelihoodLoss")]
    if not losses:
        sys.exit(f"{source}: no softmax cross-entropy or NLL loss")
    scores = losses[0].input[0]
    model.graph.output.append(onnx.helper.make_tensor_value_info(
        scores, onnx.TensorProto.FLOAT, None))
    onnx.save(model, target)


if __name__ == "__main__":
    main()
