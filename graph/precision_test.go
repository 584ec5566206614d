package graph

import (
	"errors"
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/graph/kernels"
	"github.com/vitgo/vit/internal/enum"
)

// f32s is a float32 node's value (or gradient) as its own slice.
func f32s(t *testing.T, v G.Value) []float32 {
	t.Helper()
	d, ok := v.Data().([]float32)
	if !ok {
		t.Fatalf("value is %T, want []float32", v.Data())
	}
	return append([]float32(nil), d...)
}

func sameBits32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// linearRun builds y = Linear(x, w, b) on float32 inputs drawn from seeds,
// with the cost Σ y⊙R, so that dy = R exactly, runs forward and backward,
// and returns x, w, b (nil without bias), R, y, dx, dw and db.
func linearRun(t *testing.T, p Precision, bias bool, m, k, n int) (x, w, b, r, y, dx, dw, db []float32) {
	t.Helper()
	g := G.NewGraph()
	xn := randNode(g, tensor.Float32, "x", 1, 1, m, k)
	wn := randNode(g, tensor.Float32, "w", 1, 2, n, k)
	var bn *G.Node
	wrt := G.Nodes{xn, wn}
	if bias {
		bn = randNode(g, tensor.Float32, "b", 1, 3, n)
		wrt = append(wrt, bn)
	}
	yn, err := Linear(xn, wn, bn, WithPrecision(p))
	if err != nil {
		t.Fatal(err)
	}
	rn := randNode(g, tensor.Float32, "R", 1, 9, m, n)
	cost := G.Must(G.Sum(G.Must(G.HadamardProd(yn, rn))))
	if _, err := G.Grad(cost, wrt...); err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(g, G.BindDualValues(wrt...))
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	grad := func(n *G.Node) []float32 {
		gv, err := n.Grad()
		if err != nil {
			t.Fatal(err)
		}
		return f32s(t, gv)
	}
	x, w, r, y = f32s(t, xn.Value()), f32s(t, wn.Value()), f32s(t, rn.Value()), f32s(t, yn.Value())
	dx, dw = grad(xn), grad(wn)
	if bias {
		b, db = f32s(t, bn.Value()), grad(bn)
	}
	return
}

// TestLinearBF16MatchesKernels: a BF16 Linear's forward, dX and dW are the
// kernels.SgemmBF16 products of the same operands bit for bit (the bias
// added in float32 after the product), and differ from the FP32 Linear's.
// The depth 7 is odd, so a pair of depth is cut by the product's end.
func TestLinearBF16MatchesKernels(t *testing.T) {
	const m, k, n = 5, 7, 3
	for _, bias := range []bool{true, false} {
		x, w, b, r, y, dx, dw, _ := linearRun(t, BF16, bias, m, k, n)
		wantY := make([]float32, m*n)
		kernels.SgemmBF16(false, true, m, n, k, 1, x, k, w, k, 0, wantY, n) // X·Wᵀ
		if bias {
			kernels.AddBias(wantY, b, m, n)
		}
		wantDx := make([]float32, m*k)
		kernels.SgemmBF16(false, false, m, k, n, 1, r, n, w, k, 0, wantDx, k) // dY·W
		wantDw := make([]float32, n*k)
		kernels.SgemmBF16(true, false, n, k, m, 1, r, n, x, k, 0, wantDw, k) // dYᵀ·X
		// The FP32 Linear, run after a BF16 one (they share pooled packed
		// weights), still gives Sgemm's bits.
		_, _, _, _, y32, dx32, dw32, _ := linearRun(t, FP32, bias, m, k, n)
		want32 := make([]float32, m*n)
		kernels.Sgemm(false, true, m, n, k, 1, x, k, w, k, 0, want32, n)
		if bias {
			kernels.AddBias(want32, b, m, n)
		}
		if !sameBits32(y32, want32) {
			t.Errorf("bias %t: the FP32 Linear after a BF16 one is not Sgemm's", bias)
		}
		for _, c := range []struct {
			name           string
			got, want, f32 []float32
		}{{"y", y, wantY, y32}, {"dx", dx, wantDx, dx32}, {"dw", dw, wantDw, dw32}} {
			if !sameBits32(c.got, c.want) {
				t.Errorf("bias %t: %s of the BF16 Linear is not SgemmBF16's:\n got %v\nwant %v", bias, c.name, c.got, c.want)
			}
			if sameBits32(c.got, c.f32) {
				t.Errorf("bias %t: %s of the BF16 Linear equals the FP32 Linear's: the products are not bfloat16 ones", bias, c.name)
			}
		}
	}
}

