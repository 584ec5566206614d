// Package bufpool lends the large scratch buffers of the kernels and the
// graph's ops: packed operands, a chunk of a product's rows, words of an
// activation.
//
// A Pool keeps buffers by size class: a request of n elements takes a
// buffer of ClassSize(n), n rounded up to an eighth of the power of two
// below it, so a small request never takes, and keeps alive, a large
// buffer, a large one never grows a small one into garbage, and rounding
// wastes at most 1/8. Each class is a row of Keep slots, each taken and
// freed by one atomic compare-and-swap, so no goroutine waits for another
// (the products of attention's heads, thousands per step on every core,
// take and give back their buffers at once). Unlike a
// sync.Pool, a buffer put back by one goroutine is found by a Get on any
// core (a sync.Pool's per-P slot hides it and the Get allocates another),
// and a garbage collection does not empty the pool: a training step runs
// the same products every step, so the same buffers serve them all.
package bufpool
