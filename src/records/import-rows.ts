// An import's rows as read: each row of the file is checked as a create (or
// keyed, for an upsert) as soon as it is read. A small file is read on the
// main thread. A large one is read in a worker thread: the worker decodes and
// parses the file and checks its rows while the main thread writes the batch
// before. The main thread does only what needs the database: when a reference
// cell names its record by a name not looked up yet, the worker asks the main
// thread to look it up, and waits for the answer.
import { fileURLToPath } from 'node:url';
import { Readable } from 'node:stream';
import { parentPort, Worker, workerData } from 'node:worker_threads';
import { formInput } from '../derive/form-values.ts';
import { AppError, type FieldErrors } from '../errors.ts';
import { resources } from '../resources/index.ts';
import type { KeyOptions } from '../schema/keys.ts';
import type { Field, Resource } from '../schema/resource.ts';
import type { Context, RowContext } from './context.ts';
import { importCell } from './csv.ts';
import { type CsvFile, type Delimiter, type Encoding, malformedCsv, openCsv, startLine } from './csv-file.ts';
import { prepareCreate } from './operations.ts';
import type { Row } from './repository.ts';

/** Key of a failure that concerns the whole row, not one field (never a field name: those start with a letter). */
export const ROW_ERROR = '_row';

/** What checking a row's create came to: the values to insert, or why the row is refused. */
export type Made = { values: Row } | { refused: FieldErrors };

/** A row read from the file, waiting for its batch. */
export interface Pending {
  row: number;
  line: number;
  cells: string[];
  /** The row as JSON-API input (read-only columns left out). */
  input: Row;
  /** Why the row can't be read at all (a wrong number of values): it is reported, and nothing else is done. */
  failure?: FieldErrors;
  /** Errors found while reading it (a reference naming nothing). */
  errors?: FieldErrors;
  /** Its key for upsertBy, when it has one. */
  key?: string | null;
  /**
   * Its create checked, as it is read, when no row can match a record: while the batch before is being written, so
   * that the database's work on that batch and this check overlap.
   */
  made?: Promise<Made>;
}

/** By a name's key: the id it names, '' when it names several records, null when none. */
export type NameCache = Map<string, string | null>;

/** How a row finds the record it updates: the column to compare and the cell's key in it. */
export interface Matcher {
  field: Field;
  column: Field;
  folded: boolean;
  keyOf: (text: string) => string | null;
}

/** Who creates an import's records, through which door, in which import. */
type Writer = Pick<Context, 'actor' | 'via' | 'importId' | 'exact'>;

/** Everything reading a row of a mapped file needs but the database. */
export interface Reading {
  resource: Resource;
  /** The field of each column (undefined: the column is left out). */
  fields: (Field | undefined)[];
  matcher?: Matcher;
  /** The column holding the matcher's field. */
  keyColumn: number;
  /** Who creates the records, through which door, in which import. */
  writer: Writer & RowContext;
  now: string;
  named: NameCache;
}

/** A refusal as a row's errors; anything else than a refusal (the database gone, a bug) is thrown on. */
export const asRefusal = (error: unknown): FieldErrors => {
  if (!(error instanceof AppError) || (error.status !== 422 && error.status !== 409 && error.status !== 404))
    throw error;
  return error.errors && Object.keys(error.errors).length ? error.errors : { [ROW_ERROR]: [error.detail] };
};

/** A row's create, checked: its values, or why it is refused. */
export const madeOf = (ctx: RowContext, resource: Resource, input: Row, now: string): Promise<Made> =>
  prepareCreate(ctx, resource, input, now).then(
    (values) => ({ values }),
    (error) => ({ refused: asRefusal(error) }),
  );

/**
 * How an email is compared: through its match key where the resource keeps one (the contact link's `email_key`),
 * else lower-cased; an id as its digits.
 */
export function matcherFor(keys: KeyOptions, resource: Resource, field: Field): Matcher {
  if (field.primary)
    return {
      field,
      column: field,
      folded: false,
      keyOf: (t: string) => (/^\d{1,19}$/.test(t.trim()) ? t.trim() : null),
    };
  const derived = resource.fields.find((f) => f.derive?.from.length === 1 && f.derive.from[0] === field.name);
  if (derived)
    return {
      field,
      column: derived,
      folded: false,
      keyOf: (t: string) => derived.derive!.value({ [field.name]: t }, keys) as string | null,
    };
  return { field, column: field, folded: true, keyOf: (t: string) => t.trim().toLowerCase() || null };
}

/** A reference cell that names its record (not by id), as text and as the key its answer is remembered by. */
export function nameIn(field: Field | undefined, cell: string | undefined) {
  const target = field?.target;
  if (!target) return undefined;
  const text = importCell(field, cell ?? '', true).trim();
  if (text === '' || /^\d+$/.test(text)) return undefined;
  return { target, text, key: `${target.name}\u0000${text.toLowerCase()}` };
}

