// An http task's answer that is not text (an image, application/octet-stream, bytes that are not
// UTF-8) was read as UTF-8 text: every invalid sequence became U+FFFD, the bytes were lost. Such a
// body is now kept as base64 text with `body_encoding: "base64"`; text and JSON are as they were.
// A real HTTP server on port 0 serves random bytes; the tool's outcome, and the outcome stored by
// a real server from a real worker's report, decode to the same bytes.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { http } from '../../../src/worker/tools/http.ts';
import type { ToolContext } from '../../../src/worker/tools/types.ts';
import type { Json } from '../../helpers/http.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

// Random bytes with a byte that is never UTF-8 (0xff), so the text case cannot pass by luck.
const RANDOM = Buffer.concat([randomBytes(64 * 1024), Buffer.from([0xff, 0x00, 0xc3])]);
const UTF8 = Buffer.from('plain ascii and é, 日本, 🙂', 'utf8');

let target: HttpTarget;
let s: TestStack;
beforeAll(async () => {
  target = await startHttpTarget((_req, res, recorded) => {
    const send = (type: string | undefined, body: Buffer) => void res.writeHead(200, type ? { 'content-type': type } : {}).end(body);
    if (recorded.path === '/png') send('image/png', RANDOM);
    else if (recorded.path === '/octets') send('application/octet-stream', RANDOM);
    else if (recorded.path === '/octets-utf8') send('application/octet-stream', UTF8);
    else if (recorded.path === '/text-invalid') send('text/plain; charset=utf-8', RANDOM);
    else if (recorded.path === '/json-invalid') send('application/json', RANDOM);
    else if (recorded.path === '/untyped') send(undefined, RANDOM);
    else if (recorded.path === '/text') send('text/plain; charset=utf-8', UTF8);
    else if (recorded.path === '/svg') send('image/svg+xml', Buffer.from('<svg/>'));
    else if (recorded.path === '/empty') send('application/octet-stream', Buffer.alloc(0));
  });
  s = await startTestStack({ workers: 1 });
}, 120_000);
afterAll(async () => {
  await s?.close();
  await target?.close();
});

const ctx = (): ToolContext => ({ signal: new AbortController().signal, env: {} });
const get = async (path: string) => (await http({ name: 't', kind: 'http', url: `${target.url}${path}` }, ctx())).data as Json;

it.each(['/png', '/octets', '/text-invalid', '/json-invalid', '/untyped'])('keeps the bytes of %s as base64', async (path) => {
  const data = await get(path);
  expect(data.body_encoding).toBe('base64');
  expect(Buffer.from(data.body, 'base64').equals(RANDOM)).toBe(true);
});

it('keeps a binary content type as base64 even when its bytes are UTF-8, and an empty one as empty', async () => {
  const data = await get('/octets-utf8');
  expect(data).toMatchObject({ body_encoding: 'base64' });
  expect(Buffer.from(data.body, 'base64').equals(UTF8)).toBe(true);
  expect(await get('/empty')).toMatchObject({ body: '', body_encoding: 'base64' });
});

it('keeps text as text, with no body_encoding', async () => {
  const text = await get('/text');
  expect(text.body).toBe(UTF8.toString('utf8'));
  expect(text).not.toHaveProperty('body_encoding');
  expect(await get('/svg')).toEqual(expect.objectContaining({ body: '<svg/>' }));
  expect(await get('/svg')).not.toHaveProperty('body_encoding');
});

it('a real worker reports the bytes, and the server stores them, exactly', async () => {
  await s.register(`apiVersion: svc/v1
metadata: { name: binary, path: http/binary }
workflow:
  - step: start
    tool: { name: fetch, kind: http, url: "${target.url}/png" }
`);
  const id = await s.run('http/binary');
  const final = await s.wait(id, 30_000);
  expect(final, JSON.stringify(final.error)).toMatchObject({ status: 'completed' });
  const completed = (await s.events(id)).find((e) => e.event_type === 'command.completed');
  const data = completed.result.tasks.fetch.data;
  expect(data.body_encoding).toBe('base64');
  expect(Buffer.from(data.body, 'base64').equals(RANDOM)).toBe(true);
  expect(completed.result.tasks.fetch).not.toHaveProperty('escaped');
}, 60_000);
