#!/bin/bash
# On a lent GPU machine (docs/real-gpu-check.md), carrying .devcarry as check.sh does: PLATES
# pipelines through one PyTorch model (torchvision's ResNet-50, random weights: nothing to
# download; one batch of 16 at 224² per task), three ways, one GPU slot each so that only
# loading differs:
#   - warm: one worker loads the model once and answers every task (keep_warm);
#   - cold: the same worker, stopped after each task (keep_warm: false);
#   - plain: a step that imports torch, loads the model and runs the batch itself.
# Then what the warm run's events say (one load, reuses, the worker's peak VRAM), and nvidia-smi
# and `gpuplan locks` read while the warm worker holds the GPU. Everything lands in $OUT.
set -u
exec > >(tee "$OUT/warm.txt") 2>&1
source "$(dirname "$0")/unpack.sh"
PLATES=${PLATES:-8}
mkdir -p /tmp/gpuplan-warm && cd /tmp/gpuplan-warm && rm -rf .gpuplan
cat >model.py <<'EOF'
import time
t0 = time.time()
import torch, torchvision
model = torchvision.models.resnet50().cuda().eval()
batch = torch.randn(16, 3, 224, 224, device="cuda")
def infer():
    with torch.no_grad():
        return int(model(batch).argmax(1).sum().item())
infer()  # the first batch picks cuDNN's kernels: part of loading
loaded_s = time.time() - t0
EOF
cat >worker.py <<'EOF'
import json, os, sys
from model import infer, loaded_s
print(f"loaded in {loaded_s:.2f}s, CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')}", flush=True)
def reply(m):
    sys.stdout.write(json.dumps(m) + "\n")
    sys.stdout.flush()
reply({"ready": True})
for line in sys.stdin:
    task = json.loads(line)
    reply({"id": task["id"], "ok": True, "result": {"sum": infer()}})
EOF
cat >step.py <<'EOF'
from model import infer, loaded_s
print(f"loaded in {loaded_s:.2f}s, sum {infer()}")
EOF
plates=$(seq -s ', ' -f 'P%02g' 1 "$PLATES")
pipeline() { # $1: the step's own lines
  printf 'version: 1\nname: warm-check\nregistry: { max_pipelines_per_gpu: 1 }\npipelines:\n  - name: plate-{plate}\n    matrix: { plate: [%s] }\n    steps:\n%s\n' "$plates" "$1"
}
worker='      - id: infer
        memory: torch
        vram: 6GiB
        worker: { run: [python3, worker.py], key: resnet50, ready_timeout: 5m }'
pipeline "$worker
        keep_warm: { ttl: 5m }" >warm.yaml
pipeline "$worker
        keep_warm: false" >cold.yaml
pipeline '      - { id: infer, memory: torch, vram: 6GiB, run: [python3, step.py] }' >plain.yaml
run() { $G run "$1.yaml" --ui plain; }
echo "== $PLATES pipelines, one GPU slot, wall ms"
run warm >run-warm.txt 2>&1 &
R=$!
# While the worker loads its model (seconds): who nvidia-smi lists, and what the lock says.
for i in $(seq 1 40); do grep -q "loading worker" run-warm.txt 2>/dev/null && break; sleep 0.25; done
sleep 3
echo "-- during the warm run, while the worker loads"
nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader
$G locks --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const l=JSON.parse(s);for(const g of l.gpus)console.log("gpu",g.gpu,"slots held",g.slots.length,"reserved",g.reservedBytes,"others",g.otherProcessesBytes);for(const w of l.workers)console.log("worker",w.key,"on",w.gpu,"pid",w.pid,"busy",w.busy)})'
wait $R; echo "(that warm run: exit $?)"
for v in warm cold plain; do
  rm -rf .gpuplan/runs/*
  s=$(date +%s%N); run $v >"run-$v.txt" 2>&1; echo "$v: exit $?, $((($(date +%s%N) - s) / 1000000)) ms"
  ev=$(ls -d .gpuplan/runs/*/)events.jsonl
  echo "   events: $(grep -c '"gpu.model.load_start"' "$ev") load_start, $(grep -c '"gpu.model.cache_reuse"' "$ev") cache_reuse, $(grep -c '"gpu.model.cache_evict"' "$ev") cache_evict"
  echo "   peakVramBytes of each step: $(grep '"gpu.step.end"' "$ev" | grep -o '"peakVramBytes":[0-9]*' | cut -d: -f2 | tr '\n' ' ') ($(grep -c '"gpu.step.end"' "$ev") steps)"
  grep -h "loaded in" "run-$v.txt" | head -2
  tail -2 "run-$v.txt" | head -1
done