/** Looks up the names a row's reference cells give that no row before gave, into `reading.named`. */
export type LookUp = (reading: Reading, cells: string[]) => Promise<[string, string | null][]>;

const namesKnown = (r: Reading, cells: string[]) =>
  r.fields.every((field, i) => {
    const named = nameIn(field, cells[i]);
    return !named || r.named.has(named.key);
  });

/**
 * Replaces each reference cell that is not an id by the id of the one record it names (CONTRACT.md: "CSV import also
 * takes the referenced record's name (for users: email)"), as `known` remembers them; answers the cells, or the errors
 * of the cells that name none or several; undefined when a name is not known yet.
 */
function namedReferences(
  fields: (Field | undefined)[],
  cells: string[],
  known: NameCache,
): { cells: string[]; errors?: FieldErrors } | undefined {
  const out = [...cells];
  const errors: FieldErrors = {};
  for (const [i, field] of fields.entries()) {
    const named = nameIn(field, cells[i]);
    if (!named) continue;
    if (!known.has(named.key)) return undefined;
    const id = known.get(named.key);
    // A reference that names nothing is read as empty, and reported with the row's other errors.
    out[i] = id || '';
    if (!id)
      errors[field!.name] = [
        id === ''
          ? `names more than one ${named.target.singular} "${named.text}": give its id`
          : `names no ${named.target.singular}: there is no ${named.target.singular} "${named.text}"`,
      ];
  }
  return Object.keys(errors).length ? { cells: out, errors } : { cells: out };
}

/**
 * A row's cells as the JSON API would receive them ("" is null, "true"/"false" booleans, digits integers). An
 * empty cell of a field that cannot be null is left out, as if the column were missing: on a create the field's
 * default applies or the row is told it is required, on an update the stored value stays.
 */
export function rowInput(resource: Resource, fields: (Field | undefined)[], cells: string[]): Row {
  const form: Record<string, string> = Object.create(null);
  fields.forEach((field, i) => {
    const text = cells[i]!;
    if (!field?.fillable || (!field.nullable && text.trim() === '')) return;
    form[field.name] = importCell(field, text);
  });
  return formInput(resource, form);
}

/**
 * Reads a data row whose names are known; undefined for a row of empty cells (a spreadsheet's blank line), which is
 * no record.
 */
export function readRow(r: Reading, row: number, line: number, cells: string[]): Pending | undefined {
  if (cells.every((c) => c.trim() === '')) return undefined;
  const p: Pending = { row, line, cells, input: {} };
  if (cells.length !== r.fields.length) {
    p.failure = { [ROW_ERROR]: [`has ${cells.length} values; the header row has ${r.fields.length} columns`] };
    return p;
  }
  const resolved = namedReferences(r.fields, cells, r.named)!;
  p.input = rowInput(r.resource, r.fields, resolved.cells);
  p.errors = resolved.errors;
  if (r.matcher) p.key = r.matcher.keyOf(importCell(r.matcher.field, cells[r.keyColumn]!));
  else {
    p.made = madeOf(r.writer, r.resource, p.input, r.now);
    // Read (and its refusal reported) when the batch is written; never an unhandled rejection meanwhile.
    p.made.catch(() => {});
  }
  return p;
}

/** A file's rows as read; `mapped` is told the header and answers how the rows under it are read. */
async function* readRows(
  file: CsvFile,
  mapped: (header: string[]) => Promise<Reading>,
  lookUp: LookUp,
): AsyncGenerator<Pending> {
  let reading: Reading | undefined;
  let row = 0;
  for await (const item of file.rows) {
    if (item.malformed) throw malformedCsv(item.malformed);
    const cells = item.record!;
    if (!reading) {
      reading = await mapped(cells);
      continue;
    }
    row++;
    // Names met before are answered from memory, without waiting on the database.
    if (cells.length === reading.fields.length && !namesKnown(reading, cells)) await lookUp(reading, cells);
    const p = readRow(reading, row, startLine(item.info!.lines, cells), cells);
    if (p) yield p;
  }
}

/** An import's file as it is read. */
export interface RowSource {
  encoding: Encoding;
  delimiter: Delimiter;
  /** The data rows, once the header has been handed to `mapped`. */
  rows: AsyncIterable<Pending>;
  /** Bytes of the file read so far. */
  bytesRead: () => number;
}

/**
 * Opens an import's file: finds its encoding and separator and reads its rows, in a worker thread when `inWorker`.
 * Throws what opening the file throws (415 when it is not text), before any row.
 */
