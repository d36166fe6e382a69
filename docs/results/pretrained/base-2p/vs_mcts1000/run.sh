#!/bin/bash
# base-2p against mcts:1000 in chunks of 4 deals (8 paired games: each deal with both seatings), a new
# chunk while less than 17 minutes have passed; then: python scripts/evaluate.py --merge runs/mcts1000/chunk*/report.json
cd "$(dirname "$0")/../../../../.."
mkdir -p runs/mcts1000
start=$(date +%s)
k=0
echo "start $(date -u) $(uptime)" > runs/mcts1000/log.txt
while [ $(( $(date +%s) - start )) -lt 1020 ]; do
  seed=$((3000 + 4*k))
  PYTHONPATH=$PWD nice -n 5 python scripts/evaluate.py pretrained:base-2p --opponents mcts:1000 --games 8 --workers 2 --seed $seed --no-progress --out runs/mcts1000/chunk$k >> runs/mcts1000/log.txt 2>&1
  echo "chunk $k seed $seed done $(date -u) $(uptime)" >> runs/mcts1000/log.txt
  k=$((k+1))
done
echo "end $(date -u) elapsed $(( $(date +%s) - start ))" >> runs/mcts1000/log.txt
