/**
 * The shape of a vendor library's symbol table: every function a probe binds, with the C
 * declaration koffi binds it with. Data only (no koffi), so tests can read the tables too.
 */

interface SymbolSpec {
  /** The declaration as koffi parses it: vendor enums and status codes as 4-byte ints, opaque
   *  handles as `void *`, structs as raw buffers decoded by the offsets in ABI.md. */
  readonly c: string;
  /** The probe cannot answer without it (or without the legacy name the probe falls back to). Every
   *  other symbol may be missing from a driver release and its field is then null. */
  readonly required?: boolean;
}

export type SymbolTable = Readonly<Record<string, SymbolSpec>>;
