package safetensors

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"
)

func u16s(v ...uint16) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint16(b, x)
	}
	return b
}

func TestFloat32Conversions(t *testing.T) {
	f64 := func(v ...float64) []byte {
		var b []byte
		for _, x := range v {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		}
		return b
	}
	tests := []struct {
		name string
		t    Tensor
		want []uint32 // float32 bit patterns
	}{
		{"F16", Tensor{DType: F16, Shape: []int{10}, Data: u16s(
			0x3c00, // 1
			0xc000, // -2
			0x7bff, // 65504, the largest finite half
			0x0400, // 2^-14, the smallest normal
			0x0001, // 2^-24, the smallest subnormal
			0x03ff, // 1023 × 2^-24, the largest subnormal
			0x8000, // -0
			0x7c00, // +Inf
			0xfc00, // -Inf
			0x7e00, // quiet NaN
		)}, []uint32{0x3f800000, 0xc0000000, 0x477fe000, 0x38800000, 0x33800000, 0x387fc000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000}},
		{"BF16", Tensor{DType: BF16, Shape: []int{2, 2}, Data: u16s(0x3f80, 0xc049, 0x0001, 0x7f80)},
			[]uint32{0x3f800000, 0xc0490000, 0x00010000, 0x7f800000}},
		{"F64", Tensor{DType: F64, Shape: []int{5}, Data: f64(0.1, -1.0/3, 1e-45, 1e39, -1e-50)},
			// 0.1 and -1/3 round to nearest; 1e-45 → smallest subnormal; 1e39 → +Inf; -1e-50 → -0
			[]uint32{0x3dcccccd, 0xbeaaaaab, 0x00000001, 0x7f800000, 0x80000000}},
		{"F32 scalar", FromFloat32("s", nil, []float32{-2.5}), []uint32{0xc0200000}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.t.Float32()
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("%d values, want %d", len(got), len(tc.want))
			}
			for i, v := range got {
				if math.Float32bits(v) != tc.want[i] {
					t.Errorf("[%d] = %v (%#08x), want %v (%#08x)", i, v, math.Float32bits(v), math.Float32frombits(tc.want[i]), tc.want[i])
				}
			}
		})
	}
}

// TestFloat16Exhaustive checks every half-precision bit pattern against the
// definition (-1)^s × 2^(e-15) × 1.m, or 2^-14 × 0.m for subnormals.
func TestFloat16Exhaustive(t *testing.T) {
	for h := range 1 << 16 {
		got := float16ToFloat32(uint16(h))
		sign := 1.0
		if h&0x8000 != 0 {
			sign = -1
		}
		e, m := (h>>10)&0x1f, float64(h&0x3ff)
		var want float64
		switch e {
		case 0x1f:
			if m != 0 {
				if !math.IsNaN(float64(got)) {
					t.Fatalf("%#04x: %v, want NaN", h, got)
				}
				continue
			}
			want = math.Inf(int(sign))
		case 0:
			want = sign * math.Ldexp(m/1024, -14)
		default:
			want = sign * math.Ldexp(1+m/1024, e-15)
		}
		if float64(got) != want || math.Signbit(float64(got)) != (sign < 0) {
			t.Fatalf("%#04x: %v, want %v", h, got, want)
		}
	}
}

func TestFloat32Errors(t *testing.T) {
	tests := []struct {
		t    Tensor
		want string
	}{
		{Tensor{Name: "steps", DType: I64, Shape: []int{1}, Data: make([]byte, 8)}, `tensor "steps": dtype I64 is not F32, F64, F16 or BF16`},
		{Tensor{Name: "mask", DType: Bool, Shape: []int{2}, Data: make([]byte, 2)}, `tensor "mask": dtype BOOL`},
		{Tensor{Name: "w", DType: F32, Shape: []int{3}, Data: make([]byte, 8)}, `tensor "w": shape [3] with dtype F32 needs 12 bytes, has 8`},
		{FromFloat32("x", []int{2, 2}, []float32{1}), `tensor "x": shape [2 2] with dtype F32 needs 16 bytes, has 4`},
		{Tensor{Name: "q", DType: "Q4", Shape: []int{1}}, `tensor "q": unknown dtype "Q4"`},
	}
	for _, tc := range tests {
		if _, err := tc.t.Float32(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.t.Name, err, tc.want)
		}
	}
}

func TestNumElements(t *testing.T) {
	tests := []struct {
		shape []int
		want  int
		ok    bool
	}{
		{nil, 1, true},
		{[]int{3, 4}, 12, true},
		{[]int{1 << 40, 1 << 40, 0}, 0, true}, // a zero dim wins over an overflowing product
		{[]int{1 << 32, 1 << 32}, 0, false},
		{[]int{2, -1}, 0, false},
	}
	for _, tc := range tests {
		n, err := Tensor{Shape: tc.shape}.NumElements()
		if (err == nil) != tc.ok || n != tc.want {
			t.Errorf("%v: %d, %v; want %d, ok=%v", tc.shape, n, err, tc.want, tc.ok)
		}
	}
}

// TestFloat32ViewMatchesCopy: the zero-copy view encodes every bit pattern
// (signed zeros, subnormals, infinities, NaN payloads) exactly as the copy
// does, and on this little-endian machine it shares v's memory.
func TestFloat32ViewMatchesCopy(t *testing.T) {
	v := []float32{0, float32(math.Copysign(0, -1)), 1, -2.5, math.SmallestNonzeroFloat32, math.MaxFloat32,
		float32(math.Inf(1)), float32(math.Inf(-1)), math.Float32frombits(0x7fc00001), math.Float32frombits(0xff800123)}
	view, cp := Float32View("x", []int{2, 5}, v), FromFloat32("x", []int{2, 5}, v)
	if !bytes.Equal(view.Data, cp.Data) || view.DType != F32 || fmt.Sprint(view.Shape) != "[2 5]" {
		t.Fatalf("view %v %v %x, copy %x", view.DType, view.Shape, view.Data, cp.Data)
	}
	var a, b bytes.Buffer
	if err := Encode(&a, []Tensor{view}, nil); err != nil {
		t.Fatal(err)
	}
	if err := Encode(&b, []Tensor{cp}, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("encoded view differs from encoded copy")
	}
	if littleEndian {
		v[2] = 3
		if got := math.Float32frombits(binary.LittleEndian.Uint32(view.Data[8:])); got != 3 {
			t.Fatalf("view is a copy: element 2 reads %v after v[2] = 3", got)
		}
	}
	if e := Float32View("e", []int{0}, nil); len(e.Data) != 0 {
		t.Fatalf("empty view has %d bytes", len(e.Data))
	}
}
