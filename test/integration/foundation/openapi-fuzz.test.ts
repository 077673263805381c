// Every route the OpenAPI document lists, sent what a careless or hostile client sends: odd path
// ids, broken and mistyped bodies (each declared property with a wrong value in turn), junk query
// strings. The bad-input corpus (bad-input.test.ts) holds chosen cases; this covers each route as
// the document has it, so a route added later is covered too. None may answer 5xx, and every 4xx
// carries a `detail` (a string, or an object with a `message`: DESIGN.md, "API decisions").
import http from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import * as v from 'valibot';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

function send(method: string, path: string, body?: string): Promise<{ status: number; text: string }> {
  const headers: Record<string, string> = { accept: 'application/json', ...asWorker };
  if (body !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
  return new Promise((ok, fail) => {
    const req = http.request(new URL(path, t.url), { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => ok({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', fail);
    req.end(body);
  });
}

const propertySchema = v.object({ properties: v.optional(v.record(v.string(), v.unknown())) });
const operation = v.object({ requestBody: v.optional(v.object({ content: v.optional(v.record(v.string(), v.object({ schema: v.optional(propertySchema) }))) })) });
const document = v.object({ paths: v.record(v.string(), v.record(v.string(), v.unknown())) });
const detailAnswer = v.object({ detail: v.union([v.pipe(v.string(), v.minLength(1)), v.object({ message: v.pipe(v.string(), v.minLength(1)) })]) });

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const PATH_VALUES = ['1', '0', '-1', 'abc', '99999999999999999999', '1e3', '%00', '..%2F..', 'a%20b'];
const QUERIES = ['', '?limit=-1', '?limit=abc&since_event_id=x&status=%00', '?cursor=zzz&order=sideways&limit=1e9'];
const WRONG_VALUES: unknown[] = [null, 'x', -1, 0, 2 ** 53, 1.5, true, [], {}, '', '../../etc/passwd', '{{ 7*7 }}', 'a'.repeat(100_000), [{}], { a: { b: { c: [] } } }];
const WHOLE_BODIES = [undefined, '', '{', 'null', '[]', '"x"', '1e999', '{"__proto__": {"polluted": 1}}', '{"a": "\\u0000"}', '{"a": "\\ud800"}', JSON.stringify('a'.repeat(5000))];

/** Broken bodies, then for each property the schema declares, an object with only that property, wrong. */
function bodiesFor(schema: v.InferOutput<typeof propertySchema> | undefined): (string | undefined)[] {
  const wrongProperties = Object.keys(schema?.properties ?? {}).flatMap((k) => WRONG_VALUES.map((w) => JSON.stringify({ [k]: w })));
  return [...WHOLE_BODIES, ...WRONG_VALUES.map((w) => JSON.stringify(w)), ...wrongProperties];
}

it('no route answers 5xx to malformed input, and every 4xx names what is wrong in `detail`', async () => {
  const doc = v.parse(document, JSON.parse((await send('GET', '/docs/json')).text));
  const bad: string[] = [];
  let requests = 0;
  for (const [template, operations] of Object.entries(doc.paths)) {
    for (const [method, raw] of Object.entries(operations)) {
      if (!METHODS.includes(method)) continue;
      const op = v.parse(operation, raw);
      const takesBody = method !== 'get' && method !== 'delete';
      for (const [i, value] of PATH_VALUES.entries()) {
        const path = template.replace(/\{[^}]+\}/g, value);
        // Every body and query on the first path; the other paths with an empty object.
        const bodies = !takesBody ? [undefined] : i === 0 ? bodiesFor(op.requestBody?.content?.['application/json']?.schema) : ['{}'];
        for (const body of bodies) {
          for (const query of i === 0 ? QUERIES : ['']) {
            const r = await send(method.toUpperCase(), path + query, body);
            requests++;
            const said = `${r.status} ${method.toUpperCase()} ${path}${query} ${body?.slice(0, 60) ?? '(no body)'} -> ${r.text.slice(0, 160)}`;
            if (r.status >= 500) bad.push(said);
            else if (r.status >= 400) {
              let answer: unknown;
              try {
                answer = JSON.parse(r.text);
              } catch {
                answer = r.text;
              }
              if (!v.is(detailAnswer, answer)) bad.push(`no detail: ${said}`);
            }
          }
        }
      }
    }
  }
  expect(requests).toBeGreaterThan(5_000);
  expect(bad).toEqual([]);
}, 300_000);
