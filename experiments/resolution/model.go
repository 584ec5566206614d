package main

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/train"
)

// method is how a 28×28 model's position table reaches a larger grid.
type method struct {
	name, short string
	interp      string // bicubic | bilinear | nearest; "" = zero-padded
}

var methods = []method{
	{"bicubic (timm default)", "bicubic", "bicubic"},
	{"bilinear", "bilinear", "bilinear"},
	{"naive: nearest (each position repeated)", "nearest", "nearest"},
	{"naive: zero-padded (7×7 table top-left, zeros elsewhere)", "zero-padded", ""},
}

// loadAt rebuilds a checkpoint's model at img_size size×size with the
// method's position table.
func loadAt(ckpt string, size int, m method) (*layers.VisionTransformer, train.ModelMeta, error) {
	sz := layers.Size2{size, size}
	if m.interp != "" {
		vit, meta, _, err := train.LoadModel(ckpt, tensor.Float32, &sz, m.interp)
		return vit, meta, err
	}
	src, meta, _, err := train.LoadModel(ckpt, tensor.Float32, nil, "")
	if err != nil {
		return nil, meta, err
	}
	vit, err := zeroPadded(src, sz)
	return vit, meta, err
}

// zeroPadded copies src into a model at img_size sz whose position table
// holds src's class-token row and its gh×gw grid in the top-left corner of
// the new grid, zeros elsewhere: what "just use the old table" amounts to.
func zeroPadded(src *layers.VisionTransformer, sz layers.Size2) (*layers.VisionTransformer, error) {
	c := src.Config
	c.ImgSize = sz
	dst, err := layers.New(c, tensor.Float32, 0)
	if err != nil {
		return nil, err
	}
	for _, p := range dst.Params {
		s := src.Param(p.Name).Value.Data().([]float32)
		d := p.Value.Data().([]float32)
		if p.Name != "pos_embed" {
			copy(d, s)
			continue
		}
		dim := c.EmbedDim
		oh, ow := src.Config.Grid()
		nh, nw := c.Grid()
		if nh < oh || nw < ow {
			return nil, fmt.Errorf("zero-padding: grid %dx%d is smaller than the trained %dx%d", nh, nw, oh, ow)
		}
		clear(d)
		copy(d[:dim], s[:dim]) // class token
		for i := 0; i < oh; i++ {
			for j := 0; j < ow; j++ {
				copy(d[(1+i*nw+j)*dim:(2+i*nw+j)*dim], s[(1+i*ow+j)*dim:(2+i*ow+j)*dim])
			}
		}
	}
	return dst, nil
}
