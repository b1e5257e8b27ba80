"""Runs the fused GEMM and convolution kernels and the scale decisions on
an NVIDIA GPU and checks and times them.

  check_kernels.py --artifacts build/gpu-check [--configs a,b] [--no-perf]
  check_kernels.py --artifacts build/gpu-check --dry-run

The kernels (PTX from prepare_kernels.py) are loaded and launched through
the CUDA driver API (libcuda.so.1, by ctypes) on PyTorch's stream; PyTorch
holds the buffers, computes the references in float64 on the GPU and is
the cuBLAS baseline. Per configuration:
  PASS/FAIL correct: C and the statistics against the float64 reference,
    exact for integer inputs (check_gemm.py's rules), within the bounds of
    f32 accumulation for normal ones;
  PASS/FAIL deterministic: a second run gives bit-identical C and
    statistics;
  PASS/FAIL correct/deterministic for each scale-decision kernel: on the
    statistics of every case of scale_cases.py, the scale the CPU lowering
    chose (exactly where it is a power of two) and its underflow estimate
    (within 1e-12: the device's erf, exp and log are libdevice's);
  PERF (timed ones): TFLOP/s of the fused kernel, of cuBLAS FP16 GEMM
    (torch.matmul, f32 accumulation), and of cuBLAS followed by the same
    statistics computed by PyTorch ops; for 4096^3 the cost of the
    statistics over the same kernel without them; for convolutions (the
    implicit GEMMs convert-gs-to-gpu builds) against cuDNN's FP16
    convolution (torch.nn.functional), their references cuDNN's in
    float64; for the wgmma kernels (sm_90a PTX, run on compute capability
    9.0 only, SKIP elsewhere) their throughput against cuBLAS (target at
    least 0.70x at 4096^3) and the cost of their statistics; for the eval
    step's FP32 convolutions (gs-linalg-to-gpu's kernels) against cuDNN's
    FP32 convolution (TF32 off), and register blocks against an output a
    thread.
--dry-run needs neither a GPU nor PyTorch: it checks that each kernel's
argument packing matches the parameters its PTX declares.
"""

import argparse
import ctypes
import json
import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "test", "Integration", "GPU",
                                "Inputs"))
import check_conv  # noqa: E402
import check_gemm  # noqa: E402  (the reference rules the CPU tests use)

U32 = 2.0**-24
# A decision's estimate on the device against the host's: libdevice's and
# the host's erf, erfc, exp and log differ by a few ulps.
ESTIMATE_RTOL = 1e-12


def descriptor_fields(shape):
    """A memref descriptor's fields: two pointers, offset, sizes, strides."""
    return 3 + 2 * len(shape)


def ptx_parameters(path, function):
    with open(path) as f:
        text = f.read()
    entry = re.search(r"\.entry\s+" + re.escape(function) + r"\s*\((.*?)\)",
                      text, re.S)
    if not entry:
        raise RuntimeError(f"{path}: no .entry {function}")
    return re.findall(r"\.param\s+\.(\w+)", entry.group(1))


def dry_run(manifest, root):
    failed = False
    for cfg in manifest:
        for launch in cfg["launches"]:
            want = sum(descriptor_fields(cfg["arguments"][i]["shape"])
                       for i in launch["args"])
            for chip in launch["ptx"]:
                params = ptx_parameters(os.path.join(root, launch["ptx"][chip]),
                                        launch["function"])
                ok = len(params) == want and all(p in ("u64", "b64")
                                                 for p in params)
                failed |= not ok
                print(f"{'PASS' if ok else 'FAIL'} packing {cfg['name']} "
                      f"{launch['module']} {chip}: {want} 8-byte fields, PTX "
                      f"declares {len(params)}")
    return failed


