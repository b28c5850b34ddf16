#!/usr/bin/env bash
# Launches data-parallel training of the AlexNet example on one 8-GPU machine.
# Usage: ./examples/pytorch/launch.sh [extra train.py args]
set -euo pipefail

# Keep GPU 0..7 visible; the other jobs on this box use none of them.
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7

NGPUS=8   # processes per machine; WAP follows --nproc_per_node=$NGPUS to this line

torchrun --standalone \
  --nnodes=1 \
  --nproc_per_node=$NGPUS \
  examples/pytorch/train.py --batch-size 128 "$@"
