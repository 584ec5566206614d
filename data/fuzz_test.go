package data

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// The seed corpora under testdata/fuzz/FuzzIDX and testdata/fuzz/FuzzCIFAR,
// and FuzzCSV's seeds, run as ordinary tests; `go test -fuzz FuzzIDX ./data` explores further.

func FuzzIDX(f *testing.F) {
	good := idxBytes([]int{2, 3, 2}, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	f.Add(good)
	f.Add(gz(good))
	f.Add(idxBytes([]int{1 << 30, 1 << 30}, []byte{1, 2}))
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := DecodeIDX("fuzz", b)
		if err != nil {
			return
		}
		n := 1
		for _, d := range x.Dims {
			if d < 0 {
				t.Fatalf("negative dim %v", x.Dims)
			}
			n *= d
		}
		if len(x.Data) != n {
			t.Fatalf("dims %v hold %d values, data has %d", x.Dims, n, len(x.Data))
		}
		if !(len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b) && n > len(b) {
			t.Fatalf("raw file of %d bytes yielded %d values", len(b), n)
		}
	})
}

func FuzzCIFAR(f *testing.F) {
	f.Add(cifarRecords(1, 3))
	f.Add(cifarRecords(2, 9)[:3073*2-7])
	f.Fuzz(func(t *testing.T, b []byte) {
		pix, labels, err := DecodeCIFAR("fuzz", b, 10)
		if err != nil {
			return
		}
		if len(pix) != len(labels)*3072 || len(labels)*3073 != len(b) {
			t.Fatalf("%d bytes gave %d labels and %d pixels", len(b), len(labels), len(pix))
		}
		for _, l := range labels {
			if l < 0 || l >= 10 {
				t.Fatalf("label %d accepted", l)
			}
		}
	})
}

func FuzzCSV(f *testing.F) {
	f.Add([]byte("path,label\na/x.png,cat\n\"b, c.png\",dog\n"))
	f.Add([]byte("\ufefflabel,extra,path\ncat,1,x.png\n"))
	f.Add([]byte("path,label\nx.png\n"))
	f.Add([]byte("path,label\n\"x.png,cat\n"))
	f.Add([]byte("path,path,label\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := decodeCSV("fuzz.csv", bytes.NewReader(b))
		if err != nil {
			var ce *CSVError
			if !errors.As(err, &ce) || ce.File != "fuzz.csv" {
				t.Fatalf("error %v is not a *CSVError naming the file", err)
			}
			return
		}
		if len(rows) == 0 {
			t.Fatal("no rows and no error")
		}
		for _, r := range rows {
			if strings.TrimSpace(r.path) == "" || strings.TrimSpace(r.label) == "" || r.line < 2 {
				t.Fatalf("row %+v accepted", r)
			}
		}
	})
}
