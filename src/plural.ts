/** `n` and the word for that many: `1 minute`, `2 minutes`, `2 keychain entries` (`many` when not `one` + s). */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
