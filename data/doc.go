// Package data turns image data sets into batches for training and evaluating
// a Vision Transformer.
//
// It has four parts, each usable alone:
//
//   - Readers: MNIST and Fashion-MNIST (IDX files, gzip or raw), CIFAR-10
//     (binary batches), image folders (root/train/<class>/*.png|jpg|jpeg|gif)
//     and CSV files listing image files (path,label), one row each of the
//     table of data sets ([Datasets]: name, reader, default normalisation,
//     resident bytes, locator; adding a data set is a row and its reader).
//     [Open] returns a [Dataset] of uint8 CHW images with its class names.
//     MNIST is found through the Go module cache when no root is given,
//     Fashion-MNIST through Debian's dataset-fashion-mnist package.
//   - Transforms on float32 CHW images: bilinear resize with PyTorch's
//     F.interpolate semantics (plain or antialiased), random crop with
//     padding, horizontal flip, timm's RandAugment on uint8 images,
//     normalization and timm's pixel-mode random erasing.
//   - [Mixup]: timm's Mixup/CutMix with label smoothing, in batch, pair or
//     element mode, producing soft targets whose rows sum to 1.
//   - [Loader]: shuffles per epoch, decodes and augments in worker goroutines
//     with bounded prefetch, and is deterministic: every random draw is derived
//     by hashing (seed, epoch, position[, purpose]), never from a shared
//     generator, so the batch at (seed, epoch, step) is the same whatever the
//     worker count, and a resumed run can restart in the middle of an epoch.
//
// The package knows nothing about models; the training loop passes the image
// size, channel count and class count it needs.
//
// Config sections "data", "augment" and "mixup" are [Config],
// [AugmentConfig] and [MixupConfig].
package data
