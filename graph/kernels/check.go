package kernels

import "fmt"

// checkLens panics unless every length in lens equals want; names holds
// their comma-separated names for the message.
func checkLens(fn string, want int, names string, lens ...int) {
	for i, l := range lens {
		if l != want {
			panic(fmt.Sprintf("kernels.%s: len(%s) = %d, want %d", fn, field(names, i), l, want))
		}
	}
}

// field returns the i-th comma-separated name in names.
func field(names string, i int) string {
	start := 0
	for j := 0; j <= len(names); j++ {
		if j == len(names) || names[j] == ',' {
			if i == 0 {
				return names[start:j]
			}
			i--
			start = j + 1
		}
	}
	return "?"
}

func checkRowsCols(fn string, rows, cols int) {
	if rows < 0 || cols < 0 {
		panic(fmt.Sprintf("kernels.%s: negative shape rows=%d cols=%d", fn, rows, cols))
	}
}
