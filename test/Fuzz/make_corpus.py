"""Writes the seed corpus of the fuzz targets into test/Fuzz/corpus/<target>/
(run with Debian's Python: numpy and onnx). The seeds are small valid
inputs of each format; the fuzzers mutate them. Usage: make_corpus.py DIR
"""

import gzip
import io
import os
import struct
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def write(directory, name, data):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), "wb") as f:
        f.write(data)


def npy(array):
    out = io.BytesIO()
    np.save(out, array)
    return out.getvalue()


def npz(compressed, **arrays):
    out = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(out, **arrays)
    return out.getvalue()


def idx(array, code):
    header = struct.pack(">BBBB", 0, 0, code, array.ndim)
    header += b"".join(struct.pack(">I", d) for d in array.shape)
    return header + array.astype(array.dtype.newbyteorder(">")).tobytes()


def checkpoint(step, skipped):
    """A checkpoint of FuzzCheckpoint.cpp's model."""
    return npz(False, **{
        "w": np.ones((4, 3), np.float32),
        "w.velocity": np.zeros((4, 3), np.float32),
        "gs.step": np.array(step - skipped, np.int64),
        "gs.skipped_steps": np.array(skipped, np.int64),
        "gs.scaling.cast0": np.full(7, np.nan),
        "gs.trainer.step": np.array(step, np.int64),
        "gs.trainer.seed": np.array(0, np.int64),
        "gs.trainer.shuffle": np.array(1, np.int64),
        "gs.trainer.examples": np.array(64, np.int64),
        "gs.trainer.batch": np.array(16, np.int64),
        "gs.trainer.scaling": np.frombuffer(b"gs", np.uint8),
        "gs.trainer.normalization": np.zeros(3),
        "gs.trainer.loss": np.linspace(2, 1, step),
    })


def main():
    out = sys.argv[1]
    data = os.path.join(out, "fuzz-data")
    write(data, "f32.npy", npy(np.arange(12, dtype=np.float32).reshape(3, 4)))
    write(data, "u8.npy", npy(np.arange(6, dtype=np.uint8)))
    write(data, "i64-scalar.npy", npy(np.array(7, np.int64)))
    write(data, "stored.npz", npz(False, x=np.ones((2, 2), np.float16),
                                  y=np.arange(3)))
    write(data, "deflated.npz", npz(True, x=np.zeros((8, 8), np.float32)))
    images = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    write(data, "images.idx", idx(images, 0x08))
    write(data, "images.idx.gz", gzip.compress(idx(images, 0x08), mtime=0))
    write(data, "floats.idx", idx(np.ones(4, np.float32), 0x0D))

    ck = os.path.join(out, "fuzz-checkpoint")
    write(ck, "fresh.npz", checkpoint(3, 0))
    write(ck, "skipped.npz", checkpoint(5, 2))

    flags = os.path.join(out, "fuzz-flags")
    for i, text in enumerate(["x=1x3x224x224", "input=0", "a=2x", "=3",
                              "loss=loss optimizer=adam lr=1e-3",
                              "optimizer=momentum lr=0.01 momentum=0.9",
                              "optimizer=sgd weight_decay=1e-4"]):
        write(flags, "flag%d" % i, text.encode())

    # ONNX text: the importer's own test models.
    text = os.path.join(out, "fuzz-onnxtext")
    imports = os.path.join(HERE, "..", "ImportONNX")
    for name in sorted(os.listdir(imports)):
        if name.endswith(".onnxtext"):
            with open(os.path.join(imports, name), "rb") as f:
                write(text, name, f.read())

    # Binary ONNX: a convolution network and a few operator families.
    binary = os.path.join(out, "fuzz-onnx")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv",
                         pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool",
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Shape", ["p"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "zero"], ["n"], name="batch",
                         axis=0),
        helper.make_node("Unsqueeze", ["n", "zero1"], ["n1"], name="unsq"),
        helper.make_node("Concat", ["n1", "minus1"], ["target"],
                         name="concat", axis=0),
        helper.make_node("Reshape", ["p", "target"], ["f"], name="flat"),
        helper.make_node("Gemm", ["f", "fc", "b"], ["y"], name="fc",
                         transB=1),
    ]
    inits = [
        numpy_helper.from_array(np.ones((4, 1, 3, 3), np.float32), "w"),
        numpy_helper.from_array(np.array(0, np.int64), "zero"),
        numpy_helper.from_array(np.array([0], np.int64), "zero1"),
        numpy_helper.from_array(np.array([-1], np.int64), "minus1"),
        numpy_helper.from_array(np.ones((10, 16), np.float32), "fc"),
        numpy_helper.from_array(np.zeros(10, np.float32), "b"),
    ]
    model = helper.make_model(
        helper.make_graph(nodes, "cnn", [x], [y], initializer=inits),
        opset_imports=[helper.make_opsetid("", 13)], ir_version=7)
    write(binary, "cnn.onnx", model.SerializeToString())
    for name in ("test_relu", "test_gemm_default_matrix_bias",
                 "test_batchnorm_example", "test_slice",
                 "test_softmax_axis_1", "test_averagepool_2d_pads",
                 "test_layer_normalization_2d_axis0",
                 "test_range_int32_type_negative_delta"):
        path = os.path.join("/usr/share/libonnx-testdata/data/node", name,
                            "model.onnx")
        with open(path, "rb") as f:
            write(binary, name + ".onnx", f.read())


if __name__ == "__main__":
    main()
