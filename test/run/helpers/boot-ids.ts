/** A boot id that is not `current`: the first hex digit turned, the UUID's form kept. */
export const otherBootId = (current: string): string =>
  `${current[0] === "0" ? "1" : "0"}${current.slice(1)}`;
