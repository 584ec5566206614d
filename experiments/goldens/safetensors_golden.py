#!/usr/bin/python3
"""Golden fixture for checkpoint/safetensors, and the check that Python reads our files.

Debian bookworm has no python3-safetensors package (and there is no pip index
here), so this script carries a tiny independent safetensors writer and reader
built from struct/json and torch.frombuffer. The writer copies the reference
library's layout: "__metadata__" first, tensors ordered by descending element
size then name, compact JSON, header padded with spaces to a multiple of 8.

    /usr/bin/python3 experiments/goldens/safetensors_golden.py
        writes checkpoint/safetensors/testdata/golden.safetensors and golden.json
        (the expected dtype, shape, raw bytes and float32 conversion of each
        tensor, the float32 values given as bit patterns so NaN/Inf survive).

    /usr/bin/python3 experiments/goldens/safetensors_golden.py --models
        writes checkpoint/testdata/tiny_f16.safetensors and tiny_bf16.safetensors,
        a tiny ViT's timm state_dict (img 8, patch 4, 1 channel, dim 8, depth 1,
        2 heads, mlp_ratio 2, 3 classes) as torch.float16 and torch.bfloat16
        tensors with subnormals, +-0, +-Inf and NaN among the values, and
        tiny_expected.safetensors: torch's .float() of each, as F32 under
        "f16.<name>" and "bf16.<name>" (see checkpoint's TestLoadHalfPrecision);
        and f16_all.safetensors: all 65536 F16 bit patterns ("half") with
        torch's float32 conversion of each ("float").

    /usr/bin/python3 experiments/goldens/safetensors_golden.py --check FILE
        reads FILE (written by the Go writer, see TestWriteForPython) and checks
        that it holds exactly the golden tensors and metadata, bit for bit.

Requires Debian's python3-torch and python3-numpy.
"""
import json
import os
import re
import struct
import sys

import torch

TESTDATA = os.path.join("checkpoint", "safetensors", "testdata")
DTYPES = {  # safetensors name -> (torch dtype, element size)
    "F64": (torch.float64, 8), "F32": (torch.float32, 4), "F16": (torch.float16, 2),
    "BF16": (torch.bfloat16, 2), "I64": (torch.int64, 8), "I32": (torch.int32, 4),
    "I16": (torch.int16, 2), "I8": (torch.int8, 1), "U8": (torch.uint8, 1), "BOOL": (torch.bool, 1),
}
NAMES = {v[0]: k for k, v in DTYPES.items()}
METADATA = {"format": "pt", "step": "42", "note": 'ünï "quoted" <tag> & \\ \n'}


def golden_tensors():
    g = torch.Generator().manual_seed(7)
    inf, nan = float("inf"), float("nan")
    return {
        "blocks.0.attn.qkv.weight": torch.randn(2, 3, generator=g),
        "half": torch.tensor([1.0, -2.5, 65504.0, 2.0 ** -24, -0.0, inf, nan, 0.1], dtype=torch.float16),
        "brain": torch.tensor([[1.0, -3.140625], [1e-39, 3.0e38]], dtype=torch.bfloat16),
        "double": torch.tensor([0.1, -1e-40, 1e39, 1.0 / 3.0], dtype=torch.float64),
        "steps": torch.tensor([-1, 2 ** 40], dtype=torch.int64),
        "bytes": torch.tensor([0, 1, 254, 255], dtype=torch.uint8),
        "flags": torch.tensor([True, False, True]),
        "scalar": torch.tensor(2.5, dtype=torch.float32),
        "empty": torch.zeros(0, 3, dtype=torch.float32),
    }


def raw(t):
    return t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()


