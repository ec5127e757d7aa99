/**
 * The lock of a run without GPU pipelines: nothing to share with other processes, so no lock
 * directory is touched and nothing is locked. The executor asks for slots only for GPU pipelines, so any
 * use of this lock is a bug in gpuplan, and it says so instead of pretending to lock.
 */
import { InternalError } from "../../problems/errors.js";
import type { SlotLock } from "./types.js";

export function noGpuLock(): SlotLock {
  const bug = (what: string) =>
    new InternalError(`${what} on the slot lock of a run without GPU pipelines: nothing may lock a GPU here`);
  return {
    get dir(): string {
      throw bug("the lock directory asked for");
    },
    acquire: async (request) => {
      throw bug(`a slot of ${request.gpu} requested`);
    },
    inspect: async () => {
      throw bug("the slots inspected");
    },
  };
}
