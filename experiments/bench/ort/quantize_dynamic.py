#!/usr/bin/env python3
"""Quantize an exported ViT to int8 the way onnxruntime.quantization.quantize_dynamic does, with Debian's python3-onnx.

    /usr/bin/python3 quantize_dynamic.py IN.onnx OUT.onnx [--attention] [--per-tensor]

ONNX Runtime's own quantizer is a pip package that is not reachable here; this script writes the same graph that
`quantize_dynamic(IN, OUT, weight_type=QuantType.QInt8, per_channel=True)` writes for a MatMul whose second input
is a float weight (an initializer (K, N)):

    x ──DynamicQuantizeLinear──> x_q (uint8), x_scale, x_zp          activations: one scale and zero point per
    MatMulInteger(x_q, W_q, x_zp, W_zp) ──Cast──> float                 tensor, computed at run time
    Mul(·, Mul(x_scale, W_scale)) ──> the MatMul's output

with W_q int8, symmetric per output column (scale = max|W[:, n]| / 127, zero point 0, values in −127…127, ties
to even as numpy rounds), and W_scale the (N,) scales. ONNX Runtime's graph optimizer fuses the chain into its
DynamicQuantizeMatMul kernel (and the Add of the bias after it), as it does for quantize_dynamic's output.

Scope (say which in every figure):
- default: the MatMuls that read a weight: qkv, proj, fc1 and fc2 of every block. The patch embedding (a Conv),
  the head (a Gemm) and attention's two activation × activation products stay float32, as in our
  `-precision int8` (docs/precision.md).
- --attention: also attention's Q·Kᵀ and P·V (both operands DynamicQuantizeLinear'd, uint8 × uint8), as
  quantize_dynamic's default op types do.
- --per-tensor: one weight scale per matrix (quantize_dynamic's default per_channel=False).
- --reduce-range: 7-bit weights (−64…64), as reduce_range=True, which ONNX Runtime advises on x86-64 without VNNI:
  there its uint8 × int8 kernel (VPMADDUBSW) saturates the int16 sum of two products of full 8-bit operands.

Prints one JSON line: how many MatMuls were quantized, the scope, the output's size. Check the result with
`node ort_eval.js --check OUT.onnx IN` (cosine of its logits to timm's on the export's check images).
"""
import argparse, json, os, sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def quantize_weight(w, per_channel, qmax=127):
    """int8 symmetric weights of w (K, N) in −qmax…qmax: per output column n, or one scale for the matrix."""
    a = np.abs(w).max(axis=0) if per_channel else np.array([np.abs(w).max()], dtype=np.float32)
    scale = (a / qmax).astype(np.float32)
    scale[scale == 0] = 1.0  # an all-zero column: any scale gives zeros; ONNX Runtime takes 1
    q = np.clip(np.round(w / scale), -qmax, qmax).astype(np.int8)  # np.round: ties to even
    zp = np.zeros(scale.shape, dtype=np.int8)
    if not per_channel:
        return q, scale.reshape(()), zp.reshape(())
    return q, scale, zp


class Rewriter:
    def __init__(self, model, per_channel, qmax):
        self.g = model.graph
        self.inits = {i.name: i for i in self.g.initializer}
        self.per_channel = per_channel
        self.qmax = qmax
        self.dq = {}  # activation name -> (q, scale, zp) outputs of its DynamicQuantizeLinear
        self.wq = {}  # weight name -> its (q, scale, zp) initializers, made once however many MatMuls read it
        self.nodes = []
        self.new_inits = []

    def quantized_activation(self, name):
        if name not in self.dq:
            outs = [name + "_quantized", name + "_scale", name + "_zero_point"]
            self.nodes.append(helper.make_node("DynamicQuantizeLinear", [name], outs, name + "_QuantizeLinear"))
            self.dq[name] = outs
        return self.dq[name]

    def weight(self, name):
        if name in self.wq:
            return self.wq[name]
        w = numpy_helper.to_array(self.inits[name]).astype(np.float32)
        q, scale, zp = quantize_weight(w, self.per_channel, self.qmax)
        out = [name + "_quantized", name + "_scale", name + "_zero_point"]
        for arr, n in zip((q, scale, zp), out):
            self.new_inits.append(numpy_helper.from_array(arr, n))
        self.wq[name] = out
        return out

    def matmul(self, node, b):
        """Replace MatMul node by the quantize_dynamic chain; b = (q, scale, zp) of its second operand."""
        a = self.quantized_activation(node.input[0])
        y = node.output[0]
        self.nodes += [
            helper.make_node("MatMulInteger", [a[0], b[0], a[2], b[2]], [y + "_quantized"], node.name + "_quant"),
            helper.make_node("Cast", [y + "_quantized"], [y + "_quantized_cast_output"], node.name + "_cast",
                             to=TensorProto.FLOAT),
            helper.make_node("Mul", [a[1], b[1]], [y + "_scales_mul"], node.name + "_scales_mul"),
            helper.make_node("Mul", [y + "_quantized_cast_output", y + "_scales_mul"], [y],
                             node.name + "_output_scale_mul"),
        ]


def rewrite(model, attention, per_channel, qmax):
    r = Rewriter(model, per_channel, qmax)
    n_weight = n_attention = 0
    for node in r.g.node:
        if node.op_type != "MatMul":
            r.nodes.append(node)
            continue
        w = node.input[1]
        if w in r.inits and len(r.inits[w].dims) == 2 and r.inits[w].data_type == TensorProto.FLOAT:
            r.matmul(node, r.weight(w))
            n_weight += 1
        elif attention and node.input[0] not in r.inits and w not in r.inits:
            r.matmul(node, r.quantized_activation(w))
            n_attention += 1
        else:
            r.nodes.append(node)
    used = {i for n in r.nodes for i in n.input}
    keep = [i for i in r.g.initializer if i.name in used]
    del r.g.node[:]
    r.g.node.extend(r.nodes)
    del r.g.initializer[:]
    r.g.initializer.extend(keep + r.new_inits)
    return n_weight, n_attention


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("src")
    p.add_argument("dst")
    p.add_argument("--attention", action="store_true", help="also quantize Q·Kᵀ and P·V (uint8 × uint8)")
    p.add_argument("--per-tensor", action="store_true", help="one weight scale per matrix, not per column")
    p.add_argument("--reduce-range", action="store_true", help="7-bit weights (−64…64), as reduce_range=True")
    a = p.parse_args()
    try:
        model = onnx.load(a.src)
    except Exception as e:  # a missing file, a file that is not ONNX
        sys.exit(f"quantize_dynamic.py: reading {a.src}: {e}")
    n_weight, n_attention = rewrite(model, a.attention, not a.per_tensor, 64 if a.reduce_range else 127)
    if n_weight == 0:
        sys.exit(f"quantize_dynamic.py: {a.src} has no MatMul with a float32 weight initializer to quantize")
    onnx.checker.check_model(model)
    tmp = a.dst + ".tmp"
    onnx.save(model, tmp)
    os.replace(tmp, a.dst)
    print(json.dumps({"quantized": a.dst, "from": a.src, "weight_matmuls": n_weight,
                      "attention_matmuls": n_attention, "per_channel": not a.per_tensor,
                      "weight_range": 64 if a.reduce_range else 127,
                      "bytes": os.path.getsize(a.dst), "onnx": onnx.__version__}))


if __name__ == "__main__":
    main()
