#!/usr/bin/python3
"""Float64 goldens for optim's SGD and Lamb: optim/testdata/{sgd,lamb}_torch.json.

torch.optim.SGD (as timm's create_optimizer_v2 builds it for --opt sgd/nesterov and momentum) and timm's
Lamb (timm/optim/lamb.py, its defaults), each over 20 steps with weight decay, in float64 on the CPU.
Run from the repository root with Debian's python3-torch (torch 1.13) and a scratch copy of timm:

    git --git-dir=<fetched pytorch-image-models> archive HEAD timm | tar -x -C /tmp/timm_src
    TIMM_SRC=/tmp/timm_src /usr/bin/python3 optim/testdata/make_goldens.py

Only timm/optim/lamb.py and its two helpers are loaded (timm's own __init__ needs torchvision).

Three tensors, each in a parameter group of its own as timm's param_groups_layer_decay makes them: a
decayed weight and a no-decay bias in layer 1 and a decayed weight in layer 2, with layer decay 0.5 over
layer ids 0..2 (lr scales 0.5, 0.5, 1). Weights, gradients and learning rates are drawn once and stored.
"""
import importlib
import json
import os
import sys
import types

import torch

STEPS = 20
WEIGHT_DECAY = 0.05
LAYER_DECAY = 0.5
NUM_LAYERS = 3
TENSORS = [  # name, shape, layer id, no weight decay
    ("blocks.0.attn.qkv.weight", (3, 4), 1, False),
    ("blocks.0.attn.qkv.bias", (3,), 1, True),
    ("head.weight", (2, 3), 2, False),
]


def load_lamb():
    root = os.environ.get("TIMM_SRC", "/tmp/timm_src")
    for name, sub in (("timm", "timm"), ("timm.optim", "timm/optim")):
        mod = types.ModuleType(name)
        mod.__path__ = [os.path.join(root, sub)]
        sys.modules[name] = mod
    return importlib.import_module("timm.optim.lamb").Lamb


def draw():
    gen = torch.Generator().manual_seed(44)
    w0 = [torch.randn(shape, generator=gen, dtype=torch.float64) for _, shape, _, _ in TENSORS]
    # Some steps' gradients are large (Lamb clips their global norm to 1), some small.
    scales = [3.0 if s % 4 == 0 else 0.1 for s in range(STEPS)]
    grads = [[torch.randn(shape, generator=gen, dtype=torch.float64) * scales[s] for _, shape, _, _ in TENSORS]
             for s in range(STEPS)]
    lrs = [0.05 + 0.01 * (s % 5) for s in range(STEPS)]
    return w0, grads, lrs


def run(make, w0, grads, lrs):
    params = [w.clone().requires_grad_(False) for w in w0]
    groups = []
    for p, (_, _, layer, no_decay) in zip(params, TENSORS):
        groups.append({"params": [p], "weight_decay": 0.0 if no_decay else WEIGHT_DECAY,
                       "lr_scale": LAYER_DECAY ** (NUM_LAYERS - 1 - layer)})
    opt = make(groups)
    steps = []
    for s in range(STEPS):
        for p, g in zip(params, grads[s]):
            p.grad = g.clone()
        for group in opt.param_groups:
            group["lr"] = lrs[s] * group["lr_scale"]
        opt.step()
        steps.append([p.detach().flatten().tolist() for p in params])
    return steps


def tensors_json(w0, grads):
    return [{"name": n, "shape": list(shape), "layer_id": layer, "no_decay": nd, "w0": w.flatten().tolist(),
             "grads": [grads[s][i].flatten().tolist() for s in range(STEPS)]}
            for i, ((n, shape, layer, nd), w) in enumerate(zip(TENSORS, w0))]


def main():
    torch.set_default_dtype(torch.float64)
    Lamb = load_lamb()
    w0, grads, lrs = draw()
    common = {"torch": torch.__version__, "weight_decay": WEIGHT_DECAY, "layer_decay": LAYER_DECAY,
              "lrs": lrs, "tensors": tensors_json(w0, grads)}
    runs = {
        # timm: 'sgd' and 'nesterov' -> SGD(momentum, nesterov=True); 'momentum' -> nesterov=False.
        "sgd": lambda gs: torch.optim.SGD(gs, lr=0.1, momentum=0.9, nesterov=True),
        "momentum": lambda gs: torch.optim.SGD(gs, lr=0.1, momentum=0.9, nesterov=False),
        "momentum_0.5": lambda gs: torch.optim.SGD(gs, lr=0.1, momentum=0.5, nesterov=False),
        "momentum_0": lambda gs: torch.optim.SGD(gs, lr=0.1, momentum=0.0),
    }
    sgd = dict(common, runs={k: {"steps": run(make, w0, grads, lrs)} for k, make in runs.items()})
    lamb = dict(common, runs={"lamb": {"steps": run(lambda gs: Lamb(gs, lr=0.1), w0, grads, lrs)}})
    for name, out in (("sgd_torch.json", sgd), ("lamb_torch.json", lamb)):
        with open(os.path.join("optim", "testdata", name), "w") as f:
            json.dump(out, f, indent=None, separators=(",", ":"))
            f.write("\n")


if __name__ == "__main__":
    main()
