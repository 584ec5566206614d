#!/usr/bin/env python3
"""Golden values for classify/ from real timm (classify/testdata/timm_golden.json).

The Go test TestWriteGoldenInputs writes a small checkpoint of ours (16x16 input, patch 8,
dim 24, depth 2, 5 classes, its own mean/std) and three PNGs (RGB 37x23, gray 11x50, RGBA
30x30). This script loads the checkpoint into timm's VisionTransformer with strict=True and,
for every image, records
  * crop_pct 0.875 and 1.0: timm's transforms_imagenet_eval(interpolation="bilinear") output
    before ToTensor (uint8, PIL's resize and centre crop; the normalized tensor is
    (uint8/255 - mean)/std in float32, checked here), and its logits;
  * crop_pct 0 (our default): ToTensor, torch's F.interpolate(bilinear, align_corners=False,
    antialias=False) to 16x16, Normalize; the tensor and its logits.
classify/golden_test.go (TestMatchesTimm) compares.

Run from the repo root (timm's source is not committed: git archive it from
github:huggingface/pytorch-image-models into /tmp/timm_src):
  CLASSIFY_GOLDEN_DIR=/tmp/cg go test ./classify -run TestWriteGoldenInputs -count=1
  PYTHONPATH=/tmp/timm_src /usr/bin/python3 experiments/goldens/classify_golden.py /tmp/cg
"""
import json
import os
import sys

import torch
import torch.nn.functional as F
import torchvision
import torchvision.transforms.functional as TF
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import timm  # noqa: E402
from timm.data.transforms_factory import transforms_imagenet_eval  # noqa: E402
from timm.models.vision_transformer import VisionTransformer  # noqa: E402
from safetensors_golden import decode  # noqa: E402

torch.set_num_threads(1)
src = sys.argv[1]
with open(os.path.join(src, "golden.safetensors"), "rb") as f:
    sd, meta = decode(f.read())
size = json.loads(meta["img_size"])
size = [size, size] if isinstance(size, int) else size
model = VisionTransformer(
    img_size=tuple(size), patch_size=json.loads(meta["patch_size"]), in_chans=json.loads(meta["in_chans"]),
    num_classes=json.loads(meta["num_classes"]), embed_dim=json.loads(meta["embed_dim"]),
    depth=json.loads(meta["depth"]), num_heads=json.loads(meta["num_heads"]),
    mlp_ratio=json.loads(meta["mlp_ratio"]), qkv_bias=True, class_token=True, global_pool="token")
model.load_state_dict(sd, strict=True)
model.eval()
mean, std = json.loads(meta["mean"]), json.loads(meta["std"])


def logits_of(x):
    with torch.no_grad():
        y = model(x[None].float())[0].double()
    return y, torch.softmax(y, dim=0)


cases = []
for i in range(3):
    img = Image.open(os.path.join(src, f"img{i}.png")).convert("RGB")
    for crop in (0.875, 1.0):
        u8 = transforms_imagenet_eval(img_size=size[0], crop_pct=crop, interpolation="bilinear",
                                      use_prefetcher=True)(img)
        x = transforms_imagenet_eval(img_size=size[0], crop_pct=crop, interpolation="bilinear",
                                     mean=mean, std=std)(img)
        assert torch.equal(x, TF.normalize(u8.float().div(255), mean, std))
        y, p = logits_of(x)
        cases.append({"image": i, "crop_pct": crop, "uint8": u8.reshape(-1).tolist(),
                      "logits": y.tolist(), "probs": p.tolist()})
    x = TF.to_tensor(img)
    x = F.interpolate(x[None], size=tuple(size), mode="bilinear", align_corners=False, antialias=False)[0]
    x = TF.normalize(x, mean, std)
    y, p = logits_of(x)
    cases.append({"image": i, "crop_pct": 0, "input": [float(f"{v:.9g}") for v in x.reshape(-1).tolist()],
                  "logits": y.tolist(), "probs": p.tolist()})

out = {"torch": torch.__version__, "torchvision": torchvision.__version__, "timm": timm.__version__,
       "pil": Image.__version__, "cases": cases}
with open(os.path.join(ROOT, "classify", "testdata", "timm_golden.json"), "w") as f:
    json.dump(out, f, separators=(",", ":"))
    f.write("\n")
print("wrote", len(cases), "cases")
