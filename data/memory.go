package data

import "fmt"

// InMemory is a data set held in memory as one uint8 slice of CHW images:
// MNIST, Fashion-MNIST and CIFAR-10 are loaded into it by Open, and tests or
// callers can build one from their own arrays with NewInMemory.
type InMemory struct {
	name     string
	classes  []string
	c, h, w  int // stored layout
	outC     int // channels handed out by Item
	pix      []uint8
	labels   []int
	mean     []float64
	std      []float64
	itemSize int
}

var _ Dataset = (*InMemory)(nil)

// NewInMemory wraps len(labels) images of c×h×w uint8 pixels (CHW, image after
// image) as a Dataset named name. c must be 1 or 3; every label must index
// classes. The normalization defaults to DefaultNorm(name, c).
func NewInMemory(name string, classes []string, c, h, w int, pix []uint8, labels []int) (*InMemory, error) {
	if c != 1 && c != 3 {
		return nil, fmt.Errorf("data: %s: channels must be 1 or 3, got %d", name, c)
	}
	if h <= 0 || w <= 0 {
		return nil, fmt.Errorf("data: %s: image size must be positive, got %dx%d", name, h, w)
	}
	if len(classes) == 0 {
		return nil, fmt.Errorf("data: %s: no class names", name)
	}
	if err := CheckClassNames(name, classes); err != nil {
		return nil, err
	}
	size := c * h * w
	if len(pix) != len(labels)*size {
		return nil, fmt.Errorf("data: %s: %d pixels for %d images of %dx%dx%d (want %d)",
			name, len(pix), len(labels), c, h, w, len(labels)*size)
	}
	for i, l := range labels {
		if l < 0 || l >= len(classes) {
			return nil, fmt.Errorf("data: %s: image %d has label %d, outside the %d classes", name, i, l, len(classes))
		}
	}
	mean, std := DefaultNorm(DatasetName(name), c)
	return &InMemory{name: name, classes: classes, c: c, h: h, w: w, outC: c, pix: pix, labels: labels,
		mean: mean, std: std, itemSize: size}, nil
}

// withChannels makes Item convert to outC channels and sets the normalization.
func (m *InMemory) withChannels(outC int, mean, std []float64) *InMemory {
	m.outC, m.mean, m.std = outC, mean, std
	return m
}

// limit keeps the first n images.
func (m *InMemory) limit(n int) *InMemory {
	n = limitN(len(m.labels), n)
	m.labels = m.labels[:n]
	m.pix = m.pix[:n*m.itemSize]
	return m
}

// Name returns the data set's name.
func (m *InMemory) Name() string { return m.name }

// Len returns the number of images.
func (m *InMemory) Len() int { return len(m.labels) }

// Classes returns the class names.
func (m *InMemory) Classes() []string { return m.classes }

// Channels returns the channel count Item hands out.
func (m *InMemory) Channels() int { return m.outC }

// Norm returns the normalization mean and std.
func (m *InMemory) Norm() (mean, std []float64) { return m.mean, m.std }

// Item returns image i (sharing the data set's memory when no channel
// conversion is needed) and its label.
func (m *InMemory) Item(i int) (Image, int, error) {
	if i < 0 || i >= len(m.labels) {
		return Image{}, 0, fmt.Errorf("data: %s: item %d out of range [0,%d)", m.name, i, len(m.labels))
	}
	src := Image{C: m.c, H: m.h, W: m.w, Pix: m.pix[i*m.itemSize : (i+1)*m.itemSize : (i+1)*m.itemSize]}
	return convertChannels(src, m.outC), m.labels[i], nil
}

// convertChannels returns img with c channels: gray is replicated to RGB, RGB
// is reduced to luma. img is returned as is when it already has c channels.
func convertChannels(img Image, c int) Image {
	if img.C == c {
		return img
	}
	hw := img.H * img.W
	out := Image{C: c, H: img.H, W: img.W, Pix: make([]uint8, c*hw)}
	switch {
	case img.C == 1 && c == 3:
		copy(out.Pix[:hw], img.Pix)
		copy(out.Pix[hw:2*hw], img.Pix)
		copy(out.Pix[2*hw:], img.Pix)
	case img.C == 3 && c == 1:
		r, g, b := img.Pix[:hw], img.Pix[hw:2*hw], img.Pix[2*hw:3*hw]
		for i := range out.Pix {
			out.Pix[i] = lumaU8(r[i], g[i], b[i])
		}
	}
	return out
}

// lumaU8 is PIL's RGB→L conversion: ITU-R 601-2 luma in 16-bit fixed point,
// L = (R·19595 + G·38470 + B·7471 + 0x8000) >> 16.
func lumaU8(r, g, b uint8) uint8 {
	return uint8((uint32(r)*19595 + uint32(g)*38470 + uint32(b)*7471 + 0x8000) >> 16)
}
