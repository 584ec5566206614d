package checkpoint_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/checkpoint/safetensors"
	"github.com/vitgo/vit/layers"
)

// stateDict is the model of config c as a plain timm state_dict (no
// metadata of ours), edited by edit before it is encoded and read back.
func stateDict(t *testing.T, c layers.Config, edit func(map[string][]int)) *safetensors.File {
	t.Helper()
	shapes := map[string][]int{}
	var names []string
	for _, p := range layers.ParamShapes(c) {
		shapes[p.Name] = []int(p.Shape)
		names = append(names, p.Name)
	}
	if edit != nil {
		edit(shapes)
	}
	var ts []safetensors.Tensor
	for _, n := range names {
		s, ok := shapes[n]
		if !ok {
			continue
		}
		size := 1
		for _, d := range s {
			size *= d
		}
		ts = append(ts, safetensors.FromFloat32(n, s, make([]float32, size)))
	}
	var b bytes.Buffer
	if err := safetensors.Encode(&b, ts, nil); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.Decode(bytes.NewReader(b.Bytes()), int64(b.Len()), "state_dict")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestTimmConfig: the architecture read from a timm state_dict's shapes is
// the one that wrote it (ViT, DeiT, without qkv bias, heads from embed_dim/64),
// and a file that does not say it is refused: a missing tensor, a grid that
// is not square, a width whose heads cannot be guessed (*HeadsError).
func TestTimmConfig(t *testing.T) {
	base := func(edit func(*layers.Config)) layers.Config {
		c := layers.DefaultConfig()
		c.ImgSize, c.PatchSize, c.InChans = layers.Size2{28, 28}, 7, 1
		c.EmbedDim, c.Depth, c.NumHeads, c.MLPRatio, c.NumClasses = 16, 3, 2, 2, 10
		if edit != nil {
			edit(&c)
		}
		return c.WithDefaults()
	}
	for _, tc := range []struct {
		name      string
		c         layers.Config
		heads     int
		edit      func(map[string][]int)
		wantHeads bool // a *HeadsError
		wantErr   bool
	}{
		{name: "vit", c: base(nil), heads: 2},
		{name: "deit", c: base(func(c *layers.Config) { c.Distilled = true }), heads: 2},
		{name: "no qkv bias", c: base(func(c *layers.Config) { c.QKVBias.Set(false) }), heads: 2},
		{name: "heads from width", c: base(func(c *layers.Config) { c.EmbedDim, c.NumHeads = 128, 2 }), heads: 0},
		{name: "heads unknown", c: base(nil), heads: 0, wantHeads: true},
		{name: "no head", c: base(nil), heads: 2, edit: func(s map[string][]int) { delete(s, "head.weight") }, wantErr: true},
		{name: "patch rank", c: base(nil), heads: 2, edit: func(s map[string][]int) { s["patch_embed.proj.weight"] = []int{16, 49} }, wantErr: true},
		{name: "not square", c: base(nil), heads: 2, edit: func(s map[string][]int) { s["pos_embed"] = []int{1, 18, 16} }, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := checkpoint.TimmConfig(stateDict(t, tc.c, tc.edit), tc.heads)
			var he *checkpoint.HeadsError
			switch {
			case tc.wantHeads:
				if !errors.As(err, &he) || he.EmbedDim != tc.c.EmbedDim {
					t.Errorf("err %v, want a *HeadsError for embed_dim %d", err, tc.c.EmbedDim)
				}
			case tc.wantErr:
				if err == nil {
					t.Errorf("read as %+v, want an error", got)
				}
			case err != nil:
				t.Fatal(err)
			case got != tc.c:
				t.Errorf("read\n%+v\nwant\n%+v", got, tc.c)
			}
		})
	}
}

// TestFileSHA256: the digest of a file's bytes; a FIFO is refused, not
// waited on.
func TestFileSHA256(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("vit"), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("vit"))
	if got, err := checkpoint.FileSHA256(p); err != nil || got != hex.EncodeToString(sum[:]) {
		t.Errorf("FileSHA256 = %q, %v; want %x", got, err, sum)
	}
	if _, err := checkpoint.FileSHA256(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing file: no error")
	}
}
