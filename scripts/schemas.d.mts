export const SCHEMAS: { name: string; file: string; types: string; asRead?: boolean }[];