class Driver:
    """The few CUDA driver API calls the check needs."""

    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")
        self.modules = {}

    def check(self, result, what):
        if result != 0:
            name = ctypes.c_char_p()
            self.lib.cuGetErrorName(result, ctypes.byref(name))
            raise RuntimeError(f"{what}: {name.value.decode()} ({result})")

    def function(self, ptx_path, name):
        key = (ptx_path, name)
        if key in self.modules:
            return self.modules[key]
        with open(ptx_path, "rb") as f:
            image = f.read() + b"\0"
        module = ctypes.c_void_p()
        log = ctypes.create_string_buffer(1 << 16)
        options = (ctypes.c_int * 2)(5, 6)  # CU_JIT_ERROR_LOG_BUFFER(_SIZE)
        values = (ctypes.c_void_p * 2)(ctypes.cast(log, ctypes.c_void_p),
                                       ctypes.c_void_p(len(log)))
        result = self.lib.cuModuleLoadDataEx(ctypes.byref(module), image, 2,
                                             options, values)
        self.check(result, f"loading {ptx_path}: {log.value.decode()}")
        function = ctypes.c_void_p()
        self.check(self.lib.cuModuleGetFunction(ctypes.byref(function), module,
                                                name.encode()),
                   f"{ptx_path}: function {name}")
        self.modules[key] = function
        return function

    def prepare(self, function, grid, block, tensors, stream,
                shared_bytes=0):
        """A launch, its parameters packed once: call it to launch. Over 48
        KiB of dynamic shared memory must be asked for first."""
        if shared_bytes > 48 * 1024:
            # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            self.check(self.lib.cuFuncSetAttribute(function, 8, shared_bytes),
                       f"asking for {shared_bytes} bytes of shared memory")
        fields = []
        for t in tensors:
            fields += [ctypes.c_void_p(t.data_ptr()),
                       ctypes.c_void_p(t.data_ptr()), ctypes.c_int64(0)]
            fields += [ctypes.c_int64(s) for s in t.shape]
            fields += [ctypes.c_int64(s) for s in t.stride()]
        params = (ctypes.c_void_p * len(fields))(
            *[ctypes.cast(ctypes.pointer(f), ctypes.c_void_p) for f in fields])
        stream = ctypes.c_void_p(stream)

        def launch():
            self.check(self.lib.cuLaunchKernel(function, *grid, *block,
                                               shared_bytes, stream, params,
                                               None),
                       "cuLaunchKernel")
        launch.keep = (fields, params)
        return launch


def is_conv(cfg):
    """A convolution: an implicit GEMM of convert-gs-to-gpu, or an FP32 one
    in gs-linalg-to-gpu's kernel (is_eval_conv)."""
    return cfg.get("type") in ("conv", "eval_conv")


def is_eval_conv(cfg):
    return cfg.get("type") == "eval_conv"


def make_arrays(cfg):
    """The configuration's inputs: A and B as m x k and k x n, or a
    convolution's x and w."""
    if is_conv(cfg):
        return check_conv.make_arrays(cfg["conv"])
    return check_gemm.make_arrays(cfg["m"], cfg["n"], cfg["k"], cfg["kind"],
                                  cfg["bias"], cfg["mask"], cfg["bias_type"])


def torch_dtypes(torch):
    return {"f16": torch.float16, "f32": torch.float32,
            "f64": torch.float64, "i64": torch.int64}


def make_buffers(torch, cfg):
    dtypes = torch_dtypes(torch)
    arrays = make_arrays(cfg)
    if is_eval_conv(cfg):
        # The generic's operands in order, then the output.
        buffers = [torch.from_numpy(arrays[n]).cuda() for n in ("x", "w")]
        out = cfg["arguments"][2]
        buffers.append(torch.zeros(out["shape"], dtype=dtypes[out["dtype"]],
                                   device="cuda"))
        return arrays, buffers
    if is_conv(cfg):
        a, b = arrays["w"], arrays["x"]
    else:
        a, b = check_gemm.stored(arrays, cfg["trans_a"], cfg["trans_b"])
    inputs = [a, b, np.array([cfg["scale"]], np.float32)]
    if cfg["bias"]:
        inputs.append(arrays["bias"])
    if cfg["mask"]:
        inputs.append(arrays["mask"])
    buffers = [torch.from_numpy(x).cuda() for x in inputs]
    for arg in cfg["arguments"][len(inputs):]:
        buffers.append(torch.zeros(arg["shape"], dtype=dtypes[arg["dtype"]],
                                   device="cuda"))
    return arrays, buffers


