import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLAIMED } from '../../../src/db/command-plans.ts';
import { MIGRATIONS_DIR } from '../../../src/db/migrate.ts';
import { HOT_STATEMENTS as HOT, PLACEMENT, sent } from '../../helpers/hot-statements.ts';

// The hot path's statements and the tables they touch, held against the Citus plan of
// docs/scaling.md ("Beyond one PostgreSQL"): distributed by execution_id, a statement is
// single-shard when every table it touches is co-located and reached by an execution_id
// (`execution_id`) or is a reference table it only reads (`reference`). What is not is declared
// `global: <why>`. The SQL is what the db modules send (a recording Queryable), so a statement
// that starts touching another table, or reaches a co-located one by another key, fails here
// until this file and the doc say what it means for the plan.

/** Triggers on the hot tables: the tables each writes (`touches`) and only reads (`reads`). */
const TRIGGERS: Record<string, { table: string; touches: string[]; reads?: string[]; byExecution?: string[] }> = {
  // migrations/0021_flow_control.sql: a limited command that stops being held gives its slot back
  // (and, unless the connection says svc.notify = off, wakes claimers: migrations/0024).
  // migrations/0054, 0055: a command cancelled while held keeps its slots until its status is set
  // again (a late report, the reaper), which gives back its ended execution's kept admission too.
  command_flow_release: { table: 'command', touches: ['flow_key', 'NOTIFY', 'kept_admission'], byExecution: ['kept_admission', 'command'] },
  command_flow_release_deleted: { table: 'command', touches: ['flow_key', 'NOTIFY'] },
  // migrations/0025_flow_key_triggers.sql: a limited command's or an admission's key row is made,
  // and an admitted execution's slot given back when its admission goes.
  command_flow_key: { table: 'command', touches: ['flow_key'] },
  admission_flow_key: { table: 'admission', touches: ['flow_key'] },
  // migrations/0055: or keeps it (core.kept_admission) while the execution's cancelled commands may still run.
  admission_flow_release: { table: 'admission', touches: ['flow_key', 'kept_admission'], reads: ['command'], byExecution: ['kept_admission', 'command'] },
  // migrations/0028_admit_at_start.sql: an admission written admitted (its start had room) takes
  // its key's slot, reading the limit, or fails the write; also when its key has executions
  // queued ahead of it, read by the key (migrations/0057).
  admission_admit_at_start: { table: 'admission', touches: ['flow_key'], reads: ['flow_limit', 'admission'] },
  // migrations/0040_debounce_join_key.sql: a debounce window's admission moved to a later start's key makes that key's row.
  admission_flow_key_moved: { table: 'admission', touches: ['flow_key'] },
  // migrations/0047_paused_commands.sql: an execution's pause withdraws its unclaimed commands, its
  // resume gives them back (and wakes claimers): the commands of the same execution (its shard's).
  execution_pause_commands: { table: 'execution', touches: ['command', 'NOTIFY'] },
  // migrations/0055: a kept admission slot is given back when its row goes.
  kept_admission_release: { table: 'kept_admission', touches: ['flow_key'], reads: ['command'], byExecution: ['command'] },
  // migrations/0058: a queued execution's pause closes its open debounce window: its own admission row.
  execution_pause_debounce_window: { table: 'execution', touches: ['admission'] },
};

/**
 * Functions of the schema a statement calls that read a table (their bodies are in the
 * migrations), with the table they read, reached by the argument named first: `<alias>.execution_id`.
 */
const FUNCTIONS: Record<string, { reads: string }> = {
  // migrations/0027_batch_reserved_ids.sql: whether the log holds an event (the batch claim and end).
  svc_event_written: { reads: 'event' },
};

// --- What a statement touches, by simple rules on its text --------------------------------------

/** One reference to a table (or a sequence, or the bus) in a statement. */
type Access = { table: string; write: boolean; keyed: boolean; text: string };

const TABLE = /\bcore\.(\w+)\b/gi;
const NOT_ALIAS = new Set(['where', 'set', 'on', 'join', 'left', 'right', 'inner', 'cross', 'using', 'order', 'group', 'limit', 'returning', 'for', 'union', 'and', 'or', 'select', 'as']);

/** `--` comments dropped, string literals blanked (same length), so only SQL is matched. */
function scrub(sql: string): string {
  let out = '';
  let quoted = false;
  for (let i = 0; i < sql.length; i++) {
    const ch = sql[i];
    if (quoted) {
      if (ch === "'" && sql[i + 1] === "'") (out += '  '), i++;
      else if (ch === "'") (quoted = false), (out += ch);
      else out += ch === '\n' ? ch : ' ';
    } else if (ch === "'") (quoted = true), (out += ch);
    else if (ch === '-' && sql[i + 1] === '-') {
      while (i < sql.length && sql[i] !== '\n') (out += ' '), i++;
      out += '\n';
    } else out += ch;
  }
  return out;
}

