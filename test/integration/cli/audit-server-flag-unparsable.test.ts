// `--server 'http://[::1'` (a bracket left open) or `--server http://host:99999` looks like an http
// URL to the check most client commands made (/^https?:\/\/\S+$/), so they sent the request and
// reported "server unreachable: ... the server URL is not a valid URL", exit 3, which says "try
// again later" of a typo; svc catalog did not check at all, and svc inspect died with "Invalid
// URL: ws://[::1/api/...", exit 1. svc run and svc doctor already refused it. Each now answers a
// usage error naming --server, exit 2, nothing sent (nothing listens there anyway).
import { describe, expect, it } from 'vitest';
import { runSvc } from '../../helpers/process.ts';

const commands: string[][] = [
  ['list'],
  ['status', '1'],
  ['limits'],
  ['triggers'],
  ['agent'],
  ['mcp'],
  ['cleanup', '--dry-run'],
  ['events', 'send', 'batch.json'],
  ['catalog', 'register', 'examples/hello.yaml'],
  ['inspect', '1'],
  ['run', 'examples/hello'],
];

describe('--server that no request can go to', () => {
  it.each(commands.flatMap((args) => ['http://[::1', 'http://127.0.0.1:99999'].map((server) => [args, server] as const)))('svc %j --server %s: a usage error, exit 2', async (args, server) => {
    const r = await runSvc([...args, '--server', server], {});
    expect(r.stdout).toBe('');
    expect(r.stderr.split('\n')[0]).toBe(`svc ${args[0]}: --server expects an http(s) URL, got ${JSON.stringify(server)}`);
    expect(r.code, r.stderr).toBe(2);
  });
});
