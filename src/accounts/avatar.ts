// Avatars: only real JPEG, PNG, WebP or GIF images (sharp reads them; the
// name or declared type is not trusted), re-encoded as a 256-pixel WebP with
// no metadata, and kept in the database so every app process can serve them.
import { createHash } from 'node:crypto';
import { AppError } from '../errors.ts';
import type { Accounts } from './context.ts';
import { nowIso, setUserColumns, type UserRow } from './store.ts';

export const AVATAR_MAX_BYTES = 2 * 1024 * 1024;
/** Room for the multipart envelope (boundaries, part headers) around the image. */
const ENVELOPE_BYTES = 64 * 1024;

/** An upload whose Content-Length is over an avatar and its envelope: refused before a byte of it is read. */
export const declaresTooLarge = (contentLength: string | undefined) =>
  Number(contentLength ?? 0) > AVATAR_MAX_BYTES + ENVELOPE_BYTES;
const ACCEPTED = new Set(['jpeg', 'png', 'webp', 'gif']);
const SIZE = 256;

const notAnImage = () =>
  new AppError(422, 'validation_failed', 'The avatar must be a JPEG, PNG, WebP or GIF image.', {
    avatar: ['must be a JPEG, PNG, WebP or GIF image'],
  });

export async function saveAvatar(a: Accounts, user: UserRow, upload: Buffer): Promise<void> {
  // Loaded at the first upload: libvips is a fifth of an idle process's memory.
  const { default: sharp } = await import('sharp');
  let format: string | undefined;
  try {
    ({ format } = await sharp(upload).metadata());
  } catch {
    throw notAnImage();
  }
  if (!format || !ACCEPTED.has(format)) throw notAnImage();
  let image: Buffer;
  try {
    // sharp drops metadata (EXIF, GPS) unless asked to keep it; rotate() applies the EXIF orientation first.
    image = await sharp(upload, { limitInputPixels: 50_000_000 })
      .rotate()
      .resize(SIZE, SIZE, { fit: 'cover' })
      .webp({ quality: 85 })
      .toBuffer();
  } catch {
    throw notAnImage();
  }
  const name = `avatar-${user.id}-${createHash('sha256').update(image).digest('hex').slice(0, 12)}.webp`;
  const { db } = a.database;
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('avatars').where('user_id', '=', user.id).execute();
    await trx
      .insertInto('avatars')
      .values({ user_id: user.id, content_type: 'image/webp', data: image, updated_at: nowIso() })
      .execute();
    await setUserColumns(trx, user.id, { image_name: name });
  });
}

export async function removeAvatar(a: Accounts, user: UserRow): Promise<void> {
  const { db } = a.database;
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('avatars').where('user_id', '=', user.id).execute();
    await setUserColumns(trx, user.id, { image_name: null });
  });
}

export async function readAvatar(a: Accounts, userId: bigint): Promise<{ contentType: string; data: Buffer } | null> {
  const row = await a.database.db
    .selectFrom('avatars')
    .select(['content_type', 'data'])
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row ? { contentType: row.content_type, data: Buffer.from(row.data) } : null;
}