export async function openRows(
  input: Readable,
  options: { maxBytes: number; inWorker: boolean; resource: Resource },
  mapped: (header: string[]) => Promise<Reading>,
  lookUp: LookUp,
): Promise<RowSource> {
  if (options.inWorker) return rowsInWorker(input, options.resource, options.maxBytes, mapped, lookUp);
  const file = await openCsv(input, { maxBytes: options.maxBytes });
  return { ...file, rows: readRows(file, mapped, lookUp) };
}

// ---------------------------------------------------------------- the worker

/**
 * File bytes sent to the worker and not yet taken by its parser: the main thread keeps the worker fed while it is
 * busy writing (a SQLite batch holds it for about half a second), without holding the whole file.
 */
const INPUT_AHEAD_BYTES = 16 * 1024 * 1024;
/** Rows the worker sends at once, and messages of them it may send before the main thread has taken them. */
const ROWS_PER_MESSAGE = 1000;
const MESSAGES_AHEAD = 10;

/** An error as it crosses between threads: an AppError keeps its status, code and field errors. */
type Wire = { app: [number, string, string, FieldErrors | undefined] } | { message: string };
const wire = (error: unknown): Wire =>
  error instanceof AppError
    ? { app: [error.status, error.code, error.detail, error.errors] }
    : { message: error instanceof Error ? (error.stack ?? error.message) : String(error) };
const unwire = (w: Wire): Error => ('app' in w ? new AppError(...w.app) : new Error(w.message));

/** What the worker needs to read rows as the main thread would (a Reading, by name, without the database). */
interface Plan {
  fields: (string | null)[];
  keyColumn: number;
  upsertBy?: string;
  /** The writer, with of the database only its key options (a Database does not cross to a thread). */
  writer: Writer & RowContext;
  now: string;
}

/** A Pending as sent by the worker: its create already checked, and then without its input (not needed). */
type SentRow = Omit<Pending, 'made' | 'input'> & { input?: Row; made?: Made };

type FromWorker =
  | { took: number }
  | { opened: { encoding: Encoding; delimiter: Delimiter } }
  | { header: string[] }
  | { lookUp: string[] }
  | { rows: SentRow[]; bytes: number }
  | { done: number }
  | { failed: Wire };

type ToWorker =
  | { chunk: Uint8Array }
  | { end: true }
  | { inputFailed: Wire }
  | { plan: Plan }
  | { names: [string, string | null][] }
  | { lookUpFailed: Wire }
  | { taken: true };

