import { chmod, lstat, readdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** Who a directory belongs to and its permission bits (from stat). */
export type DirMode = { uid: number; gid: number; mode: number };
/** A user as PostgreSQL is spawned: its own uid and gid, no supplementary groups. */
export type SpawnedUser = { name: string; uid: number; gid: number };

/** Whether `user` may enter (search) a directory: the owner, group or other `x` bit that applies. */
export function canEnter(dir: DirMode, user: SpawnedUser): boolean {
  if (user.uid === 0) return true;
  if (dir.uid === user.uid) return (dir.mode & 0o100) !== 0;
  if (dir.gid === user.gid) return (dir.mode & 0o010) !== 0;
  return (dir.mode & 0o001) !== 0;
}

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`;

/**
 * As root, PostgreSQL runs as `user`, which must enter every directory down to `dataDir`. The
 * data dir itself may be opened for entry (o+x, as `mktemp -d` makes it 0700): only when nothing
 * in it grants others any access, so that entering reaches nothing they could read. Anything else
 * in the way is the user's to change: throws one line naming SVC_DATA_DIR and the fix.
 */
export async function ensurePostgresCanEnter(dataDir: string, user: SpawnedUser, log: (line: string) => void): Promise<void> {
  const chain: string[] = [];
  for (let dir = dataDir; ; dir = dirname(dir)) {
    chain.unshift(dir);
    if (dirname(dir) === dir) break;
  }
  for (const dir of chain) {
    const st = await stat(dir);
    if (canEnter(st, user)) continue;
    const problem = `SVC_DATA_DIR ${dataDir}: PostgreSQL runs as user ${user.name} (svc runs as root) and cannot enter ${dir} (mode ${octal(st.mode)}, owner uid ${st.uid})`;
    if (dir !== dataDir) throw new Error(`${problem}; allow it with 'chmod o+x ${dir}', or choose an SVC_DATA_DIR it can reach`);
    const exposed = await entriesOthersMayUse(dir, user);
    if (exposed.length) {
      throw new Error(`${problem}, and svc leaves it so because others could then use ${exposed.slice(0, 3).join(', ')}; choose an empty SVC_DATA_DIR, or allow it with 'chmod o+x ${dir}'`);
    }
    await chmod(dir, (st.mode & 0o7777) | 0o001);
    log(`${dir}: mode ${octal(st.mode)} -> ${octal(st.mode | 0o001)}, so that PostgreSQL (user ${user.name}) can enter it; nothing in it grants others access`);
  }
}

/** Entries of `dir` that grant others (not the owner, not PostgreSQL's own) any access. */
async function entriesOthersMayUse(dir: string, user: SpawnedUser): Promise<string[]> {
  const exposed: string[] = [];
  for (const name of await readdir(dir)) {
    const st = await lstat(join(dir, name));
    if (st.uid !== user.uid && (st.mode & 0o007) !== 0) exposed.push(name);
  }
  return exposed;
}
