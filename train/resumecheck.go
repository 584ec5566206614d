package train

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/sirupsen/logrus"
	"gopkg.in/yaml.v3"

	"github.com/vitgo/vit/checkpoint/safetensors"
	"github.com/vitgo/vit/internal/regfile"
	"github.com/vitgo/vit/report"
)

// ErrRunComplete is returned by Run resuming a run that has already
// done all its epochs (or reached train.max_steps): there is nothing to do,
// and nothing was written.
var ErrRunComplete = errors.New("the run is complete")

// ConfigChange is one config key whose value differs between the run being
// resumed and the new config.
type ConfigChange struct {
	Key      string
	Old, New string // YAML values; "" when absent
	Why      string // why the change is refused; "" when allowed
}

// ResumeConfigError is returned by Run when resuming with a config that
// changes the run's math: it lists every refused change.
type ResumeConfigError struct {
	State   string // the state file holding the run's config
	Changes []ConfigChange
}

func (e *ResumeConfigError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "resume refused: the config changes %d key(s) of the run in %s: ", len(e.Changes), e.State)
	for i, c := range e.Changes {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: %s → %s (%s)", c.Key, show(c.Old), show(c.New), c.Why)
	}
	b.WriteString(". Undo these changes, or start a new run in another out_dir")
	return b.String()
}

func show(v string) string {
	if v == "" {
		return "(absent)"
	}
	return v
}

// NoRunError is returned by Run resuming from a directory that holds no
// state file: there is no run to continue.
type NoRunError struct {
	Dir string
}

func (e *NoRunError) Error() string {
	return fmt.Sprintf("%s holds no %s, so there is no run to continue", e.Dir, LastState)
}

// resumableKeys are the keys a resumed run may change: they cannot change
// what the run computes (train.epochs may only grow).
var resumableKeys = map[string]bool{
	"train.epochs": true, "train.max_steps": true, "train.eval_every": true, "train.log_every": true,
	"train.threads": true, "train.recompute": true, "data.workers": true, "data.prefetch": true,
	"train.out_dir": true, "checkpoint.keep_last": true, "checkpoint.save_best": true, "checkpoint.every_steps": true,
}

// checkResume compares cfg with the config stored in dir's state file and
// refuses every change outside resumableKeys; allowed changes are logged. It
// returns ErrRunComplete when the run has nothing left to do under cfg.
func checkResume(dir string, cfg Config, log *logrus.Logger) error {
	path := filepath.Join(dir, LastState)
	md, err := safetensors.ReadMetadata(path)
	if errors.Is(err, os.ErrNotExist) {
		return &NoRunError{Dir: dir}
	}
	if err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	// The records the resumed run rewrites and appends to: refused now,
	// by type, if not regular files (a FIFO would block their open).
	for _, name := range []string{MetricsFile, report.StepsFile} {
		if err := regfile.Check(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("resume: %w", err)
		}
	}
	if md["config"] != "" {
		stored, err := ParseConfig([]byte(md["config"]), nil)
		if err != nil {
			return fmt.Errorf("resume: the config stored in %s: %w", path, err)
		}
		changes, err := diffConfigs(stored, cfg)
		if err != nil {
			return fmt.Errorf("resume: %w", err)
		}
		var refused []ConfigChange
		for _, c := range changes {
			if c.Key == "distill.teacher" && cfg.Distill.Type.On() && md["teacher_sha256"] != "" {
				continue // a teacher at a new path: its bytes decide, once loaded (checkTeacher)
			}
			if c.Why != "" {
				refused = append(refused, c)
				continue
			}
			log.Infof("resume: %s changed from %s to %s", c.Key, show(c.Old), show(c.New))
		}
		if len(refused) > 0 {
			return &ResumeConfigError{State: path, Changes: refused}
		}
	}
	step, err1 := strconv.Atoi(md["step"])
	epoch, err2 := strconv.Atoi(md["epoch"])
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("resume: %s: metadata: %w", path, err)
	}
	t := cfg.Train
	done := epoch >= t.Epochs
	if !done && t.MaxSteps > 0 && step >= t.MaxSteps {
		// Stopped by max_steps: complete once that stop was evaluated and
		// recorded (the last metrics row is at this step).
		if _, rows, err := report.ReadMetrics(filepath.Join(dir, MetricsFile)); err == nil && len(rows) > 0 && len(rows[len(rows)-1]) > 1 {
			last, _ := strconv.Atoi(rows[len(rows)-1][1])
			done = last == step
		}
	}
	if done {
		return fmt.Errorf("%w: %s has done %d of %d epochs, %d steps (train.max_steps %d); raise train.epochs or train.max_steps to continue it",
			ErrRunComplete, dir, epoch, t.Epochs, step, t.MaxSteps)
	}
	return nil
}

