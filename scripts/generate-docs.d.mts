export const GENERATED_DIRS: string[];
export const GENERATED_FILES: string[];
export const OTHER_VARIABLES: { name: string; meaning: string }[];
export function referencePages(modules: Record<string, unknown>): Promise<Record<string, string>>;
export function loadBuiltModules(): Promise<Record<string, unknown>>;
