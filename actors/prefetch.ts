import { allocateExecutionIds, childReads, childrenStartedAt, type ChildPlaybook } from '../src/db/execution.repo.ts';
import type { AdmitKey } from '../src/db/flow.repo.ts';
import type { Queryable } from '../src/db/queryable.ts';
import { literalChildPath } from '../src/dsl/literal-child-path.ts';
import { roomKey, type KeyRooms } from './key-rooms.ts';
import type { CompiledPlaybook } from './playbook-cache.ts';

/**
 * What effects need from the database, read before a fold so that none reads inside it: the
 * catalog head of a child playbook's path (null: not in the catalog), the stored running children
 * of an execution that cancels its children, ids for the children it starts, and how many starts
 * each concurrency key can admit at once (by key-rooms.ts roomKey; a key not read admits none).
 */
export type Reads = {
  readonly catalog: ReadonlyMap<string, ChildPlaybook | null>;
  readonly children: ReadonlyMap<number, readonly number[]>;
  readonly ids: readonly number[];
  readonly room: ReadonlyMap<string, number>;
  /** Handles of children's plain access tokens, by token, sealed after a fold lacked them (absent: none). */
  readonly sealed?: ReadonlyMap<string, string>;
  /** The live child started under a parent's seq, by startedKey (null: none), read after a fold lacked it (a `playbook` task's timeout). */
  readonly started?: ReadonlyMap<string, number | null>;
};

/** The key of `Reads.started` and `Needs.started`: a parent execution and the seq it started a child under. */
export const startedKey = (parent: number, seq: number): string => `${parent}:${seq}`;


/**
 * What a fold met and lacked: a child's path that is a template, and ids for the children it
 * starts (taken only when a child starts, so ids stay dense), the room of the concurrency keys
 * those children may be admitted on at their start (by roomKey), plain access tokens in a child's
 * args to seal (actors/access-tokens.ts): the unit is routed again with these read too, from the
 * same reads of state.
 */
export type Needs = { paths: Set<string>; children: Set<number>; ids: number; rooms: Map<string, AdmitKey>; secrets: Set<string>; started: Set<string> };

/** Nothing to read: playbooks without `playbook` tasks. */
export const NO_READS: Reads = { catalog: new Map(), children: new Map(), ids: [], room: new Map() };

/** A fold's empty list of needs, filled by effect-rows. */
export const noNeeds = (): Needs => ({ paths: new Set(), children: new Set(), ids: 0, rooms: new Map(), secrets: new Set(), started: new Set() });

/** Whether a fold lacked anything. */
export const hasNeeds = (n: Needs): boolean => n.paths.size > 0 || n.children.size > 0 || n.ids > 0 || n.rooms.size > 0 || n.secrets.size > 0 || n.started.size > 0;

type ChildTasks = { paths: string[]; any: boolean };
const childTasksOf = new WeakMap<CompiledPlaybook, ChildTasks>();

/** The `playbook` tasks of a compiled playbook: whether it has any, and their literal paths (read once per compiled version). */
function childTasks(compiled: CompiledPlaybook): ChildTasks {
  let c = childTasksOf.get(compiled);
  if (!c) {
    const tasks = compiled.playbook.workflow.flatMap((s) => s.tasks.filter((t) => t.kind === 'playbook'));
    const paths = tasks.flatMap((t) => literalChildPath(t) ?? []);
    c = { paths: [...new Set(paths)], any: tasks.length > 0 };
    childTasksOf.set(compiled, c);
  }
  return c;
}

/**
 * The reads a unit's fold may need, known from the compiled playbooks before it runs: for each
 * held execution (`parents`) or new one (`starting`) whose playbook has `playbook` tasks, the
 * catalog heads of their literal paths and a held one's running children (which its end or
 * cancel reaches); the room of the concurrency keys new ones start on (`startKeys`, and a child's
 * the fold lacked, `also.rooms`; from `rooms`, this server's memory of them). `also`: what an
 * earlier fold of the unit lacked; `sealed`: the handles of the tokens it lacked, sealed since
 * (passed on as they are).
 */
export async function readBefore(
  q: Queryable,
  parents: readonly { id: number; compiled: CompiledPlaybook }[],
  starting: readonly CompiledPlaybook[],
  startKeys: readonly AdmitKey[],
  rooms: KeyRooms,
  also?: Needs,
  sealed?: ReadonlyMap<string, string>,
): Promise<Reads> {
  const paths = new Set(also?.paths);
  const children = new Set(also?.children);
  const ids = also?.ids ?? 0;
  const keys = also?.rooms.size ? [...new Map([...startKeys.map((k) => [roomKey(k.limit, k.key), k] as const), ...also.rooms]).values()] : startKeys;
  for (const p of parents) {
    const c = childTasks(p.compiled);
    if (!c.any) continue;
    children.add(p.id);
    for (const path of c.paths) paths.add(path);
  }
  for (const compiled of starting) for (const path of childTasks(compiled).paths) paths.add(path);
  const started = also?.started.size ? await startedReads(q, also.started) : undefined;
  if (!paths.size && !children.size && !ids && !keys.length) return sealed || started ? { ...NO_READS, ...(sealed ? { sealed } : {}), ...(started ? { started } : {}) } : NO_READS;
  const read = paths.size || children.size ? await childReads(q, [...paths], [...children]) : { heads: [], children: [] };
  const catalog = new Map<string, ChildPlaybook | null>([...paths].map((p) => [p, null]));
  for (const head of read.heads) catalog.set(head.path, head);
  const running = new Map<number, number[]>([...children].map((p) => [p, []]));
  for (const c of read.children) running.get(c.parent)?.push(c.child);
  return {
    catalog,
    children: running,
    ids: ids > 0 ? await allocateExecutionIds(q, ids) : [],
    room: keys.length ? await rooms.take(q, keys) : new Map(),
    ...(sealed ? { sealed } : {}),
    ...(started ? { started } : {}),
  };
}

/** The live children started under each startedKey in `keys` (null where none is). */
async function startedReads(q: Queryable, keys: ReadonlySet<string>): Promise<Map<string, number | null>> {
  const pairs = [...keys].map((k) => {
    const [parent, seq] = k.split(':').map(Number);
    return { parent, seq };
  });
  const out = new Map<string, number | null>([...keys].map((k) => [k, null]));
  for (const r of await childrenStartedAt(q, pairs)) out.set(startedKey(r.parent, r.seq), r.child);
  return out;
}
