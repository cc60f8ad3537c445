// The pipeline board: a column per active stage with its count, a card per
// inquiry (name, assignee, age, due state), and on each card the viewer may
// change a "Move to" select and button that work without JavaScript (the
// board's one form); public/board.js adds drag and drop and moves without a
// reload on top of the same controls.
import type { Row } from '../../../records/repository.ts';
import { may } from '../../../records/operations.ts';
import { inquiry } from '../../../resources/index.ts';
import { CsrfInput } from './form.tsx';
import { Layout, type PageContext } from './layout.tsx';
import { hrefWith, recordTitle } from './records.tsx';

/** What narrows the board: only the viewer's inquiries, only open stages, a search. */
export interface BoardView {
  mine: boolean;
  open: boolean;
  q: string;
}

export interface BoardColumn {
  stage: Row;
  cards: Row[];
  /** How many inquiries the column holds, counted up to BOARD_COUNT_CAP. */
  total: number;
  /** More than `total`: the count stopped there. */
  capped: boolean;
}

const KIND_WORDS: Record<string, string> = { open: 'Open', won: 'Won', lost: 'Lost' };

/** The board's parameters from a query string or a posted form: anything else means "not set". */
export function boardViewOf(source: unknown): BoardView {
  const s = (typeof source === 'object' && source !== null ? source : {}) as Record<string, unknown>;
  const q = typeof s.q === 'string' ? s.q.trim().slice(0, 100) : '';
  return { mine: s.mine === '1', open: s.open === '1', q };
}

/** The board's address for a view (empty parameters left out). */
export function boardHref(view: BoardView): string {
  return hrefWith('/inquiries/board', { mine: view.mine ? '1' : '', open: view.open ? '1' : '', q: view.q });
}

/** A span of time in a card's words: "12 min", "5 h", "3 d". */
function span(ms: number): { short: string; long: string } {
  const minutes = Math.max(0, Math.floor(ms / 60_000));
  const say = (n: number, unit: string, word: string) => ({
    short: `${n} ${unit}`,
    long: `${n} ${word}${n === 1 ? '' : 's'}`,
  });
  if (minutes < 60) return say(minutes, 'min', 'minute');
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return say(hours, 'h', 'hour');
  return say(Math.floor(hours / 24), 'd', 'day');
}

// One formatter per language: toLocaleString builds a new one on every call (a millisecond each, 250 cards).
const formats = new Map<string, Intl.DateTimeFormat>();
function formatted(at: number, locale: string): string {
  let format = formats.get(locale);
  if (!format) {
    format = new Intl.DateTimeFormat(locale, { timeZone: 'UTC', dateStyle: 'medium', timeStyle: 'short' });
    formats.set(locale, format);
  }
  return format.format(at);
}

function Age({ record, now, locale }: { record: Row; now: number; locale: string }) {
  const created = Date.parse(String(record.created_at ?? ''));
  if (Number.isNaN(created)) return null;
  const age = span(now - created);
  const when = formatted(created, locale);
  return (
    <span class="board-age" title={`Created ${when} UTC`}>
      <span aria-hidden="true">{age.short}</span>
      <span class="visually-hidden">{age.long} old</span>
    </span>
  );
}

/** Overdue, or due in how long, for open inquiries nobody has responded to yet. */
function Due({ record, stageKind, now }: { record: Row; stageKind: string; now: number }) {
  if (stageKind !== 'open' || record.first_response_at != null) return null;
  const due = Date.parse(String(record.due_at ?? ''));
  if (Number.isNaN(due)) return null;
  if (due <= now) return <span class="board-due board-overdue">Overdue</span>;
  const left = span(due - now);
  return (
    <span class="board-due">
      Due in <span aria-hidden="true">{left.short}</span>
      <span class="visually-hidden">{left.long}</span>
    </span>
  );
}

/** The form every card's "Move to" controls belong to (with the `form` attribute). */
const MOVE_FORM = 'board-move';

interface CardProps {
  ctx: PageContext;
  record: Row;
  stage: Row;
  stages: readonly Row[];
  assignees: ReadonlyMap<string, string>;
  now: number;
}

function Card({ ctx, record, stage, stages, assignees, now }: CardProps) {
  const id = String(record.id);
  const name = recordTitle(inquiry, record);
  const assignee = record.assigned_to == null ? null : (assignees.get(String(record.assigned_to)) ?? null);
  const movable = may(ctx.viewer, inquiry, 'update', record);
  return (
    <li class="board-card" id={`card-${id}`} data-id={id} data-stage={String(stage.id)} data-name={name}>
      <a class="board-card-name" href={`/inquiries/${id}`} draggable={false}>
        {name}
      </a>
      <p class="board-card-meta">
        {assignee ? <span>{assignee}</span> : <span class="muted">Unassigned</span>}
        <Age record={record} now={now} locale={ctx.locale} />
        <Due record={record} stageKind={String(stage.kind)} now={now} />
      </p>
      {movable ? (
        // The card's controls belong to the board's one form (MOVE_FORM): the button posts it to this card's
        // address, which reads this card's select (`to-<id>`); the page carries one CSRF token, not one a card.
        <div class="board-move">
          {/* The select shows the card's stage; its name says what choosing another does. */}
          <label for={`move-${id}`} class="visually-hidden">
            Move {name} to
          </label>
          <select id={`move-${id}`} name={`to-${id}`} form={MOVE_FORM}>
            {stages.map((s) => (
              <option value={String(s.id)} selected={String(s.id) === String(stage.id)}>
                {String(s.name)}
              </option>
            ))}
          </select>
          <button type="submit" class="button-secondary" form={MOVE_FORM} formaction={`/inquiries/${id}/stage`}>
            Move<span class="visually-hidden"> {name}</span>
          </button>
        </div>
      ) : null}
    </li>
  );
}

