// Package safetensors reads and writes the Hugging Face safetensors format,
// the file layout PyTorch and timm load with safetensors.torch.load_file.
//
// A file is an 8-byte little-endian header length N, N bytes of JSON header,
// then the raw little-endian data section:
//
//	{"__metadata__": {"step": "100"},
//	 "blocks.0.attn.qkv.weight": {"dtype": "F32", "shape": [192, 64], "data_offsets": [0, 49152]},
//	 ...}
//
// data_offsets are relative to the start of the data section. The header may
// be padded with trailing spaces; Encode pads it to a multiple of 8 bytes, as
// the reference library does, so the data section starts aligned.
//
// Loading is safe against hostile or corrupt files: the header length, the
// JSON syntax (duplicate keys included), every dtype, shape and offset pair
// are validated before any tensor memory is allocated, the tensors must tile
// the data section exactly, and every violation is an error naming the file
// and the tensor. Write is atomic: it writes a temporary file beside the
// target, fsyncs it and renames it over the target, so a failed write never
// destroys the previous checkpoint.
package safetensors
