package harness

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/vitgo/vit/graph/kernels"
)

// The one-line description names every part, and says which ones a result
// written before they were recorded lacks.
func TestMachineString(t *testing.T) {
	for _, tc := range []struct {
		m    Machine
		want string
	}{
		{Machine{CPU: "Intel(R) Xeon(R) Processor", Cores: 2, L2: "2 MiB per core", Backend: "native avx512 14x32", Vector: isaAVX512},
			"Intel(R) Xeon(R) Processor (2 logical CPUs, L2 2 MiB per core); ours: native avx512 14x32 SGEMM, AVX-512 and AVX2 vector kernels"},
		{Machine{CPU: "AMD EPYC", Backend: "native avx2 6x16"},
			"AMD EPYC (cores and L2 not recorded); ours: native avx2 6x16 SGEMM, vector kernels not recorded"},
		{Machine{Cores: 16, L2: "1 MiB shared by 2 CPUs", Vector: isaGo},
			"CPU not recorded (16 logical CPUs, L2 1 MiB shared by 2 CPUs); ours: SGEMM not recorded, portable Go vector kernels"},
	} {
		if got := tc.m.String(); got != tc.want {
			t.Errorf("%+v:\n got %q\nwant %q", tc.m, got, tc.want)
		}
	}
}

// This build's description carries this build's backend and names a CPU,
// its cores and a vector ISA, whatever the CPU is.
func TestDescribeMachine(t *testing.T) {
	m := DescribeMachine()
	if m.Backend != kernels.Backend() || m.CPU == "" || m.Cores < 1 {
		t.Errorf("DescribeMachine() = %+v; want backend %q, a CPU and its cores", m, kernels.Backend())
	}
	// The native SGEMM kernel and the vector kernels dispatch on the same
	// features: AVX-512's tile goes with AVX-512 vector kernels, and so on.
	for prefix, want := range map[string]string{"native avx512": isaAVX512, "native avx2": isaAVX2, "native go": isaGo} {
		if strings.HasPrefix(m.Backend, prefix) && m.Vector != want {
			t.Errorf("backend %q with vector kernels %q, want %q", m.Backend, m.Vector, want)
		}
	}
	if v := m.Vector; v != isaAVX512 && v != isaAVX2 && v != isaGo {
		t.Errorf("vector kernels %q", v)
	}
}

// The tables name each of kernels.ISA()'s answers.
func TestVectorISA(t *testing.T) {
	for isa, want := range map[string]string{"avx512": isaAVX512, "avx2": isaAVX2, "go": isaGo} {
		if got := vectorISA(isa); got != want {
			t.Errorf("vectorISA(%q) = %q, want %q", isa, got, want)
		}
	}
}

func TestCPUModel(t *testing.T) {
	info := "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\nflags\t\t: fpu\n\nprocessor\t: 1\nmodel name\t: other\n"
	if got := cpuModel(strings.NewReader(info)); got != "Intel(R) Xeon(R) Platinum 8480+" {
		t.Errorf("cpuModel = %q", got)
	}
	kvm := "processor\t: 0\ncpu family\t: 25\nmodel\t\t: 1\nmodel name\t: AMD EPYC\n\nprocessor\t: 1\ncpu family\t: 26\n"
	if got := cpuModel(strings.NewReader(kvm)); got != "AMD EPYC (family 25 model 1)" {
		t.Errorf("cpuModel of a brand alone = %q, want its family and model", got)
	}
	if got := cpuModel(strings.NewReader("processor\t: 0\n")); got != "unknown CPU" {
		t.Errorf("cpuModel without a model name = %q", got)
	}
}

// cpu0's L2 is found among its caches whatever their order, by level and
// type (an instruction cache at level 2 is not it).
func TestL2Cache(t *testing.T) {
	cache := func(level, typ, size, shared string) map[string]*fstest.MapFile {
		return map[string]*fstest.MapFile{
			"level": {Data: []byte(level + "\n")}, "type": {Data: []byte(typ + "\n")},
			"size": {Data: []byte(size + "\n")}, "shared_cpu_list": {Data: []byte(shared + "\n")},
		}
	}
	dir := func(caches ...map[string]*fstest.MapFile) fstest.MapFS {
		fsys := fstest.MapFS{}
		for i, c := range caches {
			for name, f := range c {
				fsys["index"+string(rune('0'+i))+"/"+name] = f
			}
		}
		return fsys
	}
	l1d, l1i, l3 := cache("1", "Data", "48K", "0"), cache("1", "Instruction", "64K", "0"), cache("3", "Unified", "491520K", "0-1")
	for _, tc := range []struct {
		name string
		fsys fstest.MapFS
		want string
	}{
		{"per core", dir(l1d, l1i, cache("2", "Unified", "2048K", "0"), l3), "2 MiB per core"},
		{"shared", dir(l1d, cache("2", "Unified", "1024K", "0-1,4-5")), "1 MiB shared by 4 CPUs"},
		{"KiB, last", dir(l3, cache("2", "Data", "1280K", "0")), "1280 KiB per core"},
		{"instruction L2 skipped", dir(cache("2", "Instruction", "512K", "0"), cache("2", "Data", "256K", "0")), "256 KiB per core"},
		{"no L2", dir(l1d, l3), ""},
		{"bad size", dir(cache("2", "Unified", "2M", "0")), ""},
		{"unreadable share", dir(cache("2", "Unified", "512K", "x")), "512 KiB"},
		{"no directory", fstest.MapFS{}, ""},
	} {
		if got := l2Cache(tc.fsys); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