def prepare_kernels(driver, torch, cfg, root, chip, buffers):
    """One callable that launches the configuration's kernels in order."""
    stream = torch.cuda.current_stream().cuda_stream
    launches = []
    for launch in cfg["launches"]:
        function = driver.function(os.path.join(root, launch["ptx"][chip]),
                                   launch["function"])
        launches.append(driver.prepare(function, launch["grid"],
                                       launch["block"],
                                       [buffers[i] for i in launch["args"]],
                                       stream, launch.get("shared_bytes", 0)))

    def run():
        for launch in launches:
            launch()
    return run


def convolution(torch, cfg):
    """f(x, w) computing the configuration's convolution with PyTorch in
    the inputs' type (cuDNN on the GPU)."""
    conv = cfg["conv"]
    g = check_conv.geometry(conv)
    if g["pad"] != g["pad_end"]:
        sys.exit(f"{cfg['name']}: PyTorch takes symmetric padding only")
    rank = len(conv["size"])
    functional = torch.nn.functional
    if conv["kind"] == "conv":
        fn = (functional.conv1d, functional.conv2d, functional.conv3d)[rank - 1]
        return lambda x, w: fn(x, w, stride=g["stride"], padding=g["pad"],
                               dilation=g["dilation"],
                               groups=conv.get("groups", 1))
    fn = (functional.conv_transpose1d, functional.conv_transpose2d,
          functional.conv_transpose3d)[rank - 1]
    return lambda x, w: fn(x, w, stride=g["stride"], padding=g["pad"],
                           output_padding=g["output_padding"],
                           dilation=g["dilation"],
                           groups=conv.get("groups", 1))


def conv_layout(conv, x, w, torch=None):
    """x and w (NumPy arrays, or with `torch` its tensors) as the
    convolution takes them, from the layouts the kernel reads them in."""
    if conv.get("channels_first"):
        x = x.swapaxes(0, 1) if torch is None else x.transpose(0, 1)
    if conv.get("grouped_channels_first"):
        x = check_conv.grouped_from_source(conv, x, check_conv.shapes(conv)[0])
    if conv.get("weight_channels_first"):
        w = w.swapaxes(0, 1) if torch is None else w.transpose(0, 1)
    return x, w


def reference(torch, cfg, arrays):
    """The float64 product and its f32 accumulation bound (on the GPU, or
    with NumPy where torch is None)."""
    if is_conv(cfg):
        x, w = (arrays[n].astype(np.float64) for n in ("x", "w"))
        x, w = (np.ascontiguousarray(v)
                for v in conv_layout(cfg["conv"], x, w))
        if torch is None:
            return check_conv.reference(cfg["conv"], x, w, None)
        conv = convolution(torch, cfg)
        x, w = torch.from_numpy(x).cuda(), torch.from_numpy(w).cuda()
        exact = conv(x, w).cpu().numpy()
        bound = cfg["k"] * U32 * conv(x.abs(), w.abs()).cpu().numpy()
        return exact, bound
    if torch is None:
        a, b = (arrays[n].astype(np.float64) for n in ("a", "b"))
        with np.errstate(invalid="ignore", over="ignore"):
            return a @ b, cfg["k"] * U32 * (np.abs(a) @ np.abs(b))
    a = torch.from_numpy(arrays["a"]).cuda().double()
    b = torch.from_numpy(arrays["b"]).cuda().double()
    exact = (a @ b).cpu().numpy()
    bound = cfg["k"] * U32 * (a.abs() @ b.abs()).cpu().numpy()
    return exact, bound


