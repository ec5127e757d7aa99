export function anchor(heading: string): string;
export function pageOf(schemaFile: string): string;
export function schemaPage(schema: object, file: string): string;
