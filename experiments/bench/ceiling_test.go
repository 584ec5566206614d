package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/layers"
)

// servingFLOPs counts timm's export as harness.ForwardFLOPs does, and our
// serving graph less the last block's work on the tokens it does not read
// out: their attention rows, projection and MLP; our int8 quantizes the
// patch projection too.
func TestServingFLOPs(t *testing.T) {
	for _, name := range []string{"vit_tiny_patch16_224", "vit_small_patch16_224", "vit_base_patch16_224"} {
		c := layers.Presets[name].WithDefaults()
		full, fullInt8 := servingFLOPs(c, true)
		ours, oursInt8 := servingFLOPs(c, false)
		if want := harness.ForwardFLOPs(c).Total(); math.Abs(full-want) > 1e-9*want {
			t.Errorf("%s: full %g FLOPs, harness.ForwardFLOPs %g", name, full, want)
		}
		tk, d, dh := float64(c.NumTokens()), float64(c.EmbedDim), float64(c.Hidden())
		dropped := (tk - 1) * (2*d*d + 2*2*d*dh)
		if want := full - dropped - (tk-1)*2*2*tk*d; math.Abs(ours-want) > 1e-9*want {
			t.Errorf("%s: ours %g FLOPs, want %g", name, ours, want)
		}
		embed := 2 * float64(c.NumPatches()*c.InChans*c.PatchSize*c.PatchSize) * d
		if want := fullInt8 - dropped + embed; math.Abs(oursInt8-want) > 1e-9*want {
			t.Errorf("%s: ours int8 %g FLOPs, want %g", name, oursInt8, want)
		}
		if want := float64(c.Depth) * (2*tk*d*3*d + 2*tk*d*d + 2*2*tk*d*dh); math.Abs(fullInt8-want) > 1e-9*want {
			t.Errorf("%s: full int8 %g FLOPs, want qkv+proj+MLP %g", name, fullInt8, want)
		}
	}
}

// The committed record's FLOPs are servingFLOPs' for its models: a change
// of the count must render the record again with the new figures.
func TestServingRecordFLOPs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("serving", harness.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	var rep harness.Report[servingResults]
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	for _, row := range rep.R.Rows {
		i := slices.IndexFunc(servingModels, func(m servingModel) bool { return m.Label == row.Model })
		if i < 0 {
			t.Fatalf("record row %q: no such serving model", row.Model)
		}
		c := layers.Presets[servingModels[i].Preset]
		flops, int8 := servingFLOPs(c, false)
		peer, peerInt8 := servingFLOPs(c, true)
		if got, want := [4]float64{row.FLOPs, row.Int8FLOPs, row.PeerFLOPs, row.PeerInt8FLOPs}, [4]float64{flops, int8, peer, peerInt8}; got != want {
			t.Errorf("record row %s %s: FLOPs %v, servingFLOPs gives %v", row.Model, row.Precision, got, want)
		}
	}
}

// The ceiling table: each side's least time over its time and the best
// ratio possible, from the peaks and the FLOPs; ONNX Runtime's int8
// columns are dashes where its sequence's peak is unknown; no table
// without the peaks.
func TestServingCeiling(t *testing.T) {
	ts := func(ms1, ms8, ms32 float64) []timing {
		return []timing{{1, ms1, ms1, 1000 / ms1}, {8, ms8, ms8, 8000 / ms8}, {32, ms32, ms32, 32000 / ms32}}
	}
	r := servingResults{Machine: testMachine, Load: "0.1 0.2 0.3", LoadAfter: "1 1 1", GoVersion: "go1.26.8", Threads: 2,
		Iters: 30, BatchIters: 5, Warmup: 3, Rounds: 1, Kernel: "avx2", Int8Kernel: "avx2", ORT: "1.30.0",
		FP32Peak: 100, Int8Peak: 200, Int8SatPeak: 250}
	r.Rows = []servingRow{
		// fp32: ours' least time 50 ms an image, ONNX Runtime's 60.
		{Model: "ViT-S/16", Precision: graph.FP32, FLOPs: 5e9, Int8FLOPs: 4e9, PeerFLOPs: 6e9, PeerInt8FLOPs: 5e9,
			Ours: ts(100, 800, 3200), ORT: ts(100, 960, 3840)},
		// int8: ours 1e9/100 + 4e9/200 = 30 ms, ONNX Runtime's 1e9/100 + 5e9/250 = 30.
		{Model: "ViT-S/16", Precision: graph.INT8, FLOPs: 5e9, Int8FLOPs: 4e9, PeerFLOPs: 6e9, PeerInt8FLOPs: 5e9,
			Ours: ts(60, 480, 1920), ORT: ts(40, 480, 1200)},
	}
	for _, c := range []struct {
		name       string
		change     func(*servingResults)
		want, dont []string
	}{
		{"all peaks", func(*servingResults) {}, []string{
			"float32 FMA 100 GFLOP/s, our int8 panel\nkernel's sequence 200 Gop/s, AVX2's uint8 × int8 sequence (ONNX Runtime's)\n250 Gop/s.",
			"| ViT-S/16 | fp32 | 50 % | 60 % | 0.50× | 50 % | 50 % | 2.40× | 50 % | 50 % | 2.40× |",
			"| ViT-S/16 | int8 | 50 % | 75 % | 0.75× | 50 % | 50 % | 2.00× | 50 % | 80 % | 1.25× |",
		}, nil},
		{"no saturating peak", func(r *servingResults) { r.Int8SatPeak = 0 }, []string{
			"; ONNX Runtime's int8 sequence on this CPU is not measured.",
			"| ViT-S/16 | fp32 | 50 % | 60 % | 0.50× |",
			"| ViT-S/16 | int8 | 50 % | — | — | 50 % | — | — | 50 % | — | — |",
		}, nil},
		{"no peaks", func(r *servingResults) { r.FP32Peak, r.Int8Peak, r.Int8SatPeak = 0, 0, 0 }, nil,
			[]string{"Against the ceiling"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rc := r
			c.change(&rc)
			got := renderServing(t, rc)
			readmeHas(t, got, c.want, c.dont)
		})
	}
}
