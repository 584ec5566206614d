package train

import (
	"errors"
	"fmt"
	"math"
	"slices"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/checkpoint/safetensors"
	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/internal/cfgerr"
	"github.com/vitgo/vit/internal/enum"
	"github.com/vitgo/vit/internal/optional"
	"github.com/vitgo/vit/layers"
)

// DistillType names DeiT's distillation loss, the value of distill.type.
// The zero value "" means DistillNone.
type DistillType string

// The distillation types of DeiT's DistillationLoss (Touvron et al. 2021,
// facebookresearch/deit losses.py).
const (
	DistillNone DistillType = "none" // no teacher: a distilled model trains on the mean of its heads
	DistillHard DistillType = "hard" // head_dist learns the teacher's argmax
	DistillSoft DistillType = "soft" // head_dist learns the teacher's softened distribution (KL at temperature tau)
)

// Validate reports whether t is a distillation type ("" = none).
func (t DistillType) Validate() error { return enum.Check(t, DistillNone, DistillHard, DistillSoft) }

// On reports whether t trains with a teacher (hard or soft).
func (t DistillType) On() bool { return t == DistillHard || t == DistillSoft }

// DistillConfig is the distill section: training a distilled student
// (model.distilled) from a frozen teacher, as DeiT does. The loss of a step
// is DeiT's DistillationLoss on the student's two heads:
//
//	base = CE(head(x_cls), targets)            the run's targets: labels, label smoothing, Mixup/CutMix
//	hard:  kd = CE(head_dist(x_dist), argmax teacher)
//	soft:  kd = KL(log_softmax(head_dist/τ) ‖ log_softmax(teacher/τ)) summed · τ² / (B·classes)
//	loss = (1 − alpha)·base + alpha·kd
//
// Its zero value means no distillation.
type DistillConfig struct {
	Teacher string         `yaml:"teacher"` // the teacher's model file: one of our checkpoints, or a timm state_dict of a ViT or DeiT; required for hard and soft
	Type    DistillType    `yaml:"type"`    // none (default) | hard | soft
	Alpha   optional.Float `yaml:"alpha"`   // weight of the distillation term, in [0, 1]; default 0.5 (DeiT's)
	Tau     float64        `yaml:"tau"`     // soft distillation's temperature, > 0; 0 = 1.0 (DeiT's)
	// TeacherNumHeads is the teacher's attention heads when the teacher is a
	// timm state_dict, whose shapes do not say it; 0 = embed_dim / 64, as in
	// every timm ViT and DeiT preset. Our checkpoints name their heads.
	TeacherNumHeads int `yaml:"teacher_num_heads"`
}

// MaxTau bounds distill.tau: softmax at a temperature beyond it is uniform
// to float32 precision for any logits a model produces.
const MaxTau = 1e4

// WithDefaults fills type none, alpha 0.5 and tau 1.
func (c DistillConfig) WithDefaults() DistillConfig {
	if c.Type == "" {
		c.Type = DistillNone
	}
	c.Alpha = c.Alpha.Or(optional.FloatOf(0.5))
	if c.Tau == 0 {
		c.Tau = 1
	}
	return c
}

