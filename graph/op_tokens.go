package graph

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Patchify unfolds images (B, C, H, W) into non-overlapping P×P patches, one
// row per patch: (B·gh·gw, C·P·P) with gh = H/P, gw = W/P. Patches are taken in
// row-major grid order and each row is laid out channel, then row, then column
// — the order of a conv weight [D, C, P, P] flattened — so Linear with that
// weight equals a stride-P, kernel-P convolution.
func Patchify(img *G.Node, patch int) (*G.Node, error) {
	s := img.Shape()
	if img.Dims() != 4 {
		return nil, fmt.Errorf("Patchify: want images (B,C,H,W), got %v", s)
	}
	b, c, h, w := s[0], s[1], s[2], s[3]
	if patch <= 0 || h%patch != 0 || w%patch != 0 {
		return nil, fmt.Errorf("Patchify: image %dx%d is not divisible by patch %d", h, w, patch)
	}
	if b*c*h*w > math.MaxInt32 {
		return nil, fmt.Errorf("Patchify: images %v have more than %d elements", s, math.MaxInt32)
	}
	gh, gw := h/patch, w/patch
	// One run per patch row: no element-wise table (which would be as large
	// as the images, twice with its inverse).
	runs := make([]run, 0, b*gh*gw*c*patch)
	o := 0
	for bi := 0; bi < b; bi++ {
		for py := 0; py < gh; py++ {
			for px := 0; px < gw; px++ {
				for ci := 0; ci < c; ci++ {
					for y := 0; y < patch; y++ {
						runs = append(runs, run{dst: int32(o), src: int32(((bi*c+ci)*h+py*patch+y)*w + px*patch), n: int32(patch)})
						o += patch
					}
				}
			}
		}
	}
	out := tensor.Shape{b * gh * gw, c * patch * patch}
	op := &permuteOp{opBase: newOpBase(), name: "Patchify", in: s.Clone(), outShape: out, runs: runs}
	return G.ApplyOp(op, img)
}

// ChannelsLast turns a (B, D, gh, gw) feature map into (B·gh·gw, D) token
// rows, in row-major grid order: a convolutional patch embedding's output in
// the layout the transformer uses.
func ChannelsLast(x *G.Node) (*G.Node, error) {
	s := x.Shape()
	if x.Dims() != 4 {
		return nil, fmt.Errorf("ChannelsLast: want (B,D,H,W), got %v", s)
	}
	b, d, h, w := s[0], s[1], s[2], s[3]
	perm := make([]int32, b*d*h*w)
	o := 0
	for bi := 0; bi < b; bi++ {
		for y := 0; y < h; y++ {
			for xx := 0; xx < w; xx++ {
				for di := 0; di < d; di++ {
					perm[o] = int32(((bi*d+di)*h+y)*w + xx)
					o++
				}
			}
		}
	}
	return Permute(x, tensor.Shape{b * h * w, d}, perm, "ChannelsLast")
}

// Permute gathers the elements of x into a tensor of shape out:
// y[i] = x[perm[i]]. perm must be a permutation of x's elements; the gradient
// scatters back through the inverse permutation.
func Permute(x *G.Node, out tensor.Shape, perm []int32, name string) (*G.Node, error) {
	n := x.Shape().TotalSize()
	if out.TotalSize() != n || len(perm) != n {
		return nil, fmt.Errorf("%s: %d elements cannot become %v", name, n, out)
	}
	inv := make([]int32, n)
	seen := make([]bool, n)
	for i, p := range perm {
		if p < 0 || int(p) >= n || seen[p] {
			return nil, fmt.Errorf("%s: index %d is not a permutation", name, i)
		}
		seen[p] = true
		inv[p] = int32(i)
	}
	op := &permuteOp{opBase: newOpBase(), name: name, in: x.Shape().Clone(), outShape: out.Clone()}
	if op.runs = contiguousRuns(perm); op.runs == nil {
		op.perm, op.inv = perm, inv
	}
	return G.ApplyOp(op, x)
}

// run is one copy of a permutation cut into runs: dst[dst:dst+n] =
// src[src:src+n].
type run struct{ dst, src, n int32 }

