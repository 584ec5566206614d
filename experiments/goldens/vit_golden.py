#!/usr/bin/env python3
"""Golden values for the whole ViT from the PyTorch peer's model (timm layout).

Builds ../shared/bench/vit_ref.py's VisionTransformer (pre-norm, CLS readout, exact GELU,
LayerNorm eps 1e-6, qkv with bias: timm's VisionTransformer), fills every parameter with
N(0, 0.5²) draws, runs a fixed batch forward and backward through the soft-target cross
entropy, and writes
  train/testdata/vit_torch.safetensors  the state_dict exactly (strict-loadable keys)
  train/testdata/vit_torch.json         input, targets, logits, loss and every gradient
which train/torch_golden_test.go loads through our checkpoint loader and compares.

Run from the repo root: /usr/bin/python3 experiments/goldens/vit_golden.py
"""
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "..", "shared", "bench"))
sys.path.insert(0, HERE)
os.environ.setdefault("VIT_REF_BLAS", "keep")

import vit_ref  # noqa: E402
from safetensors_golden import encode  # noqa: E402

torch.manual_seed(0)
cfg = dict(img=8, patch=4, in_chans=2, num_classes=3, dim=8, depth=2, heads=2, mlp_ratio=2.0)
m = vit_ref.VisionTransformer(**cfg).double()
with torch.no_grad():
    for p in m.parameters():
        p.normal_(0, 0.5)
m.eval()
x = torch.linspace(-2, 2, 2 * 2 * 8 * 8, dtype=torch.float64).reshape(2, 2, 8, 8).sin() * 1.5
t = torch.tensor([[0.7, 0.2, 0.1], [0.05, 0.05, 0.9]], dtype=torch.float64)
logits = m(x)
loss = torch.sum(-t * torch.log_softmax(logits, dim=-1), dim=-1).mean()
loss.backward()

sd = {k: v.detach().float().contiguous() for k, v in m.state_dict().items()}
with open(os.path.join(ROOT, "train", "testdata", "vit_torch.safetensors"), "wb") as f:
    f.write(encode(sd, None))
# Gradients of the float32-rounded weights are what a float64 Go run would see only
# approximately, so the forward is recomputed from the rounded weights for the golden.
m2 = vit_ref.VisionTransformer(**cfg).double()
m2.load_state_dict({k: v.double() for k, v in sd.items()})
m2.eval()
logits = m2(x)
loss = torch.sum(-t * torch.log_softmax(logits, dim=-1), dim=-1).mean()
loss.backward()
out = {
    "config": cfg,
    "input": x.reshape(-1).tolist(),
    "targets": t.reshape(-1).tolist(),
    "logits": logits.detach().reshape(-1).tolist(),
    "loss": loss.item(),
    "grads": {k: p.grad.reshape(-1).tolist() for k, p in m2.named_parameters()},
    "torch": torch.__version__,
}
with open(os.path.join(ROOT, "train", "testdata", "vit_torch.json"), "w") as f:
    json.dump(out, f)
print("wrote train/testdata/vit_torch.{safetensors,json}", "loss", loss.item())
