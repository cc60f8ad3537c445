// The audit log page (admins): every change and security event, newest first, narrowed by who, what kind of record,
// which action and when; the same view as CSV through the API's export.
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/connection.ts';
import { AppError } from '../../errors.ts';
import { ACTIONS, auditLog, type Timeline } from '../../records/change-log.ts';
import { choicesOf } from '../../records/references.ts';
import { resources, user } from '../../resources/index.ts';
import { kinds } from '../../schema/kinds.ts';
import { contextOf } from '../context.ts';
import { pageContext } from './context.ts';
import { sendPage } from './render.tsx';
import { Layout } from './views/layout.tsx';
import { hrefWith } from './views/records.tsx';

type Query = Record<string, unknown>;

const shown = (value: unknown) => (value === null || value === undefined ? '—' : String(value));

export function activityPage(database: Database) {
  return async function plugin(app: FastifyInstance) {
    app.get('/activity', async (request, reply) => {
      const ctx = contextOf(database, request);
      const query = request.query as Query;
      const filter = (query.filter ?? {}) as Record<string, unknown>;
      const at = (filter.at ?? {}) as Record<string, unknown>;
      let log: Timeline = { data: [], meta: { next_cursor: null } };
      let problem: string | undefined;
      try {
        log = await auditLog(ctx, query);
      } catch (error) {
        if (!(error instanceof AppError) || error.status !== 422) throw error;
        problem =
          Object.values(error.errors ?? {})
            .flat()
            .join('; ') || error.detail;
      }
      const people = await choicesOf(database, user);
      const page = pageContext(request, reply);
      const selected = (name: string, value: string) => String(filter[name] ?? '') === value;
      const exported = hrefWith('/api/v1/activity/export', { filter, format: 'csv' });
      return sendPage(
        reply,
        <Layout ctx={page} title="Activity">
          <div class="toolbar">
            <h1>Activity</h1>
            <div class="actions">
              <a class="button button-secondary" href={exported}>
                Export CSV
              </a>
            </div>
          </div>
          {/* biome-ignore lint/a11y/useSemanticElements: role="search" is the landmark every browser knows */}
          <form method="get" action="/activity" class="card" role="search">
            <div class="filters">
              <div class="field">
                <label for="filter-actor">Who</label>
                <select id="filter-actor" name="filter[actor]">
                  <option value="">Anyone</option>
                  {people.map((p) => (
                    <option value={p.id} selected={selected('actor', p.id)}>
                      {p.title}
                    </option>
                  ))}
                </select>
              </div>
              <div class="field">
                <label for="filter-resource">Records</label>
                <select id="filter-resource" name="filter[resource]">
                  <option value="">All</option>
                  {resources.map((r) => (
                    <option value={r.name} selected={selected('resource', r.name)}>
                      {r.label}
                    </option>
                  ))}
                </select>
              </div>
              <div class="field">
                <label for="filter-action">Action</label>
                <select id="filter-action" name="filter[action]">
                  <option value="">Any</option>
                  {ACTIONS.map((a) => (
                    <option value={a} selected={selected('action', a)}>
                      {a.replaceAll('_', ' ')}
                    </option>
                  ))}
                </select>
              </div>
              <div class="field">
                <label for="filter-from">From</label>
                <input id="filter-from" type="date" name="filter[at][gte]" value={String(at.gte ?? '')} />
              </div>
              <div class="field">
                <label for="filter-to">To</label>
                <input id="filter-to" type="date" name="filter[at][lte]" value={String(at.lte ?? '')} />
              </div>
              <div class="actions">
                <button type="submit">Apply</button>
                <a href="/activity" class="button button-secondary">
                  Clear
                </a>
              </div>
            </div>
          </form>
          {problem ? (
            <p class="flash flash-error" role="alert">
              {problem}
            </p>
          ) : log.data.length === 0 ? (
            <p class="muted">Nothing recorded matches.</p>
          ) : (
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Who</th>
                    <th scope="col">What</th>
                    <th scope="col">Record</th>
                    <th scope="col">Changes</th>
                  </tr>
                </thead>
                <tbody>
                  {log.data.map((e) => {
                    const when = kinds.dateTime.display(e.at, page.locale);
                    const record = e.resource && e.record_id !== null ? `/${e.resource}/${String(e.record_id)}` : null;
                    return (
                      <tr>
                        <td>
                          <time datetime={e.at}>{when.text}</time>
                        </td>
                        <td>{e.actor?.name ?? <span class="muted">nobody signed in</span>}</td>
                        <td>
                          {e.action.replaceAll('_', ' ')} <span class="muted">· {e.via}</span>
                        </td>
                        <td>{record ? <a href={record}>{record.slice(1)}</a> : '—'}</td>
                        <td>
                          {Object.entries(e.changes ?? {})
                            .map(([name, [before, after]]) => `${name}: ${shown(before)} → ${shown(after)}`)
                            .concat((e.hidden_changed ?? []).map((name) => `${name} changed`))
                            .join('; ')}
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          )}
          {log.meta.next_cursor ? (
            <p>
              <a href={hrefWith('/activity', { filter, cursor: log.meta.next_cursor })}>Older entries</a>
            </p>
          ) : null}
        </Layout>,
      );
    });
  };
}
