#!/bin/bash
# Packs what `gpuplan` needs on a lent GPU machine (README of the workplace's device tool: a bare
# image, no network, at most 64 MiB carried) into .devcarry/, which .git/info/exclude must ignore:
# this Node binary xz-compressed (~24 MB; the image has none), the built dist/ with its code cache
# (valid for this same Node), and the few packages the bundle leaves external that a run with
# --ui plain loads (koffi and its prebuilt binary, yaml, chalk). Run after `npm run build`, then
# carry .devcarry and run `bash scripts/device/check.sh` there (docs/real-gpu-check.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out="$root/.devcarry"
grep -qx '/.devcarry/' "$root/.git/info/exclude" 2>/dev/null || echo '/.devcarry/' >>"$(git -C "$root" rev-parse --git-common-dir)/info/exclude"
rm -rf "$out" && mkdir -p "$out/node_modules/@koromix"
xz -T2 -6 -c "$(command -v node)" >"$out/node.xz"
for p in koffi yaml chalk; do cp -r "$root/node_modules/$p" "$out/node_modules/"; done
cp -r "$root/node_modules/@koromix/koffi-linux-$(node -p process.arch)" "$out/node_modules/@koromix/"
cp -r "$root/dist" "$out/dist"
du -sh "$out"
