// The command-line entry as it was before the compiled build (bin/leadbook.js
// up to issue 11): the TypeScript of src/ run through tsx's loader. Kept only
// for bench/startup.ts, which compares it with the compiled bin.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
