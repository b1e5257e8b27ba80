"""GradScale: mixed-precision training without loss-scale tuning.

GradScale compiles an ONNX model and its loss into a train step in mixed
precision (FP16 activations and gradients, FP32 master weights) in which
every gradient tensor gets its own power-of-two scale from a model of its
FP16 underflow rate, then runs it on the CPU::

    import gradscale, numpy as np
    trainer = gradscale.compile("mlp.onnx", input_shapes={"x": (64, 784)},
                                optimizer={"name": "momentum", "lr": 0.01})
    out = trainer.step(x=batch, target=labels)   # {"loss": array(...)}
    print(out["loss"], trainer.telemetry()[0]["scale"])

`compile` returns a `Trainer`; `import_onnx` returns a `Module` (the
compiler's IR, for compiler users). Errors are `GradScaleError`s whose
message carries the compiler's diagnostics.
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple, Union

import numpy as np

from ._gradscale import GradScaleError, Module
from . import _gradscale

__all__ = ["compile", "import_onnx", "Trainer", "Module", "GradScaleError",
           "SCALINGS"]

#: The gradient-precision methods: per-tensor gradient scaling, fixed and
#: dynamic loss scaling, FP16 unscaled, and FP32 training.
SCALINGS = ("gs", "fixed", "dynamic", "none", "fp32")

_OPTIMIZER_KEYS = {"name": "optimizer", "lr": "lr", "learning_rate": "lr",
                   "loss": "loss", "momentum": "momentum",
                   "dampening": "dampening", "weight_decay": "weight_decay",
                   "beta1": "beta1", "beta2": "beta2", "epsilon": "epsilon",
                   "lr_decay": "lr_decay"}


def _model_source(model: Any) -> Tuple[bytes, bool, str, str]:
    """The model's bytes, whether they are ONNX text, its name, and the
    directory its external data is relative to."""
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise GradScaleError(f"cannot read the model '{path}': "
                                 f"{e.strerror}") from None
        return (data, path.endswith(".onnxtext"), path,
                os.path.dirname(os.path.abspath(path)))
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model), False, "<bytes>", os.getcwd()
    if hasattr(model, "SerializeToString"):  # onnx.ModelProto
        graph = getattr(getattr(model, "graph", None), "name", "") or "model"
        return (model.SerializeToString(), False,
                f"<onnx.ModelProto {graph}>", os.getcwd())
    raise TypeError("model must be a path, bytes or an onnx.ModelProto, "
                    f"got {type(model).__name__}")


def _shape_specs(input_shapes: Optional[Mapping[str, Iterable[int]]]
                 ) -> List[str]:
    specs = []
    for name, shape in (input_shapes or {}).items():
        dims = [int(d) for d in shape]
        specs.append(f"{name}=" + "x".join(str(d) for d in dims))
    return specs


def _training_spec(optimizer: Union[None, str, Mapping[str, Any]]) -> str:
    """ONNX training options (`--onnx-train`) from `optimizer`."""
    if optimizer is None:
        return ""
    if isinstance(optimizer, str):
        return f"optimizer={optimizer}"
    parts = []
    for key, value in optimizer.items():
        if key not in _OPTIMIZER_KEYS:
            raise GradScaleError(
                f"optimizer: unknown key '{key}' (expected one of "
                f"{', '.join(sorted(_OPTIMIZER_KEYS))})")
        parts.append(f"{_OPTIMIZER_KEYS[key]}={_option_value(key, value)}")
    return " ".join(parts)


def _option_value(key: str, value: Any) -> str:
    """`value` as the compiler's option parser reads it."""
    if value is None:
        raise GradScaleError(f"{key}: None is not a value")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        if not value:
            raise GradScaleError(f"{key}: an empty list is not a value")
        return ",".join(_option_value(key, v) for v in value)
    text = str(value)
    if not text or any(c in text for c in " \t\"'{}="):
        raise GradScaleError(f"{key}: {text!r} is not a value the option "
                             "parser can read")
    return text


