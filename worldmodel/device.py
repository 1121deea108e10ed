"""One answer to "which device and dtype": used by the hf backend, training and the presets."""

from __future__ import annotations

DTYPE_NAMES = ("auto", "float32", "bfloat16", "float16")


def resolve_device(device: str | None = "auto") -> str:
    """'auto' (or None) means the first CUDA GPU when there is one, else the CPU."""
    import torch

    if device in (None, "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    if not (device == "cpu" or device.startswith(("cuda", "mps", "xpu"))):
        raise ValueError(f"device {device!r} is not cpu, cuda, cuda:N, mps, xpu or auto")
    return device


def resolve_dtype(dtype: str | None, device: str):
    """A torch dtype: 'auto' is bfloat16 on a GPU and float32 on the CPU."""
    import torch

    if dtype in (None, "auto"):
        return torch.float32 if device == "cpu" else torch.bfloat16
    if dtype not in DTYPE_NAMES:
        raise ValueError(f"dtype {dtype!r} is not one of {', '.join(DTYPE_NAMES)}")
    return getattr(torch, dtype)


def on_cpu(device: str | None) -> bool:
    return resolve_device(device) == "cpu"
