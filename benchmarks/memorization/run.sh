#!/usr/bin/env bash
# Memorization with and without the Goldfish loss (Hans et al. 2024), at the scale 2 cores allow.
#
# Data: the GPL-3 text that every Debian system ships (/usr/share/common-licenses/GPL-3, in
# base-files), whitespace squeezed, cut into 65-byte documents: the first 32 are the training set,
# the next 32 the held-out validation set. Model: a byte-level GPT (vocabulary 256), 2 blocks,
# hidden 128, 4 heads, 64-token window: 438 k parameters. Training: the 32 documents are the whole
# batch, so every step is one epoch; 600 epochs, AdamW lr 5e-3, 2 ranks (layout 2x1x1x1), once
# with the standard loss and once with the Goldfish loss (k = 4, h = 13: the paper's setting).
# Every 25 epochs: prompt with each training document's first 32 tokens, generate 32 greedily,
# count exact matches and correct tokens; mean loss on the training and validation documents.
# Then the mask's cost: the same 1-rank step timed with and without it (synthetic tokens).
#
# Usage: benchmarks/memorization/run.sh [OUT_DIR]   (default results/memorization; ~4 min)
# Writes OUT_DIR/memorization.csv (every evaluation of both runs), memorization-summary.csv (the
# last evaluation, step time), mask-cost.csv, memorization.png and memorization.svg.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-results/memorization}
engine=build/engine/weakscale-engine
text=/usr/share/common-licenses/GPL-3
[ -x "$engine" ] || { echo "memorization: $engine is missing: run scripts/build.sh first" >&2; exit 1; }
[ -r "$text" ] || { echo "memorization: $text is missing (Debian's base-files package ships it)" >&2; exit 1; }
export OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

docs=32
seq=64
bytes=$((docs * (seq + 1)))
tr -s ' \n' ' ' <"$text" >"$work/text.txt"
head -c "$bytes" "$work/text.txt" >"$work/train.txt"
tail -c +$((bytes + 1)) "$work/text.txt" | head -c "$bytes" >"$work/validation.txt"

model=(--layers 2 --hidden 128 --heads 4 --seq "$seq" --vocab 256 --seed 1)
train=(--layout 2x1x1x1 --batch "$docs" --lr 5e-3 --steps 600 --data "$work/train.txt" --data-order chunks
  --eval-every 25 --eval-sequences "$docs" --eval-prefix 32 --eval-length 32 --validation-data "$work/validation.txt")
rm -f "$out/memorization.csv"
echo "goldfish_k,epochs,exact_match_rate,token_accuracy,train_loss,validation_loss,best_validation_loss,best_validation_epoch,step_s" >"$work/summary.csv"
for k in 0 4; do
  mpiexec -n 2 --oversubscribe "$engine" "${model[@]}" "${train[@]}" --goldfish-k "$k" --goldfish-context 13 \
    --eval-memorization "$work/k$k.csv" >"$work/k$k.jsonl"
  step_s=$(grep '"event":"summary"' "$work/k$k.jsonl" | grep -o '"step_s":[0-9.e-]*' | cut -d: -f2)
  # step = epoch (the batch is the whole training set); columns of --eval-memorization's CSV.
  # The validation loss rises once the 32 documents are learnt by heart: its minimum and where.
  awk -F, -v s="$step_s" 'NR > 1 { if (best == "" || $13 < best) { best = $13; at = $4 }; last = $0 }
    END { split(last, f, ","); printf "%s,%s,%s,%s,%s,%s,%s,%s,%.4f\n", f[2], f[4], f[10], f[11], f[12], f[13], best, at, s }' \
    "$work/k$k.csv" >>"$work/summary.csv"
  if [ ! -f "$out/memorization.csv" ]; then cp "$work/k$k.csv" "$out/memorization.csv"; else tail -n +2 "$work/k$k.csv" >>"$out/memorization.csv"; fi
done
cp "$work/summary.csv" "$out/memorization-summary.csv"

# The mask's cost per step: hashing h tokens per target, the masked loss, one pass scaling the
# gradients. Alternated runs, 1 rank, 20 steps each (the last 18 averaged).
cost=(--layers 4 --hidden 256 --heads 8 --seq 256 --vocab 256 --batch 8 --steps 20 --layout 1x1x1x1)
echo "goldfish_k,repeat,step_s" >"$work/cost.csv"
for repeat in 1 2 3; do
  for k in 0 4; do
    s=$(mpiexec -n 1 "$engine" "${cost[@]}" --goldfish-k "$k" | grep '"event":"summary"' | grep -o '"step_s":[0-9.e-]*' | cut -d: -f2)
    echo "$k,$repeat,$s" >>"$work/cost.csv"
  done
done
cp "$work/cost.csv" "$out/mask-cost.csv"

for format in png svg; do
  if [ "$format" = png ]; then
    terminal='set terminal pngcairo size 1600,650 noenhanced font "Sans,13" linewidth 2'
  else
    terminal='set terminal svg size 1280,520 noenhanced font "Sans,12" linewidth 1.5 background "white"'
  fi
  gnuplot <<GP
$terminal
set output "$out/memorization.$format"
set datafile separator ","
set multiplot layout 1,2 title "Memorization of 32 GPL-3 documents (65 bytes) by a 438k-parameter byte GPT, standard vs Goldfish loss (k = 4, h = 13)"
set xlabel "epochs"
set key top left
set grid
set yrange [0:1]
set ylabel "share of the 32 documents / tokens"
set title "greedy continuation of the 32-token prompt (32 tokens)"
plot "$out/memorization.csv" using (\$2 == 0 ? \$4 : NaN):10 skip 1 with linespoints pt 7 lc rgb "#c0392b" title "exact match, standard loss", \
     "$out/memorization.csv" using (\$2 == 4 ? \$4 : NaN):10 skip 1 with linespoints pt 7 lc rgb "#2471a3" title "exact match, Goldfish", \
     "$out/memorization.csv" using (\$2 == 0 ? \$4 : NaN):11 skip 1 with lines dt 2 lc rgb "#c0392b" title "token accuracy, standard loss", \
     "$out/memorization.csv" using (\$2 == 4 ? \$4 : NaN):11 skip 1 with lines dt 2 lc rgb "#2471a3" title "token accuracy, Goldfish"
set yrange [0:*]
set ylabel "mean cross-entropy per byte (nats), no mask"
set title "loss on the training and the held-out documents"
set key center right
plot "$out/memorization.csv" using (\$2 == 0 ? \$4 : NaN):12 skip 1 with lines lc rgb "#c0392b" title "training, standard loss", \
     "$out/memorization.csv" using (\$2 == 4 ? \$4 : NaN):12 skip 1 with lines lc rgb "#2471a3" title "training, Goldfish", \
     "$out/memorization.csv" using (\$2 == 0 ? \$4 : NaN):13 skip 1 with lines dt 2 lc rgb "#c0392b" title "validation, standard loss", \
     "$out/memorization.csv" using (\$2 == 4 ? \$4 : NaN):13 skip 1 with lines dt 2 lc rgb "#2471a3" title "validation, Goldfish"
unset multiplot
GP
done
column -s, -t "$out/memorization-summary.csv"
awk -F, 'NR > 1 { sum[$1] += $3; n[$1]++ } END { printf "mask cost: step %.4f s without, %.4f s with Goldfish (k = 4): %+.1f %%\n", sum[0] / n[0], sum[4] / n[4], 100 * (sum[4] / n[4] / (sum[0] / n[0]) - 1) }' "$out/mask-cost.csv"
