import type { FastifyInstance, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { Sentinel } from '../index';
import type * as common from './common';

/** The plugin: `await app.register(spendSentinel, { sentinel, ...probeOptions })`. */
declare function spendSentinel(instance: FastifyInstance, options: spendSentinel.PluginOptions): Promise<void>;

declare namespace spendSentinel {
  export interface PluginOptions extends common.ProbeOptions {
    sentinel: Sentinel;
    /** Log level of the probe routes. Default `"warn"` (probes are frequent). */
    logLevel?: string;
  }
  export type ProbeOptions = common.ProbeOptions;
  export type AdmissionOptions = common.AdmissionOptions<FastifyRequest>;
  export type GracefulShutdownOptions = common.GracefulShutdownOptions;
  export type ShutdownHandle = common.ShutdownHandle;
  export type NotAdmittedBody = common.NotAdmittedBody;

  /** A preHandler: admitted → continue; refused → 503 with `Retry-After`. */
  export function admission(sentinel: Sentinel, options?: AdmissionOptions): preHandlerAsyncHookHandler;
  /** On SIGTERM/SIGINT: drain, wait, `app.close()`, close the sentinel, exit 0. */
  export function gracefulShutdown(app: FastifyInstance, sentinel: Sentinel, options?: GracefulShutdownOptions): ShutdownHandle;
  export { spendSentinel, spendSentinel as default };
}

export = spendSentinel;
