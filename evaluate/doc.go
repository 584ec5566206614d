// Package evaluate scores a model: an Evaluator runs the model's forward
// graph in eval mode for a fixed batch (a short last batch zero-padded) and
// counts top-1, top-5, the mean cross entropy, per-class accuracy and the
// confusion matrix over every image a loader yields; sharded over ranks
// (Evaluator.Comm) it gives every rank the one-process result exactly.
// Checkpoint loads a model file (package checkpoint) and evaluates it on a
// data set's validation split (in bf16 on a Frozen graph, NewFrozenIn);
// CheckpointReported does that and hands each batch and the result to a
// Reports (package report writes the files): the job cmd/eval runs. Serving (package classify) builds its lanes from
// NewFrozenIn.
//
// The trainer evaluates through this package; this package never imports
// the trainer.
package evaluate
