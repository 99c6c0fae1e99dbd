import type { Server } from 'node:http';
import type { RequestHandler, Request, Response } from 'express';
import type { Sentinel } from '../binding';
import type { Reservation } from './reservation';
import type { ProbeOptions, AdmissionOptions, GracefulShutdownOptions, ShutdownHandle } from './common';

export type {
  ProbeOptions,
  AdmissionOptions,
  GracefulShutdownOptions,
  ShutdownHandle,
  NotAdmittedBody,
  InvalidUnitsBody,
} from './common';

/** Express's defaults for a route's params and query (`ParamsDictionary`, `ParsedQs`). */
type DefaultParams = Request['params'];
type DefaultQuery = Request['query'];

/** Serves GET/HEAD on the probe paths; passes everything else on. Mount it first. */
export declare function probes(sentinel: Sentinel, options?: ProbeOptions): RequestHandler & { close(): void };

/**
 * `next()` when the request's units are admitted; otherwise 503 with `Retry-After`, 413 for units
 * above the node budget (`NotAdmittedBody`), or 400 for units that are not units
 * (`InvalidUnitsBody`). Generic over the route's request, as Express's own handlers are: `units`
 * sees the route's typed `req`, e.g.
 * `admission<{}, unknown, { units: number }>(sentinel, { units: (req) => req.body.units })`, or
 * inferred from `app.post<…>(path, admission(…), handler)`. With `settle(req, res)`, the units are
 * reserved (`res.locals.spendReservation`) and settled on the response's `finish` or `close`.
 */
export declare function admission<
  P = DefaultParams,
  ResBody = any,
  ReqBody = any,
  ReqQuery = DefaultQuery,
  LocalsObj extends Record<string, any> = Record<string, any>,
>(
  sentinel: Sentinel,
  options?: AdmissionOptions<Request<P, ResBody, ReqBody, ReqQuery, LocalsObj>, Response<ResBody, LocalsObj>>,
): RequestHandler<P, ResBody, ReqBody, ReqQuery, LocalsObj>;

/** On SIGTERM/SIGINT: drain, wait, close the server, close the sentinel, exit 0. */
export declare function gracefulShutdown(server: Server, sentinel: Sentinel, options?: GracefulShutdownOptions): ShutdownHandle;

declare global {
  namespace Express {
    interface Locals {
      /**
       * The reservation of an `admission` guard with `settle`, for the route to `record` what it
       * has sent and `extend` one chunk ahead (or to settle itself); absent on routes without
       * such a guard.
       */
      spendReservation?: Reservation;
    }
  }
}
