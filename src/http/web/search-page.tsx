// The search pages: /search, the results the header's box leads to (it works
// without JavaScript), and /search/suggestions, the fragment the box shows as
// you type (public/search.js). Both call the same search as GET /api/v1/search.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Database } from '../../db/connection.ts';
import { AppError } from '../../errors.ts';
import { contextOf } from '../context.ts';
import { type SearchAnswer, searchFor } from '../search.ts';
import { pageContext } from './context.ts';
import { sendFragment, sendPage } from './render.tsx';
import { SearchPage, Suggestions } from './views/search.tsx';

/** Results per group on the page; the suggestions show the API's default. */
const PAGE_LIMIT = '10';

type SearchRequest = FastifyRequest<{ Querystring: { q?: unknown } }>;

export function searchPages(database: Database) {
  return async function plugin(app: FastifyInstance) {
    app.get('/search', async (request: SearchRequest, reply) => {
      const q = typeof request.query.q === 'string' ? request.query.q.trim() : '';
      const ctx = pageContext(request, reply);
      // An empty box is a page to type into, not a mistake.
      if (!q) return sendPage(reply, <SearchPage ctx={ctx} q="" groups={null} />);
      try {
        const groups = await searchFor(contextOf(database, request), { q, limit: PAGE_LIMIT });
        return sendPage(reply, <SearchPage ctx={ctx} q={q} groups={groups} />);
      } catch (error) {
        if (!(error instanceof AppError) || error.status !== 422) throw error;
        return sendPage(reply, <SearchPage ctx={ctx} q={q} groups={null} errors={error.errors} />, 422);
      }
    });

    app.get('/search/suggestions', async (request: SearchRequest, reply) => {
      const q = typeof request.query.q === 'string' ? request.query.q.trim() : '';
      let groups: SearchAnswer[] = [];
      if (q) groups = await searchFor(contextOf(database, request), { q });
      return sendFragment(reply, <Suggestions groups={groups} q={q} />);
    });
  };
}
