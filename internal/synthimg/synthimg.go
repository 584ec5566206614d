// Package synthimg makes photo-like test images and JPEG class folders for
// benchmarks and tests: smooth shading, soft-edged objects, fine texture and
// sensor noise, so that a JPEG of it has the entropy of a photograph rather
// than of a flat colour: a 500×375 image at quality 90 is about 75 KB
// (0.4 bytes a pixel; ImageNet's training JPEGs average about 110 KB).
package synthimg

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/jpeg"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/vitgo/vit/internal/regfile"
)

// nBlobs is the number of soft-edged objects in a Photo.
const nBlobs = 6

// Photo returns a w×h photo-like RGB image determined by seed.
func Photo(w, h int, seed uint64) *image.RGBA {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	type wave struct{ fx, fy, ph, amp [3]float64 }
	var waves [3]wave
	for i := range waves {
		for c := 0; c < 3; c++ {
			waves[i].fx[c] = (r.Float64()*2 - 1) * 0.04 * float64(i+1)
			waves[i].fy[c] = (r.Float64()*2 - 1) * 0.04 * float64(i+1)
			waves[i].ph[c] = r.Float64() * 2 * math.Pi
			waves[i].amp[c] = 40 / float64(i+1)
		}
	}
	blobs := make([]struct {
		cx, cy, rx, ry float64
		col            [3]float64
	}, nBlobs)
	for i := range blobs {
		b := &blobs[i]
		b.cx, b.cy = r.Float64()*float64(w), r.Float64()*float64(h)
		b.rx, b.ry = (0.05+0.2*r.Float64())*float64(w), (0.05+0.2*r.Float64())*float64(h)
		for c := range b.col {
			b.col[c] = r.Float64()*200 - 100
		}
	}
	base := [3]float64{80 + 100*r.Float64(), 80 + 100*r.Float64(), 80 + 100*r.Float64()}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			fx, fy := float64(x), float64(y)
			// Fine texture: a high-frequency pattern whose strength varies over the image.
			tex := 28 * math.Sin(fx*0.9+3*math.Sin(fy*0.21)) * math.Sin(fy*0.7+2*math.Sin(fx*0.13)) * (0.5 + 0.5*math.Sin(fx*0.011+fy*0.017))
			var px [4]uint8
			var in [nBlobs]float64
			for k, b := range blobs {
				dx, dy := (fx-b.cx)/b.rx, (fy-b.cy)/b.ry
				if d := dx*dx + dy*dy; d < 4 {
					// A soft edge a few pixels wide around each object.
					in[k] = 1 / (1 + math.Exp((d-1)*12))
				}
			}
			for c := 0; c < 3; c++ {
				v := base[c] + tex + r.NormFloat64()*10
				for _, wv := range waves {
					v += wv.amp[c] * math.Sin(wv.fx[c]*fx+wv.fy[c]*fy+wv.ph[c])
				}
				for k, b := range blobs {
					v += b.col[c] * in[k]
				}
				px[c] = uint8(math.Max(0, math.Min(255, v)))
			}
			o := m.PixOffset(x, y)
			m.Pix[o], m.Pix[o+1], m.Pix[o+2], m.Pix[o+3] = px[0], px[1], px[2], 255
		}
	}
	return m
}

// WriteJPEG writes Photo(w, h, seed) to path as a baseline JPEG of the given
// quality (Go's encoder: 4:2:0 chroma, as most camera and ImageNet files).
func WriteJPEG(path string, w, h int, seed uint64, quality int) error {
	f, _, err := regfile.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if err := jpeg.Encode(f, Photo(w, h, seed), &jpeg.Options{Quality: quality}); err != nil {
		f.Close()
		return fmt.Errorf("synthimg: encode %s: %w", path, err)
	}
	return f.Close()
}

// Sizes are ImageNet's typical landscape and portrait sizes.
var Sizes = [][2]int{{500, 375}, {375, 500}}

// distinct is how many different images WriteFolder makes per size; the
// other files are copies (decoding cost does not depend on which).
const distinct = 8

