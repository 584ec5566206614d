package train

import (
	"fmt"
	"io"
	"text/tabwriter"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/layers"
)

// Summary validates cfg, checks its memory estimate against the machine,
// builds the model's forward graph for one image in training mode (proving
// the model assembles; the loss and the backward pass are not built) and
// prints the parameter table, the total and the memory estimate. A run that
// cannot fit is an error (a *ConfigError wrapping a *MemoryError) after the
// estimate is printed.
func Summary(w io.Writer, cfg Config) error {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return err
	}
	est := EstimateMemory(cfg)
	if err := checkMachineMemory(est); err != nil {
		est.Format(w)
		return err
	}
	m, err := layers.New(cfg.Model, tensor.Float32, cfg.Train.Seed)
	if err != nil {
		return err
	}
	if _, err := m.Build(1, layers.BuildOptions{Training: true}); err != nil {
		return fmt.Errorf("build: %w", err)
	}
	c := cfg.Model
	gh, gw := c.Grid()
	fmt.Fprintf(w, "ViT: img %v, patch %d (grid %dx%d, %d tokens), dim %d, depth %d, heads %d, mlp %d, classes %d, readout %s\n\n",
		c.ImgSize, c.PatchSize, gh, gw, c.NumPatches()+1, c.EmbedDim, c.Depth, c.NumHeads, c.Hidden(), c.NumClasses, c.Readout)
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
	fmt.Fprintf(w, "\nbatch %d, eval batch %d, prefetch %d:\n", cfg.Train.BatchSize, evalBatch(cfg), cfg.Data.Prefetch)
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