// TestLinearPackedBF16MatchesLinear: a weight packed WithPrecision(BF16)
// gives LinearPacked (and its fused forms) the BF16 Linear's bits.
func TestLinearPackedBF16MatchesLinear(t *testing.T) {
	const m, k, n = 6, 9, 4
	g := G.NewGraph()
	x := randNode(g, tensor.Float32, "x", 1, 1, m, k)
	w := randNode(g, tensor.Float32, "w", 1, 2, n, k)
	b := randNode(g, tensor.Float32, "b", 1, 3, n)
	res := randNode(g, tensor.Float32, "r", 1, 4, m, n)
	ref := G.Must(Linear(x, w, b, WithPrecision(BF16)))
	refGELU := G.Must(GELU(ref, GELUExact))
	refAdd := G.Must(Add(res, ref))
	pw, err := PackWeight(w.Value().(*tensor.Dense), WithPrecision(BF16))
	if err != nil {
		t.Fatal(err)
	}
	if pw.Precision() != BF16 {
		t.Fatalf("PackWeight(BF16).Precision() = %q", pw.Precision())
	}
	got := G.Must(LinearPacked(x, pw, b))
	gotGELU := G.Must(LinearPackedGELU(x, pw, b, GELUExact))
	gotAdd := G.Must(LinearPackedAdd(x, pw, b, res))
	pw32, err := PackWeight(w.Value().(*tensor.Dense))
	if err != nil {
		t.Fatal(err)
	}
	if pw32.Precision() != FP32 {
		t.Fatalf("PackWeight().Precision() = %q", pw32.Precision())
	}
	got32 := G.Must(LinearPacked(x, pw32, b))
	runOnce(t, g)
	for i, c := range [][2]*G.Node{{got, ref}, {gotGELU, refGELU}, {gotAdd, refAdd}} {
		if !sameBits32(f32s(t, c[0].Value()), f32s(t, c[1].Value())) {
			t.Errorf("%s with a BF16 weight differs from the BF16 Linear's", []string{"LinearPacked", "LinearPackedGELU", "LinearPackedAdd"}[i])
		}
	}
	if sameBits32(f32s(t, got32.Value()), f32s(t, ref.Value())) {
		t.Error("LinearPacked with an FP32 weight equals the BF16 Linear")
	}
}

// attentionRun is Attention on float32 qkv in precision p with the cost
// Σ y⊙R: it returns qkv, R, y and dqkv.
func attentionRun(t *testing.T, p Precision, b, tok, h, d int) (qkv, r, y, dqkv []float32) {
	t.Helper()
	g := G.NewGraph()
	qn := randNode(g, tensor.Float32, "qkv", 1, 7, b*tok, 3*d)
	yn, err := Attention(qn, b, tok, h, WithPrecision(p))
	if err != nil {
		t.Fatal(err)
	}
	rn := randNode(g, tensor.Float32, "R", 1, 8, b*tok, d)
	cost := G.Must(G.Sum(G.Must(G.HadamardProd(yn, rn))))
	grads, err := G.Grad(cost, qn)
	if err != nil {
		t.Fatal(err)
	}
	runOnce(t, g)
	return f32s(t, qn.Value()), f32s(t, rn.Value()), f32s(t, yn.Value()), f32s(t, grads[0].Value())
}

