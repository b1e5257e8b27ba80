"""The experiments' numbers from the training reports, and RESULTS.md.

collect() reads the reports run.py's executables wrote; write_markdown()
turns the numbers into tables and findings. Every sentence of the findings
is derived from the numbers by a rule stated beside it, so a rerun on
another machine states what that run measured.
"""

import json
import math
import statistics

# gs's default target underflow rate per rounding (--threshold).
THRESHOLD = 1e-3
METRIC_NAMES = {"accuracy": "test accuracy", "miou": "test mean IoU"}
DESCRIPTIONS = {
    "fp32": "FP32 throughout",
    "none": "FP16 gradients, no scaling",
    "fixed-8": "loss scale 8",
    "fixed-128": "loss scale 128",
    "fixed-2048": "loss scale 2048",
    "fixed-32768": "loss scale 32768",
    "dynamic": "dynamic loss scaling (GradScaler's defaults)",
    "gs": "gradient scaling, the paper's models",
    "gs-i10": "gradient scaling, scales recomputed every 10 steps",
    "gs-i100": "gradient scaling, every 100 steps",
    "gs-hist": "gradient scaling, exponent histogram at casts",
    "gs-hist-all": "gradient scaling, exponent histogram at casts and "
                   "contractions",
}


def finite(values):
    return [v for v in values if v is not None and math.isfinite(v)]


def report(work, name, tag):
    with open(work / name / f"{tag}.json") as f:
        return json.load(f)


def count(value):
    """A report's skipped steps: a count, or the list of the steps."""
    return len(value) if isinstance(value, list) else int(value or 0)


def site_summary(site, steps):
    measured = site["measured_underflow"]
    last = [m for s, m in zip(site["step"], measured) if s > 0.9 * steps]
    scales = finite(site["site_scale"])
    return {
        "name": site["name"],
        "where": site["site"],
        "measured_mean": statistics.fmean(finite(measured) or [math.nan]),
        "measured_last_tenth": max(finite(last) or [math.nan]),
        "estimated_mean": statistics.fmean(
            finite(site["estimated_underflow"]) or [math.nan]),
        "steps_over_target": sum(1 for m in finite(measured)
                                 if m > THRESHOLD),
        # Over the target although the model expected to hold it: the
        # model's error (where it expected more, no scale below the
        # overflow cap could hold it: the tensor's range exceeds FP16's).
        "steps_underestimated": sum(
            1 for m, e in zip(measured, site["estimated_underflow"])
            if m is not None and m > THRESHOLD and e is not None and
            e <= THRESHOLD),
        "telemetry_steps": len(measured),
        "median_log2_scale": statistics.median(
            [math.log2(s) for s in scales if s > 0]) if scales else None,
        "overflowed": sum(finite(site["overflow"])),
    }


def unify_summary(unify):
    """A branch unification: how often each part was rescaled, and the
    median log2 of its factor."""
    parts = []
    for part in unify["parts"]:
        factors = finite(part["factor"])
        logs = [math.log2(f) for f in factors if f > 0]
        parts.append({
            "rescaled_steps": sum(1 for f in factors if f != 1),
            "median_log2_factor": statistics.median(logs) if logs else None,
            "min_log2_factor": min(logs) if logs else None,
            "max_log2_factor": max(logs) if logs else None})
    return {"name": unify["name"], "where": unify["site"],
            "telemetry_steps": len(unify["step"]), "parts": parts}