def check_correct(torch, cfg, arrays, outputs):
    """Failures of C, and of the statistics where the kernel has them."""
    exact, bound = reference(torch, cfg, arrays)
    c, grad, cast = (outputs + [None, None])[:3]
    output = cfg["output"]
    bias = arrays.get("bias")
    if bias is not None and is_conv(cfg):
        # One value per output channel.
        bias = bias.reshape([1, -1] + [1] * (exact.ndim - 2))
    # The epilogue's values before the ReLU mask: the statistics are theirs.
    mask = arrays.get("mask")
    x = check_gemm.epilogue(exact.astype(np.float32), cfg["scale"], bias)
    if cfg["kind"] != "normal":
        return check_gemm.compare_exact(c, grad, cast, x, output, mask)
    # Normal values: the Tensor Cores sum in their own order.
    failures = []
    e = cfg["scale"] * bound + U32 * np.abs(x)
    dtype = check_gemm.DTYPES[output]
    ulp = np.spacing(np.abs(x).astype(dtype) + dtype(0)).astype(np.float64)
    allowed = e + ulp
    want_c = check_gemm.masked(x.astype(np.float64), mask)
    allowed_c = check_gemm.masked(allowed, mask)
    error = np.abs(c.astype(np.float64) - want_c)
    if not (error <= allowed_c).all():
        i = tuple(int(v) for v in
                  np.unravel_index(np.argmax(error - allowed_c), error.shape))
        failures.append(f"C at {i}: {c[i]} vs {want_c[i]} "
                        f"(allowed {allowed_c[i]:.3g})")
    if grad is None:
        return failures
    # The statistics are of C before the mask, which may be any value
    # within `allowed` of x rounded.
    want_grad, want_cast, bounds = check_gemm.expected_stats(x, output)
    ax = np.abs(x.astype(np.float64))
    limits = {0: 0.0, 1: bounds[1] + allowed.sum(),
              2: bounds[2] + (2 * ax * allowed + allowed * allowed).sum(),
              3: allowed.max(), 4: 0.0}
    for field, limit in limits.items():
        if abs(grad[field] - want_grad[field]) > limit:
            failures.append(f"grad stats {check_gemm.GRAD_FIELDS[field]}: "
                            f"{grad[field]!r} vs {want_grad[field]!r} "
                            f"(bound {limit:.3g})")
    if mask is None:
        # The sums of ln|x| are of the C the kernel stored, so they are
        # checked against that C: within the reductions' and the
        # approximate log's bounds, whatever order the Tensor Cores summed
        # in.
        own, _, own_bounds = check_gemm.expected_stats(
            c.astype(np.float32), output)
        for field in (5, 6):
            if abs(grad[field] - own[field]) > own_bounds[field]:
                failures.append(
                    f"grad stats {check_gemm.GRAD_FIELDS[field]}: "
                    f"{grad[field]!r} vs {own[field]!r} of the stored C "
                    f"(bound {own_bounds[field]:.3g})")
    # A count may differ only by the elements within e of its threshold.
    near = lambda t: int((np.abs(ax - t) <= e).sum())
    slack = [0, near(2.0**-25), near(2.0**-14), near(65504.0)]
    for i, (got, want) in enumerate(zip(cast, want_cast)):
        if abs(int(got) - int(want)) > slack[i]:
            failures.append(f"cast stats [{i}]: {got} vs {want}")
    return failures


def outputs_of(cfg, buffers):
    """C, and with the statistics, grad stats, cast stats and partials."""
    if not cfg["statistics"]:
        return [buffers[-1].cpu().numpy()]
    c, partials, grad, cast = (t.cpu().numpy() for t in buffers[-4:])
    return [c, grad, cast, partials]


def is_decision(cfg):
    return cfg.get("type") == "decision"


def decision_case(cfg, root, case):
    """@decide's results on the CPU for one case, and the kernel's inputs."""
    directory = os.path.join(root, case["outputs"])
    results = {name: np.load(os.path.join(directory, f"output_{i}.npy"))
               for i, name in enumerate(cfg["outputs"])}
    inputs = []
    for name in cfg["inputs"]:
        if name == "alpha":
            inputs.append(np.array([case["alpha"]], np.float32))
        elif name.startswith("scale"):
            inputs.append(results["scales"][int(name[len("scale"):])]
                          .reshape(1))
        else:
            inputs.append(results[name])
    return results, inputs


