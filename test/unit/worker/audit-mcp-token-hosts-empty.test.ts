// SVC_MCP_TOKEN_HOSTS set to the empty string (an env file's `SVC_MCP_TOKEN_HOSTS=`, compose's
// `${SVC_MCP_TOKEN_HOSTS:-}`) is unset to the parser, which every variable's empty value is
// (docs/operations.md, *Settings*): googleapis.com. The worker's mcp tool read the raw variable
// instead and took '' for no host at all, so its Google token went nowhere and every mcp task to
// a Google endpoint failed its authorization.
import { expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.ts';
import { mcpAuth } from '../../../src/worker/tools/mcp-auth.ts';

it("an empty SVC_MCP_TOKEN_HOSTS is the parser's default on the worker too", async () => {
  expect(loadConfig({ SVC_MCP_TOKEN_HOSTS: '' }).SVC_MCP_TOKEN_HOSTS).toBe('googleapis.com');
  const env = { SVC_MCP_TOKEN_HOSTS: '', GOOGLE_OAUTH_ACCESS_TOKEN: 'ya29.worker' };
  const auth = await mcpAuth(new URL('https://aiplatform.googleapis.com/mcp'), undefined, undefined, env, AbortSignal.timeout(1000));
  expect(auth).toMatchObject({ ok: true, headers: { Authorization: 'Bearer ya29.worker' } });
  const elsewhere = await mcpAuth(new URL('https://mcp.example.com/mcp'), undefined, undefined, env, AbortSignal.timeout(1000));
  expect(elsewhere).toMatchObject({ ok: true, headers: {} });
});
