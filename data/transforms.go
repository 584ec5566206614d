package data

import (
	"fmt"
	"math"
)

// Pipeline turns one uint8 image into a normalized float32 CHW image of the
// model's size. Training: [random resized crop's box] → resize (with
// RandAugment, on uint8) → random crop with padding → horizontal flip →
// [RandAugment] → normalize → random erasing; evaluation: resize →
// normalize. Every random draw comes from streams keyed by (seed, epoch,
// pos, purpose), so a sample's result does not depend on which goroutine or
// in which order it is computed.
type Pipeline struct {
	C, H, W int // output shape
	Train   bool
	Seed    uint64
	aug     AugmentConfig
	ra      *RandAugment
	mean    []float32
	std     []float32
	fill    []uint8 // RandAugment fill: round(255·mean)
	// rrcScale and rrcRatio are augment.rrc_scale and rrc_ratio.
	rrcScale, rrcRatio [2]float64
	norm               [][256]float32 // per channel: (v/255 − mean)/std of each uint8 v
}

// NewPipeline builds the per-sample transform for c-channel images of output
// size h×w with the given normalization (1 value or one per channel).
func NewPipeline(c, h, w int, train bool, seed uint64, aug AugmentConfig, mean, std []float64) (*Pipeline, error) {
	if c != 1 && c != 3 {
		return nil, fmt.Errorf("data: pipeline: channels must be 1 or 3, got %d", c)
	}
	if h <= 0 || w <= 0 {
		return nil, fmt.Errorf("data: pipeline: image size must be positive, got %dx%d", h, w)
	}
	if err := aug.Validate(); err != nil {
		return nil, err
	}
	if train {
		if err := aug.ValidateAt(h, w); err != nil {
			return nil, err
		}
	}
	if len(mean) == 0 {
		return nil, fmt.Errorf("data: pipeline: normalization mean/std missing")
	}
	if err := validateNorm("mean", "std", mean, std, c); err != nil {
		return nil, fmt.Errorf("data: pipeline: %w", err)
	}
	p := &Pipeline{C: c, H: h, W: w, Train: train, Seed: seed, aug: aug}
	a := aug.WithDefaults()
	p.rrcScale, p.rrcRatio = [2]float64(a.RRCScale), [2]float64(a.RRCRatio)
	p.aug.Interpolation = a.Interpolation // "" resolved: bilinear_aa with random_resized_crop
	if train {
		ra, err := ParseRandAugment(aug.RandAugment)
		if err != nil {
			return nil, fmt.Errorf("augment.rand_augment: %w", err)
		}
		p.ra = ra
	}
	for _, v := range broadcast(mean, c) {
		p.mean = append(p.mean, float32(v))
		p.fill = append(p.fill, uint8(min(255, math.RoundToEven(255*v))))
	}
	for _, v := range broadcast(std, c) {
		p.std = append(p.std, float32(v))
	}
	p.norm = make([][256]float32, c)
	for ch := range p.norm {
		for v := range p.norm[ch] {
			p.norm[ch][v] = (lutUnit[v] - p.mean[ch]) / p.std[ch]
		}
	}
	return p, nil
}

// scratch holds one worker's reusable buffers.
type scratch struct {
	rs resizer
	fa []float32
	fb []float32
	ua []uint8
	ub []uint8
	uc []uint8 // the random resized crop's box
}

