package graph

import (
	"fmt"
	"math"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// GradCheckOptions tunes GradCheck. The zero value means the defaults below.
type GradCheckOptions struct {
	Eps     float64 // central-difference step; default 1e-6
	ATol    float64 // absolute tolerance; default 1e-7
	RTol    float64 // relative tolerance; default 1e-5
	MaxElem int     // elements probed per input, chosen at random; 0 = all
	Seed    uint64  // picks the probed elements
}

// GradCheckResult reports the worst element GradCheck found.
type GradCheckResult struct {
	MaxAbsErr float64 // largest |analytic − numeric|
	Worst     string  // the input and index of the worst element
	Checked   int     // number of elements probed
}

// GradCheck compares the gradients Gorgonia's reverse-mode autodiff gives for
// the scalar cost with respect to each node in wrt with central finite
// differences, (f(x+ε) − f(x−ε)) / 2ε, element by element. All nodes must be
// float64 and wrt must be input nodes with bound values. It adds the gradient
// nodes to cost's graph and runs it on a TapeMachine; it returns an error if
// any element differs by more than ATol + RTol·max(|analytic|, |numeric|).
func GradCheck(cost *G.Node, wrt G.Nodes, opts GradCheckOptions) (GradCheckResult, error) {
	var res GradCheckResult
	if opts.Eps == 0 {
		opts.Eps = 1e-6
	}
	if opts.ATol == 0 {
		opts.ATol = 1e-7
	}
	if opts.RTol == 0 {
		opts.RTol = 1e-5
	}
	if cost.Dtype() != tensor.Float64 {
		return res, fmt.Errorf("gradcheck: cost must be float64, is %v", cost.Dtype())
	}
	if _, err := G.Grad(cost, wrt...); err != nil {
		return res, fmt.Errorf("gradcheck: %w", err)
	}
	m := G.NewTapeMachine(cost.Graph(), G.BindDualValues(wrt...))
	defer m.Close()
	run := func() (float64, error) {
		defer m.Reset()
		if err := m.RunAll(); err != nil {
			return 0, err
		}
		return scalarValue("gradcheck", cost.Value())
	}
	if _, err := run(); err != nil {
		return res, fmt.Errorf("gradcheck: run: %w", err)
	}
	analytic := make([][]float64, len(wrt))
	for i, n := range wrt {
		gv, err := n.Grad()
		if err != nil {
			return res, fmt.Errorf("gradcheck: grad of %s: %w", n.Name(), err)
		}
		gd, err := dense("gradcheck", gv)
		if err != nil {
			return res, err
		}
		analytic[i] = append([]float64(nil), data[float64](gd)...)
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 7))
	var fail error
	for i, n := range wrt {
		xd, err := dense("gradcheck", n.Value())
		if err != nil || xd.Dtype() != tensor.Float64 {
			return res, fmt.Errorf("gradcheck: %s must hold a float64 tensor", n.Name())
		}
		x := data[float64](xd)
		idx := make([]int, len(x))
		for j := range idx {
			idx[j] = j
		}
		if opts.MaxElem > 0 && opts.MaxElem < len(idx) {
			rng.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
			idx = idx[:opts.MaxElem]
		}
		for _, j := range idx {
			orig := x[j]
			x[j] = orig + opts.Eps
			fp, err := run()
			if err != nil {
				return res, err
			}
			x[j] = orig - opts.Eps
			fm, err := run()
			if err != nil {
				return res, err
			}
			x[j] = orig
			num := (fp - fm) / (2 * opts.Eps)
			a := analytic[i][j]
			d := math.Abs(a - num)
			res.Checked++
			if d > res.MaxAbsErr || math.IsNaN(d) {
				res.MaxAbsErr = d
				res.Worst = fmt.Sprintf("%s[%d]: analytic %.10g numeric %.10g", n.Name(), j, a, num)
			}
			if fail == nil && !(d <= opts.ATol+opts.RTol*math.Max(math.Abs(a), math.Abs(num))) {
				fail = fmt.Errorf("gradcheck: %s[%d]: analytic %.10g, numeric %.10g (|diff| %.3g)", n.Name(), j, a, num, d)
			}
		}
	}
	return res, fail
}
