#!/usr/bin/env node
// The command-line entry. TypeScript runs through tsx's loader so that a fresh
// clone needs no build step: `npm install && npm start` is the whole set-up.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
