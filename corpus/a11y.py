"""The a11y proto loader: android_env's accessibility-forest messages, from its own schema.

AndroidControl stores each screen's accessibility tree as a serialized AndroidAccessibilityForest
(android_env's proto). The schema is android_env's own `.proto` files (corpus/proto, Apache-2.0),
compiled with grpcio-tools into a descriptor set when first needed, so field numbers are never
written here. The importer (corpus/android.py) and the screen translation (corpus/translate.py)
both read forests through it.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

PROTO_DIR = Path(__file__).parent / "proto"
A11Y_PROTOS = "android_env/proto/a11y"


def compile_descriptor_set(proto_dir: Path = PROTO_DIR) -> bytes:
    """The a11y .proto files compiled (with imports) into a serialized FileDescriptorSet."""
    files = sorted(str(p.relative_to(proto_dir)) for p in (proto_dir / A11Y_PROTOS).glob("*.proto"))
    if not files:
        raise FileNotFoundError(f"no .proto files in {proto_dir / A11Y_PROTOS}")
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "a11y.desc"
        cmd = [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{proto_dir}",
            "--include_imports",
            f"--descriptor_set_out={out}",
            *files,
        ]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"protoc failed on {proto_dir}: {r.stderr.strip()[:300]}")
        return out.read_bytes()


@lru_cache(maxsize=1)
def a11y_messages() -> dict[str, type]:
    """Message classes by name (AndroidAccessibilityForest, ...NodeInfo, ...) from the real schema."""
    fds = descriptor_pb2.FileDescriptorSet.FromString(compile_descriptor_set())
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.Add(f)
    out = {}
    for f in fds.file:
        for m in f.message_type:
            out[m.name] = message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{f.package}.{m.name}"))
    return out


def forest_class():
    """The AndroidAccessibilityForest message class."""
    return a11y_messages()["AndroidAccessibilityForest"]