def compare_decision(cfg, results, scale, estimate):
    """Failures of a kernel's scale (and estimate) against the CPU's."""
    failures = []
    want = results["scales"][cfg["scale"]]
    got = np.float32(scale[0])
    if cfg["rounded"] or not np.isfinite(want):
        same = got.tobytes() == want.tobytes()
    else:
        same = abs(float(got) - float(want)) <= float(np.spacing(want))
    if not same:
        failures.append(f"scale {float(got)!r} vs {float(want)!r}")
    if cfg["estimate"] is not None:
        want = float(results["estimates"][cfg["estimate"]])
        got = float(estimate[0])
        if not (got == want or (np.isnan(got) and np.isnan(want)) or
                abs(got - want) <= ESTIMATE_RTOL * abs(want)):
            failures.append(f"estimate {got!r} vs {want!r}")
    return failures


def check_decision(driver, torch, cfg, root, chip):
    """Runs a decision kernel on every case, twice; True if one failed."""
    failures, deterministic = [], True
    for case in cfg["cases"]:
        results, inputs = decision_case(cfg, root, case)
        buffers = [torch.from_numpy(np.ascontiguousarray(x)).cuda()
                   for x in inputs]
        outputs = []
        for arg in cfg["arguments"][len(inputs):]:
            outputs.append(torch.zeros(arg["shape"],
                                       dtype=torch_dtypes(torch)[arg["dtype"]],
                                       device="cuda"))
        run = prepare_kernels(driver, torch, cfg, root, chip,
                              buffers + outputs)
        runs = []
        for _ in range(2):
            for t in outputs:
                t.zero_()
            run()
            torch.cuda.synchronize()
            runs.append([t.cpu().numpy() for t in outputs])
        # A unify kernel writes a scale and no estimate.
        scale, estimate = runs[0][0], (runs[0][1] if cfg["estimate"]
                                       is not None else None)
        failures += [f"{case['name']}: {f}"
                     for f in compare_decision(cfg, results, scale, estimate)]
        deterministic &= all(a.tobytes() == b.tobytes()
                             for a, b in zip(*runs))
    print(f"{'FAIL' if failures else 'PASS'} correct {cfg['name']}: "
          f"{len(cfg['cases'])} cases against the CPU's decisions"
          + "".join(f"\n    {f}" for f in failures))
    print(f"{'PASS' if deterministic else 'FAIL'} deterministic "
          f"{cfg['name']}: two runs "
          f"{'bit-identical' if deterministic else 'differ'}")
    return bool(failures) or not deterministic


def time_ms(torch, body, iterations=20):
    for _ in range(3):
        body()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iterations):
        body()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / iterations


