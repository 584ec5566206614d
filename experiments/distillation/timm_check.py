# Loads a distilled Fashion-MNIST student of ours (experiments/distillation) into
# real timm's VisionTransformerDistilled (strict=True) and scores it on the 10,000
# test images of Debian's dataset-fashion-mnist, normalized with the file's mean/std:
#   PYTHONPATH=TIMM_SRC /usr/bin/python3 experiments/distillation/timm_check.py RUN/last.safetensors
import gzip, json, struct, sys
import numpy as np, torch
from timm.models.deit import VisionTransformerDistilled
path = sys.argv[1]
b = open(path, 'rb').read()
n = struct.unpack('<Q', b[:8])[0]; h = json.loads(b[8:8 + n]); md = h.pop('__metadata__')
sd = {}
for k, v in h.items():
    s, e = v['data_offsets']
    sd[k] = torch.from_numpy(np.frombuffer(b[8 + n + s:8 + n + e], dtype=np.float32).reshape(v['shape']).copy())
m = VisionTransformerDistilled(img_size=28, patch_size=4, in_chans=1, num_classes=10, embed_dim=64, depth=6,
                               num_heads=4, mlp_ratio=4, qkv_bias=True, global_pool='token')
m.load_state_dict(sd, strict=True); m.eval()
d = '/usr/share/datasets/fashion-mnist/'
x = np.frombuffer(gzip.open(d + 't10k-images-idx3-ubyte.gz').read()[16:], np.uint8).reshape(-1, 1, 28, 28)
y = np.frombuffer(gzip.open(d + 't10k-labels-idx1-ubyte.gz').read()[8:], np.uint8)
mean, std = json.loads(md['mean'])[0], json.loads(md['std'])[0]
xt = (torch.from_numpy(x.astype(np.float32)) / 255 - mean) / std
torch.set_num_threads(1)
with torch.no_grad():
    p = torch.cat([m(xt[i:i + 500]) for i in range(0, len(xt), 500)]).argmax(1).numpy()
print(f"strict load ok; timm top-1 {100 * (p == y).mean():.2f}% on {len(y)} test images")
