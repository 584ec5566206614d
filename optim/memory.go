package optim

// SlotsPerParam is the number of float32 values of state the optimizer
// named opt keeps per trained parameter, and whether the name is known:
// "adamw" (and "", the default) 2, its moments m and v. The memory
// estimate (package memest) reads it: the optimizer state is 4 ×
// SlotsPerParam bytes per trained parameter, and as much again while a
// checkpoint copies it out.
func SlotsPerParam(opt string) (int, bool) {
	switch opt {
	case "", "adamw":
		return 2, true
	}
	return 0, false
}
