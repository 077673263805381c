// The secret managers a `secret_manager` keychain entry reads (the spec's three cloud providers),
// by every name `provider:` may give them: registration checks a literal one, the worker reads it.

export const SECRET_PROVIDERS = ['gcp', 'aws', 'azure'] as const;
export type SecretProvider = (typeof SECRET_PROVIDERS)[number];

const PROVIDER_ALIASES: Record<string, SecretProvider> = {
  gcp: 'gcp',
  google: 'gcp',
  gcp_secret_manager: 'gcp',
  aws: 'aws',
  amazon: 'aws',
  aws_secrets_manager: 'aws',
  azure: 'azure',
  azure_key_vault: 'azure',
};

/** Every name `provider:` takes, for a refusal's did-you-mean. */
export const SECRET_PROVIDER_NAMES: readonly string[] = Object.keys(PROVIDER_ALIASES);

export function secretProvider(name: string | undefined): SecretProvider | undefined {
  return name === undefined || !Object.hasOwn(PROVIDER_ALIASES, name.toLowerCase()) ? undefined : PROVIDER_ALIASES[name.toLowerCase()];
}
