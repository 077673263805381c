// A URL with a user name or password: fetch refuses it and its error quotes the URL, password and
// all, so a task's or an MCP server's URL must hold none (a credential goes in `auth`). Pure: the
// playbook and Mcp schemas check literals with it, the worker rendered ones.

/** What a literal URL is told at registration. */
export const USERINFO_PROBLEM = 'must not hold a user name or password: name a credential in auth';
/** ...and a rendered one, in its task's invalid_task (as the worker's other field checks say it). */
export const RENDERED_USERINFO_PROBLEM = 'expected a URL without a user name or password (name a credential in auth)';

/** True when `text` is a URL with a user name or password. */
export function holdsUserinfo(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const url = new URL(text);
  return url.username !== '' || url.password !== '';
}
