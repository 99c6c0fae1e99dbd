'use strict';
// The Fastify plugin's `routeOptions: { schema, config, ready: { schema, config }, live: …,
// startup: … }`: Fastify route options for the probe routes (e.g. OpenAPI schemas), shared or per
// probe. Per probe wins: its `schema` replaces the shared one, its `config` is merged over the
// shared one.

const { isObject } = require('./options');

const PROBE_NAMES = ['ready', 'live', 'startup'];
const ROUTE_KEYS = ['schema', 'config'];

/** No route options: what each probe route gets when none are given. */
const NO_ROUTE_OPTIONS = Object.freeze({ ready: Object.freeze({}), live: Object.freeze({}), startup: Object.freeze({}) });

const probeRouteOptions = {
  rule: '`{ schema, config }`, shared or per probe (`ready`, `live`, `startup`), each an object',
  read(value, fail) {
    const readOne = (obj, allowed, where) => {
      if (!isObject(obj)) fail(`${where}must be an object`);
      for (const key of Object.keys(obj)) {
        if (!allowed.includes(key)) fail(`${where}"${key}" is not a route option here (known: ${allowed.join(', ')})`);
      }
      for (const key of ROUTE_KEYS) {
        if (obj[key] !== undefined && !isObject(obj[key])) {
          fail(`${where}${key} must be an object`);
        }
      }
    };
    readOne(value, [...ROUTE_KEYS, ...PROBE_NAMES], '');
    const perProbe = {};
    for (const probe of PROBE_NAMES) {
      const own = value[probe] ?? {};
      readOne(own, ROUTE_KEYS, `${probe}: `);
      const schema = own.schema ?? value.schema;
      const config = { ...value.config, ...own.config };
      perProbe[probe] = schema === undefined ? { config } : { schema, config };
    }
    return perProbe;
  },
};

module.exports = { PROBE_NAMES, NO_ROUTE_OPTIONS, probeRouteOptions };
