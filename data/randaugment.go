package data

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// levelDenom is timm's _LEVEL_DENOM: magnitudes are on a 0..10 scale.
const levelDenom = 10.0

// RandAugment is timm's RandAugment (timm/data/auto_augment.py,
// rand_augment_transform) on uint8 CHW images: NumOps ops are drawn with
// replacement from the op set; each is applied with probability Prob at a
// magnitude drawn around Magnitude.
type RandAugment struct {
	Magnitude  float64 // m: 0..MagMax
	NumOps     int     // n: ops per image (default 2)
	MagStd     float64 // mstd: Gaussian noise on the magnitude; +Inf = uniform in [0, m]
	MagMax     float64 // mmax: magnitude cap (default 10)
	Prob       float64 // p: probability of applying each drawn op (default 0.5)
	Increasing bool    // inc: use the ops whose severity increases with the magnitude
	ops        []raOp
}

// raOp is one RandAugment op: level maps a magnitude to the op's argument
// (drawing a random sign where timm does), apply runs it.
type raOp struct {
	name  string
	level func(mag float64, r *rng) float64
	apply func(img Image, arg float64, fill []uint8)
}

var raSpecKey = regexp.MustCompile(`^([a-z]+)(\d.*)$`)

// ParseRandAugment parses a timm RandAugment spec such as "rand-m9-mstd0.5"
// or "rand-m9-n3-mstd0.5-inc1": sections after "rand" are m (magnitude,
// integer), n (ops per image, integer), mstd (magnitude std, > 100 means
// uniform), mmax (magnitude cap, integer), p (op probability), inc (1 =
// increasing ops). "" returns nil (off). timm's "w" (weighted choice) and "t"
// (custom op list) are not supported.
func ParseRandAugment(spec string) (*RandAugment, error) {
	if spec == "" {
		return nil, nil
	}
	parts := strings.Split(spec, "-")
	if parts[0] != "rand" {
		return nil, fmt.Errorf("spec %q must start with \"rand\" (e.g. rand-m9-mstd0.5)", spec)
	}
	ra := &RandAugment{Magnitude: levelDenom, NumOps: 2, MagMax: levelDenom, Prob: 0.5}
	for _, p := range parts[1:] {
		m := raSpecKey.FindStringSubmatch(p)
		if m == nil {
			return nil, fmt.Errorf("spec %q: section %q is not a key followed by a number", spec, p)
		}
		key, val := m[1], m[2]
		f, err := strconv.ParseFloat(val, 64)
		if err != nil || math.IsNaN(f) {
			return nil, fmt.Errorf("spec %q: section %q: bad number %q", spec, p, val)
		}
		isInt := f == math.Trunc(f) && !strings.ContainsAny(val, ".eE")
		switch key {
		case "m":
			if !isInt {
				return nil, fmt.Errorf("spec %q: magnitude m must be an integer, got %q", spec, val)
			}
			ra.Magnitude = f
		case "n":
			if !isInt || f < 1 || f > 16 {
				return nil, fmt.Errorf("spec %q: ops per image n must be an integer in [1,16], got %q", spec, val)
			}
			ra.NumOps = int(f)
		case "mstd":
			if f < 0 {
				return nil, fmt.Errorf("spec %q: mstd must be >= 0, got %q", spec, val)
			}
			if f > 100 {
				f = math.Inf(1)
			}
			ra.MagStd = f
		case "mmax":
			if !isInt || f <= 0 {
				return nil, fmt.Errorf("spec %q: mmax must be a positive integer, got %q", spec, val)
			}
			ra.MagMax = f
		case "p":
			if f < 0 || f > 1 {
				return nil, fmt.Errorf("spec %q: op probability p must be in [0,1], got %q", spec, val)
			}
			ra.Prob = f
		case "inc":
			ra.Increasing = f != 0
		default:
			return nil, fmt.Errorf("spec %q: unknown or unsupported section %q (known: m, n, mstd, mmax, p, inc)", spec, key)
		}
	}
	if ra.Magnitude < 0 {
		return nil, fmt.Errorf("spec %q: magnitude must be >= 0", spec)
	}
	ra.ops = randAugmentOps(ra.Increasing)
	return ra, nil
}

// OpNames returns the names of the ops RandAugment draws from, in timm's order.
func (ra *RandAugment) OpNames() []string {
	names := make([]string, len(ra.ops))
	for i, op := range ra.ops {
		names[i] = op.name
	}
	return names
}

