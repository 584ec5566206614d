// Package train trains a Vision Transformer: [Step], one training step
// (forward, backward, reduce, clip, AdamW, EMA), and [Run], the loop around
// it, with their config ([Config], one YAML file with a section per
// concern, parsed strictly by [LoadConfig] and [ParseConfig]).
//
// Run reads as nanoGPT's loop, its numbered steps in one function:
//
//  1. prepare: data, model (fresh, or fine-tuned from finetune.init_from),
//     the step and the evaluator, resumed from out_dir's state file or
//     started afresh;
//  2. for each epoch, for each batch: the learning rate of the step
//     ([Step.LR]), [Step.Backward] and [Step.UpdateAt];
//  3. after each step: log, checkpoint every checkpoint.every_steps, and on
//     a cancelled context checkpoint and stop ([ErrInterrupted]);
//  4. at the end of each epoch: evaluate (package evaluate), append to
//     metrics.csv, save the checkpoints, draw curves.png (package report).
//
// Where the run is lives in one place, [Counters], which the state file
// ([State], last.train.safetensors) saves with the optimizer moments, the
// EMA and the weights, so a resumed run continues bit for bit; model files
// are package checkpoint's. With [Options].Comm the run is one rank of a
// data-parallel job.
//
// Refusals are typed ([OutDirUsedError], [OutDirLockedError],
// [ResumeConfigError], [NoRunError], [ErrResumeOverwrite],
// [ErrRunComplete], [ConfigError] naming the key); they name config keys
// and files, and the commands add their flags.
package train
