#!/usr/bin/env node
// Launcher only: all logic lives in the compiled CLI (npm ci builds it).
import('../dist/src/cli/main.js').then((m) => m.main(process.argv.slice(2)));