// contiguousRuns returns perm's runs of consecutive source indices when
// they average at least 8 elements, else nil: the gather then copies runs
// instead of single elements.
func contiguousRuns(perm []int32) []run {
	var runs []run
	for i := range perm {
		if i > 0 && perm[i] == perm[i-1]+1 {
			runs[len(runs)-1].n++
			continue
		}
		if runs = append(runs, run{dst: int32(i), src: perm[i], n: 1}); len(runs)*8 > len(perm) {
			return nil
		}
	}
	return runs
}

// gatherRuns is gather for a permutation cut into runs (n elements in all),
// split over the cores by runs.
func gatherRuns[T Float](dst, src []T, runs []run, n int) {
	grain := max(1, (1<<14)*len(runs)/max(n, 1))
	parallelForGrain(len(runs), grain, func(lo, hi int) {
		for _, r := range runs[lo:hi] {
			copy(dst[r.dst:r.dst+r.n], src[r.src:r.src+r.n])
		}
	})
}

// reversed is the inverse permutation's runs: each copy the other way.
func reversed(runs []run) []run {
	back := make([]run, len(runs))
	for i, r := range runs {
		back[i] = run{dst: r.src, src: r.dst, n: r.n}
	}
	return back
}

// permuteOp is y[i] = x[perm[i]], kept either as the permutation and its
// inverse, element by element, or, when it has long runs of consecutive
// indices (Patchify's patch rows), as those runs alone.
type permuteOp struct {
	opBase
	name         string
	in, outShape tensor.Shape
	perm, inv    []int32 // element by element (nil with runs)
	runs         []run   // the copies of contiguous runs, or nil
	out          buffer
}

var _ G.SDOp = (*permuteOp)(nil)

func (op *permuteOp) Arity() int    { return 1 }
func (op *permuteOp) Type() hm.Type { return fnType(op.in.Dims(), op.outShape.Dims()) }
func (op *permuteOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return op.outShape.Clone(), nil
}

func (op *permuteOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := denses(op.name, vs, 1)
	if err != nil {
		return nil, err
	}
	n := op.in.TotalSize()
	if in[0].Shape().TotalSize() != n {
		return nil, fmt.Errorf("%s: input %v, want %v", op.name, in[0].Shape(), op.in)
	}
	y := op.out.get(in[0].Dtype(), op.outShape...)
	switch {
	case op.runs != nil && in[0].Dtype() == tensor.Float32:
		gatherRuns(data[float32](y), data[float32](in[0]), op.runs, n)
	case op.runs != nil:
		gatherRuns(data[float64](y), data[float64](in[0]), op.runs, n)
	case in[0].Dtype() == tensor.Float32:
		gather(data[float32](y), data[float32](in[0]), op.perm)
	default:
		gather(data[float64](y), data[float64](in[0]), op.perm)
	}
	return y, nil
}

// gather sets dst[i] = src[idx[i]], split over the cores.
func gather[T Float](dst, src []T, idx []int32) {
	parallelForGrain(len(idx), 1<<14, func(lo, hi int) {
		d := dst[lo:hi]
		for i, j := range idx[lo:hi] {
			d[i] = src[j]
		}
	})
}

