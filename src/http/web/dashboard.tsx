// The dashboard: how many contacts and inquiries, inquiries by each of the
// three states, what is assigned to me, and the latest inquiries.
import type { FastifyInstance } from 'fastify';
import { referenceChoices } from '../../records/references.ts';
import type { Database } from '../../db/connection.ts';
import { listRecords, type Context } from '../../records/operations.ts';
import { contact, inquiry, task } from '../../resources/index.ts';
import { responseTimes, spoken, WINDOWS } from '../../resources/response-times.ts';
import { optionsOf, type Resource, unsetWordOf } from '../../schema/resource.ts';
import { contextOf } from '../context.ts';
import { pageContext } from './context.ts';
import { sendPage } from './render.tsx';
import { CsrfInput } from './views/form.tsx';
import { Layout, type PageContext } from './views/layout.tsx';
import { hrefWith, Results, recordTitle, Value } from './views/records.tsx';
import type { Row } from '../../records/repository.ts';

const total = async (ctx: Context, resource: Resource, filter?: Record<string, unknown>) =>
  (await listRecords(ctx, resource, { per_page: '1', ...(filter ? { filter } : {}) })).meta.total ?? 0;

/** Open tasks the dashboard lists; the rest are behind "All my open tasks". */
const TASKS_SHOWN = 50;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * My open tasks in three groups: overdue, due today (UTC), upcoming (later, or no due time); each done in a click. A
 * due date without a time (what the date box sends: midnight UTC) is due by the end of that day.
 */
function MyTasks({ ctx, tasks, total, me }: { ctx: PageContext; tasks: readonly Row[]; total: number; me: string }) {
  const now = Date.now();
  const endOfToday = Math.floor(now / DAY_MS) * DAY_MS + DAY_MS;
  const deadline = (t: Row) => {
    if (t.due_at == null) return Number.POSITIVE_INFINITY;
    const at = Date.parse(String(t.due_at));
    return at % DAY_MS === 0 ? at + DAY_MS : at;
  };
  const groups = [
    { name: 'Overdue', tasks: tasks.filter((t) => deadline(t) <= now) },
    { name: 'Today', tasks: tasks.filter((t) => deadline(t) > now && deadline(t) <= endOfToday) },
    { name: 'Upcoming', tasks: tasks.filter((t) => deadline(t) > endOfToday) },
  ];
  const due = task.field('due_at')!;
  return (
    <section class="card my-tasks" id="my-tasks" aria-labelledby="my-tasks-heading">
      <h2 id="my-tasks-heading">
        My tasks <span class="muted">({total.toLocaleString('en-US')} open)</span>
      </h2>
      {tasks.length === 0 ? <p class="muted">No open tasks. Add one from a contact's or an inquiry's page.</p> : null}
      {groups
        .filter((g) => g.tasks.length)
        .map((g) => (
          <>
            <h3>
              {g.name} <span class="muted">({g.tasks.length})</span>
            </h3>
            <ul class="task-list">
              {g.tasks.map((t) => (
                <li class={g.name === 'Overdue' ? 'is-overdue' : undefined}>
                  <a href={`/tasks/${String(t.id)}`}>{recordTitle(task, t)}</a>
                  {t.due_at != null ? (
                    <span class="muted">
                      {' · due '}
                      <Value field={due} value={t.due_at} choices={new Map()} locale={ctx.locale} />
                    </span>
                  ) : null}
                  <form method="post" action={`/tasks/${String(t.id)}/done`} class="inline">
                    <CsrfInput token={ctx.csrf} />
                    <input type="hidden" name="back" value="/#my-tasks" />
                    <button type="submit" class="button-secondary">
                      Done<span class="visually-hidden"> {recordTitle(task, t)}</span>
                    </button>
                  </form>
                </li>
              ))}
            </ul>
          </>
        ))}
      {total > tasks.length ? (
        <p>
          <a href={hrefWith('/tasks', { filter: { assigned_to: me, done_at: { null: 'true' } }, sort: 'due_at' })}>
            All my open tasks
          </a>
        </p>
      ) : null}
    </section>
  );
}

export function dashboardPage(database: Database) {
  return async function plugin(app: FastifyInstance) {
    app.get('/', async (request, reply) => {
      const ctx = contextOf(database, request);
      const me = String(request.user!.id);
      const states = inquiry.visible.filter((f) => f.kind.options);
      const [contacts, inquiries, overdue, byState, mine, latest, tasks, speed] = await Promise.all([
        total(ctx, contact),
        total(ctx, inquiry),
        total(ctx, inquiry, { overdue: 'true' }),
        Promise.all(
          states.map(async (f) => ({
            field: f,
            counts: await Promise.all(['true', 'false', 'null'].map((v) => total(ctx, inquiry, { [f.name]: v }))),
          })),
        ),
        listRecords(ctx, inquiry, { filter: { assigned_to: me }, per_page: '5' }),
        listRecords(ctx, inquiry, { per_page: '5' }),
        // My open tasks by due time (those without one sort first, and show under Upcoming).
        listRecords(ctx, task, {
          filter: { assigned_to: me, done_at: { null: 'true' } },
          sort: 'due_at',
          per_page: String(TASKS_SHOWN),
        }),
        responseTimes(database.db),
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
            <a
              class={overdue ? 'card card-alert' : 'card'}
              href={hrefWith('/inquiries', { filter: { overdue: 'true' } })}
            >
              <p class="stat">{overdue}</p>
              <p class="stat-label">Overdue: past their respond-by time, unanswered</p>
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
          {speed.length ? (
            <>
              <h2>First response</h2>
              <div class="table-wrap">
                <table>
                  <caption class="visually-hidden">Median time from arrival to first response, per assignee</caption>
                  <thead>
                    <tr>
                      <th scope="col">Assignee</th>
                      {WINDOWS.map((d) => (
                        <th scope="col">Median, last {d} days</th>
                      ))}
                      <th scope="col">Answered in {WINDOWS[WINDOWS.length - 1]} days</th>
                    </tr>
                  </thead>
                  <tbody>
                    {speed.map((s) => (
                      <tr>
                        <th scope="row">{s.name}</th>
                        {WINDOWS.map((d) => (
                          <td>{spoken(s.median[d] ?? null)}</td>
                        ))}
                        <td>{s.answered}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </>
          ) : null}
          <MyTasks ctx={page} tasks={tasks.data} total={tasks.meta.total ?? tasks.data.length} me={me} />
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
