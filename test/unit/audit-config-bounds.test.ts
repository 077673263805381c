// Values the parser took that failed later, or failed at start in another library's words:
// - SVC_GATEWAY_TRUSTED_PROXIES with a bad prefix or address (`10.0.0.0/99`, `::::`) passed its
//   character check and stopped `svc gateway` with exit 1, "invalid range on address:
//   10.0.0.0/99" (proxy-addr's words, no variable named); `1.5` was taken as 1.0.0.5.
// - SVC_SHELL_MEMORY_MB / SVC_SHELL_FILE_MB past 2^53 bytes were written `9.44e+21` to prlimit and
//   bwrap: the worker then said "the sandbox cannot run ... install bubblewrap" and refused every
//   shell task.
// - SVC_GATEWAY_SESSION_IDLE_SECONDS / _MAX_SECONDS past ~9.2e12 made every login fail in
//   PostgreSQL ("interval out of range"): the session's expiry is now() + that.
// - SVC_MCP_METADATA_URL and SVC_OIDC_ISSUER said "expects an http(s) URL" but took any scheme
//   (`ftp://`, `file:///etc/passwd`), which failed each mcp call, or the provider's discovery, later.
import { describe, expect, it } from 'vitest';
import { ConfigError, MAX_AGE_SECONDS, loadConfig } from '../../src/config.ts';

const refused = (name: string, value: string) => {
  expect(() => loadConfig({ [name]: value }), `${name}=${value}`).toThrow(ConfigError);
  expect(() => loadConfig({ [name]: value }), `${name}=${value}`).toThrow(new RegExp(`^invalid ${name}: `));
};

describe('settings refused at start rather than failing later', () => {
  it('SVC_GATEWAY_TRUSTED_PROXIES: addresses or CIDRs that are real ones', () => {
    for (const bad of ['10.0.0.0/99', '::::', '1.5', '10.0.0.1/abc', '0', '10.0.0.0/', 'fd00::/129', '10.0.0.0/255.0.255.0', '127.0.0.1,10.0.0.0/33']) refused('SVC_GATEWAY_TRUSTED_PROXIES', bad);
    for (const good of ['10.0.0.1', '10.0.0.0/8', '::1', 'fd00::/8', '10.0.0.0/255.0.0.0', '127.0.0.1, 10.0.0.0/8', '::ffff:10.0.0.0/104', '0.0.0.0/0']) {
      expect(loadConfig({ SVC_GATEWAY_TRUSTED_PROXIES: good }).SVC_GATEWAY_TRUSTED_PROXIES, good).toBe(good);
    }
  });

  it('SVC_SHELL_MEMORY_MB and SVC_SHELL_FILE_MB: at most 2^53 bytes (8,589,934,591 MB)', () => {
    for (const name of ['SVC_SHELL_MEMORY_MB', 'SVC_SHELL_FILE_MB']) {
      refused(name, '8589934592');
      refused(name, '9007199254740991');
      expect((loadConfig({ [name]: '8589934591' }) as Record<string, unknown>)[name]).toBe(8_589_934_591);
    }
  });

  it('SVC_GATEWAY_SESSION_IDLE_SECONDS and _MAX_SECONDS: at most MAX_AGE_SECONDS, as other ages', () => {
    for (const name of ['SVC_GATEWAY_SESSION_IDLE_SECONDS', 'SVC_GATEWAY_SESSION_MAX_SECONDS']) {
      refused(name, String(MAX_AGE_SECONDS + 1));
      refused(name, '9300000000000');
      expect((loadConfig({ [name]: String(MAX_AGE_SECONDS) }) as Record<string, unknown>)[name]).toBe(MAX_AGE_SECONDS);
    }
  });

  it('SVC_MCP_METADATA_URL and SVC_OIDC_ISSUER: http(s) URLs only, as their messages say', () => {
    for (const name of ['SVC_MCP_METADATA_URL', 'SVC_OIDC_ISSUER']) {
      for (const bad of ['ftp://127.0.0.1/token', 'file:///etc/passwd', 'mailto:a@b.c']) refused(name, bad);
      expect((loadConfig({ [name]: 'http://169.254.169.254/token' }) as Record<string, unknown>)[name]).toBe('http://169.254.169.254/token');
    }
  });
});
