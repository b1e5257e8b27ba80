"""The experiments' plots (PNG), from the training reports of seed 0.

Per model:
  loss-NAME.png                the training loss per mode (moving average)
  scales-NAME.png              per rounding, the distribution over the
                               steps of log2 of the scale its FP16 gradient
                               carries under gs (arrived with x chosen at
                               the rounding; Fig. 2)
  scales-over-steps-NAME.png   the same per step (Fig. 3b)
  underflow-model-NAME.png     per rounding, the model's estimated
                               underflow against the measured one, for each
                               gs scale model (mean over the steps)
  underflow-training-NAME.png  per rounding, the measured underflow over
                               training for none, dynamic and gs
"""

import json
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

FLOOR = 1e-7  # where a zero rate is drawn on a log axis
NAMES = ["loss-{}.png", "scales-{}.png", "scales-over-steps-{}.png",
         "underflow-model-{}.png", "underflow-training-{}.png"]


def smooth(values, window):
    out, kept = [], []
    for v in values:
        kept.append(v if v is not None and math.isfinite(v) else math.nan)
        recent = [x for x in kept[-window:] if not math.isnan(x)]
        out.append(sum(recent) / len(recent) if recent else math.nan)
    return out


def tensor_scales(site):
    """log2 of the scale the rounded FP16 tensor carries: the scale it
    arrived with times the one its rounding chose."""
    return [math.log2(a * b) if a and b and a > 0 and b > 0 else math.nan
            for a, b in zip(site["scale"], site["site_scale"])]


def short(site):
    return site["name"].replace("gs.scaling.", "")


def save(figure, path):
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)


def draw_model(work, name, modes, out):
    reports = {}
    for mode in modes:
        with open(work / name / f"{mode}-s0.json") as f:
            reports[mode] = json.load(f)
    window = max(1, len(reports["fp32"]["loss"]["value"]) // 30)

    figure, axes = plt.subplots(figsize=(8, 4.5))
    for mode, r in reports.items():
        axes.plot(r["loss"]["step"], smooth(r["loss"]["value"], window),
                  label=mode,
                  linewidth=2 if mode in ("fp32", "gs") else 1)
    axes.set(title=f"{name}: training loss ({window}-step average)",
             xlabel="step", ylabel="loss", yscale="log")
    axes.legend(fontsize=7, ncol=2)
    save(figure, out / f"loss-{name}.png")

    gs = reports.get("gs", {}).get("sites") or []
    figure, axes = plt.subplots(figsize=(max(6, 0.5 * len(gs) + 2), 4.5))
    data = [[v for v in tensor_scales(site) if not math.isnan(v)] or [0]
            for site in gs]
    if data:
        axes.boxplot(data, labels=[short(s) for s in gs])
    axes.set(title=f"{name}: log2 of each FP16 gradient's scale under gs "
             "(over the steps)", ylabel="log2 scale")
    axes.tick_params(axis="x", rotation=90, labelsize=7)
    save(figure, out / f"scales-{name}.png")

    figure, axes = plt.subplots(figsize=(8, 4.5))
    for site in gs:
        axes.plot(site["step"], tensor_scales(site), label=short(site),
                  linewidth=1)
    axes.set(title=f"{name}: each FP16 gradient's scale under gs over "
             "training", xlabel="step", ylabel="log2 scale")
    if gs:
        axes.legend(fontsize=6, ncol=3)
    save(figure, out / f"scales-over-steps-{name}.png")

    figure, axes = plt.subplots(figsize=(6, 5))
    for mode, marker in (("gs", "o"), ("gs-hist", "s"),
                         ("gs-hist-all", "^")):
        sites = reports.get(mode, {}).get("sites") or []
        points = []
        for site in sites:
            est = [e for e in site["estimated_underflow"]
                   if e is not None and math.isfinite(e)]
            mea = [m for m in site["measured_underflow"]
                   if m is not None and math.isfinite(m)]
            if est and mea:
                points.append((max(sum(est) / len(est), FLOOR),
                               max(sum(mea) / len(mea), FLOOR)))
        if points:
            axes.scatter(*zip(*points), marker=marker, label=mode, alpha=0.7)
    axes.plot([FLOOR, 1], [FLOOR, 1], "k:", linewidth=1, label="measured = "
              "estimated")
    axes.axhline(1e-3, color="r", linewidth=1, label="target 1e-3")
    axes.set(title=f"{name}: estimated vs measured underflow\n(mean per "
             f"rounding; zero drawn at {FLOOR:g})", xscale="log",
             yscale="log", xlabel="estimated", ylabel="measured")
    axes.legend(fontsize=7)
    save(figure, out / f"underflow-model-{name}.png")

    shown = [m for m in ("none", "dynamic", "gs") if m in reports]
    figure, panels = plt.subplots(1, len(shown), sharey=True,
                                  figsize=(4 * len(shown), 4.2),
                                  squeeze=False)
    for axes, mode in zip(panels[0], shown):
        for site in reports[mode].get("sites") or []:
            axes.plot(site["step"],
                      [max(v, FLOOR) if v is not None and math.isfinite(v)
                       else math.nan
                       for v in smooth(site["measured_underflow"], window)],
                      label=short(site), linewidth=1)
        axes.axhline(1e-3, color="r", linewidth=1)
        axes.set(title=f"{mode}", xlabel="step", yscale="log")
    panels[0][0].set(ylabel="measured underflow (flushed / nonzero)")
    if reports[shown[0]].get("sites"):
        panels[0][-1].legend(fontsize=6, ncol=2)
    figure.suptitle(f"{name}: underflow per rounding over training")
    save(figure, out / f"underflow-training-{name}.png")


def draw(work, collected, out):
    for name, model in collected["models"].items():
        draw_model(work, name, list(model["modes"]), out)
