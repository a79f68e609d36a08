#!/usr/bin/env node
// The installed entry point: the compiled CLI (built into dist/ by `npm run build`, run by `prepare`).
import '../dist/cli/main.js';
