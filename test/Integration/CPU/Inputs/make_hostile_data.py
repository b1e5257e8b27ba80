"""Writes data files whose headers claim more than they hold, for the
training executables' readers (test/Integration/CPU/train-executable-
hostile.test). Usage: make_hostile_data.py DIR
"""

import gzip
import os
import struct
import sys
import zlib

import numpy as np


def npy(path, shape_text, data=b""):
    """A .npy file with a hand-written header."""
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % \
        shape_text
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) +
                header.encode() + data)


def zip_member(path, name, declared, packed_data, crc=0):
    """A zip archive of one deflated member that declares `declared`
    uncompressed bytes."""
    name = name.encode()
    local = struct.pack("<IHHHHHIIIHH", 0x04034b50, 20, 0, 8, 0, 0, crc,
                        len(packed_data), declared, len(name), 0) + name
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 20, 20, 0, 8, 0,
                          0, crc, len(packed_data), declared, len(name), 0, 0,
                          0, 0, 0, 0) + name
    body = local + packed_data
    end = struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 1, 1, len(central),
                      len(body), 0)
    with open(path, "wb") as f:
        f.write(body + central + end)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    # A dimension past 64 bits, and dimensions whose product is.
    npy(os.path.join(out, "dim-overflow.npy"), "(99999999999999999999, 8)")
    npy(os.path.join(out, "size-overflow.npy"), "(%d, %d)" % (2**62, 2**62))
    # 228 bytes that claim 3 GiB of float32.
    npy(os.path.join(out, "claims-3gib.npy"), "(%d, 8)" % (3 * 2**30 // 32),
        b"\0" * 100)
    # A member that declares 3 GiB: its 3 MiB of deflate data could hold
    # that much, the tensor limit (2 GiB) refuses it before inflating.
    packed = np.random.default_rng(0).bytes(3 << 20)
    zip_member(os.path.join(out, "bomb.npz"), "x.npy", 3 << 30, packed)
    # A member that declares 1 GiB from 11 bytes: more than deflate makes.
    zip_member(os.path.join(out, "ratio.npz"), "x.npy", 1 << 30,
               zlib.compress(b"\0" * 1000)[2:-4])
    # An IDX file whose header declares 600 MB in a few compressed bytes.
    with gzip.open(os.path.join(out, "claims-idx.gz"), "wb") as f:
        f.write(struct.pack(">BBBBIII", 0, 0, 8, 3, 60000, 100, 100) +
                b"\0" * 16)


if __name__ == "__main__":
    main()
