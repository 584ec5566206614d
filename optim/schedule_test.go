package optim

import (
	"math"
	"testing"
)

func TestScheduleLR(t *testing.T) {
	cos := Schedule{Kind: SchedCosine, BaseLR: 1e-3, WarmupLR: 1e-6, WarmupEpochs: 1, MinLR: 1e-5}
	noWarm := cos
	noWarm.WarmupEpochs = 0
	frac := cos
	frac.WarmupEpochs = 0.25 // 0.25 × 10 steps = 2.5 → 2 (half to even)
	frac35 := cos
	frac35.WarmupEpochs = 0.35 // 3.5 → 4
	constant := Schedule{Kind: SchedConstant, BaseLR: 0.1, WarmupLR: 0, WarmupEpochs: 0.5}
	step := Schedule{Kind: SchedStep, BaseLR: 0.1, WarmupLR: 0.01, WarmupEpochs: 0.2, DecayEpochs: 1, DecayRate: 0.5}
	// decays every 0.1·30 = 3 steps
	stepFrac := Schedule{Kind: SchedStep, BaseLR: 1, DecayEpochs: 0.1, DecayRate: 0.1}
	const spe = 10 // steps per epoch
	tests := []struct {
		name       string
		s          Schedule
		t, spe, tt int
		want       float64
	}{
		// warmup over W = 10 steps: warmup_lr + (lr − warmup_lr)·t/10
		{"warmup start", cos, 0, spe, 100, 1e-6},
		{"warmup t=5", cos, 5, spe, 100, 1e-6 + (1e-3-1e-6)*0.5},
		{"warmup t=9", cos, 9, spe, 100, 1e-6 + (1e-3-1e-6)*0.9},
		{"warmup end = cosine start", cos, 10, spe, 100, 1e-3},
		{"cosine midpoint", cos, 55, spe, 100, 1e-5 + 0.5*(1e-3-1e-5)},
		{"cosine t=32", cos, 32, spe, 100, 1e-5 + 0.5*(1e-3-1e-5)*(1+math.Cos(math.Pi*22/90))},
		{"cosine last step", cos, 99, spe, 100, 1e-5 + 0.5*(1e-3-1e-5)*(1+math.Cos(math.Pi*89/90))},
		{"cosine end", cos, 100, spe, 100, 1e-5},
		{"after the end", cos, 150, spe, 100, 1e-5},
		{"no warmup start", noWarm, 0, spe, 100, 1e-3},
		{"no warmup midpoint", noWarm, 50, spe, 100, 1e-5 + 0.5*(1e-3-1e-5)},
		{"fractional warmup 2.5 → 2 steps, t=1", frac, 1, spe, 100, 1e-6 + (1e-3-1e-6)*0.5},
		{"fractional warmup 2.5 → 2 steps, t=2", frac, 2, spe, 100, 1e-3},
		{"fractional warmup 3.5 → 4 steps, t=3", frac35, 3, spe, 100, 1e-6 + (1e-3-1e-6)*0.75},
		{"fractional warmup, cosine midpoint", frac35, 52, spe, 100, 1e-5 + 0.5*(1e-3-1e-5)},
		{"warmup longer than run", cos, 5, spe, 8, 1e-6 + (1e-3-1e-6)*0.5},
		{"constant warmup", constant, 2, spe, 100, 0.1 * 2 / 5},
		{"constant after warmup", constant, 5, spe, 100, 0.1},
		{"constant late", constant, 99, spe, 100, 0.1},
		{"step warmup", step, 1, spe, 100, 0.01 + 0.09*0.5},
		{"step before first decay", step, 9, spe, 100, 0.1},
		{"step first decay", step, 10, spe, 100, 0.05},
		{"step third decay", step, 35, spe, 100, 0.1 * 0.125},
		{"step fractional decay epochs t=2", stepFrac, 2, 30, 90, 1},
		{"step fractional decay epochs t=3", stepFrac, 3, 30, 90, 0.1},
		{"step fractional decay epochs t=7", stepFrac, 7, 30, 90, 0.01},
	}
	for _, tc := range tests {
		got := tc.s.LR(tc.t, tc.spe, tc.tt)
		if math.Abs(got-tc.want) > 1e-12*math.Max(1, math.Abs(tc.want)) {
			t.Errorf("%s: LR(%d, %d, %d) = %.15g, want %.15g", tc.name, tc.t, tc.spe, tc.tt, got, tc.want)
		}
	}
}

func TestScheduleMonotone(t *testing.T) {
	s := DefaultConfig().Schedule()
	const spe, total = 7, 70
	w := s.WarmupSteps(spe)
	prev := s.LR(0, spe, total)
	for i := 1; i <= total; i++ {
		lr := s.LR(i, spe, total)
		if i <= w && !(lr > prev) {
			t.Errorf("warmup step %d: lr %g not above %g", i, lr, prev)
		}
		if i > w && !(lr <= prev) {
			t.Errorf("cosine step %d: lr %g above %g", i, lr, prev)
		}
		prev = lr
	}
	if prev != s.MinLR {
		t.Errorf("final lr %g, want min_lr %g", prev, s.MinLR)
	}
}

func TestScheduleNaN(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    Schedule
		spe  int
	}{
		{"unknown kind", Schedule{Kind: "linear", BaseLR: 1}, 10},
		{"no steps per epoch", Schedule{Kind: SchedCosine, BaseLR: 1}, 0},
	} {
		if lr := tc.s.LR(3, tc.spe, 100); !math.IsNaN(lr) {
			t.Errorf("%s: LR = %g, want NaN", tc.name, lr)
		}
	}
}
