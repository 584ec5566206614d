package train

import (
	"fmt"

	G "gorgonia.org/gorgonia"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/dist"
	"github.com/vitgo/vit/optim"
)

// gradSum turns the gradients of one step's micro-batches on every rank into
// the gradient of the global batch: it adds the k micro-batches' gradient
// buffers into one flat buffer, all-reduces that over the ranks and scales it
// by 1/(k·ranks) (each micro-batch's loss is a mean over its own rows, all
// micro-batches are the same size). The step's loss rides in the buffer's
// last element, so a step costs one all-reduce. With one micro-batch on one
// rank it binds the graph's buffers directly, as a one-process step always
// did.
type gradSum struct {
	comm dist.Comm
	k    int
	flat []float32 // the gradients, parameter after parameter, then the loss; nil when k·ranks = 1
}

func newGradSum(comm dist.Comm, k int, params []optim.Param) *gradSum {
	g := &gradSum{comm: comm, k: k}
	if k*comm.Size() > 1 {
		n := 1
		for _, p := range params {
			if !p.Frozen {
				n += len(p.Value)
			}
		}
		g.flat = make([]float32, n)
	}
	return g
}

// add adds micro-batch j's gradients (the graph's buffers) and loss into the
// sum; j = 0 starts it afresh.
func (g *gradSum) add(j int, grads G.Nodes, loss float32) {
	if g.flat == nil {
		return
	}
	off := 0
	for _, n := range grads {
		v := n.Value().Data().([]float32)
		dst := g.flat[off : off+len(v)]
		if j == 0 {
			copy(dst, v)
		} else {
			for i, x := range v {
				dst[i] += x
			}
		}
		off += len(v)
	}
	if j == 0 {
		g.flat[off] = loss
	} else {
		g.flat[off] += loss
	}
}

// reduce sums over the ranks, scales, binds each trained parameter's Grad
// (params[trained[i]]'s, grads being parallel to trained) to its part of
// the sum and returns the global batch's loss (loss itself when there is
// nothing to sum).
func (g *gradSum) reduce(params []optim.Param, trained []int, grads G.Nodes, loss float32) (float32, error) {
	if g.flat == nil {
		for i, n := range grads {
			params[trained[i]].Grad = n.Value().Data().([]float32)
		}
		return loss, nil
	}
	if err := g.comm.AllreduceFloat32(g.flat); err != nil {
		return 0, fmt.Errorf("gradient all-reduce: %w", err)
	}
	scale := 1 / float32(g.k*g.comm.Size())
	for i := range g.flat {
		g.flat[i] *= scale
	}
	off := 0
	for _, i := range trained {
		n := len(params[i].Value)
		params[i].Grad = g.flat[off : off+n]
		off += n
	}
	return g.flat[off], nil
}

// GradAccumError is returned for a rank's share of the global batch that
// train.grad_accum_steps does not divide.
type GradAccumError struct{ Rows, Steps int }

func (e *GradAccumError) Error() string {
	return fmt.Sprintf("train.grad_accum_steps: %d does not divide the %d rows of a rank's share of the batch", e.Steps, e.Rows)
}

// microRows returns, for each of k micro-batches of rank's share of a global
// batch of batch rows, the rows' positions in the global batch (nil when a
// single micro-batch on a single rank is the batch itself).
func microRows(batch, k int, comm dist.Comm) ([][]int, error) {
	if k < 1 {
		return nil, &GradAccumError{Rows: batch, Steps: k}
	}
	rows, err := data.Slice(batch, comm.Rank(), comm.Size())
	if err != nil {
		return nil, err
	}
	if len(rows)%k != 0 {
		return nil, &GradAccumError{Rows: len(rows), Steps: k}
	}
	if k == 1 && comm.Size() == 1 {
		return [][]int{nil}, nil
	}
	b := len(rows) / k
	out := make([][]int, k)
	for j := range out {
		out[j] = rows[j*b : (j+1)*b]
	}
	return out, nil
}
