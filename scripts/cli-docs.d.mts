export const EXIT_MEANINGS: Record<string, string>;