// Validate reports every invalid distill key (each a *ConfigError); model is
// the run's model section, which must be distilled for hard and soft. That
// the teacher file exists and fits is checked when it is loaded
// (LoadTeacher), also under the key distill.teacher.
func (c DistillConfig) Validate(model layers.Config) error {
	c = c.WithDefaults()
	var errs cfgerr.List
	if err := c.Type.Validate(); err != nil {
		errs.Add("distill.type", "%w", err)
	}
	if a := c.Alpha.Value(); !(a >= 0 && a <= 1) {
		errs.Add("distill.alpha", "must be in [0, 1], got %v", a)
	}
	if !(c.Tau > 0 && c.Tau <= MaxTau) {
		errs.Add("distill.tau", "must be in (0, %g], got %v", float64(MaxTau), c.Tau)
	} else if !cfgerr.PositiveNormal32(c.Tau * c.Tau) {
		// The logits are divided by τ and the soft loss weighted by τ², in
		// float32: neither may round to 0 or a subnormal.
		errs.Add("distill.tau", "must be >= 1.1e-19, so that it and its square are normal in float32, got %v", c.Tau)
	}
	if c.TeacherNumHeads < 0 || c.TeacherNumHeads > layers.MaxNumHeads {
		errs.Add("distill.teacher_num_heads", "must be in [0, %d], got %d", layers.MaxNumHeads, c.TeacherNumHeads)
	}
	switch {
	case c.Type.On() && c.Teacher == "":
		errs.Add("distill.teacher", "is required with distill.type %q", c.Type)
	case c.Type.On() && !model.Distilled:
		errs.Add("distill.type", "%q needs a distilled student (model.distilled: true): the teacher trains head_dist", c.Type)
	case !c.Type.On() && c.Teacher != "":
		errs.Add("distill.teacher", "is set, but distill.type is %q: set type hard or soft, or remove the teacher", c.Type)
	}
	return errs.Err()
}

// Teacher is a frozen model that labels the student's batches: a Frozen
// evaluation graph (no gradients, no optimizer state) run on the same
// normalized, augmented and mixed images as the student, resized to its own
// image size when it differs.
type Teacher struct {
	Model  *layers.VisionTransformer
	Path   string
	SHA256 string   // hex SHA-256 of the bytes loaded (from the one open of the file)
	Notes  []string // what loading adapted or assumed
	// Meta is what the file's metadata records when it is one of ours (its
	// classes and input normalization, read by Match); zero for a timm
	// state_dict.
	Meta checkpoint.ModelMeta

	// scale and shift map the student's normalized values to the
	// teacher's, per channel (Match); nil when the two are the same.
	scale, shift []float32

	g       *layers.Graph
	vm      G.VM
	inChans int
	from    layers.Size2 // the student's image size
	buf     []float32    // the batch at the teacher's size
}

// LoadTeacher reads distill.teacher for a student of architecture student:
// one of our checkpoints (the architecture from its metadata), or a timm
// state_dict of a ViT or DeiT (the architecture from its shapes, see
// TeacherConfig). Its classes and channels must be the student's. The file
// is opened once, through regfile (a FIFO or device is refused, never
// waited on), and Teacher.SHA256 is the digest of exactly the bytes loaded.
// Errors about the file are *ConfigError naming distill.teacher.
func LoadTeacher(dc DistillConfig, student layers.Config) (*Teacher, error) {
	bad := func(err error) error { return &cfgerr.Error{Key: "distill.teacher", Err: err} }
	f, meta, ours, sum, err := checkpoint.ReadModelSHA256(dc.Teacher)
	if err != nil {
		return nil, bad(err)
	}
	cfg, notes, err := teacherConfig(dc, student, f, meta, ours)
	if err != nil {
		return nil, err
	}
	m, err := layers.New(cfg, tensor.Float32, 0)
	if err != nil {
		return nil, bad(err)
	}
	if _, err := checkpoint.LoadWeights(m, f, checkpoint.LoadOptions{NoResample: true}); err != nil {
		return nil, bad(fmt.Errorf("%s: %w", dc.Teacher, err))
	}
	if err := checkWeightsFinite("distill.teacher", dc.Teacher, m); err != nil {
		return nil, err
	}
	t := &Teacher{Model: m, Path: dc.Teacher, SHA256: sum, Notes: notes}
	if ours {
		t.Meta = meta
	}
	return t, nil
}

