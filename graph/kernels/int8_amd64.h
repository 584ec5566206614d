// The int8 tile's arithmetic, shared by the panel kernel (int8_amd64.s) and
// its peak loop (peak_amd64.s), so that the peak times the very sequence
// the kernel runs.

// INT8PAIRS adds one row's group of 4 depths times the panel's group (Y8,
// Y9: columns 0–7 and 8–15, signed weights within ±64) to the row's sums
// (lo, hi): a holds the row's 4 quantized bytes (0…255), broadcast;
// VPMADDUBSW multiplies them with the weights and adds pairs in int16 (at
// most 2·255·64 = 32,640: never saturating), VPMADDWD by Y10 (int16 ones)
// adds the pairs in int32, VPADDD accumulates. It clobbers Y12 and Y13.
#define INT8PAIRS(a, lo, hi) \
	VPMADDUBSW Y8, a, Y12 \
	VPMADDUBSW Y9, a, Y13 \
	VPMADDWD   Y10, Y12, Y12 \
	VPMADDWD   Y10, Y13, Y13 \
	VPADDD     Y12, lo, lo \
	VPADDD     Y13, hi, hi
