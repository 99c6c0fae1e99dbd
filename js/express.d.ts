import type { Server } from 'node:http';
import type { RequestHandler, Request } from 'express';
import type { Sentinel } from '../index';
import type { ProbeOptions, AdmissionOptions, GracefulShutdownOptions, ShutdownHandle } from './common';

export type { ProbeOptions, AdmissionOptions, GracefulShutdownOptions, ShutdownHandle, NotAdmittedBody } from './common';

/** Serves GET/HEAD on the probe paths; passes everything else on. Mount it first. */
export declare function probes(sentinel: Sentinel, options?: ProbeOptions): RequestHandler & { close(): void };

/** `next()` when the request's units are admitted; otherwise 503 with `Retry-After`. */
export declare function admission(sentinel: Sentinel, options?: AdmissionOptions<Request>): RequestHandler;

/** On SIGTERM/SIGINT: drain, wait, close the server, close the sentinel, exit 0. */
export declare function gracefulShutdown(server: Server, sentinel: Sentinel, options?: GracefulShutdownOptions): ShutdownHandle;
