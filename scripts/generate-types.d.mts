export function generateTypes(name: string, file: string): Promise<string>;