def torch_statistics(torch, c, scale):
    """The fields the fused epilogue gathers, as separate PyTorch ops."""
    x = c.float() * scale
    a = x.abs()
    nonzero = a > 0
    logs = torch.where(nonzero, a, torch.ones_like(a)).log()
    h = x.half().float().abs()
    return torch.stack([x.sum(), (x * x).sum(), a.amax(), nonzero.sum(),
                        logs.sum(), (logs * logs).sum(), (x != 0).sum(),
                        ((x != 0) & (h == 0)).sum(),
                        ((h > 0) & (h < 2.0**-14)).sum(),
                        (h == float("inf")).sum()])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--artifacts", required=True)
    parser.add_argument("--configs", help="comma-separated names (default all)")
    parser.add_argument("--no-perf", action="store_true")
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("--check-outputs", metavar="DIR",
                        help="check C and the statistics in DIR/output_{0,1,2}"
                        ".npy (from gs-run on the emulated kernel) by the GPU "
                        "rules, with NumPy; no GPU needed")
    args = parser.parse_args()
    with open(os.path.join(args.artifacts, "manifest.json")) as f:
        manifest = json.load(f)
    if args.configs:
        names = set(args.configs.split(","))
        manifest = [c for c in manifest if c["name"] in names]
    if args.dry_run:
        sys.exit(1 if dry_run(manifest, args.artifacts) else 0)
    if args.check_outputs:
        failed = False
        for cfg in manifest:
            if is_decision(cfg):
                # DIR/<case>/output_{0,1}.npy: @decide's scales and
                # estimates from the emulated kernels.
                failures = []
                for case in cfg["cases"]:
                    results, _ = decision_case(cfg, args.artifacts, case)
                    emulated = [np.load(os.path.join(
                        args.check_outputs, case["name"], f"output_{i}.npy"))
                        for i in (0, 1)]
                    scale = emulated[0][cfg["scale"]:cfg["scale"] + 1]
                    estimate = (None if cfg["estimate"] is None else
                                emulated[1][cfg["estimate"]:][:1])
                    failures += [f"{case['name']}: {f}" for f in
                                 compare_decision(cfg, results, scale,
                                                  estimate)]
                failed |= bool(failures)
                print(f"{'FAIL' if failures else 'PASS'} correct "
                      f"{cfg['name']}" + "".join(f"\n    {f}"
                                                  for f in failures))
                continue
            arrays = make_arrays(cfg)
            outputs = [np.load(os.path.join(args.check_outputs,
                                            f"output_{i}.npy"))
                       for i in range(3 if cfg["statistics"] else 1)]
            failures = check_correct(None, cfg, arrays, outputs)
            failed |= bool(failures)
            print(f"{'FAIL' if failures else 'PASS'} correct {cfg['name']}"
                  + "".join(f"\n    {f}" for f in failures))
        sys.exit(1 if failed else 0)

    import torch
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    # FP32 baselines in FP32, not TF32.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.zeros(1, device="cuda")  # the primary context, current here
    major, minor = torch.cuda.get_device_capability()
    chip = "sm_90" if major >= 9 else "sm_80"
    # sm_90a PTX runs on compute capability 9.0 and nothing else.
    specific = "sm_90a" if (major, minor) == (9, 0) else None
    print(f"device: {torch.cuda.get_device_name()} (sm_{major}{minor}), "
          f"running the {chip} PTX"
          f"{' and the sm_90a (wgmma) PTX' if specific else ''}; "
          f"torch {torch.__version__}")
    driver = Driver()
    failed = False
    times, cublas_times = {}, {}
    for cfg in manifest:
        name = cfg["name"]
        if is_decision(cfg):
            failed |= check_decision(driver, torch, cfg, args.artifacts, chip)
            continue
        config_chip = chip
        if "sm_90a" in cfg["launches"][0]["ptx"]:
            if not specific:
                print(f"SKIP {name}: its wgmma kernels need compute "
                      f"capability 9.0 (sm_90a), this GPU is sm_{major}{minor}")
                continue
            config_chip = specific
        arrays, buffers = make_buffers(torch, cfg)
        run = prepare_kernels(driver, torch, cfg, args.artifacts, config_chip,
                              buffers)
        run()
        torch.cuda.synchronize()
        first = outputs_of(cfg, buffers)
        failures = check_correct(torch, cfg, arrays, first)
        failed |= bool(failures)
        print(f"{'FAIL' if failures else 'PASS'} correct {name} "
              f"{cfg['m']}x{cfg['n']}x{cfg['k']} {cfg['kind']}"
              + "".join(f"\n    {f}" for f in failures))
        for t in buffers[len(buffers) - (4 if cfg["statistics"] else 1):]:
            t.zero_()
        run()
        torch.cuda.synchronize()
        second = outputs_of(cfg, buffers)
        same = all(x.tobytes() == y.tobytes() for x, y in zip(first, second))
        failed |= not same
        print(f"{'PASS' if same else 'FAIL'} deterministic {name}: two runs "
              f"{'bit-identical' if same else 'differ'}")
        if args.no_perf or not cfg["timed"]:
            continue
        flops = 2.0 * cfg["m"] * cfg["n"] * cfg["k"]
        fused = time_ms(torch, run)
        times[name] = fused
        if is_eval_conv(cfg):
            conv = convolution(torch, cfg)
            x, w = buffers[0], buffers[1]
            baseline = time_ms(torch, lambda: conv(x, w))
            cublas_times[name] = baseline
            tf = lambda ms: flops / ms / 1e9
            print(f"PERF {name} {cfg['m']}x{cfg['n']}x{cfg['k']}: kernel "
                  f"{tf(fused):.2f} TFLOP/s ({fused:.3f} ms), cuDNN FP32 "
                  f"{tf(baseline):.2f} ({baseline:.3f} ms); kernel / cuDNN "
                  f"{baseline / fused:.2f}x throughput")
            continue
        if is_conv(cfg):
            conv = convolution(torch, cfg)
            x, w = conv_layout(cfg["conv"], buffers[1], buffers[0], torch)
            product = lambda: conv(x, w)
            library = "cuDNN"
        else:
            a = buffers[0].t() if cfg["trans_a"] else buffers[0]
            b = buffers[1].t() if cfg["trans_b"] else buffers[1]
            product = lambda: torch.matmul(a, b)
            library = "cuBLAS"
        baseline = time_ms(torch, product)
        cublas_times[name] = baseline
        scale = float(cfg["scale"])
        with_stats = time_ms(torch, lambda: torch_statistics(
            torch, product(), scale))
        tf = lambda ms: flops / ms / 1e9
        print(f"PERF {name} {cfg['m']}x{cfg['n']}x{cfg['k']}: fused "
              f"{tf(fused):.1f} TFLOP/s ({fused:.3f} ms), {library} FP16 "
              f"{tf(baseline):.1f} ({baseline:.3f} ms), {library} + PyTorch "
              f"statistics {with_stats:.3f} ms; fused / {library} "
              f"{baseline / fused:.2f}x throughput, fused vs {library} + "
              f"statistics {with_stats / fused:.2f}x faster")
    for kernel in ("gemm4096", "wgmma4096"):
        if kernel in times and kernel + "_nostats" in times:
            cost = times[kernel] / times[kernel + "_nostats"] - 1
            print(f"PERF statistics cost of {kernel}: {100 * cost:+.1f}% over "
                  f"the same kernel without them (target <= 5%: "
                  f"{'met' if cost <= 0.05 else 'NOT met'})")
    blocked = "eval_resnet_conv3x3"
    if blocked in times and blocked + "_unblocked" in times:
        ratio = times[blocked + "_unblocked"] / times[blocked]
        print(f"PERF register blocks on {blocked}: {ratio:.2f}x the "
              "throughput of an output a thread")
    if "wgmma4096" in cublas_times:
        ratio = cublas_times["wgmma4096"] / times["wgmma4096"]
        print(f"PERF wgmma at 4096^3: {ratio:.2f}x cuBLAS's throughput "
              f"(target >= 0.70x: {'met' if ratio >= 0.70 else 'NOT met'})")
    # The wgmma pipelines of the same 4096^3 GEMM with statistics (stages,
    # block-k, blocks per multiprocessor, a wgmma group in flight): each
    # against the default and cuBLAS, and which is fastest.
    configs = {c["name"]: c for c in manifest}
    variants = [name for name in times
                if name.startswith("wgmma4096") and "nostats" not in name
                and name in cublas_times
                and not configs[name]["trans_a"]
                and not configs[name]["trans_b"]]
    if "wgmma4096" in variants and len(variants) > 1:
        for name in sorted(variants, key=lambda v: times[v]):
            print(f"PERF wgmma pipeline {name}: "
                  f"{times['wgmma4096'] / times[name]:.2f}x the default's "
                  f"throughput, {cublas_times[name] / times[name]:.2f}x "
                  "cuBLAS's")
        best = min(variants, key=lambda v: times[v])
        print(f"PERF fastest wgmma pipeline at 4096^3: {best} "
              f"({configs[best].get('options', '')})")
    print("FAIL" if failed else "PASS", "all GPU kernel checks")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
