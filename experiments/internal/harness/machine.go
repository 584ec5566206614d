package harness

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"runtime"
	"strconv"
	"strings"

	"github.com/vitgo/vit/graph/kernels"
)

// Machine describes the CPU a benchmark ran on and what our kernels used
// there: every benchmark table names it, so that two tables are compared
// only when their machines are. An empty field was not recorded (results
// written before the field existed).
type Machine struct {
	CPU     string // model name (/proc/cpuinfo)
	Cores   int    // logical CPUs the process may run on (runtime.NumCPU)
	L2      string // the L2 cache of cpu0, e.g. "2 MiB per core" or "1 MiB shared by 2 CPUs"
	Backend string // our SGEMM, kernels.Backend(): "native avx512 14x32", "openblas (…)"
	Vector  string // the instruction sets of graph/kernels' vector kernels (GELU, softmax, LayerNorm, adds): VectorISA
}

// DescribeMachine describes this machine and this build's kernels.
func DescribeMachine() Machine {
	m := Machine{CPU: "unknown CPU", Cores: runtime.NumCPU(), Backend: kernels.Backend(), Vector: vectorISA(kernels.ISA())}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		m.CPU = cpuModel(f)
		f.Close()
	}
	m.L2 = l2Cache(os.DirFS("/sys/devices/system/cpu/cpu0/cache"))
	return m
}

// String is the machine in one line, e.g. "Intel(R) Xeon(R) Processor (2
// logical CPUs, L2 2 MiB per core); ours: native avx512 14x32 SGEMM,
// AVX-512 and AVX2 vector kernels".
func (m Machine) String() string {
	var hw []string
	if m.Cores > 0 {
		hw = append(hw, fmt.Sprintf("%d logical CPUs", m.Cores))
	}
	if m.L2 != "" {
		hw = append(hw, "L2 "+m.L2)
	}
	var missing []string
	if m.Cores == 0 {
		missing = append(missing, "cores")
	}
	if m.L2 == "" {
		missing = append(missing, "L2")
	}
	if len(missing) > 0 {
		hw = append(hw, strings.Join(missing, " and ")+" not recorded")
	}
	cpu := m.CPU
	if cpu == "" {
		cpu = "CPU not recorded"
	}
	sgemm, vector := m.Backend+" SGEMM", m.Vector+" vector kernels"
	if m.Backend == "" {
		sgemm = "SGEMM not recorded"
	}
	if m.Vector == "" {
		vector = "vector kernels not recorded"
	}
	return fmt.Sprintf("%s (%s); ours: %s, %s", cpu, strings.Join(hw, ", "), sgemm, vector)
}

// The instruction sets graph/kernels runs its kernels on (kernels.ISA),
// as the tables name them.
const (
	isaAVX512 = "AVX-512 and AVX2" // AVX-512 F/BW/VL/DQ where a kernel has it, AVX2+FMA for the rest
	isaAVX2   = "AVX2"             // AVX2+FMA
	isaGo     = "portable Go"      // no assembly: another GOARCH, the purego tag, or a CPU without AVX2+FMA
)

// vectorISA names kernels.ISA()'s answer for the tables.
func vectorISA(isa string) string {
	switch isa {
	case "avx512":
		return isaAVX512
	case "avx2":
		return isaAVX2
	}
	return isaGo
}

// cpuModel is the first "model name" in a /proc/cpuinfo, or "unknown CPU".
// A name without a digit is a brand alone (a virtual machine's "AMD EPYC"
// covers Zen 3, without AVX-512, and Zen 5, with AVX512_BF16), so the
// first CPU's family and model follow it: "AMD EPYC (family 25 model 1)".
func cpuModel(r io.Reader) string {
	sc := bufio.NewScanner(r)
	name, family, model := "", "", ""
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			if name != "" { // the end of the first CPU's block
				break
			}
			continue
		}
		v = strings.TrimSpace(v)
		switch strings.TrimSpace(k) {
		case "model name":
			name = v
		case "cpu family":
			family = v
		case "model":
			model = v
		}
	}
	switch {
	case name == "":
		return "unknown CPU"
	case strings.ContainsAny(name, "0123456789") || family == "" || model == "":
		return name
	}
	return fmt.Sprintf("%s (family %s model %s)", name, family, model)
}

// l2Cache reads cpu0's level-2 data or unified cache from its sysfs cache
// directory (index*/level, type, size, shared_cpu_list): its size and how
// many logical CPUs share it, or "" when it is not there.
func l2Cache(dir fs.FS) string {
	entries, err := fs.ReadDir(dir, ".")
	if err != nil {
		return ""
	}
	read := func(idx, name string) string {
		b, err := fs.ReadFile(dir, path.Join(idx, name))
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	for _, e := range entries {
		idx := e.Name()
		if !strings.HasPrefix(idx, "index") || read(idx, "level") != "2" || read(idx, "type") == "Instruction" {
			continue
		}
		size := cacheSize(read(idx, "size"))
		if size == "" {
			return ""
		}
		switch n := cpuCount(read(idx, "shared_cpu_list")); {
		case n == 1:
			return size + " per core"
		case n > 1:
			return fmt.Sprintf("%s shared by %d CPUs", size, n)
		}
		return size
	}
	return ""
}

// cacheSize formats sysfs's "2048K" as "2 MiB", "48K" as "48 KiB"; "" for
// anything else.
func cacheSize(s string) string {
	kib, err := strconv.Atoi(strings.TrimSuffix(s, "K"))
	if err != nil || !strings.HasSuffix(s, "K") || kib <= 0 {
		return ""
	}
	if kib%1024 == 0 {
		return fmt.Sprintf("%d MiB", kib/1024)
	}
	return fmt.Sprintf("%d KiB", kib)
}

// cpuCount counts the CPUs in a sysfs CPU list ("0", "0-1", "0-3,8-11"); 0
// when it cannot be read.
func cpuCount(list string) int {
	n := 0
	for _, part := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return 0
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return 0
			}
		}
		n += b - a + 1
	}
	return n
}
