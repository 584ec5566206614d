#!/usr/bin/env python3
"""Golden values for the data package's transforms (data/testdata/goldens.json).

Run with Debian's python3 (python3-torch, python3-numpy, python3-pil):
    /usr/bin/python3 experiments/goldens/data_goldens.py > data/testdata/goldens.json

- resize: torch.nn.functional.interpolate(mode="bilinear", align_corners=False,
  antialias=False|True) on small float32 CHW images.
- pil_ops: the RandAugment ops exactly as timm's auto_augment.py calls PIL
  (ImageOps / ImageEnhance / Image.transform with BILINEAR and a fill colour).
- luma: PIL's RGB -> "L" conversion.
"""
import json
import sys

import numpy as np
import PIL
import torch
import torch.nn.functional as F
from PIL import Image, ImageEnhance, ImageOps

rs = np.random.RandomState(1234)


def resize_case(c, h, w, oh, ow, aa):
    x = rs.rand(c, h, w).astype(np.float32)
    y = F.interpolate(torch.from_numpy(x)[None], size=(oh, ow), mode="bilinear",
                      align_corners=False, antialias=aa)[0].numpy()
    return {"c": c, "h": h, "w": w, "oh": oh, "ow": ow, "antialias": aa,
            "x": [float(v) for v in x.ravel()], "y": [float(v) for v in y.ravel()]}


resize = [
    resize_case(1, 5, 7, 11, 13, False),
    resize_case(3, 13, 11, 5, 4, False),
    resize_case(1, 28, 28, 14, 14, False),
    resize_case(2, 6, 6, 9, 15, False),
    resize_case(1, 8, 9, 8, 4, False),
    resize_case(3, 17, 23, 7, 5, True),
    resize_case(1, 9, 8, 4, 12, True),
    resize_case(1, 5, 7, 11, 13, True),
    resize_case(1, 40, 30, 10, 10, True),
]


# timm/data/auto_augment.py op bodies (PIL >= 5.2 paths), resample fixed to BILINEAR.
def kw(fill):
    return dict(resample=Image.BILINEAR, fillcolor=fill)


def shear_x(img, f, fill): return img.transform(img.size, Image.AFFINE, (1, f, 0, 0, 1, 0), **kw(fill))
def shear_y(img, f, fill): return img.transform(img.size, Image.AFFINE, (1, 0, 0, f, 1, 0), **kw(fill))
def translate_x_rel(img, pct, fill):
    return img.transform(img.size, Image.AFFINE, (1, 0, pct * img.size[0], 0, 1, 0), **kw(fill))
def translate_y_rel(img, pct, fill):
    return img.transform(img.size, Image.AFFINE, (1, 0, 0, 0, 1, pct * img.size[1]), **kw(fill))
def rotate(img, deg, fill): return img.rotate(deg, **kw(fill))
def solarize_add(img, add, thresh=128):
    lut = [min(255, i + add) if i < thresh else i for i in range(256)]
    if img.mode in ("L", "RGB"):
        if img.mode == "RGB" and len(lut) == 256:
            lut = lut + lut + lut
        return img.point(lut)
    return img
def posterize(img, bits): return img if bits >= 8 else ImageOps.posterize(img, bits)


OPS = [
    ("AutoContrast", None, lambda im, a, f: ImageOps.autocontrast(im)),
    ("Equalize", None, lambda im, a, f: ImageOps.equalize(im)),
    ("Invert", None, lambda im, a, f: ImageOps.invert(im)),
] + [("Posterize", b, lambda im, a, f: posterize(im, a)) for b in (0, 1, 2, 3, 4, 8)] + \
    [("Solarize", t, lambda im, a, f: ImageOps.solarize(im, a)) for t in (0, 100, 256)] + \
    [("SolarizeAdd", a, lambda im, a, f: solarize_add(im, a)) for a in (0, 55, 110)] + \
    [("Color", v, lambda im, a, f: ImageEnhance.Color(im).enhance(a)) for v in (0.1, 0.55, 1.9)] + \
    [("Contrast", v, lambda im, a, f: ImageEnhance.Contrast(im).enhance(a)) for v in (0.1, 0.73, 1.9)] + \
    [("Brightness", v, lambda im, a, f: ImageEnhance.Brightness(im).enhance(a)) for v in (0.3, 1.9)] + \
    [("Sharpness", v, lambda im, a, f: ImageEnhance.Sharpness(im).enhance(a)) for v in (0.1, 1.9)] + \
    [("Rotate", d, lambda im, a, f: rotate(im, a, f)) for d in (17.3, -30.0, 90.0, -4.5)] + \
    [("ShearX", v, lambda im, a, f: shear_x(im, a, f)) for v in (0.21, -0.3)] + \
    [("ShearY", v, lambda im, a, f: shear_y(im, a, f)) for v in (0.21, -0.3)] + \
    [("TranslateXRel", v, lambda im, a, f: translate_x_rel(im, a, f)) for v in (0.3, -0.45)] + \
    [("TranslateYRel", v, lambda im, a, f: translate_y_rel(im, a, f)) for v in (0.3, -0.45)]


def structured(h, w, c):
    yy, xx = np.mgrid[0:h, 0:w]
    base = 40 + 12 * xx + 9 * yy
    chans = [(base + 17 * k + rs.randint(0, 30, size=(h, w))) % 200 + 25 for k in range(c)]
    return np.stack(chans).astype(np.uint8)  # CHW


def pil_cases():
    out = []
    imgs = [("rgb", structured(10, 12, 3), (124, 116, 104)),
            ("gray", structured(9, 9, 1), 128)]
    for tag, chw, fill in imgs:
        if chw.shape[0] == 3:
            im = Image.fromarray(np.transpose(chw, (1, 2, 0)), "RGB")
        else:
            im = Image.fromarray(chw[0], "L")
        for name, arg, fn in OPS:
            res = fn(im.copy(), arg, fill)
            a = np.asarray(res)
            a = np.transpose(a, (2, 0, 1)) if a.ndim == 3 else a[None]
            out.append({"image": tag, "op": name, "arg": 0.0 if arg is None else float(arg),
                        "out": [int(v) for v in a.ravel()]})
    return {"images": {t: {"c": int(x.shape[0]), "h": int(x.shape[1]), "w": int(x.shape[2]),
                           "fill": list(f) if isinstance(f, tuple) else [f],
                           "pix": [int(v) for v in x.ravel()]} for t, x, f in imgs},
            "cases": out}


rgb = rs.randint(0, 256, size=(3, 64)).astype(np.uint8)
lum = np.asarray(Image.fromarray(np.transpose(rgb.reshape(3, 8, 8), (1, 2, 0)), "RGB").convert("L")).ravel()

json.dump({"generator": "experiments/goldens/data_goldens.py",
           "torch": torch.__version__, "pil": PIL.__version__,
           "resize": resize, "pil_ops": pil_cases(),
           "luma": {"rgb": [int(v) for v in rgb.ravel()], "l": [int(v) for v in lum]}},
          sys.stdout, separators=(",", ":"))
sys.stdout.write("\n")
