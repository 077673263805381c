// A secret cut by an output cap is masked whole: a real `svc worker` with the smallest shell
// output cap (SVC_SHELL_OUTPUT_BYTES=1024) runs a shell task that prints filler up to a few bytes
// before the cap, then a keychain token (and, on stderr, the token's base64). The cap kept the
// first characters of each and the mask, applied to the capped text, no longer saw a whole
// secret: `xxx…KcTokSecre\n[truncated: 18 bytes omitted]` was stored, most of the token in the clear.
// So did an mcp task's error, which quotes the tool's error text cut at 500 characters.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIN_SECRET_LENGTH, SECRET_MASK } from '../../../src/credential/redact-secrets.ts';
import { http } from '../../helpers/http.ts';
import { startMcpServer, type TestMcpServer } from '../../helpers/mcp-server.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

const OUTPUT_BYTES = 1024;
const TOKEN = 'KcTokSecretABCDEFGHIJKLMNOP';
const TOKEN_BASE64 = Buffer.from(TOKEN).toString('base64');
// Filler that leaves room for this many characters of the secret before the cap.
const KEPT = 10;

let s: WorkerStack;
let db: pg.Client;
let mcp: TestMcpServer;

beforeAll(async () => {
  mcp = await startMcpServer();
  s = await startWorkerStack({ workers: 1, workerEnv: { SVC_SHELL_OUTPUT_BYTES: String(OUTPUT_BYTES) } });
  db = new pg.Client({ connectionString: s.databaseUrl });
  await db.connect();
}, 120_000);
afterAll(async () => {
  await db?.end();
  await s?.close();
  await mcp?.close();
});

/** Stores `token` as the global keychain entry `tok` of the playbook registered as `catalogId`. */
async function storeToken(catalogId: unknown): Promise<void> {
  const stored = await http(s.url, 'POST', `/api/keychain/${String(catalogId)}/tok`, {
    token_data: { access_token: TOKEN },
    credential_type: 'bearer',
    cache_type: 'secret',
    scope_type: 'global',
    ttl_seconds: 3600,
  });
  expect(stored.status).toBeLessThan(300);
}

/** Fails when a text of the execution (API, events, table rows) holds a beginning of one of `secrets`. */
async function expectNoBeginning(id: number, execution: unknown, secrets: string[]): Promise<void> {
  const events = await s.events(id);
  const rows = (await db.query('SELECT context, result, error FROM core.event WHERE execution_id = $1', [id])).rows;
  const texts = { events: JSON.stringify(events), table: JSON.stringify(rows), execution: JSON.stringify(execution) };
  for (const [where, text] of Object.entries(texts)) {
    for (const part of secrets.flatMap(beginnings)) expect(text.includes(part), `${where} holds ${JSON.stringify(part)}`).toBe(false);
  }
}

const playbook = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: cut, path: masking/cut }
workflow:
  - step: start
    tool:
      - name: cut
        kind: shell
        command: 'head -c ${OUTPUT_BYTES - KEPT} /dev/zero | tr "\\0" x; printf "%s\\n" "$TOK"; head -c ${OUTPUT_BYTES - KEPT} /dev/zero | tr "\\0" y >&2; printf "%s" "$TOK" | base64 >&2'
        env: { TOK: "{{ keychain.tok.access_token }}" }
`;

/** Every beginning of `secret` long enough to be masked (MIN_SECRET_LENGTH characters or more). */
const beginnings = (secret: string): string[] => Array.from({ length: secret.length - MIN_SECRET_LENGTH + 1 }, (_, i) => secret.slice(0, MIN_SECRET_LENGTH + i));

describe('a secret cut by the shell output cap', () => {
  it('is masked, not stored in part', async () => {
    await storeToken((await s.register(playbook)).catalog_id);
    const id = await s.run('masking/cut');
    const execution = await s.wait(id, 30_000);
    expect(execution.status).toBe('completed');

    // The cap did cut both streams inside the secret (else this test proves nothing).
    const { stdout, stderr } = execution.result as { stdout: string; stderr: string };
    expect(stdout).toMatch(/\n\[truncated: \d+ bytes omitted\]$/);
    expect(stderr).toMatch(/\n\[truncated: \d+ bytes omitted\]$/);
    expect(stdout.startsWith('x'.repeat(OUTPUT_BYTES - KEPT))).toBe(true);

    await expectNoBeginning(id, execution, [TOKEN, TOKEN_BASE64]);
    // The cut secret is masked where it was cut; what came before it is kept.
    expect(stdout).toBe(`${'x'.repeat(OUTPUT_BYTES - KEPT)}${SECRET_MASK}\n[truncated: ${TOKEN.length + 1 - KEPT} bytes omitted]`);
    expect(stderr).toBe(`${'y'.repeat(OUTPUT_BYTES - KEPT)}${SECRET_MASK}\n[truncated: ${TOKEN_BASE64.length + 1 - KEPT} bytes omitted]`);
  });
});

const mcpPlaybook = (endpoint: string) => `
apiVersion: svc/v1
kind: Playbook
metadata: { name: cut_mcp, path: masking/cut_mcp }
workload: { filler: "" }
workflow:
  - step: start
    tool:
      - name: call
        kind: mcp
        endpoint: "${endpoint}"
        method: tools/call
        tool: fail
        arguments: { text: "{{ workload.filler }}{{ keychain.tok.access_token }}" }
`;

describe("a secret cut in an mcp tool's error text", () => {
  it('is masked, not stored in part', async () => {
    await storeToken((await s.register(mcpPlaybook(mcp.url))).catalog_id);
    // The error quotes the tool's text up to 500 characters: the token begins KEPT before.
    const id = await s.run('masking/cut_mcp', { filler: 'z'.repeat(500 - KEPT) });
    const execution = await s.wait(id, 30_000);
    expect(execution.status).toBe('failed');
    const message = (execution.error as { message: string }).message;
    expect(message).toBe(`MCP tool 'fail' returned an error: ${'z'.repeat(500 - KEPT)}${SECRET_MASK}…`);
    await expectNoBeginning(id, execution, [TOKEN]);
  });
});
