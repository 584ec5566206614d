#!/usr/bin/env bash
# Records a finished training run under experiments/<name>/: its resolved
# config, metrics.csv, curves.png, and a README with the per-epoch summary.
#   bash experiments/record.sh runs/mnist_vit_tiny mnist_vit_tiny "go run ./cmd/train -config configs/mnist_vit_tiny.yaml"
set -euo pipefail
run=$1 name=$2 cmd=$3
out=experiments/$name
mkdir -p "$out"
cp "$run/config.yaml" "$run/metrics.csv" "$run/curves.png" "$out/"
{
  echo "# Run record: $name"
  echo
  echo "Command: \`$cmd\` (config as resolved: [config.yaml](config.yaml); every epoch: [metrics.csv](metrics.csv))."
  echo
  awk -F, 'NR>1 {last=$0; if ($6>best) {best=$6; be=$1}} END {split(last,a,","); printf "Final test top-1 **%.2f%%** (top-5 %.2f%%, loss %.4f) after %d epochs, %d steps, %.0f s wall time (%.1f min); best %.2f%% at epoch %d.\n", a[6]*100, a[7]*100, a[5], a[1], a[2], a[10], a[10]/60, best*100, be}' "$run/metrics.csv"
  echo
  echo "Measured on the 2-core project machine while other jobs shared it (img/s is per epoch, wall clock)."
  echo
  echo "| epoch | step | lr | train loss | val loss | val top-1 | val top-5 | grad norm | img/s | elapsed s |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  awk -F, 'NR>1 {printf "| %d | %d | %.2e | %.4f | %.4f | %.2f%% | %.2f%% | %.3f | %.0f | %.0f |\n", $1, $2, $3, $4, $5, $6*100, $7*100, $8, $9, $10}' "$run/metrics.csv"
  echo
  echo "![loss, accuracy and learning rate](curves.png)"
} > "$out/README.md"
echo "wrote $out"
