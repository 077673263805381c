// What the gateway's answers tell a browser, as a browser asks for them: its console page, the API
// docs it forwards, its login and logout routes (as a navigation, another site's one too), its
// refusals and the redirect of a path link. Every HTML answer carries a page policy that refuses
// inline script and other origins; every other answer one that loads and runs nothing; none may be
// framed or have its type guessed; markup in a path link comes back encoded, never as markup.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionCookieName } from '../../../src/gateway/cookies.ts';
import { CONSOLE_POLICY, DOCS_POLICY } from '../../../src/security-headers.ts';
import { startConsoleStack, type ConsoleStack } from '../../helpers/console-stack.ts';
import { ensureGuiBuilt } from '../../helpers/gui-build.ts';

const SECRET = 'gateway-secret-for-the-pages-policy-test-0123456789';
let cs: ConsoleStack | undefined;

beforeAll(async () => {
  ensureGuiBuilt();
  cs = await startConsoleStack(SECRET);
}, 120_000);
afterAll(async () => {
  await cs?.close();
});

/** A navigation's request (what a browser sends for a link followed from `site`), not following redirects. */
const navigate = (path: string, site = 'none') =>
  fetch(`${cs!.pub}${path}`, {
    redirect: 'manual',
    // A session cookie (of no session): the gateway holds a request that has one to its CSRF rule.
    headers: { accept: 'text/html,*/*', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document', 'sec-fetch-site': site, cookie: `${sessionCookieName(cs!.pub)}=not-a-session` },
  });

describe('the gateway’s answers to a browser', () => {
  it('carry a policy that runs nothing foreign or inline, on pages, redirects and refusals alike', async () => {
    const answers: [string, string, number, string][] = [
      ['/', 'none', 200, CONSOLE_POLICY],
      ['/docs', 'none', 200, DOCS_POLICY],
      ['/redoc', 'none', 200, DOCS_POLICY],
      ['/auth/login?return_to=javascript:alert(1)', 'none', 302, ''],
      ['/auth/logout', 'cross-site', 403, ''],
      ['/auth/callback?code=x&state=<script>alert(1)</script>', 'none', 400, ''],
      ['/auth/me', 'none', 401, ''],
      ['/api/executions', 'none', 401, ''],
      ['/api/nothing-here<img src=x onerror=alert(1)>', 'none', 401, ''],
      ['/health', 'none', 200, ''],
    ];
    for (const [path, site, status, pagePolicy] of answers) {
      const res = await navigate(path, site);
      const body = await res.text();
      const what = `${path}: ${res.status} ${body.slice(0, 200)}`;
      expect(res.status, what).toBe(status);
      expect(res.headers.get('x-content-type-options'), what).toBe('nosniff');
      expect(res.headers.get('x-frame-options'), what).toBe('DENY');
      const type = res.headers.get('content-type') ?? '';
      if (pagePolicy) {
        expect(type, what).toMatch(/^text\/html/);
        expect(res.headers.get('content-security-policy'), what).toBe(pagePolicy);
      } else {
        expect(type, what).not.toMatch(/html|xml/);
        expect(res.headers.get('content-security-policy'), what).toBe("default-src 'none'; frame-ancestors 'none'");
      }
    }
    // The provider is sent there for the login; the return address is kept to this site's paths.
    const login = await navigate('/auth/login?return_to=javascript:alert(1)');
    expect(login.headers.get('location')).toMatch(new RegExp(`^${cs!.idp.issuer}`));
  });

  it('sends a path link to the console’s route with its markup encoded', async () => {
    const res = await navigate('/executions/<svg onload=alert(1)>?x="><script>alert(1)</script>');
    expect(res.status).toBe(302);
    const location = res.headers.get('location') ?? '';
    expect(location.startsWith('/#/executions/')).toBe(true);
    expect(location).not.toMatch(/[<>"]/);
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
  });
});
