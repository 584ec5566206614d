package main

import (
	"testing"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/layers"
)

// TestZeroPadded checks the naive table: class row and the old grid in the
// top-left corner of the new one, zeros elsewhere, other weights copied.
func TestZeroPadded(t *testing.T) {
	c := layers.DefaultConfig()
	c.ImgSize, c.PatchSize, c.InChans, c.EmbedDim, c.Depth, c.NumHeads, c.NumClasses = layers.Size2{8, 12}, 4, 1, 4, 1, 1, 3
	src, err := layers.New(c, tensor.Float32, 1) // grid 2×3
	if err != nil {
		t.Fatal(err)
	}
	dst, err := zeroPadded(src, layers.Size2{12, 16}) // grid 3×4
	if err != nil {
		t.Fatal(err)
	}
	s := src.Param("pos_embed").Value.Data().([]float32)
	d := dst.Param("pos_embed").Value.Data().([]float32)
	const dim = 4
	row := func(v []float32, r int) []float32 { return v[r*dim : (r+1)*dim] }
	for r := 0; r < 1+3*4; r++ {
		want := make([]float32, dim) // zeros
		if r == 0 {
			want = row(s, 0)
		} else if i, j := (r-1)/4, (r-1)%4; i < 2 && j < 3 {
			want = row(s, 1+i*3+j)
		}
		for k, v := range row(d, r) {
			if v != want[k] {
				t.Fatalf("pos_embed row %d = %v, want %v", r, row(d, r), want)
			}
		}
	}
	a := src.Param("blocks.0.attn.qkv.weight").Value.Data().([]float32)
	b := dst.Param("blocks.0.attn.qkv.weight").Value.Data().([]float32)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("qkv weight [%d] = %v, want %v", i, b[i], a[i])
		}
	}
	if _, err := zeroPadded(src, layers.Size2{4, 4}); err == nil {
		t.Fatal("a smaller grid: want an error")
	}
}

// TestReadme: the committed README is the template's rendering of the
// committed results.json.
func TestReadme(t *testing.T) { experiment.TestReadme(t, ".") }
