import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

// apt-get may take minutes on a fresh machine; a hung one should not hang a run forever.
const INSTALL_TIMEOUT_MS = 900_000;

/**
 * The path of `program`, Debian's `pkg` installed first when it is missing (ensure-package.sh,
 * which says on stderr what it does and why). Without it afterwards: undefined when `optional`,
 * else it throws with the way to install it.
 */
export function ensurePackage(pkg: string, program: string, purpose: string): string;
export function ensurePackage(pkg: string, program: string, purpose: string, opts: { optional: true }): string | undefined;
export function ensurePackage(pkg: string, program: string, purpose: string, opts: { optional?: boolean } = {}): string | undefined {
  const out = execFileSync('bash', [join(import.meta.dirname, 'ensure-package.sh'), pkg, program, purpose, ...(opts.optional ? ['--optional'] : [])], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: INSTALL_TIMEOUT_MS,
  }).trim();
  return out || undefined;
}
