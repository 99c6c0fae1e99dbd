import type {
  FastifyInstance,
  FastifySchema,
  FastifyContextConfig,
  RegisterOptions,
  FastifyRequest,
  FastifyReply,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
  RouteGenericInterface,
  preHandlerAsyncHookHandler,
} from 'fastify';
import type { Sentinel } from '../binding';
import type { Reservation } from './reservation';
import type * as common from './common';

/** The plugin: `await app.register(spendSentinel, { sentinel, ...probeOptions })`. */
declare function spendSentinel(instance: FastifyInstance, options: spendSentinel.PluginOptions): Promise<void>;

declare namespace spendSentinel {
  /**
   * The probe options, and Fastify's own registration options, which apply to the probe routes:
   * `prefix` (`{ prefix: '/internal' }` serves `/internal/ready`…), `logLevel`, `logSerializers`.
   * The fields between the `js-options` markers are generated from js/options-catalog.js: edit
   * them there, then run `node scripts/gen-js-options.mjs`.
   */
  export interface PluginOptions extends common.ProbeOptions, Omit<RegisterOptions, 'logLevel'> {
    sentinel: Sentinel;
    // js-options:begin fastify-plugin
    /**
     * Fastify's own registration option, applied to the probe routes: `'/internal'` serves
     * `/internal/ready`, `/internal/live` and `/internal/startup`. A path starting with "/", e.g.
     * "/internal". Default: none.
     */
    prefix?: RegisterOptions['prefix'];
    /**
     * Log level of the probe routes, so that probes (frequent) do not flood the request log. A
     * Fastify log level such as "warn". Default: `warn`.
     */
    logLevel?: RegisterOptions['logLevel'];
    /**
     * Fastify's own registration option, applied to the probe routes. An object of serializer
     * functions. Default: none.
     */
    logSerializers?: RegisterOptions['logSerializers'];
    /**
     * Fastify route options for the probe routes, e.g. OpenAPI/Swagger `schema`s: shared by the
     * three, or per probe (its `schema` replaces the shared one, its `config` is merged over it).
     * Probes answer in the first `onRequest` hook, so a schema documents them but validates
     * nothing; `config.rateLimit` stays `false`. `{ schema, config }`, shared or per probe
     * (`ready`, `live`, `startup`), each an object. Default: none.
     */
    routeOptions?: ProbeRouteOptions & { ready?: ProbeRouteOptions; live?: ProbeRouteOptions; startup?: ProbeRouteOptions };
    // js-options:end fastify-plugin
  }
  export interface ProbeRouteOptions {
    /** Fastify's route schema, plus what schema plugins add (`tags`, `summary`, `hide`…). */
    schema?: FastifySchema & Record<string, unknown>;
    config?: FastifyContextConfig & Record<string, unknown>;
  }
  export type ProbeOptions = common.ProbeOptions;
  /**
   * Options of `admission`; `units` gets the route's request (`RouteGeneric`: `{ Body, Querystring, Params, Headers }`),
   * `settle` its request and reply.
   */
  export type AdmissionOptions<RouteGeneric extends RouteGenericInterface = RouteGenericInterface> = common.AdmissionOptions<
    FastifyRequest<RouteGeneric>,
    FastifyReply<RouteGeneric>
  >;
  export type GracefulShutdownOptions = common.GracefulShutdownOptions;
  export type ShutdownHandle = common.ShutdownHandle;
  export type NotAdmittedBody = common.NotAdmittedBody;
  export type InvalidUnitsBody = common.InvalidUnitsBody;

  /**
   * A preHandler: admitted → continue; refused → 503 with `Retry-After`, or 413 for units above
   * the node budget (`NotAdmittedBody`); 400 for units that are not units (`InvalidUnitsBody`).
   * Generic over the route's `RouteGeneric`, as Fastify's own handlers are: `units` sees the
   * route's typed request, e.g.
   * `app.post<{ Body: { units: number } }>(path, { preHandler: admission(sentinel, { units: (req) => req.body.units }) }, handler)`.
   * With `settle(request, reply)`, the units are reserved (`request.spendReservation`) and settled
   * on the raw response's `finish` or `close`.
   */
  export function admission<RouteGeneric extends RouteGenericInterface = RouteGenericInterface>(
    sentinel: Sentinel,
    options?: AdmissionOptions<RouteGeneric>,
  ): preHandlerAsyncHookHandler<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, RouteGeneric>;
  /** On SIGTERM/SIGINT: drain, wait, `app.close()`, close the sentinel, exit 0. */
  export function gracefulShutdown(app: FastifyInstance, sentinel: Sentinel, options?: GracefulShutdownOptions): ShutdownHandle;
  export { spendSentinel, spendSentinel as default };
}

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The sentinel given to `register(spendSentinel, { sentinel })` in this context (or a parent).
     * A second registration in the same context must give the same sentinel.
     */
    sentinel: Sentinel;
  }
  interface FastifyRequest {
    /**
     * The reservation of an `admission` guard with `settle`, for the route to `record` what it
     * has sent and `extend` one chunk ahead (or to settle itself). `null` on other requests once the plugin is registered (it declares the
     * property); absent without it.
     */
    spendReservation?: Reservation | null;
  }
}

export = spendSentinel;
