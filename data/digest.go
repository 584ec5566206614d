package data

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"math"
	"os"
	"path/filepath"
)

// Digester is a Dataset that can state a digest of what it hands out: two
// data sets with the same digest give the same images with the same labels
// under the same class names, in the same order. Data-parallel ranks compare
// their digests before they train, so that no rank trains on other data
// under the same labels.
type Digester interface {
	Dataset
	Digest() ([sha256.Size]byte, error)
}

// Digest returns ds's digest: ds.Digest() when ds is a Digester, else a
// SHA-256 of its name, classes, normalization and every item (pixels and
// label) in order.
func Digest(ds Dataset) ([sha256.Size]byte, error) {
	if d, ok := ds.(Digester); ok {
		return d.Digest()
	}
	h := digestHeader(ds)
	for i := range ds.Len() {
		img, label, err := ds.Item(i)
		if err != nil {
			return [sha256.Size]byte{}, fmt.Errorf("data: digest of %s: %w", ds.Name(), err)
		}
		digestInts(h, img.C, img.H, img.W, label)
		h.Write(img.Pix)
	}
	return digestSum(h), nil
}

// Digest is a SHA-256 of the images and labels in memory (what was read from
// the IDX or CIFAR files, after data.limit_*), the class names, the channel
// count and the normalization. Files that decode to the same bytes (gzipped
// or not) give the same digest.
func (m *InMemory) Digest() ([sha256.Size]byte, error) {
	h := digestHeader(m)
	digestInts(h, m.c, m.h, m.w, len(m.labels))
	for _, l := range m.labels {
		digestInts(h, l)
	}
	h.Write(m.pix)
	return digestSum(h), nil
}

// Digest is a SHA-256 of the class names, the channel count, the
// normalization and, for each listed file in order, its name relative to the
// split's folder, its size and its label: a renamed, reordered, added,
// removed or resized file changes it; the pixels are not read. An error
// names the file that cannot be examined.
func (f *Folder) Digest() ([sha256.Size]byte, error) {
	h := digestHeader(f)
	digestInts(h, len(f.files))
	for i, p := range f.files {
		st, err := os.Stat(p)
		if err != nil {
			return [sha256.Size]byte{}, fmt.Errorf("data: %s: digest: %w", f.Name(), err)
		}
		rel, err := filepath.Rel(f.dir, p)
		if err != nil {
			rel = p
		}
		digestString(h, filepath.ToSlash(rel))
		digestInts(h, int(st.Size()), f.labels[i])
	}
	return digestSum(h), nil
}

// digestHeader starts a digest with what every data set states: its name,
// class names, channels and normalization.
func digestHeader(ds Dataset) hash.Hash {
	h := sha256.New()
	digestString(h, ds.Name())
	classes := ds.Classes()
	digestInts(h, len(classes), ds.Channels())
	for _, c := range classes {
		digestString(h, c)
	}
	mean, std := ds.Norm()
	for _, v := range [][]float64{mean, std} {
		digestInts(h, len(v))
		for _, x := range v {
			digestInts(h, int(math.Float64bits(x)))
		}
	}
	return h
}

// digestString writes s with its length, so that no two lists of strings
// write the same bytes.
func digestString(h hash.Hash, s string) {
	digestInts(h, len(s))
	h.Write([]byte(s))
}

func digestInts(h hash.Hash, v ...int) {
	var b [8]byte
	for _, x := range v {
		binary.LittleEndian.PutUint64(b[:], uint64(x))
		h.Write(b[:])
	}
}

func digestSum(h hash.Hash) (out [sha256.Size]byte) {
	h.Sum(out[:0])
	return out
}
