// The bearer `svc doctor serve` asks of its callers. The doctor acts with its own (admin) API
// token, so loopback is no check: any process on the host reached it, a shell task on the host
// network or an http task to 127.0.0.1 included. A fresh random bearer per start, in a file only
// this user reads (0600, in a 0700 directory), is handed to the supervisor or agent that is meant
// to call; a task is not given it (its sandbox sees none of this user's files).
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** Where `svc doctor serve` writes its bearer without --token-file. */
export function defaultDoctorTokenFile(): string {
  return join(homedir(), '.svc', 'doctor-serve.token');
}

/** Makes a bearer and writes it to `path` (replacing what is there) readable by this user only. */
export async function writeDoctorToken(path: string): Promise<string> {
  const token = `svcdoc_${randomBytes(32).toString('base64url')}`;
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  // Removed first and created exclusively: an existing file may be readable by others (its mode
  // stays on a rewrite) or a symbolic link to somewhere else.
  await rm(path, { force: true });
  await writeFile(path, `${token}\n`, { mode: 0o600, flag: 'wx' });
  return token;
}

/** Removes the bearer at stop, unless another doctor serve has written its own there since. */
export async function removeDoctorToken(path: string, token: string): Promise<void> {
  const now = await readFile(path, 'utf8').catch(() => undefined);
  if (now?.trim() === token) await rm(path, { force: true });
}