func growF(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

func growU(b []uint8, n int) []uint8 {
	if cap(b) < n {
		return make([]uint8, n)
	}
	return b[:n]
}

// Apply transforms img (not modified) into dst, which must hold C·H·W
// values. epoch and pos (the sample's position in the epoch) key the random
// draws; they are ignored in evaluation.
func (p *Pipeline) Apply(dst []float32, img Image, epoch, pos int) error {
	var s scratch
	return p.apply(dst, img, epoch, pos, &s)
}

func (p *Pipeline) apply(dst []float32, img Image, epoch, pos int, s *scratch) error {
	if img.C != p.C {
		return fmt.Errorf("data: pipeline: image has %d channels, want %d", img.C, p.C)
	}
	if img.H <= 0 || img.W <= 0 || len(img.Pix) != img.C*img.H*img.W {
		return fmt.Errorf("data: pipeline: image of %dx%dx%d has %d pixels", img.C, img.H, img.W, len(img.Pix))
	}
	n := p.C * p.H * p.W
	if len(dst) != n {
		return fmt.Errorf("data: pipeline: destination holds %d values, want %d", len(dst), n)
	}
	s.rs.aa = p.aug.Interpolation == InterpBilinearAA
	key := func(purpose uint64) *rng {
		return newRNG(p.Seed, uint64(epoch), uint64(pos), purpose)
	}
	img = p.randomResizedCrop(img, key, s)
	var x []float32 // (C, H, W) in [0, 1]
	if p.Train && p.ra != nil {
		// timm order on uint8: resize, crop, flip, RandAugment; then ToTensor.
		u := p.resizeU8(img, s)
		u = p.cropFlip(u, key, s)
		p.ra.apply(Image{C: p.C, H: p.H, W: p.W, Pix: u}, key(streamRandAug), p.fill)
		p.normalize(dst, u, epoch, pos)
		return nil
	}
	x = p.toFloatResized(img, s)
	if p.Train {
		x = cropFlipF(p, x, key, s)
	}
	hw := p.H * p.W
	for ch := 0; ch < p.C; ch++ {
		m, sd := p.mean[ch], p.std[ch]
		src, out := x[ch*hw:(ch+1)*hw], dst[ch*hw:(ch+1)*hw]
		for i, v := range src {
			out[i] = (v - m) / sd
		}
	}
	p.erase(dst, epoch, pos)
	return nil
}

// normalize writes the uint8 image u (C, H, W) to dst as ToTensor (÷255)
// and Normalize do, through the per-channel table of the 256 results, then
// erases a random box in training.
func (p *Pipeline) normalize(dst []float32, u []uint8, epoch, pos int) {
	hw := p.H * p.W
	for ch := 0; ch < p.C; ch++ {
		lut := &p.norm[ch]
		out := dst[ch*hw : (ch+1)*hw]
		for i, v := range u[ch*hw : (ch+1)*hw] {
			out[i] = lut[v]
		}
	}
	p.erase(dst, epoch, pos)
}

// erase is timm's random erasing on the normalized image, in training.
func (p *Pipeline) erase(dst []float32, epoch, pos int) {
	if p.Train && p.aug.REProb > 0 {
		randomErase(dst, p.C, p.H, p.W, p.aug.REProb, newRNG(p.Seed, uint64(epoch), uint64(pos), streamErase))
	}
}

// toFloatResized is ToTensor (÷255) followed by the resize to (H, W).
func (p *Pipeline) toFloatResized(img Image, s *scratch) []float32 {
	out := growF(s.fa, p.C*p.H*p.W)
	s.fa = out
	if img.H == p.H && img.W == p.W {
		for i, v := range img.Pix {
			out[i] = lutUnit[v]
		}
		return out
	}
	s.rs.resizeU8(out, img.Pix, &lutUnit, p.C, img.H, img.W, p.H, p.W)
	return out
}

// resizeU8 resizes the uint8 image to (H, W), rounding like PIL.
func (p *Pipeline) resizeU8(img Image, s *scratch) []uint8 {
	n := p.C * p.H * p.W
	u := growU(s.ua, n)
	s.ua = u
	if img.H == p.H && img.W == p.W {
		copy(u, img.Pix)
		return u
	}
	out := growF(s.fb, n)
	s.fb = out
	s.rs.resizeU8(out, img.Pix, &lutIdentity, p.C, img.H, img.W, p.H, p.W)
	for i, v := range out {
		u[i] = uint8(min(max(v+0.5, 0), 255))
	}
	return u
}

// cropParams draws torchvision RandomCrop(size, padding=pad)'s offsets:
// top, left uniform in [0, 2·pad].
func cropParams(pad int, r *rng) (top, left int) {
	return r.intn(2*pad + 1), r.intn(2*pad + 1)
}

func (p *Pipeline) flipDraw(key func(uint64) *rng) bool {
	return p.aug.HFlip > 0 && key(streamFlip).float64() < p.aug.HFlip
}

func (p *Pipeline) cropFlip(u []uint8, key func(uint64) *rng, s *scratch) []uint8 {
	if pad := p.aug.CropPadding; pad > 0 {
		top, left := cropParams(pad, key(streamCrop))
		out := growU(s.ub, len(u))
		s.ub = out
		cropPad(out, u, p.C, p.H, p.W, top-pad, left-pad)
		u = out
	}
	if p.flipDraw(key) {
		hflip(u, p.C, p.H, p.W)
	}
	return u
}

func cropFlipF(p *Pipeline, x []float32, key func(uint64) *rng, s *scratch) []float32 {
	if pad := p.aug.CropPadding; pad > 0 {
		top, left := cropParams(pad, key(streamCrop))
		// x may be s.fa or s.fb; write into the other.
		var out []float32
		if len(s.fa) > 0 && &x[0] == &s.fa[0] {
			out = growF(s.fb, len(x))
			s.fb = out
		} else {
			out = growF(s.fa, len(x))
			s.fa = out
		}
		cropPad(out, x, p.C, p.H, p.W, top-pad, left-pad)
		x = out
	}
	if p.flipDraw(key) {
		hflip(x, p.C, p.H, p.W)
	}
	return x
}

// cropPad writes the (c, h, w) window of src shifted by (dy, dx) into dst:
// dst[y][x] = src[y+dy][x+dx], zero outside src (the zero padding of
// torchvision's RandomCrop).
func cropPad[T uint8 | float32](dst, src []T, c, h, w, dy, dx int) {
	hw := h * w
	for ch := 0; ch < c; ch++ {
		for y := 0; y < h; y++ {
			out := dst[ch*hw+y*w : ch*hw+(y+1)*w]
			sy := y + dy
			if sy < 0 || sy >= h {
				clear(out)
				continue
			}
			in := src[ch*hw+sy*w : ch*hw+(sy+1)*w]
			for x := range out {
				sx := x + dx
				if sx < 0 || sx >= w {
					out[x] = 0
				} else {
					out[x] = in[sx]
				}
			}
		}
	}
}

// hflip mirrors a (c, h, w) image left-right in place.
func hflip[T uint8 | float32](p []T, c, h, w int) {
	for row := 0; row < c*h; row++ {
		r := p[row*w : (row+1)*w]
		for i, j := 0, w-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
	}
}

// randomErase is timm's RandomErasing(probability=prob, mode="pixel",
// max_count=1) on a normalized (c, h, w) image: with probability prob, up to
// 10 attempts to place a box of area U(0.02, 1/3)·h·w and aspect
// exp(U(log 0.3, log 1/0.3)) that fits; the first that fits is filled with
// per-pixel standard normal noise.
func randomErase(x []float32, c, h, w int, prob float64, r *rng) (top, left, eh, ew int, erased bool) {
	if r.float64() > prob {
		return 0, 0, 0, 0, false
	}
	area := float64(h * w)
	logLo, logHi := math.Log(0.3), math.Log(1/0.3)
	for attempt := 0; attempt < 10; attempt++ {
		target := r.uniform(0.02, 1.0/3) * area
		aspect := math.Exp(r.uniform(logLo, logHi))
		eh = int(math.RoundToEven(math.Sqrt(target * aspect)))
		ew = int(math.RoundToEven(math.Sqrt(target / aspect)))
		if ew < w && eh < h {
			top = r.intn(h - eh + 1)
			left = r.intn(w - ew + 1)
			hw := h * w
			for ch := 0; ch < c; ch++ {
				for y := top; y < top+eh; y++ {
					row := x[ch*hw+y*w+left : ch*hw+y*w+left+ew]
					for i := range row {
						row[i] = float32(r.normal())
					}
				}
			}
			return top, left, eh, ew, true
		}
	}
	return 0, 0, 0, 0, false
}
