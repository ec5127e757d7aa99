/** errno numbers as the codes Node uses (ENOENT, EACCES, …), for the errors of calls made through koffi. */
import { constants } from "node:os";

const codes = new Map<number, string>(Object.entries(constants.errno).map(([code, n]) => [n, code]));

/** `ENOENT` for 2; `errno N` for a number this platform has no name for. */
export function errnoCode(errno: number): string {
  return codes.get(errno) ?? `errno ${errno}`;
}
