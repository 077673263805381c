import { describe, expect, it } from 'vitest';
import { namesCredential, type CommandGrants } from '../../../src/credential/names-credential.ts';

const grants = (tasks: unknown[], extra: Partial<CommandGrants> = {}): CommandGrants => ({ tasks, context: { workload: { cred: 'from_workload', srv: 's1' } }, keychain: [], mcp_servers: [], ...extra });

describe('namesCredential: the credentials a command was given, as its worker will use them', () => {
  it("a task's auth, as written or rendered with the command's context", () => {
    expect(namesCredential(grants([{ kind: 'noop', auth: 'a' }]), 'a')).toBe(true);
    expect(namesCredential(grants([{ kind: 'noop', auth: 'a' }]), 'b')).toBe(false);
    expect(namesCredential(grants([{ kind: 'noop', auth: '{{ workload.cred }}' }]), 'from_workload')).toBe(true);
    // A template the server cannot render (this command's own outcomes) names nothing.
    expect(namesCredential(grants([{ kind: 'noop', auth: '{{ tasks.first.data.name }}' }]), 'x')).toBe(false);
    expect(namesCredential({ tasks: 'not a list', context: null, keychain: null, mcp_servers: [] }, 'a')).toBe(false);
  });

  it("an mcp task's registered server's auth, only when the task names none", () => {
    const viaServer = { kind: 'mcp', server: '{{ workload.srv }}', method: 'tools/list' };
    expect(namesCredential(grants([viaServer], { mcp_servers: ['s1'] }), 'srv_auth')).toBe(true);
    expect(namesCredential(grants([viaServer], { mcp_servers: ['s2'] }), 'srv_auth')).toBe(false);
    expect(namesCredential(grants([{ ...viaServer, auth: 'own' }], { mcp_servers: ['s1'] }), 'srv_auth')).toBe(false);
    expect(namesCredential(grants([{ kind: 'http', server: 's1' }], { mcp_servers: ['s1'] }), 'srv_auth')).toBe(false);
  });

  it("the auth of a keychain entry a task's templates read, not of one no task reads", () => {
    const keychain = [
      { name: 'tok', kind: 'oauth2', auth: 'kc_auth' },
      { name: 'rendered', kind: 'oauth2', auth: '{{ workload.cred }}' },
      { name: 'unread', kind: 'oauth2', auth: 'unread_auth' },
    ];
    const tasks = [{ kind: 'http', url: 'http://x', headers: { a: '{{ keychain.tok.access_token }}', b: "{{ keychain['rendered'].t }}" } }];
    expect(namesCredential(grants(tasks, { keychain }), 'kc_auth')).toBe(true);
    expect(namesCredential(grants(tasks, { keychain }), 'from_workload')).toBe(true);
    expect(namesCredential(grants(tasks, { keychain }), 'unread_auth')).toBe(false);
  });
});
