package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vitgo/vit/internal/testmodel"
)

func TestImagesMode(t *testing.T) {
	dir := t.TempDir()
	ckpt, err := testmodel.Checkpoint(filepath.Join(dir, "model"))
	if err != nil {
		t.Fatal(err)
	}
	// 9 images under pics/ (three per class, one JPEG each), a corrupt PNG
	// between them, and a tenth image named on its own after the flags.
	var want []string // "path label" in input order
	pics := filepath.Join(dir, "pics")
	for i := 0; i < 9; i++ {
		p := filepath.Join(pics, fmt.Sprintf("d%d", i/5), fmt.Sprintf("%d.png", i))
		img := testmodel.Colour(i%3, 12+3*i, 30-i, uint32(i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		var b bytes.Buffer
		if i%3 == 1 {
			p = strings.TrimSuffix(p, ".png") + ".jpg"
			jpeg.Encode(&b, img, &jpeg.Options{Quality: 90})
		} else {
			png.Encode(&b, img)
		}
		os.WriteFile(p, b.Bytes(), 0o644)
		want = append(want, p+" "+testmodel.Classes[i%3])
	}
	bad := filepath.Join(pics, "d0", "2b.png")
	os.WriteFile(bad, []byte("not a png"), 0o644)
	last := filepath.Join(dir, "last.png")
	var b bytes.Buffer
	png.Encode(&b, testmodel.Colour(0, 50, 50, 77))
	os.WriteFile(last, b.Bytes(), 0o644)
	want = append(want, last+" blue")

	for _, ext := range []string{".csv", ".json", ".jsonl"} {
		pred := filepath.Join(dir, "p"+ext)
		var out, errb bytes.Buffer
		args := []string{"-checkpoint", ckpt, "-images", pics, last, "-topk", "2", "-batch", "4", "-predictions", pred}
		if code := run(args, &out, &errb); code != 0 {
			t.Fatalf("%s: exit %d: %s", ext, code, errb.String())
		}
		if !strings.Contains(errb.String(), "skipped "+bad+":") || !strings.Contains(errb.String(), "classified 10 images, skipped 1") {
			t.Errorf("stderr %q does not report %s", errb.String(), bad)
		}
		var lines []string
		sc := bufio.NewScanner(&out)
		for sc.Scan() {
			path, rest, _ := strings.Cut(sc.Text(), ": ")
			lines = append(lines, path+" "+strings.Fields(rest)[0])
		}
		if fmt.Sprint(lines) != fmt.Sprint(want) {
			t.Errorf("stdout\n%s\nwant (path, top-1 class) %v", out.String(), want)
		}
		raw, err := os.ReadFile(pred)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		switch ext {
		case ".csv":
			rows, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(rows[0], ",") != "path,top1_class,top1_prob,top2_class,top2_prob" {
				t.Errorf("header %v", rows[0])
			}
			for _, r := range rows[1:] {
				got = append(got, r[0]+" "+r[1])
			}
		case ".json", ".jsonl":
			var recs []predRecord
			if ext == ".json" {
				err = json.Unmarshal(raw, &recs)
			} else {
				for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
					var r predRecord
					err = json.Unmarshal([]byte(l), &r)
					recs = append(recs, r)
				}
			}
			if err != nil {
				t.Fatalf("%s: %v\n%s", ext, err, raw)
			}
			for _, r := range recs {
				if len(r.Predictions) != 2 || r.Predictions[0].Prob < r.Predictions[1].Prob {
					t.Errorf("%s: %+v", ext, r)
				}
				got = append(got, r.Path+" "+r.Predictions[0].Label)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s rows %v, want %v", ext, got, want)
		}
	}

	// -strict: the corrupt file fails the run, named, and no predictions
	// file appears.
	pred := filepath.Join(dir, "strict.csv")
	var out, errb bytes.Buffer
	if code := run([]string{"-checkpoint", ckpt, "-strict", "-predictions", pred, "-images", pics}, &out, &errb); code != 1 || !strings.Contains(errb.String(), bad) {
		t.Errorf("-strict: exit %d, stderr %q", code, errb.String())
	}
	if _, err := os.Stat(pred); !os.IsNotExist(err) {
		t.Errorf("-strict left %s: %v", pred, err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*")); len(m) > 0 {
		t.Errorf("temp files left: %v", m)
	}

	// A glob, -crop-pct (timm's eval crop) and -img-size (pos_embed
	// resampled) still classify the colours.
	out.Reset()
	errb.Reset()
	if code := run([]string{"-checkpoint", ckpt, "-crop-pct", "0.875", "-img-size", "32", "-topk", "1", "-images", filepath.Join(pics, "d1", "*.png")}, &out, &errb); code != 0 {
		t.Fatalf("glob: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "note: pos_embed resampled 2x2 → 4x4") {
		t.Errorf("no resampling note:\n%s", out.String())
	}
	var n int
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if path, rest, ok := strings.Cut(l, ": "); ok && strings.HasSuffix(path, ".png") {
			n++
			i := strings.TrimSuffix(filepath.Base(path), ".png")
			if want := testmodel.Classes[int(i[0]-'0')%3]; strings.Fields(rest)[0] != want {
				t.Errorf("%s: %s, want %s", path, rest, want)
			}
		}
	}
	if n != 3 { // d1 holds 5..8, and 7.jpg is not a .png
		t.Errorf("glob: %d images:\n%s", n, out.String())
	}

	// -precision bf16 classifies with bfloat16 products, int8 with int8
	// ones: the same image's probabilities (as -predictions writes them)
	// differ from fp32's.
	preds := map[string]string{}
	for _, p := range []string{"fp32", "bf16", "int8"} {
		pred := filepath.Join(dir, p+".jsonl")
		if code := run([]string{"-checkpoint", ckpt, "-topk", "3", "-precision", p, "-predictions", pred, "-images", last}, &out, &errb); code != 0 {
			t.Fatalf("-precision %s: exit %d: %s", p, code, errb.String())
		}
		b, err := os.ReadFile(pred)
		if err != nil {
			t.Fatal(err)
		}
		preds[p] = string(b)
	}
	for _, p := range []string{"bf16", "int8"} {
		if preds["fp32"] == preds[p] {
			t.Errorf("-images -precision %s predicts fp32's %q", p, preds["fp32"])
		}
	}
}

func TestImagesModeErrors(t *testing.T) {
	dir := t.TempDir()
	ckpt, err := testmodel.Checkpoint(filepath.Join(dir, "model"))
	if err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(dir, "x.png")
	var b bytes.Buffer
	png.Encode(&b, testmodel.Colour(1, 8, 8, 1))
	os.WriteFile(img, b.Bytes(), 0o644)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-images", img, "-predictions", filepath.Join(dir, "p.txt")}, 2, "want a .csv, .json or .jsonl"},
		{[]string{"-images", img, "-crop-pct", "1.5"}, 1, "crop_pct"},
		{[]string{"-images", img, "-topk", "0"}, 2, "-topk"},
		{[]string{"-images", img, "-results", "r.json"}, 2, "-results not used with -images"},
		{[]string{"-images", img, "-ema"}, 2, "-ema"},
		{[]string{"-images", filepath.Join(dir, "none.png")}, 1, "none.png"},
		{[]string{"-images", dir + "/empty*"}, 1, "empty*"},
	} {
		var out, errb bytes.Buffer
		code := run(append([]string{"-checkpoint", ckpt}, tc.args...), &out, &errb)
		if code != tc.code || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errb.String(), tc.code, tc.want)
		}
	}
}
