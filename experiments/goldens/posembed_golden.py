#!/usr/bin/python3
"""Golden fixture for layers/posembed: position-embedding resampling by PyTorch.

Writes layers/posembed/testdata/golden.json: a few random (numPrefix + H*W, D)
tables and their resampling to other grids (up, down, rectangular, mixed)
through timm's recipe (timm/layers/pos_embed.py resample_abs_pos_embed):
the prefix rows are kept, the grid is reshaped to (1, D, H, W) and resized with
F.interpolate(size=(h, w), mode=mode, antialias=aa, align_corners=False).

Run from the repository root with Debian's torch
(apt-get install -y python3-torch python3-numpy):

    /usr/bin/python3 experiments/goldens/posembed_golden.py
"""
import json
import os
import sys

import torch
import torch.nn.functional as F

OUT = os.path.join("layers", "posembed", "testdata", "golden.json")

# (name, dim, num_prefix, (oldH, oldW), (newH, newW))
CASES = [
    ("square_up", 3, 1, (4, 4), (6, 6)),
    ("square_down", 3, 1, (6, 6), (4, 4)),
    ("rect_mixed", 2, 1, (3, 5), (7, 4)),
    ("rect_down", 2, 2, (7, 5), (3, 2)),
    ("strong_down", 2, 1, (9, 9), (2, 3)),
    ("double", 2, 1, (3, 4), (6, 8)),
    ("odd_down", 2, 1, (7, 7), (3, 5)),
    ("one_to_many", 2, 0, (1, 1), (3, 2)),
    ("thin", 2, 1, (2, 1), (5, 3)),
    ("same", 2, 1, (4, 4), (4, 4)),
    ("one_axis", 2, 1, (4, 6), (4, 3)),
    ("vit_14_to_24", 1, 1, (14, 14), (24, 24)),
]

# (key, mode, antialias)
VARIANTS = [
    ("bicubic", "bicubic", False),
    ("bicubic_aa", "bicubic", True),
    ("bilinear", "bilinear", False),
    ("bilinear_aa", "bilinear", True),
    ("nearest", "nearest", False),
]


def resample(pe, num_prefix, old, new, mode, antialias):
    """timm resample_abs_pos_embed on a (1, P+H*W, D) table."""
    d = pe.shape[-1]
    prefix, grid = pe[:, :num_prefix], pe[:, num_prefix:]
    g = grid.reshape(1, old[0], old[1], d).permute(0, 3, 1, 2)
    if mode == "nearest":
        g = F.interpolate(g, size=new, mode=mode)
    else:
        g = F.interpolate(g, size=new, mode=mode, antialias=antialias, align_corners=False)
    g = g.permute(0, 2, 3, 1).reshape(1, new[0] * new[1], d)
    return torch.cat([prefix, g], dim=1)


def flat(t):
    # 9 significant digits round-trip a float32 exactly.
    return [float(format(v, ".9g")) for v in t.reshape(-1).tolist()]


def main():
    torch.manual_seed(20240607)
    cases = []
    for name, dim, prefix, old, new in CASES:
        pe = torch.randn(1, prefix + old[0] * old[1], dim, dtype=torch.float32)
        outs = {}
        for key, mode, aa in VARIANTS:
            outs[key] = flat(resample(pe, prefix, old, new, mode, aa))
        cases.append({
            "name": name, "dim": dim, "num_prefix": prefix,
            "old": list(old), "new": list(new),
            "input": flat(pe), "outputs": outs,
        })
    doc = {
        "generator": "experiments/goldens/posembed_golden.py",
        "torch": torch.__version__,
        "cases": cases,
    }
    with open(OUT, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {OUT} ({os.path.getsize(OUT)} bytes, {len(cases)} cases)", file=sys.stderr)


if __name__ == "__main__":
    main()
