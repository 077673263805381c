import * as v from 'valibot';
import { isLoopbackHost, MCP_TOKEN_HOSTS_DEFAULT } from '../../config.ts';
import { answerText } from './answer-limit.ts';
import { credentialAuth } from './credential-auth.ts';
import { describeError } from './outcome.ts';
import type { TaskOutcomeCode } from '../../../machines/error-codes.ts';
import type { ResolvedCredential } from '../../protocol.ts';

// The metadata service answers locally; a slow one means it is not there.
const MCP_METADATA_TIMEOUT_MS = 5_000;
const MetadataTokenSchema = v.looseObject({ access_token: v.pipe(v.string(), v.nonEmpty()) });

export type McpAuth =
  | { ok: true; headers: Record<string, string>; query: Record<string, string>; secrets: string[] }
  | { ok: false; code: TaskOutcomeCode; message: string };

/**
 * The headers that authenticate an MCP request, first found wins: the task's `access_token`
 * (workload.access_token), the task's credential, env GOOGLE_OAUTH_ACCESS_TOKEN, then the metadata
 * service when SVC_MCP_METADATA_URL is set, these two only for an endpoint on a host of
 * SVC_MCP_TOKEN_HOSTS. No token at all is allowed (an open server).
 */
export async function mcpAuth(
  endpoint: URL,
  accessToken: string | undefined,
  credential: ResolvedCredential | undefined,
  env: Readonly<Record<string, string | undefined>>,
  signal: AbortSignal,
): Promise<McpAuth> {
  const bearer = (token: string): McpAuth => ({ ok: true, headers: { Authorization: `Bearer ${token}` }, query: {}, secrets: [token] });
  if (accessToken) return bearer(accessToken);
  if (credential) {
    const auth = await credentialAuth(credential, signal);
    return auth;
  }
  // The worker's own token goes only where its operator said: a playbook names any endpoint, and
  // would otherwise receive the worker's identity there. Elsewhere the call goes without one.
  // Empty is unset, as the parser has it (src/config.ts validated this value at start): the default.
  if (!mayReceiveWorkerToken(endpoint, env.SVC_MCP_TOKEN_HOSTS || MCP_TOKEN_HOSTS_DEFAULT)) return { ok: true, headers: {}, query: {}, secrets: [] };
  const envToken = env.GOOGLE_OAUTH_ACCESS_TOKEN;
  if (envToken) return bearer(envToken);
  const metadataUrl = env.SVC_MCP_METADATA_URL;
  if (!metadataUrl) return { ok: true, headers: {}, query: {}, secrets: [] };

  const failed = (why: string): McpAuth => ({ ok: false, code: 'auth', message: `MCP access token from the metadata service failed: ${why}` });
  try {
    const response = await fetch(metadataUrl, {
      headers: { 'Metadata-Flavor': 'Google' },
      signal: AbortSignal.any([signal, AbortSignal.timeout(MCP_METADATA_TIMEOUT_MS)]),
    });
    if (!response.ok) return failed(`HTTP ${response.status}`);
    const parsed = v.safeParse(MetadataTokenSchema, JSON.parse(await answerText(response)));
    return parsed.success ? bearer(parsed.output.access_token) : failed('the response has no access_token');
  } catch (error) {
    return failed(describeError(error));
  }
}

/**
 * Whether `endpoint`'s host is one of `hosts` (comma separated) or a subdomain of one, reached over
 * https (or plain http on this machine's loopback, which no network carries).
 */
export function mayReceiveWorkerToken(endpoint: URL, hosts: string): boolean {
  const host = endpoint.hostname.toLowerCase();
  // A listed host named with http:// would receive the worker's identity in clear text on the way.
  if (endpoint.protocol !== 'https:' && !isLoopbackHost(host)) return false;
  return hosts
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .some((name) => name !== '' && (host === name || host.endsWith(`.${name}`)));
}
