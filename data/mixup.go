package data

import (
	"fmt"
	"math"
)

// Mixup is timm's Mixup (timm/data/mixup.py): mixup or CutMix of a batch with
// its reverse (image i with image N−1−i) and the matching soft targets,
// label-smoothed one-hot vectors mixed with the same lam, so every target row
// sums to 1. With no mixing configured it only builds (smoothed) targets.
type Mixup struct {
	cfg        MixupConfig
	cutAlpha   float64 // cfg.CutmixAlpha, forced to 1 by cutmix_minmax as in timm
	numClasses int
}

// NewMixup checks cfg and returns a Mixup for numClasses classes.
func NewMixup(cfg MixupConfig, numClasses int) (*Mixup, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if numClasses <= 0 {
		return nil, fmt.Errorf("data: mixup: number of classes must be positive, got %d", numClasses)
	}
	m := &Mixup{cfg: cfg, cutAlpha: cfg.CutmixAlpha, numClasses: numClasses}
	if len(cfg.CutmixMinMax) == 2 {
		m.cutAlpha = 1
	}
	return m, nil
}

// checkSize reports whether cutmix_minmax leaves a non-empty box-size range
// for an h×w image, as numpy's randint(int(h·min), int(h·max)) needs.
func (m *Mixup) checkSize(h, w int) error {
	if mm := m.cfg.CutmixMinMax; len(mm) == 2 {
		for _, s := range []int{h, w} {
			if int(float64(s)*mm[0]) >= int(float64(s)*mm[1]) {
				return fmt.Errorf("mixup.cutmix_minmax: %v gives no box size for a side of %d pixels", mm, s)
			}
		}
	}
	return nil
}

// SmoothOneHot writes the label-smoothed one-hot rows of labels into targets
// (len(labels)·numClasses): smoothing/numClasses off, 1 − smoothing +
// smoothing/numClasses on.
func SmoothOneHot(targets []float32, labels []int, numClasses int, smoothing float64) {
	off := smoothing / float64(numClasses)
	on := 1 - smoothing + off
	for i, l := range labels {
		row := targets[i*numClasses : (i+1)*numClasses]
		for k := range row {
			row[k] = float32(off)
		}
		row[l] = float32(on)
	}
}

// Apply mixes the batch x (N, c, h, w) in place and writes the soft targets
// (N, numClasses) of labels, drawing every random value from the stream keyed
// by key. It returns each row's lam (the weight of the row's own image and
// label). Labels must be in [0, numClasses).
func (m *Mixup) Apply(x []float32, labels []int, c, h, w int, targets []float32, key uint64) ([]float64, error) {
	return m.ApplyRows(x, labels, c, h, w, targets, key, nil, len(labels))
}

// ApplyRows is Apply for part of a batch of total rows: x, labels and
// targets hold the rows at positions rows[i] of that batch (nil: all of them,
// in order). Every row's partner must be in the part, mirrored: the partner
// of rows[i], at total−1−rows[i], is rows[len−1−i]. The part's rows are mixed
// and targeted exactly as Apply on the whole batch would, whose random draws
// for the other rows are replayed and dropped. This is how one rank of a
// data-parallel job builds its slice of a global batch.
func (m *Mixup) ApplyRows(x []float32, labels []int, c, h, w int, targets []float32, key uint64, rows []int, total int) ([]float64, error) {
	n := len(labels)
	local, err := mirrorRows(rows, n, total)
	if err != nil {
		return nil, err
	}
	if len(x) != n*c*h*w {
		return nil, fmt.Errorf("data: mixup: batch holds %d values, want %d×%d×%d×%d", len(x), n, c, h, w)
	}
	if len(targets) != n*m.numClasses {
		return nil, fmt.Errorf("data: mixup: targets hold %d values, want %d×%d", len(targets), n, m.numClasses)
	}
	for i, l := range labels {
		if l < 0 || l >= m.numClasses {
			return nil, fmt.Errorf("data: mixup: label %d of row %d is outside [0,%d)", l, i, m.numClasses)
		}
	}
	lam := make([]float64, n)
	for i := range lam {
		lam[i] = 1
	}
	if m.cfg.Active() && n > 0 {
		if err := m.checkSize(h, w); err != nil {
			return nil, err
		}
		r := &rng{s: key}
		switch m.cfg.Mode {
		case MixElem:
			m.mixElem(x, c, h, w, lam, r, false, total, local)
		case MixPair:
			m.mixElem(x, c, h, w, lam, r, true, total, local)
		default:
			m.mixBatch(x, c, h, w, lam, r)
		}
	}
	// mixup_target: y1·lam + y2·(1−lam), y2 the reversed batch's targets.
	k := m.numClasses
	off := m.cfg.LabelSmoothing / float64(k)
	on := 1 - m.cfg.LabelSmoothing + off
	for i := 0; i < n; i++ {
		row := targets[i*k : (i+1)*k]
		a, b := labels[i], labels[n-1-i]
		for j := range row {
			y1, y2 := off, off
			if j == a {
				y1 = on
			}
			if j == b {
				y2 = on
			}
			row[j] = float32(y1*lam[i] + y2*(1-lam[i]))
		}
	}
	return lam, nil
}

