// A crafted console link (#/catalog/entry/..%2F..%2Fexecutions) put a catalog path with dot
// segments into an API path; fetch resolves them (%2e%2e as well), so the console sent a GET to
// another API route than the one the page meant (read and shown in the victim's own tab). No
// catalog path has such a segment (src/api/catalog-path.ts), so the console's one API call now
// refuses a path with one as a 404 before any request.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, apiOrNull, ApiError, configureApi, encodePath } from '../../../gui/src/api.ts';

let server: Server;
const seen: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const address = server.address();
  configureApi(`http://127.0.0.1:${address && typeof address === 'object' ? address.port : 0}/api`, () => {});
});
afterAll(() => new Promise((ok) => server.close(ok)));

describe("the console's API call and a path with dot segments", () => {
  it.each([`/catalog/playbook/${encodePath('../../executions')}`, `/catalog/playbook/${encodePath('../x')}/versions`, `/catalog/playbook/${encodePath('a/./b')}`, '/catalog/playbook/a/%2e%2e/b', '/catalog/playbook/a/.%2E/b?version=1', '/catalog/playbook/a/%2E.'])('%j stays unsent: a 404 of its own', async (path) => {
    seen.length = 0;
    await expect(api(path)).rejects.toBeInstanceOf(ApiError);
    await expect(api(path)).rejects.toMatchObject({ status: 404 });
    await expect(apiOrNull(path)).resolves.toBeNull();
    expect(seen).toEqual([]);
  });

  it('sends a path of names as it is, dots inside names included', async () => {
    seen.length = 0;
    expect(await api(`/catalog/playbook/${encodePath('team.a/etl..v2/...')}?version=2`)).toEqual({ ok: true });
    expect(seen).toEqual(['/api/catalog/playbook/team.a/etl..v2/...?version=2']);
  });
});