def import_onnx(model: Any, input_shapes: Optional[Mapping[str, Iterable[int]]]
                = None, optimizer: Union[None, str, Mapping[str, Any]] = None
                ) -> Module:
    """Imports an ONNX model into GradScale's IR (the gs dialect).

    model: a path (.onnx, or ONNX's text format .onnxtext), the model's
        bytes, or an onnx.ModelProto.
    input_shapes: static shapes for inputs with dynamic dimensions, e.g.
        {"x": (64, 1, 28, 28)}.
    optimizer: how to train a model without ONNX training information: a
        name ("sgd", "momentum", "nesterov", "adagrad", "adam") or a dict
        such as {"name": "adam", "lr": 1e-3, "loss": "loss"}.

    `str(module)` is its MLIR; `module.run_pipeline("builtin.module(...)")`
    runs passes on it (e.g. gs-train-step, gs-autodiff).
    """
    data, text, name, directory = _model_source(model)
    return _gradscale._import_onnx(data, text, name, directory,
                                   _shape_specs(input_shapes),
                                   _training_spec(optimizer))


def compile(model: Any,  # noqa: A001 - the package's verb
            input_shapes: Optional[Mapping[str, Iterable[int]]] = None,
            optimizer: Union[None, str, Mapping[str, Any]] = None,
            scaling: str = "gs", target: str = "cpu", cpu: str = "native",
            **scaling_options: Any) -> "Trainer":
    """Compiles a model's mixed-precision train step and loads it.

    model, input_shapes, optimizer: as for `import_onnx`; model may also be
        a `Module` import_onnx returned (it is left unchanged).
    scaling: "gs" (per-tensor gradient scaling), "fixed" or "dynamic" (loss
        scaling), "none" (FP16 unscaled) or "fp32".
    target: "cpu" (the only target so far).
    cpu: "native" (this machine), "generic" or an LLVM CPU name.
    scaling_options: any option of gs-opt's --gs-train, with underscores,
        e.g. threshold=1e-4, interval=8, loss_scale=1024 (fixed),
        init_scale=65536 (dynamic), cast_model="exponent_histogram".
        fp16_weight_copies=True gives the step FP16 weight copies (off,
        as gs-compile's default for the CPU, whose GEMMs round the FP32
        weights as they pack them).

    Returns a `Trainer` whose `step(**inputs)` trains one step.
    """
    if scaling not in SCALINGS:
        raise GradScaleError(f"scaling: expected one of {', '.join(SCALINGS)},"
                             f" got '{scaling}'")
    if target != "cpu":
        raise GradScaleError(f"target: only 'cpu' is supported so far, got "
                             f"'{target}'")
    if isinstance(model, Module):
        if input_shapes or optimizer:
            raise GradScaleError("input_shapes and optimizer apply when "
                                 "importing; pass them to import_onnx")
        module = model
    else:
        module = import_onnx(model, input_shapes, optimizer)
    options = [f"scaling={scaling}"]
    for key, value in scaling_options.items():
        options.append(f"{key.replace('_', '-')}={_option_value(key, value)}")
    return Trainer(_gradscale._compile(module, " ".join(options), cpu))


