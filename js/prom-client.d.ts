import type { Registry } from 'prom-client';
import type { Sentinel } from '../index';

/**
 * Registers the sentinel's metric families (named CircuitBreakers included) in `registry`
 * (default: prom-client's global `register`). Returns a function that removes them.
 */
export declare function collect(sentinel: Sentinel, registry?: Registry): () => void;
