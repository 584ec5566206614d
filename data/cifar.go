package data

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/vitgo/vit/internal/regfile"
)

const (
	cifarSide   = 32
	cifarImage  = 3 * cifarSide * cifarSide // 3072 bytes, CHW
	cifarRecord = 1 + cifarImage            // label byte + image
)

var cifarClasses = []string{"airplane", "automobile", "bird", "cat", "deer",
	"dog", "frog", "horse", "ship", "truck"}

// DecodeCIFAR decodes the bytes of a CIFAR-10 binary batch file (records of
// one label byte followed by a 32×32 RGB image in CHW order); name is used in
// errors. It returns the images concatenated (3072 bytes each) and the labels,
// and fails when the size is not a multiple of 3073 or a label is not below
// numClasses. It allocates no more than len(b).
func DecodeCIFAR(name string, b []byte, numClasses int) (pix []uint8, labels []int, err error) {
	if len(b) == 0 {
		return nil, nil, fmt.Errorf("cifar %s: empty file", name)
	}
	if len(b)%cifarRecord != 0 {
		return nil, nil, fmt.Errorf("cifar %s: size %d is not a multiple of the %d-byte record (1 label byte + 3072 image bytes)", name, len(b), cifarRecord)
	}
	n := len(b) / cifarRecord
	labels = make([]int, n)
	for i := range labels {
		l := int(b[i*cifarRecord])
		if l >= numClasses {
			return nil, nil, fmt.Errorf("cifar %s: record %d has label %d, not below the %d classes", name, i, l, numClasses)
		}
		labels[i] = l
	}
	pix = make([]uint8, n*cifarImage)
	for i := 0; i < n; i++ {
		copy(pix[i*cifarImage:(i+1)*cifarImage], b[i*cifarRecord+1:(i+1)*cifarRecord])
	}
	return pix, labels, nil
}

// openCIFAR loads CIFAR-10's split from root (or root/cifar-10-batches-bin,
// the directory the official archive unpacks to).
func openCIFAR(root string, split Split, inChans, limit int, mean, std []float64) (*InMemory, error) {
	expected := "CIFAR-10 binary batches (data_batch_1.bin … data_batch_5.bin, test_batch.bin)"
	if err := checkDir(NameCIFAR10, root, expected); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(root, "data_batch_1.bin")); err != nil {
		sub := filepath.Join(root, "cifar-10-batches-bin")
		if _, err2 := os.Stat(filepath.Join(sub, "data_batch_1.bin")); err2 == nil {
			root = sub
		}
	}
	classes, err := readCIFARMeta(root)
	if err != nil {
		return nil, err
	}
	files := []string{"test_batch.bin"}
	if split == Train {
		files = []string{"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin"}
	}
	total := 0
	for _, f := range files {
		if st, err := os.Stat(filepath.Join(root, f)); err == nil {
			total += int(st.Size()) / cifarRecord * cifarImage
		}
	}
	pix := make([]uint8, 0, total)
	var labels []int
	for _, f := range files {
		if limit > 0 && len(labels) >= limit {
			break
		}
		p := filepath.Join(root, f)
		b, err := regfile.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("data: cifar10: read %s (expected %s): %w", p, expected, err)
		}
		px, lb, err := DecodeCIFAR(p, b, len(classes))
		if err != nil {
			return nil, fmt.Errorf("data: cifar10: %w", err)
		}
		pix = append(pix, px...)
		labels = append(labels, lb...)
	}
	m, err := NewInMemory(string(NameCIFAR10), classes, 3, cifarSide, cifarSide, pix, labels)
	if err != nil {
		return nil, err
	}
	return m.limit(limit).withChannels(inChans, mean, std), nil
}

// readCIFARMeta returns the class names of batches.meta.txt (one per line),
// or the standard CIFAR-10 names when the file is absent.
func readCIFARMeta(root string) ([]string, error) {
	p := filepath.Join(root, "batches.meta.txt")
	b, err := regfile.ReadFile(p)
	if os.IsNotExist(err) {
		return cifarClasses, nil
	}
	if err != nil {
		return nil, fmt.Errorf("data: cifar10: read %s: %w", p, err)
	}
	var names []string
	for _, line := range strings.Split(string(b), "\n") {
		if s := strings.TrimSpace(line); s != "" {
			names = append(names, s)
		}
	}
	if len(names) != len(cifarClasses) {
		return nil, fmt.Errorf("data: cifar10: %s names %d classes, want %d (one per line)", p, len(names), len(cifarClasses))
	}
	if err := CheckClassNames(p, names); err != nil {
		return nil, err
	}
	return names, nil
}
