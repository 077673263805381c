import { describe, expect, it } from 'vitest';
import { Fold } from '../../../actors/fold.ts';
import { PlaybookCache } from '../../../actors/playbook-cache.ts';
import { NO_READS, type Reads } from '../../../actors/prefetch.ts';
import { planWrite } from '../../../actors/write.ts';
import type { CatalogRow } from '../../../src/db/catalog.repo.ts';
import { childTask, playbookOf, shell } from '../machines/helpers.ts';

// The transition step of a unit of work is synchronous and reads nothing: an effect that lacks a
// read (a child playbook's catalog entry, its id) is left out and named in needs(); the same
// fold redone with those reads starts the child. No database: the fold and its write plan are pure.

const cache = new PlaybookCache();
const row = (catalogId: number, path: string, payload: unknown): CatalogRow => ({ catalog_id: catalogId, path, version: 1, kind: 'playbook', content: '', payload, created_at: new Date(0) });
const parent = cache.compile(row(1, 'tests/parent', playbookOf([{ step: 'kid', tool: childTask('sub', 'tests/child') }])));
const childRow = row(2, 'tests/child', playbookOf([{ step: 'work', tool: shell('w') }]));

function startParent(fold: Fold): number {
  return fold.start({ compiled: parent, executionId: 10, workload: {}, args: {} });
}

describe('Fold', () => {
  it('names the reads a child start lacks and starts nothing', () => {
    const fold = new Fold(cache, [], NO_READS);
    startParent(fold);
    const needs = fold.needs();
    expect(needs && { paths: [...needs.paths], children: [...needs.children], ids: needs.ids }).toEqual({ paths: ['tests/child'], children: [], ids: 1 });
    expect(fold.folded().rows.events.map((e) => e.event_type)).not.toContain('child.started');
  });

  it('redone with the reads, starts the child in the same unit with the id read', () => {
    const reads: Reads = { catalog: new Map([['tests/child', childRow]]), children: new Map(), ids: [500], room: new Map() };
    const fold = new Fold(cache, [], reads);
    startParent(fold);
    expect(fold.needs()).toBeUndefined();
    const { held, rows } = fold.folded();
    expect(held.map((h) => [h.id, h.isNew, h.row.parent_execution_id])).toEqual([[10, true, null], [500, true, 10]]);
    expect(rows.events.filter((e) => e.event_type === 'child.started').map((e) => [e.execution_id, e.context])).toEqual([
      [10, { seq: 1, child_execution_id: 500, path: 'tests/child', task: 'sub' }],
    ]);
    expect(rows.commands.map((c) => [c.execution_id, c.step])).toEqual([[500, 'work']]);
  });

  it('a path not in the catalog fails the step with the child result delivered in the fold', () => {
    const reads: Reads = { catalog: new Map([['tests/child', null]]), children: new Map(), ids: [], room: new Map() };
    const fold = new Fold(cache, [], reads);
    startParent(fold);
    expect(fold.needs()).toBeUndefined();
    expect(fold.statusOf(10)).toBe('failed');
    const types = fold.folded().rows.events.map((e) => e.event_type);
    expect(types).toContain('child.finished');
    expect(types.at(-1)).toBe('playbook.failed');
  });

  it('an event for an execution it does not hold is an unguarded append of its one write', () => {
    const lone = cache.compile(row(3, 'tests/lone', playbookOf([{ step: 'kid', tool: childTask('sub', 'tests/gone') }])));
    const reads: Reads = { catalog: new Map([['tests/gone', null]]), children: new Map(), ids: [], room: new Map() };
    // A child whose parent is not held: its end reaches the parent's inbox.
    const fold = new Fold(cache, [], reads);
    fold.start({ compiled: lone, executionId: 11, workload: {}, args: {}, parent: { executionId: 99, rootExecutionId: 99, seq: 1 } });
    const folded = fold.folded();
    expect(folded.rows.inbox.map((i) => [i.executionId, i.event.event_type])).toEqual([[99, 'child.finished']]);
    const { write } = planWrite(folded, [], null);
    expect(write.events.filter((e) => e.execution_id === 99)).toEqual([expect.objectContaining({ execution_id: 99, ord: 1, event_type: 'child.finished', status: null })]);
    expect(write.appends).toEqual([expect.objectContaining({ execution_id: 99, expected: null, n: 1, applied: 'keep', proj: false })]);
  });

  it('the write plan hands new commands to claimers without changing the fold rows', () => {
    const reads: Reads = { catalog: new Map([['tests/child', childRow]]), children: new Map(), ids: [500], room: new Map() };
    const fold = new Fold(cache, [], reads);
    startParent(fold);
    const folded = fold.folded();
    const { write, published } = planWrite(folded, [{ workerId: 'w1', max: 2, token: 't' }], null);
    expect(write.commands.map((c) => [c.status, c.worker_id])).toEqual([['CLAIMED', 'w1']]);
    expect(write.claimOlder).toEqual([{ workerId: 'w1', max: 1, token: 't' }]);
    expect(folded.rows.commands.map((c) => [c.status, c.worker_id])).toEqual([['PENDING', null]]);
    expect(write.newExecutions.map((e) => [e.execution_id, e.parent_execution_id])).toEqual([[10, null], [500, 10]]);
    expect(published.map((p) => [p.executionId, 'gone' in p])).toEqual([[10, false], [500, false]]);
  });
});

describe('the transition and rows steps', () => {
  it('never wait: no await (nor async function) in fold.ts or effect-rows.ts', async () => {
    const { readFileSync } = await import('node:fs');
    for (const file of ['fold.ts', 'effect-rows.ts']) {
      const text = readFileSync(new URL(`../../../actors/${file}`, import.meta.url), 'utf8').replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, '');
      expect(text, file).not.toMatch(/\b(await|async)\b/);
    }
  });
});
