// `secret_manager` keychain entries: each `map` field is read from a cloud secret manager's REST API.
// Three providers: Google Secret Manager, AWS Secrets Manager, Azure Key Vault. `endpoint` points
// the calls elsewhere (a private endpoint, a proxy, a local fake in tests). Reasons name the field,
// the provider and the HTTP status, never a value.
import * as v from 'valibot';
import type { Fallible } from './keychain-auth.ts';
import { sendOutbound, shownUrl, statusText, type OutboundRequest } from './keychain-http.ts';
import { SECRET_PROVIDERS, secretProvider, type SecretProvider } from '../dsl/secret-providers.ts';

export const GCP_SECRET_MANAGER_URL = 'https://secretmanager.googleapis.com';
const AZURE_KEY_VAULT_API_VERSION = '7.4';
const DEFAULT_AWS_REGION = 'us-east-1';

export type SecretManagerSpec = {
  provider: string | undefined;
  endpoint: string | undefined;
  /** AWS region (for the default endpoint). */
  region: string | undefined;
  /** Azure vault name or URL (for the default endpoint). */
  vault: string | undefined;
  /** Output field → secret path (GCP resource name, AWS SecretId, Azure secret name[/version]). */
  map: Record<string, string>;
};

/** The provider's API base: the definition's `endpoint`, else the provider's public URL. */
export function providerEndpoint(provider: SecretProvider, spec: SecretManagerSpec, env: Readonly<Record<string, string | undefined>>): Fallible<string> {
  if (spec.endpoint) return { ok: true, value: spec.endpoint.replace(/\/+$/, '') };
  switch (provider) {
    case 'gcp':
      return { ok: true, value: GCP_SECRET_MANAGER_URL };
    case 'aws': {
      const region = spec.region ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? DEFAULT_AWS_REGION;
      if (!/^[a-z0-9-]+$/.test(region)) return { ok: false, reason: `aws region '${region}' is not valid` };
      return { ok: true, value: `https://secretsmanager.${region}.amazonaws.com` };
    }
    case 'azure': {
      const vault = spec.vault;
      if (!vault) return { ok: false, reason: 'azure secret_manager entries need an endpoint (the vault URL) or a vault name' };
      if (/^https?:\/\//.test(vault)) return { ok: true, value: vault.replace(/\/+$/, '') };
      if (!/^[A-Za-z0-9-]+$/.test(vault)) return { ok: false, reason: `azure vault name '${vault}' is not valid` };
      return { ok: true, value: `https://${vault}.vault.azure.net` };
    }
  }
}

const encodePath = (path: string): string =>
  path
    .replace(/^\/+/, '')
    .split('/')
    .map((segment) => encodeURIComponent(segment))
    .join('/');

const GcpAccess = v.object({ payload: v.object({ data: v.string() }) });
const AwsValue = v.looseObject({ SecretString: v.optional(v.string()), SecretBinary: v.optional(v.string()) });
const AzureValue = v.looseObject({ value: v.string() });

function gcpRequest(endpoint: string, path: string): OutboundRequest {
  // A bare secret resource name reads its newest version.
  const name = /\/versions\/[^/]+$/.test(path) ? path : `${path.replace(/\/+$/, '')}/versions/latest`;
  return { url: `${endpoint}/v1/${encodePath(name)}:access`, method: 'GET', headers: {} };
}

function awsRequest(endpoint: string, path: string): OutboundRequest {
  return {
    url: `${endpoint}/`,
    method: 'POST',
    headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'secretsmanager.GetSecretValue' },
    data: { SecretId: path },
  };
}

function azureRequest(endpoint: string, path: string): OutboundRequest {
  return { url: `${endpoint}/secrets/${encodePath(path)}?api-version=${AZURE_KEY_VAULT_API_VERSION}`, method: 'GET', headers: {} };
}

function secretValue(provider: SecretProvider, body: unknown): string | undefined {
  switch (provider) {
    case 'gcp': {
      const parsed = v.safeParse(GcpAccess, body);
      return parsed.success ? Buffer.from(parsed.output.payload.data, 'base64').toString('utf8') : undefined;
    }
    case 'aws': {
      const parsed = v.safeParse(AwsValue, body);
      if (!parsed.success) return undefined;
      if (parsed.output.SecretString !== undefined) return parsed.output.SecretString;
      return parsed.output.SecretBinary === undefined ? undefined : Buffer.from(parsed.output.SecretBinary, 'base64').toString('utf8');
    }
    case 'azure': {
      const parsed = v.safeParse(AzureValue, body);
      return parsed.success ? parsed.output.value : undefined;
    }
  }
}

/** One secret from the provider: success only on HTTP 200 with the provider's value field. */
async function readSecret(provider: SecretProvider, endpoint: string, path: string, token: string | undefined, fetchImpl: typeof fetch): Promise<Fallible<string>> {
  const build = provider === 'gcp' ? gcpRequest : provider === 'aws' ? awsRequest : azureRequest;
  const request = build(endpoint, path);
  if (token !== undefined) request.headers.authorization = `Bearer ${token}`;
  const answer = await sendOutbound(request, fetchImpl);
  if (!answer.ok) return answer;
  if (answer.status !== 200) return { ok: false, reason: `${provider} secret manager answered ${statusText(answer.status)} at ${shownUrl(request.url)}` };
  const value = secretValue(provider, answer.body);
  return value === undefined ? { ok: false, reason: `${provider} secret manager answer has no secret value` } : { ok: true, value };
}

/** Every mapped field's secret, read in parallel; fails as a whole when any field fails. */
export async function fetchSecrets(
  spec: SecretManagerSpec,
  token: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  fetchImpl: typeof fetch = fetch,
): Promise<Fallible<Record<string, string>>> {
  const provider = secretProvider(spec.provider);
  if (!provider) {
    return { ok: false, reason: `secret_manager provider '${spec.provider ?? ''}' is not supported (use ${SECRET_PROVIDERS.join(', ')})` };
  }
  const entries = Object.entries(spec.map);
  if (entries.length === 0) return { ok: false, reason: 'secret_manager entries need a non-empty map (field → secret path)' };
  const endpoint = providerEndpoint(provider, spec, env);
  if (!endpoint.ok) return endpoint;
  const results = await Promise.all(entries.map(async ([field, path]) => [field, await readSecret(provider, endpoint.value, path, token, fetchImpl)] as const));
  const values: Record<string, string> = {};
  for (const [field, result] of results) {
    if (!result.ok) return { ok: false, reason: `field '${field}': ${result.reason}` };
    values[field] = result.value;
  }
  return { ok: true, value: values };
}
