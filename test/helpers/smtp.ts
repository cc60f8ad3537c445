// A real SMTP server on loopback (smtp-server) that keeps every mail it
// receives, so tests can follow the links the app sends. Messages are parsed
// just enough to read the headers and the text body (quoted-printable or
// base64 decoded) and find the one link a mail is about.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  /** Envelope recipients (RCPT TO), lowercased. */
  to: string[];
  from: string;
  subject: string;
  headers: Map<string, string>;
  /** The decoded text body. */
  text: string;
  /** The message as it came over the wire. */
  raw: string;
}

export interface MailCatcher {
  url: string;
  port: number;
  mails: ReceivedMail[];
  /** Waits (polls) until `count` mails match, up to `timeoutMs`; answers the matching mails. */
  waitFor(
    match: (mail: ReceivedMail) => boolean,
    options?: { count?: number; timeoutMs?: number },
  ): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

function decodeQuotedPrintable(text: string): string {
  const soft = text.replace(/=\r?\n/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < soft.length; i++) {
    const hex = soft.slice(i + 1, i + 3);
    if (soft[i] === '=' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(soft[i]!, 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** A header's MIME encoded words (RFC 2047: `=?UTF-8?Q?…?=`, `=?UTF-8?B?…?=`) as text; spaces between two go. */
function decodeWords(value: string): string {
  return value
    .replace(/(\?=)\s+(=\?)/g, '$1$2')
    .replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=/g, (_m, _charset: string, enc: string, text: string) =>
      enc.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64').toString('utf8')
        : decodeQuotedPrintable(text.replace(/_/g, ' ')),
    );
}

/** Splits a raw message into unfolded headers and a decoded text body (single part, or the first text/plain part). */
export function parseMail(raw: string): { headers: Map<string, string>; text: string } {
  const split = raw.search(/\r?\n\r?\n/);
  const head = split < 0 ? raw : raw.slice(0, split);
  let body = split < 0 ? '' : raw.slice(split).replace(/^\r?\n\r?\n/, '');
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  const encoding = (headers.get('content-transfer-encoding') ?? '').toLowerCase();
  const boundary = /boundary="?([^";]+)"?/i.exec(headers.get('content-type') ?? '')?.[1];
  if (boundary) {
    // Multipart: take the first text/plain part.
    const parts = body.split(`--${boundary}`).slice(1);
    for (const part of parts) {
      const inner = parseMail(part.replace(/^\r?\n/, ''));
      if (/text\/plain/i.test(inner.headers.get('content-type') ?? 'text/plain')) return { headers, text: inner.text };
    }
    return { headers, text: '' };
  }
  if (encoding === 'quoted-printable') body = decodeQuotedPrintable(body);
  else if (encoding === 'base64') body = Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return { headers, text: body.replace(/\r\n/g, '\n') };
}

/** The first http(s) link in a mail's text. */
export function linkIn(mail: ReceivedMail): URL {
  const match = /https?:\/\/[^\s<>"]+/.exec(mail.text);
  if (!match) throw new Error(`no link in the mail "${mail.subject}":\n${mail.text}`);
  return new URL(match[0]);
}

/** `port`: a given one (a mail server that comes back where the app expects it); else any free one. */
export async function startMailCatcher(port = 0): Promise<MailCatcher> {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    closeTimeout: 500,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', callback);
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const { headers, text } = parseMail(raw);
        mails.push({
          to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          subject: decodeWords(headers.get('subject') ?? ''),
          headers,
          text,
          raw,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  // An app killed mid-connection (the crash tests SIGKILL processes holding a pooled SMTP connection) resets its
  // socket; the server reports it as an error event, which is no failure of the catcher: it goes on listening.
  server.on('error', () => {});
  const listening = (server.server.address() as AddressInfo).port;

  return {
    url: `smtp://127.0.0.1:${listening}`,
    port: listening,
    mails,
    async waitFor(match, { count = 1, timeoutMs = 5000 } = {}) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const found = mails.filter(match);
        if (found.length >= count || Date.now() >= end) return found;
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
