// Package memest estimates from a config alone (nothing is allocated) the
// memory that training or evaluating a ViT needs, by summing what each
// owner states of its own bytes: the model's parameters and activations
// (layers: ParamBytes, Config.Activations, Config.FrozenBytes), the data
// set's resident and decode bytes (data: ResidentBytes, DecodeBytes, from
// its row of data.Datasets) and the optimizer's state per parameter
// (optim.SlotsPerParam). It sits above those three and below their users
// (train, checkpoint, evaluate, classify); the estimate's type and the
// check against the machine (memory.Estimate, memory.Check, Format,
// Available) stay on the helper floor, internal/memory, which imports
// nothing of the domain.
package memest
