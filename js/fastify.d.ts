import type {
  FastifyInstance,
  FastifyRequest,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
  RouteGenericInterface,
  preHandlerAsyncHookHandler,
} from 'fastify';
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
  /** Options of `admission`; `units` gets the route's request (`RouteGeneric`: `{ Body, Querystring, Params, Headers }`). */
  export type AdmissionOptions<RouteGeneric extends RouteGenericInterface = RouteGenericInterface> = common.AdmissionOptions<FastifyRequest<RouteGeneric>>;
  export type GracefulShutdownOptions = common.GracefulShutdownOptions;
  export type ShutdownHandle = common.ShutdownHandle;
  export type NotAdmittedBody = common.NotAdmittedBody;

  /**
   * A preHandler: admitted → continue; refused → 503 with `Retry-After`. Generic over the route's
   * `RouteGeneric`, as Fastify's own handlers are: `units` sees the route's typed request, e.g.
   * `app.post<{ Body: { units: number } }>(path, { preHandler: admission(sentinel, { units: (req) => req.body.units }) }, handler)`.
   */
  export function admission<RouteGeneric extends RouteGenericInterface = RouteGenericInterface>(
    sentinel: Sentinel,
    options?: AdmissionOptions<RouteGeneric>,
  ): preHandlerAsyncHookHandler<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, RouteGeneric>;
  /** On SIGTERM/SIGINT: drain, wait, `app.close()`, close the sentinel, exit 0. */
  export function gracefulShutdown(app: FastifyInstance, sentinel: Sentinel, options?: GracefulShutdownOptions): ShutdownHandle;
  export { spendSentinel, spendSentinel as default };
}

export = spendSentinel;
