package train

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/vitgo/vit/checkpoint/trainstate"
)

// State is what a run needs beyond the model weights to resume exactly. It
// lives in a sibling file (last.train.safetensors, laid out by package
// checkpoint/trainstate): the optimizer's slot buffers under
// "optim.<slot>.<param>" (AdamW's "optim.m.<param>" and "optim.v.<param>"),
// the EMA weights under "ema.<param>", and the counters and resolved config
// as metadata. The random streams (data order, augmentation, Mixup,
// dropout, drop path) are counter-based functions of (seed, epoch, step),
// so the counters are their state.
type State struct {
	Counters
	Seed   uint64
	Config string // the resolved config YAML
	// Classes are the head's class names (checkpoint.HeadClasses); nil in
	// files written before they were added.
	Classes []string
	OptStep int
	// Slots are the optimizer's state buffers, slot → parameter → buffer
	// (optim.Optimizer.Slots names them).
	Slots map[string]map[string][]float32
	// M and V are AdamW's slots "m" and "v" (Slots["m"] and Slots["v"]),
	// nil for another optimizer. SaveState writes them when Slots is nil.
	M, V map[string][]float32
	EMA  map[string][]float32 // nil without EMA
	// Weights are the raw model weights at Step, so that this one file
	// (written atomically) is all a resume needs: last.safetensors, written
	// beside it, can be a step ahead when the process dies between the two.
	// Nil in files written before they were added.
	Weights map[string][]float32
	// TeacherSHA256 is the hex SHA-256 of distill.teacher (the path is in
	// Config), "" without distillation: a resume refuses a teacher whose
	// file changed (checkResume).
	TeacherSHA256 string
}

// optimSlots returns st.Slots, or AdamW's M and V when Slots is nil.
func (st State) optimSlots() map[string]map[string][]float32 {
	if st.Slots != nil || (st.M == nil && st.V == nil) {
		return st.Slots
	}
	return map[string]map[string][]float32{"m": st.M, "v": st.V}
}

// Counters are where a run is: what the training loop advances, what a
// checkpoint keeps and a resume restores.
type Counters struct {
	Step      int     // optimizer steps done
	Epoch     int     // epoch the next step belongs to
	EpochStep int     // steps of that epoch already done
	BestTop1  float64 // best validation top-1 so far
	// LossSum and NormSum are the sums of the training loss and the grad
	// norm over the EpochStep steps of the epoch done so far, so that a
	// resumed epoch's metrics row equals the uninterrupted run's.
	LossSum, NormSum float64
}

// SaveState writes st atomically to path.
func SaveState(path string, st State) error {
	md := map[string]string{
		"step":       strconv.Itoa(st.Step),
		"epoch":      strconv.Itoa(st.Epoch),
		"epoch_step": strconv.Itoa(st.EpochStep),
		"best_top1":  strconv.FormatFloat(st.BestTop1, 'g', -1, 64),
		"loss_sum":   strconv.FormatFloat(st.LossSum, 'g', -1, 64),
		"norm_sum":   strconv.FormatFloat(st.NormSum, 'g', -1, 64),
		"seed":       strconv.FormatUint(st.Seed, 10),
		"optim_step": strconv.Itoa(st.OptStep),
		"config":     st.Config,
		"rng":        "counter-based: streams are functions of (seed, epoch, step)",
	}
	if st.Classes != nil {
		b, err := json.Marshal(st.Classes)
		if err != nil {
			return fmt.Errorf("save state %s: %w", path, err)
		}
		md["classes"] = string(b)
	}
	if st.TeacherSHA256 != "" {
		md["teacher_sha256"] = st.TeacherSHA256
	}
	return trainstate.Write(path, trainstate.File{Metadata: md, Slots: st.optimSlots(), EMA: st.EMA, Weights: st.Weights})
}

// LoadState reads a state file written by SaveState.
func LoadState(path string) (State, error) {
	f, err := trainstate.Read(path)
	if err != nil {
		return State{}, fmt.Errorf("load state: %w", err)
	}
	md := f.Metadata
	st := State{Config: md["config"], TeacherSHA256: md["teacher_sha256"], Slots: f.Slots, EMA: f.EMA, Weights: f.Weights}
	for key, dst := range map[string]*int{"step": &st.Step, "epoch": &st.Epoch, "epoch_step": &st.EpochStep, "optim_step": &st.OptStep} {
		if *dst, err = strconv.Atoi(md[key]); err != nil {
			return State{}, fmt.Errorf("load state %s: metadata %s: %w", path, key, err)
		}
	}
	if st.BestTop1, err = strconv.ParseFloat(md["best_top1"], 64); err != nil {
		return State{}, fmt.Errorf("load state %s: metadata best_top1: %w", path, err)
	}
	for key, dst := range map[string]*float64{"loss_sum": &st.LossSum, "norm_sum": &st.NormSum} {
		if v, ok := md[key]; ok { // absent in files written before they were added
			if *dst, err = strconv.ParseFloat(v, 64); err != nil {
				return State{}, fmt.Errorf("load state %s: metadata %s: %w", path, key, err)
			}
		}
	}
	if v := md["classes"]; v != "" {
		if err := json.Unmarshal([]byte(v), &st.Classes); err != nil {
			return State{}, fmt.Errorf("load state %s: metadata classes: %w", path, err)
		}
	}
	if st.Seed, err = strconv.ParseUint(md["seed"], 10, 64); err != nil {
		return State{}, fmt.Errorf("load state %s: metadata seed: %w", path, err)
	}
	st.M, st.V = adamWViews(st.Slots)
	return st, nil
}

// adamWViews returns slots' "m" and "v", each an empty map when absent and
// the slots are AdamW's (only "m" and "v", or none), and nil for another
// optimizer's.
func adamWViews(slots map[string]map[string][]float32) (m, v map[string][]float32) {
	for name := range slots {
		if name != "m" && name != "v" {
			return nil, nil
		}
	}
	m, v = slots["m"], slots["v"]
	if m == nil {
		m = map[string][]float32{}
	}
	if v == nil {
		v = map[string][]float32{}
	}
	return m, v
}
