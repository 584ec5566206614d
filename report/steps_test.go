package report

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestStepsLogResume: a resume keeps the complete rows up to its step and
// drops later ones and a row cut short by a killed process; Append then
// continues the file.
func TestStepsLogResume(t *testing.T) {
	const header = "step,epoch,lr,loss,grad_norm,img_per_s\n"
	for _, tc := range []struct {
		name, file string
		resume     int
		want       []int
	}{
		{"later rows dropped", header + "2,1,0.1,2.3,1,10.0\n4,1,0.1,2.2,1,10.0\n6,1,0.1,2.1,1,10.0\n", 4, []int{2, 4, 8}},
		{"cut row dropped", header + "2,1,0.1,2.3,1,10.0\n4,1,0.1,2.2,1,10.0\n6,1,0.", 6, []int{2, 4, 8}},
		{"nothing kept", header + "2,1,0.1,2.3,1,10.0\n", 0, []int{8}},
		{"missing file", "", 4, []int{8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &StepsLog{Path: filepath.Join(t.TempDir(), StepsFile)}
			if tc.file != "" {
				if err := os.WriteFile(l.Path, []byte(tc.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := l.Resume(tc.resume); err != nil {
				t.Fatal(err)
			}
			if err := l.Append(StepRow{Step: 8, Epoch: 2, LR: 0.1, Loss: 2, GradNorm: 1, ImgPerS: 10}); err != nil {
				t.Fatal(err)
			}
			l.Close()
			rows, err := ReadSteps(l.Path)
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, r := range rows {
				got = append(got, r.Step)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("rows at steps %v, want %v", got, tc.want)
			}
		})
	}
}
