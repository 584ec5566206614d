// Package report writes what people read of a run and of an evaluation:
// the run's records (metrics.csv per epoch, steps.csv per logged step), its
// curves (curves.png), the terminal progress bar, the -dry-run summary, and
// an evaluation's reports (predictions CSV, results JSON, confusion PNG and
// the console table). Figures are drawn with gonum/plot and written
// atomically; SavePanels is the one row-of-panels tiling the trainer and
// the experiments share.
package report
