// Avatars: only real JPEG, PNG, WebP or GIF images (sharp reads them; the
// name or declared type is not trusted), re-encoded as a 256-pixel WebP with
// no metadata, and kept in the database so every app process can serve them.
import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { AppError } from '../errors.ts';
import type { Accounts } from './context.ts';
import { idParam, nowIso, setUserColumns, type UserRow } from './store.ts';

export const AVATAR_MAX_BYTES = 2 * 1024 * 1024;
const ACCEPTED = new Set(['jpeg', 'png', 'webp', 'gif']);
const SIZE = 256;

const notAnImage = () => new AppError(422, 'validation_failed', 'The avatar must be a JPEG, PNG, WebP or GIF image.', { avatar: ['must be a JPEG, PNG, WebP or GIF image'] });

export async function saveAvatar(a: Accounts, user: UserRow, upload: Buffer): Promise<void> {
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
    image = await sharp(upload, { limitInputPixels: 50_000_000 }).rotate().resize(SIZE, SIZE, { fit: 'cover' }).webp({ quality: 85 }).toBuffer();
  } catch {
    throw notAnImage();
  }
  const name = `avatar-${user.id}-${createHash('sha256').update(image).digest('hex').slice(0, 12)}.webp`;
  const { db, dialect } = a.database;
  const uid = idParam(dialect, user.id);
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('avatars').where('user_id', '=', uid).execute();
    await trx.insertInto('avatars').values({ user_id: uid, content_type: 'image/webp', data: image, updated_at: nowIso() }).execute();
    await setUserColumns(trx, dialect, user.id, { image_name: name });
  });
}

export async function removeAvatar(a: Accounts, user: UserRow): Promise<void> {
  const { db, dialect } = a.database;
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('avatars').where('user_id', '=', idParam(dialect, user.id)).execute();
    await setUserColumns(trx, dialect, user.id, { image_name: null });
  });
}

export async function readAvatar(a: Accounts, userId: bigint): Promise<{ contentType: string; data: Buffer } | null> {
  const row = await a.database.db.selectFrom('avatars').select(['content_type', 'data']).where('user_id', '=', idParam(a.database.dialect, userId)).executeTakeFirst();
  return row ? { contentType: String(row.content_type), data: Buffer.from(row.data as Uint8Array) } : null;
}
