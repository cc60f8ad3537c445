// The three static files of the web app, read once at start: our stylesheet
// and script, and htmx from its npm package (no CDN, no build step).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';

const require = createRequire(import.meta.url);
const PUBLIC = path.resolve(import.meta.dirname, '../../../public');

const FILES: Record<string, { file: string; type: string }> = {
  'app.css': { file: path.join(PUBLIC, 'app.css'), type: 'text/css; charset=utf-8' },
  'app.js': { file: path.join(PUBLIC, 'app.js'), type: 'text/javascript; charset=utf-8' },
  'board.js': { file: path.join(PUBLIC, 'board.js'), type: 'text/javascript; charset=utf-8' },
  'bulk.js': { file: path.join(PUBLIC, 'bulk.js'), type: 'text/javascript; charset=utf-8' },
  'favicon.svg': { file: path.join(PUBLIC, 'favicon.svg'), type: 'image/svg+xml' },
  'search.js': { file: path.join(PUBLIC, 'search.js'), type: 'text/javascript; charset=utf-8' },
  'htmx.min.js': { file: require.resolve('htmx.org/dist/htmx.min.js'), type: 'text/javascript; charset=utf-8' },
};

export async function assetRoutes(app: FastifyInstance): Promise<void> {
  const contents = Object.fromEntries(
    Object.entries(FILES).map(([name, { file, type }]) => [name, { body: fs.readFileSync(file), type }]),
  );
  app.get('/assets/:name', { schema: { hide: true } }, async (request, reply) => {
    const asset = contents[(request.params as { name: string }).name];
    if (!asset) return reply.callNotFound();
    return reply.type(asset.type).header('Cache-Control', 'public, max-age=3600').send(asset.body);
  });
}