// Match fits the teacher to the student's data: the classes the teacher's
// file records must be the data set's, names and order
// (checkpoint.CheckClasses), or its argmax would label the batch with
// another class; and a teacher trained with another input normalization
// gets the student's images mapped to its own, x·σs/σt + (μs−μt)/σt per
// channel. A file that records neither (a timm state_dict, or one saved
// without them) sees the student's normalized images as they are. Errors
// are *ConfigError naming distill.teacher.
func (t *Teacher) Match(classes []string, mean, std []float64) error {
	bad := func(err error) error { return &cfgerr.Error{Key: "distill.teacher", Err: err} }
	if err := checkpoint.CheckClasses(t.Path, t.Meta.Classes, classes); err != nil {
		return bad(err)
	}
	tm, ts := t.Meta.Mean, t.Meta.Std
	if len(tm) == 0 || len(ts) == 0 || (slices.Equal(tm, mean) && slices.Equal(ts, std)) {
		t.scale, t.shift = nil, nil
		return nil
	}
	c := t.Model.Config.InChans
	lists := [][]float64{tm, ts, mean, std}
	for i, l := range lists {
		switch len(l) {
		case c:
		case 1: // one value for every channel
			lists[i] = slices.Repeat(l, c)
		default:
			return bad(fmt.Errorf("%s records mean %v, std %v; the student's data has mean %v, std %v: not one value or one per channel (%d)", t.Path, tm, ts, mean, std, c))
		}
	}
	tm, ts, mean, std = lists[0], lists[1], lists[2], lists[3]
	t.scale, t.shift = make([]float32, c), make([]float32, c)
	for i := range c {
		if !(ts[i] > 0) || !(std[i] > 0) {
			return bad(fmt.Errorf("%s: channel %d: std %g (teacher), %g (student): need > 0", t.Path, i, ts[i], std[i]))
		}
		t.scale[i], t.shift[i] = float32(std[i]/ts[i]), float32((mean[i]-tm[i])/ts[i])
	}
	t.Notes = append(t.Notes, fmt.Sprintf("the teacher was trained with mean %v, std %v; the student's data has mean %v, std %v: its inputs are re-normalized", tm, ts, mean, std))
	return nil
}

// TeacherConfig is the architecture of distill.teacher, read from the file's
// metadata (ours) or shapes (a timm state_dict: patch size, channels, width,
// depth, MLP width, classes, qkv bias, a square grid and whether it has a
// distillation token; heads from distill.teacher_num_heads or embed_dim/64;
// GELU, LayerNorm eps 1e-6 and the class-token readout, timm's defaults).
// It also checks that the teacher's classes and channels are the student's.
// One of our files is read no further than its header.
func TeacherConfig(dc DistillConfig, student layers.Config) (layers.Config, []string, error) {
	bad := func(err error) error { return &cfgerr.Error{Key: "distill.teacher", Err: err} }
	md, err := safetensors.ReadMetadata(dc.Teacher)
	if err != nil {
		return layers.Config{}, nil, bad(err)
	}
	meta, ours, err := checkpoint.ParseModelMeta(md)
	if err != nil {
		return layers.Config{}, nil, bad(fmt.Errorf("%s: %w", dc.Teacher, err))
	}
	var f *safetensors.File
	if !ours { // a timm state_dict: its shapes say the architecture
		if f, err = safetensors.ReadFile(dc.Teacher); err != nil {
			return layers.Config{}, nil, bad(err)
		}
	}
	return teacherConfig(dc, student, f, meta, ours)
}

