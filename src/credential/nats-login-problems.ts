import { natsUserSeedProblem, parseNatsCreds } from './nats-creds.ts';
import { natsServerUrl } from './nats-server-url.ts';

// A `nats` credential's login checked as it is stored (src/credential/credential-types.ts), apart
// from the connect options made of it (nats-credential-login.ts): checking loads no NATS client.

// The login kinds; a credential holds one. user and password are one kind.
const LOGIN_KINDS: readonly (readonly string[])[] = [['user', 'password'], ['token'], ['creds'], ['nkey']];
const COUNT = ['', 'one', 'two', 'three', 'four'];
const given = (data: Record<string, unknown>, name: string) => data[name] !== undefined && data[name] !== null && data[name] !== '';

/**
 * The problems of a `nats` credential's login, in the credentials API's words (each names its
 * field, none quotes a value): two login kinds, a URL login beside a key login, a `creds` that is
 * not a .creds text, an `nkey` that is not a user seed. Empty when the login is sound.
 */
export function natsLoginProblems(data: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const kinds = LOGIN_KINDS.map((kind) => kind.filter((name) => given(data, name))).filter((names) => names.length > 0);
  if (kinds.length > 1) {
    const named = kinds.map((names) => `'${names[0]}'`);
    const list = `${named.slice(0, -1).join(', ')} and ${named.at(-1)}`;
    problems.push(`Fields ${list} are ${COUNT[kinds.length]} logins; a nats credential holds one: user/password, token, creds or nkey`);
  }
  const keyField = given(data, 'creds') ? 'creds' : given(data, 'nkey') ? 'nkey' : undefined;
  const urlField = typeof data.url === 'string' && data.url.trim() !== '' ? 'url' : 'servers';
  const text = natsServerUrl(data);
  if (keyField && text && URL.canParse(text)) {
    const url = new URL(text);
    if (url.username || url.password) problems.push(`Field '${urlField}' carries a login (user info) and '${keyField}' another: keep one`);
  }
  if (typeof data.creds === 'string' && data.creds !== '') {
    const parsed = parseNatsCreds(data.creds);
    if ('problem' in parsed) problems.push(parsed.problem);
  }
  if (typeof data.nkey === 'string' && data.nkey !== '') {
    const problem = natsUserSeedProblem(data.nkey);
    if (problem) problems.push(problem);
  }
  return problems;
}
