// Package kernels holds the float32 compute kernels behind the graph ops:
// SGEMM (cblas_sgemm row-major semantics; Sgemm splits large products over
// the cores, SgemmSerial runs on the calling goroutine) and
// vectorised elementwise and row-wise kernels (Exp, SoftmaxRows, exact-erf
// GELU and its gradient, LayerNorm forward and backward, bias and BLAS-1
// helpers). Gorgonia ops call them for their hot loops.
//
// # Backends
//
// The default build is pure Go plus Go assembly, chosen at run time from the
// CPU's features (golang.org/x/sys/cpu):
//
//   - AVX-512: a 14×32 SGEMM register tile (28 ZMM accumulators) and 16-lane
//     elementwise kernels with masked tails;
//   - AVX2+FMA: a 6×16 SGEMM tile and 8-lane elementwise kernels;
//   - otherwise, and on other GOARCHes or with the purego build tag,
//     portable Go (same algorithms, far slower).
//
// SGEMM follows the Goto/BLIS loop nest with cache blocking. It packs
// transposed B, and a transposed A (weight gradients) or a plain B (input
// gradients) when the packed block is reused over more than four register
// tiles; otherwise it reads them in place and packs only partial edge
// panels. The depth blocks alone fix each element's summation order, so
// packing, row blocks, kernels and splits change no bit. Products above
// m·n·k = 2^18 are split over GOMAXPROCS goroutines by row or column blocks
// handed out dynamically. Attention spreads its images over the cores
// itself and runs each image's small per-head products with SgemmSerial.
//
// With the openblas build tag (needs cgo and Debian's libopenblas-dev),
// Sgemm and SgemmSerial call cblas_sgemm instead; Backend names what is in
// use. See README.md for measured throughput of both.
//
// # Accuracy
//
// Exp has a relative error below 2e-7 (normal results); GELU below 1e-6
// relative for every x (Φ is computed through erfc, so the negative tail
// keeps its relative accuracy); GELUBackward below 1e-6 of
// dy·(|Φ(x)| + |x·φ(x)|). Reductions (Dot, softmax and LayerNorm sums)
// accumulate in float32 across 16 lanes. The tests check every kernel
// and every implementation this CPU has against float64 references.
//
// # Bits
//
// Every implementation gives the same float32 bits, so a training run is
// reproducible on any CPU: the portable Go code, the AVX2 and the AVX-512
// assembly, every SGEMM micro-kernel, on any number of cores. Each output
// is one defined sequence of float32 operations:
//
//   - a multiply-add is fused (one rounding) exactly where the assembly
//     uses an FMA instruction; the Go code calls fma32, an exact emulation;
//   - a sum of many terms goes into 16 lanes, element i into lane i mod 16,
//     each lane in element order, and the lanes are added by one fixed
//     tree (lanes.go), whatever the vector width;
//   - an SGEMM element is a chain of FMAs from zero over each depth block
//     of 512, blocks added in order; tiles, packing and splits do not
//     change it;
//   - sums over rows (ColSum, LayerNorm's dw and db) go in fixed chunks
//     added in chunk order.
//
// TestKernelsSameBits compares the implementations a CPU has, and
// TestKernelDigests pins their common bits, so a CPU that lacks an
// instruction set still checks the others' bits. NaN payloads are not part
// of the contract. The -tags openblas build is outside it: OpenBLAS sums
// in its own order.
//
// # bfloat16 products
//
// SgemmBF16, SgemmBF16Serial and the products of a PackBBF16 operand
// compute C = alpha·op(A)·op(B) + beta·C as torch's CPU autocast does:
// the operands are rounded to bfloat16 (ToBF16: to nearest even, as
// VCVTNEPS2BF16) and the products accumulate in float32. Their bits are
// defined by AMX's TDPBF16PS: for each block of 16 pairs of depth, two
// chains from +0, e over the even elements' products and o over the odd
// ones', then acc + (e + o), over the whole depth in one pass, every
// operation with DAZ and FTZ, then SGEMM's epilogue (sgemmBF16Ref is the
// definition). Three backends give those bits:
//
//   - AMX tiles (AMX-TILE and AMX-BF16, with Linux's permission; the
//     instructions emitted as bytes since Go's assembler lacks them), on
//     operands converted by AVX512_BF16's VCVTNEPS2BF16 (ToBF16 bit for
//     bit); an op(B) too large for L2 is taken in passes of depth and
//     columns, the tiles reloading their sums between passes (which
//     changes no bit);
//   - VDPBF16PS register tiles (AVX512_BF16 without AMX: AMD Zen 4 and
//     later, Intel Cooper Lake), on AMX's packing and driver. The
//     instruction adds a pair's high product, then its low one, each step
//     rounded with DAZ and FTZ; a pair (depth 4q+2, 4q) is thus two steps
//     of the even chain, (4q+3, 4q+1) two of the odd one. The depth of
//     each block of 32 is permuted so (dpPerm), and the 4×32 tile keeps
//     both chains in registers and adds e + o to its accumulator per block
//     (gen_dp_asm.go); a partial block of 32 rows runs only its groups of
//     4 (attention's 197 rows: 200 computed, where AMX computes 224), and
//     the product's last block of depth only its steps of 4 that are not
//     padding, adding +0 to e + o for the +0·+0 steps it skips (which
//     would turn a chain's -0 into +0 and change nothing else);
//   - the emulation, on every CPU: the SGEMM tiles run with MXCSR's DAZ
//     and FTZ set, once over the even depths of a block (panel strides
//     doubled) and once over the odd ones onto the same tile, then added
//     to the accumulator. A product of two bfloat16 values is exact in
//     float32, so each FMA rounds as TDPBF16PS's does.
//
// An operand can also be given as bfloat16 words, the 16 bits ToBF16
// makes (WordsBF16): SgemmPackedThenWords takes A so, SgemmBF16Words B.
// ToBF16 of a word widened back (FromBF16, WidenBF16) is the word itself,
// so these give the bits of the same products of the float32 values
// (TestWordsProducts); a graph keeps product-only activations that way.
//
// AMX runs where it can, else VDPBF16PS (BF16Backend names the backend,
// BF16KernelNote the line the commands log;
// VIT_BF16_KERNEL=emulated forces the emulation, =vdpbf16ps skips AMX;
// CheckBF16KernelEnv refuses a kernel the CPU lacks).
// TestAMXEqualsReference, TestAMXBlocked, TestPackConversion,
// TestBF16EmulatedEqualsReference, TestBF16Underflow and
// TestBF16SignOfZero pin every backend
// to the definition on every tile, split and edge, the flushing of
// results that are tiny after rounding included; a CPU without AMX or
// AVX512_BF16 skips that leg with a message. BF16Peak measures
// VDPBF16PS alone, the ceiling of every bfloat16 product on a CPU without
// AMX.
//
// # int8 products
//
// QuantizeInt8 quantizes a weight matrix once (symmetric per output
// channel, on 7 bits: −64…64) and Int8Linear computes x·Wᵀ + b from it as
// ONNX Runtime's dynamic quantization with reduce_range does: each row of
// x quantized to uint8 with its own scale and zero point, int32 sums, then
// one defined sequence of float32 steps. With 7-bit weights AVX2's
// VPMADDUBSW never saturates its int16 pairs, so the AVX2 kernels and the
// Go one give the same int32 sums and the same outputs on every CPU
// (TestInt8Digest). Int8ISA names the tile.
//
// # Errors
//
// Inconsistent shapes (a slice shorter than its matrix, mismatched lengths,
// a leading dimension below the row length) are programming errors: the
// kernels panic with a message naming the function and the argument, as
// gonum's BLAS does. Callers that take shapes from files or configs check
// them first and return errors.
package kernels
