#!/bin/bash
# Session 28's chain runner (#25 item 2), run from the repository root while stage 1 runs:
#   python scripts/train.py --config configs/search_pool_chain.yaml --out runs/search_pool_chain &
#   bash docs/results/expert/s28/chain.sh > runs/s28/chain.log 2>&1
# It waits for stage 1 (configs/search_pool_chain.yaml) to end, starts stage 2 (configs/search_pool_chain_1000.yaml)
# and stops it at the last update inside 3 CPU-hours from a fresh network: after each update's checkpoint (kept as
# runs/s28/b_update_N.pt) it stops the run when the run's cpu_seconds plus the dearest of its last three updates
# would pass BUDGET minus stage 1's cpu_seconds.  BUDGET is 10,800 CPU-s less base-2p-160's 1,004.
# The script that ran, with its stage-2 log moved from a scratch folder to runs/s28/train_b.log.
BUDGET=9796   # 10,800 - base-2p-160's 1,004
while pgrep -f "configs/search_pool_chain.yaml" > /dev/null; do sleep 10; done
NA=$(($(wc -l < runs/search_pool_chain/progress.csv) - 1))
ACPU=$(tail -1 runs/search_pool_chain/progress.csv | python -c "import sys,csv; r=list(csv.reader(sys.stdin))[0]; print(r[23])")
echo "stage A: $NA updates, cpu $ACPU"; date -u
if [ "$NA" != "70" ]; then echo "stage A incomplete"; exit 1; fi
mkdir -p runs/s28; cp runs/search_pool_chain/checkpoint.pt runs/s28/a_update_70.pt
BB=$(python -c "print(int($BUDGET - $ACPU))"); echo "stage B budget $BB"
setsid python scripts/train.py --config configs/search_pool_chain_1000.yaml --out runs/search_pool_chain_1000 > runs/s28/train_b.log 2>&1 &
PID=$!
P=runs/search_pool_chain_1000/progress.csv
seen=0; lastm=0
while kill -0 $PID 2>/dev/null; do
  sleep 5
  [ -f $P ] || continue
  n=$(($(wc -l < $P) - 1))
  if [ $n -gt $seen ]; then
    # wait for this update's checkpoint
    for i in $(seq 1 60); do m=$(stat -c %Y runs/search_pool_chain_1000/checkpoint.pt 2>/dev/null || echo 0); [ "$m" != "$lastm" ] && [ "$m" != 0 ] && break; sleep 2; done
    lastm=$m; seen=$n
    cp runs/search_pool_chain_1000/checkpoint.pt runs/s28/b_update_$n.pt
    dec=$(python - <<PY
import csv
rows=list(csv.DictReader(open("$P")))
c=[float(r["cpu_seconds"]) for r in rows]
d=[b-a for a,b in zip([0]+c[:-1],c)][-3:]
est=max(d)
print("stop" if c[-1]+est > $BB else "go", round(c[-1]), round(est))
PY
)
    echo "update $n: $dec"; date -u
    case "$dec" in stop*) kill -TERM -- -$PID; sleep 5; kill -KILL -- -$PID 2>/dev/null; echo "stopped at $n"; break;; esac
  fi
done
echo done; date -u
