package main

import "github.com/vitgo/vit/layers"

// zeroPos sets the whole position table (class-token row included) to 0.
func zeroPos(m *layers.VisionTransformer) { layers.InitConst(m.Param("pos_embed").Value, 0) }

// permutePatches moves the P×P patches of n images (n, C, H, W) so that
// patch j (row-major on the grid) of the result is patch perm[j] of x.
func permutePatches(x []float64, n, c, h, w, p int, perm []int) []float64 {
	out := make([]float64, len(x))
	gw := w / p
	for i := 0; i < n*c; i++ {
		img, dst := x[i*h*w:(i+1)*h*w], out[i*h*w:(i+1)*h*w]
		for j, src := range perm {
			jy, jx := j/gw*p, j%gw*p
			sy, sx := src/gw*p, src%gw*p
			for y := 0; y < p; y++ {
				copy(dst[(jy+y)*w+jx:(jy+y)*w+jx+p], img[(sy+y)*w+sx:(sy+y)*w+sx+p])
			}
		}
	}
	return out
}
