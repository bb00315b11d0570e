import { readFile } from 'node:fs/promises';
import type { OidcSettings } from '../services/oidc.js';
import type { Config } from './options.js';

/** What is wrong with the --oidc-* options together (a usage error, exit 2), or undefined. */
export function oidcProblem(config: Config): string | undefined {
  if (!config.oidcIssuer) {
    if (config.oidcOnly) return '--oidc-only needs --oidc-issuer';
    return undefined;
  }
  if (!config.oidcClientId) return '--oidc-issuer needs --oidc-client-id';
  if (config.oidcClientSecret && config.oidcClientSecretFile) return 'give either --oidc-client-secret or --oidc-client-secret-file, not both';
  return undefined;
}

/** The single sign-on settings, with the client secret read from its file; undefined when --oidc-issuer is unset. */
export async function loadOidcSettings(config: Config): Promise<OidcSettings | undefined> {
  if (!config.oidcIssuer) return undefined;
  const problem = oidcProblem(config);
  if (problem) throw new Error(problem);
  let clientSecret = config.oidcClientSecret;
  if (config.oidcClientSecretFile) {
    try {
      clientSecret = (await readFile(config.oidcClientSecretFile, 'utf8')).replace(/\r?\n$/, '');
    } catch (e) {
      throw new Error(`cannot read --oidc-client-secret-file ${config.oidcClientSecretFile}: ${(e as Error).message}`, { cause: e });
    }
  }
  return {
    issuer: config.oidcIssuer,
    clientId: config.oidcClientId,
    clientSecret,
    scopes: config.oidcScopes,
    usernameClaim: config.oidcUsernameClaim,
    groupsClaim: config.oidcGroupsClaim,
    adminGroup: config.oidcAdminGroup,
    createUsers: config.oidcCreateUsers,
    buttonLabel: config.oidcButtonLabel,
    only: config.oidcOnly,
  };
}