// TestAttentionBF16IsWired: BF16 attention's output and gradient differ
// from FP32's, and AttentionEval (its packed K and V) and
// AttentionEvalFirst give the BF16 Attention's rows bit for bit: every
// element of a bfloat16 product is defined on its own (kernels.SgemmBF16),
// whatever the rows a call covers.
func TestAttentionBF16IsWired(t *testing.T) {
	const b, tok, h, d = 2, 30, 2, 8
	qkv, _, y, dq := attentionRun(t, BF16, b, tok, h, d)
	_, _, y32, dq32 := attentionRun(t, FP32, b, tok, h, d)
	if sameBits32(y, y32) || sameBits32(dq, dq32) {
		t.Fatal("BF16 attention gives FP32's output or gradient")
	}
	for _, queries := range []int{tok, 1} {
		g := G.NewGraph()
		qt := tensor.New(tensor.WithShape(b*tok, 3*d), tensor.WithBacking(qkv))
		qn := G.NewTensor(g, tensor.Float32, 2, G.WithShape(b*tok, 3*d), G.WithName("qkv"), G.WithValue(qt))
		en, err := AttentionEvalFirst(qn, b, tok, h, queries, WithPrecision(BF16))
		if err != nil {
			t.Fatal(err)
		}
		runOnce(t, g)
		got := f32s(t, en.Value())
		for img := 0; img < b; img++ {
			want := y[img*tok*d : (img*tok+queries)*d]
			if !sameBits32(got[img*queries*d:(img+1)*queries*d], want) {
				t.Errorf("AttentionEvalFirst(queries %d, BF16), image %d, differs from the BF16 Attention", queries, img)
			}
		}
	}
}

// TestPrecisionRefused: an unknown precision is a *PrecisionError wrapping
// the *enum.Error, and BF16 on float64 operands a *PrecisionError, from
// every op that takes one.
func TestPrecisionRefused(t *testing.T) {
	g := G.NewGraph()
	x32 := randNode(g, tensor.Float32, "x", 1, 1, 6, 6)
	w32 := randNode(g, tensor.Float32, "w", 1, 2, 6, 6)
	x64 := randNode(g, tensor.Float64, "x64", 1, 1, 6, 6)
	w64 := randNode(g, tensor.Float64, "w64", 1, 2, 6, 6)
	for _, c := range []struct {
		p    Precision
		x, w *G.Node
		enum bool
	}{{"fp16", x32, w32, true}, {BF16, x64, w64, false}} {
		o := WithPrecision(c.p)
		for name, f := range map[string]func() error{
			"Linear":             func() error { _, err := Linear(c.x, c.w, nil, o); return err },
			"Attention":          func() error { _, err := Attention(c.x, 2, 3, 1, o); return err },
			"AttentionEval":      func() error { _, err := AttentionEval(c.x, 2, 3, 1, o); return err },
			"AttentionEvalFirst": func() error { _, err := AttentionEvalFirst(c.x, 2, 3, 1, 1, o); return err },
			"PackWeight":         func() error { _, err := PackWeight(c.w.Value().(*tensor.Dense), o); return err },
		} {
			err := f()
			var pe *PrecisionError
			if !errors.As(err, &pe) {
				t.Errorf("%s(%q, %v): err %v, want a *PrecisionError", name, c.p, c.x.Dtype(), err)
				continue
			}
			var ee *enum.Error
			if errors.As(err, &ee) != c.enum {
				t.Errorf("%s(%q): wraps an *enum.Error: %t, want %t", name, c.p, !c.enum, c.enum)
			}
		}
	}
	for _, p := range []Precision{"", FP32, BF16} {
		if _, err := Linear(x32, w32, nil, WithPrecision(p)); err != nil {
			t.Errorf("Linear(%q): %v", p, err)
		}
	}
}

// The error bounds of a bfloat16 product, as kernels.SgemmBF16 computes it.
//
// Let u = 2⁻⁸ be bfloat16's unit roundoff (8 significant bits, round to
// nearest even) and v = 2⁻²⁴ float32's. Rounding an operand gives
// â = a(1+δ) with |δ| ≤ u, so each product â·b̂ = ab(1+δ₁)(1+δ₂) is within
// (2u+u²)|ab| of ab, and |â·b̂| ≤ (1+u)²|ab|. The exact products of bfloat16
// numbers accumulate in float32, one rounding per fused add: within a pass
// of depth k_c a term meets at most k_c roundings, and the P passes' sums
// are added to C with P−1 more; since every other pass holds at least one
// term, no term meets more than k roundings in all. The standard bound for
// a sum whose terms each meet at most k roundings (Higham, Accuracy and
// Stability, §3.1 and §4.2) is γ_k·Σ|terms| with γ_k = kv/(1−kv). Hence for
// each element of C = A·B of depth k,
//
//	|ĉ − c| ≤ ((2u+u²) + γ_k(1+u)²)·Σᵢ|aᵢ||bᵢ|                       (1)
//
// (alpha a power of two multiplies exactly; no value here is near float32's
// underflow, where the flush to zero would add an absolute error). A dummy
// +0·+0 that pairs the last element of an odd depth is exact. The reference
// is computed in float64 from the same float32 operands; its own error, a
// few 2⁻⁵³ of Σ|aᵢ||bᵢ|, is covered by the factor refSlack.
const (
	uBF16    = 1.0 / 256       // 2⁻⁸
	uF32     = 1.0 / (1 << 24) // 2⁻²⁴
	refSlack = 1 + 1.0/(1<<30)
	expRel   = 2e-7 // kernels.Exp's documented relative error bound
)

