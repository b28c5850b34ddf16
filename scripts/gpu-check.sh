#!/usr/bin/env bash
# GPU check for the torch profiler backend, for a machine with an NVIDIA GPU and
# PyTorch but no npm build and no tfjs-node-gpu. Times every layer of the example
# models (specs exported by scripts/export-layer-specs.ts into bench/gpu-specs/)
# with the torch worker directly, then one whole training step per model, and
# prints per-layer times, per-model sums and the fidelity ratio Σ layers ÷ step.
# Usage: bash scripts/gpu-check.sh [spec.json …]   (finishes in well under 4 minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader,nounits || echo "nvidia-smi not found"
nvidia-smi topo -m 2>/dev/null || true
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "gpus", [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())])'
specs=("$@")
if [ ${#specs[@]} -eq 0 ]; then specs=(bench/gpu-specs/*.json); fi
# A hard ceiling keeps the check inside its budget even on a slow first CUDA start.
timeout 220 python3 src/profiler/torch/torch_worker.py --specs "${specs[@]}"
# The JSON-lines protocol the profiler speaks, end to end: init, one trial, copy calibration.
python3 - <<'PY'
import json, subprocess, sys
p = subprocess.Popen([sys.executable, "src/profiler/torch/torch_worker.py"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
spec = json.load(open("bench/gpu-specs/tfjs-cnn.json"))["specs"][0]
for m in [{"type": "init", "backend": "torch"},
          {"type": "trial", "id": 1, "spec": spec, "batch": 64, "warmup": 2, "repetitions": 5},
          {"type": "copy", "id": 2, "sizesBytes": [4096, 1 << 20, 16 << 20, 64 << 20], "repetitions": 5}]:
    p.stdin.write(json.dumps(m) + "\n"); p.stdin.flush()
    print("protocol:", p.stdout.readline().strip()[:300])
p.stdin.write(json.dumps({"type": "exit"}) + "\n"); p.stdin.flush(); p.wait(timeout=30)
PY
