// leadbook user:create: creates an account through the same records operation
// as the API (same validation, hashing and uniqueness). The password never
// travels as an argument, where `ps` and shell history would see it.
import readline from 'node:readline';
import { createUser } from '../accounts/register.ts';
import { withDatabase } from './database.ts';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  // One trailing newline is how `echo` and files end a line; anything else is part of the password.
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

function prompt(question: string): Promise<string> {
  const rl = readline.createInterface({ input: process.stdin, output: process.stdout, terminal: true });
  // Echo nothing of what is typed.
  (rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput = (s: string) => {
    if (s.includes(question)) process.stdout.write(question);
  };
  return new Promise((resolve) =>
    rl.question(question, (answer) => {
      rl.close();
      process.stdout.write('\n');
      resolve(answer);
    }),
  );
}

export async function createUserCommand(opts: { email: string; name?: string; admin?: boolean }): Promise<void> {
  const password = process.stdin.isTTY ? await prompt('Password: ') : await readStdin();
  await withDatabase(async (database) => {
    const name = opts.name ?? opts.email.split('@')[0] ?? opts.email;
    const user = await createUser(database, { name, email: opts.email, password }, opts.admin ? 'admin' : 'agent');
    console.log(`Created ${user.role} ${user.email} (id ${user.id}).`);
  }, 'the account was not created:');
}
