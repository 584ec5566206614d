#!/usr/bin/env python3
"""Golden values for the distilled ViT (DeiT) from real timm's VisionTransformerDistilled.

Builds timm's VisionTransformerDistilled (img 8, patch 4, 2 channels, 3 classes, dim 8,
depth 2, 2 heads, mlp_ratio 2: the small model of vit_golden.py with the distillation
token), fills every parameter with N(0, 0.5²) draws, rounds them to float32 and, in float64,
records
  * the eval logits, (head(x_cls) + head_dist(x_dist)) / 2;
  * the two heads' logits of the training forward with distilled_training on;
  * DeiT's DistillationLoss (facebookresearch/deit losses.py) of those two heads against
    fixed soft labels and fixed teacher logits, for "hard" (alpha 0.5) and "soft"
    (alpha 0.3, tau 2), and every parameter's gradient of each loss:
        base = SoftTargetCrossEntropy(head, labels)
        hard: CE(head_dist, teacher.argmax(1))
        soft: kl_div(log_softmax(head_dist/T), log_softmax(teacher/T), reduction='sum',
                     log_target=True) * T*T / head_dist.numel()
        loss = base * (1 - alpha) + distillation * alpha
It writes
  train/testdata/deit_timm.safetensors  the state_dict exactly (timm's keys)
  train/testdata/deit_timm.json         input, labels, teacher logits, logits, losses, grads
which train/deit_golden_test.go loads through our checkpoint loader and compares.

    PYTHONPATH=/tmp/timm_src /usr/bin/python3 experiments/goldens/deit_golden.py
        writes the fixture (timm's source: git archive of huggingface/pytorch-image-models)
    PYTHONPATH=/tmp/timm_src /usr/bin/python3 experiments/goldens/deit_golden.py --check FILE
        loads FILE, a distilled checkpoint of ours with this config (TestWriteDeiTForTimm
        writes one), into timm's VisionTransformerDistilled with strict=True and checks
        that its eval logits on the golden input equal the ones the Go test recorded in
        FILE's companion FILE.json within 1e-4:
            DEIT_GOLDEN_DIR=/tmp/dg go test ./train -run TestWriteDeiTForTimm -count=1
            PYTHONPATH=/tmp/timm_src /usr/bin/python3 experiments/goldens/deit_golden.py --check /tmp/dg/deit_ours.safetensors

Requires Debian's python3-torch and python3-torchvision (timm's layers import torchvision).
"""
import json
import os
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

from timm.models.deit import VisionTransformerDistilled  # noqa: E402
from safetensors_golden import decode, encode  # noqa: E402

torch.set_num_threads(1)
CFG = dict(img_size=8, patch_size=4, in_chans=2, num_classes=3, embed_dim=8, depth=2, num_heads=2, mlp_ratio=2.0)


def build():
    return VisionTransformerDistilled(**CFG, qkv_bias=True, global_pool="token").double()


def golden_input():
    return torch.linspace(-2, 2, 2 * 2 * 8 * 8, dtype=torch.float64).reshape(2, 2, 8, 8).sin() * 1.5


def check(path):
    with open(path, "rb") as f:
        sd, _ = decode(f.read())
    m = build()
    m.load_state_dict({k: v.double() for k, v in sd.items()}, strict=True)
    m.eval()
    with open(path + ".json") as f:
        want = torch.tensor(json.load(f)["logits"], dtype=torch.float64)
    got = m(golden_input()).detach().reshape(-1)
    d = (got - want).abs().max().item()
    print("strict load ok; eval logits differ from ours by", d)
    sys.exit(0 if d < 1e-4 else 1)


def distill_loss(head, head_dist, labels, teacher, kind, alpha, tau):
    base = torch.sum(-labels * F.log_softmax(head, dim=-1), dim=-1).mean()
    if kind == "hard":
        kd = F.cross_entropy(head_dist, teacher.argmax(dim=1))
    else:
        kd = F.kl_div(F.log_softmax(head_dist / tau, dim=1), F.log_softmax(teacher / tau, dim=1),
                      reduction="sum", log_target=True) * (tau * tau) / head_dist.numel()
    return base * (1 - alpha) + kd * alpha


def main():
    torch.manual_seed(0)
    m = build()
    with torch.no_grad():
        for p in m.parameters():
            p.normal_(0, 0.5)
    sd = {k: v.detach().float().contiguous() for k, v in m.state_dict().items()}
    with open(os.path.join(ROOT, "train", "testdata", "deit_timm.safetensors"), "wb") as f:
        f.write(encode(sd, None))
    # The golden comes from the float32-rounded weights, evaluated in float64.
    m = build()
    m.load_state_dict({k: v.double() for k, v in sd.items()}, strict=True)
    x = golden_input()
    labels = torch.tensor([[0.7, 0.2, 0.1], [0.05, 0.05, 0.9]], dtype=torch.float64)
    teacher = torch.tensor([[0.3, 2.1, -1.0], [1.5, -0.4, 0.2]], dtype=torch.float64)
    m.eval()
    logits = m(x)
    m.train()
    m.set_distilled_training(True)
    out = {"config": CFG, "input": x.reshape(-1).tolist(), "labels": labels.reshape(-1).tolist(),
           "teacher": teacher.reshape(-1).tolist(), "logits": logits.detach().reshape(-1).tolist(),
           "torch": torch.__version__, "losses": {}}
    for kind, alpha, tau in (("hard", 0.5, 1.0), ("soft", 0.3, 2.0)):
        m.zero_grad()
        head, head_dist = m(x)
        loss = distill_loss(head, head_dist, labels, teacher, kind, alpha, tau)
        loss.backward()
        out["head"] = head.detach().reshape(-1).tolist()
        out["head_dist"] = head_dist.detach().reshape(-1).tolist()
        out["losses"][kind] = {"alpha": alpha, "tau": tau, "loss": loss.item(),
                               "grads": {k: p.grad.reshape(-1).tolist() for k, p in m.named_parameters()}}
    with open(os.path.join(ROOT, "train", "testdata", "deit_timm.json"), "w") as f:
        json.dump(out, f)
    print("wrote train/testdata/deit_timm.{safetensors,json}",
          {k: v["loss"] for k, v in out["losses"].items()})


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        check(sys.argv[2])
    else:
        main()
