import type { FastifyInstance, FastifyRequest } from 'fastify';
import { readAvatar } from '../../accounts/avatar.ts';
import type { Accounts } from '../../accounts/context.ts';
import { idFromText } from '../../accounts/store.ts';
import { notFound } from '../../errors.ts';
import { problem } from '../openapi.ts';

/** GET /api/v1/avatars/:userId: the stored, re-encoded image, for any signed-in user. */
export function avatarRoutes(a: Accounts) {
  return async function plugin(app: FastifyInstance) {
    app.get(
      '/avatars/:userId',
      {
        schema: {
          tags: ['me'],
          summary: "A user's avatar image",
          params: { type: 'object', properties: { userId: { type: 'string' } } },
          response: {
            200: {
              description: 'the image, a 256-pixel WebP',
              content: { 'image/webp': { schema: { type: 'string', format: 'binary' } } },
            },
            404: problem('no such user, or no avatar'),
          },
        },
      },
      async (request: FastifyRequest<{ Params: { userId: string } }>, reply) => {
        const id = idFromText(request.params.userId);
        const avatar = id === null ? null : await readAvatar(a, id);
        if (!avatar) throw notFound('This user has no avatar.');
        return reply
          .type(avatar.contentType)
          .header('X-Content-Type-Options', 'nosniff')
          .header('Content-Security-Policy', "default-src 'none'")
          .header('Cache-Control', 'private, max-age=86400')
          .send(avatar.data);
      },
    );
  };
}