// drawLam is timm's choice of lam and of CutMix over mixup, without the
// mix-probability draw.
func (m *Mixup) drawLam(r *rng) (lam float64, cutmix bool) {
	ma, ca := m.cfg.MixupAlpha, m.cutAlpha
	switch {
	case ma > 0 && ca > 0:
		cutmix = r.float64() < m.cfg.SwitchProb.Value()
		if cutmix {
			return r.beta(ca, ca), true
		}
		return r.beta(ma, ma), false
	case ma > 0:
		return r.beta(ma, ma), false
	default:
		return r.beta(ca, ca), true
	}
}

// mixBatch is timm's _mix_batch: one lam for the batch.
func (m *Mixup) mixBatch(x []float32, c, h, w int, lam []float64, r *rng) {
	if !(r.float64() < m.cfg.Prob.Value()) {
		return
	}
	l, cut := m.drawLam(r)
	if l == 1 {
		return
	}
	n := len(lam)
	size := c * h * w
	if cut {
		yl, yh, xl, xh, corrected := m.cutmixBox(h, w, l, r)
		l = corrected
		for i := 0; i < n/2; i++ {
			j := n - 1 - i
			swapBox(x[i*size:(i+1)*size], x[j*size:(j+1)*size], c, h, w, yl, yh, xl, xh)
		}
	} else {
		mixPairs(x, n, size, l)
	}
	for i := range lam {
		lam[i] = l
	}
}

// mixPairs sets x[i] = lam·x[i] + (1−lam)·x[N−1−i] for every i at once.
func mixPairs(x []float32, n, size int, lam float64) {
	a32, b32 := float32(lam), float32(1-lam)
	for i := 0; i < (n+1)/2; i++ {
		j := n - 1 - i
		xi, xj := x[i*size:(i+1)*size], x[j*size:(j+1)*size]
		for k := range xi {
			vi, vj := xi[k], xj[k]
			xi[k] = float32(vi*a32) + float32(vj*b32)
			if i != j {
				xj[k] = float32(vj*a32) + float32(vi*b32)
			}
		}
	}
}

// mixElem is timm's _mix_elem (pair=false: one lam per element, each mixed
// with the original of its mirror) or _mix_pair (pair=true: one lam per pair,
// both members mixed symmetrically), over a batch of total rows of which x
// holds those that local maps to a row of x (nil: all, in order).
func (m *Mixup) mixElem(x []float32, c, h, w int, lam []float64, r *rng, pair bool, total int, local []int) {
	n := len(lam)
	size := c * h * w
	count := total
	if pair {
		count = total / 2
	}
	orig := make([]float32, len(x))
	copy(orig, x)
	for g := 0; g < count; g++ {
		l, cut := m.drawLam(r)
		if !(r.float64() < m.cfg.Prob.Value()) {
			l = 1
		}
		var yl, yh, xl, xh int
		if l != 1 && cut {
			yl, yh, xl, xh, l = m.cutmixBox(h, w, l, r)
		}
		i := g
		if local != nil {
			if i = local[g]; i < 0 {
				continue // another rank's row: its draws are made, nothing else
			}
		}
		j := n - 1 - i
		if l != 1 {
			xi, oj := x[i*size:(i+1)*size], orig[j*size:(j+1)*size]
			if cut {
				copyBox(xi, oj, c, h, w, yl, yh, xl, xh)
				if pair {
					copyBox(x[j*size:(j+1)*size], orig[i*size:(i+1)*size], c, h, w, yl, yh, xl, xh)
				}
			} else {
				a32, b32 := float32(l), float32(1-l)
				oi := orig[i*size : (i+1)*size]
				xj := x[j*size : (j+1)*size]
				for k := range xi {
					xi[k] = float32(oi[k]*a32) + float32(oj[k]*b32)
					if pair {
						xj[k] = float32(oj[k]*a32) + float32(oi[k]*b32)
					}
				}
			}
		}
		lam[i] = l
		if pair {
			lam[j] = l
		}
	}
}

