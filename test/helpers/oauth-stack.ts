import { DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET, startHttpTarget, type HttpTarget } from './http-target.ts';
import { http } from './http.ts';
import { startTestStack, type TestStack } from './stack.ts';

/**
 * A token endpoint (startHttpTarget's `/token`) and a test stack of one worker with two slots,
 * holding an oauth2 credential `name` whose tokens come from that endpoint: the keychain tests' bed.
 */
export async function startOAuthStack(name: string): Promise<{ s: TestStack; target: HttpTarget }> {
  const target = await startHttpTarget();
  try {
    const s = await startTestStack({ workers: 1, concurrency: 2 });
    const cred = await http(s.url, 'POST', '/api/credentials', {
      name,
      type: 'oauth2',
      data: { client_id: DEFAULT_CLIENT_ID, client_secret: DEFAULT_CLIENT_SECRET, token_url: `${target.url}/token` },
    });
    if (cred.status !== 201) {
      await s.close();
      throw new Error(`the credential ${name} was not stored: ${cred.status} ${JSON.stringify(cred.body)}`);
    }
    return { s, target };
  } catch (err) {
    await target.close();
    throw err;
  }
}
