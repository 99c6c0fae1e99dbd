// Compile-time checks of the metrics typings: `metrics({ format })` and the prom-client bridge's
// `collect(sentinel, registry, { labels })`. Every `// @ts-expect-error` line must be an error.
import { Sentinel } from '../binding.js';
import { collect } from '../js/prom-client.js';
import { Registry } from 'prom-client';

declare const sentinel: Sentinel;
const register = new Registry();

const text: string = sentinel.metrics();
const openMetrics: string = sentinel.metrics({ format: 'openmetrics' });
const explicit: string = sentinel.metrics({ format: 'text' });
// @ts-expect-error not a format
sentinel.metrics({ format: 'json' });

const remove: () => void = collect(sentinel, register, { labels: { sentinel: 'billing' } });
collect(sentinel);
collect(sentinel, register);
collect(sentinel, register, {});
// @ts-expect-error label values are strings
collect(sentinel, register, { labels: { sentinel: 1 } });
// @ts-expect-error the option is `labels`
collect(sentinel, register, { label: { sentinel: 'billing' } });

export { text, openMetrics, explicit, remove };
