#!/usr/bin/env python3
"""A warm worker in Python, stdlib only (see docs/guides/warm-workers.md).

gpuplan starts it once per (key, GPU); it loads its model, prints {"ready": true}, then answers
one JSON line per task read from stdin. Anything else it prints goes to the step's log. It exits
when stdin closes, which is also what happens if gpuplan itself dies.

    python3 segment_worker.py [--load-s 1.0]
"""
import json
import os
import sys
import time


def reply(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()  # one line per message, at once: gpuplan waits for it


def main():
    load_s = float(sys.argv[sys.argv.index("--load-s") + 1]) if "--load-s" in sys.argv else 1.0
    print(f"loading on {os.environ.get('GPUPLAN_DEVICE', '?')}", flush=True)
    # A real worker loads its weights here, e.g. model = cellpose.models.Cellpose(gpu=True).
    time.sleep(load_s)
    reply({"ready": True})
    for line in sys.stdin:
        task = json.loads(line)
        try:
            plate = task["args"]["matrix"].get("plate", task["pipeline"])
            cells = sum(map(ord, str(plate))) % 97
            reply({"id": task["id"], "ok": True, "result": {"plate": plate, "cells": cells}})
        except MemoryError as e:
            # An out-of-memory error is reported as such: gpuplan applies the step's on_oom.
            reply({"id": task["id"], "ok": False, "error": str(e), "kind": "oom"})
        except Exception as e:  # noqa: BLE001 - any other failure ends this task, not the worker
            reply({"id": task["id"], "ok": False, "error": repr(e)})


if __name__ == "__main__":
    main()
