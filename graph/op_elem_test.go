package graph

import (
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestElemOps: the ops built on elemOp say their own name, arity and type,
// keep their output shape, and refuse inputs of differing shapes by name.
func TestElemOps(t *testing.T) {
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 3), G.WithName("x"))
	for _, tc := range []struct {
		op    G.Op
		str   string
		arity int
	}{
		{&geluOp{elemOp: newElemOp("GELU", GELUTanh.String(), 1, 2), approx: GELUTanh}, "GELU(tanh)", 1},
		{&geluGradOp{elemOp: newElemOp("GELUGrad", GELUExact.String(), 2, 2)}, "GELUGrad(none)", 2},
		{&logSoftmaxOp{newElemOp("LogSoftmax", "", 1, 2)}, "LogSoftmax", 1},
		{&logSoftmaxGradOp{newElemOp("LogSoftmaxGrad", "", 2, 2)}, "LogSoftmaxGrad", 2},
		{&addOp{newElemOp("Add", "", 2, 2)}, "Add", 2},
	} {
		if tc.op.String() != tc.str || tc.op.Arity() != tc.arity {
			t.Errorf("%s: String %q, Arity %d; want %q, %d", tc.str, tc.op.String(), tc.op.Arity(), tc.str, tc.arity)
		}
		ranks := []int{2, 2, 2}[:tc.arity+1]
		if got, want := tc.op.Type().String(), fnType(ranks...).String(); got != want {
			t.Errorf("%s: type %s, want %s", tc.str, got, want)
		}
		in := make([]G.DimSizer, tc.arity)
		for i := range in {
			in[i] = x.Shape()
		}
		if s, err := tc.op.InferShape(in...); err != nil || !s.Eq(tensor.Shape{2, 3}) {
			t.Errorf("%s: InferShape %v, %v", tc.str, s, err)
		}
		if tc.arity == 2 {
			a := tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(2, 3))
			b := tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(3, 2))
			if _, err := tc.op.Do(a, b); err == nil {
				t.Errorf("%s: Do accepted inputs (2, 3) and (3, 2)", tc.str)
			}
		}
		if tc.op.Hashcode() == (&addOp{newElemOp("Add", "", 2, 2)}).Hashcode() {
			t.Errorf("%s: hashes like another op instance", tc.str)
		}
	}
}
