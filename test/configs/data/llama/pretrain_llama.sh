#!/bin/bash
TP=1
GPT_ARGS=(
    --tensor-model-parallel-size $TP   # TP 1: fits without splitting
    --pipeline-model-parallel-size 1
    --micro-batch-size 4
    --global-batch-size 256
    --fp16
)
torchrun --nproc_per_node 8 pretrain_gpt.py "${GPT_ARGS[@]}"
