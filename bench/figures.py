"""Figure lines of the latency benchmarks: one `name tags n=N: p50=… ms p99=… ms` per measurement."""

from __future__ import annotations

import os
import platform
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt


def percentiles_ms(seconds: Sequence[float] | npt.NDArray[np.float64]) -> tuple[float, float]:
    """p50 and p99 (linear interpolation) of durations given in seconds, in milliseconds."""
    values = np.asarray(seconds, dtype=np.float64) * 1000.0
    if values.size == 0:
        raise ValueError("no measurements")
    p50, p99 = np.percentile(values, [50, 99])
    return float(p50), float(p99)


def figure(name: str, seconds: Sequence[float] | npt.NDArray[np.float64], **labels: object) -> str:
    p50, p99 = percentiles_ms(seconds)
    tags = " ".join(f"{key}={value}" for key, value in labels.items())
    return f"{name} {tags} n={len(seconds)}: p50={p50:.3f} ms p99={p99:.3f} ms"


def setup_line() -> str:
    cpus = os.cpu_count()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cpus
    return (
        f"setup: cpus={cpus} usable={usable} python={platform.python_version()} "
        f"numpy={np.__version__} platform={platform.platform()}"
    )


def emit(out: list[str], *lines: str) -> None:
    for line in lines:
        print(line, flush=True)
        out.append(line)
