// Reading a CSV upload, shared by the two import doors (POST
// /api/v1/{resource}/import and the import page): the multipart limits, the
// checks made before a byte of the file is read, and how a broken or
// over-limit upload becomes a problem (413, 415, 400).
import type { Readable } from 'node:stream';
import type { MultipartFile } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import { looksLikeCsv } from '../records/csv.ts';
import { IMPORT_MAX_BYTES, importCsv, type ImportOptions, type ImportReport } from '../records/import.ts';
import { authorize, type Context } from '../records/operations.ts';
import type { Resource } from '../schema/resource.ts';

const MIB = 1024 * 1024;
/** Room for the multipart envelope (boundaries, part headers, a field or two) around the file. */
const ENVELOPE_BYTES = 64 * 1024;

/** The multipart limits of both import doors: one file of at most 50 MiB. */
export const IMPORT_MULTIPART = {
  limits: { fileSize: IMPORT_MAX_BYTES, files: 1, fields: 10, parts: 20, fieldSize: 64 * 1024 },
  throwFileSizeLimit: true,
};

const tooLarge = () =>
  new AppError(
    413,
    'payload_too_large',
    `The file is larger than ${IMPORT_MAX_BYTES / MIB} MiB; split it into smaller files.`,
  );
const noFile = () =>
  new AppError(422, 'validation_failed', 'Send the CSV file in a multipart field named file.', {
    file: ['is required: choose a CSV file'],
  });

const MULTIPART_LIMITS = new Set(['FST_REQ_FILE_TOO_LARGE', 'FST_FILES_LIMIT', 'FST_PARTS_LIMIT', 'FST_FIELDS_LIMIT']);
const MULTIPART_BROKEN = new Set(['FST_PROTO_VIOLATION', 'FST_INVALID_JSON_FIELD_ERROR', 'FST_MP_PREMATURE_CLOSE']);
// busboy's own errors carry no code, only these messages.
const BUSBOY_BROKEN = new RegExp(
  `^(${[
    'Unexpected end of (form|file)',
    'Malformed (part header|urlencoded form)',
    'Multipart: Boundary not found',
    'Unexpected end of multipart data',
    '(Part|Preamble) terminated early due to unexpected end of multipart data',
  ].join('|')})`,
);

/**
 * Problems of reading an upload as problems: a limit is a 413, a body that is not multipart a 415, a broken one a
 * 400; else undefined.
 */
export function uploadError(error: unknown): AppError | undefined {
  if (error instanceof AppError) return error;
  const code = (error as { code?: string } | null)?.code ?? '';
  if (code === 'FST_REQ_FILE_TOO_LARGE') return tooLarge();
  if (MULTIPART_LIMITS.has(code))
    return new AppError(413, 'payload_too_large', 'Send one CSV file, in a field named file, and little else.');
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || code === 'FST_INVALID_MULTIPART_CONTENT_TYPE') {
    return new AppError(
      415,
      'unsupported_media_type',
      'Send the CSV file as multipart/form-data, in a field named file.',
    );
  }
  if (MULTIPART_BROKEN.has(code) || BUSBOY_BROKEN.test((error as Error | null)?.message ?? '')) {
    return new AppError(400, 'bad_request', 'The upload could not be read to its end; send the file again.');
  }
  return undefined;
}

/** The uploaded CSV file of a multipart request (field `file`), its name, and the form fields sent before it. */
export interface Upload {
  file: Readable;
  filename: string;
  fields: Record<string, string>;
}

/**
 * The uploaded CSV file of a multipart request (field `file`), as a stream
 * that fails with a 413 when the file passes the limit: busboy would
 * otherwise just cut it short, and half a file would import as a whole one.
 */
export async function uploadedCsv(request: FastifyRequest, beforeRead?: BeforeRead): Promise<Upload> {
  if (!request.isMultipart()) throw uploadError({ code: 'FST_INVALID_MULTIPART_CONTENT_TYPE' })!;
  // Refuse a body that is too large by its own account before reading any of it.
  if (Number(request.headers['content-length'] ?? 0) > IMPORT_MAX_BYTES + ENVELOPE_BYTES) throw tooLarge();
  let part: MultipartFile | undefined;
  try {
    part = await request.file();
  } catch (error) {
    throw uploadError(error) ?? error;
  }
  if (beforeRead) {
    try {
      await beforeRead(part);
    } catch (error) {
      part?.file.resume();
      throw error;
    }
  }
  if (!part) throw noFile();
  // A browser sends an empty file input as a file part with no name.
  if (part.fieldname !== 'file' || part.filename === '') {
    part.file.resume();
    throw noFile();
  }
  if (!looksLikeCsv(part.filename, part.mimetype)) {
    part.file.resume();
    throw new AppError(
      415,
      'unsupported_media_type',
      `${part.filename} is not a CSV file: save it from your spreadsheet as CSV, or as Unicode Text (.txt).`,
      { file: ['must be a CSV file (.csv, .tsv or .txt)'] },
    );
  }
  const file = part.file;
  file.on('limit', () => file.destroy(tooLarge()));
  return { file, filename: part.filename, fields: fieldsBefore(part) };
}

/** The text fields sent before the file (the mapping, upsert_by); a field after it is not seen. */
function fieldsBefore(part: MultipartFile): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (const [name, value] of Object.entries(part.fields)) {
    const field = Array.isArray(value) ? value.at(-1) : value;
    if (field && field.type === 'field' && typeof field.value === 'string') out[name] = field.value;
  }
  return out;
}

/**
 * A check of the file's part (and the fields before it) that must pass before the file is read: the page's CSRF
 * token.
 */
export type BeforeRead = (part: MultipartFile | undefined) => Promise<void>;

/** What both import doors take besides the file, from the query or the form fields before the file. */
export function importChoices(query: Record<string, unknown>, fields: Record<string, string>): ImportOptions {
  const pick = (name: string) =>
    fields[name] ?? (typeof query[name] === 'string' ? (query[name] as string) : undefined);
  const dryRun = pick('dry_run');
  if (dryRun !== undefined && dryRun !== 'true' && dryRun !== 'false')
    throw new AppError(422, 'validation_failed', 'dry_run is true or false.', { dry_run: ['must be true or false'] });
  const upsertBy = pick('upsert_by') || undefined;
  return { dryRun: dryRun === 'true', mapping: pick('mapping'), upsertBy };
}

/** Reads the upload of a request and imports it (or, with dry_run, says what it would do): both import doors. */
export async function importUpload(
  ctx: Context,
  resource: Resource,
  request: FastifyRequest,
  beforeRead?: BeforeRead,
): Promise<ImportReport & { dryRun: boolean }> {
  try {
    // Who may import is settled before a byte of the file is read.
    authorize(ctx, resource, 'import');
    const upload = await uploadedCsv(request, beforeRead);
    const choices = importChoices(request.query as Record<string, unknown>, upload.fields);
    const report = await importCsv(ctx, resource, upload.file, {
      ...choices,
      filename: upload.filename,
      // The body's size (the file and its envelope), as the client gave it: a large file is read in a worker thread.
      size: Number(request.headers['content-length']) || undefined,
    });
    return { ...report, dryRun: choices.dryRun === true };
  } catch (error) {
    // The rest of an upload refused part-way is read and thrown away after the answer (src/http/drain.ts).
    throw uploadError(error) ?? error;
  }
}
