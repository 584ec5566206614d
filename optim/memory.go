package optim

// SlotsPerParam is the number of float32 values of state the optimizer
// named opt keeps per trained parameter, from its row of the optimizer
// table, and whether the name is known ("" is adamw): AdamW's and Lamb's
// two moments, SGD's momentum buffer. The memory estimate (package memest)
// reads it: the optimizer state is 4 × SlotsPerParam bytes per trained
// parameter, and as much again while a checkpoint copies it out.
func SlotsPerParam(opt string) (int, bool) {
	if opt == "" {
		opt = string(OptAdamW)
	}
	for _, row := range optimizers() {
		if string(row.name) == opt {
			return row.slots, true
		}
	}
	return 0, false
}
