#!/usr/bin/python3
"""Golden values for data's RandomResizedCrop (data/testdata/rrc_golden.json).

Run with Debian's python3 (python3-torch, python3-torchvision, python3-numpy):
    /usr/bin/python3 experiments/goldens/rrc_golden.py > data/testdata/rrc_golden.json

Each case is a generated uint8 image (C, H, W), a crop box (top, left, height,
width) and an output size; the expected output is
torchvision.transforms.functional.resized_crop on the image as a float32
tensor (ToTensor: u8 / 255) with bilinear interpolation, antialias off and on,
which is the crop-then-F.interpolate our pipeline does. The boxes are drawn
by torchvision's own RandomResizedCrop.get_params (scale (0.08, 1), ratio
(3/4, 4/3)), plus edge cases: the whole image, a 1x1 box, a box on the
border, and the fallback central crop of a very wide image.
"""
import json

import numpy as np
import torch
import torchvision
import torchvision.transforms as T
import torchvision.transforms.functional as TF
from torchvision.transforms import InterpolationMode

rs = np.random.RandomState(4321)
torch.manual_seed(4321)


def case(c, h, w, box, oh, ow, aa):
    u8 = rs.randint(0, 256, size=(c, h, w)).astype(np.uint8)
    x = torch.from_numpy(u8.astype(np.float32) / 255)
    i, j, bh, bw = box
    y = TF.resized_crop(x, i, j, bh, bw, [oh, ow], InterpolationMode.BILINEAR, antialias=aa)
    return {"c": c, "h": h, "w": w, "box": [int(i), int(j), int(bh), int(bw)], "oh": oh, "ow": ow,
            "antialias": aa, "pix": u8.ravel().tolist(), "y": [float("%.9g" % v) for v in y.numpy().ravel()]}


def drawn(h, w):
    return T.RandomResizedCrop.get_params(torch.zeros(1, h, w), [0.08, 1.0], [3 / 4, 4 / 3])


cases = []
for c, h, w, oh, ow in [(1, 28, 28, 28, 28), (3, 20, 30, 16, 16), (3, 40, 32, 12, 14), (1, 9, 13, 24, 20)]:
    for aa in (False, True):
        for _ in range(2):
            cases.append(case(c, h, w, drawn(h, w), oh, ow, aa))
for aa in (False, True):
    cases.append(case(1, 12, 10, (0, 0, 12, 10), 12, 10, aa))   # whole image, same size
    cases.append(case(3, 12, 10, (5, 4, 1, 1), 6, 6, aa))       # 1x1 box
    cases.append(case(1, 12, 10, (7, 3, 5, 7), 9, 9, aa))       # touching the bottom and right edges
    cases.append(case(3, 8, 40, (0, 14, 8, 11), 16, 16, aa))     # fallback: w = round(8 * 4/3) = 11, centred
print(json.dumps({"generator": "experiments/goldens/rrc_golden.py", "torch": torch.__version__,
                  "torchvision": torchvision.__version__, "cases": cases}))
