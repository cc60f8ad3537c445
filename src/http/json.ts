// Request bodies are parsed without passing integers through a JS number, so
// a 64-bit value like 9007199254740993 arrives exactly (as a BigInt).
import type { FastifyInstance } from 'fastify';
import { parse } from 'lossless-json';
import { AppError } from '../errors.ts';

const INTEGER = /^-?\d+$/;

function parseNumber(text: string): number | bigint {
  if (INTEGER.test(text)) {
    const n = Number(text);
    return Number.isSafeInteger(n) ? n : BigInt(text);
  }
  return Number(text);
}

/** Parses JSON text; duplicate keys are refused, `__proto__` stays a plain own key. */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return parse(text, null, parseNumber);
  } catch (error) {
    const reason = error instanceof RangeError ? 'it is nested too deeply' : (error as Error).message;
    throw new AppError(400, 'malformed_json', `The request body is not valid JSON: ${reason}.`);
  }
}

export function registerJsonParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  for (const type of ['application/json', /^application\/[\w.-]+\+json$/]) {
    app.addContentTypeParser(type, { parseAs: 'string' }, (_req, body, done) => {
      try {
        done(null, parseJsonBody(body as string));
      } catch (error) {
        done(error as Error, undefined);
      }
    });
  }
}
