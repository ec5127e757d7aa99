/**
 * AMD gfx targets. ROCm SMI and AMD SMI report the KFD `gfx_target_version`, a decimal
 * major*10000 + minor*100 + stepping (90402 is gfx942, 90010 is gfx90a): stepping is hex.
 */
export function gfxTargetFromVersion(version: number | bigint | null | undefined): string | null {
  if (version === null || version === undefined) return null;
  const v = Number(version);
  if (!Number.isSafeInteger(v) || v <= 0) return null;
  const major = Math.floor(v / 10000);
  const minor = Math.floor(v / 100) % 100;
  const stepping = v % 100;
  if (major === 0 || minor > 15 || stepping > 15) return null;
  return `gfx${major}${minor.toString(16)}${stepping.toString(16)}`;
}

/** HIP's gcnArchName carries feature flags (`gfx90a:sramecc+:xnack-`); keep the target. */
export function gfxTargetFromArchName(name: string | null | undefined): string | null {
  const m = /^(gfx[0-9a-f]+)/i.exec(name ?? "");
  return m ? m[1]!.toLowerCase() : null;
}
