// A start pressed twice: a double click on "Run version N" (or Enter pressed twice) sent two
// starts, and two executions ran; so did a double click on the agents terminal's Run (the tool
// was called twice). The forms now send an Idempotency-Key, the same until what they would send
// changes (or, on the terminal, until a run is answered): the server answers the repeat as the
// first, with the same execution. A changed payload is a new run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';

const PLAIN = `apiVersion: svc/v1
kind: Playbook
metadata: { name: twice, path: gui/audit/run-twice }
workload: { who: world }
workflow:
  - step: a
    tool: { name: t, kind: noop }
`;
const WITH_INPUTS = `apiVersion: svc/v1
kind: Playbook
metadata: { name: twice inputs, path: gui/audit/run-twice-inputs }
inputs:
  who: { type: string, default: world }
workflow:
  - step: a
    tool: { name: t, kind: noop }
`;
const AGENT = `apiVersion: svc/v1
kind: Playbook
metadata: { name: twice agent, path: gui/audit/run-twice-agent, agent: true, terminal: { visible: true, workspace: twice } }
workload: { method: tools/call, tool: null, arguments: {} }
workflow:
  - step: a
    tool: { name: t, kind: noop }
`;

describe('a start pressed twice', () => {
  let ui: ConsolePage;
  const started = async (path: string): Promise<number[]> =>
    ((await http(ui.stack.url, 'GET', `/api/executions?path=${encodeURIComponent(path)}`)).body.executions as { execution_id: number }[]).map((e) => e.execution_id);
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 1 });
    await ui.stack.register(PLAIN);
    await ui.stack.register(WITH_INPUTS);
    const agent = await http(ui.stack.url, 'POST', '/api/catalog/register', { content: AGENT, resource_type: 'agent' });
    expect(agent.status, JSON.stringify(agent.body)).toBe(201);
  }, 300_000);
  afterAll(async () => ui?.close());

  it('starts one execution from the run form, a changed payload another', async () => {
    const { page, stack } = ui;
    for (const path of ['gui/audit/run-twice', 'gui/audit/run-twice-inputs']) {
      await page.goto(`${stack.url}/ui/#/catalog/entry/${path}`);
      await page.getByRole('button', { name: /^Run version 1$/ }).dblclick();
      await page.waitForURL(/#\/executions\/\d+$/);
      const [id] = await started(path);
      expect(page.url()).toMatch(new RegExp(`#/executions/${id}$`));
      // Both requests were answered before this read: the second is not still on its way.
      await page.waitForLoadState('networkidle');
      expect(await started(path), path).toEqual([id]);
    }
    // Enter twice on the button, then a new payload: one more, not two.
    await page.goto(`${stack.url}/ui/#/catalog/entry/gui/audit/run-twice`);
    await page.getByLabel('Payload (JSON, merged into the workload)').fill('{"who": "moon"}');
    await page.getByRole('button', { name: /^Run version 1$/ }).focus();
    await page.keyboard.press('Enter');
    await page.keyboard.press('Enter');
    await page.waitForURL(/#\/executions\/\d+$/);
    await page.waitForLoadState('networkidle');
    expect(await started('gui/audit/run-twice')).toHaveLength(2);
  }, 60_000);

  it("starts one execution from the agents terminal's Run, and another on the next Run", async () => {
    const { page, stack } = ui;
    await page.goto(`${stack.url}/ui/#/agents`);
    await page.getByRole('button', { name: /twice agent/ }).click();
    await page.getByLabel('Tool', { exact: true }).fill('echo');
    await page.getByRole('button', { name: 'Run', exact: true }).dblclick();
    await page.getByRole('link', { name: /^Execution \d+$/ }).first().waitFor();
    await page.waitForLoadState('networkidle');
    expect(await started('gui/audit/run-twice-agent')).toHaveLength(1);
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await expect.poll(() => started('gui/audit/run-twice-agent')).toHaveLength(2);
  }, 60_000);
});