async function rowsInWorker(
  input: Readable,
  resource: Resource,
  maxBytes: number,
  mapped: (header: string[]) => Promise<Reading>,
  lookUp: LookUp,
): Promise<RowSource> {
  // This file as it runs: compiled (dist/…/import-rows.js) or from source through tsx (the worker inherits --import).
  const worker = new Worker(fileURLToPath(import.meta.url), {
    workerData: { importRows: { resource: resource.name, maxBytes } },
  });
  const post = (message: ToWorker) => worker.postMessage(message);
  // Messages waiting to be taken, and the taker waiting for one.
  const inbox: FromWorker[] = [];
  let wake: (() => void) | undefined;
  let ended: Error | undefined;
  let sent = 0;
  let taken = 0;
  let fed: (() => void) | undefined;
  // How the rows are read here, once the header is mapped: names are looked up with it.
  let reading: Reading | undefined;
  worker.on('message', (m: FromWorker) => {
    if ('took' in m) {
      taken += m.took;
      fed?.();
      return;
    }
    // Answered at once, not in turn with the rows: the worker waits for it.
    if ('lookUp' in m) {
      lookUp(reading!, m.lookUp).then(
        (names) => post({ names }),
        (error) => post({ lookUpFailed: wire(error) }),
      );
      return;
    }
    inbox.push(m);
    wake?.();
  });
  const stop = (error: Error) => {
    ended ??= error;
    wake?.();
    fed?.();
  };
  worker.on('error', stop);
  worker.on('exit', () => stop(new Error('the import worker stopped')));
  const next = async (): Promise<FromWorker> => {
    while (inbox.length === 0) {
      if (ended) throw ended;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
    return inbox.shift()!;
  };

  // The file goes to the worker a chunk at a time, at most INPUT_AHEAD_BYTES ahead of its parser.
  const feed = async () => {
    try {
      for await (const chunk of input as AsyncIterable<Uint8Array>) {
        if (ended) return;
        post({ chunk });
        sent += chunk.length;
        while (sent - taken > INPUT_AHEAD_BYTES && !ended)
          await new Promise<void>((resolve) => {
            fed = resolve;
          });
      }
      post({ end: true });
    } catch (error) {
      if (!ended) post({ inputFailed: wire(error) });
    }
  };
  void feed();

  let bytes = 0;
  const close = () => {
    stop(new Error('the import is over'));
    void worker.terminate();
  };
  const first = await next().catch((error) => {
    close();
    throw error;
  });
  if ('failed' in first) {
    close();
    throw unwire(first.failed);
  }
  if (!('opened' in first)) throw new Error('the import worker said something unexpected first');

  async function* rows(): AsyncGenerator<Pending> {
    try {
      for (;;) {
        const m = await next();
        if ('failed' in m) throw unwire(m.failed);
        if ('done' in m) {
          bytes = m.done;
          return;
        }
        if ('header' in m) {
          reading = await mapped(m.header);
          const { fields, keyColumn, matcher, writer, now } = reading;
          const { actor, via, importId, exact } = writer;
          post({
            plan: {
              fields: fields.map((f) => f?.name ?? null),
              keyColumn,
              upsertBy: matcher?.field.name,
              writer: { actor, via, importId, exact, database: { defaultCountry: writer.database.defaultCountry } },
              now,
            },
          });
        } else if ('rows' in m) {
          post({ taken: true });
          bytes = m.bytes;
          for (const row of m.rows)
            yield { ...row, input: row.input ?? {}, made: row.made && Promise.resolve(row.made) };
        }
      }
    } finally {
      close();
    }
  }

  return {
    ...first.opened,
    rows: rows(),
    bytesRead: () => bytes,
  };
}

/** The worker's side: reads the file the main thread sends, and sends its rows back, checked. */
async function readInWorker(port: NonNullable<typeof parentPort>, setup: { resource: string; maxBytes: number }) {
  const resource = resources.find((r) => r.name === setup.resource)!;
  const chunks: Uint8Array[] = [];
  let inputEnd: Error | true | undefined;
  let planned: (plan: Plan) => void = () => {};
  const plan = new Promise<Plan>((resolve) => {
    planned = resolve;
  });
  let answered: ((answer: Error | [string, string | null][]) => void) | undefined;
  let ahead = 0;
  // The parser waiting for a chunk and the sender waiting for the main thread to take its rows wait at once.
  let waiting: (() => void)[] = [];
  const wait = () =>
    new Promise<void>((resolve) => {
      waiting.push(resolve);
    });
  port.on('message', (m: ToWorker) => {
    if ('chunk' in m) chunks.push(m.chunk);
    else if ('end' in m) inputEnd = true;
    else if ('inputFailed' in m) inputEnd = unwire(m.inputFailed);
    else if ('plan' in m) planned(m.plan);
    else if ('names' in m) answered?.(m.names);
    else if ('lookUpFailed' in m) answered?.(unwire(m.lookUpFailed));
    else if ('taken' in m) ahead--;
    const woken = waiting;
    waiting = [];
    for (const resolve of woken) resolve();
  });
  const send = (message: FromWorker) => port.postMessage(message);

  async function* file() {
    for (;;) {
      const chunk = chunks.shift();
      if (chunk) {
        send({ took: chunk.length });
        yield chunk;
      } else if (inputEnd === true) return;
      else if (inputEnd) throw inputEnd;
      else await wait();
    }
  }

  try {
    const csv = await openCsv(Readable.from(file()), { maxBytes: setup.maxBytes });
    send({ opened: { encoding: csv.encoding, delimiter: csv.delimiter } });
    const mapped = async (header: string[]): Promise<Reading> => {
      send({ header });
      const p = await plan;
      const fields = p.fields.map((name) => (name === null ? undefined : resource.field(name)));
      const matcher = p.upsertBy ? matcherFor(p.writer.database, resource, resource.field(p.upsertBy)!) : undefined;
      return { resource, fields, matcher, keyColumn: p.keyColumn, writer: p.writer, now: p.now, named: new Map() };
    };
    const lookUp: LookUp = async (r, cells) => {
      const answer = new Promise<Error | [string, string | null][]>((resolve) => {
        answered = resolve;
      });
      send({ lookUp: cells });
      const names = await answer;
      if (names instanceof Error) throw names;
      for (const [key, id] of names) r.named.set(key, id);
      return names;
    };
    let out: Pending[] = [];
    const flush = async () => {
      const rows: SentRow[] = [];
      for (const { made, input, ...p } of out) rows.push(made ? { ...p, made: await made } : { ...p, input });
      out = [];
      send({ rows, bytes: csv.bytesRead() });
      ahead++;
      while (ahead >= MESSAGES_AHEAD) await wait();
    };
    try {
      for await (const p of readRows(csv, mapped, lookUp)) {
        out.push(p);
        if (out.length >= ROWS_PER_MESSAGE) await flush();
      }
    } finally {
      // The rows read before the file turned out malformed are sent before that news: they are imported.
      if (out.length) await flush();
    }
    send({ done: csv.bytesRead() });
  } catch (error) {
    send({ failed: wire(error) });
  }
}

if (parentPort && workerData?.importRows) void readInWorker(parentPort, workerData.importRows);
