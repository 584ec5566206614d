// Package posembed resamples a ViT's absolute position-embedding table to a
// new patch grid, so a checkpoint trained at one image size (or patch size)
// can be fine-tuned or evaluated at another.
//
// The table is timm's pos_embed without its leading batch dim: (numPrefix +
// H·W, D) row-major, the prefix (CLS) rows first, then the H×W grid in
// row-major order. Resample keeps the prefix rows bitwise, treats the grid as
// D channels of an H×W image, resizes every channel to the new grid and
// flattens it back. This mirrors timm's resample_abs_pos_embed
// (timm/layers/pos_embed.py), which calls
//
//	F.interpolate(grid, size=(newH, newW), mode=mode, antialias=antialias, align_corners=False)
//
// and the modes reproduce PyTorch's CPU kernels to float32 rounding:
//
//   - Bicubic: Keys cubic convolution with A = -0.75, source coordinate
//     (i+0.5)·in/out − 0.5, neighbours clamped at the edges.
//   - Bilinear: triangle filter, same half-pixel coordinates, clamped.
//   - Nearest: PyTorch's legacy "nearest", src = floor(i·in/out) in float32.
//   - Antialias (Bicubic or Bilinear): PyTorch's separable antialiased
//     kernels (PIL semantics). When shrinking by s = in/out > 1 the filter's
//     support is widened by s and its argument divided by s; weights are
//     normalised to sum 1 and cut at the borders rather than clamped. As in
//     PyTorch the antialiased path is also used when enlarging (support not
//     widened), and its bicubic filter uses A = -0.5, not -0.75, so
//     Antialias changes the result of an upsample too. timm defaults to
//     antialias=True; the bench peer (shared/bench/vit_ref.py) uses False.
//
// Both passes are separable: the width axis is resampled first, then the
// height axis, accumulating in float64. An axis whose size does not change is
// copied, so an unchanged grid returns the table bitwise.
package posembed
