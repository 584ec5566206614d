package optim

import (
	"fmt"
	"sort"
)

// bank holds one float32 buffer per parameter name (an AdamW moment, the EMA's
// weights) and checks, without allocating, that a parameter list names exactly
// its buffers.
type bank struct {
	gen   uint64 // bumped by every match; a slot seen twice in one match is a duplicate name
	slots map[string]*slot
}

type slot struct {
	data []float32
	seen uint64
}

// newBank returns a bank with one buffer per parameter, a copy of its Value
// when copyValues is set and zeros otherwise. Names must be distinct.
func newBank(params []Param, copyValues bool) (*bank, error) {
	b := &bank{slots: make(map[string]*slot, len(params))}
	for _, p := range params {
		if _, dup := b.slots[p.Name]; dup {
			return nil, fmt.Errorf("parameter %q appears twice", p.Name)
		}
		s := &slot{data: make([]float32, len(p.Value))}
		if copyValues {
			copy(s.data, p.Value)
		}
		b.slots[p.Name] = s
	}
	return b, nil
}

// bankFrom copies a name → buffer map into a bank.
func bankFrom(bufs map[string][]float32) *bank {
	b := &bank{slots: make(map[string]*slot, len(bufs))}
	for name, d := range bufs {
		b.slots[name] = &slot{data: append([]float32(nil), d...)}
	}
	return b
}

// export returns a copy of every buffer, keyed by name.
func (b *bank) export() map[string][]float32 {
	out := make(map[string][]float32, len(b.slots))
	for name, s := range b.slots {
		out[name] = append([]float32(nil), s.data...)
	}
	return out
}

// match checks that params carry distinct names, that each has a buffer of its
// length, and that the bank holds no other name. what names the bank in errors.
func (b *bank) match(params []Param, what string) error {
	b.gen++
	for _, p := range params {
		s, ok := b.slots[p.Name]
		if !ok {
			return fmt.Errorf("parameter %q has no %s (the %s holds %d other names)", p.Name, what, what, len(b.slots))
		}
		if s.seen == b.gen {
			return fmt.Errorf("parameter %q appears twice", p.Name)
		}
		s.seen = b.gen
		if len(s.data) != len(p.Value) {
			return fmt.Errorf("parameter %q has %d values, its %s has %d", p.Name, len(p.Value), what, len(s.data))
		}
	}
	if len(params) != len(b.slots) {
		var extra []string
		for name, s := range b.slots {
			if s.seen != b.gen {
				extra = append(extra, name)
			}
		}
		sort.Strings(extra)
		return fmt.Errorf("the %s holds %d names missing from the %d parameters, first %q", what, len(extra), len(params), extra[0])
	}
	return nil
}

// checkSameNames reports the first difference between the key sets and buffer
// lengths of two name → buffer maps, a and b being their names in errors.
func checkSameNames(a, b map[string][]float32, aName, bName string) error {
	for _, name := range sortedKeys(a) {
		bv, ok := b[name]
		if !ok {
			return fmt.Errorf("%s has %q, %s does not", aName, name, bName)
		}
		if len(bv) != len(a[name]) {
			return fmt.Errorf("%q: %s has %d values, %s has %d", name, aName, len(a[name]), bName, len(bv))
		}
	}
	for _, name := range sortedKeys(b) {
		if _, ok := a[name]; !ok {
			return fmt.Errorf("%s has %q, %s does not", bName, name, aName)
		}
	}
	return nil
}

func sortedKeys(m map[string][]float32) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
