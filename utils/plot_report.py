#!/usr/bin/env python3
"""Plots GradScale training reports (gs-compile executables' --report).

Usage: plot_report.py REPORT.json [REPORT.json ...] [-o OUTDIR] [--smooth N]

Writes to OUTDIR (default: the current directory):
  loss.png                   the training loss of every report, one curve
                             per run (labelled by its scaling method)
  scales-<label>.png         per gradient tensor, log2 of its scale over the
                             steps (the paper's Figure 2)
  underflow-<label>.png      per gradient tensor, the measured underflow rate
                             and the model's estimate (the paper's Figure 3)
for every report that has scaling telemetry. Needs matplotlib.
"""

import argparse
import json
import math
import os
import sys


def load(path):
    try:
        with open(path) as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"plot_report.py: cannot read '{path}': {e}")
    if report.get("schema") != "gradscale.training-report/2":
        sys.exit(f"plot_report.py: '{path}' is not a GradScale training "
                 "report (schema gradscale.training-report/2)")
    return report


def smooth(values, window):
    """Moving average over `window` values, skipping nulls and NaNs."""
    out = []
    for i in range(len(values)):
        kept = [v for v in values[max(0, i - window + 1):i + 1]
                if v is not None and not math.isnan(v)]
        out.append(sum(kept) / len(kept) if kept else math.nan)
    return out


def label_of(report, path, labels):
    label = report["model"]["scaling"]
    if labels.count(label) > 0:
        label = f"{label} ({os.path.basename(path)})"
    labels.append(label)
    return label


def site_label(site, index):
    # "fT: FP32->FP16 cast of a gradient at /loss/..." -> "fT /loss/..."
    text = site["site"]
    kind = text.split(":")[0] if ":" in text else site["name"]
    where = text.rsplit(" at ", 1)[-1] if " at " in text else ""
    return f"{index}: {kind} {where}".strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+")
    parser.add_argument("-o", "--output", default=".")
    parser.add_argument("--smooth", type=int, default=20,
                        help="moving-average window of the loss (steps)")
    args = parser.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot_report.py: needs matplotlib (pip install matplotlib)")
    os.makedirs(args.output, exist_ok=True)
    reports = [(path, load(path)) for path in args.reports]
    labels = []
    written = []

    fig, ax = plt.subplots(figsize=(7, 4))
    for path, report in reports:
        label = label_of(report, path, labels)
        ax.plot(report["loss"]["step"],
                smooth(report["loss"]["value"], max(1, args.smooth)),
                label=label, linewidth=1.2)
    ax.set_xlabel("step")
    ax.set_ylabel(f"training loss (mean of {args.smooth} steps)")
    ax.set_title(f"{reports[0][1]['model']['name']}: loss per method")
    ax.legend()
    fig.tight_layout()
    written.append(os.path.join(args.output, "loss.png"))
    fig.savefig(written[-1], dpi=120)
    plt.close(fig)

    for (path, report), label in zip(reports, labels):
        sites = report["sites"]
        if not sites:
            continue
        tag = "".join(c if c.isalnum() else "-" for c in label).strip("-")
        fig, ax = plt.subplots(figsize=(7, 4))
        for i, site in enumerate(sites):
            scales = [math.log2(s) if s and s > 0 else math.nan
                      for s in site["scale"]]
            ax.plot(site["step"], scales, label=site_label(site, i),
                    linewidth=1)
        ax.set_xlabel("step")
        ax.set_ylabel("log2 scale")
        ax.set_title(f"per-tensor gradient scales ({label})")
        ax.legend(fontsize=7)
        fig.tight_layout()
        written.append(os.path.join(args.output, f"scales-{tag}.png"))
        fig.savefig(written[-1], dpi=120)
        plt.close(fig)

        fig, ax = plt.subplots(figsize=(7, 4))
        window = max(1, args.smooth)
        for i, site in enumerate(sites):
            line, = ax.plot(site["step"],
                            smooth(site["measured_underflow"], window),
                            label=f"{site_label(site, i)} measured",
                            linewidth=1)
            if any(r is not None for r in site["estimated_underflow"]):
                ax.plot(site["step"],
                        smooth(site["estimated_underflow"], window),
                        linestyle="--", color=line.get_color(),
                        label=f"{site_label(site, i)} estimated",
                        linewidth=1)
        ax.set_yscale("symlog", linthresh=1e-6)
        ax.set_xlabel("step")
        ax.set_ylabel(f"FP16 underflow rate (mean of {window} steps)")
        ax.set_title(f"underflow per gradient tensor ({label})")
        ax.legend(fontsize=7)
        fig.tight_layout()
        written.append(os.path.join(args.output, f"underflow-{tag}.png"))
        fig.savefig(written[-1], dpi=120)
        plt.close(fig)

    for path in written:
        print(path)


if __name__ == "__main__":
    main()
