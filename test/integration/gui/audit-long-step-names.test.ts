// A step's name may have 256 characters, and boxes were sized by a guess of 7.5 px a character:
// a long name (or a wide one, `WWWW`) ran over its box's edges and out of the drawing, its start
// cut off at the graph's left (`p_00_very_long_name_…` for step_00_…), and a long child path under a
// step was not counted at all. Boxes are sized by the browser's own measure of their lines now, a
// name over 48 characters is cut with `…`, and the box's tooltip holds the whole name.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';

const LONG = `step_00_${'very_long_name_segment_'.repeat(4)}end`;
const WIDE = 'WWWWWWWWWWWWWWWWWWWW';
const KID = `gui/audit/${'a-long-child-path-segment/'.repeat(3)}kid`;
const YAML = `apiVersion: svc/v1
kind: Playbook
metadata: { name: long-names, path: gui/audit/long-names }
workflow:
  - step: ${LONG}
    tool: { name: a, kind: noop }
    next: ${WIDE}
  - step: ${WIDE}
    tool: { name: b, kind: noop }
    next: call
  - step: call
    tool: { name: c, kind: playbook, path: ${KID} }
`;

describe('long step names in the statechart', () => {
  let ui: ConsolePage;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 0 });
    await ui.stack.register(YAML);
  }, 300_000);
  afterAll(async () => ui?.close());

  it('keeps every line of a box inside the box and the drawing, and names a cut one in full', async () => {
    const { page, stack } = ui;
    await page.goto(`${stack.url}/ui/#/catalog/entry/gui/audit/long-names`);
    await page.locator(`svg.graph [data-step="call"]`).waitFor({ timeout: 15_000 });
    const boxes = await page.locator('svg.graph g.node').evaluateAll((nodes) =>
      nodes.map((g) => {
        type Box = { x: number; width: number };
        // An SVGRect's fields are getters: copied out, or it crosses to the test as {}.
        const bbox = (e: unknown): Box => {
          const r = (e as { getBBox(): Box }).getBBox();
          return { x: r.x, width: r.width };
        };
        const rect = bbox((g as unknown as { querySelector(s: string): unknown }).querySelector('rect'));
        const texts = [...(g as unknown as { querySelectorAll(s: string): Iterable<unknown> }).querySelectorAll('text')].map(bbox);
        const svg = (g as unknown as { ownerSVGElement: { width: { baseVal: { value: number } } } }).ownerSVGElement;
        return { step: (g as unknown as { getAttribute(n: string): string }).getAttribute('data-step'), rect, texts, svgWidth: svg.width.baseVal.value };
      }),
    );
    expect(boxes.map((b) => b.step)).toEqual(expect.arrayContaining([LONG, WIDE, 'call']));
    for (const b of boxes) {
      for (const t of b.texts) {
        expect(t.x, `${b.step}: a line starts left of its box`).toBeGreaterThanOrEqual(b.rect.x);
        expect(t.x + t.width, `${b.step}: a line ends right of its box`).toBeLessThanOrEqual(b.rect.x + b.rect.width);
        expect(t.x, `${b.step}: a line starts outside the drawing`).toBeGreaterThanOrEqual(0);
        expect(t.x + t.width, `${b.step}: a line ends outside the drawing`).toBeLessThanOrEqual(b.svgWidth);
      }
    }
    const long = page.locator(`svg.graph [data-step="${LONG}"]`);
    expect(await long.locator('text.node-name').textContent()).toMatch(/^step_00_very_long_name_segment_.*…$/);
    expect(await long.locator('title').textContent()).toBe(LONG);
    expect(await long.getAttribute('aria-label')).toBe(`step ${LONG}`);
    expect(await page.locator(`svg.graph [data-step="${WIDE}"] text.node-name`).textContent()).toBe(WIDE);
  }, 60_000);
});
