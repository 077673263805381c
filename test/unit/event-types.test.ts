// The registry of event types (machines/event-types.ts) is the only place a type is spelt: the
// sources name types through EVENT, the API's report schemas read WORKER_EVENT_TYPES, the replay
// folds exactly the folding types, and docs/architecture.md's table lists the registry row for row.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { toMachineEvent } from '../../actors/to-machine-event.ts';
import { EVENT, EVENT_TYPES, eventTypeInfo, FOLDING_EVENT_TYPES, WORKER_EVENT_TYPES, type EventType, type FoldingEventType } from '../../machines/event-types.ts';
import type { Effect, ExecutionEvent } from '../../machines/execution/types.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SCANNED = ['machines', 'actors', 'src', 'gui/src', 'bench', 'scripts'];
const REGISTRY_FILE = 'machines/event-types.ts';

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts'))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)).split(path.sep).join('/'));
}

// A registered type in single or double quotes: code, SQL text and type positions alike.
const escaped = EVENT_TYPES.map((t) => t.replace(/\./g, '\\.'));
const LITERAL = new RegExp(`(['"])(${escaped.join('|')})\\1`, 'g');

/** `file:line: 'type'` for every quoted event type in `file`. */
function literalsIn(file: string): string[] {
  const lines = readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  return lines.flatMap((line, i) => [...line.matchAll(LITERAL)].map((m) => `${file}:${i + 1}: ${m[0]}`));
}

const scanned = SCANNED.flatMap(sources).filter((f) => f !== REGISTRY_FILE);

describe('event types', () => {
  it('the registry: every type once, a writer each, command.refused recorded by the engine and folding nothing', () => {
    expect(new Set(EVENT_TYPES).size).toBe(EVENT_TYPES.length);
    for (const t of EVENT_TYPES) expect(eventTypeInfo(t).writers.length, t).toBeGreaterThan(0);
    expect(eventTypeInfo(EVENT.commandRefused)).toMatchObject({ writers: ['engine'], folds: false });
    expect(WORKER_EVENT_TYPES).toEqual(EVENT_TYPES.filter((t) => eventTypeInfo(t).writers.includes('worker')));
    expect(FOLDING_EVENT_TYPES).toEqual(EVENT_TYPES.filter((t) => eventTypeInfo(t).folds));
  });

  it('a worker may report its commands and their tasks (call.attempt for a retried one), no more: a cancel is an operator\'s (POST …/cancel, with requested_by)', () => {
    expect([...WORKER_EVENT_TYPES].sort()).toEqual(['command.started', 'command.heartbeat', 'call.attempt', 'call.done', 'call.error', 'command.completed', 'command.failed'].sort());
  });

  it('the machine is moved by exactly the folding types (execution.started begins it)', () => {
    const moving = EVENT_TYPES.filter((t) => toMachineEvent({ event_type: t, context: { seq: 1 }, result: null, error: null }) !== null);
    expect(moving).toEqual(FOLDING_EVENT_TYPES.filter((t) => t !== EVENT.executionStarted));
    expectTypeOf<ExecutionEvent['type']>().toEqualTypeOf<Exclude<FoldingEventType, typeof EVENT.executionStarted>>();
    expectTypeOf<Extract<Effect, { type: 'record' }>['eventType']>().toEqualTypeOf<EventType>();
  });

  it('no event type is spelt as a quoted string outside the registry', () => {
    expect(scanned.length).toBeGreaterThan(200);
    const found = scanned.flatMap(literalsIn);
    expect(found).toEqual([]);
  });

  it('docs/architecture.md lists the registry: type, writers, whether it folds', () => {
    const text = readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
    const start = text.indexOf('\n## Event types\n');
    expect(start).toBeGreaterThan(0);
    const section = text.slice(start + 1, text.indexOf('\n## ', start + 1));
    const rows = section.split('\n').flatMap((line) => {
      const m = /^\| `([^`]+)` \| ([^|]+) \| (yes|no) \| [^|]+ \|$/.exec(line);
      return m ? [{ type: m[1], writers: m[2].trim().split(', '), folds: m[3] === 'yes' }] : [];
    });
    expect(rows).toEqual(EVENT_TYPES.map((type) => ({ type, writers: [...eventTypeInfo(type).writers], folds: eventTypeInfo(type).folds })));
  });
});
