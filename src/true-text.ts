/** The texts a boolean environment variable reads as true (any case, spaces around ignored). */
const TRUE_TEXTS: readonly string[] = ['true', '1', 'yes', 'on'];

/** Whether a boolean variable's text reads true: the config's reading (src/config.ts). */
export function isTrueText(text: string): boolean {
  return TRUE_TEXTS.includes(text.trim().toLowerCase());
}