// teacherConfig is TeacherConfig on a file already read: its metadata when
// ours, else its tensors (f).
func teacherConfig(dc DistillConfig, student layers.Config, f *safetensors.File, meta checkpoint.ModelMeta, ours bool) (layers.Config, []string, error) {
	bad := func(format string, a ...any) error { return cfgerr.New("distill.teacher", format, a...) }
	var err error
	var c layers.Config
	var notes []string
	if ours {
		c = meta.Model.WithDefaults()
	} else {
		if c, err = checkpoint.TimmConfig(f, dc.TeacherNumHeads); err != nil {
			var he *checkpoint.HeadsError
			if errors.As(err, &he) {
				err = fmt.Errorf("%w: set distill.teacher_num_heads", err)
			}
			return layers.Config{}, nil, bad("%s: %w", dc.Teacher, err)
		}
		notes = append(notes, fmt.Sprintf("timm state_dict read as img %v, patch %d, dim %d, depth %d, %d heads, distilled %t",
			c.ImgSize, c.PatchSize, c.EmbedDim, c.Depth, c.NumHeads, c.Distilled))
	}
	student = student.WithDefaults()
	if c.NumClasses != student.NumClasses {
		return layers.Config{}, nil, bad("%s has %d classes, the student (model.num_classes) %d", dc.Teacher, c.NumClasses, student.NumClasses)
	}
	if c.InChans != student.InChans {
		return layers.Config{}, nil, bad("%s takes %d channels, the student (model.in_chans) %d", dc.Teacher, c.InChans, student.InChans)
	}
	c.DropPathRate, c.Dropout = 0, 0
	if err := c.Validate(); err != nil {
		return layers.Config{}, nil, bad("%s: %w", dc.Teacher, err)
	}
	return c, notes, nil
}

// prepare builds the teacher's Frozen graph for batch images of the
// student's size img (resized to the teacher's own when they differ), its
// activations in an arena of its own.
func (t *Teacher) prepare(batch int, img layers.Size2) error {
	g, err := t.Model.Build(batch, layers.BuildOptions{Frozen: true})
	if err != nil {
		return fmt.Errorf("distill.teacher: %w", err)
	}
	if _, err := graph.PlanBuffers(g.G, graph.NewArena(), g.Logits); err != nil {
		return err
	}
	t.g, t.vm, t.from, t.inChans = g, G.NewTapeMachine(g.G), img, t.Model.Config.InChans
	return nil
}

// Close releases the teacher's machine.
func (t *Teacher) Close() {
	if t.vm != nil {
		t.vm.Close()
	}
}

// Logits runs the teacher on x, (batch, C, H, W) normalized images at the
// student's size, and returns its (batch, classes) logits (a distilled
// teacher's: the mean of its two heads), reused by the next call. A teacher
// of another image size sees each image resized bilinearly (PyTorch's
// F.interpolate, align_corners=False, antialiased when it shrinks), per
// channel on the normalized values.
func (t *Teacher) Logits(x []float32) ([]float32, error) {
	in := t.g.Input.Value().Data().([]float32)
	to := t.Model.Config.ImgSize
	if to == t.from {
		copy(in, x)
	} else {
		c, hw := t.inChans, t.from[0]*t.from[1]
		thw := to[0] * to[1]
		shrink := to[0] < t.from[0] || to[1] < t.from[1]
		for b := 0; b < t.g.Batch; b++ {
			r := data.Resize(x[b*c*hw:(b+1)*c*hw], c, t.from[0], t.from[1], to[0], to[1], shrink)
			copy(in[b*c*thw:(b+1)*c*thw], r)
		}
	}
	if t.scale != nil {
		c := len(t.scale)
		hw := len(in) / (t.g.Batch * c)
		for i := range in {
			ch := i / hw % c
			in[i] = in[i]*t.scale[ch] + t.shift[ch]
		}
	}
	t.vm.Reset()
	if err := t.vm.RunAll(); err != nil {
		return nil, fmt.Errorf("teacher: %w", err)
	}
	return t.g.Logits.Value().Data().([]float32), nil
}

// kdLoss is DeiT's DistillationLoss built on a DistilledTraining graph
// (see DistillConfig): the two cross entropies are graph.SoftmaxCrossEntropy
// nodes, weighted and summed; the teacher's side (its argmax one-hot, or
// softmax(teacher/τ) and the entropy term of the KL) is computed on the host
// from its logits before each run (fill).
type kdLoss struct {
	typ        DistillType
	alpha, tau float64
	classes    int
	teacher    *G.Node // (B, classes) the distillation targets
	offset     *G.Node // scalar: the soft loss's −alpha·τ²/C·mean entropy of the teacher's distribution
}

