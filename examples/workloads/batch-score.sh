#!/bin/sh
# The batch-scoring workload of batch-score.mjs for images without Node (the demo's busybox
# image under `idlegrid demo --runner docker`): scores every row of inputs/<data>.csv with the
# logistic model in inputs/<model>.json, each row's features first mixed through a fifth of
# the model's `rounds` of an integer hash (real, deterministic CPU work; awk is slower than
# Node), and writes outputs/scores.csv and outputs/summary.json. On SIGTERM (preemption) it saves outputs/checkpoint.txt and the scores
# so far (outputs/scores.part); a later run given them under inputs/checkpoint/ resumes there.
# Needs only sh, awk, sed, tr, wc and paste. Usage: sh batch-score.sh DATA.csv [MODEL.json]
in=${IDLEGRID_INPUT_DIR:-inputs}
out=${IDLEGRID_OUTPUT_DIR:-outputs}
data=$in/${1:-data.csv}
model=$in/${2:-model.json}
mkdir -p "$out"

flat=$(tr -d ' \n' < "$model")
field () { echo "$flat" | sed -n "s/.*\"$1\":\([-0-9.]*\).*/\1/p"; }
weights=$(echo "$flat" | sed -n 's/.*"weights":\[\([^]]*\)\].*/\1/p')
total=$(( $(wc -l < "$data") - 1 ))

start=0
if [ -f "$in/checkpoint/checkpoint.txt" ]; then
  start=$(cat "$in/checkpoint/checkpoint.txt")
  cp "$in/checkpoint/scores.part" "$out/scores.part"
  echo "resuming from checkpoint at row $start/$total"
else
  : > "$out/scores.part"
fi

stopping=0
trap 'stopping=1' TERM
step=$(( total / 10 ))
[ "$step" -ge 1 ] || step=1
i=$start
while [ "$i" -lt "$total" ]; do
  if [ "$stopping" = 1 ]; then
    echo "$i" > "$out/checkpoint.txt"
    echo "preempted: checkpoint saved at row $i/$total"
    exit 143
  fi
  end=$(( i + step - i % step ))
  [ "$end" -le "$total" ] || end=$total
  # the step runs in the background: a trapped SIGTERM ends `wait` at once (a foreground awk
  # would finish its step first, which can outlast the notice); the unfinished step is dropped
  # and the checkpoint is where it began
  awk -F, -v from="$i" -v to="$end" -v w="$weights" -v b="$(field bias)" -v hw="$(field hashWeight)" -v rounds="$(( $(field rounds) / 5 ))" '
    NR == 1 { split(w, W, ","); next }
    NR - 2 >= from && NR - 2 < to {
      h = 0
      for (r = 0; r < rounds; r++) for (k = 2; k <= NF; k++) h = (h * 48271 + int($k * 1000) + r) % 2147483647
      z = b + hw * ((h % 256) / 255 - 0.5)
      for (k = 2; k <= NF; k++) z += $k * W[k - 1]
      printf "%.6f\n", 1 / (1 + ex(-z))
    }
    # e^x without a math library (busybox awk may have none): a short series on x/16, squared 4 times
    function ex (x,   y, t, s, n) { y = x / 16; t = 1; s = 1; for (n = 1; n <= 10; n++) { t *= y / n; s += t }; return s * s * s * s * s * s * s * s * s * s * s * s * s * s * s * s }' "$data" > "$out/scores.step" &
  scoring=$!
  wait "$scoring"
  status=$?
  if [ "$stopping" = 1 ]; then
    kill "$scoring" 2>/dev/null
    wait "$scoring" 2>/dev/null
    rm -f "$out/scores.step"
    continue
  fi
  [ "$status" = 0 ] || exit "$status"
  cat "$out/scores.step" >> "$out/scores.part"
  rm -f "$out/scores.step"
  i=$end
  echo "scored $i/$total rows"
done

sed 1d "$data" | cut -d, -f1 | paste -d, - "$out/scores.part" | { echo id,score; cat; } > "$out/scores.csv"
sed 1d "$out/scores.csv" | awk -F, -v t="$(field threshold)" -v start="$start" '
  { n++; sum += $2; if ($2 >= t) ok++ }
  END { printf "{\n  \"rows\": %d,\n  \"approved\": %d,\n  \"meanScore\": %.6f,\n  \"resumedAt\": %d\n}\n", n, ok, sum / n, start }' > "$out/summary.json"
rm -f "$out/scores.part"
echo "done: $total rows, $(sed -n 's/.*"approved": \([0-9]*\).*/\1/p' "$out/summary.json") approved"
