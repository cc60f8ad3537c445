// Node's http module, required rather than imported. `import … from 'node:http'` makes Node build the module's
// ES namespace, which reads every export, and three of them (WebSocket, CloseEvent, MessageEvent) are getters
// that load Node's bundled undici and, with it, http2, worker_threads and the web streams: 2.4 MB of heap (and
// 14 MB of resident memory in a bare process) for a server that uses none of them (node 24, after GC).
// require() reads only what is used.
import { createRequire } from 'node:module';

export const nodeHttp = createRequire(import.meta.url)('node:http') as typeof import('node:http');