def encode(tensors, metadata):
    order = sorted(tensors, key=lambda k: (-DTYPES[NAMES[tensors[k].dtype]][1], k))
    header, blobs, off = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for k in order:
        b = raw(tensors[k])
        header[k] = {"dtype": NAMES[tensors[k].dtype], "shape": list(tensors[k].shape),
                     "data_offsets": [off, off + len(b)]}
        off += len(b)
        blobs.append(b)
    h = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    h += b" " * ((8 - len(h) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + b"".join(blobs)


def decode(buf):
    (n,) = struct.unpack("<Q", buf[:8])
    assert n <= len(buf) - 8 and n % 8 == 0, f"header length {n}"
    header = json.loads(buf[8:8 + n].decode("utf-8"))
    data = buf[8 + n:]
    metadata = header.pop("__metadata__", {})
    out, cover = {}, []
    for k, v in header.items():
        assert set(v) == {"dtype", "shape", "data_offsets"}, k
        dt, size = DTYPES[v["dtype"]]
        b, e = v["data_offsets"]
        numel = 1
        for d in v["shape"]:
            numel *= d
        assert e - b == numel * size, k
        cover.append((b, e))
        chunk = bytearray(data[b:e])
        t = torch.frombuffer(chunk, dtype=dt) if chunk else torch.empty(0, dtype=dt)
        out[k] = t.reshape(v["shape"])
    at = 0
    for b, e in sorted(cover):
        assert b == at, f"gap or overlap at {b}"
        at = e
    assert at == len(data), "data section not covered exactly"
    return out, metadata


def f32_bits(t):
    if not t.dtype.is_floating_point:
        return None
    return t.float().reshape(-1).view(torch.int32).numpy().astype("uint32").tolist()


def write_golden():
    tensors = golden_tensors()
    buf = encode(tensors, METADATA)
    back, meta = decode(buf)  # self-check of the independent writer
    assert meta == METADATA and all(raw(back[k]) == raw(tensors[k]) for k in tensors)
    with open(os.path.join(TESTDATA, "golden.safetensors"), "wb") as f:
        f.write(buf)
    expected = {
        "generator": "experiments/goldens/safetensors_golden.py",
        "torch": torch.__version__,
        "metadata": METADATA,
        "tensors": {k: {"dtype": NAMES[t.dtype], "shape": list(t.shape), "hex": raw(t).hex(),
                        "f32_bits": f32_bits(t)} for k, t in tensors.items()},
    }
    text = json.dumps(expected, indent=1, ensure_ascii=False)
    # one line per list of numbers
    text = re.sub(r"\[\s*([-0-9,\s]*?)\s*\]", lambda m: "[" + re.sub(r"\s+", " ", m.group(1)) + "]", text)
    with open(os.path.join(TESTDATA, "golden.json"), "w") as f:
        f.write(text + "\n")
    print(f"wrote {TESTDATA}/golden.safetensors ({len(buf)} bytes) and golden.json", file=sys.stderr)


def check(path):
    with open(path, "rb") as f:
        got, meta = decode(f.read())
    want = golden_tensors()
    assert meta == METADATA, f"metadata {meta!r}"
    assert sorted(got) == sorted(want), f"names {sorted(got)}"
    for k, t in want.items():
        g = got[k]
        assert g.dtype == t.dtype and tuple(g.shape) == tuple(t.shape), f"{k}: {g.dtype} {tuple(g.shape)}"
        assert raw(g) == raw(t), f"{k}: bytes differ"
    print(f"OK: {path}: {len(got)} tensors and metadata read back bit for bit")


def tiny_vit_state_dict():
    """timm's vit state_dict names and shapes for the tiny config, float32."""
    d, h, c, p, k, n = 8, 16, 1, 4, 3, 4  # dim, mlp hidden, chans, patch, classes, patches
    shapes = {"cls_token": (1, 1, d), "pos_embed": (1, n + 1, d),
              "patch_embed.proj.weight": (d, c, p, p), "patch_embed.proj.bias": (d,)}
    for name, shape in [("norm1.weight", (d,)), ("norm1.bias", (d,)), ("attn.qkv.weight", (3 * d, d)),
                        ("attn.qkv.bias", (3 * d,)), ("attn.proj.weight", (d, d)), ("attn.proj.bias", (d,)),
                        ("norm2.weight", (d,)), ("norm2.bias", (d,)), ("mlp.fc1.weight", (h, d)),
                        ("mlp.fc1.bias", (h,)), ("mlp.fc2.weight", (d, h)), ("mlp.fc2.bias", (d,))]:
        shapes["blocks.0." + name] = shape
    shapes.update({"norm.weight": (d,), "norm.bias": (d,), "head.weight": (k, d), "head.bias": (k,)})
    g = torch.Generator().manual_seed(11)
    return {name: torch.randn(*shape, generator=g) * 0.5 for name, shape in shapes.items()}


def write_models():
    out = os.path.join("checkpoint", "testdata")
    os.makedirs(out, exist_ok=True)
    inf, nan = float("inf"), float("nan")
    specials = {  # written into the first elements of a few tensors, before the cast
        torch.float16: [2.0 ** -24, -(2.0 ** -24) * 3, 6.1e-5, -0.0, 0.0, 65504.0, -65504.0, 1e-8],
        torch.bfloat16: [1e-39, -1e-40, 3.0e38, -0.0, 0.0, 1.0 / 3.0, -3.140625, 9.2e-41],
    }
    expected = {}
    for dt, tag in [(torch.float16, "f16"), (torch.bfloat16, "bf16")]:
        sd = tiny_vit_state_dict()
        sd["pos_embed"].view(-1)[:8] = torch.tensor(specials[dt])
        sd["cls_token"].view(-1)[:4] = torch.tensor([inf, -inf, nan, 1.0])
        half = {k: v.to(dt) for k, v in sd.items()}
        buf = encode(half, {"format": "pt"})
        back, _ = decode(buf)
        assert all(raw(back[k]) == raw(half[k]) for k in half)
        with open(os.path.join(out, f"tiny_{tag}.safetensors"), "wb") as f:
            f.write(buf)
        for k, v in half.items():
            expected[f"{tag}.{k}"] = v.float()
    every = torch.arange(-32768, 32768, dtype=torch.int32).to(torch.int16).view(torch.float16)
    with open(os.path.join(out, "f16_all.safetensors"), "wb") as f:  # every F16 bit pattern and torch's float()
        f.write(encode({"half": every, "float": every.float()}, {"torch": torch.__version__}))
    with open(os.path.join(out, "tiny_expected.safetensors"), "wb") as f:
        f.write(encode(expected, {"generator": "experiments/goldens/safetensors_golden.py --models",
                                  "torch": torch.__version__}))
    print(f"wrote {out}/tiny_f16.safetensors, tiny_bf16.safetensors, tiny_expected.safetensors", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        check(sys.argv[2])
    elif len(sys.argv) == 2 and sys.argv[1] == "--models":
        write_models()
    else:
        write_golden()
