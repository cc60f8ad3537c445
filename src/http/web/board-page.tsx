// The pipeline board (GET /inquiries/board) and moving an inquiry to another
// stage (POST /inquiries/:id/stage). A move is an update through the same
// operation as every edit, so it is checked (an agent moves only their own),
// logged, and shown in the inquiry's timeline. A plain form comes back to the
// board with a flash; board.js asks for JSON and moves the card in place.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../../db/connection.ts';
import { formInput } from '../../derive/form-values.ts';
import { AppError } from '../../errors.ts';
import { authorize, getRecord, listRecords, updateRecord } from '../../records/operations.ts';
import { choicesOf } from '../../records/references.ts';
import { inquiry, stage, user } from '../../resources/index.ts';
import { contextOf } from '../context.ts';
import { pageContext, redirectWith } from './context.ts';
import { sendPage } from './render.tsx';
import { type BoardColumn, BoardPage, type BoardView, boardHref, boardViewOf } from './views/board.tsx';
import type { Flash } from './views/layout.tsx';
import { recordTitle } from './views/records.tsx';

/** Cards shown per column, newest first; the rest are "and N more", a link to the list. */
export const CARDS_PER_COLUMN = 20;
/** A column counts its inquiries up to this, then says "1,000+" (the list behind "and more" counts them all). */
export const BOARD_COUNT_CAP = 1000;

const stageField = inquiry.field('stage_id')!;
/** What a card shows and what deciding whether the viewer may move it needs (its owners): nothing else is read. */
const CARD_FIELDS = [
  inquiry.primaryKey.name,
  inquiry.title.name,
  'stage_id',
  'assigned_to',
  'created_at',
  'due_at',
  'first_response_at',
  ...inquiry.owners.map((f) => f.name),
];

export function boardPage(database: Database) {
  return async function plugin(app: FastifyInstance) {
    /** Every active stage in order; the board's columns are these (open ones only, when asked). */
    const activeStages = async (request: FastifyRequest) =>
      (
        await listRecords(
          contextOf(database, request),
          stage,
          {
            filter: { active: 'true' },
            sort: 'position',
            per_page: '100',
          },
          { countAtMost: 100 }, // counted in the same statement: a board request makes few round trips
        )
      ).data;

    async function showBoard(
      request: FastifyRequest,
      reply: FastifyReply,
      view: BoardView,
      flash?: Flash,
      status = 200,
    ): Promise<FastifyReply> {
      const ctx = contextOf(database, request);
      authorize(ctx, inquiry);
      const stages = await activeStages(request);
      const shown = stages.filter((s) => !view.open || s.kind === 'open');
      let problem: string | undefined;
      let columns: BoardColumn[] = [];
      try {
        columns = await Promise.all(
          shown.map(async (s) => {
            const filter: Record<string, string> = { stage_id: String(s.id) };
            if (view.mine) filter.assigned_to = String(request.user!.id);
            const result = await listRecords(
              ctx,
              inquiry,
              { filter, ...(view.q ? { search: view.q } : {}), sort: '-id', per_page: String(CARDS_PER_COLUMN) },
              { countAtMost: BOARD_COUNT_CAP, fields: CARD_FIELDS },
            );
            const total = result.meta.total ?? result.data.length;
            return {
              stage: s,
              cards: result.data,
              total: Math.min(total, BOARD_COUNT_CAP),
              capped: total > BOARD_COUNT_CAP,
            };
          }),
        );
      } catch (error) {
        if (!(error instanceof AppError) || error.status !== 422) throw error;
        problem = `This search cannot be used: ${Object.values(error.errors ?? {})
          .flat()
          .join('; ')}`;
      }
      const ids = new Set(
        columns.flatMap((c) => c.cards.flatMap((r) => (r.assigned_to == null ? [] : [String(r.assigned_to)]))),
      );
      // By title, whoever is looking: an agent sees who has a card without reading the users list.
      const assignees = new Map(
        (ids.size ? await choicesOf(database, user, [...ids]) : []).map((c) => [c.id, c.title]),
      );
      const page = pageContext(request, reply);
      return sendPage(
        reply,
        <BoardPage
          ctx={flash ? { ...page, flash } : page}
          view={view}
          columns={columns}
          stages={stages}
          assignees={assignees}
          problem={problem}
        />,
        status,
      );
    }

    app.get('/inquiries/board', (request, reply) => showBoard(request, reply, boardViewOf(request.query)));

    app.post<{ Params: { id: string } }>(
      '/inquiries/:id/stage',
      { preHandler: app.csrfProtection },
      async (request, reply) => {
        const form = (request.body ?? {}) as Record<string, unknown>;
        const view = boardViewOf(form);
        // board.js asks for JSON: it moves the card itself and reads the message out.
        const wantsJson = /application\/json/.test(request.headers.accept ?? '');
        const answer = (status: number, flash: Flash, more: Record<string, unknown> = {}) =>
          wantsJson
            ? reply
                .code(status)
                .header('Cache-Control', 'no-store')
                .send({ message: flash.text, ...more })
            : status === 403
              ? showBoard(request, reply, view, flash, 403)
              : redirectWith(reply, `${boardHref(view)}#card-${request.params.id}`, flash);
        const ctx = contextOf(database, request);
        let name = 'The inquiry';
        try {
          const { record: before } = await getRecord(ctx, inquiry, request.params.id);
          name = recordTitle(inquiry, before);
          // Whether this viewer may move it at all is said before what was sent is looked at.
          authorize(ctx, inquiry, 'update', before);
          // The board's form carries every card's select, `to-<id>`; board.js and other clients send `stage_id`.
          const chosen = form[`to-${request.params.id}`] ?? form.stage_id;
          const input = formInput(inquiry, { stage_id: chosen }, [stageField]);
          if (input.stage_id === undefined || input.stage_id === null)
            throw new AppError(422, 'validation_failed', 'The request has invalid fields.', {
              stage_id: ['is required: choose a stage'],
            });
          const { record } = await updateRecord(ctx, inquiry, request.params.id, input);
          const to = (await activeStages(request)).find((s) => String(s.id) === String(record.stage_id));
          const where = to ? String(to.name) : `stage #${String(record.stage_id)}`;
          const moved = String(before.stage_id) !== String(record.stage_id);
          return answer(
            200,
            {
              kind: moved ? 'success' : 'info',
              text: moved ? `Moved ${name} to ${where}.` : `${name} is already in ${where}.`,
            },
            { stage_id: String(record.stage_id), moved },
          );
        } catch (error) {
          if (!(error instanceof AppError) || ![403, 404, 422].includes(error.status)) throw error;
          const why =
            error.status === 404
              ? 'it no longer exists (someone may have deleted it).'
              : error.status === 422
                ? Object.entries(error.errors ?? {})
                    .map(([field, messages]) => `${field === 'stage_id' ? 'the stage' : field} ${messages.join('; ')}`)
                    .join('; ') || error.detail
                : error.detail.charAt(0).toLowerCase() + error.detail.slice(1);
          return answer(error.status, { kind: 'error', text: `${name} was not moved: ${why}` });
        }
      },
    );
  };
}
