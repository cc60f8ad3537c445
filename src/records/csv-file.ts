// Reading a CSV file as spreadsheets write them: the encoding (UTF-8 with or
// without a byte order mark, UTF-16 with one, as Excel's "Unicode Text", or
// Windows-1252, as Excel's "CSV" on a Western Windows) and the separator (`,`,
// `;` where the comma is the decimal sign, or a tab) are found from the start
// of the file; then csv-parse reads the rows as the text streams by. The file
// is never held whole: only its first 64 KiB are looked at before parsing.
import { pipeline, Readable, Transform } from 'node:stream';
import { type CsvError, parse, type Parser } from 'csv-parse';
import { AppError } from '../errors.ts';

/** How much of a file is looked at to tell its encoding and separator. */
const SNIFF_BYTES = 64 * 1024;
/** One row of a CSV file may not be longer than this: memory stays bounded. */
const MAX_RECORD_BYTES = 1024 * 1024;

export type Encoding = 'utf-8' | 'utf-16le' | 'utf-16be' | 'windows-1252';
export const DELIMITERS = [',', ';', '\t'] as const;
export type Delimiter = (typeof DELIMITERS)[number];

/** What was read of a row: its cells and the line it ends on, or what made it unreadable. */
export interface Parsed {
  record?: string[];
  info?: { lines: number };
  /** Pushed in place of a record csv-parse could not read, so that every row before it is still seen. */
  malformed?: Unreadable;
}

type Unreadable = Error & { code?: string; lines?: number };

export interface CsvFile {
  encoding: Encoding;
  delimiter: Delimiter;
  rows: AsyncIterable<Parsed>;
  /** Bytes of the file read so far. */
  bytesRead: () => number;
}

const PARSE_REASONS: Record<string, string> = {
  CSV_INVALID_CLOSING_QUOTE: 'a quoted value is followed by more text (inside quotes, write a quote as two quotes "")',
  CSV_QUOTE_NOT_CLOSED: 'a quoted value is never closed',
  CSV_MAX_RECORD_SIZE: `a row is longer than ${MAX_RECORD_BYTES / 1024 / 1024} MiB`,
  CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE: 'a quoted value is followed by more text',
};

export function malformedCsv(error: Unreadable): AppError {
  const line = error.lines;
  const reason = PARSE_REASONS[error.code ?? ''] ?? error.message;
  return new AppError(400, 'malformed_csv', `The file is not valid CSV${line ? ` at line ${line}` : ''}: ${reason}.`);
}

const notText = () =>
  new AppError(
    415,
    'unsupported_media_type',
    'The file is not CSV text: save it from your spreadsheet as CSV (or "Unicode Text"), not as a workbook.',
  );

const tooLarge = (maxBytes: number) =>
  new AppError(
    413,
    'payload_too_large',
    `The file is larger than ${maxBytes / 1024 / 1024} MiB; split it into smaller files.`,
  );

/**
 * The encoding of a file from its first bytes: a byte order mark says it; else text that is valid UTF-8 is UTF-8
 * (ASCII is too), and anything else is taken for Windows-1252, whose every byte is a character. UTF-16 without a
 * mark shows itself by its zero bytes (every other byte of Latin text).
 */
export function detectEncoding(head: Uint8Array): Encoding {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return 'utf-8';
  if (head[0] === 0xff && head[1] === 0xfe) return 'utf-16le';
  if (head[0] === 0xfe && head[1] === 0xff) return 'utf-16be';
  const pairs = Math.floor(Math.min(head.length, 4096) / 2);
  let [evenZeros, oddZeros] = [0, 0];
  for (let i = 0; i < pairs; i++) {
    if (head[2 * i] === 0) evenZeros++;
    if (head[2 * i + 1] === 0) oddZeros++;
  }
  if (pairs > 0 && oddZeros > pairs / 3 && evenZeros === 0) return 'utf-16le';
  if (pairs > 0 && evenZeros > pairs / 3 && oddZeros === 0) return 'utf-16be';
  try {
    // stream: a character cut in two at the end of the look is not an error.
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
    return 'utf-8';
  } catch {
    return 'windows-1252';
  }
}

