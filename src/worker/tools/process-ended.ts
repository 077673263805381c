import { readFileSync } from 'node:fs';

/**
 * True when `pid` (a child of this process) has ended but Node has not taken its exit in yet: a
 * zombie in Linux's /proc. False while it runs, and where /proc cannot tell (another OS).
 */
export function processEnded(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // `pid (comm) state ...`: comm may hold spaces and parentheses, the state follows the last ')'.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state === 'Z' || state === 'X';
  } catch {
    return false;
  }
}
