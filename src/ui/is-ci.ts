/**
 * Whether we run in CI, as ink's is-in-ci judges it (CI set to anything but 0/false,
 * CONTINUOUS_INTEGRATION, or a CI_* variable): the live view and colour both stay off there.
 */
export function isCi(env: NodeJS.ProcessEnv): boolean {
  if (env.CI === "0" || env.CI === "false") return false;
  return "CI" in env || "CONTINUOUS_INTEGRATION" in env || Object.keys(env).some((k) => k.startsWith("CI_"));
}
