/**
 * Shared by every user of the host. Deliberately not os.tmpdir(): TMPDIR is often per user or per
 * Slurm job, and two gpuplans that see different directories would not exclude each other.
 * A module of its own, with no imports, because the CLI shows it in --help at every start.
 */
export const DEFAULT_LOCK_DIR = "/tmp/gpuplan-locks";
