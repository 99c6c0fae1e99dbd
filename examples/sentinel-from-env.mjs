// The sentinel both example services share, configured from the environment as a Kubernetes
// Deployment would (see k8s/deployment.yaml):
//
//   BILLING_URL            https URL of the account endpoint                        (required)
//   BILLING_API_KEY        the credential (read by the addon; never logged)          (required)
//   BILLING_CAPABILITY     the meter the tier must include         (default meter.requests)
//   BILLING_CA_FILE        PEM file of a private CA that signs the authority's certificate
//   BUDGET_UNITS           b, fleet-wide unverified units                      (default 200)
//   MAX_UNITS_PER_SECOND   r, this pod's maximum admission rate                 (default 20)
//   REPLICAS               nodes sharing b                                       (default 2)
//   PORT                   listening port; 0 picks one                         (default 3000)
//   DRAIN_DELAY_MS, SHUTDOWN_TIMEOUT_MS                     (defaults 5000 and 30000)
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const { Sentinel } = createRequire(import.meta.url)('spend-sentinel');

const number = (name, fallback) => (process.env[name] === undefined ? fallback : Number(process.env[name]));

export function sentinelFromEnv() {
  return new Sentinel({
    budget: {
      unverifiedUnits: number('BUDGET_UNITS', 200),
      maxUnitsPerSecond: number('MAX_UNITS_PER_SECOND', 20),
      nodes: number('REPLICAS', 2),
    },
    authority: {
      url: process.env.BILLING_URL,
      credentialEnv: 'BILLING_API_KEY',
      requiredCapability: process.env.BILLING_CAPABILITY ?? 'meter.requests',
      ...(process.env.BILLING_CA_FILE && { caPem: readFileSync(process.env.BILLING_CA_FILE, 'utf8') }),
    },
  });
}

export const port = number('PORT', 3000);
export const shutdownOptions = {
  drainDelayMs: number('DRAIN_DELAY_MS', 5000),
  timeoutMs: number('SHUTDOWN_TIMEOUT_MS', 30000),
};

/** The client-facing guard every example mounts after the probes: callers need an API key. */
export const API_KEYS = new Set((process.env.SERVICE_API_KEYS ?? 'demo-key').split(','));
export const unitsOf = (body) => (Number.isFinite(body?.units) ? body.units : 1);
