/** Single-quoting for the generated scripts: bash and zsh share POSIX quoting, fish has its own. */

/** 'it'\''s' — safe for any text in bash and zsh. */
export const posixQuote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`;

/** fish: inside single quotes only \ and ' are special. */
export const fishQuote = (text: string): string =>
  `'${text.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