def collect(work, names, table, modes, seeds, seeded, fidelities,
            compile_seconds):
    collected = {"threshold": THRESHOLD, "models": {}}
    for name in names:
        spec = table[name]
        model = {"spec": spec, "modes": {}}
        for mode in modes:
            runs = [report(work, name, f"{mode}-s{seed}")
                    for seed in (seeds if mode in seeded else [0])]
            first = runs[0]
            losses = first["loss"]["value"]
            tenth = finite(losses[-max(1, len(losses) // 10):])
            model["modes"][mode] = {
                "metric": [r["final"]["eval_value"] for r in runs],
                "final_loss": statistics.fmean(tenth) if tenth else None,
                "diverged": len(tenth) < len(losses[-max(
                    1, len(losses) // 10):]),
                "skipped": [count(r["skipped_steps"]) for r in runs],
                "ms_per_step": 1000 / first["run"]["steps_per_s"],
                "compile_s": compile_seconds[name, mode],
                "fidelity": fidelities[name, mode],
                "sites": [site_summary(s, spec["steps"])
                          for s in first.get("sites") or []],
                "unifications": [unify_summary(u)
                                 for u in first.get("unifications") or []],
            }
        collected["models"][name] = model
    return collected


def mean(values):
    values = finite(values)
    return statistics.fmean(values) if values else math.nan


def spread(values):
    values = finite(values)
    return max(values) - min(values) if len(values) > 1 else 0.0


def fmt_metric(values):
    values = [v if v is not None else math.nan for v in values]
    if len(values) == 1:
        return f"{values[0]:.4f}"
    return f"{mean(values):.4f} ± {spread(values) / 2:.4f}"


def fmt_rate(x):
    if x is None or not math.isfinite(x):
        return "-"
    return "0" if x == 0 else f"{x:.1e}"


def verdict(model, mode):
    """How `mode`'s mean metric stands against FP32's: within the FP32
    seeds' range (max - min) of FP32's mean, or below/above by how much."""
    fp32 = model["modes"]["fp32"]["metric"]
    noise = spread(fp32)
    entry = model["modes"][mode]
    value = mean(entry["metric"])
    if entry["diverged"] or not math.isfinite(value):
        return "diverged", value - mean(fp32)
    delta = value - mean(fp32)
    if abs(delta) <= noise:
        return "within noise", delta
    return ("below" if delta < 0 else "above"), delta


def worst_site(entry):
    sites = [s for s in entry["sites"] if math.isfinite(s["measured_mean"])]
    return max(sites, key=lambda s: s["measured_mean"]) if sites else None


def model_table(name, model):
    spec = model["spec"]
    metric = METRIC_NAMES.get(spec["metric"], spec["metric"])
    lines = [f"### {name}", "",
             f"Batch {spec['batch']}, {spec['steps']} steps, "
             f"{spec['optimizer'].replace('optimizer=', '')}; FP32 noise "
             f"(range over {len(model['modes']['fp32']['metric'])} seeds): "
             f"{spread(model['modes']['fp32']['metric']):.4f}.", "",
             f"| mode | {metric} | vs FP32 | final loss | gradient error "
             "(worst parameter) | worst rounding: mean underflow | "
             "skipped | ms/step |",
             "|---|---|---|---|---|---|---|---|"]
    for mode, entry in model["modes"].items():
        state, delta = verdict(model, mode)
        fid = entry["fidelity"]
        gradient = "reference" if mode == "fp32" else "-" if fid is None \
            else (
            f"{fid['error']:.1e} ({fid['worst']:.1e} "
            f"{fid['worst_parameter']})" + (" skipped" if fid["skipped"]
                                            else ""))
        site = worst_site(entry)
        under = "-" if site is None else \
            f"{fmt_rate(site['measured_mean'])} ({site['name']})"
        loss = entry["final_loss"]
        lines.append(
            f"| {mode} | {fmt_metric(entry['metric'])} | "
            f"{'-' if mode == 'fp32' else f'{state} ({delta:+.4f})'} | "
            f"{'diverged' if loss is None else f'{loss:.4f}'} | "
            f"{gradient} | {under} | "
            f"{'/'.join(str(s) for s in entry['skipped'])} | "
            f"{entry['ms_per_step']:.1f} |")
    return lines


def scale_model_table(name, model):
    compared = [m for m in ("gs", "gs-hist", "gs-hist-all")
                if m in model["modes"]]
    if not compared or not model["modes"][compared[0]]["sites"]:
        return []
    lines = [f"#### {name}: the scale models per rounding", "",
             "Measured underflow (mean over the run / worst step of the "
             "last tenth); steps over the 1e-3 target (in brackets those "
             "where the model expected to hold it: its errors; on the "
             "others it expected more, as no scale under the overflow cap "
             "could hold it); the median log2 scale chosen.", "",
             "| rounding | where | " +
             " | ".join(compared) + " |",
             "|---|---|" + "---|" * len(compared)]
    by_mode = {m: {s["name"]: s for s in model["modes"][m]["sites"]}
               for m in compared}
    for site in model["modes"][compared[0]]["sites"]:
        cells = []
        for m in compared:
            s = by_mode[m].get(site["name"])
            if s is None:
                cells.append("-")
                continue
            cells.append(f"{fmt_rate(s['measured_mean'])} / "
                         f"{fmt_rate(s['measured_last_tenth'])}, "
                         f"{s['steps_over_target']} "
                         f"({s['steps_underestimated']})/"
                         f"{s['telemetry_steps']}, "
                         f"2^{s['median_log2_scale']:g}"
                         if s["median_log2_scale"] is not None else "-")
        lines.append(f"| {site['name'].replace('gs.scaling.', '')} | "
                     f"{site['where'][:60]} | " + " | ".join(cells) + " |")
    costs = ", ".join(f"{m} {model['modes'][m]['ms_per_step']:.1f} ms"
                      for m in compared)
    lines += ["", f"Step time: {costs}.", ""]
    unifications = model["modes"]["gs"]["unifications"] \
        if "gs" in model["modes"] else []
    if unifications:
        lines += [f"#### {name}: gs's branch unifications", "",
                  "Per part (in operand order): the steps it was rescaled "
                  "on (factor not 1: below 1 scaled down to keep another "
                  "part from overflowing, above 1 scaled up to the others' "
                  "scale) and the range of log2 of its factor.",
                  "", "| unification | where | parts |", "|---|---|---|"]
        for u in unifications:
            parts = "; ".join(
                f"{p['rescaled_steps']}/{u['telemetry_steps']} steps, "
                + ("-" if p["min_log2_factor"] is None else
                   f"{p['min_log2_factor']:g} to {p['max_log2_factor']:g}")
                for p in u["parts"])
            lines.append(f"| {u['name'].replace('gs.scaling.', '')} | "
                         f"{u['where'][:70]} | {parts} |")
        lines.append("")
    return lines


def findings(collected):
    lines = []
    acceptance = []
    for name, model in collected["models"].items():
        modes = model["modes"]
        lost = [f"{m} ({verdict(model, m)[0]}, {verdict(model, m)[1]:+.4f})"
                for m in modes if m != "fp32" and
                verdict(model, m)[0] in ("below", "diverged")]
        kept = [m for m in modes if m != "fp32" and
                verdict(model, m)[0] in ("within noise", "above")]
        lines.append(f"- **{name}**: " + (
            "modes below FP32 by more than its noise: " + "; ".join(lost)
            if lost else "no mode differs from FP32 by more than its noise"
        ) + (f"; within noise or above: {', '.join(kept)}." if kept
             else "."))
        if "dynamic" in modes and "gs" in modes and \
                verdict(model, "dynamic")[0] in ("below", "diverged") and \
                verdict(model, "gs")[0] in ("within noise", "above"):
            acceptance.append(name)
        over = {m: (sum(s["steps_over_target"] for s in modes[m]["sites"]),
                    sum(s["steps_underestimated"] for s in modes[m]["sites"]))
                for m in ("gs", "gs-hist", "gs-hist-all") if m in modes}
        if over:
            lines.append(
                "  Roundings over the 1e-3 target, counted per rounding and "
                "step (in brackets where the model expected to hold it): " +
                ", ".join(f"{m} {n} ({u})" for m, (n, u) in over.items()) +
                ".")
        none = worst_site(modes["none"]) if "none" in modes else None
        if none is not None and none["measured_mean"] > 0:
            lines.append(
                f"  Without scaling, the worst rounding "
                f"({none['name']}: {none['where'][:70]}) flushes "
                f"{fmt_rate(none['measured_mean'])} of its nonzeros on "
                "average.")
    lines.append("")
    if acceptance:
        lines.append("Dynamic loss scaling falls below FP32 while gs stays "
                     "within FP32's noise on: " + ", ".join(acceptance) +
                     ".")
    else:
        worst = []
        for name, model in collected["models"].items():
            site = worst_site(model["modes"]["dynamic"]) \
                if "dynamic" in model["modes"] else None
            if site is not None:
                worst.append(f"{name} {fmt_rate(site['measured_mean'])}")
        lines.append(
            "No model here has dynamic loss scaling below FP32's noise "
            "with gs within it. With dynamic loss scaling, the rounding "
            "that flushes most flushes on average (of its nonzeros) " +
            ", ".join(worst) + ", too little to move the metric. One "
            "loss scale fails where the gradients' magnitudes span more "
            "than FP16's range (about 2^40 with subnormals) across the "
            "network, which none of these models reaches.")
    return lines


def write_markdown(collected, path, quick, minutes):
    lines = ["# GradScale experiments", "",
             "Generated by `make experiments` (bench/experiments/run.py"
             + (" --quick: a pipeline check, its numbers are not results"
                if quick else "") + ")" +
             (f", its runs in {minutes:.0f} min" if minutes else "") + ". "
             "bench/experiments/README.md says how each number is measured.",
             "", "Modes:", ""]
    first = next(iter(collected["models"].values()))
    lines += [f"- `{m}`: {DESCRIPTIONS[m]}" for m in first["modes"]]
    lines += ["", "## Findings", "",
              "A mode differs from FP32 when its mean metric is further "
              "from FP32's mean than FP32's own range over its seeds.", ""]
    lines += findings(collected)
    lines += ["", "## Per model", ""]
    for name, model in collected["models"].items():
        lines += model_table(name, model) + [""]
        lines += scale_model_table(name, model)
        lines += [f"![loss](loss-{name}.png) "
                  f"![scales](scales-{name}.png) "
                  f"![scales over steps](scales-over-steps-{name}.png) "
                  f"![estimated vs measured](underflow-model-{name}.png) "
                  f"![underflow over training](underflow-training-{name}.png)",
                  ""]
    path.write_text("\n".join(lines) + "\n")
