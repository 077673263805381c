import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createWebSocketReceiver, type StatelyInspectionEvent } from '@statelyai/inspect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { createMachine } from 'xstate';
import { inspectCommand } from '../../../src/cli/inspect.ts';
import { http, type Json } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';
import { Capture } from '../../helpers/capture.ts';
import { openSocket } from '../../helpers/stream-readers.ts';

// The statechart of a registered playbook, the live state of an execution hydrated through it,
// and its inspection stream read by @statelyai/inspect's own WebSocket receiver; with a real
// server, database and worker.

const HELLO = readFileSync(new URL('../../../examples/hello.yaml', import.meta.url), 'utf8');
const SECRET = 'sk-live-DO-NOT-LEAK-4711';

// Waits in its first step so the live state can be read while it runs.
const SLOW = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: slow, path: tests/slow }
workflow:
  - step: start
    tool: { name: wait, kind: shell, command: "sleep 1; echo ok" }
    next: [{ step: fine, when: "{{ outcome.status == 'ok' }}" }, { step: broken, when: "{{ outcome.status == 'error' }}" }]
  - step: fine
    tool: { name: f, kind: shell, command: "echo fine" }
  - step: broken
    tool: { name: b, kind: shell, command: "echo broken" }
`;

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack();
});
afterAll(async () => s?.close());


describe('statechart, state and inspection', () => {
  it('registration answers warnings: none for hello, the unreachable step otherwise', async () => {
    expect((await s.register(HELLO)).warnings).toEqual([]);
    const r = await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: orphan, path: tests/orphan }
workflow:
  - step: start
    tool: { name: a, kind: shell, command: "echo a" }
  - step: orphan
    tool: { name: o, kind: shell, command: "echo o" }
`);
    expect(r.warnings).toEqual([expect.stringContaining('no path reaches step orphan')]);
  });

  it('refuses a playbook path ending in /statechart (its statechart route would shadow it), storing nothing', async () => {
    const doc = (path: string) => `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: shadowed, path: ${path} }\nworkflow:\n  - step: start\n    tool: { name: a, kind: shell, command: "echo a" }\n`;
    const inDocument = await http(s.url, 'POST', '/api/catalog/playbook', { content: doc('tests/shadow/statechart') });
    expect(inDocument.status).toBe(400);
    expect(inDocument.body.detail.errors).toEqual([expect.stringMatching(/^metadata\.path: must not end in \/statechart/)]);
    const inRequest = await http(s.url, 'POST', '/api/catalog/playbook', { content: doc('tests/fine'), path: 'tests/shadow/statechart' });
    expect(inRequest.status).toBe(400);
    expect(inRequest.body.detail.errors).toEqual([expect.stringMatching(/^path: must not end in \/statechart/)]);
    expect((await http(s.url, 'GET', '/api/catalog/playbook/tests/shadow')).status).toBe(404);
    const list = await http(s.url, 'GET', '/api/catalog/playbooks');
    expect(list.body.playbooks.map((p: Json) => p.path)).not.toContain('tests/shadow/statechart');
  });

  it('GET /api/catalog/playbook/{path}/statechart: an xstate config with the steps and arcs', async () => {
    const r = await http(s.url, 'GET', '/api/catalog/playbook/examples/hello/statechart');
    expect(r.status).toBe(200);
    const steps = r.body.states.running.states;
    expect(Object.keys(steps)).toEqual(['start', 'square', 'report']);
    expect(steps.report.meta).toMatchObject({ step: 'report' });
    // hello runs one step at a time: the arc square → report is square's transition into report's active state.
    expect(steps.square.always[0]).toMatchObject({ target: `#${steps.report.id}.active`, meta: { from: 'square', when: "{{ outcome.status == 'ok' }}" } });
    expect(() => createMachine(r.body)).not.toThrow();
    // The playbook itself is still served at its path.
    expect((await http(s.url, 'GET', '/api/catalog/playbook/examples/hello')).body.content).toBe(HELLO);
    const missing = await http(s.url, 'GET', '/api/catalog/playbook/no/such/statechart');
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toContain('no/such');
  });

  it('GET /api/executions/{id}/state: active steps while running, outcomes and skipped steps after; no payload values', async () => {
    await s.register(SLOW);
    const id = await s.run('tests/slow', { token: SECRET });
    const live = await until('start active', async () => {
      const r = await http(s.url, 'GET', `/api/executions/${id}/state`);
      return r.status === 200 && r.body.active_steps.includes('start') ? r.body : undefined;
    });
    // An exclusive fork runs one step at a time: the value names the running step only.
    expect(live).toMatchObject({ execution_id: id, status: 'running', value: { running: { start: 'active' } } });
    expect(live.steps.broken.status).toBe('pending');
    expect(live.steps.fine.status).toBe('pending');
    await s.wait(id);
    const done = await http(s.url, 'GET', `/api/executions/${id}/state`);
    expect(done.body).toMatchObject({ status: 'completed', value: 'completed', active_steps: [] });
    expect(done.body.steps).toMatchObject({ start: { status: 'completed' }, fine: { status: 'completed' }, broken: { status: 'skipped' } });
    expect(JSON.stringify(done.body)).not.toContain(SECRET);
    expect((await http(s.url, 'GET', '/api/executions/987654/state')).status).toBe(404);
    const bad = await http(s.url, 'GET', '/api/executions/abc/state');
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body.detail)).toContain('id');
  });

  it('GET /api/executions/{id}/inspect: @statelyai/inspect receiver reads the live stream to the end', async () => {
    const id = await s.run('tests/slow', { token: SECRET });
    const receiver = createWebSocketReceiver({ server: `${s.url.replace(/^http/, 'ws')}/api/executions/${id}/inspect` });
    const got: StatelyInspectionEvent[] = [];
    receiver.subscribe((e) => got.push(e));
    await until('final snapshot', () => got.some((e) => e.type === '@xstate.snapshot' && (e.snapshot as { value?: unknown }).value === 'completed'), 20_000);
    expect(got[0].type).toBe('@xstate.actor');
    const actor = got[0] as Extract<StatelyInspectionEvent, { type: '@xstate.actor' }>;
    expect(actor.sessionId).toBe(`execution-${id}`);
    expect(Object.keys(JSON.parse(actor.definition!).states.running.states)).toEqual(['start', 'fine', 'broken']);
    const moved = got.filter((e) => e.type === '@xstate.event').map((e) => (e as Json).event.type);
    expect(moved).toEqual(['command.completed', 'command.completed']);
    expect(JSON.stringify(got)).not.toContain(SECRET);
    // The same events, so far, over plain HTTP.
    const plain = await http(s.url, 'GET', `/api/executions/${id}/inspect`);
    expect(plain.body.events.map((e: Json) => e.type)).toEqual(got.map((e) => e.type));
  });

  it('ends the inspection stream of an execution deleted while it is followed with 4404, not an open socket', async () => {
    await s.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: napping, path: tests/napping }
workflow:
  - step: nap
    wait: { for: 1h }
`);
    const id = await s.run('tests/napping');
    await until('the nap began', async () => (await s.events(id)).some((e: Json) => e.event_type === 'timer.set'));
    const { closed } = await openSocket(`${s.url}/api/executions/${id}/inspect`, {});
    // What retention does to its rows (here to a live one, as nothing else deletes an execution).
    await s.deps.db.query('DELETE FROM core.command WHERE execution_id = $1', [id]);
    await s.deps.db.query('DELETE FROM core.execution WHERE execution_id = $1', [id]);
    const end = await Promise.race([closed, new Promise<undefined>((r) => setTimeout(r, 10_000, undefined))]);
    expect(end).toMatchObject({ code: 4404, reason: `execution ${id} not found` });
  });

  it('svc inspect prints the moves and the end', async () => {
    const id = await s.run('tests/slow', { token: SECRET });
    const out = new Capture();
    expect(await inspectCommand([String(id), '--server', s.url], out, new Capture())).toBe(0);
    expect(out.text).toContain(`execution ${id} (tests/slow)`);
    expect(out.text).toMatch(/command\.completed seq 1\s+running\s+active: fine/);
    expect(out.text).toContain('execution completed');
    const missing = new Capture();
    // Not found exits 4, as every execution command does (docs/cli.md, Exit codes).
    expect(await inspectCommand(['987654', '--server', s.url], new Capture(), missing)).toBe(4);
    expect(missing.text).toContain('987654');
  });

  it('svc inspect exits 3, server unreachable, when the stream drops without an end (the server went away)', async () => {
    // A server that sends one move and then drops the connection (no close frame: 1006), as a killed one does.
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    wss.on('connection', (ws) => {
      ws.send(JSON.stringify({ type: '@xstate.event', event: { type: 'x' } }));
      setTimeout(() => ws.terminate(), 50);
    });
    await once(wss, 'listening');
    try {
      const err = new Capture();
      const port = (wss.address() as AddressInfo).port;
      expect(await inspectCommand(['1', '--server', `http://127.0.0.1:${port}`], new Capture(), err)).toBe(3);
      expect(err.text).toContain('server unreachable');
    } finally {
      wss.close();
    }
  });
});
