export interface SchemaValues {
  defaults: Record<string, Record<string, unknown>>;
  enums: Record<string, unknown[]>;
  patterns: Record<string, string>;
  keys: Record<string, string[]>;
  derived: Record<string, string[]>;
  maximums: Record<string, number>;
}
export function schemaValues(schema: object): SchemaValues;
export function literalType(value: unknown): string;
export function exportName(name: string): string;
