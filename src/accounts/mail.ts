// Outgoing mail through nodemailer: SMTP when SMTP_URL is set; otherwise each
// mail is written as an .eml file under DATA_DIR/mail/ (mode 0600) and the log
// names that file, so a laptop install needs no mail server. The log never
// carries the link itself: a reset link holds a one-time secret.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Transporter } from 'nodemailer';
import type { Config } from '../config.ts';
import type { Log } from './log.ts';

export interface Mail {
  to: string;
  subject: string;
  text: string;
  /** The one link the mail is about (it is in the text; never logged, as it may carry a secret). */
  link: string;
  /** A stable id for a mail that may be sent again (the Message-ID's left part): clients keep one copy. */
  id?: string;
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
  /** Lets go of a kept connection (the app's close). */
  close(): void;
}

export function createMailer(config: Config, log: Log): Mailer {
  const host = new URL(config.appUrl).hostname || 'leadbook';
  const message = (mail: Mail) => ({
    to: mail.to,
    subject: mail.subject,
    text: mail.text,
    ...(mail.id ? { messageId: `<${mail.id}@${host}>` } : {}),
  });
  if (config.smtpUrl) {
    // One connection kept open for the outbox's mails one after another (a new one per mail took 100 ms). A mail
    // server that stalls fails the send well within the scheduler's lease (at least 10 s), so that a mail is not
    // still on its way when another process takes the outbox over.
    const timeouts = { connectionTimeout: 3000, greetingTimeout: 3000, socketTimeout: 3000 };
    const smtp = lazily((mailer) =>
      mailer.createTransport({ url: config.smtpUrl, pool: true, maxConnections: 1, ...timeouts }),
    );
    return {
      async send(mail) {
        await (await smtp.open()).sendMail({ ...message(mail), from: config.mailFrom });
      },
      close: smtp.close,
    };
  }
  const files = lazily((mailer) => mailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' }));
  const dir = path.join(config.dataDir, 'mail');
  return {
    async send(mail) {
      const info = await (await files.open()).sendMail({ ...message(mail), from: config.mailFrom });
      await fs.mkdir(dir, { recursive: true });
      const file = path.join(
        dir,
        `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}.eml`,
      );
      // Whole or not at all: a reader of the folder never finds half a mail.
      await fs.writeFile(`${file}.part`, info.message as Buffer, { mode: 0o600 });
      await fs.rename(`${file}.part`, file);
      log.info({ mail: { subject: mail.subject, file } }, 'mail written to a file (set SMTP_URL to send it)');
    },
    close: files.close,
  };
}

/** A transport made when the first mail goes: nodemailer (4 MB) is not loaded by a process that sends none. */
function lazily(make: (mailer: typeof import('nodemailer')['default']) => Transporter) {
  let transport: Promise<Transporter> | undefined;
  return {
    open: () => (transport ??= import('nodemailer').then((module) => make(module.default))),
    close: () => void transport?.then((t) => t.close()),
  };
}

/**
 * Sends after the answer has gone: how long the answer takes then says nothing
 * about whether an account exists, and a slow mail server delays no one.
 */
export function sendInBackground(log: Log, what: string, send: () => Promise<void>): void {
  setImmediate(() => send().catch((error: unknown) => log.error({ err: error }, `${what} failed`)));
}
