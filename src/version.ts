// Leadbook's version: package.json's, read once (one folder up, from src/ and dist/ alike). The command line's
// --version and the OpenAPI document both say it.
import fs from 'node:fs';

export const VERSION = (
  JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
