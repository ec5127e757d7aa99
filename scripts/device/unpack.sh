# Sourced by the device scripts (docs/real-gpu-check.md), from the repository root there: the Node
# binary pack.sh carried, unpacked to /tmp/node and first on PATH; NODE_EXTRA_CA_CERTS unset; and
# node_modules and dist from .devcarry in place of the checkout's, which a fresh machine lacks and
# an earlier call may have left stale. Sets C (the carried folder) and G (gpuplan).
C=.devcarry
[ -x /tmp/node ] || { python3 -c "import lzma,shutil; shutil.copyfileobj(lzma.open('$C/node.xz'), open('/tmp/node','wb'))" && chmod +x /tmp/node; }
export PATH=/tmp:$PATH
unset NODE_EXTRA_CA_CERTS
rm -rf node_modules dist && ln -s $C/node_modules node_modules && cp -r $C/dist dist
G="node $PWD/bin/gpuplan.js"