func gammaF32(k int) float64 { return float64(k) * uF32 / (1 - float64(k)*uF32) }

// prodRel is the factor of Σ|a||b| in bound (1) for depth k.
func prodRel(k int) float64 {
	return (2*uBF16 + uBF16*uBF16) + gammaF32(k)*(1+uBF16)*(1+uBF16)
}

// checkBound fails t for every element with |got − want| > bound·refSlack.
func checkBound(t *testing.T, name string, got []float32, want, bound []float64) {
	t.Helper()
	bad := 0
	for i := range got {
		if d := math.Abs(float64(got[i]) - want[i]); !(d <= bound[i]*refSlack) {
			if bad < 5 {
				t.Errorf("%s[%d] = %.9g, float64 %.9g: |error| %.3g exceeds the bound %.3g", name, i, got[i], want[i], d, bound[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements exceed their bound", name, bad, len(got))
	}
}

// TestLinearBF16ErrorBound checks a BF16 Linear's forward, dX, dW and db
// element by element against float64 within bound (1) (see prodRel):
//
//   - y = fl(ĉ + b), the product then the float32 bias add:
//     |ŷ − y| ≤ prodRel(K)·Σ_p|x||w| + v·|ŷ|/(1−v);
//   - dX = dY·W and dW = dYᵀ·X, dY = R exactly (the cost is Σ y⊙R): (1)
//     with depths N and M;
//   - db = Σ_rows dY, a float32 sum: γ_M·Σ|dY|.
func TestLinearBF16ErrorBound(t *testing.T) {
	const m, k, n = 6, 37, 5
	x, w, b, r, y, dx, dw, db := linearRun(t, BF16, true, m, k, n)
	f := func(v float32) float64 { return float64(v) }
	wantY, bY := make([]float64, m*n), make([]float64, m*n)
	wantDx, bDx := make([]float64, m*k), make([]float64, m*k)
	wantDw, bDw := make([]float64, n*k), make([]float64, n*k)
	wantDb, bDb := make([]float64, n), make([]float64, n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s, a float64
			for p := 0; p < k; p++ {
				s += f(x[i*k+p]) * f(w[j*k+p])
				a += math.Abs(f(x[i*k+p]) * f(w[j*k+p]))
			}
			wantY[i*n+j] = s + f(b[j])
			bY[i*n+j] = prodRel(k)*a + uF32*math.Abs(f(y[i*n+j]))/(1-uF32)
		}
	}
	for i := 0; i < m; i++ {
		for p := 0; p < k; p++ {
			var s, a float64
			for j := 0; j < n; j++ {
				s += f(r[i*n+j]) * f(w[j*k+p])
				a += math.Abs(f(r[i*n+j]) * f(w[j*k+p]))
			}
			wantDx[i*k+p], bDx[i*k+p] = s, prodRel(n)*a
		}
	}
	for j := 0; j < n; j++ {
		for p := 0; p < k; p++ {
			var s, a float64
			for i := 0; i < m; i++ {
				s += f(r[i*n+j]) * f(x[i*k+p])
				a += math.Abs(f(r[i*n+j]) * f(x[i*k+p]))
			}
			wantDw[j*k+p], bDw[j*k+p] = s, prodRel(m)*a
		}
		for i := 0; i < m; i++ {
			wantDb[j] += f(r[i*n+j])
			bDb[j] += math.Abs(f(r[i*n+j]))
		}
		bDb[j] *= gammaF32(m)
	}
	checkBound(t, "y", y, wantY, bY)
	checkBound(t, "dx", dx, wantDx, bDx)
	checkBound(t, "dw", dw, wantDw, bDw)
	checkBound(t, "db", db, wantDb, bDb)
}

// TestAttentionBF16ErrorBound checks BF16 attention's output and qkv
// gradient element by element against float64, propagating bound (1)
// through the float32 steps between the products. Per (image, head), with
// head dim d a power of 4 so that scale = 1/√d multiplies exactly, and
// dO = R exactly:
//
//   - S = scale·Q·Kᵀ: E_S = scale·prodRel(d)·Σ|q||k| by (1).
//   - P = softmax(S) in float32 (SoftmaxRows: e^(s−max) by kernels.Exp,
//     relative error ε = 2e-7, over a float32 sum, then normalised with at
//     most two roundings). Each exponent is off by at most
//     D = max E_S + v·r, r bounding |s − max| in the row (the subtraction's
//     rounding); a common shift cancels. So P̂ᵢ/Pᵢ lies in [1/F, F] with
//     F = e^{2D}·(1+ε)/(1−ε)·((1+v)/(1−v))²/(1−γ_T), and
//     E_P = P·(F−1).
//   - O = P̂·V: E_O = Σ E_P|v| + prodRel(T)·Σ|p̂||v|, with |p̂| ≤ P·F.
//   - dV = P̂ᵀ·dO: E_dV = Σ E_P|dO| + prodRel(T)·Σ P·F·|dO|.
//   - dP = dO·Vᵀ: E_dP = prodRel(d)·Σ|dO||v|.
//   - dS = P̂ ⊙ (dP̂ − ĉ), c = Σ dP·P (SoftmaxBackwardRows: a float32 dot
//     product, a subtraction and a product):
//     E_c = Σ(E_dP·P·F + |dP|·E_P) + γ_T·Σ(|dP|+E_dP)·P·F, and with
//     G = |dP−c| + E_dP + E_c,
//     E_dS = E_P·G + P·(E_dP+E_c) + P·F·G·(2v+v²).
//   - dQ = scale·dS·K and dK = scale·dSᵀ·Q:
//     E = scale·(Σ E_dS|k| + prodRel(T)·Σ(|dS|+E_dS)|k|), likewise with q.
func TestAttentionBF16ErrorBound(t *testing.T) {
	const nb, tok, nh, dim = 2, 9, 2, 32 // head dim 16: scale 1/4
	qkv, r, y, dqkv := attentionRun(t, BF16, nb, tok, nh, dim)
	hd := dim / nh
	scale := 1 / math.Sqrt(float64(hd))
	if float64(float32(scale)) != scale || scale != math.Ldexp(1, -int(math.Log2(math.Sqrt(float64(hd))))) {
		t.Fatalf("head dim %d: scale %v is not a power of two", hd, scale)
	}
	n := nb * tok
	wantY, bY := make([]float64, n*dim), make([]float64, n*dim)
	wantD, bD := make([]float64, n*3*dim), make([]float64, n*3*dim)
	T := tok
	for b := 0; b < nb; b++ {
		for h := 0; h < nh; h++ {
			q := func(i, c int) float64 { return float64(qkv[(b*T+i)*3*dim+h*hd+c]) }
			k := func(i, c int) float64 { return float64(qkv[(b*T+i)*3*dim+dim+h*hd+c]) }
			v := func(i, c int) float64 { return float64(qkv[(b*T+i)*3*dim+2*dim+h*hd+c]) }
			dO := func(i, c int) float64 { return float64(r[(b*T+i)*dim+h*hd+c]) }
			S, ES := make([]float64, T*T), make([]float64, T*T)
			for i := 0; i < T; i++ {
				for j := 0; j < T; j++ {
					var s, a float64
					for c := 0; c < hd; c++ {
						s += q(i, c) * k(j, c)
						a += math.Abs(q(i, c) * k(j, c))
					}
					S[i*T+j], ES[i*T+j] = scale*s, scale*prodRel(hd)*a
				}
			}
			P, EP, F := make([]float64, T*T), make([]float64, T*T), make([]float64, T)
			for i := 0; i < T; i++ {
				row, erow := S[i*T:(i+1)*T], ES[i*T:(i+1)*T]
				mx, mn, emax := math.Inf(-1), math.Inf(1), 0.0
				for j := range row {
					mx, mn, emax = math.Max(mx, row[j]), math.Min(mn, row[j]), math.Max(emax, erow[j])
				}
				var sum float64
				for j := range row {
					P[i*T+j] = math.Exp(row[j] - mx)
					sum += P[i*T+j]
				}
				d := emax + uF32*(mx-mn+2*emax)
				F[i] = math.Exp(2*d) * (1 + expRel) / (1 - expRel) * math.Pow((1+uF32)/(1-uF32), 2) / (1 - gammaF32(T))
				for j := range row {
					P[i*T+j] /= sum
					EP[i*T+j] = P[i*T+j] * (F[i] - 1)
				}
			}
			for i := 0; i < T; i++ { // O = P·V
				for c := 0; c < hd; c++ {
					var s, e, a float64
					for j := 0; j < T; j++ {
						s += P[i*T+j] * v(j, c)
						e += EP[i*T+j] * math.Abs(v(j, c))
						a += P[i*T+j] * F[i] * math.Abs(v(j, c))
					}
					at := (b*T+i)*dim + h*hd + c
					wantY[at], bY[at] = s, e+prodRel(T)*a
				}
			}
			for j := 0; j < T; j++ { // dV = Pᵀ·dO
				for c := 0; c < hd; c++ {
					var s, e, a float64
					for i := 0; i < T; i++ {
						s += P[i*T+j] * dO(i, c)
						e += EP[i*T+j] * math.Abs(dO(i, c))
						a += P[i*T+j] * F[i] * math.Abs(dO(i, c))
					}
					at := (b*T+j)*3*dim + 2*dim + h*hd + c
					wantD[at], bD[at] = s, e+prodRel(T)*a
				}
			}
			dS, EdS := make([]float64, T*T), make([]float64, T*T)
			for i := 0; i < T; i++ {
				dP, EdP := make([]float64, T), make([]float64, T)
				for j := 0; j < T; j++ { // dP = dO·Vᵀ
					var a float64
					for c := 0; c < hd; c++ {
						dP[j] += dO(i, c) * v(j, c)
						a += math.Abs(dO(i, c) * v(j, c))
					}
					EdP[j] = prodRel(hd) * a
				}
				var c, ec, dot float64
				for j := 0; j < T; j++ {
					p := P[i*T+j]
					c += dP[j] * p
					ec += EdP[j]*p*F[i] + math.Abs(dP[j])*EP[i*T+j]
					dot += (math.Abs(dP[j]) + EdP[j]) * p * F[i]
				}
				ec += gammaF32(T) * dot
				for j := 0; j < T; j++ {
					p := P[i*T+j]
					g := math.Abs(dP[j]-c) + EdP[j] + ec
					dS[i*T+j] = p * (dP[j] - c)
					EdS[i*T+j] = EP[i*T+j]*g + p*(EdP[j]+ec) + p*F[i]*g*(2*uF32+uF32*uF32)
				}
			}
			for i := 0; i < T; i++ { // dQ = scale·dS·K, dK = scale·dSᵀ·Q
				for c := 0; c < hd; c++ {
					var sq, eq, aq, sk, ek, ak float64
					for j := 0; j < T; j++ {
						sq += dS[i*T+j] * k(j, c)
						eq += EdS[i*T+j] * math.Abs(k(j, c))
						aq += (math.Abs(dS[i*T+j]) + EdS[i*T+j]) * math.Abs(k(j, c))
						sk += dS[j*T+i] * q(j, c)
						ek += EdS[j*T+i] * math.Abs(q(j, c))
						ak += (math.Abs(dS[j*T+i]) + EdS[j*T+i]) * math.Abs(q(j, c))
					}
					atQ := (b*T+i)*3*dim + h*hd + c
					wantD[atQ], bD[atQ] = scale*sq, scale*(eq+prodRel(T)*aq)
					wantD[atQ+dim], bD[atQ+dim] = scale*sk, scale*(ek+prodRel(T)*ak)
				}
			}
		}
	}
	checkBound(t, "y", y, wantY, bY)
	checkBound(t, "dqkv", dqkv, wantD, bD)
}
