package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/vitgo/vit/internal/memory"
	"github.com/vitgo/vit/layers"
)

// Summary prints what -dry-run shows of a built model: the architecture in
// one line, the parameter table and total, the batch sizes and the memory
// estimate est.
func Summary(w io.Writer, m *layers.VisionTransformer, batch, evalBatch, prefetch int, est memory.Estimate) error {
	c := m.Config
	gh, gw := c.Grid()
	kind := "ViT"
	if c.Distilled {
		kind = "DeiT (distilled: class and distillation tokens, two heads)"
	}
	fmt.Fprintf(w, "%s: img %v, patch %d (grid %dx%d, %d tokens), dim %d, depth %d, heads %d, mlp %d, classes %d, readout %s\n\n",
		kind, c.ImgSize, c.PatchSize, gh, gw, c.NumTokens(), c.EmbedDim, c.Depth, c.NumHeads, c.Hidden(), c.NumClasses, c.Readout)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "name\tshape\tparams\t")
	total := 0
	for _, p := range m.Params {
		n := p.Shape.TotalSize()
		total += n
		fmt.Fprintf(tw, "%s\t%v\t%s\t\n", p.Name, []int(p.Shape), commas(n))
	}
	fmt.Fprintf(tw, "total\t\t%s\t\n", commas(total))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nbatch %d, eval batch %d, prefetch %d:\n", batch, evalBatch, prefetch)
	return est.Format(w)
}

// commas formats n with thousands separators: 86,567,656.
func commas(n int) string {
	s := fmt.Sprint(n)
	out := ""
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out += ","
		}
		out += string(c)
	}
	return out
}