class Trainer:
    """A compiled train step and eval step in this process, with its
    parameters, optimizer state and scaling telemetry."""

    def __init__(self, compiled: Any):
        self._compiled = compiled
        # The loss of each step taken, for checkpoints.
        self._losses: List[float] = []
        self._loss_name: Optional[str] = compiled.loss_name("train_step")

    # Entries -------------------------------------------------------------

    def inputs(self, entry: str = "train_step") -> List[Tuple[str, str, List[int]]]:
        """(name, dtype, shape) of each input of `entry`."""
        return [tuple(i) for i in self._compiled.inputs(entry)]

    def outputs(self, entry: str = "train_step") -> List[Tuple[str, str, List[int]]]:
        """(name, dtype, shape) of each output of `entry`."""
        return [tuple(o) for o in self._compiled.outputs(entry)]

    def _run(self, entry: str, args: Tuple[Any, ...],
             kwargs: Dict[str, Any]) -> Dict[str, np.ndarray]:
        specs = self._compiled.inputs(entry)
        names = [name for name, _, _ in specs]
        if len(args) > len(specs):
            raise GradScaleError(f"{entry} takes {len(specs)} inputs "
                                 f"({', '.join(names)}), got {len(args)}")
        values = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in names:
                raise GradScaleError(f"{entry} has no input '{key}' "
                                     f"(its inputs: {', '.join(names)})")
            if key in values:
                raise GradScaleError(f"input '{key}' is given twice")
            values[key] = value
        missing = [n for n in names if n not in values]
        if missing:
            raise GradScaleError(f"{entry}: missing input "
                                 f"{', '.join(repr(m) for m in missing)}")
        arrays = []
        for name, dtype, shape in specs:
            arrays.append(_as_input(values[name], name, dtype))
        return self._compiled.run(entry, arrays)

    def step(self, *args: Any, **inputs: Any) -> Dict[str, np.ndarray]:
        """Trains one step on the inputs (NumPy arrays, or torch tensors
        through DLPack); returns the step's outputs by name."""
        outputs = self._run("train_step", args, inputs)
        if self._loss_name is not None:
            self._losses.append(float(outputs[self._loss_name]))
        return outputs

    def evaluate(self, *args: Any, **inputs: Any) -> Dict[str, np.ndarray]:
        """The forward outputs on the inputs, changing nothing (batch-norm
        statistics stay); for a classification loss (cross-entropy or NLL)
        also its class "scores" and their "targets"."""
        if not self._compiled.has_entry("eval_step"):
            raise GradScaleError("the model has no eval_step")
        return self._run("eval_step", args, inputs)

    # State ---------------------------------------------------------------

    def parameters(self, state: bool = False) -> Dict[str, np.ndarray]:
        """Weights and buffers by name (copies); with `state`, also the
        optimizer, step and scaling state."""
        return self._compiled.parameters(state)

    def load_parameters(self, values: Mapping[str, Any]) -> None:
        """Sets parameters by name; every value is checked before any is
        set."""
        converted = {}
        specs = {name: dtype for name, dtype, _ in
                 self._compiled.parameter_specs()}
        for name, value in values.items():
            if name not in specs:
                raise GradScaleError(f"the model has no parameter '{name}'")
            converted[name] = _as_input(value, name, specs[name])
        self._compiled.load_parameters(converted)

    def telemetry(self) -> List[Dict[str, Any]]:
        """One record per FP32->FP16 rounding of a gradient, from the last
        step: its accumulated scale, the scale chosen there, the model's
        estimated and the measured underflow rate, and the counts."""
        return self._compiled.telemetry()

    @property
    def step_count(self) -> int:
        """Steps taken (skipped steps excluded)."""
        return self._compiled.counter("gs.step")

    @property
    def skipped_steps(self) -> int:
        """Steps whose updates a non-finite gradient skipped."""
        return self._compiled.counter("gs.skipped_steps")

    @property
    def scaling(self) -> str:
        return self._compiled.scaling

    def reset(self) -> None:
        """Every parameter back to its initial value."""
        self._compiled.reset()
        self._losses = []

    def save_checkpoint(self, path: Union[str, os.PathLike]) -> None:
        """Writes every parameter and the step count (the executables'
        checkpoint format), atomically."""
        # The C++ side counts the steps and keeps the history's tail.
        self._compiled.save_checkpoint(os.fspath(path), self._losses)

    def load_checkpoint(self, path: Union[str, os.PathLike]) -> None:
        """Loads a checkpoint of this model; on an error nothing changes."""
        losses, problems = self._compiled.load_checkpoint(os.fspath(path))
        self._losses = list(losses)
        for problem in problems:
            warnings.warn(problem, RuntimeWarning, stacklevel=2)

    def export_onnx(self, path: Union[str, os.PathLike]) -> None:
        """Writes the ONNX model compiled, with the trained weights."""
        self._compiled.export_onnx(os.fspath(path))


def _as_input(value: Any, name: str, dtype: str) -> Any:
    """`value` as an array of `dtype`: NumPy arrays are converted only when
    their type or layout differs (same-kind casts only); objects with
    __dlpack__ (torch tensors) pass as they are and must match."""
    if not isinstance(value, np.ndarray) and hasattr(value, "__dlpack__"):
        # A tensor that records gradients exports through DLPack detached.
        return value.detach() if hasattr(value, "detach") else value
    array = np.asarray(value)
    if array.dtype != np.dtype(dtype):
        if not np.can_cast(array.dtype, dtype, casting="same_kind"):
            raise GradScaleError(f"input '{name}' is {array.dtype}, which "
                                 f"does not convert to {dtype}")
        array = array.astype(dtype)
    # np.require keeps 0-d arrays 0-d (np.ascontiguousarray does not).
    return np.require(array, requirements="C")
