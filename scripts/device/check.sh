#!/bin/bash
# On a lent GPU machine (docs/real-gpu-check.md): detection, start-up against `node -e 0`,
# a compile against the live GPU and a real run of PyTorch steps under the slot lock — two that
# hold 6 and 10 GiB, one whose 400 GiB allocation fails — with nvidia-smi's per-process figures
# sampled beside gpuplan's own peakVramBytes, then the run's report. Everything lands in $OUT.
set -u
exec > >(tee "$OUT/log.txt") 2>&1
source "$(dirname "$0")/unpack.sh"
echo "== machine"; nvidia-smi -L; node -p '`node ${process.version}`'; uname -r; nproc
echo "== detect"; $G detect | tee "$OUT/detect.txt"; $G detect --json >"$OUT/inventory.json"; echo "exit $?"
echo "== start-up, wall ms"
t() { local s; s=$(date +%s%N); "$@" >/dev/null 2>&1; echo $((($(date +%s%N) - s) / 1000000)); }
for i in 1 2 3 4 5; do echo "node -e 0: $(t node -e 0)  --version: $(t $G --version)  detect --json: $(t $G detect --json)"; done
mkdir -p /tmp/gpuplan-check && cd /tmp/gpuplan-check && rm -rf .gpuplan
cat >vram.yaml <<'EOF'
version: 1
name: vram-check
registry: { max_pipelines_per_gpu: 3 }
pipelines:
  - name: six
    steps:
      - { id: hold, memory: torch, vram: 8GiB, run: [python3, -c, "import torch,time; x=torch.empty(6*2**30,dtype=torch.uint8,device='cuda'); x.fill_(1); torch.cuda.synchronize(); time.sleep(4)"] }
  - name: ten
    steps:
      - { id: hold, memory: torch, vram: 12GiB, run: [python3, -c, "import torch,time; x=torch.empty(10*2**30,dtype=torch.uint8,device='cuda'); x.fill_(1); torch.cuda.synchronize(); time.sleep(4)"] }
  - name: failed-alloc
    steps:
      - { id: try, memory: torch, vram: 2GiB, run: [python3, -c, "import torch,time\ntry:\n  torch.empty(400*2**30,dtype=torch.uint8,device='cuda')\nexcept Exception as e:\n  print(type(e).__name__)\ntime.sleep(4)"] }
EOF
echo "== compile"; $G compile vram.yaml -o plan.json || exit 1
# Beside nvidia-smi, the probe children alive at each sample: the run's one child checks the plan,
# then serves the memory sampler (NVML maps libcuda itself; no context), and must never be listed.
(while true; do echo "$(date +%s.%N | cut -c1-14) $(timeout 5 nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader | tr '\n' ';')"; echo "$(date +%s.%N | cut -c1-14) $(pgrep -f probe-child.cjs | tr '\n' ',')" >>"$OUT/probes.txt"; done) >"$OUT/smi.txt" &
L=$!
echo "== run"; $G run plan.json --ui plain & R=$!
sleep 2
echo "== during the run: probe children, and what gpuplan counts as others' memory"
for p in $(pgrep -f probe-child.cjs); do echo "probe child $p: parent $(ps -o ppid= -p "$p" | tr -d ' '), libcuda mapped $(grep -c libcuda "/proc/$p/maps"), $(grep VmRSS "/proc/$p/status" | tr -s ' \t' ' ')"; done
$G locks --json >"$OUT/locks-during.json"
node -e 'for (const g of JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).gpus ?? []) console.log(g.uuid, "otherProcessesBytes", g.otherProcessesBytes, "reservedBytes", g.reservedBytes)' "$OUT/locks-during.json"
wait $R; echo "exit $?"
kill $L 2>/dev/null
echo "== probe children nvidia-smi listed (none expected)"
comm -12 <(cut -d' ' -f2- "$OUT/smi.txt" | tr ';' '\n' | awk -F', ' 'NF == 2 { print $1 }' | sort -u) <(cut -d' ' -f2 "$OUT/probes.txt" | tr ',' '\n' | grep . | sort -u)
echo "(probe children seen: $(cut -d' ' -f2 "$OUT/probes.txt" | tr ',' '\n' | grep . | sort -u | tr '\n' ' '))"
run=$(ls -d .gpuplan/runs/*/ | head -1)
cp "$run/events.jsonl" "$OUT/events.jsonl"
echo "== gpuplan's peaks (bytes) and pids"
grep '"gpu.step.end"' "$run/events.jsonl" | grep -o '"pipeline":"[^"]*"\|"peakVramBytes":[0-9]*' | paste - -
grep '"start"' "$run/journal.jsonl" | grep -o '"pipeline":"[^"]*"\|"pid":[0-9]*' | paste - -
echo "== nvidia-smi's largest figure per pid (MiB)"
cut -d' ' -f2- "$OUT/smi.txt" | tr ';' '\n' | awk -F', ' 'NF == 2 { split($2, m, " "); if (m[1] + 0 > max[$1]) max[$1] = m[1] + 0 } END { for (p in max) print p, max[p] }'
echo "== report"; $G report -o "$OUT/report.html"; echo "exit $?"

# bench:run's comparison on this GPU (real NVML and CUDA, not the fake): one-step pipelines of `true`,
# concurrency 2, CPU plan against GPU plan, interleaved; then the GPU plan again with the AMD
# libraries hidden, to see what probing them costs a run that uses none.
echo "== run overhead, wall ms (CPU plan / GPU plan / GPU plan, AMD libraries hidden)"
NOAMD="GPUPLAN_HIP_LIBRARY=/nonexistent/x.so GPUPLAN_ROCM_SMI_LIBRARY=/nonexistent/x.so GPUPLAN_AMD_SMI_LIBRARY=/nonexistent/x.so"
mk() { printf 'version: 1\nname: bench\nregistry: { %s, max_parallel_pipelines: 2 }\npipelines:\n  - name: t-{n}\n    matrix: { n: [%s] }\n    steps:\n      - %s\n' "$1" "$(seq -s ', ' 1 "$2")" "$3"; }
for n in 1 200; do
  mkdir -p "ov$n/cpu" "ov$n/gpu"
  mk "platform_priority: [cpu]" "$n" '{ id: s, run: ["true"], memory: numpy }' >"ov$n/cpu/p.yaml"
  mk "max_pipelines_per_gpu: 2" "$n" '{ id: s, run: ["true"], memory: torch, vram: 1GiB }' >"ov$n/gpu/p.yaml"
  (cd "ov$n/cpu" && $G compile p.yaml --target cpu-only -o plan.json 2>/dev/null) && (cd "ov$n/gpu" && $G compile p.yaml -o plan.json 2>/dev/null) || echo "compile failed"
  for i in 1 2 3 4 5; do
    c=$(cd "ov$n/cpu" && t $G run plan.json --ui plain); rm -rf "ov$n/cpu/.gpuplan"
    g=$(cd "ov$n/gpu" && t $G run plan.json --ui plain); rm -rf "ov$n/gpu/.gpuplan"
    h=$(cd "ov$n/gpu" && t env $NOAMD $G run plan.json --ui plain); rm -rf "ov$n/gpu/.gpuplan"
    echo "$n pipelines: $c / $g / $h"
  done
done
echo "== detect --json, AMD libraries hidden, wall ms"
for i in 1 2 3; do echo "node -e 0: $(t node -e 0)  detect --json: $(t env $NOAMD $G detect --json)"; done