// checkTeacher refuses to resume with a teacher whose bytes are not the
// ones the run started with: loaded is the digest of the teacher as it was
// loaded (Teacher.SHA256), st the state file's record, path the state
// file. The teacher's path may change (the file moved or was copied): the
// same bytes at a new path are accepted, logged with both paths. The
// refusal is a *ResumeConfigError naming distill.teacher.
func checkTeacher(path string, st State, cfg Config, loaded string, log *logrus.Logger) error {
	if !cfg.Distill.Type.On() {
		return nil
	}
	if loaded != st.TeacherSHA256 {
		return &ResumeConfigError{State: path, Changes: []ConfigChange{{Key: "distill.teacher",
			Old: "sha256 " + show(st.TeacherSHA256), New: "sha256 " + loaded, Why: "the teacher's file changed: it labels every batch"}}}
	}
	old := cfg.Distill.Teacher
	if stored, err := ParseConfig([]byte(st.Config), nil); err == nil && st.Config != "" {
		old = stored.Distill.Teacher
	}
	if old != cfg.Distill.Teacher {
		log.Infof("resume: distill.teacher changed from %s to %s: the same bytes (sha256 %s)", old, cfg.Distill.Teacher, loaded)
	}
	return nil
}

// diffConfigs lists the keys whose values differ between old and new, sorted,
// with the reason each refused change is refused.
func diffConfigs(old, new Config) ([]ConfigChange, error) {
	a, err := flatConfig(old)
	if err != nil {
		return nil, err
	}
	b, err := flatConfig(new)
	if err != nil {
		return nil, err
	}
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var out []ConfigChange
	for k := range keys {
		if a[k] == b[k] {
			continue
		}
		c := ConfigChange{Key: k, Old: a[k], New: b[k]}
		switch {
		case freezeKeys[k] && sameFrozen(old, new):
			// Other patterns (reordered, or linear_probe spelled out) that
			// freeze the same parameters: the same run.
		case k == "optim.opt":
			c.Why = "the optimizer state in the state file is the old optimizer's; another optimizer cannot continue it"
		case !resumableKeys[k]:
			c.Why = "changes what the run computes"
		case k == "train.epochs" && new.Train.Epochs < old.Train.Epochs:
			c.Why = "epochs can only grow on resume; use train.max_steps to stop earlier"
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// freezeKeys are the keys that choose the frozen parameters: a change to
// them is refused only when it changes the set they resolve to.
var freezeKeys = map[string]bool{"finetune.freeze": true, "finetune.linear_probe": true}

// sameFrozen reports whether old and new freeze the same set of
// parameters (FrozenNames: the resolved names, not the patterns' text); a
// change of the model itself is refused on its own key.
func sameFrozen(old, new Config) bool {
	a, err1 := FrozenNames(old)
	b, err2 := FrozenNames(new)
	return err1 == nil && err2 == nil && maps.Equal(a, b)
}

// flatConfig maps each leaf key of cfg's YAML ("section.key") to its value
// in YAML flow style.
func flatConfig(cfg Config) (map[string]string, error) {
	src, err := cfg.YAML()
	if err != nil {
		return nil, err
	}
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return nil, err
	}
	out := map[string]string{}
	var walk func(prefix string, n *yaml.Node) error
	walk = func(prefix string, n *yaml.Node) error {
		if n.Kind == yaml.DocumentNode {
			return walk(prefix, n.Content[0])
		}
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				key := n.Content[i].Value
				if prefix != "" {
					key = prefix + "." + key
				}
				if err := walk(key, n.Content[i+1]); err != nil {
					return err
				}
			}
			return nil
		}
		n.Style = yaml.FlowStyle
		v, err := yaml.Marshal(n)
		if err != nil {
			return err
		}
		out[prefix] = strings.TrimSpace(string(v))
		return nil
	}
	if len(root.Content) == 0 {
		return out, nil
	}
	return out, walk("", &root)
}
