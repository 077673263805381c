// A server URL with a user name and password (`--server http://ops:pw@host`, or SVC_SERVER_URL so)
// is never sent: the HTTP client refuses it. svc doctor then printed the password in its outcome
// (`summary`, `server`, the readable heading: 'cannot reach the server at http://ops:pw@…'), svc
// doctor serve in its banner, svc cleanup in 'server http://ops:pw@… unreachable', svc run and svc
// catalog register likewise; each as exit 3, 'try again later' of a URL no retry can reach. Such a
// URL is now refused before anything runs, naming where it came from and never quoting it: a usage
// error (doctor's exit 3, the others' 2; a bad SVC_SERVER_URL is a configuration error, 78).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { runSvc } from '../../helpers/process.ts';

const PASSWORD = 'pw-9f3c1d0e77';
let target: HttpTarget;
let withPassword: string;

beforeAll(async () => {
  target = await startHttpTarget();
  const url = new URL(target.url);
  url.username = 'ops';
  url.password = PASSWORD;
  withPassword = url.toString().replace(/\/$/, '');
});
afterAll(async () => target?.close());

const commands: [string[], number, number][] = [
  // args, exit for --server, exit for SVC_SERVER_URL
  [['doctor', 'reachability'], 3, 3],
  [['doctor', 'repair', '--json'], 3, 3],
  [['doctor', 'detect', '--text'], 3, 3],
  [['doctor', 'serve', '--port', '0'], 3, 3],
  [['cleanup', '--dry-run'], 2, 78],
  [['run', 'examples/hello'], 2, 78],
  [['catalog', 'register', 'examples/hello.yaml'], 2, 78],
  [['list'], 2, 78],
];

describe('a server URL holding a password', () => {
  it.each(commands)('svc %j --server: refused unsent, the password never printed', async (args, code) => {
    const r = await runSvc([...args, '--server', withPassword], { SVC_LOG_LEVEL: 'warn' });
    expect(r.stdout + r.stderr).not.toContain(PASSWORD);
    expect(r.stderr).toMatch(/--server must not hold a user name or password/);
    expect(r.code, r.stderr).toBe(code);
  });

  it.each(commands)('svc %j with SVC_SERVER_URL: refused unsent, the password never printed', async (args, _code, code) => {
    const r = await runSvc(args, { SVC_LOG_LEVEL: 'warn', SVC_SERVER_URL: withPassword });
    expect(r.stdout + r.stderr).not.toContain(PASSWORD);
    expect(r.stderr).toMatch(/SVC_SERVER_URL: .*without a user name or password/);
    expect(r.code, r.stderr).toBe(code);
  });

  it('nothing reached the server', () => {
    expect(target.requests).toEqual([]);
  });
});
