// The sentinel both example services share, configured by the environment alone, as a Kubernetes
// Deployment configures it (see k8s/deployment.yaml). Every SPEND_SENTINEL_* variable is an option
// (the list: docs/api.md, Options from the environment); these services use
//
//   SPEND_SENTINEL_BUDGET_UNVERIFIED_UNITS        b, fleet-wide unverified units           (required)
//   SPEND_SENTINEL_BUDGET_MAX_UNITS_PER_SECOND    r, this pod's maximum admission rate     (required)
//   SPEND_SENTINEL_BUDGET_NODES                   nodes sharing b (or SPEND_SENTINEL_BUDGET_FLEET_*)
//   SPEND_SENTINEL_AUTHORITY_URL                  https URL of the account endpoint       (required)
//   SPEND_SENTINEL_AUTHORITY_CREDENTIAL_ENV       the name of the variable holding the credential
//                                                 (BILLING_API_KEY; read by the addon, never logged)
//   SPEND_SENTINEL_AUTHORITY_REQUIRED_CAPABILITY  the meter the tier must include          (required)
//   SPEND_SENTINEL_AUTHORITY_CA_PEM               PEM of a private CA that signs the authority's
//                                                 certificate                              (optional)
//
// and their own:
//
//   PORT                   listening port; 0 picks one                         (default 3000)
//   DRAIN_DELAY_MS, SHUTDOWN_TIMEOUT_MS                     (defaults 5000 and 30000)
//   SERVICE_API_KEYS       the API keys clients send as x-api-key          (default demo-key)
//
// A missing or bad variable stops the service at once, with an error naming the variable.
import { createRequire } from 'node:module';

const { Sentinel } = createRequire(import.meta.url)('spend-sentinel');

const number = (name, fallback) => (process.env[name] === undefined ? fallback : Number(process.env[name]));

export const sentinelFromEnv = () => Sentinel.fromEnv(process.env);

export const port = number('PORT', 3000);
export const shutdownOptions = {
  drainDelayMs: number('DRAIN_DELAY_MS', 5000),
  timeoutMs: number('SHUTDOWN_TIMEOUT_MS', 30000),
};

/** The client-facing guard every example mounts after the probes: callers need an API key. */
export const API_KEYS = new Set((process.env.SERVICE_API_KEYS ?? 'demo-key').split(','));
export const unitsOf = (body) => (Number.isFinite(body?.units) ? body.units : 1);