// MirrorError is returned by ApplyRows for rows that are not a mirrored part
// of the batch.
type MirrorError struct {
	Rows  []int
	Total int
}

func (e *MirrorError) Error() string {
	return fmt.Sprintf("data: mixup: rows %v are not a mirrored part of a batch of %d (row i's partner total−1−i must be at the mirrored place)", e.Rows, e.Total)
}

// mirrorRows checks that rows (n of them) are a mirrored part of a batch of
// total and returns the map from batch position to row (−1: not here), or
// nil for the whole batch in order.
func mirrorRows(rows []int, n, total int) ([]int, error) {
	if rows == nil {
		if total != n {
			return nil, &MirrorError{Rows: nil, Total: total}
		}
		return nil, nil
	}
	if len(rows) != n {
		return nil, &MirrorError{Rows: rows, Total: total}
	}
	local := make([]int, total)
	for i := range local {
		local[i] = -1
	}
	for i, p := range rows {
		if p < 0 || p >= total || local[p] >= 0 || rows[n-1-i] != total-1-p {
			return nil, &MirrorError{Rows: rows, Total: total}
		}
		local[p] = i
	}
	return local, nil
}

// cutmixBox is timm's cutmix_bbox_and_lam: a box of side ratio √(1−lam)
// centred uniformly and clipped to the image (or, with cutmix_minmax, of
// uniform size in that range placed inside), and lam corrected to the
// unpasted area when correct_lam (always with cutmix_minmax).
func (m *Mixup) cutmixBox(h, w int, lam float64, r *rng) (yl, yh, xl, xh int, corrected float64) {
	if mm := m.cfg.CutmixMinMax; len(mm) == 2 {
		ch := r.intRange(int(float64(h)*mm[0]), int(float64(h)*mm[1]))
		cw := r.intRange(int(float64(w)*mm[0]), int(float64(w)*mm[1]))
		yl = r.intn(h - ch)
		xl = r.intn(w - cw)
		yh, xh = yl+ch, xl+cw
	} else {
		ratio := math.Sqrt(1 - lam)
		ch, cw := int(float64(h)*ratio), int(float64(w)*ratio)
		cy, cx := r.intn(h), r.intn(w)
		yl, yh = clampInt(cy-ch/2, 0, h), clampInt(cy+ch/2, 0, h)
		xl, xh = clampInt(cx-cw/2, 0, w), clampInt(cx+cw/2, 0, w)
	}
	corrected = lam
	if m.cfg.CorrectLam.Value() || len(m.cfg.CutmixMinMax) == 2 {
		corrected = 1 - float64((yh-yl)*(xh-xl))/float64(h*w)
	}
	return yl, yh, xl, xh, corrected
}

// copyBox copies the [yl,yh)×[xl,xh) box of every channel of src into dst.
func copyBox(dst, src []float32, c, h, w, yl, yh, xl, xh int) {
	for ch := 0; ch < c; ch++ {
		for y := yl; y < yh; y++ {
			o := ch*h*w + y*w
			copy(dst[o+xl:o+xh], src[o+xl:o+xh])
		}
	}
}

// swapBox exchanges the [yl,yh)×[xl,xh) box of every channel of a and b.
func swapBox(a, b []float32, c, h, w, yl, yh, xl, xh int) {
	for ch := 0; ch < c; ch++ {
		for y := yl; y < yh; y++ {
			o := ch*h*w + y*w
			for x := xl; x < xh; x++ {
				a[o+x], b[o+x] = b[o+x], a[o+x]
			}
		}
	}
}
