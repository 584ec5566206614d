// The int8 tile's arithmetic, shared by the panel kernel (int8_amd64.s) and
// its peak loop (peak_amd64.s), so that the peak times the very sequence
// the kernel runs.

// INT8SIGNED adds one row's group of 4 depths times the panel's group (Y8,
// Y9: columns 0–7 and 8–15) to the row's sums (lo, hi): Y11 holds the
// row's 4 bytes a − 128 as signed bytes, broadcast, Y14 their magnitudes
// (at most 128); VPSIGNB gives the weights a − 128's sign, so VPMADDUBSW's
// int16 pair sums stay within 2·128·127 and never saturate; VPMADDWD by
// Y10 (int16 ones) adds the pairs in int32, VPADDD accumulates. It
// clobbers Y12 and Y13.
#define INT8SIGNED(lo, hi) \
	VPSIGNB    Y11, Y8, Y12 \
	VPSIGNB    Y11, Y9, Y13 \
	VPMADDUBSW Y12, Y14, Y12 \
	VPMADDUBSW Y13, Y14, Y13 \
	VPMADDWD   Y10, Y12, Y12 \
	VPMADDWD   Y10, Y13, Y13 \
	VPADDD     Y12, lo, lo \
	VPADDD     Y13, hi, hi
