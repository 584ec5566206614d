//go:build !parallelrecord

package parallel

import (
	"errors"
	"sync/atomic"
	"testing"
)

// Without the build tag parallelrecord there are no hooks: Record refuses
// (and a pass runs on the pool as ever), Waited and Polled stay 0.
func TestNoRecordingWithoutTheTag(t *testing.T) {
	stop, err := Record(func(Pass) { t.Error("a pass was recorded") })
	if !errors.Is(err, ErrNotRecording) {
		t.Errorf("Record: error %v, want ErrNotRecording", err)
	}
	defer stop()
	var n atomic.Int32
	Run(8, func(int) { n.Add(1) })
	if n.Load() != 8 {
		t.Errorf("%d chunks ran, want 8", n.Load())
	}
	if Waited() != 0 || Polled() != 0 {
		t.Errorf("Waited %v, Polled %v: want 0 in this build", Waited(), Polled())
	}
}
