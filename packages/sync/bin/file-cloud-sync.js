#!/usr/bin/env node
// Launcher only: the client is compiled to dist/ (npm ci at the repository root, or npm pack, builds it).
import { runSyncCommand } from '../dist/cli.js';

runSyncCommand(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
