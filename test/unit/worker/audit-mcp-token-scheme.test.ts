import { describe, expect, it } from 'vitest';
import { mayReceiveWorkerToken } from '../../../src/worker/tools/mcp-auth.ts';

// The worker's own identity (GOOGLE_OAUTH_ACCESS_TOKEN, the metadata service's token) goes to a
// listed host only where no network can read it on the way.
describe("the worker's own MCP token", () => {
  it('goes to a listed host over https', () => {
    expect(mayReceiveWorkerToken(new URL('https://aiplatform.googleapis.com/mcp'), 'googleapis.com')).toBe(true);
    expect(mayReceiveWorkerToken(new URL('https://googleapis.com/mcp'), 'googleapis.com')).toBe(true);
  });

  it('never to a listed host named with http://', () => {
    expect(mayReceiveWorkerToken(new URL('http://aiplatform.googleapis.com/mcp'), 'googleapis.com')).toBe(false);
    expect(mayReceiveWorkerToken(new URL('http://mcp.internal.example/mcp'), 'internal.example')).toBe(false);
  });

  it('over plain http only on loopback, where no network carries it', () => {
    expect(mayReceiveWorkerToken(new URL('http://127.0.0.1:9000/mcp'), '127.0.0.1')).toBe(true);
    expect(mayReceiveWorkerToken(new URL('http://localhost:9000/mcp'), 'localhost')).toBe(true);
  });

  it('never to a host not listed, whatever the scheme', () => {
    expect(mayReceiveWorkerToken(new URL('https://evil.example/googleapis.com'), 'googleapis.com')).toBe(false);
    expect(mayReceiveWorkerToken(new URL('https://googleapis.com.evil.example/'), 'googleapis.com')).toBe(false);
  });
});
