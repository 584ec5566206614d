// Package classify answers "what is in these pictures?" with a trained
// checkpoint, from any number of goroutines at once.
//
// Load reads one of our model files (architecture, normalization and class
// names come from its metadata) and builds every evaluation graph it will
// ever run; Classify turns decoded images into top-k predictions;
// ClassifyFiles streams image files through the data package's parallel
// loader in batches, keeping their order.
//
// # Concurrency
//
// A Gorgonia graph can run one batch at a time, so a Classifier holds a pool
// of Options.PoolSize lanes. Each lane owns one graph per batch size 1, 2,
// 4, …, Options.MaxBatch (all sharing the model's weights and one activation
// arena of the lane's own, so a lane costs the memory of its largest graph).
// Callers put their images on one queue; a free lane takes the oldest image
// and every further image already waiting, up to MaxBatch, and runs them in
// parts that fill its graphs exactly, largest first (7 images as 4 + 2 + 1;
// padding them into the batch-8 graph would compute an image for nothing).
// A lone caller thus gets batch-1
// latency, and concurrent callers are batched together without any waiting
// timer. Graphs are built only in Load: building one while another lane
// runs is a data race in Gorgonia. The defaults are one lane and MaxBatch
// 8; the README has the measured latency and throughput of each shape.
//
// # Speed
//
// The lanes run Frozen graphs (layers.BuildOptions.Frozen, through
// evaluate.NewFrozenIn), built for serving weights that no longer
// change: every Linear weight is packed once, at Load, into the SGEMM
// micro-kernel's panels instead of being repacked on every product (once
// per goroutine when the rows are split over the cores); the bias, GELU and
// residual sums are applied to each block of a product while it is in
// cache; attention keeps no probabilities and splits one image's heads by
// query rows, so a batch of one image fills both cores. The price is a
// second copy of the Linear weights (22 MB for ViT-Ti/16, 88 MB for
// ViT-S/16) and no attention maps; the logits are those of the ordinary
// evaluation graph to float32 rounding (layers.TestFrozenFloat32,
// TestMatchesTimm). BenchmarkFrozenAB times the two graphs side by side.
//
// # Preprocessing
//
// Images are converted the way the model was trained and evaluated: to the
// checkpoint's channel count (gray by PIL's "L" luma, or RGB), resized to
// its image size with the training pipeline's evaluation resize, and
// normalized with the checkpoint's mean and std. Options.CropPct selects
// timm's evaluation crop instead (resize the short side to
// img_size/crop_pct, then a centre crop).
//
// Memory is bounded: a caller holds at most MaxBatch preprocessed images at
// a time (a longer request is split into MaxBatch-sized parts), and images
// over Options.MaxPixels are refused from their header before decoding.
package classify
