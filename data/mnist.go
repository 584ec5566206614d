package data

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/vitgo/vit/internal/regfile"
)

var (
	mnistClasses   = []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}
	fashionClasses = []string{"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
		"Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"}
)

// openIDXDataset loads MNIST or Fashion-MNIST's split into memory.
func openIDXDataset(cfg Config, split Split, inChans, limit int, mean, std []float64) (*InMemory, error) {
	root := cfg.Root
	if d, _ := Lookup(cfg.Name); root == "" && d.Locate != nil {
		var err error
		if root, err = d.Locate(); err != nil {
			return nil, err
		}
	}
	if err := checkDir(cfg.Name, root, "the IDX files (train-images-idx3-ubyte[.gz] and the others)"); err != nil {
		return nil, err
	}
	prefix := "train"
	if split == Val {
		prefix = "t10k"
	}
	imgPath, err := findIDXFile(cfg.Name, root, prefix, "images", 3)
	if err != nil {
		return nil, err
	}
	lblPath, err := findIDXFile(cfg.Name, root, prefix, "labels", 1)
	if err != nil {
		return nil, err
	}
	classes := mnistClasses
	if cfg.Name == NameFashionMNIST {
		classes = fashionClasses
	}
	pix, labels, h, w, err := readIDXPair(imgPath, lblPath, len(classes), limit)
	if err != nil {
		return nil, fmt.Errorf("data: %s: %w", cfg.Name, err)
	}
	m, err := NewInMemory(string(cfg.Name), classes, 1, h, w, pix, labels)
	if err != nil {
		return nil, err
	}
	return m.withChannels(inChans, mean, std), nil
}

// readIDXPair reads an images file (n, h, w) and a labels file (n), checks
// they agree and that every label is below numClasses, and keeps the first
// limit items (0 = all).
func readIDXPair(imgPath, lblPath string, numClasses, limit int) (pix []uint8, labels []int, h, w int, err error) {
	img, err := ReadIDX(imgPath)
	if err != nil {
		return nil, nil, 0, 0, err
	}
	if len(img.Dims) != 3 {
		return nil, nil, 0, 0, fmt.Errorf("idx %s: images file has dims %v, want 3 dimensions (count, rows, cols)", imgPath, img.Dims)
	}
	lbl, err := ReadIDX(lblPath)
	if err != nil {
		return nil, nil, 0, 0, err
	}
	if len(lbl.Dims) != 1 {
		return nil, nil, 0, 0, fmt.Errorf("idx %s: labels file has dims %v, want 1 dimension (count)", lblPath, lbl.Dims)
	}
	n, h, w := img.Dims[0], img.Dims[1], img.Dims[2]
	if lbl.Dims[0] != n {
		return nil, nil, 0, 0, fmt.Errorf("idx %s has %d images but %s has %d labels", imgPath, n, lblPath, lbl.Dims[0])
	}
	if n == 0 || h == 0 || w == 0 {
		return nil, nil, 0, 0, fmt.Errorf("idx %s: no images (dims %v)", imgPath, img.Dims)
	}
	n = limitN(n, limit)
	labels = make([]int, n)
	for i := range labels {
		l := int(lbl.Data[i])
		if l >= numClasses {
			return nil, nil, 0, 0, fmt.Errorf("idx %s: label %d of item %d is not below the %d classes", lblPath, l, i, numClasses)
		}
		labels[i] = l
	}
	return img.Data[:n*h*w], labels, h, w, nil
}

// findIDXFile returns the path of prefix-kind-idxN-ubyte in root, accepting
// the ".gz" suffix and the "prefix-kind.idxN-ubyte" spelling. When none of
// these is a regular file but one exists as something else (a named pipe,
// a directory, a device), the error is its *regfile.NotRegularError, which
// names the path and what it is.
func findIDXFile(name DatasetName, root, prefix, kind string, nd int) (string, error) {
	base := fmt.Sprintf("%s-%s-idx%d-ubyte", prefix, kind, nd)
	alt := fmt.Sprintf("%s-%s.idx%d-ubyte", prefix, kind, nd)
	var notRegular error
	for _, b := range []string{base, alt} {
		for _, ext := range []string{".gz", ""} {
			p := filepath.Join(root, b+ext)
			err := regfile.Check(p)
			if err == nil {
				return p, nil
			}
			var nr *regfile.NotRegularError
			if notRegular == nil && errors.As(err, &nr) {
				notRegular = err
			}
		}
	}
	if notRegular != nil {
		return "", fmt.Errorf("data: %s: %s %s file: %w", name, prefix, kind, notRegular)
	}
	return "", fmt.Errorf("data: %s: no %s %s file in %s: expected %s or %s.gz",
		name, prefix, kind, root, filepath.Join(root, base), base)
}

// checkDir returns an error naming dir unless it is an existing directory.
func checkDir(name DatasetName, dir, expected string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("data: %s: directory %s, expected to hold %s: %w", name, dir, expected, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("data: %s: %s is not a directory; expected a directory holding %s", name, dir, expected)
	}
	return nil
}