// apply runs NumOps random ops on img in place (timm's RandAugment.__call__
// and AugmentOp.__call__). fill is the per-channel colour of pixels that
// geometric ops uncover.
func (ra *RandAugment) apply(img Image, r *rng, fill []uint8) {
	for k := 0; k < ra.NumOps; k++ {
		op := ra.ops[r.intn(len(ra.ops))]
		if ra.Prob < 1 && r.float64() > ra.Prob {
			continue
		}
		mag := ra.Magnitude
		if ra.MagStd > 0 {
			if math.IsInf(ra.MagStd, 1) {
				mag = r.uniform(0, mag)
			} else {
				mag += ra.MagStd * r.normal()
			}
		}
		mag = math.Max(0, math.Min(mag, ra.MagMax))
		var arg float64
		if op.level != nil {
			arg = op.level(mag, r)
		}
		op.apply(img, arg, fill)
	}
}

// randomlyNegate is timm's _randomly_negate.
func randomlyNegate(v float64, r *rng) float64 {
	if r.float64() > 0.5 {
		return -v
	}
	return v
}

// Level functions of timm's LEVEL_TO_ARG.
func rotateLevel(m float64, r *rng) float64 { return randomlyNegate(m/levelDenom*30, r) }
func shearLevel(m float64, r *rng) float64  { return randomlyNegate(m/levelDenom*0.3, r) }
func translateRelLevel(m float64, r *rng) float64 {
	return randomlyNegate(m/levelDenom*0.45, r)
}
func enhanceLevel(m float64, _ *rng) float64 { return m/levelDenom*1.8 + 0.1 }
func enhanceIncreasingLevel(m float64, r *rng) float64 {
	return 1 + randomlyNegate(m/levelDenom*0.9, r)
}
func posterizeLevel(m float64, _ *rng) float64 { return math.Trunc(m / levelDenom * 4) }
func posterizeIncreasingLevel(m float64, _ *rng) float64 {
	return 4 - math.Trunc(m/levelDenom*4)
}
func solarizeLevel(m float64, _ *rng) float64 { return math.Trunc(m / levelDenom * 256) }
func solarizeIncreasingLevel(m float64, _ *rng) float64 {
	return 256 - math.Trunc(m/levelDenom*256)
}
func solarizeAddLevel(m float64, _ *rng) float64 { return math.Trunc(m / levelDenom * 110) }

// randAugmentOps returns timm's _RAND_TRANSFORMS (or
// _RAND_INCREASING_TRANSFORMS) with their level functions.
func randAugmentOps(increasing bool) []raOp {
	enh := enhanceLevel
	post, sol := posterizeLevel, solarizeLevel
	suffix := ""
	if increasing {
		enh, post, sol = enhanceIncreasingLevel, posterizeIncreasingLevel, solarizeIncreasingLevel
		suffix = "Increasing"
	}
	return []raOp{
		{name: "AutoContrast", apply: func(img Image, _ float64, _ []uint8) { autoContrast(img) }},
		{name: "Equalize", apply: func(img Image, _ float64, _ []uint8) { equalize(img) }},
		{name: "Invert", apply: func(img Image, _ float64, _ []uint8) { invert(img) }},
		{name: "Rotate", level: rotateLevel, apply: rotate},
		{name: "Posterize" + suffix, level: post, apply: func(img Image, a float64, _ []uint8) { posterize(img, int(a)) }},
		{name: "Solarize" + suffix, level: sol, apply: func(img Image, a float64, _ []uint8) { solarize(img, int(a)) }},
		{name: "SolarizeAdd", level: solarizeAddLevel, apply: func(img Image, a float64, _ []uint8) { solarizeAdd(img, int(a), 128) }},
		{name: "Color" + suffix, level: enh, apply: func(img Image, a float64, _ []uint8) { enhanceColor(img, a) }},
		{name: "Contrast" + suffix, level: enh, apply: func(img Image, a float64, _ []uint8) { enhanceContrast(img, a) }},
		{name: "Brightness" + suffix, level: enh, apply: func(img Image, a float64, _ []uint8) { enhanceBrightness(img, a) }},
		{name: "Sharpness" + suffix, level: enh, apply: func(img Image, a float64, _ []uint8) { enhanceSharpness(img, a) }},
		{name: "ShearX", level: shearLevel, apply: shearX},
		{name: "ShearY", level: shearLevel, apply: shearY},
		{name: "TranslateXRel", level: translateRelLevel, apply: translateXRel},
		{name: "TranslateYRel", level: translateRelLevel, apply: translateYRel},
	}
}