/**
 * The separator of a file: of `,` `;` and tab, the one its header row holds most of outside quotes (a header of one
 * column holds none: a comma, then).
 */
export function detectDelimiter(text: string): Delimiter {
  const counts = new Map<string, number>(DELIMITERS.map((d) => [d, 0]));
  let quoted = false;
  for (const c of text) {
    if (c === '"') quoted = !quoted;
    else if (!quoted && (c === '\n' || c === '\r')) break;
    else if (!quoted && counts.has(c)) counts.set(c, counts.get(c)! + 1);
  }
  return DELIMITERS.reduce((best, d) => (counts.get(d)! > counts.get(best)! ? d : best), DELIMITERS[0]);
}

/** Counts the bytes that pass (413 past `maxBytes`). */
function byteCounter(maxBytes: number): Transform & { seen: () => number } {
  let seen = 0;
  return Object.assign(
    new Transform({
      transform(chunk: Buffer, _encoding, done) {
        seen += chunk.length;
        done(seen > maxBytes ? tooLarge(maxBytes) : null, chunk);
      },
    }),
    { seen: () => seen },
  );
}

/** Reads the first `bytes` of a stream (fewer when it is shorter); answers them and the stream's iterator. */
async function peek(source: AsyncIterable<Buffer>, bytes: number) {
  const iterator = source[Symbol.asyncIterator]();
  const chunks: Buffer[] = [];
  let length = 0;
  let ended = false;
  while (length < bytes) {
    const next = await iterator.next();
    if (next.done) {
      ended = true;
      break;
    }
    chunks.push(next.value);
    length += next.value.length;
  }
  return { head: Buffer.concat(chunks), rest: ended ? undefined : iterator };
}

/** The file's text, decoded as it streams; text with NUL characters is no CSV (a workbook, an image). */
async function* decoded(head: Buffer, rest: AsyncIterator<Buffer> | undefined, decoder: TextDecoder) {
  const check = (text: string) => {
    if (text.includes('\u0000')) throw notText();
    return text;
  };
  yield check(decoder.decode(head, { stream: true }));
  if (rest)
    for (let next = await rest.next(); !next.done; next = await rest.next())
      yield check(decoder.decode(next.value, { stream: true }));
  yield check(decoder.decode());
}

export interface OpenOptions {
  maxBytes: number;
  /** Overrides what the file's start says. */
  encoding?: Encoding;
  delimiter?: Delimiter;
}

/**
 * Opens a CSV file: finds its encoding and separator, then parses it as it streams. A row with too few or too many
 * cells is handed on (the import reports it); a row csv-parse cannot read is handed on as `malformed`.
 */
export async function openCsv(input: Readable, options: OpenOptions): Promise<CsvFile> {
  const counter = byteCounter(options.maxBytes);
  // A failure of the source (the upload cut, 413) reaches the reader through the counter.
  pipeline(input, counter, () => {});
  const { head, rest } = await peek(counter, SNIFF_BYTES);
  const encoding = options.encoding ?? detectEncoding(head);
  // The decoder drops a byte order mark (ignoreBOM false).
  const decoder = new TextDecoder(encoding, { fatal: false });
  const text = Readable.from(decoded(head, rest, decoder));
  const first = new TextDecoder(encoding).decode(head.subarray(0, 8192), { stream: true });
  const delimiter = options.delimiter ?? detectDelimiter(first);
  const parser: Parser = parse({
    delimiter,
    info: true,
    skip_empty_lines: true,
    relax_column_count: true,
    max_record_size: MAX_RECORD_BYTES,
    skip_records_with_error: true,
    on_skip: (error: CsvError | undefined) => {
      parser.push({ malformed: error ?? new Error('a row could not be read') } satisfies Parsed);
      return undefined;
    },
  });
  pipeline(text, parser, () => {});
  return { encoding, delimiter, rows: parser as AsyncIterable<Parsed>, bytesRead: counter.seen };
}

/** A row whose values hold line breaks starts that many lines before the line csv-parse reports, which is its last. */
export const startLine = (endLine: number, cells: string[]) =>
  endLine - cells.reduce((n, cell) => n + (cell.match(/\n/g)?.length ?? 0), 0);