// buildKDLoss returns the loss node of g (a DistilledTraining graph) against
// the run's targets, and the kdLoss that fills its teacher inputs.
func buildKDLoss(g *layers.Graph, targets *G.Node, dc DistillConfig) (*G.Node, *kdLoss, error) {
	dc = dc.WithDefaults()
	if g.DistLogits == nil {
		return nil, nil, fmt.Errorf("distill: the student graph has no head_dist (model.distilled)")
	}
	dt := g.Logits.Dtype()
	shape := g.DistLogits.Shape().Clone()
	k := &kdLoss{typ: dc.Type, alpha: dc.Alpha.Value(), tau: dc.Tau, classes: shape[1]}
	tt := tensor.New(tensor.Of(dt), tensor.WithShape(shape...))
	k.teacher = G.NewTensor(g.G, dt, 2, G.WithValue(tt), G.WithName("teacher_targets"))
	scalar := func(v float64) any {
		if dt == tensor.Float32 {
			return float32(v)
		}
		return v
	}
	k.offset = G.NewScalar(g.G, dt, G.WithValue(scalar(0)), G.WithName("kd_offset"))
	constant := func(v float64) *G.Node { return G.NewConstant(scalar(v)) }
	base, err := graph.SoftmaxCrossEntropy(g.Logits, targets)
	if err != nil {
		return nil, nil, err
	}
	weight, tau := k.alpha, 1.0
	if k.typ == DistillSoft {
		weight *= k.tau * k.tau / float64(k.classes)
		tau = k.tau
	}
	kd, err := graph.SoftmaxCrossEntropyT(g.DistLogits, k.teacher, tau)
	if err != nil {
		return nil, nil, err
	}
	a, err := G.Mul(base, constant(1-k.alpha))
	if err != nil {
		return nil, nil, err
	}
	b, err := G.Mul(kd, constant(weight))
	if err != nil {
		return nil, nil, err
	}
	sum, err := G.Add(a, b)
	if err != nil {
		return nil, nil, err
	}
	loss, err := G.Add(sum, k.offset)
	if err != nil {
		return nil, nil, err
	}
	return loss, k, nil
}

// fill sets the teacher's side of the loss from its (B, classes) logits:
// hard, the one-hot of each row's argmax (the first on ties, as torch's
// argmax); soft, softmax(logits/τ) and the offset that turns the cross
// entropy into DeiT's KL divergence, −alpha·τ²/C·(1/B)·Σ_b H(p_b).
func (k *kdLoss) fill(logits []float32) error { return fillKD(k, logits) }

// fillKD is kdLoss.fill on logits of either precision.
func fillKD[T float32 | float64](k *kdLoss, logits []T) error {
	c := k.classes
	rows := len(logits) / c
	out := make([]float64, len(logits))
	var entropy float64
	for b := 0; b < rows; b++ {
		z, o := logits[b*c:(b+1)*c], out[b*c:(b+1)*c]
		if k.typ == DistillHard {
			best := 0
			for j, v := range z {
				if v > z[best] {
					best = j
				}
			}
			o[best] = 1
			continue
		}
		mx := math.Inf(-1)
		for _, v := range z {
			mx = math.Max(mx, float64(v)/k.tau)
		}
		var s float64
		for j, v := range z {
			o[j] = math.Exp(float64(v)/k.tau - mx)
			s += o[j]
		}
		lse := mx + math.Log(s)
		for j, v := range z {
			o[j] /= s
			if o[j] > 0 {
				entropy -= o[j] * (float64(v)/k.tau - lse)
			}
		}
	}
	off := 0.0
	if k.typ == DistillSoft {
		off = -k.alpha * k.tau * k.tau / float64(c) * entropy / float64(rows)
	}
	switch d := k.teacher.Value().Data().(type) {
	case []float32:
		for i, v := range out {
			d[i] = float32(v)
		}
		return G.Let(k.offset, float32(off))
	case []float64:
		copy(d, out)
	}
	return G.Let(k.offset, off)
}
