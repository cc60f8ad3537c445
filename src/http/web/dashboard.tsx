// The dashboard: how many contacts and inquiries, inquiries by each of the
// three states, what is assigned to me, and the latest inquiries.
import type { FastifyInstance } from 'fastify';
import { referenceChoices } from '../../records/references.ts';
import type { Database } from '../../db/connection.ts';
import { listRecords, type Context } from '../../records/operations.ts';
import { contact, inquiry } from '../../resources/index.ts';
import { optionsOf, type Resource, unsetWordOf } from '../../schema/resource.ts';
import { contextOf } from '../context.ts';
import { pageContext } from './context.ts';
import { sendPage } from './render.tsx';
import { Layout } from './views/layout.tsx';
import { hrefWith, Results } from './views/records.tsx';

const total = async (ctx: Context, resource: Resource, filter?: Record<string, unknown>) =>
  (await listRecords(ctx, resource, { per_page: '1', ...(filter ? { filter } : {}) })).meta.total ?? 0;

export function dashboardPage(database: Database) {
  return async function plugin(app: FastifyInstance) {
    app.get('/', async (request, reply) => {
      const ctx = contextOf(database, request);
      const me = String(request.user!.id);
      const states = inquiry.visible.filter((f) => f.kind.options);
      const [contacts, inquiries, byState, mine, latest] = await Promise.all([
        total(ctx, contact),
        total(ctx, inquiry),
        Promise.all(
          states.map(async (f) => ({
            field: f,
            counts: await Promise.all(['true', 'false', 'null'].map((v) => total(ctx, inquiry, { [f.name]: v }))),
          })),
        ),
        listRecords(ctx, inquiry, { filter: { assigned_to: me }, per_page: '5' }),
        listRecords(ctx, inquiry, { per_page: '5' }),
      ]);
      const choices = await referenceChoices(database, inquiry, [...mine.data, ...latest.data]);
      const page = pageContext(request, reply);
      return sendPage(
        reply,
        <Layout ctx={page} title="Dashboard">
          <h1>Dashboard</h1>
          <div class="grid">
            <a class="card" href="/contacts">
              <p class="stat">{contacts}</p>
              <p class="stat-label">Contacts</p>
            </a>
            <a class="card" href="/inquiries">
              <p class="stat">{inquiries}</p>
              <p class="stat-label">Inquiries</p>
            </a>
            <a class="card" href={hrefWith('/inquiries', { filter: { assigned_to: me } })}>
              <p class="stat">{mine.meta.total}</p>
              <p class="stat-label">Assigned to me</p>
            </a>
          </div>
          <h2>Inquiries by state</h2>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">State</th>
                  <th scope="col" colspan={3}>
                    Inquiries in each
                  </th>
                </tr>
              </thead>
              <tbody>
                {byState.map(({ field, counts }) => (
                  <tr>
                    <th scope="row">{field.label}</th>
                    {[...optionsOf(field), { value: 'null', label: unsetWordOf(field) }].map((o, i) => (
                      <td>
                        {o.label}:{' '}
                        <a href={hrefWith('/inquiries', { filter: { [field.name]: o.value } })}>{counts[i]}</a>
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <h2>Assigned to me</h2>
          <Results
            id="mine"
            ctx={page}
            resource={inquiry}
            result={mine}
            query={{ filter: { assigned_to: me } }}
            choices={choices}
            empty="Nothing is assigned to you."
          />
          <h2>Latest inquiries</h2>
          <Results
            id="latest"
            ctx={page}
            resource={inquiry}
            result={latest}
            query={{}}
            choices={choices}
            empty="No inquiries yet."
          />
        </Layout>,
      );
    });
  };
}
