// Package checkpoint reads and writes model files: safetensors files
// (package safetensors) whose tensors carry timm's parameter names
// (blocks.3.attn.qkv.weight) and whose metadata carries the architecture
// (the model section's keys), the data normalization, the class names and
// where in training the weights come from (ModelMeta).
//
// SaveModel writes one atomically; ReadModel opens one and validates its
// metadata before anything is allocated from it; LoadWeights copies a
// file's tensors into a model by name, converting dtypes and resampling
// pos_embed to another patch grid; LoadModel builds a model for inference
// from one of our files alone. A plain timm state_dict saved as
// safetensors (no metadata of ours) loads through LoadWeights into a model
// built from a config. LoadEMA swaps in the EMA weights of a training-state
// file written beside a model file.
//
// Serving (package classify) needs this package and not the trainer.
package checkpoint