export interface BoardProps {
  ctx: PageContext;
  view: BoardView;
  columns: readonly BoardColumn[];
  /** Every active stage, the choices of "Move to" (a column of a closed stage may be hidden). */
  stages: readonly Row[];
  assignees: ReadonlyMap<string, string>;
  /** The search could not be used: said instead of the cards. */
  problem?: string;
}

export function BoardPage({ ctx, view, columns, stages, assignees, problem }: BoardProps) {
  const now = Date.now();
  const me = ctx.viewer ? String(ctx.viewer.id) : '';
  const title = view.mine && view.open ? 'My open inquiries' : 'Board';
  const narrowed = view.mine || view.open || view.q !== '';
  const movable = columns.some((c) => c.cards.some((r) => may(ctx.viewer, inquiry, 'update', r)));
  return (
    <Layout ctx={ctx} title={title}>
      <div class="toolbar">
        <h1>{title}</h1>
        <div class="actions">
          <a class="button button-secondary" href="/inquiries">
            List view
          </a>
          {may(ctx.viewer, inquiry, 'create') ? (
            <a class="button" href="/inquiries/new">
              New inquiry
            </a>
          ) : null}
        </div>
      </div>
      {/* biome-ignore lint/a11y/useSemanticElements: <search> is newer than some browsers the app supports */}
      <form method="get" action="/inquiries/board" role="search" class="card board-filters">
        <div class="field">
          <label for="board-q">Search inquiries</label>
          <input id="board-q" type="search" name="q" value={view.q} placeholder="Name, email, city…" />
        </div>
        <label class="board-check">
          <input type="checkbox" name="mine" value="1" checked={view.mine} /> Assigned to me
        </label>
        <label class="board-check">
          <input type="checkbox" name="open" value="1" checked={view.open} /> Open stages only
        </label>
        <div class="actions">
          <button type="submit">Show</button>
          {narrowed ? (
            <a class="button button-secondary" href="/inquiries/board">
              Show all
            </a>
          ) : null}
        </div>
      </form>
      {movable ? (
        <>
          <p class="muted board-help">Drag a card to another column, or choose its new stage and press Move.</p>
          {/* Posted by a card's Move button to that card's address (formaction); it comes back to this view. */}
          <form id={MOVE_FORM} method="post" action="/inquiries/board" hidden>
            <CsrfInput token={ctx.csrf} />
            {view.mine ? <input type="hidden" name="mine" value="1" /> : null}
            {view.open ? <input type="hidden" name="open" value="1" /> : null}
            {view.q ? <input type="hidden" name="q" value={view.q} /> : null}
          </form>
        </>
      ) : null}
      {/* What a move did, for everyone: board.js writes here, and a screen reader reads it out. */}
      <p id="board-status" class="board-status" role="status"></p>
      {problem ? (
        <p class="flash flash-error" role="alert">
          {problem}
        </p>
      ) : columns.length === 0 ? (
        <p class="card empty">There are no active stages. An admin can add them under Stages.</p>
      ) : (
        <div class="board" id="board">
          {columns.map(({ stage, cards, total, capped }) => {
            const sid = String(stage.id);
            const kind = String(stage.kind);
            const more = total - cards.length;
            const moreHref = hrefWith('/inquiries', {
              search: view.q,
              filter: { stage_id: sid, assigned_to: view.mine ? me : '' },
            });
            return (
              <section class="board-column" data-stage={sid} aria-labelledby={`stage-${sid}`}>
                <div class="board-column-head">
                  <h2 id={`stage-${sid}`} tabindex={-1}>
                    {String(stage.name)}
                  </h2>
                  <span class={`board-kind board-kind-${kind}`}>{KIND_WORDS[kind] ?? kind}</span>
                  <span class="board-count">
                    {capped ? (
                      <span data-count="" data-capped="">{`${total.toLocaleString('en-US')}+`}</span>
                    ) : (
                      <span data-count="">{total}</span>
                    )}
                    <span class="visually-hidden"> {total === 1 && !capped ? 'inquiry' : 'inquiries'}</span>
                  </span>
                </div>
                <ol class="board-cards" aria-labelledby={`stage-${sid}`}>
                  {cards.map((record) => (
                    <Card ctx={ctx} record={record} stage={stage} stages={stages} assignees={assignees} now={now} />
                  ))}
                </ol>
                <p class="board-empty muted">No inquiries</p>
                {more > 0 ? (
                  <p class="board-more">
                    <a href={moreHref}>
                      and {more.toLocaleString('en-US')}
                      {capped ? '+' : ''} more<span class="visually-hidden"> in {String(stage.name)}</span>
                    </a>
                  </p>
                ) : null}
              </section>
            );
          })}
        </div>
      )}
      <script src="/assets/board.js" defer></script>
    </Layout>
  );
}