func (op *permuteOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "%s(%v→%v)", op.name, op.in, op.outShape)
	op.writeID(h)
}
func (op *permuteOp) Hashcode() uint32   { return hashOf(op) }
func (op *permuteOp) String() string     { return op.name }
func (op *permuteOp) DiffWRT(int) []bool { return []bool{true} }
func (op *permuteOp) SymDiff(_ G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	back := &permuteOp{opBase: newOpBase(), name: op.name + "Grad", in: op.outShape, outShape: op.in, perm: op.inv, inv: op.perm}
	if op.runs != nil {
		back.runs = reversed(op.runs)
	}
	d, err := G.ApplyOp(back, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{d}, nil
}

// Tokens assembles the transformer's input sequence: for each of the batch
// samples, the class token followed by its N patch rows, plus the position
// table. patches is (B·N, D), cls (1, 1, D), pos (1, N+1, D); the result is
// (B·(N+1), D).
func Tokens(patches, cls, pos *G.Node, batch int) (*G.Node, error) {
	return TokensPrefix(patches, pos, batch, cls)
}

// TokensPrefix is [Tokens] with k ≥ 1 prefix tokens (timm's
// num_prefix_tokens): for each sample the prefix tokens in order (DeiT's
// cls_token, dist_token), then its N patch rows, plus the position table,
// which covers the prefix rows too. patches is (B·N, D), each prefix token
// (1, 1, D), pos (1, k+N, D); the result is (B·(k+N), D).
func TokensPrefix(patches, pos *G.Node, batch int, prefix ...*G.Node) (*G.Node, error) {
	if len(prefix) == 0 {
		return nil, fmt.Errorf("Tokens: no prefix token")
	}
	ps, qs := patches.Shape(), pos.Shape()
	if patches.Dims() != 2 || batch <= 0 || ps[0]%batch != 0 {
		return nil, fmt.Errorf("Tokens: patches %v do not split into %d samples", ps, batch)
	}
	n, d, k := ps[0]/batch, ps[1], len(prefix)
	for i, c := range prefix {
		if !c.Shape().Eq(tensor.Shape{1, 1, d}) {
			return nil, fmt.Errorf("Tokens: prefix token %d is %v, want (1, 1, %d)", i, c.Shape(), d)
		}
	}
	if !qs.Eq(tensor.Shape{1, n + k, d}) {
		return nil, fmt.Errorf("Tokens: pos_embed is %v, want (1, %d, %d)", qs, n+k, d)
	}
	op := &tokensOp{opBase: newOpBase(), batch: batch, n: n, dim: d, prefix: k}
	return G.ApplyOp(op, append([]*G.Node{patches, pos}, prefix...)...)
}

// tokensOp's inputs are the patch rows, the position table, then the
// prefix tokens.
type tokensOp struct {
	opBase
	batch, n, dim int
	prefix        int // prefix tokens before the patch rows
	out           buffer
}

var _ G.SDOp = (*tokensOp)(nil)

func (op *tokensOp) tokens() int { return op.prefix + op.n }
func (op *tokensOp) Arity() int  { return 2 + op.prefix }
func (op *tokensOp) Type() hm.Type {
	ranks := []int{2, 3}
	for range op.prefix {
		ranks = append(ranks, 3)
	}
	return fnType(append(ranks, 2)...)
}
func (op *tokensOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.batch * op.tokens(), op.dim}, nil
}

func (op *tokensOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := denses("Tokens", vs, op.Arity())
	if err != nil {
		return nil, err
	}
	if in[0].Shape().TotalSize() != op.batch*op.n*op.dim || in[1].Shape().TotalSize() != op.tokens()*op.dim {
		return nil, fmt.Errorf("Tokens: inputs %v, %v do not fit", in[0].Shape(), in[1].Shape())
	}
	for _, c := range in[2:] {
		if c.Shape().TotalSize() != op.dim {
			return nil, fmt.Errorf("Tokens: prefix token %v does not fit", c.Shape())
		}
	}
	y := op.out.get(in[0].Dtype(), op.batch*op.tokens(), op.dim)
	switch in[0].Dtype() {
	case tensor.Float32:
		tokensForward(op, data[float32](y), data[float32](in[0]), data[float32](in[1]), prefixData[float32](in[2:]))
	default:
		tokensForward(op, data[float64](y), data[float64](in[0]), data[float64](in[1]), prefixData[float64](in[2:]))
	}
	return y, nil
}

func prefixData[T Float](ts []*tensor.Dense) [][]T {
	out := make([][]T, len(ts))
	for i, t := range ts {
		out[i] = data[T](t)
	}
	return out
}

func tokensForward[T Float](op *tokensOp, y, patches, pos []T, prefix [][]T) {
	t, d, k := op.tokens(), op.dim, op.prefix
	parallelFor(op.batch, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			yb := y[b*t*d : (b+1)*t*d]
			for i, c := range prefix {
				for j := 0; j < d; j++ {
					yb[i*d+j] = c[j] + pos[i*d+j]
				}
			}
			pb, rest, ps := patches[b*op.n*d:(b+1)*op.n*d], yb[k*d:], pos[k*d:t*d]
			for i, v := range pb {
				rest[i] = v + ps[i]
			}
		}
	})
}