/**
 * The innermost parenthesised group around `at` (the whole text at the top level): where it
 * starts, and its text with its nested groups blanked (same offsets).
 */
function levelOf(text: string, at: number): { start: number; text: string } {
  let start = 0;
  for (let i = at, depth = 0; i >= 0; i--) {
    if (text[i] === ')') depth++;
    else if (text[i] === '(' && depth-- === 0) {
      start = i + 1;
      break;
    }
  }
  let out = '';
  for (let i = start, depth = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '(') depth++;
    if (ch === ')' && depth-- === 0) break;
    out += depth > 0 && ch !== '(' && ch !== ')' ? ' ' : ch;
  }
  return { start, text: out };
}

/** References to tables in `text` (functions of the schema, `core.f(...)`, are none): where, the verb before and the alias. */
type TableRef = { table: string; index: number; end: number; verb: string; alias: string | null };

function tableRefs(text: string): TableRef[] {
  const refs: TableRef[] = [];
  for (const m of text.matchAll(TABLE)) {
    const end = m.index + m[0].length;
    const before = text.slice(0, m.index).trimEnd();
    const verb = /(DELETE\s+FROM|INSERT\s+INTO|UPDATE|FROM|JOIN|USING|,)$/i.exec(before)?.[1].toUpperCase().replace(/\s+/g, ' ');
    if (verb !== 'INSERT INTO' && /^\s*\(/.test(text.slice(end))) continue;
    if (!verb) throw new Error(`core.${m[1]} at "${text.slice(m.index - 40, end + 40)}": not after FROM, JOIN, UPDATE, INSERT INTO, DELETE FROM or USING`);
    refs.push({ table: m[1], index: m.index, end, verb, alias: aliasAfter(text, end) });
  }
  return refs;
}

/**
 * Aliases (or bare table names) of the tables a level reaches by execution_id: `a.execution_id`
 * compared by `=`, `= ANY(...)` or `IN (...)` to anything but another table of the level; two
 * tables of the level equated on it key the one joined later (the earlier drives the join).
 */
function keyedAt(level: string): Set<string> {
  const refs = tableRefs(level).map((r) => r.alias ?? r.table);
  const keyed = new Set<string>();
  let rest = level.replace(/\b(\w+)\.execution_id\s*=\s*(\w+)\.execution_id\b/g, (all, a: string, b: string) => {
    const [ia, ib] = [refs.lastIndexOf(a), refs.lastIndexOf(b)];
    if (ia >= 0 || ib >= 0) keyed.add(ia > ib ? a : b);
    return ' '.repeat(all.length);
  });
  // A bare `execution_id` is the column of the level's one table (or of its unaliased one).
  rest = rest.replace(/(?<![.\w])execution_id\s*(?:=|\bIN\b)/gi, (all) => (keyed.add(refs.length === 1 ? refs[0] : ''), keyed.add(''), all));
  for (const m of rest.matchAll(/\b(\w+)\.execution_id\s*(?:=|\bIN\b)|(?<![<>!])=\s*(\w+)\.execution_id\b/gi)) keyed.add(m[1] ?? m[2]);
  return keyed;
}

function aliasAfter(text: string, at: number): string | null {
  const m = /^\s+(?:AS\s+)?([a-z_]\w*)/i.exec(text.slice(at));
  return m && !NOT_ALIAS.has(m[1].toLowerCase()) ? m[1] : null;
}

/** Every table a statement touches, how (written or read) and whether each reference is keyed by execution_id. */
function accessesOf(sql: string): Access[] {
  const text = scrub(sql);
  const accesses: Access[] = [];
  for (const { table, index, end, verb, alias } of tableRefs(text)) {
    let keyed: boolean;
    if (verb === 'INSERT INTO') {
      const columns = /^\s*(?:AS\s+\w+\s*)?\(([^)]*)\)/i.exec(text.slice(end));
      keyed = !!columns && /\bexecution_id\b/.test(columns[1]);
    } else keyed = keyedAt(levelOf(text, index).text).has(alias ?? '');
    accesses.push({ table, write: /^(DELETE FROM|INSERT INTO|UPDATE)$/.test(verb), keyed, text: text.slice(index, end + 30).replace(/\s+/g, ' ') });
    // A trigger of the table fires: its own touches follow (the release fires when a held command
    // stops being held: never by an UPDATE that only claims).
    if (table === 'command' && (verb === 'DELETE FROM' || (verb === 'UPDATE' && releases(sql, levelOf(text, index))))) {
      const release = TRIGGERS.command_flow_release;
      for (const t of release.touches) accesses.push({ table: t, write: true, keyed: !!release.byExecution?.includes(t), text: `trigger on core.command: ${t}` });
    }
    const made =
      table === 'command' && verb === 'INSERT INTO'
        ? [TRIGGERS.command_flow_key]
        : table === 'admission' && verb === 'INSERT INTO'
          ? [TRIGGERS.admission_flow_key, TRIGGERS.admission_admit_at_start]
          : table === 'admission' && verb === 'DELETE FROM'
            ? [TRIGGERS.admission_flow_release]
            : table === 'admission' && verb === 'UPDATE' && /\blimit_key\s*=/.test(text.slice(index))
              ? [TRIGGERS.admission_flow_key_moved]
              : [];
    // The pause triggers fire when a statement changes an execution's status (not an append of
    // records only, whose rows keep theirs: event-log.ts recordAppends): they reach the commands
    // and the admission by that execution's id.
    if (table === 'execution' && verb === 'UPDATE' && /\bstatus\s*=/.test(text.slice(index)) && !/\bfalse AS proj\b/.test(text)) {
      for (const t of TRIGGERS.execution_pause_commands.touches) accesses.push({ table: t, write: true, keyed: t === 'command', text: `trigger on core.execution: ${t}` });
      for (const t of TRIGGERS.execution_pause_debounce_window.touches) accesses.push({ table: t, write: true, keyed: true, text: `trigger on core.execution: ${t}` });
    }
    // A trigger reaches a table by its row's execution_id where it says so (byExecution), else not.
    for (const m of made) {
      for (const t of m.touches) accesses.push({ table: t, write: true, keyed: !!m.byExecution?.includes(t), text: `trigger on core.${table}: ${t}` });
      for (const t of m.reads ?? []) accesses.push({ table: t, write: false, keyed: !!m.byExecution?.includes(t), text: `trigger on core.${table}: reads ${t}` });
    }
  }
  for (const m of text.matchAll(/\bcore\.(\w+)\(\s*([^,)]*)/g)) {
    const fn = FUNCTIONS[m[1]];
    if (fn) accesses.push({ table: fn.reads, write: false, keyed: /^\w+\.execution_id$/.test(m[2].trim()), text: `core.${m[1]}(${m[2]}, ...)` });
  }
  for (const m of sql.matchAll(/\bnextval\('core\.(\w+)'\)/g)) accesses.push({ table: m[1], write: true, keyed: false, text: m[0] });
  if (/\bpg_notify\s*\(/.test(text)) accesses.push({ table: 'NOTIFY', write: true, keyed: false, text: 'pg_notify' });
  return accesses;
}

/** An UPDATE of core.command (its level in `sql`) whose SET may move a held command to a status not held: any but a claim's. */
function releases(sql: string, level: { start: number; text: string }): boolean {
  const set = /\bSET\s+status\s*=\s*/i.exec(level.text);
  if (!set) return false;
  const value = /^('[^']*'|[^,\s]+)/.exec(sql.slice(level.start + set.index + set[0].length))?.[1];
  return value !== CLAIMED;
}

// --- The checks ---------------------------------------------------------------------------------

describe('hot statements under Citus (docs/scaling.md): the tables each touches and by what key', () => {
  it.each(HOT.map((s) => [s.name, s] as const))('%s', async (_, s) => {
    const accesses = accessesOf((await sent(s)).text);
    const touched = [...new Set(accesses.map((a) => a.table))].sort();
    // Every table it touches is declared (with the key it is reached by), and only those.
    expect(touched, 'tables touched (declare a new one, and what it means for the plan)').toEqual(Object.keys(s.tables).sort());
    for (const [table, key] of Object.entries(s.tables)) {
      const mine = accesses.filter((a) => a.table === table);
      if (key === 'execution_id') {
        // Every reference to it reaches its rows by execution_id, and it is distributed by it.
        expect(PLACEMENT[table], `${table}: keyed by execution_id, so distributed by it`).toBe('distributed');
        expect(mine.filter((a) => !a.keyed).map((a) => a.text), `${table}: references not reached by execution_id`).toEqual([]);
      } else if (key === 'reference') {
        // A reference table is read where the statement runs; a write of it goes to every node.
        expect(PLACEMENT[table], `${table}: declared a reference table`).toBe('reference');
        expect(mine.filter((a) => a.write).map((a) => a.text), `${table}: a reference table written on the hot path`).toEqual([]);
      } else {
        expect(PLACEMENT[table], `${table}: has a place in the plan`).toBeDefined();
        // A distributed table declared global is reached by another key somewhere: once it no longer is, say so.
        if (PLACEMENT[table] === 'distributed') expect(mine.some((a) => !a.keyed), `${table}: every reference is keyed by execution_id now: declare it 'execution_id'`).toBe(true);
      }
    }
  });

  // PostgreSQL 18.4: a statement that locks or updates rows may recheck one another transaction
  // changed (EvalPlanQual), which initialises the statement's subplans again, run-time partition
  // pruning of a core.event scan included, in memory freed when the recheck ends while the
  // statement still prunes with it (a backend killed by signal 11, under batch load). Such a
  // statement writes the log (INSERT routes rows, it does not prune) but reads it only through a
  // function of the schema, whose query runs in an executor of its own (FUNCTIONS).
  it.each(HOT.map((s) => [s.name, s] as const))('%s: reads the partitioned log only through a function if it locks or updates rows', async (_, s) => {
    const text = scrub((await sent(s)).text);
    if (!/\bFOR\s+(?:NO\s+KEY\s+)?UPDATE\b|\bFOR\s+(?:KEY\s+)?SHARE\b|\bUPDATE\s+core\.|\bDELETE\s+FROM\s+core\./i.test(text)) return;
    expect(tableRefs(text).filter((r) => r.table === 'event' && r.verb !== 'INSERT INTO').map((r) => text.slice(r.index, r.end + 40).replace(/\s+/g, ' '))).toEqual([]);
  });

  it('every table the migrations make has a place in the plan', () => {
    const sql = readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql')).sort().map((f) => readFileSync(`${MIGRATIONS_DIR}${f}`, 'utf8')).join('\n');
    const made = new Set([...sql.matchAll(/CREATE TABLE core\.(\w+) (?!PARTITION OF)/g)].map((m) => m[1]));
    for (const m of sql.matchAll(/DROP TABLE core\.(\w+)/g)) made.delete(m[1]);
    const dropped = new Set([...sql.matchAll(/DROP SEQUENCE (?:IF EXISTS )?core\.(\w+)/g)].map((m) => m[1]));
    const sequences = [...sql.matchAll(/CREATE SEQUENCE core\.(\w+)/g)].map((m) => m[1]).filter((q) => !dropped.has(q));
    expect([...made, ...sequences].filter((t) => PLACEMENT[t] === undefined)).toEqual([]);
    // The triggers are those declared above, whose touches the statements' checks add.
    // A trigger made again (a migration changing its condition) counts once, where it was first made.
    const triggers = new Map<string, string>();
    for (const m of sql.matchAll(/CREATE TRIGGER (\w+)\s+(?:AFTER|BEFORE|INSTEAD OF)[\s\S]*?\bON core\.(\w+)/g)) if (!triggers.has(m[1])) triggers.set(m[1], m[2]);
    expect([...triggers]).toEqual(Object.entries(TRIGGERS).map(([name, t]) => [name, t.table]));
  });

  it('the rules see what they should: keys, joins, nested groups, inserts', () => {
    const keyed = (sql: string) => Object.fromEntries(accessesOf(sql).map((a) => [a.table, a.keyed]));
    expect(keyed('SELECT 1 FROM core.event v WHERE v.execution_id = $1')).toEqual({ event: true });
    expect(keyed('SELECT 1 FROM core.execution WHERE execution_id = ANY($1::bigint[])')).toEqual({ execution: true });
    expect(keyed('SELECT 1 FROM core.execution e WHERE execution_id IN (SELECT id FROM x)')).toEqual({ execution: true });
    expect(keyed('SELECT 1 FROM core.command c WHERE c.command_id = $1')).toEqual({ command: false });
    // The join's driver is not keyed by the join; the table joined to it is.
    expect(keyed('SELECT 1 FROM core.wait w JOIN core.execution e ON e.execution_id = w.execution_id WHERE w.wake_at <= now()')).toEqual({ wait: false, execution: true });
    // A condition inside a nested group keys only that group's tables.
    expect(keyed('SELECT 1 FROM core.command o WHERE NOT EXISTS (SELECT 1 FROM x WHERE x.execution_id = o.execution_id)')).toEqual({ command: false });
    expect(keyed('INSERT INTO core.event (execution_id, event_id) SELECT 1, 2')).toEqual({ event: true });
    expect(keyed('INSERT INTO core.flow_key AS k (name, key) VALUES ($1, $2)')).toEqual({ flow_key: false });
    // A range is no key: it spans shards.
    expect(keyed('SELECT 1 FROM core.execution e WHERE e.execution_id >= $1')).toEqual({ execution: false });
    // A function of the schema that reads a table touches it, keyed by its first argument.
    expect(keyed('SELECT core.svc_event_written(b.execution_id, b.event_ids[1]) FROM core.batch_request b WHERE b.batch_id = $1')).toEqual({ batch_request: false, event: true });
    // Comments and strings are not SQL.
    expect(accessesOf("SELECT 'core.catalog' -- FROM core.wait\n FROM core.event v WHERE v.execution_id = 1").map((a) => a.table)).toEqual(['event']);
  });
});