// WriteFolder writes a folder data set under root in the layout data.Open
// reads (root/train/<class>/*.jpg and root/val/<class>/*.jpg): classes
// class folders of perClass training and valPerClass validation JPEGs at
// quality 90, alternating between the sizes of Sizes. It encodes at most
// 8 different images per size and copies them to the other files.
func WriteFolder(root string, classes, perClass, valPerClass int) error {
	var encoded [][]byte
	file := 0
	for _, split := range []struct {
		name string
		n    int
	}{{"train", perClass}, {"val", valPerClass}} {
		for c := 0; c < classes; c++ {
			dir := filepath.Join(root, split.name, fmt.Sprintf("class%03d", c))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			for i := 0; i < split.n; i++ {
				k := file % (distinct * len(Sizes))
				file++
				if k == len(encoded) {
					sz := Sizes[k%len(Sizes)]
					var buf bytes.Buffer
					if err := jpeg.Encode(&buf, Photo(sz[0], sz[1], uint64(k+1)), &jpeg.Options{Quality: 90}); err != nil {
						return fmt.Errorf("synthimg: encode: %w", err)
					}
					encoded = append(encoded, buf.Bytes())
				}
				if err := regfile.WriteFile(filepath.Join(dir, fmt.Sprintf("img%05d.jpg", i)), encoded[k], 0o644); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// WriteSmallFolder writes a folder data set of tiny grey PNGs under root
// (root/{train,val}/cN/aNNN.png): classes class folders c0, c1, … of
// perClass training and valPerClass validation copies of one side×side
// image, whose bytes it returns. For tests that need files, not photos.
func WriteSmallFolder(root string, classes, perClass, valPerClass, side int) ([]byte, error) {
	img := image.NewGray(image.Rect(0, 0, side, side))
	for i := range img.Pix {
		img.Pix[i] = uint8(i)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return nil, fmt.Errorf("synthimg: encode: %w", err)
	}
	for _, split := range []struct {
		name string
		n    int
	}{{"train", perClass}, {"val", valPerClass}} {
		for c := range classes {
			dir := filepath.Join(root, split.name, fmt.Sprintf("c%d", c))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, err
			}
			for i := range split.n {
				if err := regfile.WriteFile(filepath.Join(dir, fmt.Sprintf("a%03d.png", i)), b.Bytes(), 0o644); err != nil {
					return nil, err
				}
			}
		}
	}
	return b.Bytes(), nil
}

// FlatPNG encodes a w×h image of one colour as an 8-bit RGB PNG, row by
// row, without holding the image: it compresses about 1000:1 (7000×7000
// takes under 200 KB) and image/png decodes it to 4 bytes a pixel (196 MB),
// the shape of a memory attack within every pixel and byte limit.
func FlatPNG(w, h int) ([]byte, error) {
	var idat bytes.Buffer
	zw, err := zlib.NewWriterLevel(&idat, zlib.BestCompression)
	if err != nil {
		return nil, err
	}
	row := make([]byte, 1+3*w) // filter byte 0 (none), then RGB
	for i := 1; i < len(row); i += 3 {
		row[i], row[i+1], row[i+2] = 200, 30, 30
	}
	for range h {
		if _, err := zw.Write(row); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	chunk := func(b []byte, typ string, d []byte) []byte {
		b = binary.BigEndian.AppendUint32(b, uint32(len(d)))
		s := len(b)
		b = append(append(b, typ...), d...)
		return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[s:]))
	}
	ihdr := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, uint32(w)), uint32(h))
	b := chunk([]byte("\x89PNG\r\n\x1a\n"), "IHDR", append(ihdr, 8, 2, 0, 0, 0)) // 8-bit RGB, not interlaced
	b = chunk(b, "IDAT", idat.Bytes())
	return chunk(b, "IEND", nil), nil
}

// WriteSmallCSV writes WriteSmallFolder's data set under root and lists it
// as data.name csv reads it: root/train.csv and root/val.csv, a header
// path,label and one row per image, its path relative to root and its
// label the class folder's name. It returns the two files' paths.
func WriteSmallCSV(root string, classes, perClass, valPerClass, side int) (train, val string, err error) {
	if _, err := WriteSmallFolder(root, classes, perClass, valPerClass, side); err != nil {
		return "", "", err
	}
	var paths [2]string
	for k, split := range []struct {
		name string
		n    int
	}{{"train", perClass}, {"val", valPerClass}} {
		var b bytes.Buffer
		b.WriteString("path,label\n")
		for c := range classes {
			for i := range split.n {
				fmt.Fprintf(&b, "%s/c%d/a%03d.png,c%d\n", split.name, c, i, c)
			}
		}
		paths[k] = filepath.Join(root, split.name+".csv")
		if err := regfile.WriteFile(paths[k], b.Bytes(), 0o644); err != nil {
			return "", "", err
		}
	}
	return paths[0], paths[1], nil
}