func (op *tokensOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "Tokens(B%d,N%d,D%d,K%d)", op.batch, op.n, op.dim, op.prefix)
	op.writeID(h)
}
func (op *tokensOp) Hashcode() uint32 { return hashOf(op) }
func (op *tokensOp) String() string   { return "Tokens" }
func (op *tokensOp) DiffWRT(int) []bool {
	d := make([]bool, op.Arity())
	for i := range d {
		d[i] = true
	}
	return d
}

func (op *tokensOp) SymDiff(_ G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	var out G.Nodes
	for part := 0; part < op.Arity(); part++ {
		n, err := G.ApplyOp(&tokensGradOp{opBase: newOpBase(), fwd: op, part: part}, grad)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// tokensGradOp maps dy (B·T, D) to the gradient of one Tokens input: part 0
// the patch rows, part 1 the position table (summed over samples), part
// 2+i prefix token i (summed over samples).
type tokensGradOp struct {
	opBase
	fwd  *tokensOp
	part int
	out  buffer
}

func (op *tokensGradOp) Arity() int { return 1 }
func (op *tokensGradOp) Type() hm.Type {
	if op.part == 0 {
		return fnType(2, 2)
	}
	return fnType(2, 3)
}

func (op *tokensGradOp) shape() tensor.Shape {
	f := op.fwd
	switch op.part {
	case 0:
		return tensor.Shape{f.batch * f.n, f.dim}
	case 1:
		return tensor.Shape{1, f.tokens(), f.dim}
	}
	return tensor.Shape{1, 1, f.dim}
}

func (op *tokensGradOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return op.shape(), nil }

func (op *tokensGradOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := denses("TokensGrad", vs, 1)
	if err != nil {
		return nil, err
	}
	y := op.out.get(in[0].Dtype(), op.shape()...)
	switch in[0].Dtype() {
	case tensor.Float32:
		tokensBackward(op, data[float32](y), data[float32](in[0]))
	default:
		tokensBackward(op, data[float64](y), data[float64](in[0]))
	}
	return y, nil
}

func tokensBackward[T Float](op *tokensGradOp, dst, dy []T) {
	f := op.fwd
	t, d, k := f.tokens(), f.dim, f.prefix
	if op.part == 0 {
		parallelFor(f.batch, func(lo, hi int) {
			for b := lo; b < hi; b++ {
				copy(dst[b*f.n*d:(b+1)*f.n*d], dy[(b*t+k)*d:(b+1)*t*d])
			}
		})
		return
	}
	// Sum over samples, each element in sample order (on every core,
	// split by element), so the result does not depend on the split.
	// The position table sums whole samples, prefix token i its row i.
	off, w := (op.part-2)*d, d
	if op.part == 1 {
		off, w = 0, t*d
	}
	// A chunk of columns sums them over every sample: at least
	// 2^14 additions a chunk (TINY's position gradient, 50×64
	// columns over 128 samples, is eight chunks, not one).
	parallelForGrain(w, max(64, (1<<14)/max(f.batch, 1)), func(lo, hi int) {
		o := dst[lo:hi]
		clear(o)
		for b := 0; b < f.batch; b++ {
			src := dy[b*t*d+off+lo : b*t*d+off+hi]
			for i, v := range src {
				o[i] += v
			}
		}
	})
}

func (op *tokensGradOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "TokensGrad(%d,%d)", op.fwd.id, op.part)
	op.writeID(h)
}
func (op *tokensGradOp) Hashcode() uint32 { return hashOf(op) }
func (op *tokensGradOp) String() string   { return "TokensGrad" }

// Readout picks each sample's representation from the (B·T, D) token rows:
// the class token (row 0 of the sample) when mean is false, else the mean of
// the patch tokens (rows 1…T−1), as timm's global_pool "token" and "avg".
func Readout(x *G.Node, batch int, mean bool) (*G.Node, error) {
	s := x.Shape()
	if x.Dims() != 2 || batch <= 0 || s[0]%batch != 0 || s[0]/batch < 2 {
		return nil, fmt.Errorf("Readout: %v does not split into %d samples of ≥ 2 tokens", s, batch)
	}
	op := &readoutOp{opBase: newOpBase(), batch: batch, tokens: s[0] / batch, dim: s[1], mean: mean, rows: 1}
	return G.ApplyOp(op, x)
}

// ReadoutRows picks rows first … first+count−1 of each sample from the
// (B·T, D) token rows: (B·count, D), sample by sample. DeiT reads its class
// token with (0, 1) and its distillation token with (1, 1); a Frozen graph
// keeps both prefix rows with (0, 2).
func ReadoutRows(x *G.Node, batch, first, count int) (*G.Node, error) {
	s := x.Shape()
	if x.Dims() != 2 || batch <= 0 || s[0]%batch != 0 || first < 0 || count < 1 || first+count > s[0]/batch {
		return nil, fmt.Errorf("Readout: rows %d…%d of %v split into %d samples do not exist", first, first+count-1, s, batch)
	}
	op := &readoutOp{opBase: newOpBase(), batch: batch, tokens: s[0] / batch, dim: s[1], first: first, rows: count}
	return G.ApplyOp(op, x)
}

type readoutOp struct {
	opBase
	batch, tokens, dim int
	mean               bool
	first, rows        int  // without mean: the rows kept of each sample
	grad               bool // the adjoint: (B·rows, D) or (B, D) → (B·T, D)
	out                buffer
}

var _ G.SDOp = (*readoutOp)(nil)

func (op *readoutOp) Arity() int    { return 1 }
func (op *readoutOp) Type() hm.Type { return fnType(2, 2) }
func (op *readoutOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	if op.grad {
		return tensor.Shape{op.batch * op.tokens, op.dim}, nil
	}
	if op.mean {
		return tensor.Shape{op.batch, op.dim}, nil
	}
	return tensor.Shape{op.batch * op.rows, op.dim}, nil
}

func (op *readoutOp) Do(vs ...G.Value) (G.Value, error) {
	in, err := denses("Readout", vs, 1)
	if err != nil {
		return nil, err
	}
	s, _ := op.InferShape()
	y := op.out.get(in[0].Dtype(), s...)
	switch in[0].Dtype() {
	case tensor.Float32:
		readout(op, data[float32](y), data[float32](in[0]))
	default:
		readout(op, data[float64](y), data[float64](in[0]))
	}
	return y, nil
}

func readout[T Float](op *readoutOp, dst, src []T) {
	t, d := op.tokens, op.dim
	r, lo := op.rows*d, op.first*d // a sample's kept rows, and where they start
	inv := T(1 / float64(t-1))
	for b := 0; b < op.batch; b++ {
		switch {
		case !op.grad && !op.mean:
			copy(dst[b*r:(b+1)*r], src[b*t*d+lo:b*t*d+lo+r])
		case !op.grad:
			o := dst[b*d : (b+1)*d]
			clear(o)
			for i := 1; i < t; i++ {
				add(o, o, src[(b*t+i)*d:(b*t+i+1)*d])
			}
			for j := range o {
				o[j] *= inv
			}
		case !op.mean:
			o := dst[b*t*d : (b+1)*t*d]
			clear(o)
			copy(o[lo:lo+r], src[b*r:(b+1)*r])
		default:
			o := dst[b*t*d : (b+1)*t*d]
			clear(o[:d])
			for i := 1; i < t; i++ {
				for j := 0; j < d; j++ {
					o[i*d+j] = src[b*d+j] * inv
				}
			}
		}
	}
}

func (op *readoutOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "Readout(B%d,T%d,D%d,mean=%t,rows=%d+%d,grad=%t)", op.batch, op.tokens, op.dim, op.mean, op.first, op.rows, op.grad)
	op.writeID(h)
}
func (op *readoutOp) Hashcode() uint32   { return hashOf(op) }
func (op *readoutOp) String() string     { return "Readout" }
func (op *readoutOp) DiffWRT(int) []bool { return []bool{true} }
func (op *readoutOp) SymDiff(_ G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	back := &readoutOp{opBase: newOpBase(), batch: op.batch, tokens: op.tokens, dim: op.dim, mean: op.mean, first: op.first, rows: op.rows, grad: true}
	d, err := G.ApplyOp(back, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{d}, nil
}
