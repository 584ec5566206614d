#!/usr/bin/env python3
"""Export one of OUR model files (a .safetensors written by cmd/train) to ONNX through real timm, strict.

    PYTHONPATH=TIMM_SRC /usr/bin/python3 export_checkpoint.py RUN/best.safetensors OUT_DIR [--name NAME]

The architecture comes from the file's metadata (img_size, patch_size, in_chans, embed_dim, depth, num_heads,
mlp_ratio, qkv_bias, num_classes, readout, ln_eps); timm's VisionTransformer is built with it and the tensors are
loaded with load_state_dict(strict=True), so a key or shape that timm does not have fails here. The export is
the same as ../shared/bench/ort/export_onnx.py's (opset 14, dynamic batch, input "x", output "logits"), with the
same check files (NAME.check.f32 / .check.json: two random inputs and timm's logits for them), so that
`node ort_eval.js --check` works on it, and `quantize_dynamic.py` quantizes it. ONNX Runtime's float32 and int8 then
run on the same weights as ours (cmd/eval -precision fp32|int8), on the same images (ort_eval.js --idx).
"""
import argparse, functools, json, os, struct, sys

import numpy as np
import torch
from timm.models.vision_transformer import VisionTransformer


def read_safetensors(path):
    with open(path, "rb") as f:
        b = f.read()
    if len(b) < 8:
        sys.exit(f"export_checkpoint.py: {path}: {len(b)} bytes, not a safetensors file")
    n = struct.unpack("<Q", b[:8])[0]
    if 8 + n > len(b):
        sys.exit(f"export_checkpoint.py: {path}: header of {n} bytes past the end of the file")
    h = json.loads(b[8:8 + n])
    md = h.pop("__metadata__", {})
    sd = {}
    for k, v in h.items():
        if v["dtype"] != "F32":
            sys.exit(f"export_checkpoint.py: {path}: tensor {k} is {v['dtype']}, want F32 (our model files are float32)")
        s, e = v["data_offsets"]
        sd[k] = torch.from_numpy(np.frombuffer(b[8 + n + s:8 + n + e], dtype=np.float32).reshape(v["shape"]).copy())
    return sd, md


def build(md, path):
    if md.get("format") != "vitgo/1":
        sys.exit(f"export_checkpoint.py: {path}: metadata format {md.get('format')!r}, want 'vitgo/1' (a model file of ours)")
    g = {k: json.loads(v) for k, v in md.items() if k in (
        "img_size", "patch_size", "in_chans", "embed_dim", "depth", "num_heads", "mlp_ratio", "qkv_bias",
        "num_classes", "readout", "ln_eps", "act", "distilled")}
    if g.get("distilled"):
        sys.exit(f"export_checkpoint.py: {path}: a distilled model; export a plain one (DeiT's two heads are not handled here)")
    if g.get("act", "gelu") != "gelu":
        sys.exit(f"export_checkpoint.py: {path}: act {g['act']!r}; timm's ViT here uses exact GELU")
    pool = {"cls": "token", "mean": "avg"}.get(g.get("readout", "cls"))
    if pool is None:
        sys.exit(f"export_checkpoint.py: {path}: readout {g['readout']!r}, want cls or mean")
    kw = dict(img_size=g["img_size"], patch_size=g["patch_size"], in_chans=g["in_chans"], embed_dim=g["embed_dim"],
              depth=g["depth"], num_heads=g["num_heads"], mlp_ratio=g["mlp_ratio"], qkv_bias=g.get("qkv_bias", True),
              num_classes=g["num_classes"], global_pool=pool)
    if pool == "avg":
        kw["fc_norm"] = False
    if "ln_eps" in g:
        kw["norm_layer"] = functools.partial(torch.nn.LayerNorm, eps=g["ln_eps"])
    return VisionTransformer(**kw), g


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model")
    p.add_argument("out_dir")
    p.add_argument("--name", help="file name stem (default: the model file's run folder and stem)")
    a = p.parse_args()
    sd, md = read_safetensors(a.model)
    m, g = build(md, a.model)
    m.load_state_dict(sd, strict=True)
    m.eval()
    name = a.name or (os.path.basename(os.path.dirname(os.path.abspath(a.model))) + "_" +
                      os.path.splitext(os.path.basename(a.model))[0])
    os.makedirs(a.out_dir, exist_ok=True)
    path = os.path.join(a.out_dir, name + ".onnx")
    torch.manual_seed(0)
    x = torch.randn(2, g["in_chans"], g["img_size"], g["img_size"])
    with torch.no_grad():
        y = m(x)
        torch.onnx.export(m, x, path, opset_version=14, input_names=["x"], output_names=["logits"],
                          dynamic_axes={"x": {0: "batch"}, "logits": {0: "batch"}})
    base = os.path.join(a.out_dir, name)
    with open(base + ".check.f32", "wb") as f:
        f.write(struct.pack(f"<{x.numel()}f", *x.flatten().tolist()))
        f.write(struct.pack(f"<{y.numel()}f", *y.flatten().tolist()))
    json.dump({"input": list(x.shape), "logits": list(y.shape), "torch": torch.__version__, "from": a.model,
               "mean": json.loads(md.get("mean", "[]")), "std": json.loads(md.get("std", "[]")),
               "params": sum(q.numel() for q in m.parameters())}, open(base + ".check.json", "w"))
    print(json.dumps({"exported": path, "from": a.model, "strict": True, "params": sum(q.numel() for q in m.parameters()),
                      "mean": json.loads(md.get("mean", "[]")), "std": json.loads(md.get("std", "[]"))}))


if __name__ == "__main__":
    main()
